/*
 * paths/cct.h: calling context trees (seed 004 §4).
 *
 * A node is a procedure in one calling context: the chain of call sites
 * from the root down to it.  A call from the context of node C to
 * procedure D at site S goes to C's child (S, D); when D already is on the
 * chain from the root to C (recursion), the call goes back to that node
 * instead, along a back edge, so no procedure appears twice on a chain and
 * the tree stays as deep as the program has procedures.  Each node holds
 * the metrics of what ran in its context itself (exclusive); inclusive
 * figures are the sums over subtrees.
 *
 * axp builds it exactly (`axp run --cct FILE`), an instrumented binary
 * writes the same format, `cpo cct` reads and shows it (docs/paths.md).
 */
#ifndef PATHS_CCT_H
#define PATHS_CCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CCT_ROOT 0u
#define CCT_NONE UINT32_MAX
#define CCT_MAX_METRICS 32
#define CCT_NOIMAGE (-1)

typedef struct cct_node {
    uint32_t parent;          /* CCT_NONE for the root */
    int32_t image;            /* into cct.images; CCT_NOIMAGE: outside any image */
    uint64_t proc;            /* link address of the procedure's entry */
    uint64_t site;            /* link address of the call in the parent's
                                 procedure; 0 when not entered by a call
                                 (a thread's start, a signal handler) */
    char *name;               /* the procedure's name, "" when unknown */
    uint32_t first_child, next_sibling;
} cct_node;

typedef struct cct_back {     /* recursion: a call from `from` that went to its ancestor `to` */
    uint32_t from, to;
    uint64_t site;
    uint64_t count;
} cct_back;

typedef struct cct_image {
    char *path;
    char *build_id;           /* "" when none */
} cct_image;

typedef struct cct {
    size_t nmetrics;
    char *metric[CCT_MAX_METRICS];
    size_t nnodes, cap;
    cct_node *nodes;          /* node 0 is the root; a parent comes before its children */
    uint64_t *metrics;        /* nnodes x nmetrics, exclusive */
    size_t nback, backcap;
    cct_back *back;
    size_t nimages, imcap;
    cct_image *images;
    struct cct_hash *hash;    /* (parent, site, image, proc) -> node, for building */
} cct;

cct *cct_new(const char *const *metrics, size_t n);
void cct_free(cct *t);
int cct_metric(const cct *t, const char *name);
static inline uint64_t *cct_metrics(const cct *t, uint32_t node) { return &t->metrics[(size_t)node * t->nmetrics]; }

/* The image index for (path, build_id), added when new; -1 out of memory. */
int cct_image_add(cct *t, const char *path, const char *build_id);

/* Where a call from node `from` at `site` to procedure (image, proc) goes:
 * a child (made when new), or an ancestor when the procedure is already on
 * the chain (the back edge counted).  CCT_NONE when out of memory. */
uint32_t cct_call(cct *t, uint32_t from, uint64_t site, int32_t image, uint64_t proc, const char *name);

/* Inclusive metrics: incl[node * nmetrics + q], sums over each subtree
 * (back edges add nothing: what ran in a recursive call is already in its
 * ancestor's node).  NULL when out of memory. */
uint64_t *cct_inclusive(const cct *t);

bool cct_write(const cct *t, FILE *f);
cct *cct_read(const char *file, char *err, size_t errlen);
cct *cct_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);

#endif
