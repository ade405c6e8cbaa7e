/*
 * collector/cpod_stacks.c: the daemon's stacks between merges.
 *
 * Each stack record from a region's rings is mapped frame by frame
 * through the process's image map to (image, offset), as sample pcs are,
 * and counted in the group of its (image set, event): the same stack is
 * kept once with a count, as the hash table keeps a pc.  The image set is
 * the images the process has mapped, plus any other image a frame
 * resolved to (a map from before an exec) and "unknown" for a frame no
 * image claims (stored with its raw pc).  A merge hands the groups to
 * profdb_stacks_merge (profdb/stacks.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collector/cpod_internal.h"
#include "common/hash.h"

struct cpod_stk {
    struct cpod_stk *next;
    uint64_t h, count;
    uint32_t end, n;
    profdb_frame f[];
};

struct cpod_stkgroup {
    struct cpod_stkgroup *next;
    uint64_t h;
    char *event;
    size_t nimg;
    char **keys, **paths;       /* sorted by key */
    cpod_stk **tab;
    size_t nb, n;
    cpod_land land;             /* its file before the merge (cpod_pending.c) */
};

void cpod_stackset_init(cpod_stackset *s)
{
    memset(s, 0, sizeof *s);
}

static void group_free(cpod_stkgroup *g)
{
    for (size_t b = 0; b < g->nb; b++)
        for (cpod_stk *k = g->tab[b], *next; k; k = next) {
            next = k->next;
            free(k);
        }
    for (size_t i = 0; i < g->nimg; i++) {
        free(g->keys[i]);
        free(g->paths[i]);
    }
    free(g->keys);
    free(g->paths);
    free(g->tab);
    free(g->event);
    free(g);
}

void cpod_stackset_free(cpod_stackset *s)
{
    for (cpod_stkgroup *g = s->groups, *next; g; g = next) {
        next = g->next;
        group_free(g);
    }
    cpod_stackset_init(s);
}

/* ---- one record ------------------------------------------------------------- */

typedef struct img_ref {
    const char *key, *path;
} img_ref;

static int cmp_ref(const void *a, const void *b)
{
    return strcmp(((const img_ref *)a)->key, ((const img_ref *)b)->key);
}

static size_t add_ref(img_ref *set, size_t n, const char *key, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(set[i].key, key))
            return n;
    set[n] = (img_ref){ key, path };
    return n + 1;
}

static uint64_t set_hash(const char *event, const img_ref *set, size_t n)
{
    uint64_t h = fnv1a_str(FNV1A_INIT, event);
    for (size_t i = 0; i < n; i++)
        h = fnv1a_str(fnv1a(h, "\n", 1), set[i].key);
    return h;
}

static cpod_stkgroup *group_of(cpod_stackset *s, const char *event, const img_ref *set, size_t n)
{
    uint64_t h = set_hash(event, set, n);
    for (cpod_stkgroup *g = s->groups; g; g = g->next) {
        if (g->h != h || g->nimg != n || strcmp(g->event, event))
            continue;
        size_t i = 0;
        while (i < n && !strcmp(g->keys[i], set[i].key))
            i++;
        if (i == n)
            return g;
    }
    cpod_stkgroup *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->h = h;
    g->event = strdup(event);
    g->keys = calloc(n, sizeof *g->keys);
    g->paths = calloc(n, sizeof *g->paths);
    bool ok = g->event && g->keys && g->paths;
    for (size_t i = 0; ok && i < n; i++) {
        g->keys[i] = strdup(set[i].key);
        g->paths[i] = strdup(set[i].path);
        g->nimg = i + 1;
        ok = g->keys[i] && g->paths[i];
    }
    if (!ok) {
        group_free(g);
        return NULL;
    }
    g->next = s->groups;
    s->groups = g;
    return g;
}

static bool grow(cpod_stkgroup *g)
{
    size_t nb = g->nb ? 2 * g->nb : 256;
    cpod_stk **tab = calloc(nb, sizeof *tab);
    if (!tab)
        return false;
    for (size_t b = 0; b < g->nb; b++)
        for (cpod_stk *k = g->tab[b], *next; k; k = next) {
            next = k->next;
            k->next = tab[k->h & (nb - 1)];
            tab[k->h & (nb - 1)] = k;
        }
    free(g->tab);
    g->tab = tab;
    g->nb = nb;
    return true;
}

static bool count_stack(cpod_stkgroup *g, uint32_t end, const profdb_frame *f, uint32_t n, uint64_t count)
{
    uint64_t h = fnv1a(fnv1a(FNV1A_INIT, &end, sizeof end), f, n * sizeof *f);
    if (g->n >= g->nb && !grow(g))
        return false;
    cpod_stk **pp = &g->tab[h & (g->nb - 1)];
    for (cpod_stk *k = *pp; k; k = k->next)
        if (k->h == h && k->end == end && k->n == n && !memcmp(k->f, f, n * sizeof *f)) {
            k->count += count;
            return true;
        }
    cpod_stk *k = malloc(sizeof *k + n * sizeof *f);
    if (!k)
        return false;
    *k = (cpod_stk){ .next = *pp, .h = h, .count = count, .end = end, .n = n };
    memcpy(k->f, f, n * sizeof *f);
    *pp = k;
    g->n++;
    return true;
}

bool cpod_stacks_add(cpod_stackset *s, cpod_procs *procs, const char *event, const drv_stack_rec *r)
{
    enum { MAXIMG = 256 };
    const cpod_map *m[DRV_STACKS_MAX_FRAMES];
    profdb_frame f[DRV_STACKS_MAX_FRAMES];
    img_ref set[MAXIMG + DRV_STACKS_MAX_FRAMES + 1];
    cpod_image *imgs[MAXIMG];
    size_t n = 0, ni = cpod_procs_images(procs, r->pid, imgs, MAXIMG);
    bool unknown = false;
    for (size_t i = 0; i < ni; i++)
        n = add_ref(set, n, imgs[i]->key, imgs[i]->path);
    for (unsigned i = 0; i < r->n; i++) {
        m[i] = cpod_procs_lookup(procs, r->pid, r->pc[i]);
        if (m[i])
            n = add_ref(set, n, m[i]->img->key, m[i]->img->path);
        else
            unknown = true;
    }
    char ukey[PROFDB_KEY_MAX];
    if (unknown)
        n = add_ref(set, n, profdb_key(NULL, 0, PROFDB_UNKNOWN_PATH, ukey), PROFDB_UNKNOWN_PATH);
    qsort(set, n, sizeof *set, cmp_ref);
    cpod_stkgroup *g = group_of(s, event, set, n);
    if (!g)
        return false;
    for (unsigned i = 0; i < r->n; i++) {
        img_ref want = { m[i] ? m[i]->img->key : ukey, NULL };
        const img_ref *at = bsearch(&want, set, n, sizeof *set, cmp_ref);
        f[i] = (profdb_frame){ (uint32_t)(at - set), m[i] ? r->pc[i] + m[i]->adj : r->pc[i] };
        s->unknown_frames += !m[i];
    }
    if (!count_stack(g, r->end, f, r->n, 1))
        return false;
    s->stacks++;
    s->frames += r->n;
    return true;
}

/* ---- merging ------------------------------------------------------------------ */

bool cpod_stacks_merge(cpod_stackset *s, profdb *db, const char *host, size_t *done_groups, profdb_error *err)
{
    size_t ng = 0;
    for (cpod_stkgroup *g = s->groups; g; g = g->next)
        ng++;
    if (!ng)
        return true;
    profdb_stacks_input *in = calloc(ng, sizeof *in);
    profdb_stack **st = calloc(ng, sizeof *st);
    bool ok = in && st;
    size_t k = 0;
    for (cpod_stkgroup *g = s->groups; ok && g; g = g->next, k++) {
        if (!(st[k] = malloc((g->n ? g->n : 1) * sizeof **st))) {
            ok = false;
            break;
        }
        size_t q = 0;
        for (size_t b = 0; b < g->nb; b++)
            for (cpod_stk *x = g->tab[b]; x; x = x->next)
                st[k][q++] = (profdb_stack){ x->count, x->end, x->n, x->f };
        in[k] = (profdb_stacks_input){ .event = g->event, .host = host, .nimages = g->nimg,
                                       .keys = (const char *const *)g->keys,
                                       .paths = (const char *const *)g->paths, .n = q, .s = st[k] };
    }
    size_t done = 0;
    if (ok)
        done = profdb_stacks_merge(db, in, ng, err);
    else
        cpod_msg(err->msg, sizeof err->msg, "out of memory merging stacks");
    for (size_t i = 0; st && i < ng; i++)
        free(st[i]);
    free(st);
    free(in);
    /* what is stored leaves the set; the rest waits for the next try */
    *done_groups += done;
    for (size_t i = 0; i < done; i++) {
        cpod_stkgroup *g = s->groups;
        s->groups = g->next;
        group_free(g);
    }
    return ok && done == ng;
}

static uint64_t group_total(const cpod_stkgroup *g)
{
    uint64_t n = 0;
    for (size_t b = 0; b < g->nb; b++)
        for (const cpod_stk *x = g->tab[b]; x; x = x->next)
            n += x->count;
    return n;
}

uint64_t cpod_stacks_held(const cpod_stackset *s)
{
    uint64_t n = 0;
    for (const cpod_stkgroup *g = s->groups; g; g = g->next)
        n += group_total(g);
    return n;
}

/* ---- the pending file (cpod_pending.c) -------------------------------------- */

size_t cpod_stacks_land(cpod *d, cpod_stackset *s, const char *epoch, bool before)
{
    size_t found = 0;
    for (cpod_stkgroup **pp = &s->groups; *pp;) {
        cpod_stkgroup *g = *pp;
        uint64_t now = 0;
        profdb_error err = { 0 };
        bool ok = profdb_stacks_total(d->db, epoch, d->host, g->event, g->nimg, (const char *const *)g->keys,
                                      &now, &err);
        char what[PROFDB_MAX_NAME + PROFDB_KEY_MAX + 64];
        snprintf(what, sizeof what, "the %s stacks of %zu images (first %s)", g->event, g->nimg,
                 g->nimg ? g->keys[0] : "none");
        if (before)
            cpod_land_before(&g->land, ok, now, &err);
        if (before || !cpod_land_arrived(&g->land, ok, now, &err, group_total(g), what, epoch)) {
            pp = &g->next;
            continue;
        }
        *pp = g->next;   /* in the database: no longer ours to store */
        group_free(g);
        found++;
    }
    return found;
}

/* Per group: event length, images, whether its pre is known, pre, stacks;
 * the event; per image key length, path length, key, path; per stack
 * count, end, frames, then per frame image and offset. */
static bool save_group(const cpod_stkgroup *g, cpod_buf *b)
{
    bool ok = cpod_put32(b, (uint32_t)strlen(g->event)) && cpod_put32(b, (uint32_t)g->nimg) &&
              cpod_put32(b, g->land.known) && cpod_put32(b, 0) && cpod_put64(b, g->land.pre) &&
              cpod_put64(b, g->n) && cpod_put(b, g->event, strlen(g->event));
    for (size_t i = 0; ok && i < g->nimg; i++)
        ok = cpod_put32(b, (uint32_t)strlen(g->keys[i])) && cpod_put32(b, (uint32_t)strlen(g->paths[i])) &&
             cpod_put(b, g->keys[i], strlen(g->keys[i])) && cpod_put(b, g->paths[i], strlen(g->paths[i]));
    for (size_t k = 0; ok && k < g->nb; k++)
        for (const cpod_stk *x = g->tab[k]; ok && x; x = x->next) {
            ok = cpod_put64(b, x->count) && cpod_put32(b, x->end) && cpod_put32(b, x->n);
            for (uint32_t i = 0; ok && i < x->n; i++)
                ok = cpod_put32(b, x->f[i].image) && cpod_put32(b, 0) && cpod_put64(b, x->f[i].offset);
        }
    return ok;
}

bool cpod_stacks_save(const cpod_stackset *s, cpod_buf *b)
{
    uint64_t n = 0;
    for (const cpod_stkgroup *g = s->groups; g; g = g->next)
        n++;
    bool ok = cpod_put64(b, n);
    for (const cpod_stkgroup *g = s->groups; ok && g; g = g->next)
        ok = save_group(g, b);
    return ok;
}

/* One group's image set: keys strictly increasing, as the set is kept. */
static bool load_images(cpod_rd *r, img_ref *set, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t kl = cpod_get32(r), pl = cpod_get32(r);
        if (!r->ok || !kl || kl >= PROFDB_KEY_MAX || !pl || pl > PROFDB_MAX_PATH)
            return false;
        set[i].key = cpod_getstr(r, kl);
        set[i].path = cpod_getstr(r, pl);
        if (!set[i].key || !set[i].path || (i && strcmp(set[i - 1].key, set[i].key) >= 0))
            return false;
    }
    return true;
}

/* One group's stacks into g. */
static bool load_stacks(cpod_stackset *s, cpod_stkgroup *g, cpod_rd *r, uint64_t nstacks, size_t nimg)
{
    profdb_frame f[PROFDB_STACK_MAX_FRAMES];
    for (uint64_t k = 0; k < nstacks; k++) {
        uint64_t count = cpod_get64(r);
        uint32_t end = cpod_get32(r), n = cpod_get32(r);
        if (!r->ok || !count || end > 255 || n > PROFDB_STACK_MAX_FRAMES)
            return false;
        for (uint32_t i = 0; i < n; i++) {
            f[i].image = cpod_get32(r);
            cpod_get32(r);
            f[i].offset = cpod_get64(r);
            if (!r->ok || f[i].image >= nimg)
                return false;
        }
        if (!count_stack(g, end, f, n, count))
            return false;
        s->stacks += count;
        s->frames += count * n;
    }
    return true;
}

bool cpod_stacks_load(cpod_stackset *s, cpod_rd *r, char *why, size_t why_size)
{
    uint64_t ng = cpod_get64(r);
    for (uint64_t i = 0; r->ok && i < ng; i++) {
        uint32_t el = cpod_get32(r), nimg = cpod_get32(r), known = cpod_get32(r);
        cpod_get32(r);
        cpod_land land = { cpod_get64(r), known != 0 };
        uint64_t nstacks = cpod_get64(r);
        char *event = el && el <= PROFDB_MAX_NAME ? cpod_getstr(r, el) : NULL;
        img_ref *set = nimg <= PROFDB_STACK_MAX_IMAGES ? calloc(nimg ? nimg : 1, sizeof *set) : NULL;
        bool ok = event && set && known <= 1 && nstacks <= (uint64_t)(r->end - r->p) / 16 &&
                  load_images(r, set, nimg);
        cpod_stkgroup *g = ok ? group_of(s, event, set, nimg) : NULL;
        if (g) {
            g->land = land;
            ok = load_stacks(s, g, r, nstacks, nimg);
        }
        for (size_t k = 0; set && k < nimg; k++) {
            free((char *)set[k].key);
            free((char *)set[k].path);
        }
        free(set);
        free(event);
        if (!g || !ok) {
            cpod_msg(why, why_size, "stacks: group %" PRIu64 " damaged or out of memory", i);
            return false;
        }
    }
    if (!r->ok)
        cpod_msg(why, why_size, "stacks: cut short");
    return r->ok;
}
