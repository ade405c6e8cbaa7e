/*
 * estimator/freq.h: block and edge frequencies with their confidence, for
 * every procedure of an image.
 *
 * One shape for every source of frequencies: exact counts (axp --exact,
 * the ground truth) and estimates from samples.  The optimizer lays code out
 * from it and `cpo accuracy` compares two of them.  Edges are the CFG's own
 * (cfg_proc.edges), including those from the virtual entry and to the exit.
 */
#ifndef ESTIMATOR_FREQ_H
#define ESTIMATOR_FREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "profdb/exact.h"

typedef enum { EST_CONF_LOW, EST_CONF_MEDIUM, EST_CONF_HIGH, EST_CONF_EXACT } est_conf;

/* Where an estimate came from. */
typedef enum {
    EST_FROM_NONE,       /* nothing said anything: the flow's choice, or 0 */
    EST_FROM_SAMPLES,    /* its frequency class's issue points */
    EST_FROM_PROPAGATION,/* flow constraints from other estimates (local) */
    EST_FROM_COUNTS      /* exact counts */
} est_from;

typedef struct est_proc_freq {
    double  *block;      /* [proc->nblocks] estimated executions */
    uint8_t *block_conf; /* est_conf per block */
    double  *edge;       /* [proc->nedges] estimated executions, like proc->edges */
    uint8_t *edge_conf;
    uint8_t *block_from; /* est_from per block, before the global flow step */
    uint8_t *edge_from;
    uint8_t *block_upper;/* 1: the estimate rests on issue points that may
                            all have stalled, so it is likelier above the
                            truth than below (lowering it costs less) */
    uint8_t *edge_upper;
    double  *block_cap;  /* [proc->nblocks] the most executions the block's
                            own samples allow (each execution spends at
                            least its M cycles at the head), with room for
                            sampling noise; INFINITY when nothing bounds it */
    double   samples;    /* cycle samples in the procedure (0 for exact) */
} est_proc_freq;

typedef struct est_freq {
    const cfg_program *cfg;
    est_proc_freq *procs;   /* parallel to cfg->procs */
    double pm_samples;      /* ProfileMe samples the frequencies were counted from (0: none) */
} est_freq;

/* Cycle samples of one image: per sampled address (ascending). */
typedef struct est_sample_col {
    const uint64_t *addr;
    const double *samples;
    size_t n;
} est_sample_col;

/* The static schedule of every block, kept for CPI and culprit reports. */
typedef struct est_block_sched {
    uint32_t n;                    /* instructions */
    struct alpha_sched_slot *slots;/* alpha/sched.h */
    double *samples;               /* per instruction */
} est_block_sched;
typedef struct est_proc_sched {
    size_t nblocks;
    est_block_sched *blocks;
} est_proc_sched;
typedef struct est_sched {
    size_t nprocs;
    est_proc_sched *procs;         /* parallel to cfg->procs */
} est_sched;
void est_sched_free_all(est_sched *sc);

/* Empty frequencies (all zero, confidence low) for every procedure. */
est_freq *est_freq_new(const cfg_program *cfg);
void est_freq_free(est_freq *f);
const char *est_conf_name(unsigned conf);

/* f's executions added to to's (both of one cfg), f's confidence kept:
 * the counts of several runs as one. */
void est_freq_add(est_freq *to, const est_freq *f);

/* Exact counts of the image cfg was built from, found in ex by build-id
 * (by path when the image has none).  NULL with a message when the counts
 * hold no such image or memory runs out. */
est_freq *est_freq_from_exact(const cfg_program *cfg, const profdb_exact *ex, char *err,
                              size_t errlen);

/* Frequencies from cycle samples at a mean period (cycles per sample):
 * DCPI's estimate per frequency class from M_i (alpha/'s scheduler with
 * ev5, NULL for a stock 21164), local propagation, then the least-cost
 * flow that makes every block and edge consistent (docs/estimator.md).
 * With scheds, the blocks' schedules and samples are kept there. */
struct ev5_params;
est_freq *est_freq_from_samples(const cfg_program *cfg, const est_sample_col *col, double period,
                                const struct ev5_params *ev5, est_sched **scheds, char *err,
                                size_t errlen);

/* Carrying frequencies of a rewritten image back to its original: the
 * rewriter's address map, as lookups (rewriter/addrmap.h). */
typedef struct est_addr_map {
    void *ctx;
    uint64_t (*to_orig)(void *ctx, uint64_t addr);  /* the original of a new address */
    uint64_t (*to_new)(void *ctx, uint64_t orig);   /* the new address, 0 if not moved */
    bool (*added)(void *ctx, uint64_t addr);        /* in a branch the rewriter added? */
} est_addr_map;
/* from (of a rewritten image's CFG) on orig's CFG, made flow-consistent
 * (docs/estimator.md, "Rewritten images"); procedures the rewritten CFG
 * could not follow take fallback's (may be NULL) as they are.  NULL when
 * memory runs out. */
est_freq *est_freq_carry(const cfg_program *orig, const est_freq *from, const est_freq *fallback,
                         const est_addr_map *m, char *err, size_t errlen);
/* Samples at a copy's addresses, n of them, moved to the original's
 * (m->to_orig), sorted and merged into out, whose arrays the caller
 * frees.  False when memory runs out. */
bool est_samples_to_orig(const est_addr_map *m, const uint64_t *addr, const double *samples, size_t n,
                         est_sample_col *out);
/* est_freq_carry with the fallback made from the copy's samples at the
 * original's addresses (est_samples_to_orig) at period; the original's
 * schedules with those samples in *sched when sched is not NULL. */
est_freq *est_freq_carry_samples(const cfg_program *orig, const est_freq *from, const est_addr_map *m,
                                 const est_sample_col *orig_samples, double period, est_sched **sched,
                                 char *err, size_t errlen);

/* Frequencies of an older build of a program carried over to a new one by
 * matching procedures by name and blocks by the hash of their instructions
 * (docs/estimator.md, "Older builds").  st tells how much matched: the old
 * build's executed instructions, and those in matched blocks. */
typedef struct est_match_stats {
    size_t procs;            /* procedures found in both */
    double total, matched;   /* old executed instructions: all, matched */
} est_match_stats;
est_freq *est_freq_match(const cfg_program *cfg, const est_freq *old, est_match_stats *st,
                         char *err, size_t errlen);

/* How far estimates are from the truth (DCPI's Figures 8 and 9): block
 * errors weighted by the block's cycle samples, edge errors by the edge's
 * true executions.  hist[k] is the weight with an error in
 * [-50% + 5k%, -45% + 5k%) for k = 1..19, hist[0] below -45%, hist[20]
 * from +50% up (an estimate above a true zero counts there). */
#define EST_ACC_BINS 21
typedef struct est_accuracy_part {
    double weight;              /* total */
    double within[3];           /* within 5%, 10%, 15% */
    double hist[EST_ACC_BINS];
    double conf_weight[3], conf_within5[3];   /* by confidence low/medium/high */
} est_accuracy_part;
/* Two-way branches: the weight of each is how many more times its hotter
 * side ran than the other, which a layout that made the wrong side the
 * fall-through would lose; named is the part of it whose hotter side the
 * estimate names too. */
typedef struct est_accuracy_branches {
    double weight, named;
    uint64_t count, wrong;
} est_accuracy_branches;
typedef struct est_accuracy {
    est_accuracy_part blocks, edges;
    est_accuracy_branches branches;
} est_accuracy;
/* Block b of f ends in a two-way branch whose sides both stay in f and ran
 * unequally by truth: its hotter side's edge in *hot, the other in *other. */
bool est_two_way(const cfg_proc *f, size_t b, const est_proc_freq *truth, uint32_t *hot, uint32_t *other);
/* est and truth are of the same cfg; sched gives the blocks' samples. */
void est_accuracy_of(const est_freq *est, const est_sched *sched, const est_freq *truth,
                     est_accuracy *out);

/* The same, block errors weighted by weight[proc][block] (a NULL row:
 * none of the procedure's blocks count). */
void est_accuracy_by(const est_freq *est, double *const *weight, const est_freq *truth, est_accuracy *out);

/* The whole path from a profile selection: load its cycle samples, find
 * the image (the file at image_path, matched by build-id), build its CFG
 * and estimate.  The result owns everything (est_analysis_free). */
struct est_selection;
struct est_events;
typedef struct est_analysis {
    image *img;
    cfg_program *cfg;
    est_freq *freq;
    est_sched *sched;
    double period;           /* mean cycles per sample */
    double samples;          /* cycle samples of the image */
    struct est_events *events;   /* its samples of the events that bound the
                                    stall culprits (estimator/culprits.h);
                                    NULL when the selection has none */
} est_analysis;
/* The estimates for an image whose CFG is built already: the selection's
 * cycle samples of cfg->img (by build-id), their mean period and count in
 * *period and *samples, the blocks' schedules in *scheds when asked. */
est_freq *est_freq_from_selection(const struct est_selection *sel, const cfg_program *cfg,
                                  est_sched **scheds, double *period, double *samples, char *err,
                                  size_t errlen);
/* One kind of process that ran an image: its part of the summed estimate,
 * its share of the image's samples and how many processes it pooled. */
typedef struct est_run {
    est_freq *freq;
    double share;
    size_t processes;
} est_run;
/* sum (the selection's estimate of cfg->img) split among the kinds of
 * process in the selection's per-process profiles (cpod --per-process),
 * by each kind's share of every frequency class's samples
 * (estimator/freq_runs.c).  *nruns 0 when there are fewer than two kinds;
 * false with a message when loading fails or memory runs out. */
bool est_freq_runs(const struct est_selection *sel, const cfg_program *cfg, const est_freq *sum,
                   est_run **runs, size_t *nruns, char *err, size_t errlen);
void est_runs_free(est_run *runs, size_t n);
/* NULL with a message in err ("FILE: what is wrong") on failure: the image
 * unreadable, no cycle samples of it in the selection, out of memory. */
est_analysis *est_analyse(const struct est_selection *sel, const char *image_path, char *err,
                          size_t errlen);
void est_analysis_free(est_analysis *a);

#endif
