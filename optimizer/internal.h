/*
 * optimizer/internal.h: shared by the optimizer's own files only.
 */
#ifndef OPTIMIZER_INTERNAL_H
#define OPTIMIZER_INTERNAL_H

#include "optimizer/optimize.h"

/* A procedure is hot when it runs at least this share of all instructions:
 * the hot ones are packed first, by call affinity. */
#define OPT_HOT_SHARE 1e-4
/* A hot procedure under this share of all instructions is lukewarm: it
 * joins a call-affinity group of pass 5 only while the group fits the
 * I-cache; the groups of at least this share come first.  Merged into the
 * group of an interpreter's loop, lukewarm callees landed on its sets
 * (docs/notes/optimizer-groups.md). */
#define OPT_GROUP_SHARE 1e-3
/* The largest gap, in I-cache lines, before a hot procedure (layout.c). */
#define OPT_MAX_GAP 32
/* A chain is warm when its hottest block runs less than this share of the
 * procedure's hottest block: placed after the hot chains, by heat. */
#define OPT_WARM_SHARE (1.0 / 512)
/* Fetch-block alignment of a hot loop head: it runs at least this share of
 * its procedure's hottest block; of a jump table's target (an
 * interpreter's handler, each one a share of the dispatches): this. */
#define OPT_ALIGN_LOOP_SHARE (1.0 / 4)
#define OPT_ALIGN_TABLE_SHARE (1.0 / 64)

/* One procedure's block order: order[0..split) hot, order[split..n) cold
 * (split PLAN_NOSPLIT: nothing cold); align[i] for order[i], 0: none. */
typedef struct opt_proc_layout {
    uint32_t *order;
    uint32_t *align;
    size_t n, split;
    uint32_t kept, kept_bytes;   /* unsampled handler blocks kept hot */
} opt_proc_layout;

/* One procedure's chains, order and split (chains.c). */
bool opt_chain_proc(const cfg_proc *p, const est_proc_freq *fp, const opt_options *o,
                    opt_proc_layout *out);
/* Merge the chains of next/head/tail (glued by calls) that ran by the
 * ext-TSP score (exttsp.c).  False only when out of memory. */
bool opt_exttsp(const cfg_proc *p, const est_proc_freq *fp, uint32_t *next, uint32_t *head,
                uint32_t *tail);
void opt_align_proc(const cfg_proc *p, const est_proc_freq *fp, const ev5_params *ev5,
                    opt_proc_layout *L, double proc_max);

/* The profiled target of the register jump at pc (layout.c); NULL: none. */
const opt_jump *opt_jump_at(const opt_options *o, uint64_t pc);

/* A synthetic run drawn from the estimates (icache.c): the blocks it
 * visits, as global ids (procedure i's block b is base[i] + b), with the
 * shared libraries' lines between them (OPT_TRACE_LIB | set). */
#define OPT_TRACE_LIB 0x80000000u
/* The walk's length, in program lines touched. */
#define OPT_TRACE_LINES 2000000
typedef struct opt_trace {
    uint32_t *v;
    size_t n;
    uint32_t *base;             /* [nprocs + 1] */
    size_t nblocks;
    double walked;              /* program lines the walk touched */
    double scale;               /* the profile's line executions per such line */
} opt_trace;
/* A walk of about `lines` I-cache lines of `line` bytes, the program's and
 * the libraries' drawn between them; false when out of memory or when
 * nothing ran. */
bool opt_trace_make(const cfg_program *prog, const est_freq *f, const opt_options *o,
                    uint32_t line, uint32_t nsets, uint64_t lines, opt_trace *t);
void opt_trace_free(opt_trace *t);
/* The I-cache misses of the walk with each global block g at addr[g]
 * (UINT64_MAX: not placed) for size[g] bytes, scaled to the profile's
 * executions; -1 when out of memory. */
double opt_trace_misses(const opt_trace *t, const uint64_t *addr, const uint32_t *size,
                        uint32_t line, uint32_t nsets);

#endif
