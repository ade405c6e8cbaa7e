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
#define HDR 40u
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
    memcpy(d, MAGIC, 8);
    le_put32(d + 8, PROFDB_VALUES_VERSION);
    le_put64(d + 16, n);
    le_put64(d + 24, len - HDR);
    le_put64(d + 32, fnv1a(FNV1A_INIT, d + HDR, len - HDR));
    *data = d;
    *size = len;
    return true;
}

/* One list at p (avail bytes left): how many bytes it took, 0 if bad. */
static size_t decode_list(const uint8_t *p, size_t avail, profdb_vlist *out, const char **why)
{
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
    const uint8_t *d = data;
    *v = NULL;
    *n = 0;
    if (size < 8 || memcmp(d, MAGIC, 8))
        return pd_fail(err, PROFDB_EMAGIC, "%s: not a value profile", name);
    if (size < HDR)
        return pd_fail(err, PROFDB_ETRUNC, "%s: header cut short (%zu bytes)", name, size);
    uint32_t version = le_get32(d + 8);
    if (version != PROFDB_VALUES_VERSION)
        return pd_fail(err, PROFDB_EVERSION, "%s: value profile version %u, this build reads %d", name, version,
                       PROFDB_VALUES_VERSION);
    uint64_t count = le_get64(d + 16), plen = le_get64(d + 24);
    if (le_get32(d + 12))
        return pd_fail(err, PROFDB_ECORRUPT, "%s: reserved header bytes not zero", name);
    if (plen != size - HDR)
        return pd_fail(err, plen > size - HDR ? PROFDB_ETRUNC : PROFDB_ECORRUPT,
                       "%s: payload of %llu bytes, file has %zu after the header", name, (unsigned long long)plen,
                       size - HDR);
    if (fnv1a(FNV1A_INIT, d + HDR, plen) != le_get64(d + 32))
        return pd_fail(err, PROFDB_ECHECKSUM, "%s: payload checksum mismatch", name);
    if (count > PROFDB_VALUES_MAX || count > plen / LIST_HDR)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %llu lists cannot fit in %llu bytes", name,
                       (unsigned long long)count, (unsigned long long)plen);
    profdb_vlist *out = count ? malloc((size_t)count * sizeof *out) : NULL;
    if (count && !out)
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
    size_t at = HDR;
    for (uint64_t i = 0; i < count; i++) {
        const char *why = NULL;
        size_t used = decode_list(d + at, size - at, &out[i], &why);
        if (!used || (i && cmp_list(&out[i - 1], &out[i]) >= 0)) {
            pd_fail(err, PROFDB_ECORRUPT, "%s: list %llu at byte %zu: %s", name, (unsigned long long)i, at,
                    used ? "not in (offset, kind) order" : why);
            free(out);
            return false;
        }
        at += used;
    }
    if (at != size) {
        free(out);
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %zu bytes after the last list", name, size - at);
    }
    *v = out;
    *n = (size_t)count;
    return true;
}

/* a and b sorted, each pair once: their union into *out, lists of the
 * same pair merged. */
static bool union_lists(const profdb_vlist *a, size_t na, const profdb_vlist *b, size_t nb, profdb_vlist **out,
                        size_t *n, profdb_error *err)
{
    profdb_vlist *u = malloc((na + nb + 1) * sizeof *u);
    if (!u)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : cmp_list(&a[i], &b[j]);
        if (c < 0)
            u[k++] = a[i++];
        else if (c > 0)
            u[k++] = b[j++];
        else {
            u[k] = a[i++];
            hotlist_merge(&u[k++].h, &b[j++].h);
        }
    }
    *out = u;
    *n = k;
    return true;
}

/* The inputs sorted, repeats merged. */
static bool normalise(const profdb_vlist *in, size_t n, profdb_vlist **out, size_t *nout, profdb_error *err)
{
    profdb_vlist *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    memcpy(v, in, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_list);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!profdb_vkind_name(v[i].kind) || hotlist_check(&v[i].h)) {
            unsigned long long at = v[i].offset;
            free(v);
            return pd_fail(err, PROFDB_EINVAL, "value list at offset 0x%llx: bad kind or hot list", at);
        }
        if (k && !cmp_list(&v[k - 1], &v[i]))
            hotlist_merge(&v[k - 1].h, &v[i].h);
        else
            v[k++] = v[i];
    }
    *out = v;
    *nout = k;
    return true;
}

static bool read_file(const char *path, profdb_vlist **v, size_t *n, profdb_error *err)
{
    uint8_t *d;
    size_t size;
    if (!pd_slurp(path, &d, &size, err))
        return false;
    bool ok = profdb_values_decode(d, size, path, v, n, err);
    free(d);
    return ok;
}

typedef struct update_ctx {
    const profdb_vlist *in;
    size_t nin;
} update_ctx;

static bool update(void *ctx, const char *path, const uint8_t *old, size_t oldn, uint8_t **out, size_t *outn,
                   profdb_error *err)
{
    update_ctx *u = ctx;
    profdb_vlist *ov = NULL, *all = NULL;
    size_t nold = 0, nall = 0;
    bool ok = (!old || profdb_values_decode(old, oldn, path, &ov, &nold, err)) &&
              union_lists(ov, nold, u->in, u->nin, &all, &nall, err) &&
              profdb_values_encode(all, nall, out, outn, err);
    free(ov);
    free(all);
    return ok;
}

bool profdb_values_merge(profdb *db, const char *host, const char *key, const profdb_vlist *v, size_t n,
                         profdb_error *err)
{
    update_ctx u = { 0 };
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    if (!normalise(v, n, (profdb_vlist **)&u.in, &u.nin, err))
        return false;
    bool ok = pd_update_host_file(db, host, key, PROFDB_VALUES_SUFFIX, update, &u, err);
    free((void *)u.in);
    return ok;
}

typedef struct sumctx {
    profdb_vlist *v;
    size_t n, files;
} sumctx;

static bool visit(profdb *db, const char *epoch, const char *file, void *ctx, profdb_error *err)
{
    sumctx *c = ctx;
    profdb_vlist *v, *u;
    size_t n, nu;
    (void)db;
    (void)epoch;
    if (!read_file(file, &v, &n, err))
        return false;
    bool ok = union_lists(c->v, c->n, v, n, &u, &nu, err);
    free(v);
    if (ok) {
        free(c->v);
        c->v = u;
        c->n = nu;
        c->files++;
    }
    return ok;
}

bool profdb_values_sum(profdb *db, const char *epoch, const char *host, const char *key, profdb_vlist **v,
                       size_t *n, profdb_error *err)
{
    *v = NULL;
    *n = 0;
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    char fname[PROFDB_KEY_MAX + sizeof PROFDB_VALUES_SUFFIX];
    snprintf(fname, sizeof fname, "%s" PROFDB_VALUES_SUFFIX, key);
    sumctx c = { 0 };
    if (!pd_walk_named(db, epoch, host, fname, visit, &c, err)) {
        free(c.v);
        return false;
    }
    if (!c.files)
        return pd_fail(err, PROFDB_ENOENT, "%s: no value profile for %s", profdb_dir(db), key);
    *v = c.v;
    *n = c.n;
    return true;
}
