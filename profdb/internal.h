/* profdb/internal.h: what the profdb files share and nobody else sees. */
#ifndef PROFDB_INTERNAL_H
#define PROFDB_INTERNAL_H

#include <stdarg.h>

#include "profdb/profdb.h"

struct profdb {
    char *dir;
    unsigned flags;
    int level;
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
};

#define PROFDB_MARKER     "current"
#define PROFDB_SUFFIX     ".prof"
#define PROFDB_LOCKFILE   ".lock"
#define PROFDB_HDR_FIXED  82     /* bytes before the variable header fields */
#define PROFDB_HDR_MAX    65536

/* error.c */
bool pd_fail(profdb_error *err, profdb_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool pd_fail_sys(profdb_error *err, const char *path, const char *what);
void pd_warn(profdb *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *pd_strdup(const char *s, profdb_error *err);
char *pd_join(const char *a, const char *b, const char *c, profdb_error *err);

/* names.c: escaping and parsing the names of directories and files */
bool pd_check_name(const char *s, const char *what, profdb_error *err);
void pd_escape(const char *s, bool dot_ok, char *out, size_t size);
bool pd_epoch_valid(const char *name);
int pd_epoch_cmp(const char *a, const char *b);
bool pd_profile_name(const char *key, const char *event, char *out, size_t size);
bool pd_key_valid(const char *key);
bool pd_hostname(char *buf, size_t size, profdb_error *err);

/* format.c: the header alone, from the first `avail` bytes of a file of
 * `fsize` bytes */
bool pd_decode_header(const uint8_t *d, size_t avail, uint64_t fsize, const char *name,
                      profdb_info *h, profdb_error *err);

/* file.c: whole-file I/O and atomic replacement */
bool pd_slurp(const char *path, uint8_t **data, size_t *size, profdb_error *err);
bool pd_slurp_head(const char *path, size_t max, uint8_t **data, size_t *got,
                   uint64_t *file_size, profdb_error *err);
bool pd_write_atomic(const char *dir, const char *name, const void *data, size_t size,
                     bool sync_dir, profdb_error *err);
bool pd_fsync_dir(const char *dir, profdb_error *err);
bool pd_mkdir(const char *path, bool sync_parent, profdb_error *err);

/* read.c, for values.c */
bool pd_walk_named(profdb *db, const char *epoch, const char *host, const char *fname,
                   bool (*fn)(profdb *db, const char *epoch, const char *file, void *ctx, profdb_error *err),
                   void *ctx, profdb_error *err);

/* merge.c / read.c helpers shared with epoch.c */
int pd_lock_dir(profdb *db, const char *dir, const char *risk, profdb_error *err);
/* A host's directory in the epoch directory edir, made when missing, and
 * locked (pd_lock_dir): the descriptor, with *hostdir (the caller frees
 * it); -1 on error. */
int pd_lock_host(profdb *db, const char *edir, const char *host, char **hostdir, profdb_error *err);
bool pd_current_or_create(profdb *db, char name[PROFDB_EPOCH_MAX], profdb_error *err);
/* A batch of n inputs merged into the current epoch (profile and stack
 * merges): input i is checked, then merged under its host's lock (host
 * NULL: this machine's), taken once per run of inputs of one host, with
 * locked (NULL: nothing) called on each host directory as its lock is
 * taken.  Stops at the first failure; returns how many were merged. */
typedef struct pd_batch {
    bool (*check)(const void *ctx, size_t i, profdb_error *err);
    const char *(*host)(const void *ctx, size_t i);
    bool (*merge)(profdb *db, const void *ctx, size_t i, const char *hostdir, const char *host,
                  profdb_error *err);
    void (*locked)(const char *hostdir);
} pd_batch;
size_t pd_merge_batch(profdb *db, size_t n, const pd_batch *b, const void *ctx, profdb_error *err);
/* Rewrite key+suffix of host (NULL: this machine's name) in the current
 * epoch with what update makes of its bytes (old NULL when there is no
 * file yet), under the host directory's lock, renamed into place.  A
 * file update finds damaged (PROFDB_EMAGIC, ETRUNC, ECHECKSUM, ECORRUPT)
 * is set aside (pd_set_aside) and update runs again on nothing; one that
 * cannot be read at all stays, and the call fails. */
typedef bool (*pd_update_fn)(void *ctx, const char *path, const uint8_t *old, size_t oldn, uint8_t **out,
                             size_t *outn, profdb_error *err);
bool pd_update_host_file(profdb *db, const char *host, const char *key, const char *suffix, pd_update_fn update,
                         void *ctx, profdb_error *err);
/* A damaged file at path renamed to path.corrupt-TIME, with a warning
 * giving why: one left there would block every later merge into it. */
bool pd_set_aside(profdb *db, const char *path, const profdb_error *why, profdb_error *err);

/* records.c: a per-instruction profile kind (value profiles, ProfileMe
 * profiles): PD_KIND_HEADER bytes (magic, version, reserved word, record
 * count, payload length, payload FNV-1a) then records sorted by cmp, each
 * key once.  decode reads one record of at most avail bytes into out
 * (the bytes it took, 0 with *why); check says what is wrong with a
 * record given to a merge (NULL: nothing); merge adds one record of the
 * same key into another. */
#define PD_KIND_HEADER 40u
typedef struct pd_kind {
    const char *magic;          /* 8 bytes */
    uint32_t version;
    uint64_t max;               /* records per file */
    size_t min_bytes;           /* the fewest bytes a record takes in a file */
    const char *suffix;         /* of the file name: KEY + suffix */
    const char *what, *item;    /* "value profile", "list": for messages */
    const char *order;          /* what a record out of order is not in */
    size_t size;                /* of a record in memory */
    size_t (*decode)(const uint8_t *p, size_t avail, void *out, const char **why);
    bool (*encode)(const void *v, size_t n, uint8_t **data, size_t *size, profdb_error *err);
    int (*cmp)(const void *a, const void *b);
    void (*merge)(void *into, const void *also);
    const char *(*check)(const void *r);
    uint64_t (*offset_of)(const void *r);
} pd_kind;
/* The header of an encoded file of len bytes holding n records. */
void pd_kind_seal(const pd_kind *k, uint8_t *d, size_t len, uint64_t n);
bool pd_kind_decode(const pd_kind *k, const void *data, size_t size, const char *name, void **v, size_t *n,
                    profdb_error *err);
/* a and b sorted, each key once: their union into *out, records of the same key merged. */
bool pd_kind_union(const pd_kind *k, const void *a, size_t na, const void *b, size_t nb, void **out, size_t *n,
                   profdb_error *err);
/* Records (any order, repeats allowed) into key's file of host (NULL:
 * this machine's name) in the current epoch. */
bool pd_kind_merge(profdb *db, const pd_kind *k, const char *host, const char *key, const void *v, size_t n,
                   profdb_error *err);
/* key's files of the epoch (NULL: all) and host (NULL: all) summed. */
bool pd_kind_sum(profdb *db, const pd_kind *k, const char *epoch, const char *host, const char *key, void **v,
                 size_t *n, profdb_error *err);

/* stacks.c: what the stack files share */
struct profdb_stacks;
struct profdb_stack;
int pd_stack_cmp(const void *a, const void *b);     /* the canonical order */
/* Append images and stacks (frames indexing those images) to a; a is not
 * normalised afterwards. */
bool pd_stacks_append(struct profdb_stacks *a, size_t nimages, const char *const *keys,
                      const char *const *paths, const struct profdb_stack *s, size_t n,
                      profdb_error *err);
bool pd_stacks_add(struct profdb_stacks *a, const struct profdb_stacks *b, profdb_error *err);

#endif
