/*
 * profdb/profileme.c: ProfileMe profiles: their bytes, merging one into
 * the database, and reading them back summed (see profileme.h; the
 * format is in docs/profile-format.md "ProfileMe profiles").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "profdb/internal.h"
#include "profdb/profileme.h"

#define MAGIC "cpopme\n\0"
#define HDR PD_KIND_HEADER
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

static size_t decode_entry(const uint8_t *p, size_t avail, void *to, const char **why);

static void merge_entry(void *into, const void *also)
{
    profdb_pm_add(into, also);
}

static const char *check_entry(const void *r)
{
    return hotlist_check(&((const profdb_pm *)r)->paths);
}

static uint64_t offset_of(const void *r)
{
    return ((const profdb_pm *)r)->offset;
}

static bool encode(const void *v, size_t n, uint8_t **data, size_t *size, profdb_error *err)
{
    return profdb_pm_encode(v, n, data, size, err);
}

static const pd_kind kind = {
    .magic = MAGIC, .version = PROFDB_PM_VERSION, .max = PROFDB_PM_MAX, .min_bytes = ENTRY_FIXED + LIST_HDR,
    .suffix = PROFDB_PM_SUFFIX, .what = "ProfileMe profile", .item = "entry", .order = "not in offset order",
    .size = sizeof(profdb_pm), .decode = decode_entry, .encode = encode, .cmp = cmp_entry, .merge = merge_entry,
    .check = check_entry, .offset_of = offset_of,
};

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
    pd_kind_seal(&kind, d, len, n);
    *data = d;
    *size = len;
    return true;
}

/* One entry at p (avail bytes left): how many bytes it took, 0 if bad. */
static size_t decode_entry(const uint8_t *p, size_t avail, void *to, const char **why)
{
    profdb_pm *out = to;
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
    return pd_kind_decode(&kind, data, size, name, (void **)v, n, err);
}

bool profdb_pm_merge(profdb *db, const char *host, const char *key, const profdb_pm *v, size_t n,
                     profdb_error *err)
{
    return pd_kind_merge(db, &kind, host, key, v, n, err);
}

bool profdb_pm_sum(profdb *db, const char *epoch, const char *host, const char *key, profdb_pm **v, size_t *n,
                   profdb_error *err)
{
    return pd_kind_sum(db, &kind, epoch, host, key, (void **)v, n, err);
}
