/*
 * estimator/procedures.c: a loaded selection's samples added up per
 * procedure or per image (declared in estimator/samples.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/common.h"
#include "estimator/samples.h"

void est_function_extent(const image *img, const image_symbol *sym, uint64_t *start,
                         uint64_t *end)
{
    *start = sym->value;
    if (sym->size) {
        *end = sym->value + sym->size;
        return;
    }
    const image_section *sec = image_section_at(img, sym->value);
    uint64_t limit = sec ? sec->addr + sec->size : sym->value + 4;
    const image_symbol *const *f;
    size_t n = image_functions(img, &f);
    /* The list is sorted by address: the first function above this one
     * ends it, unless its section ends first. */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f[mid]->value <= sym->value)
            lo = mid + 1;
        else
            hi = mid;
    }
    *end = lo < n && f[lo]->value < limit ? f[lo]->value : limit;
    if (*end <= *start)
        *end = *start + 4;
}

const char *est_procedure_at(const image *img, uint64_t offset, char *buf, size_t size,
                             uint64_t *start, uint64_t *end)
{
    const image_symbol *f = image_function_at(img, offset);
    if (f) {
        est_function_extent(img, f, start, end);
        return f->name;
    }
    *start = *end = 0;
    const image_section *sec = image_section_at(img, offset);
    if (sec)
        snprintf(buf, size, "[%s]", sec->name);
    else
        snprintf(buf, size, "%s", EST_NO_SECTION_NAME);
    return buf;
}

typedef struct {
    est_row *v;
    size_t n, cap;
    size_t nev;
} rowvec;

static est_row *push(rowvec *rv, size_t ii, const char *name, uint64_t start, uint64_t end)
{
    if (rv->n == rv->cap) {
        size_t cap = rv->cap ? 2 * rv->cap : 64;
        est_row *nv = realloc(rv->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        rv->v = nv;
        rv->cap = cap;
    }
    est_row *r = &rv->v[rv->n];
    *r = (est_row){ .image = ii, .start = start, .end = end };
    r->counts = calloc(rv->nev ? rv->nev : 1, sizeof *r->counts);
    if (!r->counts || (name && !(r->name = strdup(name)))) {
        free(r->counts);
        free(r->name);
        return NULL;
    }
    rv->n++;
    return r;
}

static void add_counts(uint64_t *to, const uint64_t *from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        to[i] = est_add_sat(to[i], from[i]);
}

static bool any(const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i])
            return true;
    return false;
}

static int cmp_place(const void *a, const void *b)
{
    const est_row *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One read image: the offsets are sorted, so consecutive samples mostly
 * fall in the procedure of the one before; the rows are then sorted by
 * place and equal ones folded, which also catches the rare procedure
 * whose samples are interleaved with another's (overlapping symbols). */
static bool image_procedures(const est_set *s, size_t ii, rowvec *rv)
{
    const est_image *im = &s->images[ii];
    size_t base = rv->n, nev = s->nevents;
    char buf[300];
    for (size_t i = 0; i < im->n; i++) {
        uint64_t start, end;
        const char *name = est_procedure_at(im->img, im->offsets[i], buf, sizeof buf, &start, &end);
        est_row *last = rv->n > base ? &rv->v[rv->n - 1] : NULL;
        if (!last || last->start != start || strcmp(last->name, name)) {
            if (!(last = push(rv, ii, name, start, end)))
                return false;
        }
        add_counts(last->counts, &im->counts[i * nev], nev);
    }
    size_t n = rv->n - base;
    if (n < 2)
        return true;
    est_row *v = rv->v + base;
    qsort(v, n, sizeof *v, cmp_place);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].start == v[i].start && !strcmp(v[k - 1].name, v[i].name)) {
            add_counts(v[k - 1].counts, v[i].counts, nev);
            free(v[i].name);
            free(v[i].counts);
        } else {
            v[k++] = v[i];
        }
    }
    rv->n = base + k;
    return true;
}

bool est_procedures(const est_set *s, est_row **rows, size_t *n, est_error *err)
{
    rowvec rv = { .nev = s->nevents };
    bool ok = true;
    for (size_t i = 0; ok && i < s->nimages; i++) {
        const est_image *im = &s->images[i];
        if (!any(im->totals, s->nevents))
            continue;
        if (im->status == EST_IMAGE_READ) {
            ok = image_procedures(s, i, &rv);
            continue;
        }
        est_row *r = push(&rv, i, im->status == EST_IMAGE_UNKNOWN ? EST_UNKNOWN_NAME : EST_NOT_READ_NAME,
                          0, 0);
        if (!r)
            ok = false;
        else
            add_counts(r->counts, im->totals, s->nevents);
    }
    if (!ok) {
        est_rows_free(rv.v, rv.n);
        if (err)
            snprintf(err->msg, sizeof err->msg, "out of memory");
        return false;
    }
    *rows = rv.v;
    *n = rv.n;
    return true;
}

bool est_images(const est_set *s, est_row **rows, size_t *n, est_error *err)
{
    rowvec rv = { .nev = s->nevents };
    for (size_t i = 0; i < s->nimages; i++) {
        const est_image *im = &s->images[i];
        if (!any(im->totals, s->nevents))
            continue;
        est_row *r = push(&rv, i, NULL, 0, 0);
        if (!r) {
            est_rows_free(rv.v, rv.n);
            if (err)
                snprintf(err->msg, sizeof err->msg, "out of memory");
            return false;
        }
        add_counts(r->counts, im->totals, s->nevents);
    }
    *rows = rv.v;
    *n = rv.n;
    return true;
}

typedef struct {
    const est_set *s;
    size_t by;
} sortctx;

static int cmp_rank(const void *a, const void *b, void *ctx)
{
    const est_row *x = a, *y = b;
    const sortctx *c = ctx;
    size_t nev = c->s->nevents;
    if (c->by < nev && x->counts[c->by] != y->counts[c->by])
        return x->counts[c->by] > y->counts[c->by] ? -1 : 1;
    for (size_t e = 0; e < nev; e++)
        if (x->counts[e] != y->counts[e])
            return x->counts[e] > y->counts[e] ? -1 : 1;
    int d = strcmp(c->s->images[x->image].path, c->s->images[y->image].path);
    if (d)
        return d;
    d = strcmp(c->s->images[x->image].key, c->s->images[y->image].key);
    if (d)
        return d;
    if (x->name && y->name && (d = strcmp(x->name, y->name)))
        return d;
    return x->start < y->start ? -1 : x->start > y->start;
}

void est_rows_sort(const est_set *s, est_row *rows, size_t n, size_t by)
{
    sortctx c = { s, by };
    if (n > 1)
        qsort_r(rows, n, sizeof *rows, cmp_rank, &c);
}

void est_rows_free(est_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].counts);
    }
    free(rows);
}
