/*
 * profdb/stacks.h: stack profiles, the calling contexts of samples
 * (profdb/stacks*.c; the file format is docs/profile-format.md "Stack
 * profiles").
 *
 * One file per (epoch, host, image set, event): the images a process had
 * mapped, and every distinct stack its samples had, stored once with a
 * count.  A frame is (image, offset): an index into the file's image
 * table, keyed like profiles (build-id, path hash, or "unknown" with the
 * raw pc as offset), so stacks survive relocation and can be mapped
 * through address maps.  Frames are leaf first: the sampled pc's offset,
 * then each caller's call instruction's.  Merging adds, atomically, as
 * profdb_merge does for profiles.
 */
#ifndef PROFDB_STACKS_H
#define PROFDB_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profdb/profdb.h"

#define PROFDB_STACKS_VERSION    1
#define PROFDB_STACK_MAX_FRAMES  1024
#define PROFDB_STACK_MAX_IMAGES  4096
#define PROFDB_STACKS_SUFFIX     ".stk"

typedef struct profdb_frame {
    uint32_t image;            /* index into the image table */
    uint64_t offset;
} profdb_frame;

typedef struct profdb_stack {
    uint64_t count;            /* samples with this stack, at least 1 */
    uint32_t end;              /* how the walk ended (axp's AXP_STK_*: 0 complete) */
    uint32_t n;                /* frames, 1..PROFDB_STACK_MAX_FRAMES */
    const profdb_frame *f;     /* leaf first */
} profdb_stack;

typedef struct profdb_stack_image {
    char *key;                 /* profdb_key's */
    char *path;                /* the image's path, PROFDB_UNKNOWN_PATH for "unknown" */
} profdb_stack_image;

typedef struct profdb_stacks {
    char *file;                /* where it came from, NULL in memory */
    char *event, *host;
    int64_t created, updated;
    uint64_t total;            /* sum of the counts */
    size_t nimages;
    profdb_stack_image *img;   /* sorted by key, keys distinct */
    size_t n;
    profdb_stack *s;           /* in the canonical order, all distinct */
    profdb_frame *frames;      /* storage the stacks point into */
    size_t nframes;            /* its length (at least the stacks' frames) */
} profdb_stacks;

void profdb_stacks_free(profdb_stacks *s);

/* One file in memory.  decode checks everything (docs/profile-format.md);
 * encode wants s in canonical form (profdb_stacks_normalise). */
bool profdb_stacks_decode(const void *data, size_t size, const char *name, profdb_stacks *out,
                          profdb_error *err);
bool profdb_stacks_encode(const profdb_stacks *s, uint8_t **data, size_t *size, profdb_error *err);
bool profdb_stacks_read_file(const char *path, profdb_stacks *out, profdb_error *err);
/* Sort the image table by key and the stacks into the canonical order,
 * adding up equal stacks (duplicate keys are merged, frames remapped). */
bool profdb_stacks_normalise(profdb_stacks *s, profdb_error *err);

/* What a daemon hands over: an image table (keys need not be sorted, nor
 * stacks distinct) and stacks whose frames index it.  host NULL: this
 * host.  Returns how many inputs were stored; err says why the next one
 * was not (as profdb_merge). */
typedef struct profdb_stacks_input {
    const char *event, *host;
    size_t nimages;
    const char *const *keys, *const *paths;
    size_t n;
    const profdb_stack *s;
} profdb_stacks_input;
size_t profdb_stacks_merge(profdb *db, const profdb_stacks_input *in, size_t n, profdb_error *err);
/* The total of the file that stacks of event and this image set (keys in
 * strcmp order) merge into, in epoch for host (NULL: this host).  None is
 * PROFDB_ENOENT; a damaged or unreadable one gives the reader's error.
 * (cpod notes it before a merge, to tell afterwards whether it landed.) */
bool profdb_stacks_total(profdb *db, const char *epoch, const char *host, const char *event, size_t nimages,
                         const char *const *keys, uint64_t *total, profdb_error *err);

/* The aggregated stacks of a selection: epoch (NULL: every epoch), host
 * (NULL: every host), event (NULL: every event), image key (NULL: any;
 * else only files whose image set holds that image), all added into one
 * profdb_stacks.  No matching file gives an empty result, not an error. */
bool profdb_stacks_select(profdb *db, const char *epoch, const char *host, const char *event,
                          const char *key, profdb_stacks *out, profdb_error *err);

#endif
