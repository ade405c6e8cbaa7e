/*
 * estimator/samples.h: the samples of a profile selection, per image,
 * procedure and instruction (docs/profile-tools.md).
 *
 * A selection is a database, an epoch (or all of them) and a list of events.
 * Loading it sums every host's profiles of each image and event, finds each
 * image's file (the paths its profiles recorded, checked against the
 * build-id) and keeps, per image, every sampled offset with one count per
 * event.  The reporting tools (cpo prof, list, stats, diff, export) and,
 * later, the frequency estimator start from here.
 */
#ifndef ESTIMATOR_SAMPLES_H
#define ESTIMATOR_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "profdb/profdb.h"

typedef struct est_error {
    char msg[1024];   /* "FILE: what is wrong" */
} est_error;

/* Names of the rows that are not procedures.  Brackets cannot begin a C
 * symbol, so none of them can be mistaken for a real procedure. */
#define EST_UNKNOWN_NAME    "[unknown]"         /* the unknown profile */
#define EST_NOT_READ_NAME   "[image not read]"  /* a whole image whose file was not read */
#define EST_NO_SECTION_NAME "[no section]"      /* an offset outside every section */
/* Samples in a section but in no function symbol (PLT stubs, code the
 * linker added) are named after the section: "[.plt]", "[.text]". */

/* The prefix of a per-process cycle profile's event name (docs/cpod.md),
 * and how many of them (the busiest) a selection loads at most. */
#define EST_PROCESS_EVENT "cycles@pid-"
#define EST_MAX_PROCESSES 64

typedef struct est_selection {
    const char *db;             /* the database directory */
    const char *epoch;          /* NULL: the current epoch */
    bool all_epochs;            /* sum every epoch (epoch must be NULL) */
    const char *const *events;  /* columns, in order; NULL: every event */
    size_t nevents;
    const char *const *image_files;  /* image files tried first, matched by
                                        build-id (an image that moved) */
    size_t nimage_files;
    /* Images already open, tried first the same way (a copy of each is
     * kept): one that is no longer at any path, an original recovered
     * from its rewritten copy (rewriter/undo.h). */
    const image *const *open_images;
    size_t nopen_images;
    /* Warnings (an image file not found or of another build-id); NULL
     * prints "cpo: warning: MSG" on stderr. */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
    /* No warning for an image whose file is missing or of another build:
     * the caller reads the images' status and says what matters to it. */
    bool quiet_missing;
    /* Frequencies from cycle samples even where the database has
     * ProfileMe samples of the image (which are otherwise counted:
     * estimator/profileme.h). */
    bool cycles_only;
    /* The per-process cycle profiles (cpod --per-process: "cycles@pid-N"),
     * in place of every event, when no events are named. */
    bool processes;
} est_selection;

typedef enum {
    EST_IMAGE_READ,      /* its file was read: procedures are known */
    EST_IMAGE_MISSING,   /* no readable file at any recorded path */
    EST_IMAGE_MISMATCH,  /* a file was found, with another build-id */
    EST_IMAGE_UNKNOWN    /* the unknown profile (offsets are raw PCs) */
} est_image_status;

typedef struct est_image {
    char key[PROFDB_KEY_MAX];
    char *path;                  /* the latest name its profiles recorded */
    uint8_t build_id[PROFDB_MAX_BUILD_ID];
    size_t build_id_len;
    est_image_status status;
    image *img;                  /* the file read, when EST_IMAGE_READ */
    size_t nevents;              /* the set's, repeated for lookups */
    size_t n;                    /* distinct sampled offsets */
    uint64_t *offsets;           /* ascending */
    uint64_t *counts;            /* n x nevents: counts[i * nevents + e] */
    uint64_t *totals;            /* per event */
    uint64_t *period_sums;       /* per event: events the samples stand for */
} est_image;

typedef struct est_set {
    char *db;
    char epoch[PROFDB_EPOCH_MAX];  /* "" when every epoch was summed */
    bool all_epochs;
    size_t nevents;
    char **events;
    uint64_t *totals;            /* per event, over every image */
    uint64_t *period_sums;
    size_t nimages;
    est_image *images;           /* by key; the unknown profile among them */
} est_set;

/* Load a selection.  Events asked for but absent get zero counts (the
 * caller decides whether that is an error); with no events asked for, the
 * columns are every event present, "cycles" first and the rest by name,
 * leaving out per-process profiles ("cycles@pid-42"), whose samples the
 * image's own profile already holds.  A damaged profile fails the load
 * with a message naming its file. */
bool est_load(const est_selection *sel, est_set *out, est_error *err);
void est_free(est_set *s);

/* Column of an event, or -1. */
int est_event_index(const est_set *s, const char *event);
/* The counts (one per event) at an offset of an image, or NULL when it has
 * no samples there. */
const uint64_t *est_counts_at(const est_image *im, uint64_t offset);
/* Indices [*first, *last) of the sampled offsets in [lo, hi). */
void est_offsets_in(const est_image *im, uint64_t lo, uint64_t hi, size_t *first, size_t *last);
/* A mean sampling period (0 when unknown). */
double est_mean_period(uint64_t period_sum, uint64_t samples);

/* The procedure of an offset in a read image: its name and [start, end),
 * or a section pseudo-name ("[.plt]", EST_NO_SECTION_NAME) written into buf
 * with start = end = 0.  Returns the name. */
const char *est_procedure_at(const image *img, uint64_t offset, char *buf, size_t size,
                             uint64_t *start, uint64_t *end);
/* [start, end) of a function symbol: its size, or for a size-0 symbol up to
 * the next function or the end of its section. */
void est_function_extent(const image *img, const image_symbol *sym, uint64_t *start,
                         uint64_t *end);

/* One row of a per-procedure or per-image report. */
typedef struct est_row {
    size_t image;          /* index in set->images */
    char *name;            /* procedure or pseudo-name; NULL in per-image rows */
    uint64_t start, end;   /* the procedure's addresses; 0, 0 for pseudo-rows */
    uint64_t *counts;      /* per event */
} est_row;

/* Samples per procedure: one row per procedure with samples in every read
 * image, per section pseudo-name, one EST_NOT_READ_NAME row per image not
 * read and one EST_UNKNOWN_NAME row for the unknown profile. */
bool est_procedures(const est_set *s, est_row **rows, size_t *n, est_error *err);
/* Samples per image: one row per image with samples. */
bool est_images(const est_set *s, est_row **rows, size_t *n, est_error *err);
/* Most samples of event `by` first, then of the other events in column
 * order, then by image path and name, so the order is always the same. */
void est_rows_sort(const est_set *s, est_row *rows, size_t n, size_t by);
void est_rows_free(est_row *rows, size_t n);

#endif
