/*
 * profdb/records.c: what the per-instruction profile kinds beside the PC
 * profiles (value profiles, ProfileMe profiles) share: a 40-byte header
 * (magic, version, a reserved word, the record count, the payload's
 * length and FNV-1a checksum) before records sorted by a key, each key
 * once; merging records into a host's file; summing files over hosts and
 * epochs.  Each kind describes its records with a pd_kind (internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/le.h"
#include "profdb/internal.h"

#define HDR PD_KIND_HEADER

void pd_kind_seal(const pd_kind *k, uint8_t *d, size_t len, uint64_t n)
{
    memcpy(d, k->magic, 8);
    le_put32(d + 8, k->version);
    le_put32(d + 12, 0);
    le_put64(d + 16, n);
    le_put64(d + 24, len - HDR);
    le_put64(d + 32, fnv1a(FNV1A_INIT, d + HDR, len - HDR));
}

/* The header of data (size bytes): the record count, or false. */
static bool check_header(const pd_kind *k, const uint8_t *d, size_t size, const char *name, uint64_t *count,
                         profdb_error *err)
{
    if (size < 8 || memcmp(d, k->magic, 8))
        return pd_fail(err, PROFDB_EMAGIC, "%s: not a %s", name, k->what);
    if (size < HDR)
        return pd_fail(err, PROFDB_ETRUNC, "%s: header cut short (%zu bytes)", name, size);
    uint32_t version = le_get32(d + 8);
    if (version != k->version)
        return pd_fail(err, PROFDB_EVERSION, "%s: %s version %u, this build reads %u", name, k->what, version,
                       k->version);
    uint64_t plen = le_get64(d + 24);
    *count = le_get64(d + 16);
    if (le_get32(d + 12))
        return pd_fail(err, PROFDB_ECORRUPT, "%s: reserved header bytes not zero", name);
    if (plen != size - HDR)
        return pd_fail(err, plen > size - HDR ? PROFDB_ETRUNC : PROFDB_ECORRUPT,
                       "%s: payload of %llu bytes, file has %zu after the header", name, (unsigned long long)plen,
                       size - HDR);
    if (fnv1a(FNV1A_INIT, d + HDR, plen) != le_get64(d + 32))
        return pd_fail(err, PROFDB_ECHECKSUM, "%s: payload checksum mismatch", name);
    if (*count > k->max || *count > plen / k->min_bytes)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %llu %ss cannot fit in %llu bytes", name,
                       (unsigned long long)*count, k->item, (unsigned long long)plen);
    return true;
}

bool pd_kind_decode(const pd_kind *k, const void *data, size_t size, const char *name, void **v, size_t *n,
                    profdb_error *err)
{
    const uint8_t *d = data;
    uint64_t count = 0;
    *v = NULL;
    *n = 0;
    if (!check_header(k, d, size, name, &count, err))
        return false;
    uint8_t *out = count ? malloc((size_t)count * k->size) : NULL;
    if (count && !out)
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
    size_t at = HDR;
    for (uint64_t i = 0; i < count; i++) {
        const char *why = NULL;
        void *r = out + i * k->size;
        size_t used = k->decode(d + at, size - at, r, &why);
        if (!used || (i && k->cmp(out + (i - 1) * k->size, r) >= 0)) {
            pd_fail(err, PROFDB_ECORRUPT, "%s: %s %llu at byte %zu: %s", name, k->item, (unsigned long long)i, at,
                    used ? k->order : why);
            free(out);
            return false;
        }
        at += used;
    }
    if (at != size) {
        free(out);
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %zu bytes after the last %s", name, size - at, k->item);
    }
    *v = out;
    *n = (size_t)count;
    return true;
}

bool pd_kind_union(const pd_kind *k, const void *a, size_t na, const void *b, size_t nb, void **out, size_t *n,
                   profdb_error *err)
{
    const uint8_t *x = a, *y = b;
    uint8_t *u = malloc((na + nb + 1) * k->size);
    if (!u)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    size_t i = 0, j = 0, m = 0;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : k->cmp(x + i * k->size, y + j * k->size);
        if (c <= 0)
            memcpy(u + m * k->size, x + i++ * k->size, k->size);
        else
            memcpy(u + m * k->size, y + j++ * k->size, k->size);
        if (!c)
            k->merge(u + m * k->size, y + j++ * k->size);
        m++;
    }
    *out = u;
    *n = m;
    return true;
}

/* The records sorted, repeats merged, each checked. */
static bool normalise(const pd_kind *k, const void *in, size_t n, void **out, size_t *nout, profdb_error *err)
{
    uint8_t *v = malloc((n + 1) * k->size);
    if (!v)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    memcpy(v, in, n * k->size);
    qsort(v, n, k->size, k->cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *why = k->check(v + i * k->size);
        if (why) {
            unsigned long long at = k->offset_of(v + i * k->size);
            free(v);
            return pd_fail(err, PROFDB_EINVAL, "%s %s at offset 0x%llx: %s", k->what, k->item, at, why);
        }
        if (m && !k->cmp(v + (m - 1) * k->size, v + i * k->size))
            k->merge(v + (m - 1) * k->size, v + i * k->size);
        else
            memmove(v + m++ * k->size, v + i * k->size, k->size);
    }
    *out = v;
    *nout = m;
    return true;
}

typedef struct update_ctx {
    const pd_kind *k;
    void *in;
    size_t nin;
} update_ctx;

static bool update(void *ctx, const char *path, const uint8_t *old, size_t oldn, uint8_t **out, size_t *outn,
                   profdb_error *err)
{
    update_ctx *u = ctx;
    void *ov = NULL, *all = NULL;
    size_t nold = 0, nall = 0;
    bool ok = (!old || pd_kind_decode(u->k, old, oldn, path, &ov, &nold, err)) &&
              pd_kind_union(u->k, ov, nold, u->in, u->nin, &all, &nall, err) &&
              u->k->encode(all, nall, out, outn, err);
    free(ov);
    free(all);
    return ok;
}

bool pd_kind_merge(profdb *db, const pd_kind *k, const char *host, const char *key, const void *v, size_t n,
                   profdb_error *err)
{
    update_ctx u = { k, NULL, 0 };
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    if (!normalise(k, v, n, &u.in, &u.nin, err))
        return false;
    bool ok = pd_update_host_file(db, host, key, k->suffix, update, &u, err);
    free(u.in);
    return ok;
}

typedef struct sumctx {
    const pd_kind *k;
    void *v;
    size_t n, files;
} sumctx;

static bool visit(profdb *db, const char *epoch, const char *file, void *ctx, profdb_error *err)
{
    sumctx *c = ctx;
    void *v = NULL, *u;
    uint8_t *d;
    size_t n, nu, size;
    (void)db;
    (void)epoch;
    if (!pd_slurp(file, &d, &size, err))
        return false;
    bool ok = pd_kind_decode(c->k, d, size, file, &v, &n, err) && pd_kind_union(c->k, c->v, c->n, v, n, &u, &nu, err);
    free(d);
    free(v);
    if (ok) {
        free(c->v);
        c->v = u;
        c->n = nu;
        c->files++;
    }
    return ok;
}

bool pd_kind_sum(profdb *db, const pd_kind *k, const char *epoch, const char *host, const char *key, void **v,
                 size_t *n, profdb_error *err)
{
    *v = NULL;
    *n = 0;
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    char fname[PROFDB_KEY_MAX + 16];
    snprintf(fname, sizeof fname, "%s%s", key, k->suffix);
    sumctx c = { k, NULL, 0, 0 };
    if (!pd_walk_named(db, epoch, host, fname, visit, &c, err)) {
        free(c.v);
        return false;
    }
    if (!c.files)
        return pd_fail(err, PROFDB_ENOENT, "%s: no %s for %s", profdb_dir(db), k->what, key);
    *v = c.v;
    *n = c.n;
    return true;
}
