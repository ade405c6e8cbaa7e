/*
 * paths/compare.c: matching the contexts of two trees (compare.h).
 */
#include <stdlib.h>
#include <string.h>

#include "paths/compare.h"

static bool same_image(const cct *a, int32_t ia, const cct *b, int32_t ib)
{
    if (ia < 0 || ib < 0)
        return ia == ib;
    const cct_image *x = &a->images[ia], *y = &b->images[ib];
    if (x->build_id[0] && y->build_id[0])
        return !strcmp(x->build_id, y->build_id);
    return !strcmp(x->path, y->path);
}

/* For each node of b, its twin in a: the child of its parent's twin with
 * the same image, procedure and call site (parents come first). */
static uint32_t *twins(const cct *a, const cct *b)
{
    uint32_t *tw = malloc((b->nnodes ? b->nnodes : 1) * sizeof *tw);
    if (!tw)
        return NULL;
    tw[CCT_ROOT] = CCT_ROOT;
    for (size_t i = 1; i < b->nnodes; i++) {
        const cct_node *n = &b->nodes[i];
        uint32_t pa = tw[n->parent];
        tw[i] = CCT_NONE;
        if (pa == CCT_NONE)
            continue;
        for (uint32_t c = a->nodes[pa].first_child; c != CCT_NONE; c = a->nodes[c].next_sibling) {
            const cct_node *m = &a->nodes[c];
            if (m->proc == n->proc && m->site == n->site && same_image(a, m->image, b, n->image)) {
                tw[i] = c;
                break;
            }
        }
    }
    return tw;
}

static uint64_t total(const cct *t, int m)
{
    uint64_t s = 0;
    for (size_t i = 0; i < t->nnodes; i++)
        s += cct_metrics(t, (uint32_t)i)[m];
    return s;
}

size_t cct_compare(const cct *a, int ma, const cct *b, int mb, size_t top, cct_pair *out)
{
    uint32_t *tw = twins(a, b);
    if (!tw)
        return 0;
    uint64_t ta = total(a, ma), tb = total(b, mb);
    size_t n = 0;
    /* the top contexts of b by selection: few, so a pass per place */
    bool *taken = calloc(b->nnodes ? b->nnodes : 1, 1);
    while (taken && n < top) {
        uint32_t best = CCT_NONE;
        uint64_t bv = 0;
        for (uint32_t i = 0; i < b->nnodes; i++) {
            uint64_t v = cct_metrics(b, i)[mb];
            if (!taken[i] && v > bv) {
                bv = v;
                best = i;
            }
        }
        if (best == CCT_NONE)
            break;
        taken[best] = true;
        uint32_t x = tw[best];
        out[n++] = (cct_pair){ x, best, x == CCT_NONE || !ta ? 0 : (double)cct_metrics(a, x)[ma] / (double)ta,
                               tb ? (double)bv / (double)tb : 0 };
    }
    free(taken);
    free(tw);
    return n;
}

/* ---- folding b's contexts of code a does not count --------------------- */

typedef struct aproc {
    uint64_t proc;
    int32_t image;
} aproc;

static int aproc_cmp(const void *x, const void *y)
{
    uint64_t p = ((const aproc *)x)->proc, q = ((const aproc *)y)->proc;
    return p < q ? -1 : p > q;
}

/* Whether a has a node of b's node n's procedure: a binary search by
 * address, then the images (by build-id) of the few with that address. */
static bool counted(const cct *a, const aproc *ps, size_t n, const cct *b, const cct_node *bn)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps[mid].proc < bn->proc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && ps[lo].proc == bn->proc; lo++)
        if (same_image(a, ps[lo].image, b, bn->image))
            return true;
    return false;
}

cct *cct_fold_to(const cct *a, const cct *b, size_t *folded)
{
    *folded = 0;
    cct *t = cct_new((const char *const *)b->metric, b->nmetrics);
    aproc *ps = malloc((a->nnodes ? a->nnodes : 1) * sizeof *ps);
    uint32_t *to = malloc((b->nnodes ? b->nnodes : 1) * sizeof *to);
    uint64_t *leave = malloc((b->nnodes ? b->nnodes : 1) * sizeof *leave);
    bool ok = t && ps && to && leave;
    for (size_t i = 0; ok && i < b->nimages; i++)
        ok = cct_image_add(t, b->images[i].path, b->images[i].build_id) == (int)i;
    if (!ok)
        goto out;
    size_t np = 0;
    for (size_t i = 1; i < a->nnodes; i++)
        ps[np++] = (aproc){ a->nodes[i].proc, a->nodes[i].image };
    qsort(ps, np, sizeof *ps, aproc_cmp);
    int calls = cct_metric(b, "calls");
    /* to[i]: the node of t that b's node i is, or (folded) goes into;
     * leave[i] (folded): the call site by which its chain left to[i] */
    to[CCT_ROOT] = CCT_ROOT;
    memcpy(cct_metrics(t, CCT_ROOT), cct_metrics(b, CCT_ROOT), b->nmetrics * sizeof(uint64_t));
    for (uint32_t i = 1; ok && i < b->nnodes; i++) {
        const cct_node *n = &b->nodes[i];
        uint32_t p = n->parent;
        bool pkept = p == CCT_ROOT || leave[p] == UINT64_MAX;
        uint64_t site = pkept ? n->site : leave[p];
        if (counted(a, ps, np, b, n)) {
            to[i] = cct_call(t, to[p], site, n->image, n->proc, n->name);
            leave[i] = UINT64_MAX;
            ok = to[i] != CCT_NONE;
        } else {
            to[i] = to[p];
            leave[i] = site;
            ++*folded;
        }
        for (size_t q = 0; ok && q < b->nmetrics; q++)
            if (leave[i] == UINT64_MAX || (int)q != calls)
                cct_metrics(t, to[i])[q] += cct_metrics(b, i)[q];
    }
out:
    free(ps);
    free(to);
    free(leave);
    if (!ok) {
        cct_free(t);
        return NULL;
    }
    return t;
}
