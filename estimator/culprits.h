/*
 * estimator/culprits.h: the dynamic stalls of each instruction and what
 * could have caused them (seed 000, §6.2; docs/estimator.md, "Culprits").
 *
 * Once an instruction's frequency F is known, its samples S stand for
 * S x P cycles at the head of the issue queue, of which the static
 * schedule explains M x F.  What is left, when clearly more than sampling
 * noise, is dynamic stall.  The samples cannot say what caused it, but the
 * code can say what could have: DCPI's rules name the candidate causes
 * from the instruction's place and operands, and the earlier instruction
 * it waits on.  The cause names are axp's (`--stats` stalls, `--truth`).
 */
#ifndef ESTIMATOR_CULPRITS_H
#define ESTIMATOR_CULPRITS_H

#include <stdbool.h>
#include <stdint.h>

#include "estimator/freq.h"

typedef enum {
    EST_DYN_ICACHE, EST_DYN_ITB, EST_DYN_DCACHE, EST_DYN_DTB, EST_DYN_WRITE_BUFFER,
    EST_DYN_BRANCH_MISPREDICT, EST_DYN_JUMP_MISPREDICT, EST_DYN_TAKEN_BRANCH, EST_DYN_SYSCALL,
    EST_DYN_MULTIPLIER, EST_DYN_DIVIDER,   /* the unit still busy from before the block */
    EST_DYN_COUNT
} est_dyn_cause;
extern const char *const est_dyn_names[EST_DYN_COUNT];   /* "icache", ... */

typedef struct est_culprit {
    double cycles;           /* S x P: sampled cycles at the head of the queue */
    double stall;            /* dynamic stall cycles: cycles - M x F when clearly
                                above sampling noise, else 0 */
    uint16_t causes;         /* bit (1 << EST_DYN_*) for each possible cause */
    uint64_t load;           /* DCACHE/DTB: the load whose value it waits for */
} est_culprit;

/* Per procedure and block, per instruction: parallel to est_sched. */
typedef struct est_culprits {
    size_t nprocs;
    est_culprit ***blocks;   /* [proc][block][instruction]; NULL rows for
                                procedures and blocks without samples */
    size_t *nblocks;         /* [proc] */
} est_culprits;

/* The culprits of every instruction of cfg with samples, from the
 * frequencies, the blocks' schedules and samples, and the mean period.
 * NULL when memory runs out. */
est_culprits *est_culprits_find(const cfg_program *cfg, const est_freq *freq,
                                const est_sched *sched, double period);
void est_culprits_free(est_culprits *c);
/* The cycles sampling noise may add to or take from an instruction with
 * s samples at mean period P: two standard deviations of the count (a
 * single sample's worth when s < 1).  Above it is dynamic stall, below
 * it unexplained gain (estimator/summary.h). */
double est_stall_noise(double s, double period);

/* Samples of the events that bound a cause: n events per sample times the
 * most cycles one event can cost caps the stall the cause explains. */
typedef enum {
    EST_EV_IMISS, EST_EV_ITBMISS, EST_EV_DMISS, EST_EV_DTBMISS, EST_EV_BRANCHMP, EST_EV_JSRMP,
    EST_EV_COUNT
} est_event;
extern const char *const est_event_names[EST_EV_COUNT];   /* "imiss", ... */
typedef struct est_events {
    double period[EST_EV_COUNT];   /* events per sample, raised by the share of
                                      time a multiplexed event went uncounted;
                                      0: the event was not sampled */
    size_t n;
    uint64_t *addr;                /* sampled addresses, ascending */
    double *count;                 /* [n * EST_EV_COUNT] */
} est_events;
void est_events_free(est_events *e);
/* Rule out the causes the events' samples cannot pay for (ev5: the
 * machine's parameters, NULL for a stock 21164).  Returns how many
 * causes were removed. */
struct ev5_params;
size_t est_culprits_bound(est_culprits *c, const cfg_program *cfg, const est_sched *sched,
                          const est_events *ev, const struct ev5_params *ev5);
/* est_culprits_find and est_culprits_bound on an analysis. */
est_culprits *est_culprits_of(const est_analysis *a);
/* The culprits held against axp's --truth of the same run (DCPI could
 * not): the true dynamic stall cycles at the instructions analysed, how
 * many of them had their true cause among the culprits, the culprits per
 * stalled cycle, and the samples at instructions whose estimated dynamic
 * stall has no candidate cause at all (DCPI's "unexplained stall"). */
struct profdb_truth;
typedef struct est_culprit_accuracy {
    double stall, covered, culprits;       /* true dynamic stall cycles, ... */
    double by_cause[EST_DYN_COUNT], covered_by_cause[EST_DYN_COUNT];
    double samples, unexplained;           /* cycle samples */
} est_culprit_accuracy;
/* The truth's multiplier and divider columns hold the static stall the
 * schedule predicts as well: with the true frequencies (exact, NULL: not
 * known) only what exceeds F x the static stall counts. */
void est_culprits_accuracy(const cfg_program *cfg, const est_culprits *c, const est_sched *sched,
                           const struct profdb_truth *truth, const est_freq *exact,
                           est_culprit_accuracy *out);

/* The causes as "dcache,dtb" into buf. */
const char *est_causes_text(uint16_t causes, char *buf, size_t size);

#endif
