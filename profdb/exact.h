/*
 * profdb/exact.h: reading axp's exact counts (`axp run --exact FILE`; the
 * format is in docs/machine.md, "Exact counts").
 *
 * Exact counts are the ground truth the estimator is measured against and
 * the oracle input of the optimizer.  The file is text; the reader keeps its
 * records per image, in file order, and checks what can be checked without
 * the images themselves: the record's shape, numbers, known image numbers and
 * edge kinds.  Every error names the file and line.
 */
#ifndef PROFDB_EXACT_H
#define PROFDB_EXACT_H

#include <stddef.h>
#include <stdint.h>

#include "profdb/profdb.h"

#define PROFDB_EXACT_NOIMAGE UINT32_MAX  /* image "-" or none */

typedef struct profdb_exact_run {     /* block N START END COUNT */
    uint64_t start, end, count;
} profdb_exact_run;

typedef struct profdb_exact_entry {   /* entry N ADDR COUNT */
    uint64_t addr, count;
} profdb_exact_entry;

typedef struct profdb_exact_edge {    /* edge N FROM KIND M TO COUNT */
    uint64_t from, to, count;
    uint32_t to_image;                /* index into profdb_exact.images */
    char kind;                        /* T N B C S J R O P F */
} profdb_exact_edge;

typedef struct profdb_exact_exit {    /* exit N ADDR KIND COUNT */
    uint64_t addr, count;
    char kind;
} profdb_exact_exit;

typedef struct profdb_exact_branch {  /* branch N PC TARGET TAKEN NOTTAKEN */
    uint64_t pc, target, taken, not_taken;
} profdb_exact_branch;

typedef struct profdb_exact_target {  /* M:TO=C of a jump record */
    uint64_t to, count;
    uint32_t image;
} profdb_exact_target;

typedef struct profdb_exact_jump {    /* jump N PC KIND COUNT M:TO=C ... */
    uint64_t pc, count;
    char kind[12];                    /* jmp, jsr, ret, jsr_coroutine */
    size_t first, ntargets;           /* into profdb_exact_image.targets */
} profdb_exact_jump;

typedef struct profdb_exact_call {    /* call N PC COUNT */
    uint64_t pc, count;
} profdb_exact_call;

typedef struct profdb_exact_image {
    char *path;                       /* as recorded; "-" for run-time code */
    uint8_t build_id[PROFDB_MAX_BUILD_ID];
    size_t build_id_len;              /* 0: none recorded */
    size_t nruns;     profdb_exact_run    *runs;
    size_t nentries;  profdb_exact_entry  *entries;
    size_t nedges;    profdb_exact_edge   *edges;    /* edges leaving this image's code */
    size_t nexits;    profdb_exact_exit   *exits;
    size_t nbranches; profdb_exact_branch *branches;
    size_t njumps;    profdb_exact_jump   *jumps;
    size_t ntargets;  profdb_exact_target *targets;
    size_t ncalls;    profdb_exact_call   *calls;
} profdb_exact_image;

typedef struct profdb_exact {
    char *name;                       /* the file, as given to the reader */
    size_t nimages;
    profdb_exact_image *images;       /* indexed by the file's image number */
} profdb_exact;

/* Read FILE.  On failure returns NULL with err filled ("FILE:LINE: ..."). */
profdb_exact *profdb_exact_read(const char *file, profdb_error *err);
/* The same from memory (name only labels errors); for tests and fuzzing. */
profdb_exact *profdb_exact_parse(const char *text, size_t len, const char *name,
                                 profdb_error *err);
void profdb_exact_free(profdb_exact *ex);

/* The image with this build-id, or NULL.  Images without a build-id are
 * never matched by this; find them by path. */
const profdb_exact_image *profdb_exact_find(const profdb_exact *ex, const uint8_t *build_id,
                                            size_t len);
const profdb_exact_image *profdb_exact_find_path(const profdb_exact *ex, const char *path);
/* The counts of the image with this build-id (len 0: of the one at path),
 * as est_freq_from_exact finds them.  NULL with err naming the file when
 * the file declares no such image (PROFDB_ENOENT) or declares it but holds
 * no block record of it (PROFDB_ECORRUPT, "FILE: no counts for PATH": cut
 * short after its image lines, or a run in which the image never ran). */
const profdb_exact_image *profdb_exact_counts(const profdb_exact *ex, const uint8_t *build_id, size_t len,
                                              const char *path, profdb_error *err);

#endif
