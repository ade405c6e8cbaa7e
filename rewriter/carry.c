/*
 * rewriter/carry.c: the address map as the estimator's lookups.
 */
#include <stdlib.h>
#include <string.h>

#include "rewriter/carry.h"

static int by_orig(const void *a, const void *b)
{
    const addrmap_entry *x = a, *y = b;
    return x->orig < y->orig ? -1 : x->orig > y->orig;
}

static uint64_t fwd_to_orig(void *ctx, uint64_t addr)
{
    return addrmap_lookup(((rw_est_map *)ctx)->m, addr, NULL);
}

static bool fwd_added(void *ctx, uint64_t addr)
{
    int kind;
    addrmap_lookup(((rw_est_map *)ctx)->m, addr, &kind);
    return kind == AM_BRANCH;
}

static uint64_t fwd_to_new(void *ctx, uint64_t orig)
{
    const rw_est_map *f = ctx;
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->by_orig[mid].orig + f->by_orig[mid].len <= orig)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < f->n && f->by_orig[lo].orig <= orig)
        return f->by_orig[lo].new_addr + (orig - f->by_orig[lo].orig);
    return 0;
}

bool rw_est_map_init(rw_est_map *fm, const addrmap *m, est_addr_map *out)
{
    *fm = (rw_est_map){ .m = m, .by_orig = malloc((m->n ? m->n : 1) * sizeof *fm->by_orig) };
    if (!fm->by_orig)
        return false;
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].kind == AM_CODE)
            fm->by_orig[fm->n++] = m->e[i];
    qsort(fm->by_orig, fm->n, sizeof *fm->by_orig, by_orig);
    *out = (est_addr_map){ fm, fwd_to_orig, fwd_to_new, fwd_added };
    return true;
}

void rw_est_map_free(rw_est_map *fm)
{
    free(fm->by_orig);
    memset(fm, 0, sizeof *fm);
}
