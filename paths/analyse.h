/*
 * paths/analyse.h: reading a path profile against the image it came from:
 * which blocks each path ran through, the hot paths of a metric, and the
 * check against axp's exact counts.
 */
#ifndef PATHS_ANALYSE_H
#define PATHS_ANALYSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "cfg/paths.h"
#include "paths/pathprof.h"
#include "profdb/exact.h"

/* The blocks (indices into f->blocks) path p ran through, in order, into
 * blocks[0..cap); *n says how many.  False when the path's numbers do not
 * fit f's numbering bl (a profile from another build of the image). */
bool paths_blocks(const cfg_proc *f, const cfg_paths *bl, const pathprof_path *p, uint32_t *blocks, size_t cap,
                  size_t *n);

/* The profile's image that is img: by build-id when both have one, else
 * by path.  NULL when the profile has nothing for it. */
const pathprof_image *paths_image_for(const pathprof *pp, const image *img);

/* One hot path, as seed 004 §6.4 ranks them: its share of a metric over
 * the whole profile and its rate per instruction against the average. */
typedef struct paths_hot {
    size_t image, proc, path;    /* indices into the profile */
    uint64_t value;              /* the metric on this path */
    double share;                /* of the metric's total (paths and outside) */
    double rate;                 /* value per instruction on the path */
    bool dense;                  /* rate above the profile's average */
} paths_hot;

typedef struct paths_hot_table {
    uint64_t total;              /* the metric over the whole run */
    double avg_rate;             /* its total per instruction */
    size_t npaths;               /* paths executed */
    size_t nhot, ndense, nsparse;
    double hot_share, dense_share, sparse_share;
    paths_hot *hot;              /* nhot of them, most first */
} paths_hot_table;

/* Paths with at least threshold (0.01: 1%) of metric m's total.  False
 * when the profile has no such metric, or has no "instructions" column,
 * or out of memory. */
bool paths_hot_paths(const pathprof *pp, int m, double threshold, paths_hot_table *out);
void paths_hot_free(paths_hot_table *t);

/* Every block of every numbered procedure of img that the profile has
 * paths for: does the sum of the counts of the paths through it equal
 * the exact count of its first instruction?  Mismatches are reported to
 * `report` (at most 20).  *blocks and *bad count the blocks checked and
 * the ones that differ; *procs the procedures.  False with a message when
 * the profile does not fit the image. */
bool paths_check_exact(const pathprof_image *pim, const cfg_program *cfg, const profdb_exact_image *ex,
                       FILE *report, size_t *procs, size_t *blocks, size_t *bad, char *err, size_t errlen);

#endif
