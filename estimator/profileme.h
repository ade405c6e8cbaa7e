/*
 * estimator/profileme.h: what ProfileMe samples say per instruction, and
 * frequencies counted from them (docs/estimator.md "ProfileMe").
 *
 * A ProfileMe sample is a random draw from the fetched instructions, so
 * an instruction's executions are estimated by its samples times the
 * mean sampling period (the paper's kS) with no model in between, and its
 * events are rates over its own samples.
 */
#ifndef ESTIMATOR_PROFILEME_H
#define ESTIMATOR_PROFILEME_H

#include <stddef.h>

#include "cfg/cfg.h"
#include "estimator/freq.h"
#include "profdb/profileme.h"

typedef struct est_pm_metrics {
    double samples;
    double executions;        /* estimated */
    /* rates over the instruction's samples (NAN where they do not apply:
     * a miss rate of a load per load sample, a mispredict rate per branch) */
    double imiss, itbmiss, dmiss, dtbmiss, mispredict, taken;
    /* mean cycles per sample */
    double fetch_issue, head, issue_ready, load;
    /* paired samples (NAN without): estimated issue slots over all its
     * executions from fetch to result, those other instructions used, and
     * the difference, the paper's wasted issue slots */
    double slots, slots_used, wasted;
} est_pm_metrics;

void est_pm_metrics_of(const profdb_pm *e, est_pm_metrics *out);

/* The entries of one image, sorted by offset: the one at addr, or NULL. */
const profdb_pm *est_pm_at(const profdb_pm *e, size_t n, uint64_t addr);

/* Block and edge frequencies counted from ProfileMe samples: a block's
 * executions are the estimated executions of the instructions of its
 * frequency class averaged (each executes as often), an edge out of a conditional branch takes the share
 * of the branch's samples that went its way, the only edge out of a block
 * all of it, and table jumps split by their targets' estimates.  Blocks
 * with no sample are 0 with low confidence.  pm_samples, when not NULL,
 * gets per procedure and block the samples behind each block (for
 * est_accuracy_by).  NULL on allocation failure. */
est_freq *est_freq_from_pm(const cfg_program *cfg, const profdb_pm *e, size_t n, double ***pm_samples, char *err,
                           size_t errlen);
void est_pm_samples_free(double **w, size_t nprocs);

/* The ProfileMe entries of image key in the selection's database and
 * epoch (or all epochs), sorted by offset.  false with a message; *n 0
 * and no message when there are none. */
struct est_selection;
bool est_pm_load(const struct est_selection *sel, const char *key, profdb_pm **e, size_t *n, char *err,
                 size_t errlen);

/* Replace f's block and edge frequencies by those counted from the
 * selection's ProfileMe samples of cfg's image, when it has any (setting
 * f->pm_samples); the rest of f (cycle samples, bounds) stays.  false with
 * a message when the ProfileMe profile cannot be read. */
bool est_pm_count_into(const struct est_selection *sel, const cfg_program *cfg, est_freq *f, char *err,
                       size_t errlen);

/* Per procedure and block, the true instructions executed (truth's block
 * count times its instructions), for weighing errors by executions. */
double **est_pm_exec_weights(const est_freq *truth);

/* The likely paths that led to a sampled instruction (pm_paths.c, the
 * paper's section 5.3): walking its procedure's CFG backwards from its
 * block, following only edges that agree with each branch history of its
 * samples, choosing among agreeing predecessors by the counted
 * frequencies f.  Each path lists blocks from the instruction's backwards
 * and has a score, the estimated share of the samples that came that way.
 * Returns how many (at most max) in out, best first; *proc the procedure. */
#define EST_PM_PATH_MAX 48
enum { EST_PM_END_HISTORY, EST_PM_END_ENTRY, EST_PM_END_CALL, EST_PM_END_LONG };
typedef struct est_pm_path {
    double score;
    uint32_t nblocks;
    uint32_t block[EST_PM_PATH_MAX];
    uint8_t ended;              /* EST_PM_END_*: the history used up, no more predecessors, a call, the length */
} est_pm_path;
size_t est_pm_paths(const cfg_program *cfg, const est_freq *f, const profdb_pm *e, size_t *proc, est_pm_path *out,
                    size_t max);
/* The paths one history allows (history: length << 16 | bits), each
 * scored by its weight among them (adding up to 1); how many in out.
 * cbr: est_pm_cbranch_map of proc, which blocks end with a conditional
 * branch (malloc'd; NULL when out of memory). */
size_t est_pm_paths_of(const cfg_program *cfg, const est_freq *f, size_t proc, uint32_t block, uint64_t pc,
                       uint64_t history, const uint8_t *cbr, est_pm_path *out, size_t max);
uint8_t *est_pm_cbranch_map(const cfg_program *cfg, size_t proc);
/* The procedure and block holding pc; false if none. */
bool est_pm_locate(const cfg_program *cfg, uint64_t pc, size_t *proc, uint32_t *block);
/* The walk's rules: does b end with a conditional branch; does block b
 * of f make a call before pc. */
bool est_pm_ends_cbranch(const cfg_program *cfg, const cfg_block *b);
bool est_pm_call_before(const cfg_proc *f, uint32_t b, uint64_t pc);

/* Path reconstruction against the true paths (pm_paths_acc.c; axp's
 * --profileme-truth, docs/estimator.md "ProfileMe").  For each
 * instruction with at least min_samples ProfileMe samples, each of its
 * records' true path is taken as far back as the walk goes (its block,
 * then the blocks the thread went through, until the history's branches
 * are used up, a block that calls, the procedure was entered, or
 * EST_PM_PATH_MAX blocks) and compared with the reconstructed ones.
 * Figures are in samples (records) unless said. */
#define EST_PM_ACC_SET 64           /* reconstructed paths kept per instruction */
typedef struct est_pm_path_accuracy {
    double instructions, samples;   /* instructions with enough samples, and their records */
    double unknown;                 /* records whose true path axp's ring did not reach back far enough for */
    double top;                     /* of the rest: the true path is the instruction's top-scored */
    double in_set;                  /* ... is among its reconstructed paths */
    double own_top;                 /* ... is the top path of its own history alone */
    double consistent;              /* ... is among the paths its history allows */
    double ambiguous;               /* ... its history allows more than one path */
    double true_score, top_score;   /* sums: the true path's score (0 when not reconstructed), the top's */
    double distance;                /* sum over instructions of records x the total variation
                                     * distance between the scores and the true paths' shares */
    double ends[4];                 /* by how the true path ended (EST_PM_END_*) */
} est_pm_path_accuracy;
struct profdb_pm_truth;
/* false only when out of memory. */
bool est_pm_path_accuracy_of(const cfg_program *cfg, const est_freq *f, const profdb_pm *e, size_t n,
                             const struct profdb_pm_truth *truth, double min_samples, est_pm_path_accuracy *out);

#endif
