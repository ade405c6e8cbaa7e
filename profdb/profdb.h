/*
 * profdb/profdb.h: the on-disk profile database (docs/profdb.md, file format
 * in docs/profile-format.md).
 *
 *   DB/current                          name of the current epoch
 *   DB/<epoch>/<host>/<key>.<event>.prof  one profile per image x event x host
 *
 * An epoch is named by its start time in UTC (20261120T231500Z, then
 * 20261120T231500Z-001 for a second one started in the same second).  A
 * profile is keyed by the image's build-id in lowercase hex; an image
 * without one is keyed by a hash of its path, and samples the daemon could
 * not map to any image go to the key "unknown".  Each host writes only its
 * own directory, so daemons sharing one database never write the same file;
 * readers sum over hosts.  Every update writes a whole new file and renames
 * it over the old one, so readers see either the old or the new profile.
 *
 * Every failure comes back as a code plus a message "FILE: what is wrong".
 */
#ifndef PROFDB_PROFDB_H
#define PROFDB_PROFDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFDB_VERSION      1          /* file format written and read */
#define PROFDB_UNKNOWN_KEY  "unknown"
#define PROFDB_UNKNOWN_PATH "[unknown]"  /* the path of the unknown profile */

/* Not a sampled event: cpod counts every process that ends in the profile
 * of the program it ran, at an offset saying how it ended.  Work counted in
 * runs, and crashes, come from here (docs/cpod.md). */
#define PROFDB_EXITS_EVENT "exits"
enum { PROFDB_EXIT_OK = 0, PROFDB_EXIT_FAILED = 1, PROFDB_EXIT_SIGNAL = 2 };
#define PROFDB_MAX_BUILD_ID 64
#define PROFDB_MAX_PATHS    8          /* names kept per profile, newest first */
#define PROFDB_MAX_PATH     4096       /* bytes in one image path */
#define PROFDB_MAX_NAME     255        /* bytes in an event or host name */
#define PROFDB_MAX_ENTRIES  (1u << 26) /* (offset, count) pairs per profile */
#define PROFDB_KEY_MAX      (2 * PROFDB_MAX_BUILD_ID + 1)
#define PROFDB_EPOCH_MAX    32         /* bytes for an epoch name and its NUL */

typedef enum {
    PROFDB_OK = 0,
    PROFDB_EIO,        /* a system call failed (errno text in the message) */
    PROFDB_ENOENT,     /* no such database, epoch or profile */
    PROFDB_EMAGIC,     /* not a profile file */
    PROFDB_EVERSION,   /* a format version this build does not read */
    PROFDB_ETRUNC,     /* the file ends early */
    PROFDB_ECHECKSUM,  /* header or payload checksum mismatch */
    PROFDB_ECORRUPT,   /* checksums match but the contents are inconsistent */
    PROFDB_EINVAL,     /* a bad argument (empty event, bad host name, ...) */
    PROFDB_EOVERFLOW,  /* a count would exceed 2^64 - 1 */
    PROFDB_ENOMEM
} profdb_err;

typedef struct profdb_error {
    profdb_err code;
    int sys_errno;     /* errno for PROFDB_EIO, else 0 */
    char msg[640];
} profdb_error;

typedef struct profdb_entry {
    uint64_t offset;   /* image offset (raw PC in the unknown profile) */
    uint64_t count;    /* samples, at least 1 */
} profdb_entry;

/* One profile's header as stored (plus where it was found). */
typedef struct profdb_info {
    char *file;        /* the file it came from (NULL when built in memory) */
    char epoch[PROFDB_EPOCH_MAX];
    char key[PROFDB_KEY_MAX];
    char *event;
    char *host;
    char *paths[PROFDB_MAX_PATHS];   /* paths[0] the latest name */
    unsigned npaths;
    uint8_t build_id[PROFDB_MAX_BUILD_ID];
    size_t build_id_len;
    uint64_t total;        /* sum of the counts */
    uint64_t nentries;
    uint64_t period_sum;   /* sum over samples of their sampling period:
                              events represented; mean = period_sum / total */
    int64_t created, updated;      /* Unix seconds */
    uint64_t payload_len, encoded_len;  /* compressed and uncompressed bytes */
    uint16_t version;
} profdb_info;

typedef struct profdb_profile {
    profdb_info info;
    size_t n;
    profdb_entry *e;   /* sorted by offset, offsets distinct */
} profdb_profile;

double profdb_mean_period(const profdb_info *info);
void profdb_info_free(profdb_info *info);
void profdb_profile_free(profdb_profile *p);

/* ---- one file -------------------------------------------------------- */

/* Decode a whole profile file from memory; `name` heads error messages. */
bool profdb_decode(const void *data, size_t size, const char *name,
                   profdb_profile *out, profdb_error *err);
/* Decode only the header (payload length is checked against size, its
 * contents are not). */
bool profdb_decode_header(const void *data, size_t size, const char *name,
                          profdb_info *out, profdb_error *err);
/* Encode p (entries sorted, distinct, counts > 0; info.total and
 * info.nentries are recomputed) into a malloc'd buffer.  level is the zstd
 * level, 0 for the default. */
bool profdb_encode(const profdb_profile *p, int level, uint8_t **data, size_t *size,
                   profdb_error *err);
/* Read and check one profile file. */
bool profdb_read_file(const char *path, profdb_profile *out, profdb_error *err);
bool profdb_read_header(const char *path, profdb_info *out, profdb_error *err);

/* The key of an image: build-id in hex, else "path-" and a hash of the
 * path, and "unknown" for PROFDB_UNKNOWN_PATH without a build-id. */
const char *profdb_key(const uint8_t *build_id, size_t len, const char *path,
                       char buf[PROFDB_KEY_MAX]);

/* ---- the database ---------------------------------------------------- */

typedef struct profdb profdb;

enum {
    PROFDB_CREATE   = 1 << 0,  /* create the directory if missing */
    PROFDB_TOLERANT = 1 << 1   /* readers skip bad files with a warning
                                  instead of failing */
};

profdb *profdb_open(const char *dir, unsigned flags, profdb_error *err);
void profdb_close(profdb *db);
const char *profdb_dir(const profdb *db);
/* Warnings (a file skipped, a corrupt profile set aside) go here; by
 * default they are printed to stderr. */
void profdb_set_warn(profdb *db, void (*warn)(void *ctx, const char *msg), void *ctx);

/* Epoch names, oldest first, as a NULL-terminated array freed with
 * profdb_strv_free. */
bool profdb_epochs(profdb *db, char ***names, size_t *n, profdb_error *err);
void profdb_strv_free(char **v);
/* The current epoch: the one the marker names, else the newest. */
bool profdb_current_epoch(profdb *db, char name[PROFDB_EPOCH_MAX], profdb_error *err);
/* Start a new epoch and make it current; its name in `name` if not NULL. */
bool profdb_new_epoch(profdb *db, char name[PROFDB_EPOCH_MAX], profdb_error *err);

/* Headers of every profile in an epoch (NULL: every epoch), sorted by
 * epoch, key, event, host.  Free with profdb_infos_free. */
bool profdb_list(profdb *db, const char *epoch, profdb_info **out, size_t *n,
                 profdb_error *err);
void profdb_infos_free(profdb_info *v, size_t n);

/* Sum every profile of (key, event) over the named epoch (NULL: all) and
 * host (NULL: all).  out->info carries the summed totals, the union of the
 * paths seen (latest first) and host "" when several hosts contributed.
 * *nfiles (if not NULL) gets the number of files summed; none is
 * PROFDB_ENOENT. */
bool profdb_sum(profdb *db, const char *epoch, const char *host, const char *key,
                const char *event, profdb_profile *out, size_t *nfiles, profdb_error *err);

/* What the database knows of an image, by key (build-id hex). */
typedef struct profdb_image {
    char key[PROFDB_KEY_MAX];
    char **paths;      /* every name seen, latest first, NULL-terminated */
    char **events;     /* every event with samples, sorted, NULL-terminated */
    uint64_t total;    /* samples over all events */
    int64_t last_seen; /* latest update, Unix seconds */
} profdb_image;
bool profdb_lookup(profdb *db, const char *key, profdb_image *out, profdb_error *err);
void profdb_image_free(profdb_image *img);

/* Samples per event over an epoch (NULL: all). */
typedef struct profdb_total {
    char *event;
    uint64_t total, period_sum;
    size_t nprofiles;
} profdb_total;
bool profdb_totals(profdb *db, const char *epoch, profdb_total **out, size_t *n,
                   profdb_error *err);
void profdb_totals_free(profdb_total *v, size_t n);

/* ---- writing (the daemon) -------------------------------------------- */

typedef struct profdb_input {
    const char *path;            /* image path; PROFDB_UNKNOWN_PATH for the
                                    unknown profile */
    const uint8_t *build_id;
    size_t build_id_len;         /* 0: none */
    const char *event;           /* "cycles", "imiss", ... */
    double mean_period;          /* mean sampling period of these samples */
    const char *host;            /* NULL: this machine's host name */
    const profdb_entry *samples; /* any order, repeats allowed */
    size_t nsamples;
} profdb_input;

/* Merge profiles into the current epoch (creating a first epoch if there is
 * none).  Returns how many inputs are now stored durably: all of them, or
 * fewer with *err saying what went wrong with the next one (later inputs
 * are not attempted).  A failed merge leaves the stored profile as it was. */
size_t profdb_merge(profdb *db, const profdb_input *in, size_t n, profdb_error *err);

#endif
