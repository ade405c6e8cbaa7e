/*
 * estimator/accuracy.c: estimates against exact counts (est_accuracy_of).
 */
#include <math.h>
#include <string.h>

#include "estimator/freq.h"

static void add(est_accuracy_part *p, double est, double truth, double w, uint8_t conf)
{
    if (w <= 0)
        return;
    double err = truth > 0 ? (est - truth) / truth : est > 0.5 ? INFINITY : 0;
    double a = fabs(err);
    p->weight += w;
    for (int k = 0; k < 3; k++)
        if (a <= 0.05 * (k + 1) + 1e-12)
            p->within[k] += w;
    int bin = err >= 0.5 ? EST_ACC_BINS - 1 : err < -0.45 ? 0 : (int)floor((err + 0.5) / 0.05);
    if (bin < 1 && err >= -0.45)
        bin = 1;
    if (bin > EST_ACC_BINS - 2 && err < 0.5)
        bin = EST_ACC_BINS - 2;
    p->hist[bin] += w;
    if (conf < 3) {
        p->conf_weight[conf] += w;
        if (a <= 0.05 + 1e-12)
            p->conf_within5[conf] += w;
    }
}

bool est_two_way(const cfg_proc *f, size_t b, const est_proc_freq *truth, uint32_t *hot, uint32_t *other)
{
    const cfg_block *B = &f->blocks[b];
    if (B->nout != 2)
        return false;
    uint32_t x = f->out_edges[B->first_out], y = f->out_edges[B->first_out + 1];
    if (f->edges[x].to >= f->nblocks || f->edges[y].to >= f->nblocks || truth->edge[x] == truth->edge[y])
        return false;
    *hot = truth->edge[x] > truth->edge[y] ? x : y;
    *other = *hot == x ? y : x;
    return true;
}

/* Does the estimate name the hotter side of each two-way branch?  That is
 * what a block order needs of it. */
static void branches_of(const cfg_proc *f, const est_proc_freq *e, const est_proc_freq *t,
                        est_accuracy_branches *out)
{
    for (size_t b = 0; b < f->nblocks; b++) {
        uint32_t hot, other;
        if (!est_two_way(f, b, t, &hot, &other))
            continue;
        double w = t->edge[hot] - t->edge[other];
        out->weight += w;
        out->count++;
        if (e->edge[hot] > e->edge[other])
            out->named += w;
        else
            out->wrong++;
    }
}

static void edges_of(const est_freq *est, const est_freq *truth, est_accuracy *out)
{
    const cfg_program *cfg = est->cfg;
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const est_proc_freq *e = &est->procs[p], *t = &truth->procs[p];
        for (size_t k = 0; k < cfg->procs[p].nedges; k++)
            add(&out->edges, e->edge[k], t->edge[k], t->edge[k], e->edge_conf[k]);
        branches_of(&cfg->procs[p], e, t, &out->branches);
    }
}

void est_accuracy_of(const est_freq *est, const est_sched *sched, const est_freq *truth,
                     est_accuracy *out)
{
    memset(out, 0, sizeof *out);
    const cfg_program *cfg = est->cfg;
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const cfg_proc *f = &cfg->procs[p];
        const est_proc_freq *e = &est->procs[p], *t = &truth->procs[p];
        for (size_t b = 0; b < f->nblocks; b++) {
            double w = 0;
            const est_block_sched *bs = sched && sched->procs[p].blocks ? &sched->procs[p].blocks[b] : NULL;
            for (uint32_t i = 0; bs && i < bs->n; i++)
                w += bs->samples[i];
            add(&out->blocks, e->block[b], t->block[b], w, e->block_conf[b]);
        }
    }
    edges_of(est, truth, out);
}

void est_accuracy_by(const est_freq *est, double *const *weight, const est_freq *truth, est_accuracy *out)
{
    memset(out, 0, sizeof *out);
    const cfg_program *cfg = est->cfg;
    for (size_t p = 0; p < cfg->nprocs; p++)
        for (size_t b = 0; weight[p] && b < cfg->procs[p].nblocks; b++)
            add(&out->blocks, est->procs[p].block[b], truth->procs[p].block[b], weight[p][b],
                est->procs[p].block_conf[b]);
    edges_of(est, truth, out);
}
