/*
 * rewriter/instrument.h: the rewriter as an instrumenter (docs/instrument.md).
 *
 * Code is inserted at instructions of moved procedures ("snippets"): before
 * an instruction (branches to it run the snippet first), after it (on the
 * way out of a call or a fall-through), or as a procedure entry's head
 * (calls run it, the procedure's own branches to the entry skip it).  The
 * runtime blob (rewriter/runtime/) goes first in the new code, the data
 * region it and the snippets share last in the new segment.
 */
#ifndef REWRITER_INSTRUMENT_H
#define REWRITER_INSTRUMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a snippet goes, in the order they run at one instruction: an
 * entry's head, a table edge's code at its target, code before, after;
 * a stub follows a table jump: only the table's entries for one target
 * reach it, and it ends with a branch there (past the target's head). */
enum { RW_SN_HEAD, RW_SN_INCOMING, RW_SN_BEFORE, RW_SN_AFTER, RW_SN_STUB };

typedef struct rw_op {
    uint8_t kind;            /* RW_OP_* (instrument.c) */
    int64_t k, k2;           /* increments */
    uint32_t ip;             /* instrumented procedure (counters) */
} rw_op;

typedef struct rw_snip {
    uint64_t at;             /* the original instruction */
    uint8_t where;           /* RW_SN_* */
    uint8_t reg[3];          /* scratch registers, free there */
    bool split;              /* ops [0, nt) when the branch at `at` is
                                taken, [nt, nt + nf) when not */
    uint32_t first, nt, nf;  /* into rw_instr.ops */
    bool spill;              /* no three free: reg[] saved below sp */
    uint32_t nwords;
    uint64_t to;             /* a stub's target (original address) */
} rw_snip;

typedef struct rw_iproc {
    uint32_t proc;
    uint64_t npaths;
    uint64_t counts;         /* offset of its counters in the region */
    uint32_t site0, nsites;  /* its call sites: in rw_instr.sites */
    uint32_t hcap;           /* 0: a dense counter table; else the entries
                                of its hashed one */
    bool raises_sp;          /* moves sp above where it entered (instrument.c) */
    bool nopaths;            /* in the tree only: its paths are not counted */
} rw_iproc;

/* Why a procedure's paths are not counted. */
enum {
    RW_NOINS_PATHS,          /* numbering refused (missing edges, > 2^63) */
    RW_NOINS_LARGE,          /* (no longer used: large path spaces are hashed) */
    RW_NOINS_REGS,           /* fewer than 3 free registers at some point */
    RW_NOINS_TABLE,          /* a jump table whose edges need different code */
    RW_NOINS_LINK,           /* coroutine linkage or a linking jump */
    RW_NOINS_RIGID,          /* moved whole or left in place */
    RW_NOINS_N
};

typedef struct rw_instr {
    bool nopaths;            /* no path counters (--instrument cct) */
    bool cct;                /* a calling context tree */
    bool threads;            /* the program may start threads: the code looks
                                up each thread's block */
    bool far;                /* the new code may outgrow a branch's reach:
                                the runtime is called through a register */
    rw_snip *snips;          /* sorted by (at, where) */
    size_t nsnips;
    rw_op *ops;
    size_t nops;
    rw_iproc *ip;
    size_t nip;
    uint8_t *ins_proc;       /* per procedure: 1 when its paths are counted */
    uint64_t *sites;         /* link addresses of the counted procedures' calls */
    size_t nsites, capsites;
    size_t noins[RW_NOINS_N];
    size_t hooks, unhooked;  /* system calls hooked, and in code not moved */
    size_t spills;           /* snippets that save their registers */
    size_t hashed;           /* procedures with a hashed counter table */
    uint64_t counters;       /* bytes of counters */
    uint64_t blob_addr, blob_size;
    uint64_t region;         /* its address, once the segment is laid out */
    uint8_t *data;           /* its file bytes */
    size_t filesz;
    uint64_t memsz;
    uint64_t ss_first, guard1, guard2;   /* offsets in it */
    uint64_t arena;          /* offset of the tree's arena; 0 when none */
    uint64_t *pool;          /* constants the code loads (> 32 bits), sorted */
    size_t npool;
    uint64_t pool_off;       /* their offset in the region, once laid out */
    uint64_t ofini;          /* the program's DT_FINI, moved; 0 when none */
} rw_instr;


/* Bytes of a shadow-stack slot (rewriter/runtime/rt.h). */
static inline unsigned rw_slot_size(const rw_instr *in)
{
    return in->cct ? 48 : 32;
}

#endif
