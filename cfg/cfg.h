/*
 * cfg/cfg.h: procedures, basic blocks, edges, loops and frequency-equivalence
 * classes of an Alpha image.
 *
 * cfg_build() reads every code section of an image once and returns all its
 * procedures with their control-flow graphs.  Addresses are the image's own
 * (original) addresses throughout; block and edge numbers are indices into
 * the procedure's arrays.  See docs/cfg.md for the rules.
 */
#ifndef CFG_CFG_H
#define CFG_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "image/image.h"
#include "cfg/relocs.h"

#define CFG_NONE  UINT32_MAX     /* no block / loop / class */
#define CFG_ENTRY (UINT32_MAX - 1) /* the virtual entry node, as an edge end */
#define CFG_EXIT  (UINT32_MAX - 2) /* the virtual exit node */

typedef enum {
    CFG_EDGE_FALL,    /* into the next block in address order */
    CFG_EDGE_TAKEN,   /* conditional branch taken, or BR */
    CFG_EDGE_TABLE,   /* one target of a resolved jump table */
    CFG_EDGE_RETURN,  /* RET: to the exit */
    CFG_EDGE_OUT,     /* control leaves for another procedure (tail branch,
                         jump through pv, falling off the end): to the exit */
    CFG_EDGE_ENTRY    /* from the entry to the start or an alternate entry */
} cfg_edge_kind;

typedef struct cfg_edge {
    uint32_t from, to;       /* block indices, or CFG_ENTRY / CFG_EXIT */
    uint8_t  kind;           /* cfg_edge_kind */
    uint64_t target;         /* address control goes to (OUT: outside) */
    uint32_t eqclass;        /* frequency-equivalence class */
} cfg_edge;

enum {
    CFG_BF_ENTRY     = 1u << 0,  /* the procedure's entry */
    CFG_BF_ALTENTRY  = 1u << 1,  /* entered from outside the procedure */
    CFG_BF_LINKS     = 1u << 2,  /* ends with an instruction that leaves a
                                    return address (JSR, BSR, BR/JMP with a
                                    link register): the next block must stay
                                    right after it */
    CFG_BF_INDIRECT  = 1u << 3,  /* ends with an unresolved indirect jump */
    CFG_BF_TABLE     = 1u << 4,  /* ends with a resolved table jump */
    CFG_BF_BADCODE   = 1u << 5,  /* contains a word that is no instruction */
    CFG_BF_UNREACH   = 1u << 6,  /* not reachable from any entry */
    CFG_BF_CALLS     = 1u << 7   /* contains a call */
};

typedef struct cfg_block {
    uint64_t start, end;     /* [start, end) */
    uint32_t flags;          /* CFG_BF_* */
    uint32_t first_out, nout;/* into proc->out_edges */
    uint32_t first_in, nin;  /* into proc->in_edges */
    uint32_t eqclass;
    uint32_t loop;           /* innermost loop, or CFG_NONE */
    uint32_t loop_depth;
} cfg_block;

typedef struct cfg_call {
    uint64_t site;           /* address of the BSR/JSR */
    uint64_t target;         /* callee address, 0 when unknown */
    uint32_t block;
} cfg_call;

typedef struct cfg_loop {
    uint32_t header;         /* block index */
    uint32_t parent;         /* enclosing loop, or CFG_NONE */
    uint32_t depth;          /* 1 for outermost */
    uint32_t nblocks;
} cfg_loop;

typedef struct cfg_table {
    uint64_t jump;           /* address of the JMP */
    uint64_t table;          /* address of the table in data */
    uint32_t entsize;        /* 4 (GPREL32) or 8 (REFQUAD) */
    uint32_t count;
} cfg_table;

enum {
    CFG_PF_NOSYM      = 1u << 0,  /* found from code, no symbol */
    CFG_PF_MISSING    = 1u << 1,  /* CFG is missing edges */
    CFG_PF_BADCODE    = 1u << 2,  /* undecodable words */
    CFG_PF_IRREDUCIBLE= 1u << 3,  /* a retreating edge is not a back edge */
    CFG_PF_COROUTINE  = 1u << 4,  /* uses JSR_COROUTINE */
    CFG_PF_HASGP      = 1u << 5   /* `gp` below is known from a GPDISP */
};

typedef struct cfg_proc {
    char    *name;
    uint64_t start, end;     /* [start, end), trailing padding excluded */
    uint32_t section;        /* ELF section index */
    uint32_t flags;          /* CFG_PF_* */
    uint64_t gp;             /* GP value this procedure computes */
    char     why[128];       /* first reason for CFG_PF_MISSING, else "" */

    size_t nblocks;  cfg_block *blocks;   /* sorted by start */
    size_t nedges;   cfg_edge  *edges;
    uint32_t *out_edges, *in_edges;       /* edge indices by block */
    size_t ncalls;   cfg_call  *calls;
    size_t nloops;   cfg_loop  *loops;
    size_t ntables;  cfg_table *tables;
    uint32_t nclasses;                    /* equivalence classes 0..n-1 */
} cfg_proc;

typedef struct cfg_program {
    const image *img;
    cfg_relocs relocs;       /* the image's static relocations, sorted */
    size_t nprocs;  cfg_proc *procs;     /* sorted by start */
    /* Code sections: the instruction words the procedures live in. */
    size_t ncode;   const image_section **code;
} cfg_program;

/* Build every procedure.  Returns NULL with a message in err on failure
 * (out of memory, image without code). */
cfg_program *cfg_build(const image *img, char *err, size_t errlen);
void cfg_free(cfg_program *p);

/* Lookups by address or name; NULL / CFG_NONE when absent. */
cfg_proc *cfg_proc_at(const cfg_program *p, uint64_t addr);
cfg_proc *cfg_proc_named(const cfg_program *p, const char *name);
uint32_t cfg_block_at(const cfg_proc *f, uint64_t addr);
/* The instruction word at addr (which must be in a code section). */
bool cfg_word(const cfg_program *p, uint64_t addr, uint32_t *word);
/* Is addr inside some code section? */
bool cfg_is_code(const cfg_program *p, uint64_t addr);
/* Where control goes when it runs off the end of f at addr: past any
 * alignment padding, to the next instruction that is not padding. */
uint64_t cfg_past_padding(const cfg_program *p, uint64_t addr);

/* Printing (cfg/print.c): text or Graphviz dot. */
void cfg_print(FILE *f, const cfg_program *p, const cfg_proc *fn);
void cfg_print_dot(FILE *f, const cfg_program *p, const cfg_proc *fn);
const char *cfg_edge_kind_name(unsigned kind);

/* Internal passes, exposed for the unit tests. */
void cfg_loops(cfg_proc *f);        /* cfg/loops.c */
void cfg_equiv(cfg_proc *f);        /* cfg/equiv.c */

#endif
