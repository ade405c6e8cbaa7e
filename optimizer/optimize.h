/*
 * optimizer/optimize.h: from estimated frequencies to a layout plan.
 *
 * opt_plan() takes the estimator's block and edge frequencies of every
 * procedure (from samples or exact counts) and decides, for the EV5's 8 KB
 * direct-mapped I-cache and its fetch rules:
 *   - block chains that make frequent edges fall through;
 *   - a hot/cold split of blocks that never ran, where the estimate is sure;
 *   - procedure order by call affinity, hot parts packed together so the
 *     code that runs together spans as few cache lines as it can;
 *   - alignment of hot loop heads and jump-table targets where the padding
 *     is not executed.
 * It predicts the cycles the plan saves with a cost model of the same EV5
 * parameters the machine uses, and records per procedure what it did and why
 * (opt_report).  docs/optimizer.md tells the whole story.
 */
#ifndef OPTIMIZER_OPTIMIZE_H
#define OPTIMIZER_OPTIMIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "alpha/ev5.h"
#include "cfg/cfg.h"
#include "estimator/freq.h"
#include "optimizer/plan.h"

/* A register jump's (JMP, JSR) most frequent target in the profile. */
typedef struct opt_jump {
    uint64_t pc, target;
    double count, total;    /* to that target, and to all */
} opt_jump;

typedef struct opt_options {
    const ev5_params *ev5;      /* NULL: the stock 21164 */
    bool no_split, no_align, no_chain, no_order;   /* switch passes off */
    bool split_warm;            /* warm chains (ran, but rarely) to the cold area
                                   too, where the estimate is HIGH or EXACT */
    bool cold_handlers;         /* the unsampled targets of a hot jump table
                                   go to the cold area like any block never
                                   seen to run (by default they stay hot,
                                   in procedures of at least 1/1,000 of
                                   the instructions) */
    bool no_colour;             /* no cache-line colouring */
    bool gaps;                  /* gaps that move a hot procedure off the
                                   sets of its callers' and callees' hot lines */
    bool exttsp;                /* block chains by the ext-TSP score instead
                                   of Pettis and Hansen's bottom-up chaining */
    bool c3;                    /* procedures by call-chain clustering (C3) in
                                   cache-sized groups, instead of by call
                                   affinity without bound */
    /* Colouring: the I-cache set (offset modulo the cache size) where the
     * rewriter starts the moved code, and the executions per set of the code
     * of other images that share the cache (the shared libc: loaded on a page
     * boundary, so its link-time addresses give its sets); NULL: none. */
    uint32_t code_phase;
    const double *shared_heat;  /* [icache.size / icache.line] */
    /* Jump hints: each gets the hint of its most frequent target; sorted
     * by pc, one per pc.  A jump table's JMP not listed gets the target of
     * its most frequent table edge by the estimate. */
    const opt_jump *jumps;
    size_t njumps;
    /* The runs the frequencies sum, each with its shared libraries' heat,
     * when the source kept them apart: the I-cache model walks each run on
     * its own, so code of different runs does not look as if it ran
     * together.  nruns 0: one walk of the sum. */
    const est_freq *const *runs;
    const double *const *run_shared;
    size_t nruns;
} opt_options;

typedef enum {
    OPT_COLD = 0,       /* never ran: left in address order after the hot code */
    OPT_MOVED,          /* ran; placed by call affinity, blocks in their order */
    OPT_CHAINED,        /* ran; blocks chained (and maybe split, aligned) */
    OPT_PINNED          /* the CFG is incomplete: left where it is */
} opt_action;

typedef struct opt_proc_note {
    uint32_t proc;              /* index into cfg->procs */
    uint8_t action;             /* opt_action */
    uint32_t hot_bytes, cold_bytes;   /* after the split (cold 0: no split) */
    uint32_t kept_bytes;        /* of them, unsampled handlers kept hot */
    uint32_t aligned;           /* blocks given an alignment */
    uint32_t hints;             /* JMP/JSR hints toward a profiled target */
    double insns;               /* estimated instructions executed */
    double cost_before, cost_after;   /* predicted fetch cycles, see below */
    const char *why;            /* for OPT_COLD / OPT_PINNED / no chain */
} opt_proc_note;

typedef struct opt_result {
    size_t nnotes;  opt_proc_note *notes;   /* in plan order, then the rest */
    /* The cost model's prediction, in cycles, of what the layout can change:
     * taken-branch bubbles and added branches, and the I-cache lines the hot
     * code spans (each one a miss at least once per pass over them). */
    double bubbles_before, bubbles_after;
    uint64_t hot_lines_before, hot_lines_after;
    /* Colouring: the conflict measure (sum over cache sets of the smaller of
     * two executions sharing it) with the shared code, before and after;
     * procedures never run placed as fillers and the bytes they take. */
    double conflict_before, conflict_after;
    size_t fillers, hints;
    double shared_heat;         /* the shared libraries' executions, all sets */
    uint32_t shared_sets;       /* sets they touch */
    uint64_t filler_bytes;
    /* Gaps: hot procedures moved off the sets of their callers' and
     * callees' hot lines, the bytes of nops that took, and the conflict
     * measure between such partners before and after. */
    size_t gaps;
    uint64_t gap_bytes;
    /* Blocks no sample hit that are kept in the hot part as handlers of a
     * hot jump table (opt_options.cold_handlers), their bytes, and the
     * procedures they are in. */
    size_t kept_blocks, kept_procs;
    uint64_t kept_bytes;
    double pair_conflict_before, pair_conflict_after;
    double insns;               /* estimated instructions executed, total */
    /* The I-cache model (icache.c): misses of a walk drawn from the
     * estimates, in the original layout and in the plan's; -1: no model. */
    double icache_before, icache_after;
    size_t icache_runs;         /* runs walked apart (0: one walk of the sum) */
} opt_result;

/* Build pl (fresh; plan_free it) from the frequencies f of prog.  False
 * with a message only when out of memory. */
bool opt_plan(const cfg_program *prog, const est_freq *f, const opt_options *o, plan *pl,
              opt_result *res, char *err, size_t errlen);
/* The report: a summary, then one line per procedure that ran. */
void opt_report(FILE *out, const cfg_program *prog, const opt_result *res);
void opt_result_free(opt_result *res);

/* Predicted taken-branch and added-branch cycles of one procedure laid out
 * in order[0..n) (block indices; blocks not listed do not follow anything)
 * with frequencies fp: for tests and the report. */
double opt_fetch_cost(const cfg_proc *p, const est_proc_freq *fp, const uint32_t *order,
                      size_t n, const ev5_params *ev5);

#endif
