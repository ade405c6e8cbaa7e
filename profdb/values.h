/*
 * profdb/values.h: value profiles, kept beside the PC profiles
 * (docs/profile-format.md "Value profiles").
 *
 *   DB/<epoch>/<host>/<key>.values     one per image per host per epoch
 *
 * A value profile holds, per (image offset, kind), a hot list
 * (profdb/hotlist.h) and the number of value samples behind it.  Like the
 * PC profiles, each host writes its own file, updates are whole-file
 * rewrites renamed into place, and readers merge over hosts and epochs;
 * here merging is the hot lists' merge, not addition.
 */
#ifndef PROFDB_VALUES_H
#define PROFDB_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profdb/hotlist.h"
#include "profdb/profdb.h"

#define PROFDB_VALUES_VERSION 1
#define PROFDB_VALUES_SUFFIX ".values"
#define PROFDB_VALUES_MAX (1u << 22)   /* lists per file */

/* What the values are: the kinds of the driver's value records. */
enum { PROFDB_VK_RESULT = 1, PROFDB_VK_ADDRESS = 2, PROFDB_VK_LATENCY = 3, PROFDB_VK_TARGET = 4 };
const char *profdb_vkind_name(int kind);    /* "result", ...; NULL if none */
int profdb_vkind_by_name(const char *name); /* 0 if none */

typedef struct profdb_vlist {
    uint64_t offset;          /* image offset of the instruction */
    int kind;                 /* PROFDB_VK_* */
    hotlist h;
} profdb_vlist;

/* One file's bytes: lists sorted by (offset, kind), each pair once. */
bool profdb_values_encode(const profdb_vlist *v, size_t n, uint8_t **data, size_t *size, profdb_error *err);
bool profdb_values_decode(const void *data, size_t size, const char *name, profdb_vlist **v, size_t *n,
                          profdb_error *err);

/* Merge lists (any order, repeats allowed) into key's value profile of
 * this host (NULL: this machine's name) in the current epoch. */
bool profdb_values_merge(profdb *db, const char *host, const char *key, const profdb_vlist *v, size_t n,
                         profdb_error *err);

/* key's value profiles merged over the named epoch (NULL: all) and host
 * (NULL: all), sorted by (offset, kind).  None at all is PROFDB_ENOENT. */
bool profdb_values_sum(profdb *db, const char *epoch, const char *host, const char *key, profdb_vlist **v,
                       size_t *n, profdb_error *err);

#endif
