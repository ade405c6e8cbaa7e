/*
 * rewriter/carry.c: the address map as the estimator's lookups, and a
 * copy's estimates carried back onto its original.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/carry.h"

/* New to original by the map's own search, original to new through a
 * copy of its moved-code entries sorted by original address. */
typedef struct fwd_map {
    const addrmap *m;
    addrmap_entry *by_orig;
    size_t n;
} fwd_map;

static int by_orig(const void *a, const void *b)
{
    const addrmap_entry *x = a, *y = b;
    return x->orig < y->orig ? -1 : x->orig > y->orig;
}

static uint64_t fwd_to_orig(void *ctx, uint64_t addr)
{
    return addrmap_lookup(((fwd_map *)ctx)->m, addr, NULL);
}

static bool fwd_added(void *ctx, uint64_t addr)
{
    int kind;
    addrmap_lookup(((fwd_map *)ctx)->m, addr, &kind);
    return kind == AM_BRANCH;
}

static uint64_t fwd_to_new(void *ctx, uint64_t orig)
{
    const fwd_map *f = ctx;
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

typedef struct mapped {
    uint64_t addr;
    double samples;
} mapped;

static int by_addr(const void *a, const void *b)
{
    const mapped *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

bool rw_carry_samples(const addrmap *m, const uint64_t *addr, const double *samples, size_t n,
                      est_sample_col *out)
{
    mapped *v = malloc((n ? n : 1) * sizeof *v);
    uint64_t *a = malloc((n ? n : 1) * sizeof *a);
    double *s = malloc((n ? n : 1) * sizeof *s);
    memset(out, 0, sizeof *out);
    if (!v || !a || !s) {
        free(v);
        free(a);
        free(s);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (mapped){ addrmap_lookup(m, addr[i], NULL), samples[i] };
    qsort(v, n, sizeof *v, by_addr);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && a[k - 1] == v[i].addr) {
            s[k - 1] += v[i].samples;
            continue;
        }
        a[k] = v[i].addr;
        s[k++] = v[i].samples;
    }
    free(v);
    *out = (est_sample_col){ a, s, k };
    return true;
}

est_freq *rw_carry_estimates(const cfg_program *orig, const est_freq *copy_freq, const addrmap *m,
                             const est_sample_col *orig_samples, double period, est_sched **sched,
                             char *err, size_t errlen)
{
    fwd_map fm = { .m = m, .by_orig = malloc((m->n ? m->n : 1) * sizeof *fm.by_orig) };
    if (!fm.by_orig) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].kind == AM_CODE)
            fm.by_orig[fm.n++] = m->e[i];
    qsort(fm.by_orig, fm.n, sizeof *fm.by_orig, by_orig);
    est_freq *cf = NULL;
    est_freq *fb = est_freq_from_samples(orig, orig_samples, period, NULL, sched, err, errlen);
    if (fb) {
        est_addr_map am = { &fm, fwd_to_orig, fwd_to_new, fwd_added };
        cf = est_freq_carry(orig, copy_freq, fb, &am, err, errlen);
    }
    est_freq_free(fb);
    free(fm.by_orig);
    return cf;
}
