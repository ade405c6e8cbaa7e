/*
 * cfg/internal.h: what the cfg/ files share.
 */
#ifndef CFG_INTERNAL_H
#define CFG_INTERNAL_H

#include "alpha/insn.h"
#include "cfg/cfg.h"

/* How an address inside code came to be referred to. */
typedef enum {
    REF_BRANCH,   /* PC-relative branch (not BSR) */
    REF_CALL,     /* BSR */
    REF_DATA,     /* REFQUAD/REFLONG stored in data */
    REF_TABLE32,  /* GPREL32 stored in data (switch tables) */
    REF_ADDR,     /* address built in code (GPRELLOW, GPREL16, LITERAL) */
    REF_SYM,      /* a symbol inside another procedure */
    REF_ENTRY     /* e_entry, DT_INIT, DT_FINI */
} cfg_refkind;

typedef struct cfg_ref {
    uint64_t target;
    uint64_t source;     /* where the reference sits (0 for REF_ENTRY) */
    uint8_t  kind;
} cfg_ref;

typedef struct cfg_refvec {
    size_t n, cap;
    cfg_ref *r;
} cfg_refvec;

typedef struct cfg_ebuild {     /* edges being built */
    size_t n, cap;
    cfg_edge *e;
} cfg_ebuild;

/* cfg/procs.c */
bool cfg_is_code_section(const image_section *s);
bool cfg_find_procs(cfg_program *p, cfg_refvec *rs);
void cfg_find_gp(const cfg_program *p, cfg_proc *f);

/* cfg/refs.c: rs sorted by target. */
bool cfg_ref_add(cfg_refvec *rs, uint64_t target, uint64_t source, unsigned kind);
bool cfg_collect_refs(cfg_program *p, cfg_refvec *rs);

/* cfg/build.c */
bool cfg_edge_add(cfg_ebuild *eb, uint32_t from, uint32_t to, unsigned kind, uint64_t target);
void cfg_set_why(cfg_proc *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cfg/loops.c: reverse postorder of a depth-first walk from a virtual root
 * (node 0) whose successors are the entry and alternate entries; block b is
 * node b + 1.  rpo[0..*nreached) gets the nodes reached (rpo[0] is the
 * root) and order[node] their rank, UINT32_MAX when not reached; both hold
 * nblocks + 1.  An edge u->v is retreating when order[v] <= order[u].
 * False when memory runs out. */
bool cfg_rpo(const cfg_proc *f, uint32_t *rpo, uint32_t *order, size_t *nreached);

/* cfg/tables.c: table edges of f's table jumps, then the entries that
 * only its own tables point at cleared. */
bool cfg_table_edges(const cfg_program *p, cfg_proc *f, const alpha_insn *ins, cfg_ebuild *eb);
void cfg_table_entries(cfg_proc *f, const cfg_ref *refs, size_t nrefs);

/* Padding the linker and assembler put between and inside procedures. */
#define ALPHA_NOP   0x47ff041fu   /* bis $31,$31,$31 */
#define ALPHA_UNOP  0x2ffe0000u   /* ldq_u $31,0($sp) */
static inline bool cfg_is_pad(uint32_t w)
{
    return w == ALPHA_NOP || w == ALPHA_UNOP;
}

/* True for an instruction after which control never falls through. */
static inline bool cfg_ends_flow(const alpha_insn *in)
{
    switch (alpha_flow_of(in)) {
    case FLOW_BRANCH: case FLOW_JUMP: case FLOW_RETURN: case FLOW_COROUTINE:
        return true;
    default:
        return in->op == NULL;
    }
}

/* Jump-table resolution (cfg/tables.c).  insns are the procedure's decoded
 * words, blocks/edges the graph so far (without table edges).  On success
 * fills *t (one table per call; a jump with several is rare and resolved
 * through `more`) and returns true. */
typedef struct cfg_slice_ctx {
    const cfg_program *prog;
    const cfg_proc *f;
    const alpha_insn *insns;     /* insns[(addr - f->start) / 4] */
} cfg_slice_ctx;

size_t cfg_find_tables(const cfg_slice_ctx *cx, uint32_t block,
                       uint64_t *tables, size_t max);
/* Entries of the table at addr whose targets lie in f; 0 if none.  Stops
 * at `stop` (another table's start) when it is above addr. */
uint32_t cfg_table_extent(const cfg_program *prog, const cfg_proc *f,
                          uint64_t addr, uint64_t stop, uint32_t *entsize);
/* Target of entry k of a table used by f. */
uint64_t cfg_table_entry(const cfg_program *prog, const cfg_proc *f, uint64_t addr,
                         uint32_t entsize, uint32_t k);

/* Recompute relocation targets from the fields (cfg/targets.c); needs the
 * procedures and their GP values. */
void cfg_resolve_targets(cfg_program *p);

#endif
