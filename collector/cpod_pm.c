/*
 * collector/cpod_pm.c: ProfileMe records into per-instruction counts, and
 * those into the database (see cpod_internal.h).
 *
 * A record is mapped like a sample: its pid and pc through the process's
 * maps to an image and a link-time offset.  What it adds to its
 * instruction's entry (profdb/profileme.h): one sample; the executions it
 * stands for (the mean period, half of it for each member of a pair,
 * since a pair brings two records per period); a count per event flag and
 * per level that answered a load; its latencies into their sums and
 * histograms; its branch history into the entry's hot list; and for a
 * member of a pair, the paper's wasted-issue-slot terms: the issue slots
 * of its time in progress (width x cycles from fetch to result, times the
 * executions it stands for) and, when its partner issued meanwhile, the
 * window's worth of instructions that the partner stands for (window x
 * period).  cpod_region.c journals each record before it comes here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/cpod_internal.h"
#include "common/hash.h"

void cpod_pmset_free(cpod_pmset *s)
{
    for (size_t i = 0; i < s->nimg; i++) {
        free(s->img[i].e);
        free(s->img[i].slot);
    }
    free(s->img);
    memset(s, 0, sizeof *s);
}

static size_t slot_of(uint64_t offset, size_t cap)
{
    uint64_t h = offset * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static bool grow_slots(cpod_pmimg *g)
{
    size_t cap = g->cslot ? 2 * g->cslot : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < g->n; i++) {
        size_t h = slot_of(g->e[i].offset, cap);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = (uint32_t)i + 1;
    }
    free(g->slot);
    g->slot = t;
    g->cslot = cap;
    return true;
}

static cpod_pmimg *image(cpod_pmset *s, const char *key)
{
    for (size_t i = s->nimg; i-- > 0;)
        if (!strcmp(s->img[i].key, key))
            return &s->img[i];
    if (s->nimg == s->cimg) {
        size_t cap = s->cimg ? 2 * s->cimg : 8;
        cpod_pmimg *n = realloc(s->img, cap * sizeof *n);
        if (!n)
            return NULL;
        s->img = n;
        s->cimg = cap;
    }
    cpod_pmimg *g = &s->img[s->nimg++];
    memset(g, 0, sizeof *g);
    snprintf(g->key, sizeof g->key, "%s", key);
    return g;
}

static profdb_pm *entry_of(cpod_pmset *s, const char *key, uint64_t offset)
{
    cpod_pmimg *g = image(s, key);
    if (!g || (2 * (g->n + 1) > g->cslot && !grow_slots(g)))
        return NULL;
    size_t h = slot_of(offset, g->cslot);
    for (; g->slot[h]; h = (h + 1) & (g->cslot - 1))
        if (g->e[g->slot[h] - 1].offset == offset)
            return &g->e[g->slot[h] - 1];
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        profdb_pm *n = realloc(g->e, cap * sizeof *n);
        if (!n)
            return NULL;
        g->e = n;
        g->cap = cap;
    }
    profdb_pm *e = &g->e[g->n++];
    memset(e, 0, sizeof *e);
    e->offset = offset;
    /* seeded by what the list is, so its coins do not depend on when it was made */
    hotlist_init(&e->paths, fnv1a_str(offset, key));
    g->slot[h] = (uint32_t)g->n;
    return e;
}

static void count_latency(profdb_pm *e, int which, uint64_t cycles)
{
    e->c[PDPM_LAT_FETCH + which] += cycles;
    e->hist[which][profdb_pm_bin(cycles)]++;
}

/* What one record adds to its instruction's entry (the file's comment). */
static void count(profdb_pm *e, const drv_pm *r)
{
    static const struct { uint32_t flag; int counter; } flags[] = {
        { DRV_PM_IMISS, PDPM_IMISS }, { DRV_PM_ITBMISS, PDPM_ITBMISS }, { DRV_PM_DMISS, PDPM_DMISS },
        { DRV_PM_DTBMISS, PDPM_DTBMISS }, { DRV_PM_LOAD, PDPM_LOADS }, { DRV_PM_STORE, PDPM_STORES },
        { DRV_PM_CBRANCH, PDPM_CBRANCH }, { DRV_PM_TAKEN, PDPM_TAKEN }, { DRV_PM_JUMP, PDPM_JUMPS },
        { DRV_PM_MISPREDICT, PDPM_MISPREDICT }, { DRV_PM_PAIRED, PDPM_PAIRED }, { DRV_PM_USEFUL, PDPM_USEFUL },
    };
    bool paired = r->flags & DRV_PM_PAIRED;
    double w = paired ? r->period / 2 : r->period;     /* executions this record stands for */
    e->c[PDPM_SAMPLES]++;
    e->c[PDPM_WEIGHT2] += (uint64_t)llround(2 * w);
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
        e->c[flags[k].counter] += (r->flags & flags[k].flag) != 0;
    count_latency(e, PDPM_L_FETCH, r->fetch_issue);
    count_latency(e, PDPM_L_HEAD, r->head);
    count_latency(e, PDPM_L_ISSUE, r->issue_ready);
    if (r->flags & DRV_PM_LOAD) {
        count_latency(e, PDPM_L_LOAD, r->issue_ready);
        e->c[PDPM_LEVEL_D + r->level]++;
    }
    if (paired) {
        e->c[PDPM_SLOTS] += (uint64_t)llround((double)r->issue_width * w * ((double)r->fetch_issue + r->issue_ready));
        if (r->flags & DRV_PM_USEFUL)
            e->c[PDPM_SLOTS_USED] += (uint64_t)llround((double)r->window * r->period);
    }
    hotlist_add(&e->paths, (uint64_t)r->hist_len << 16 | r->hist);
}

void cpod_pm_add(cpod_pmset *s, cpod_procs *procs, const drv_stack_rec *rec)
{
    drv_pm r;
    s->records++;
    if (!drv_pm_decode(rec, &r)) {
        s->bad++;
        return;
    }
    const cpod_map *m = cpod_procs_lookup(procs, rec->pid, r.pc);
    if (!m) {
        s->unmapped++;
        return;
    }
    profdb_pm *e = entry_of(s, m->img->key, r.pc + m->adj);
    if (!e) {
        /* refusing the record would only bring it back: count it lost */
        if (!s->lost++)
            cpod_log("out of memory for ProfileMe entries; ProfileMe records are being lost");
        return;
    }
    count(e, &r);
}

bool cpod_pm_store(cpod *d, cpod_pmset *s, size_t *done, profdb_error *err)
{
    for (size_t i = 0; i < s->nimg; i++) {
        cpod_pmimg *g = &s->img[i];
        if (g->stored || !g->n)
            continue;
        if (!profdb_pm_merge(d->db, d->host, g->key, g->e, g->n, err))
            return false;
        g->stored = true;
        ++*done;
    }
    return true;
}

/* ---- the pending file (cpod_pending.c) ------------------------------------------ */

/* Records: exact, and what a merge adds to a file's. */
static uint64_t samples(const profdb_pm *e, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += e[i].c[PDPM_SAMPLES];
    return t;
}

size_t cpod_pm_land(cpod *d, cpod_pmset *s, const char *epoch, bool before)
{
    size_t found = 0;
    for (size_t i = 0; i < s->nimg; i++) {
        cpod_pmimg *g = &s->img[i];
        if (g->stored || !g->n)
            continue;
        profdb_pm *e = NULL;
        size_t n = 0;
        profdb_error err = { 0 };
        bool ok = profdb_pm_sum(d->db, epoch, d->host, g->key, &e, &n, &err);
        uint64_t now = ok ? samples(e, n) : 0;
        free(e);
        char what[PROFDB_KEY_MAX + 16];
        snprintf(what, sizeof what, "%s%s", g->key, PROFDB_PM_SUFFIX);
        if (before)
            cpod_land_before(&g->land, ok, now, &err);
        else if (cpod_land_arrived(&g->land, ok, now, &err, samples(g->e, g->n), what, epoch)) {
            g->stored = true;
            found++;
        }
    }
    return found;
}

static int cmp_entry(const void *a, const void *b)
{
    const profdb_pm *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* As cpod_values_save: per image key length, whether its pre is known,
 * pre, the entries' bytes (profdb's file encoding), the key, the bytes. */
bool cpod_pm_save(cpod_pmset *s, cpod_buf *b)
{
    bool ok = cpod_put64(b, s->nimg);
    for (size_t i = 0; ok && i < s->nimg; i++) {
        cpod_pmimg *g = &s->img[i];
        uint8_t *data = NULL;
        size_t size = 0;
        profdb_error err;
        /* sorted for the encoding: the slots go stale, but no entry is
         * added once the job has the set */
        qsort(g->e, g->n, sizeof *g->e, cmp_entry);
        free(g->slot);
        g->slot = NULL;
        g->cslot = 0;
        ok = profdb_pm_encode(g->e, g->n, &data, &size, &err) && cpod_put_image(b, g->key, &g->land, data, size);
        free(data);
    }
    return ok;
}

bool cpod_pm_load(cpod_pmset *s, cpod_rd *r, char *why, size_t why_size)
{
    uint64_t n = cpod_get64(r);
    if (!r->ok || n > (uint64_t)(r->end - r->p) / 24 || !(s->img = calloc(n ? n : 1, sizeof *s->img))) {
        cpod_msg(why, why_size, "ProfileMe entries: bad image count");
        return false;
    }
    s->cimg = n ? n : 1;
    for (; s->nimg < n; s->nimg++) {
        cpod_pmimg *g = &s->img[s->nimg];
        const uint8_t *data;
        size_t size;
        if (!cpod_get_image(r, g->key, sizeof g->key, &g->land, &data, &size)) {
            cpod_msg(why, why_size, "ProfileMe entries: image %zu cut short", s->nimg);
            return false;
        }
        profdb_error err;
        if (!profdb_pm_decode(data, size, g->key, &g->e, &g->n, &err)) {
            cpod_msg(why, why_size, "ProfileMe entries of %s", err.msg);
            return false;
        }
        g->cap = g->n;
    }
    return true;
}
