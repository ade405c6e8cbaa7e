/*
 * estimator/profileme.c: per-instruction metrics and counted frequencies
 * from ProfileMe samples (see profileme.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/profileme.h"
#include "estimator/samples.h"

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : NAN;
}

void est_pm_metrics_of(const profdb_pm *e, est_pm_metrics *out)
{
    const uint64_t *c = e->c;
    uint64_t s = c[PDPM_SAMPLES];
    out->samples = (double)s;
    out->executions = (double)c[PDPM_WEIGHT2] / 2;
    out->imiss = ratio(c[PDPM_IMISS], s);
    out->itbmiss = ratio(c[PDPM_ITBMISS], s);
    out->dtbmiss = c[PDPM_LOADS] + c[PDPM_STORES] ? ratio(c[PDPM_DTBMISS], c[PDPM_LOADS] + c[PDPM_STORES]) : NAN;
    out->dmiss = ratio(c[PDPM_DMISS], c[PDPM_LOADS]);
    out->mispredict = ratio(c[PDPM_MISPREDICT], c[PDPM_CBRANCH] + c[PDPM_JUMPS]);
    out->taken = ratio(c[PDPM_TAKEN], c[PDPM_CBRANCH]);
    out->fetch_issue = ratio(c[PDPM_LAT_FETCH], s);
    out->head = ratio(c[PDPM_LAT_HEAD], s);
    out->issue_ready = ratio(c[PDPM_LAT_ISSUE], s);
    out->load = ratio(c[PDPM_LAT_LOAD], c[PDPM_LOADS]);
    out->slots = out->slots_used = out->wasted = NAN;
    if (c[PDPM_PAIRED]) {
        out->slots = (double)c[PDPM_SLOTS];
        out->slots_used = (double)c[PDPM_SLOTS_USED];
        out->wasted = out->slots - out->slots_used;
    }
}

const profdb_pm *est_pm_at(const profdb_pm *e, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].offset < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && e[lo].offset == addr ? &e[lo] : NULL;
}

void est_pm_samples_free(double **w, size_t nprocs)
{
    for (size_t p = 0; w && p < nprocs; p++)
        free(w[p]);
    free(w);
}

/* Blocks: the executions of the instructions of their frequency class
 * (cfg/, blocks that run equally often) averaged, which pools the
 * samples of every block of the class; *samples each block's own. */
static bool count_blocks(const cfg_proc *f, est_proc_freq *q, const profdb_pm *e, size_t n, double *samples)
{
    size_t nc = f->nclasses ? f->nclasses : 1;
    double *ex = calloc(nc, sizeof *ex), *ni = calloc(nc, sizeof *ni), *sc = calloc(nc, sizeof *sc);
    if (!ex || !ni || !sc) {
        free(ex);
        free(ni);
        free(sc);
        return false;
    }
    for (size_t b = 0; b < f->nblocks; b++) {
        const cfg_block *bk = &f->blocks[b];
        size_t c = bk->eqclass < nc ? bk->eqclass : 0;
        double s = 0;
        for (uint64_t pc = bk->start; pc < bk->end; pc += 4) {
            const profdb_pm *x = est_pm_at(e, n, pc);
            if (x) {
                ex[c] += (double)x->c[PDPM_WEIGHT2] / 2;
                s += (double)x->c[PDPM_SAMPLES];
            }
        }
        ni[c] += (double)((bk->end - bk->start) / 4);
        sc[c] += s;
        if (samples)
            samples[b] = s;
    }
    for (size_t b = 0; b < f->nblocks; b++) {
        size_t c = f->blocks[b].eqclass < nc ? f->blocks[b].eqclass : 0;
        q->block[b] = ni[c] > 0 ? ex[c] / ni[c] : 0;
        q->block_conf[b] = sc[c] >= 400 ? EST_CONF_HIGH : sc[c] >= 25 ? EST_CONF_MEDIUM : EST_CONF_LOW;
        q->block_from[b] = sc[c] > 0 ? EST_FROM_SAMPLES : EST_FROM_NONE;
        q->block_cap[b] = INFINITY;
    }
    free(ex);
    free(ni);
    free(sc);
    return true;
}

/* Edges out of each block: the branch's own share of taken samples, the
 * whole block for a lone edge, table targets by their estimates. */
static void count_edges(const cfg_proc *f, est_proc_freq *q, const profdb_pm *e, size_t n)
{
    for (size_t b = 0; b < f->nblocks; b++) {
        const cfg_block *bk = &f->blocks[b];
        const profdb_pm *last = bk->end > bk->start ? est_pm_at(e, n, bk->end - 4) : NULL;
        double taken = last && last->c[PDPM_CBRANCH] ? (double)last->c[PDPM_TAKEN] / (double)last->c[PDPM_CBRANCH]
                                                      : NAN;
        double targets = 0;
        for (uint32_t k = 0; k < bk->nout; k++) {
            const cfg_edge *ed = &f->edges[f->out_edges[bk->first_out + k]];
            targets += ed->to < f->nblocks ? q->block[ed->to] : 0;
        }
        for (uint32_t k = 0; k < bk->nout; k++) {
            uint32_t ei = f->out_edges[bk->first_out + k];
            const cfg_edge *ed = &f->edges[ei];
            double v = q->block[b];
            if (bk->nout > 1 && !isnan(taken) && (ed->kind == CFG_EDGE_TAKEN || ed->kind == CFG_EDGE_FALL))
                v *= ed->kind == CFG_EDGE_TAKEN ? taken : 1 - taken;
            else if (bk->nout > 1)
                v = targets > 0 && ed->to < f->nblocks ? v * q->block[ed->to] / targets : v / bk->nout;
            q->edge[ei] = v;
            q->edge_conf[ei] = q->block_conf[b];
            q->edge_from[ei] = q->block_from[b];
        }
    }
    /* edges from the virtual entry: what enters the block beyond its
     * other predecessors */
    for (size_t k = 0; k < f->nedges; k++) {
        const cfg_edge *ed = &f->edges[k];
        if (ed->from != CFG_ENTRY || ed->to >= f->nblocks)
            continue;
        const cfg_block *bk = &f->blocks[ed->to];
        double in = 0;
        for (uint32_t j = 0; j < bk->nin; j++) {
            const cfg_edge *x = &f->edges[f->in_edges[bk->first_in + j]];
            if (x->from != CFG_ENTRY)
                in += q->edge[f->in_edges[bk->first_in + j]];
        }
        q->edge[k] = q->block[ed->to] > in ? q->block[ed->to] - in : 0;
        q->edge_conf[k] = q->block_conf[ed->to];
    }
}

est_freq *est_freq_from_pm(const cfg_program *cfg, const profdb_pm *e, size_t n, double ***pm_samples, char *err,
                           size_t errlen)
{
    est_freq *f = est_freq_new(cfg);
    double **w = pm_samples ? calloc(cfg->nprocs + 1, sizeof *w) : NULL;
    if (!f || (pm_samples && !w)) {
        snprintf(err, errlen, "out of memory");
        est_freq_free(f);
        free(w);
        return NULL;
    }
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const cfg_proc *pr = &cfg->procs[p];
        if (w && !(w[p] = calloc(pr->nblocks + 1, sizeof **w))) {
            snprintf(err, errlen, "out of memory");
            est_freq_free(f);
            est_pm_samples_free(w, cfg->nprocs);
            return NULL;
        }
        if (!count_blocks(pr, &f->procs[p], e, n, w ? w[p] : NULL)) {
            snprintf(err, errlen, "out of memory");
            est_freq_free(f);
            est_pm_samples_free(w, cfg->nprocs);
            return NULL;
        }
        count_edges(pr, &f->procs[p], e, n);
        for (size_t b = 0; w && b < pr->nblocks; b++)
            f->procs[p].samples += w[p][b];
    }
    if (pm_samples)
        *pm_samples = w;
    return f;
}

bool est_pm_load(const struct est_selection *sel, const char *key, profdb_pm **e, size_t *n, char *err,
                 size_t errlen)
{
    *e = NULL;
    *n = 0;
    profdb_error perr;
    profdb *db = profdb_open(sel->db, 0, &perr);
    if (!db) {
        snprintf(err, errlen, "%s", perr.msg);
        return false;
    }
    /* no epoch named: the current one, as for the PC profiles */
    char cur[PROFDB_EPOCH_MAX];
    const char *epoch = sel->epoch;
    bool ok = true;
    if (!sel->all_epochs && !epoch) {
        ok = profdb_current_epoch(db, cur, &perr);
        epoch = cur;
    }
    ok = ok && profdb_pm_sum(db, sel->all_epochs ? NULL : epoch, NULL, key, e, n, &perr);
    profdb_close(db);
    if (!ok && perr.code == PROFDB_ENOENT)
        return err[0] = '\0', true;
    if (!ok)
        snprintf(err, errlen, "%s", perr.msg);
    return ok;
}

double **est_pm_exec_weights(const est_freq *truth)
{
    const cfg_program *cfg = truth->cfg;
    double **w = calloc(cfg->nprocs + 1, sizeof *w);
    for (size_t p = 0; w && p < cfg->nprocs; p++) {
        const cfg_proc *f = &cfg->procs[p];
        if (!(w[p] = calloc(f->nblocks + 1, sizeof **w))) {
            est_pm_samples_free(w, cfg->nprocs);
            return NULL;
        }
        for (size_t b = 0; b < f->nblocks; b++)
            w[p][b] = truth->procs[p].block[b] * (double)((f->blocks[b].end - f->blocks[b].start) / 4);
    }
    return w;
}

bool est_pm_count_into(const struct est_selection *sel, const cfg_program *cfg, est_freq *f, char *err,
                       size_t errlen)
{
    char key[PROFDB_KEY_MAX];
    profdb_key(cfg->img->build_id, cfg->img->build_id_len, cfg->img->path, key);
    profdb_pm *e;
    size_t n;
    err[0] = '\0';
    if (!est_pm_load(sel, key, &e, &n, err, errlen))
        return false;
    if (!n)
        return true;
    double **w = NULL;
    est_freq *c = est_freq_from_pm(cfg, e, n, &w, err, errlen);
    free(e);
    if (!c)
        return false;
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const cfg_proc *pr = &cfg->procs[p];
        est_proc_freq *to = &f->procs[p];
        const est_proc_freq *from = &c->procs[p];
        memcpy(to->block, from->block, pr->nblocks * sizeof *to->block);
        memcpy(to->block_conf, from->block_conf, pr->nblocks);
        memcpy(to->block_from, from->block_from, pr->nblocks);
        memcpy(to->edge, from->edge, pr->nedges * sizeof *to->edge);
        memcpy(to->edge_conf, from->edge_conf, pr->nedges);
        memcpy(to->edge_from, from->edge_from, pr->nedges);
        memset(to->block_upper, 0, pr->nblocks);
        memset(to->edge_upper, 0, pr->nedges);
        f->pm_samples += from->samples;
    }
    est_pm_samples_free(w, cfg->nprocs);
    est_freq_free(c);
    return true;
}
