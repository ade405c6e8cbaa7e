/*
 * estimator/stats.c: per-procedure statistics across profile sets
 * (estimator/stats.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/common.h"
#include "estimator/stats.h"

typedef struct {
    const char *image, *procedure;
    size_t set;
    uint64_t count;
} obs;

static int cmp_obs(const void *a, const void *b)
{
    const obs *x = a, *y = b;
    int d = strcmp(x->image, y->image);
    if (!d)
        d = strcmp(x->procedure, y->procedure);
    return d ? d : (x->set > y->set) - (x->set < y->set);
}

static int cmp_row(const void *a, const void *b)
{
    const est_stat_row *x = a, *y = b;
    /* (max - min) / sum compared exactly, by cross-multiplying. */
    unsigned __int128 rx = (unsigned __int128)(x->max - x->min) * y->sum;
    unsigned __int128 ry = (unsigned __int128)(y->max - y->min) * x->sum;
    if (rx != ry)
        return rx > ry ? -1 : 1;
    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    int d = strcmp(x->image, y->image);
    return d ? d : strcmp(x->procedure, y->procedure);
}

bool est_stats_compute(const est_set *sets, size_t nsets, const char *event, est_stats *out,
                       est_error *err)
{
    memset(out, 0, sizeof *out);
    out->nsets = nsets;
    if (!(out->set_totals = calloc(nsets ? nsets : 1, sizeof *out->set_totals)))
        return est_oom(err);
    est_row **rows = calloc(nsets ? nsets : 1, sizeof *rows);
    size_t *nrows = calloc(nsets ? nsets : 1, sizeof *nrows);
    obs *v = NULL;
    size_t nv = 0;
    bool ok = rows && nrows;
    if (!ok)
        est_oom(err);
    for (size_t k = 0; ok && k < nsets; k++) {
        int e = est_event_index(&sets[k], event);
        if (e < 0)
            continue;
        out->set_totals[k] = sets[k].totals[e];
        out->total = est_add_sat(out->total, sets[k].totals[e]);
        if (!(ok = est_procedures(&sets[k], &rows[k], &nrows[k], err)))
            break;
        obs *nvv = realloc(v, (nv + nrows[k] + 1) * sizeof *v);
        if (!nvv) {
            ok = est_oom(err);
            break;
        }
        v = nvv;
        for (size_t i = 0; i < nrows[k]; i++)
            if (rows[k][i].counts[e])
                v[nv++] = (obs){ sets[k].images[rows[k][i].image].path, rows[k][i].name, k,
                                 rows[k][i].counts[e] };
    }
    if (ok && nv)
        qsort(v, nv, sizeof *v, cmp_obs);
    /* One row per (image, procedure); observations of one set add up (two
     * builds of one program in the same set). */
    for (size_t i = 0; ok && i < nv;) {
        size_t j = i;
        while (j < nv && !strcmp(v[j].image, v[i].image) && !strcmp(v[j].procedure, v[i].procedure))
            j++;
        est_stat_row *nr = realloc(out->rows, (out->nrows + 1) * sizeof *nr);
        if (!nr) {
            ok = est_oom(err);
            break;
        }
        out->rows = nr;
        est_stat_row *r = &out->rows[out->nrows];
        memset(r, 0, sizeof *r);
        r->procedure = strdup(v[i].procedure);
        r->image = strdup(v[i].image);
        r->per_set = calloc(nsets, sizeof *r->per_set);
        if (!r->procedure || !r->image || !r->per_set) {
            free(r->procedure);
            free(r->image);
            free(r->per_set);
            ok = est_oom(err);
            break;
        }
        out->nrows++;
        for (size_t k = i; k < j; k++)
            r->per_set[v[k].set] = est_add_sat(r->per_set[v[k].set], v[k].count);
        r->min = UINT64_MAX;
        for (size_t k = 0; k < nsets; k++) {
            uint64_t c = r->per_set[k];
            r->present += c != 0;
            r->sum = est_add_sat(r->sum, c);
            if (c < r->min)
                r->min = c;
            if (c > r->max)
                r->max = c;
        }
        r->mean = (double)r->sum / (double)nsets;
        double ss = 0;
        for (size_t k = 0; k < nsets; k++) {
            double d = (double)r->per_set[k] - r->mean;
            ss += d * d;
        }
        r->stddev = nsets > 1 ? sqrt(ss / (double)(nsets - 1)) : 0.0;
        r->range_pct = r->sum ? 100.0 * (double)(r->max - r->min) / (double)r->sum : 0.0;
        r->sum_pct = out->total ? 100.0 * (double)r->sum / (double)out->total : 0.0;
        i = j;
    }
    if (ok && out->nrows > 1)
        qsort(out->rows, out->nrows, sizeof *out->rows, cmp_row);
    free(v);
    for (size_t k = 0; rows && k < nsets; k++)
        est_rows_free(rows[k], nrows[k]);
    free(rows);
    free(nrows);
    if (!ok)
        est_stats_free(out);
    return ok;
}

void est_stats_free(est_stats *st)
{
    for (size_t i = 0; i < st->nrows; i++) {
        free(st->rows[i].procedure);
        free(st->rows[i].image);
        free(st->rows[i].per_set);
    }
    free(st->rows);
    free(st->set_totals);
    memset(st, 0, sizeof *st);
}
