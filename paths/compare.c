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
