/*
 * profdb/values.c: value profiles: their bytes, merging one into the
 * database, and reading them back merged (see values.h; the format is in
 * docs/profile-format.md "Value profiles").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/le.h"
#include "profdb/internal.h"
#include "profdb/values.h"

#define MAGIC "cpovals\n"
#define HDR PD_KIND_HEADER
#define LIST_HDR 40u
#define VALUE_SIZE HOTLIST_VALUE_BYTES

static const char *const kinds[] = { NULL, "result", "address", "latency", "target" };

const char *profdb_vkind_name(int kind)
{
    return kind >= PROFDB_VK_RESULT && kind <= PROFDB_VK_TARGET ? kinds[kind] : NULL;
}

int profdb_vkind_by_name(const char *name)
{
    for (int k = PROFDB_VK_RESULT; k <= PROFDB_VK_TARGET; k++)
        if (!strcmp(kinds[k], name))
            return k;
    return 0;
}

static int cmp_list(const void *a, const void *b)
{
    const profdb_vlist *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static size_t decode_list(const uint8_t *p, size_t avail, void *to, const char **why);

static void merge_list(void *into, const void *also)
{
    hotlist_merge(&((profdb_vlist *)into)->h, &((const profdb_vlist *)also)->h);
}

static const char *check_list(const void *r)
{
    const profdb_vlist *l = r;
    return !profdb_vkind_name(l->kind) ? "an unknown kind" : hotlist_check(&l->h);
}

static uint64_t offset_of(const void *r)
{
    return ((const profdb_vlist *)r)->offset;
}

static bool encode(const void *v, size_t n, uint8_t **data, size_t *size, profdb_error *err)
{
    return profdb_values_encode(v, n, data, size, err);
}

static const pd_kind kind = {
    .magic = MAGIC, .version = PROFDB_VALUES_VERSION, .max = PROFDB_VALUES_MAX, .min_bytes = LIST_HDR,
    .suffix = PROFDB_VALUES_SUFFIX, .what = "value profile", .item = "list", .order = "not in (offset, kind) order",
    .size = sizeof(profdb_vlist), .decode = decode_list, .encode = encode, .cmp = cmp_list,
    .merge = merge_list, .check = check_list, .offset_of = offset_of,
};

bool profdb_values_encode(const profdb_vlist *v, size_t n, uint8_t **data, size_t *size, profdb_error *err)
{
    size_t len = HDR;
    for (size_t i = 0; i < n; i++) {
        if (i && cmp_list(&v[i - 1], &v[i]) >= 0)
            return pd_fail(err, PROFDB_EINVAL, "value lists not sorted by (offset, kind) or repeated");
        if (!profdb_vkind_name(v[i].kind) || hotlist_check(&v[i].h))
            return pd_fail(err, PROFDB_EINVAL, "value list at offset 0x%llx: bad kind or hot list",
                           (unsigned long long)v[i].offset);
        len += LIST_HDR + (size_t)v[i].h.n * VALUE_SIZE;
    }
    uint8_t *d = calloc(1, len);
    if (!d)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    uint8_t *p = d + HDR;
    for (size_t i = 0; i < n; i++) {
        const hotlist *h = &v[i].h;
        uint64_t tau;
        memcpy(&tau, &h->tau, sizeof tau);
        le_put64(p, v[i].offset);
        p[8] = (uint8_t)v[i].kind;
        p[9] = (uint8_t)h->n;
        le_put64(p + 16, h->samples);
        le_put64(p + 24, tau);
        le_put64(p + 32, h->rng);
        hotlist_put_values(p + LIST_HDR, h);
        p += LIST_HDR + (size_t)h->n * VALUE_SIZE;
    }
    pd_kind_seal(&kind, d, len, n);
    *data = d;
    *size = len;
    return true;
}

/* One list at p (avail bytes left): how many bytes it took, 0 if bad. */
static size_t decode_list(const uint8_t *p, size_t avail, void *to, const char **why)
{
    profdb_vlist *out = to;
    if (avail < LIST_HDR)
        return *why = "a list cut short", 0;
    memset(out, 0, sizeof *out);
    out->offset = le_get64(p);
    out->kind = p[8];
    out->h.n = p[9];
    out->h.samples = le_get64(p + 16);
    uint64_t tau = le_get64(p + 24);
    memcpy(&out->h.tau, &tau, sizeof tau);
    out->h.rng = le_get64(p + 32);
    if (le_get16(p + 10) || le_get32(p + 12))
        return *why = "reserved bytes not zero", 0;
    if (!profdb_vkind_name(out->kind))
        return *why = "an unknown kind", 0;
    if (out->h.n > HOTLIST_MAX)
        return *why = "more values than a hot list holds", 0;
    size_t len = LIST_HDR + (size_t)out->h.n * VALUE_SIZE;
    if (avail < len)
        return *why = "a list cut short", 0;
    if ((*why = hotlist_get_values(p + LIST_HDR, &out->h)) || (*why = hotlist_check(&out->h)))
        return 0;
    return len;
}

bool profdb_values_decode(const void *data, size_t size, const char *name, profdb_vlist **v, size_t *n,
                          profdb_error *err)
{
    return pd_kind_decode(&kind, data, size, name, (void **)v, n, err);
}

bool profdb_values_merge(profdb *db, const char *host, const char *key, const profdb_vlist *v, size_t n,
                         profdb_error *err)
{
    return pd_kind_merge(db, &kind, host, key, v, n, err);
}

bool profdb_values_sum(profdb *db, const char *epoch, const char *host, const char *key, profdb_vlist **v,
                       size_t *n, profdb_error *err)
{
    return pd_kind_sum(db, &kind, epoch, host, key, (void **)v, n, err);
}
