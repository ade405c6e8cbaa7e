/*
 * paths/pathprof.h: path profiles (seed 004): for each procedure of each
 * image, how often each Ball-Larus path ran and what it cost.
 *
 * One profile is what one run gave: axp writes it exactly (`axp run
 * --paths FILE`); an instrumented binary writes the same format.  Metric
 * columns are named in the file, so a writer that knows only some of them
 * (an instrumented binary has cycles, not misses) writes only those.  The
 * text format is in docs/paths.md.
 *
 * A complete path runs from the procedure's entry (or the head of a loop,
 * after a back edge) to a return, a tail branch or a back edge: its
 * number is cfg/paths.h's.  A run also has pieces of paths that start or
 * end elsewhere (a longjmp leaves a path, a thread starts in the middle
 * of a procedure, the run ends): a partial path names the blocks it
 * started and ended in and the sum of the path values between them, which
 * is enough to say which blocks it ran through (paths_path_blocks).
 */
#ifndef PATHS_PATHPROF_H
#define PATHS_PATHPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PATHPROF_ENTRY UINT64_MAX        /* a path's start: the entry, or a loop head after its back edge */
#define PATHPROF_EXIT  (UINT64_MAX - 1)  /* a path's end: return, tail branch, back edge */
#define PATHPROF_MAX_METRICS 32

typedef struct pathprof_path {
    uint64_t id;             /* complete: the path number; partial: the value from start to end */
    uint64_t start, end;     /* PATHPROF_ENTRY/EXIT, or link addresses: of the
                                first instruction run (a piece may start inside
                                a block), of the last block */
    uint64_t count;
} pathprof_path;

typedef struct pathprof_proc {
    uint64_t addr;           /* link address of the entry */
    char *name;
    size_t npaths, cap;
    pathprof_path *paths;
    uint64_t *metrics;       /* npaths x the profile's nmetrics */
} pathprof_proc;

typedef struct pathprof_image {
    char *path;              /* as the run named it */
    char *build_id;          /* lowercase hex, "" when none */
    size_t nprocs, cap;
    pathprof_proc *procs;
} pathprof_image;

typedef struct pathprof {
    size_t nmetrics;
    char *metric[PATHPROF_MAX_METRICS];
    size_t nimages, cap;
    pathprof_image *images;
    uint64_t outside[PATHPROF_MAX_METRICS];  /* on no procedure's paths */
    uint64_t partial_paths;  /* of all paths counted, how many were partial */
} pathprof;

static inline bool pathprof_complete(const pathprof_path *p)
{
    return p->start == PATHPROF_ENTRY && p->end == PATHPROF_EXIT;
}

/* An empty profile with these metric columns; NULL when out of memory or
 * more than PATHPROF_MAX_METRICS. */
pathprof *pathprof_new(const char *const *metrics, size_t n);
void pathprof_free(pathprof *pp);
/* The metric column named name, or -1. */
int pathprof_metric(const pathprof *pp, const char *name);

/* Adding: the image (found by build-id and path, or appended), the
 * procedure (found by address, or appended), a path (appended: callers
 * keep their own index).  NULL / SIZE_MAX when out of memory. */
pathprof_image *pathprof_image_add(pathprof *pp, const char *path, const char *build_id);
pathprof_proc *pathprof_proc_add(pathprof_image *im, uint64_t addr, const char *name);
size_t pathprof_path_add(const pathprof *pp, pathprof_proc *f, uint64_t id, uint64_t start, uint64_t end);
static inline uint64_t *pathprof_metrics(const pathprof *pp, const pathprof_proc *f, size_t i)
{
    return &f->metrics[i * pp->nmetrics];
}

/* Text form (docs/paths.md).  write returns false on a write error;
 * read returns NULL with "NAME:LINE: what is wrong" in err. */
bool pathprof_write(const pathprof *pp, FILE *f);
pathprof *pathprof_read(const char *file, char *err, size_t errlen);
pathprof *pathprof_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);

#endif
