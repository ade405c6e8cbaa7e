/*
 * profdb/profileme.c: ProfileMe profiles: their bytes, merging one into
 * the database, and reading them back summed (see profileme.h; the
 * format is in docs/profile-format.md "ProfileMe profiles").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/le.h"
#include "profdb/internal.h"
#include "profdb/profileme.h"

#define MAGIC "cpopme\n\0"
#define HDR 40u
/* an entry: offset, the counters, the histograms, then its hot list:
 * samples, tau, rng, u32 n, u32 zero, n values */
#define ENTRY_FIXED (8u + 8u * PDPM_NCOUNTERS + 8u * PDPM_NLAT * PDPM_NBINS)
#define LIST_HDR 32u

static const char *const counter_names[PDPM_NCOUNTERS] = {
    "samples", "weight2", "imiss", "itbmiss", "dmiss", "dtbmiss", "loads", "stores",
    "cbranch", "taken", "jumps", "mispredict", "level_d", "level_s", "level_b", "level_m",
    "lat_fetch", "lat_head", "lat_issue", "lat_load", "paired", "useful", "slots", "slots_used",
};
static const char *const latency_names[PDPM_NLAT] = { "fetch_issue", "head", "issue_ready", "load" };

const char *profdb_pm_counter_name(int k)
{
    return k >= 0 && k < PDPM_NCOUNTERS ? counter_names[k] : NULL;
}

const char *profdb_pm_latency_name(int k)
{
    return k >= 0 && k < PDPM_NLAT ? latency_names[k] : NULL;
}

int profdb_pm_bin(uint64_t cycles)
{
    int b = 0;
    while (cycles && b < PDPM_NBINS - 1) {
        cycles >>= 1;
        b++;
    }
    return b;
}

void profdb_pm_add(profdb_pm *a, const profdb_pm *b)
{
    for (int k = 0; k < PDPM_NCOUNTERS; k++)
        a->c[k] += b->c[k];
    for (int l = 0; l < PDPM_NLAT; l++)
        for (int k = 0; k < PDPM_NBINS; k++)
            a->hist[l][k] += b->hist[l][k];
    hotlist_merge(&a->paths, &b->paths);
}

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const profdb_pm *)a)->offset, y = ((const profdb_pm *)b)->offset;
    return (x > y) - (x < y);
}

bool profdb_pm_encode(const profdb_pm *v, size_t n, uint8_t **data, size_t *size, profdb_error *err)
{
    size_t len = HDR;
    for (size_t i = 0; i < n; i++) {
        if (i && v[i - 1].offset >= v[i].offset)
            return pd_fail(err, PROFDB_EINVAL, "ProfileMe entries not sorted by offset or repeated");
        if (hotlist_check(&v[i].paths))
            return pd_fail(err, PROFDB_EINVAL, "ProfileMe entry at offset 0x%llx: bad history list",
                           (unsigned long long)v[i].offset);
        len += ENTRY_FIXED + LIST_HDR + (size_t)v[i].paths.n * HOTLIST_VALUE_BYTES;
    }
    uint8_t *d = calloc(1, len);
    if (!d)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    uint8_t *p = d + HDR;
    for (size_t i = 0; i < n; i++) {
        le_put64(p, v[i].offset);
        p += 8;
        for (int k = 0; k < PDPM_NCOUNTERS; k++, p += 8)
            le_put64(p, v[i].c[k]);
        for (int l = 0; l < PDPM_NLAT; l++)
            for (int k = 0; k < PDPM_NBINS; k++, p += 8)
                le_put64(p, v[i].hist[l][k]);
        const hotlist *h = &v[i].paths;
        uint64_t tau;
        memcpy(&tau, &h->tau, sizeof tau);
        le_put64(p, h->samples);
        le_put64(p + 8, tau);
        le_put64(p + 16, h->rng);
        le_put32(p + 24, h->n);
        hotlist_put_values(p + LIST_HDR, h);
        p += LIST_HDR + (size_t)h->n * HOTLIST_VALUE_BYTES;
    }
    memcpy(d, MAGIC, 8);
    le_put32(d + 8, PROFDB_PM_VERSION);
    le_put64(d + 16, n);
    le_put64(d + 24, len - HDR);
    le_put64(d + 32, fnv1a(FNV1A_INIT, d + HDR, len - HDR));
    *data = d;
    *size = len;
    return true;
}

/* One entry at p (avail bytes left): how many bytes it took, 0 if bad. */
static size_t decode_entry(const uint8_t *p, size_t avail, profdb_pm *out, const char **why)
{
    if (avail < ENTRY_FIXED + LIST_HDR)
        return *why = "an entry cut short", 0;
    memset(out, 0, sizeof *out);
    const uint8_t *q = p;
    out->offset = le_get64(q);
    q += 8;
    for (int k = 0; k < PDPM_NCOUNTERS; k++, q += 8)
        out->c[k] = le_get64(q);
    for (int l = 0; l < PDPM_NLAT; l++)
        for (int k = 0; k < PDPM_NBINS; k++, q += 8)
            out->hist[l][k] = le_get64(q);
    hotlist *h = &out->paths;
    uint64_t tau = le_get64(q + 8);
    h->samples = le_get64(q);
    memcpy(&h->tau, &tau, sizeof tau);
    h->rng = le_get64(q + 16);
    uint32_t nv = le_get32(q + 24);
    if (le_get32(q + 28))
        return *why = "reserved bytes not zero", 0;
    if (nv > HOTLIST_MAX)
        return *why = "more histories than a hot list holds", 0;
    h->n = nv;
    size_t len = ENTRY_FIXED + LIST_HDR + (size_t)nv * HOTLIST_VALUE_BYTES;
    if (avail < len)
        return *why = "an entry cut short", 0;
    if ((*why = hotlist_get_values(q + LIST_HDR, h)) || (*why = hotlist_check(h)))
        return 0;
    /* events are flags of samples: none can outnumber them */
    for (int k = PDPM_IMISS; k < PDPM_NCOUNTERS; k++)
        if ((k <= PDPM_LEVEL_M || k == PDPM_PAIRED || k == PDPM_USEFUL) && out->c[k] > out->c[PDPM_SAMPLES])
            return *why = "an event counted more often than the instruction was sampled", 0;
    return len;
}

bool profdb_pm_decode(const void *data, size_t size, const char *name, profdb_pm **v, size_t *n,
                      profdb_error *err)
{
    const uint8_t *d = data;
    *v = NULL;
    *n = 0;
    if (size < 8 || memcmp(d, MAGIC, 8))
        return pd_fail(err, PROFDB_EMAGIC, "%s: not a ProfileMe profile", name);
    if (size < HDR)
        return pd_fail(err, PROFDB_ETRUNC, "%s: header cut short (%zu bytes)", name, size);
    uint32_t version = le_get32(d + 8);
    if (version != PROFDB_PM_VERSION)
        return pd_fail(err, PROFDB_EVERSION, "%s: ProfileMe profile version %u, this build reads %d", name,
                       version, PROFDB_PM_VERSION);
    uint64_t count = le_get64(d + 16), plen = le_get64(d + 24);
    if (le_get32(d + 12))
        return pd_fail(err, PROFDB_ECORRUPT, "%s: reserved header bytes not zero", name);
    if (plen != size - HDR)
        return pd_fail(err, plen > size - HDR ? PROFDB_ETRUNC : PROFDB_ECORRUPT,
                       "%s: payload of %llu bytes, file has %zu after the header", name, (unsigned long long)plen,
                       size - HDR);
    if (fnv1a(FNV1A_INIT, d + HDR, plen) != le_get64(d + 32))
        return pd_fail(err, PROFDB_ECHECKSUM, "%s: payload checksum mismatch", name);
    if (count > PROFDB_PM_MAX || count > plen / (ENTRY_FIXED + LIST_HDR))
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %llu entries cannot fit in %llu bytes", name,
                       (unsigned long long)count, (unsigned long long)plen);
    profdb_pm *out = count ? malloc((size_t)count * sizeof *out) : NULL;
    if (count && !out)
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
    size_t at = HDR;
    for (uint64_t i = 0; i < count; i++) {
        const char *why = NULL;
        size_t used = decode_entry(d + at, size - at, &out[i], &why);
        if (!used || (i && out[i - 1].offset >= out[i].offset)) {
            pd_fail(err, PROFDB_ECORRUPT, "%s: entry %llu at byte %zu: %s", name, (unsigned long long)i, at,
                    used ? "not in offset order" : why);
            free(out);
            return false;
        }
        at += used;
    }
    if (at != size) {
        free(out);
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %zu bytes after the last entry", name, size - at);
    }
    *v = out;
    *n = (size_t)count;
    return true;
}

/* a and b sorted, each offset once: their union into *out, entries of
 * the same offset added. */
static bool union_entries(const profdb_pm *a, size_t na, const profdb_pm *b, size_t nb, profdb_pm **out,
                          size_t *n, profdb_error *err)
{
    profdb_pm *u = malloc((na + nb + 1) * sizeof *u);
    if (!u)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        if (j == nb || (i < na && a[i].offset < b[j].offset))
            u[k++] = a[i++];
        else if (i == na || b[j].offset < a[i].offset)
            u[k++] = b[j++];
        else {
            u[k] = a[i++];
            profdb_pm_add(&u[k++], &b[j++]);
        }
    }
    *out = u;
    *n = k;
    return true;
}

typedef struct update_ctx {
    profdb_pm *in;
    size_t nin;
} update_ctx;

static bool update(void *ctx, const char *path, const uint8_t *old, size_t oldn, uint8_t **out, size_t *outn,
                   profdb_error *err)
{
    update_ctx *u = ctx;
    profdb_pm *ov = NULL, *all = NULL;
    size_t nold = 0, nall = 0;
    bool ok = (!old || profdb_pm_decode(old, oldn, path, &ov, &nold, err)) &&
              union_entries(ov, nold, u->in, u->nin, &all, &nall, err) &&
              profdb_pm_encode(all, nall, out, outn, err);
    free(ov);
    free(all);
    return ok;
}

bool profdb_pm_merge(profdb *db, const char *host, const char *key, const profdb_pm *v, size_t n,
                     profdb_error *err)
{
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    update_ctx u = { malloc((n + 1) * sizeof *v), 0 };
    if (!u.in)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    memcpy(u.in, v, n * sizeof *v);
    qsort(u.in, n, sizeof *u.in, cmp_entry);
    for (size_t i = 0; i < n; i++) {
        if (hotlist_check(&u.in[i].paths)) {
            free(u.in);
            return pd_fail(err, PROFDB_EINVAL, "ProfileMe entry at offset 0x%llx: bad history list",
                           (unsigned long long)v[i].offset);
        }
        if (u.nin && u.in[u.nin - 1].offset == u.in[i].offset)
            profdb_pm_add(&u.in[u.nin - 1], &u.in[i]);
        else
            u.in[u.nin++] = u.in[i];
    }
    bool ok = pd_update_host_file(db, host, key, PROFDB_PM_SUFFIX, update, &u, err);
    free(u.in);
    return ok;
}

typedef struct sumctx {
    profdb_pm *v;
    size_t n, files;
} sumctx;

static bool visit(profdb *db, const char *epoch, const char *file, void *ctx, profdb_error *err)
{
    sumctx *c = ctx;
    profdb_pm *v = NULL, *u;
    size_t n, nu;
    uint8_t *d;
    size_t size;
    (void)db;
    (void)epoch;
    if (!pd_slurp(file, &d, &size, err))
        return false;
    bool ok = profdb_pm_decode(d, size, file, &v, &n, err) && union_entries(c->v, c->n, v, n, &u, &nu, err);
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

bool profdb_pm_sum(profdb *db, const char *epoch, const char *host, const char *key, profdb_pm **v, size_t *n,
                   profdb_error *err)
{
    *v = NULL;
    *n = 0;
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    char fname[PROFDB_KEY_MAX + sizeof PROFDB_PM_SUFFIX];
    snprintf(fname, sizeof fname, "%s" PROFDB_PM_SUFFIX, key);
    sumctx c = { 0 };
    if (!pd_walk_named(db, epoch, host, fname, visit, &c, err)) {
        free(c.v);
        return false;
    }
    if (!c.files)
        return pd_fail(err, PROFDB_ENOENT, "%s: no ProfileMe profile for %s", profdb_dir(db), key);
    *v = c.v;
    *n = c.n;
    return true;
}
