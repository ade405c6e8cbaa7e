/*
 * estimator/diff.c: per-image and per-procedure differences between two
 * profile sets (estimator/diff.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "estimator/common.h"
#include "estimator/diff.h"

/* One image of one side, and where its samples are placed. */
typedef struct {
    int side;                     /* 0: A, 1: B */
    const est_set *set;
    const est_image *im;
    int ev;                       /* the event's column in set, or -1 */
    char ident[PROFDB_KEY_MAX];   /* its build-id, or its original's */
    bool has_origin;
    est_origin origin;
    image *orig;                  /* the original's symbols, when found */
    bool own_orig;
    size_t group;
} side_image;

typedef struct {
    char *label;
    int label_rank;               /* 0: A's; 1: a rewritten image of B; 2: B's own */
    const char *path[2];          /* the first member's path on each side */
    bool has[2];
    uint64_t count[2];
} group;

typedef struct {
    size_t group;
    char *name;
    int side;
    uint64_t count;
} obs;


static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The original of a rewritten image: profiled in either set (then its file
 * was already found), or at a path either database saw for its build-id. */
static void find_original(side_image *si, side_image *all, size_t n, const est_set *a,
                          const est_set *b, const est_diff_options *opt)
{
    for (size_t i = 0; i < n; i++) {
        if (all[i].im->status == EST_IMAGE_READ && !strcmp(all[i].im->key, si->ident)) {
            si->orig = all[i].im->img;
            return;
        }
    }
    const est_set *sets[2] = { a, b };
    for (int k = 0; k < 2 && !si->orig; k++) {
        profdb_error perr;
        profdb *db = profdb_open(sets[k]->db, 0, &perr);
        profdb_image known;
        if (!db)
            continue;
        if (profdb_lookup(db, si->ident, &known, &perr)) {
            for (size_t i = 0; known.paths[i] && !si->orig; i++) {
                image_error ierr;
                image *img = image_open(known.paths[i], &ierr);
                if (img && img->build_id_len == si->origin.build_id_len &&
                    !memcmp(img->build_id, si->origin.build_id, img->build_id_len)) {
                    si->orig = img;
                    si->own_orig = true;
                } else {
                    image_close(img);
                }
            }
            profdb_image_free(&known);
        }
        profdb_close(db);
    }
    if (!si->orig)
        est_warnf(opt->warn, opt->warn_ctx,
                  "%s was rewritten from build-id %s, whose image was not found: its samples are "
                  "placed with its own symbols",
                  si->im->path, si->ident);
}

static int rank(const side_image *si)
{
    return si->side == 0 ? 0 : si->has_origin ? 1 : 2;
}

static bool add_group(group **g, size_t *ng, const side_image *si, est_error *err)
{
    group *ng2 = realloc(*g, (*ng + 1) * sizeof *ng2);
    if (!ng2)
        return est_oom(err);
    *g = ng2;
    group *x = &ng2[*ng];
    memset(x, 0, sizeof *x);
    if (!(x->label = strdup(si->im->path)))
        return est_oom(err);
    x->label_rank = rank(si);
    x->path[si->side] = si->im->path;
    x->has[si->side] = true;
    (*ng)++;
    return true;
}

/* A group is labelled with B's name for it (the current one), preferring
 * the image itself to a rewritten copy of it. */
static void join(group *g, side_image *si, size_t gi)
{
    si->group = gi;
    if (!g[gi].has[si->side]) {
        g[gi].has[si->side] = true;
        g[gi].path[si->side] = si->im->path;
    }
    if (rank(si) > g[gi].label_rank) {
        char *l = strdup(si->im->path);
        if (l) {
            free(g[gi].label);
            g[gi].label = l;
            g[gi].label_rank = rank(si);
        }
    }
}

/* Pair B's images with A's groups: identity, then path, then file name
 * (only when exactly one unpaired group of A has it). */
static bool pair_images(side_image *si, size_t n, group **g, size_t *ng, est_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (si[i].side != 0)
            continue;
        size_t k;
        for (k = 0; k < i; k++)
            if (si[k].side == 0 && !strcmp(si[k].ident, si[i].ident))
                break;
        if (k < i)
            join(*g, &si[i], si[k].group);
        else if (!add_group(g, ng, &si[i], err))
            return false;
        else
            si[i].group = *ng - 1;
    }
    size_t na_groups = *ng;
    bool *placed = calloc(n ? n : 1, sizeof *placed);
    if (!placed)
        return est_oom(err);
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < n; i++) {
            if (si[i].side != 1 || placed[i])
                continue;
            size_t found = SIZE_MAX, matches = 0;
            for (size_t k = 0; k < n && pass == 0; k++)
                if (si[k].side == 0 && !strcmp(si[k].ident, si[i].ident)) {
                    found = si[k].group;
                    matches = 1;
                    break;
                }
            for (size_t gi = 0; gi < na_groups && pass > 0; gi++) {
                if ((*g)[gi].has[1] || !(*g)[gi].path[0])
                    continue;
                bool same = pass == 1 ? !strcmp((*g)[gi].path[0], si[i].im->path)
                                      : !strcmp(base_name((*g)[gi].path[0]), base_name(si[i].im->path));
                if (same) {
                    found = gi;
                    matches++;
                }
            }
            if (matches == 1) {
                join(*g, &si[i], found);
                placed[i] = true;
            }
        }
    }
    /* Unpaired images of B: a group each (B images of one identity share). */
    for (size_t i = 0; i < n; i++) {
        if (si[i].side != 1 || placed[i])
            continue;
        size_t k;
        for (k = 0; k < i; k++)
            if (si[k].side == 1 && placed[k] && !strcmp(si[k].ident, si[i].ident) &&
                si[k].group >= na_groups)
                break;
        if (k < i) {
            join(*g, &si[i], si[k].group);
        } else {
            if (!add_group(g, ng, &si[i], err)) {
                free(placed);
                return false;
            }
            si[i].group = *ng - 1;
        }
        placed[i] = true;
    }
    free(placed);
    return true;
}

static bool push_obs(obs **v, size_t *n, size_t *cap, size_t gi, const char *name, int side,
                     uint64_t count)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        obs *nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return false;
        *v = nv;
        *cap = c;
    }
    if (!((*v)[*n].name = strdup(name)))
        return false;
    (*v)[*n].group = gi;
    (*v)[*n].side = side;
    (*v)[*n].count = count;
    (*n)++;
    return true;
}

/* Every sample of one side image, placed in a procedure (a run of
 * consecutive offsets in one procedure is one observation). */
static bool observe(const side_image *si, obs **v, size_t *n, size_t *cap)
{
    const est_image *im = si->im;
    uint64_t total = si->ev >= 0 ? im->totals[si->ev] : 0;
    if (!total)
        return true;
    if (im->status != EST_IMAGE_READ)
        return push_obs(v, n, cap, si->group,
                        im->status == EST_IMAGE_UNKNOWN ? EST_UNKNOWN_NAME : EST_NOT_READ_NAME,
                        si->side, total);
    size_t first = *n;
    char buf[300];
    for (size_t i = 0; i < im->n; i++) {
        uint64_t c = im->counts[i * im->nevents + (size_t)si->ev];
        if (!c)
            continue;
        uint64_t off = im->offsets[i], start, end;
        const image *img = im->img;
        if (si->has_origin && si->orig) {
            off = si->origin.lookup(si->origin.map, off);
            img = si->orig;
        }
        const char *name = est_procedure_at(img, off, buf, sizeof buf, &start, &end);
        if (*n > first && !strcmp((*v)[*n - 1].name, name))
            (*v)[*n - 1].count = est_add_sat((*v)[*n - 1].count, c);
        else if (!push_obs(v, n, cap, si->group, name, si->side, c))
            return false;
    }
    return true;
}

static int cmp_obs(const void *x, const void *y)
{
    const obs *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Changes in share are compared exactly: |b/TB - a/TA| scaled by TA*TB is
 * |b*TA - a*TB|, which 128-bit integers hold; doubles would order equal
 * changes by rounding noise. */
static unsigned __int128 share_change(const est_diff_row *r, const est_diff *d)
{
    unsigned __int128 x = (unsigned __int128)r->b * (d->total_a ? d->total_a : 1);
    unsigned __int128 y = (unsigned __int128)r->a * (d->total_b ? d->total_b : 1);
    return x > y ? x - y : y - x;
}

static int cmp_row(const void *x, const void *y, void *ctx)
{
    const est_diff_row *a = x, *b = y;
    unsigned __int128 da = share_change(a, ctx), db = share_change(b, ctx);
    if (da != db)
        return da > db ? -1 : 1;
    uint64_t ca = a->a > a->b ? a->a - a->b : a->b - a->a;
    uint64_t cb = b->a > b->b ? b->a - b->b : b->b - b->a;
    if (ca != cb)
        return ca > cb ? -1 : 1;
    int d = strcmp(a->image, b->image);
    if (!d && a->procedure && b->procedure)
        d = strcmp(a->procedure, b->procedure);
    return d;
}

static void set_pct(est_diff_row *r, const est_diff *d)
{
    r->a_pct = d->total_a ? 100.0 * (double)r->a / (double)d->total_a : 0.0;
    r->b_pct = d->total_b ? 100.0 * (double)r->b / (double)d->total_b : 0.0;
}

bool est_diff_compute(const est_set *a, const est_set *b, const est_diff_options *opt,
                      est_diff *out, est_error *err)
{
    memset(out, 0, sizeof *out);
    const char *event = opt->event ? opt->event : "cycles";
    int ea = est_event_index(a, event), eb = est_event_index(b, event);
    out->total_a = ea >= 0 ? a->totals[ea] : 0;
    out->total_b = eb >= 0 ? b->totals[eb] : 0;

    side_image *si = calloc(a->nimages + b->nimages + 1, sizeof *si);
    if (!si)
        return est_oom(err);
    size_t n = 0;
    for (int side = 0; side < 2; side++) {
        const est_set *s = side ? b : a;
        int ev = side ? eb : ea;
        for (size_t i = 0; i < s->nimages && ev >= 0; i++) {
            if (!s->images[i].totals[ev])
                continue;
            side_image *x = &si[n++];
            x->side = side;
            x->set = s;
            x->im = &s->images[i];
            x->ev = ev;
            snprintf(x->ident, sizeof x->ident, "%s", x->im->key);
            if (opt->origin && x->im->status == EST_IMAGE_READ &&
                opt->origin(opt->origin_ctx, x->im->img, &x->origin)) {
                if (x->origin.build_id_len) {
                    x->has_origin = true;
                    hex_bytes(x->origin.build_id, x->origin.build_id_len, x->ident, sizeof x->ident);
                } else if (x->origin.free) {
                    /* A map without the original's build-id cannot pair it. */
                    x->origin.free(x->origin.map);
                }
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (si[i].has_origin)
            find_original(&si[i], si, n, a, b, opt);

    group *g = NULL;
    size_t ng = 0;
    obs *v = NULL;
    size_t nv = 0, cap = 0;
    bool ok = pair_images(si, n, &g, &ng, err);
    for (size_t i = 0; ok && i < n; i++) {
        g[si[i].group].count[si[i].side] =
            est_add_sat(g[si[i].group].count[si[i].side], si[i].im->totals[si[i].ev]);
        if (!observe(&si[i], &v, &nv, &cap))
            ok = est_oom(err);
    }
    if (ok && ng && !(out->images = calloc(ng, sizeof *out->images)))
        ok = est_oom(err);
    for (size_t gi = 0; ok && gi < ng; gi++) {
        est_diff_row *r = &out->images[out->nimages];
        if (!(r->image = strdup(g[gi].label))) {
            ok = est_oom(err);
            break;
        }
        out->nimages++;
        r->a = g[gi].count[0];
        r->b = g[gi].count[1];
        set_pct(r, out);
    }
    if (ok && nv)
        qsort(v, nv, sizeof *v, cmp_obs);
    for (size_t i = 0; ok && i < nv;) {
        size_t j = i;
        uint64_t c[2] = { 0, 0 };
        while (j < nv && v[j].group == v[i].group && !strcmp(v[j].name, v[i].name)) {
            c[v[j].side] = est_add_sat(c[v[j].side], v[j].count);
            j++;
        }
        est_diff_row *nr = realloc(out->procs, (out->nprocs + 1) * sizeof *nr);
        if (!nr) {
            ok = est_oom(err);
            break;
        }
        out->procs = nr;
        est_diff_row *r = &nr[out->nprocs];
        memset(r, 0, sizeof *r);
        r->image = strdup(g[v[i].group].label);
        r->procedure = strdup(v[i].name);
        out->nprocs++;
        if (!r->image || !r->procedure) {
            ok = est_oom(err);
            break;
        }
        r->a = c[0];
        r->b = c[1];
        set_pct(r, out);
        i = j;
    }
    if (ok) {
        if (out->nimages > 1)
            qsort_r(out->images, out->nimages, sizeof *out->images, cmp_row, out);
        if (out->nprocs > 1)
            qsort_r(out->procs, out->nprocs, sizeof *out->procs, cmp_row, out);
    }
    for (size_t i = 0; i < nv; i++)
        free(v[i].name);
    free(v);
    for (size_t gi = 0; gi < ng; gi++)
        free(g[gi].label);
    free(g);
    for (size_t i = 0; i < n; i++) {
        if (si[i].own_orig)
            image_close(si[i].orig);
        if (si[i].has_origin && si[i].origin.free)
            si[i].origin.free(si[i].origin.map);
    }
    free(si);
    if (!ok)
        est_diff_free(out);
    return ok;
}

void est_diff_free(est_diff *d)
{
    for (size_t i = 0; i < d->nimages; i++)
        free(d->images[i].image);
    for (size_t i = 0; i < d->nprocs; i++) {
        free(d->procs[i].image);
        free(d->procs[i].procedure);
    }
    free(d->images);
    free(d->procs);
    memset(d, 0, sizeof *d);
}
