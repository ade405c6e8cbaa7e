/*
 * collector/cpod_values.c: value records into hot lists, and hot lists
 * into the database (see cpod_internal.h).
 *
 * A record is mapped like a sample: its pid and pc through the process's
 * maps to an image and a link-time offset.  One hot list per (image,
 * offset, kind), found through an open-addressed table.  A latency keeps
 * the level that answered the load in its upper half (level << 32 |
 * cycles), so reports can bin by who answered, not by guessing from the
 * cycles; a jump target is kept as the link-time address of the image it
 * lies in (run-time if it lies in none).  cpod_region.c journals each
 * batch before it comes here, as it does entry batches.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/cpod_internal.h"
#include "common/hash.h"

void cpod_vset_free(cpod_vset *s)
{
    for (size_t i = 0; i < s->nimg; i++)
        free(s->img[i].v);
    free(s->img);
    free(s->slot);
    memset(s, 0, sizeof *s);
}

static size_t slot_of(uint32_t img, uint64_t offset, int kind, size_t cap)
{
    uint64_t h = (offset * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)img << 40) ^ (uint64_t)kind * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static bool grow_slots(cpod_vset *s)
{
    size_t cap = s->cslot ? 2 * s->cslot : 1024;
    cpod_vslot *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < s->cslot; i++) {
        cpod_vslot *o = &s->slot[i];
        if (!o->list)
            continue;
        size_t h = slot_of(o->img, o->offset, o->kind, cap);
        while (t[h].list)
            h = (h + 1) & (cap - 1);
        t[h] = *o;
    }
    free(s->slot);
    s->slot = t;
    s->cslot = cap;
    return true;
}

static cpod_vimg *image(cpod_vset *s, const char *key, uint32_t *at)
{
    for (size_t i = s->nimg; i-- > 0;)
        if (!strcmp(s->img[i].key, key)) {
            *at = (uint32_t)i;
            return &s->img[i];
        }
    if (s->nimg == s->cimg) {
        size_t cap = s->cimg ? 2 * s->cimg : 8;
        cpod_vimg *n = realloc(s->img, cap * sizeof *n);
        if (!n)
            return NULL;
        s->img = n;
        s->cimg = cap;
    }
    cpod_vimg *g = &s->img[s->nimg];
    memset(g, 0, sizeof *g);
    snprintf(g->key, sizeof g->key, "%s", key);
    *at = (uint32_t)s->nimg++;
    return g;
}

static hotlist *list_of(cpod_vset *s, const char *key, uint64_t offset, int kind)
{
    if (2 * (s->nslot + 1) > s->cslot && !grow_slots(s))
        return NULL;
    uint32_t ii;
    cpod_vimg *g = image(s, key, &ii);
    if (!g)
        return NULL;
    size_t h = slot_of(ii, offset, kind, s->cslot);
    for (; s->slot[h].list; h = (h + 1) & (s->cslot - 1)) {
        cpod_vslot *o = &s->slot[h];
        if (o->img == ii && o->offset == offset && o->kind == kind)
            return &g->v[o->list - 1].h;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        profdb_vlist *n = realloc(g->v, cap * sizeof *n);
        if (!n)
            return NULL;
        g->v = n;
        g->cap = cap;
    }
    profdb_vlist *l = &g->v[g->n++];
    l->offset = offset;
    l->kind = kind;
    /* seeded by what the list is, so a list's coins do not depend on when
     * it was made */
    hotlist_init(&l->h, fnv1a_str(offset * 8 + (uint64_t)kind, key));
    s->slot[h] = (cpod_vslot){ offset, ii, (uint32_t)g->n, kind };
    s->nslot++;
    return &l->h;
}

void cpod_values_feed(cpod_region *r, const drv_value *vs, size_t n)
{
    cpod_vset *s = &r->d->vlive;
    for (size_t i = 0; i < n; i++) {
        const drv_value *v = &vs[i];
        s->records++;
        const cpod_map *m = cpod_procs_lookup(&r->procs, v->pid, v->pc);
        if (!m) {
            s->unmapped++;
            continue;
        }
        uint64_t value = v->kind == DRV_VALUE_LATENCY ? (uint64_t)v->level << 32 | (v->value & 0xffffffffu)
                                                       : v->value;
        if (v->kind == DRV_VALUE_TARGET) {
            /* a target in a mapped image is kept as that image's
             * link-time address, like the instruction's own offset */
            const cpod_map *t = cpod_procs_lookup(&r->procs, v->pid, v->value);
            if (t)
                value = v->value + t->adj;
        }
        hotlist *h = list_of(s, m->img->key, v->pc + m->adj, v->kind);
        if (!h) {
            /* refusing the batch would only bring it back: count it lost */
            if (!s->lost++)
                cpod_log("%s: out of memory for value lists; value records are being lost", r->name);
            continue;
        }
        hotlist_add(h, value);
    }
}

static int cmp_list(const void *a, const void *b)
{
    const profdb_vlist *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

bool cpod_values_store(cpod *d, cpod_vset *s, size_t *done, profdb_error *err)
{
    for (size_t i = 0; i < s->nimg; i++) {
        cpod_vimg *g = &s->img[i];
        if (g->stored || !g->n)
            continue;
        qsort(g->v, g->n, sizeof *g->v, cmp_list);
        if (!profdb_values_merge(d->db, d->host, g->key, g->v, g->n, err))
            return false;
        g->stored = true;
        ++*done;
    }
    return true;
}

/* ---- the pending file (cpod_pending.c) ------------------------------------------ */

/* Value samples: exact, and what a merge adds to a file's. */
static uint64_t samples(const profdb_vlist *v, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += v[i].h.samples;
    return t;
}

size_t cpod_values_land(cpod *d, cpod_vset *s, const char *epoch, bool before)
{
    size_t found = 0;
    for (size_t i = 0; i < s->nimg; i++) {
        cpod_vimg *g = &s->img[i];
        if (g->stored || !g->n)
            continue;
        profdb_vlist *v = NULL;
        size_t n = 0;
        profdb_error err = { 0 };
        bool ok = profdb_values_sum(d->db, epoch, d->host, g->key, &v, &n, &err);
        uint64_t now = ok ? samples(v, n) : 0;
        free(v);
        char what[PROFDB_KEY_MAX + 16];
        snprintf(what, sizeof what, "%s%s", g->key, PROFDB_VALUES_SUFFIX);
        if (before)
            cpod_land_before(&g->land, ok, now, &err);
        else if (cpod_land_arrived(&g->land, ok, now, &err, samples(g->v, g->n), what, epoch)) {
            g->stored = true;
            found++;
        }
    }
    return found;
}

/* Per image: key length, whether its pre is known, pre, the lists' bytes
 * (profdb's file encoding), the key, the bytes. */
bool cpod_values_save(cpod_vset *s, cpod_buf *b)
{
    bool ok = cpod_put64(b, s->nimg);
    for (size_t i = 0; ok && i < s->nimg; i++) {
        cpod_vimg *g = &s->img[i];
        uint8_t *data = NULL;
        size_t size = 0;
        profdb_error err;
        qsort(g->v, g->n, sizeof *g->v, cmp_list);   /* no list is added once the job has the set */
        ok = profdb_values_encode(g->v, g->n, &data, &size, &err) && cpod_put_image(b, g->key, &g->land, data, size);
        free(data);
    }
    return ok;
}

bool cpod_values_load(cpod_vset *s, cpod_rd *r, char *why, size_t why_size)
{
    uint64_t n = cpod_get64(r);
    if (!r->ok || n > (uint64_t)(r->end - r->p) / 24 || !(s->img = calloc(n ? n : 1, sizeof *s->img))) {
        cpod_msg(why, why_size, "value lists: bad image count");
        return false;
    }
    s->cimg = n ? n : 1;
    for (; s->nimg < n; s->nimg++) {
        cpod_vimg *g = &s->img[s->nimg];
        const uint8_t *data;
        size_t size;
        if (!cpod_get_image(r, g->key, sizeof g->key, &g->land, &data, &size)) {
            cpod_msg(why, why_size, "value lists: image %zu cut short", s->nimg);
            return false;
        }
        profdb_error err;
        if (!profdb_values_decode(data, size, g->key, &g->v, &g->n, &err)) {
            cpod_msg(why, why_size, "value lists of %s", err.msg);
            return false;
        }
        g->cap = g->n;
    }
    return true;
}
