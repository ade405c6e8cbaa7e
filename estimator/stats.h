/*
 * estimator/stats.h: how each procedure's samples vary across profile
 * sets (several runs of one workload), as DCPI's dcpistats reported it.
 *
 * A procedure is the same across sets when its image path and name are:
 * a program rebuilt between runs gets a new build-id but keeps its
 * procedures.  A set without samples of a procedure counts 0 for it.
 */
#ifndef ESTIMATOR_STATS_H
#define ESTIMATOR_STATS_H

#include "estimator/samples.h"

typedef struct est_stat_row {
    char *procedure;       /* name or pseudo-name (estimator/samples.h) */
    char *image;           /* the image's path */
    uint64_t *per_set;     /* samples in each set */
    size_t present;        /* N: sets with samples of it */
    uint64_t sum, min, max;
    double mean;           /* sum / number of sets */
    double stddev;         /* sample standard deviation (n - 1), 0 for one set */
    double range_pct;      /* 100 (max - min) / sum: DCPI's normalised range */
    double sum_pct;        /* 100 sum / samples of every set */
} est_stat_row;

typedef struct est_stats {
    size_t nsets;
    uint64_t *set_totals;  /* samples of the event in each set */
    uint64_t total;
    size_t nrows;
    est_stat_row *rows;    /* largest range% first, then largest sum */
} est_stats;

/* Statistics of one event over sets[0..nsets).  A set lacking the event
 * entirely contributes zeros. */
bool est_stats_compute(const est_set *sets, size_t nsets, const char *event, est_stats *out,
                       est_error *err);
void est_stats_free(est_stats *st);

#endif
