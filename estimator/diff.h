/*
 * estimator/diff.h: the difference between two profile sets, per image
 * and per procedure.
 *
 * Images of the two sets are paired by identity: the same build-id, or a
 * rewritten image and the original its address map names.  Images left
 * unpaired are paired by path, then by file name: two builds of one
 * program, whose procedures then pair by name.  The samples of a rewritten
 * image are mapped back to the original's addresses and placed with the
 * original's symbols, so a procedure split into hot and cold parts still
 * counts as one.
 */
#ifndef ESTIMATOR_DIFF_H
#define ESTIMATOR_DIFF_H

#include "estimator/samples.h"

/* A rewritten image's way back to its original.  Address maps are read by
 * rewriter/, a room above this one, so the front end supplies them. */
typedef struct est_origin {
    uint8_t build_id[PROFDB_MAX_BUILD_ID];   /* the original's */
    size_t build_id_len;
    void *map;
    uint64_t (*lookup)(const void *map, uint64_t offset);  /* new -> original */
    void (*free)(void *map);
} est_origin;

/* Fill *out and return true when img carries a map to its original. */
typedef bool (*est_origin_fn)(void *ctx, const image *img, est_origin *out);

typedef struct est_diff_options {
    const char *event;             /* NULL: "cycles" */
    est_origin_fn origin;          /* NULL: images are taken as they are */
    void *origin_ctx;
    void (*warn)(void *ctx, const char *msg);   /* NULL: stderr */
    void *warn_ctx;
} est_diff_options;

typedef struct est_diff_row {
    char *image;           /* the image's path (B's when both sets have it) */
    char *procedure;       /* NULL in per-image rows */
    uint64_t a, b;         /* samples in each set */
    double a_pct, b_pct;   /* share of each set's samples */
} est_diff_row;

typedef struct est_diff {
    uint64_t total_a, total_b;
    size_t nimages, nprocs;
    est_diff_row *images;  /* largest change in share first, then largest change */
    est_diff_row *procs;   /* the same order */
} est_diff;

bool est_diff_compute(const est_set *a, const est_set *b, const est_diff_options *opt,
                      est_diff *out, est_error *err);
void est_diff_free(est_diff *d);

#endif
