/*
 * estimator/freq.c: the frequency tables (estimator/freq.h).
 */
#include <math.h>
#include <stdlib.h>

#include "estimator/freq.h"

est_freq *est_freq_new(const cfg_program *cfg)
{
    est_freq *f = calloc(1, sizeof *f);
    if (!f || !(f->procs = calloc(cfg->nprocs ? cfg->nprocs : 1, sizeof *f->procs))) {
        free(f);
        return NULL;
    }
    f->cfg = cfg;
    for (size_t i = 0; i < cfg->nprocs; i++) {
        const cfg_proc *p = &cfg->procs[i];
        est_proc_freq *q = &f->procs[i];
        q->block = calloc(p->nblocks + 1, sizeof *q->block);
        q->block_conf = calloc(p->nblocks + 1, 1);
        q->edge = calloc(p->nedges + 1, sizeof *q->edge);
        q->edge_conf = calloc(p->nedges + 1, 1);
        q->block_from = calloc(p->nblocks + 1, 1);
        q->edge_from = calloc(p->nedges + 1, 1);
        q->block_cap = malloc((p->nblocks + 1) * sizeof *q->block_cap);
        q->block_upper = calloc(p->nblocks + 1, 1);
        q->edge_upper = calloc(p->nedges + 1, 1);
        if (!q->block || !q->block_conf || !q->edge || !q->edge_conf || !q->block_from ||
            !q->edge_from || !q->block_cap || !q->block_upper || !q->edge_upper) {
            est_freq_free(f);
            return NULL;
        }
        for (size_t b = 0; b < p->nblocks; b++)
            q->block_cap[b] = INFINITY;
    }
    return f;
}

void est_freq_add(est_freq *to, const est_freq *f)
{
    for (size_t i = 0; i < to->cfg->nprocs; i++) {
        const cfg_proc *p = &to->cfg->procs[i];
        est_proc_freq *a = &to->procs[i];
        const est_proc_freq *b = &f->procs[i];
        for (size_t k = 0; k < p->nblocks; k++) {
            a->block[k] += b->block[k];
            a->block_conf[k] = b->block_conf[k];
        }
        for (size_t k = 0; k < p->nedges; k++) {
            a->edge[k] += b->edge[k];
            a->edge_conf[k] = b->edge_conf[k];
        }
        a->samples += b->samples;
    }
}

void est_freq_free(est_freq *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->procs && i < f->cfg->nprocs; i++) {
        free(f->procs[i].block);
        free(f->procs[i].block_conf);
        free(f->procs[i].edge);
        free(f->procs[i].edge_conf);
        free(f->procs[i].block_from);
        free(f->procs[i].edge_from);
        free(f->procs[i].block_cap);
        free(f->procs[i].block_upper);
        free(f->procs[i].edge_upper);
    }
    free(f->procs);
    free(f);
}

const char *est_conf_name(unsigned conf)
{
    static const char *const names[] = { "low", "medium", "high", "exact" };
    return conf < 4 ? names[conf] : "?";
}
