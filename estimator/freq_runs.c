/*
 * estimator/freq_runs.c: an image's summed estimate split among the kinds
 * of process that ran it (est_freq_runs; estimator/freq.h).
 *
 * cpod keeps a cycle profile per process for the images named with
 * --per-process (event "cycles@pid-N").  Rather than estimate each process
 * again from its own share of the samples (one run of lua's training at
 * the bench's period: 71,000 to 430,000 of 2.7 million), its samples say
 * what share of each frequency class's executions it ran:
 * the blocks and edges of a class execute together, so the share of the
 * class's samples is the share of its executions, whatever the stalls.
 * The summed estimate, taken apart by those shares, keeps its flow and its
 * confidence and tells what each kind of process ran; the I-cache model
 * walks each apart, so that code two kinds of process ran at different
 * times does not look as if it ran together.
 *
 * Processes whose samples by procedure point the same way (a cosine of at
 * least EST_SAME_WORK) are one kind: pooled, their shares are steadier,
 * and eleven runs of one test set are one run, not eleven.  At most
 * EST_MAX_RUNS kinds; past that a process joins the kind nearest it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/freq.h"
#include "estimator/freq_internal.h"
#include "estimator/samples.h"

#define EST_MAX_RUNS 16
#define EST_SAME_WORK 0.9

typedef struct splitter {
    const cfg_program *cfg;
    const est_image *im;
    size_t np, nk;              /* processes; kinds */
    uint32_t *proc_of, *class_of;   /* per sampled offset (UINT32_MAX: none) */
    uint32_t *cbase;            /* per procedure: its first class, image-wide */
    size_t nclasses;
    double *byproc;             /* np x nprocs: samples */
    uint32_t *kind;             /* per process */
    double *kproc, *kclass;     /* nk x nprocs, nk x nclasses: samples */
    double *ktotal;
    double *ctotal, *ptotal;    /* per class, per procedure: over every kind */
    double all;                 /* every kind's samples */
} splitter;

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* Where each sampled offset lies: procedure and frequency class. */
static bool locate(splitter *S)
{
    const cfg_program *cfg = S->cfg;
    const est_image *im = S->im;
    S->cbase = malloc((cfg->nprocs + 1) * sizeof *S->cbase);
    S->proc_of = malloc((im->n + 1) * sizeof *S->proc_of);
    S->class_of = malloc((im->n + 1) * sizeof *S->class_of);
    if (!S->cbase || !S->proc_of || !S->class_of)
        return false;
    for (size_t i = 0; i < cfg->nprocs; i++) {
        S->cbase[i] = (uint32_t)S->nclasses;
        S->nclasses += cfg->procs[i].nclasses;
    }
    for (size_t k = 0; k < im->n; k++) {
        const cfg_proc *p = cfg_proc_at(cfg, im->offsets[k]);
        uint32_t b = p ? cfg_block_at(p, im->offsets[k]) : CFG_NONE;
        S->proc_of[k] = p ? (uint32_t)(p - cfg->procs) : UINT32_MAX;
        S->class_of[k] = b != CFG_NONE && p->blocks[b].eqclass != CFG_NONE
                             ? S->cbase[p - cfg->procs] + p->blocks[b].eqclass
                             : UINT32_MAX;
    }
    return true;
}

/* Processes into kinds, the busiest first. */
static bool sort_kinds(splitter *S)
{
    size_t np = S->np, nprocs = S->cfg->nprocs;
    const est_image *im = S->im;
    S->byproc = calloc(np * nprocs + 1, sizeof *S->byproc);
    S->kind = malloc((np + 1) * sizeof *S->kind);
    S->kproc = calloc(EST_MAX_RUNS * nprocs + 1, sizeof *S->kproc);
    double *norm = calloc(np + 1, sizeof *norm), *knorm = calloc(EST_MAX_RUNS, sizeof *knorm);
    uint32_t *busy = malloc((np + 1) * sizeof *busy);
    bool ok = S->byproc && S->kind && S->kproc && norm && knorm && busy;
    for (size_t k = 0; ok && k < im->n; k++)
        if (S->proc_of[k] != UINT32_MAX)
            for (size_t e = 0; e < np; e++)
                S->byproc[e * nprocs + S->proc_of[k]] += (double)im->counts[k * im->nevents + e];
    for (size_t e = 0; ok && e < np; e++) {
        norm[e] = sqrt(dot(S->byproc + e * nprocs, S->byproc + e * nprocs, nprocs));
        busy[e] = (uint32_t)e;
    }
    /* a selection sort by samples: at most EST_MAX_PROCESSES of them */
    for (size_t a = 0; ok && a < np; a++)
        for (size_t b = a + 1; b < np; b++)
            if (im->totals[busy[b]] > im->totals[busy[a]]) {
                uint32_t t = busy[a];
                busy[a] = busy[b], busy[b] = t;
            }
    for (size_t x = 0; ok && x < np; x++) {
        uint32_t e = busy[x], best = UINT32_MAX;
        double bc = -1;
        if (norm[e] <= 0)
            continue;
        for (uint32_t g = 0; g < S->nk; g++) {
            double c = dot(S->kproc + g * nprocs, S->byproc + e * nprocs, nprocs) / (knorm[g] * norm[e]);
            if (c > bc)
                bc = c, best = g;
        }
        if (best == UINT32_MAX || (bc < EST_SAME_WORK && S->nk < EST_MAX_RUNS))
            best = (uint32_t)S->nk++;
        S->kind[e] = best;
        double *v = S->kproc + best * nprocs;
        for (size_t i = 0; i < nprocs; i++)
            v[i] += S->byproc[e * nprocs + i];
        knorm[best] = sqrt(dot(v, v, nprocs));
    }
    for (size_t x = 0; ok && x < np; x++)
        if (norm[busy[x]] <= 0)
            S->kind[busy[x]] = UINT32_MAX;
    free(norm), free(knorm), free(busy);
    return ok;
}

static bool class_samples(splitter *S)
{
    const est_image *im = S->im;
    size_t nprocs = S->cfg->nprocs;
    S->kclass = calloc(S->nk * S->nclasses + 1, sizeof *S->kclass);
    S->ktotal = calloc(S->nk + 1, sizeof *S->ktotal);
    S->ctotal = calloc(S->nclasses + 1, sizeof *S->ctotal);
    S->ptotal = calloc(nprocs + 1, sizeof *S->ptotal);
    if (!S->kclass || !S->ktotal || !S->ctotal || !S->ptotal)
        return false;
    for (size_t k = 0; k < im->n; k++)
        for (size_t e = 0; e < S->np; e++) {
            double x = (double)im->counts[k * im->nevents + e];
            if (S->kind[e] == UINT32_MAX || !x || S->proc_of[k] == UINT32_MAX)
                continue;
            S->ktotal[S->kind[e]] += x;
            S->all += x;
            if (S->class_of[k] != UINT32_MAX) {
                S->kclass[S->kind[e] * S->nclasses + S->class_of[k]] += x;
                S->ctotal[S->class_of[k]] += x;
            }
        }
    for (size_t g = 0; g < S->nk; g++)
        for (size_t i = 0; i < nprocs; i++)
            S->ptotal[i] += S->kproc[g * nprocs + i];
    return true;
}

/* Kind g's share of class c of procedure i, or -1 when the class has no
 * samples. */
static double class_share(const splitter *S, size_t g, uint32_t i, uint32_t c)
{
    if (c == CFG_NONE || S->ctotal[S->cbase[i] + c] <= 0)
        return -1;
    return S->kclass[g * S->nclasses + S->cbase[i] + c] / S->ctotal[S->cbase[i] + c];
}

/* Kind g's share of procedure i's samples, else of the image's. */
static double proc_share(const splitter *S, size_t g, uint32_t i)
{
    if (S->ptotal[i] > 0)
        return S->kproc[g * S->cfg->nprocs + i] / S->ptotal[i];
    return S->all > 0 ? S->ktotal[g] / S->all : 0;
}

/* An edge's share: its class's; an edge class holds no block when a
 * branch splits the flow, so then its target's, its source's, its
 * procedure's. */
static double edge_share(const splitter *S, size_t g, uint32_t i, const cfg_edge *E)
{
    const cfg_proc *p = &S->cfg->procs[i];
    double x = class_share(S, g, i, E->eqclass);
    if (x < 0 && E->to < p->nblocks)
        x = class_share(S, g, i, p->blocks[E->to].eqclass);
    if (x < 0 && E->from < p->nblocks)
        x = class_share(S, g, i, p->blocks[E->from].eqclass);
    return x < 0 ? proc_share(S, g, i) : x;
}

/* A block kind g ran must leave somewhere: where the shares took every
 * edge out of it to nothing, its edges keep the sum's proportions. */
static void keep_exits(const cfg_proc *p, const est_proc_freq *a, est_proc_freq *q)
{
    for (size_t b = 0; b < p->nblocks; b++) {
        const cfg_block *B = &p->blocks[b];
        double out = 0, sum = 0;
        for (uint32_t k = 0; k < B->nout; k++) {
            out += q->edge[p->out_edges[B->first_out + k]];
            sum += a->edge[p->out_edges[B->first_out + k]];
        }
        if (q->block[b] <= 0 || out > 0 || sum <= 0 || a->block[b] <= 0)
            continue;
        for (uint32_t k = 0; k < B->nout; k++) {
            uint32_t e = p->out_edges[B->first_out + k];
            q->edge[e] = a->edge[e] * q->block[b] / a->block[b];
        }
    }
}

static est_freq *kind_freq(const splitter *S, const est_freq *sum, size_t g)
{
    const cfg_program *cfg = S->cfg;
    est_freq *f = est_freq_new(cfg);
    for (size_t i = 0; f && i < cfg->nprocs; i++) {
        const cfg_proc *p = &cfg->procs[i];
        const est_proc_freq *a = &sum->procs[i];
        est_proc_freq *q = &f->procs[i];
        for (size_t b = 0; b < p->nblocks; b++)
            if (a->block[b] > 0) {
                double x = class_share(S, g, (uint32_t)i, p->blocks[b].eqclass);
                q->block[b] = a->block[b] * (x < 0 ? proc_share(S, g, (uint32_t)i) : x);
            }
        for (size_t e = 0; e < p->nedges; e++)
            if (a->edge[e] > 0)
                q->edge[e] = a->edge[e] * edge_share(S, g, (uint32_t)i, &p->edges[e]);
        keep_exits(p, a, q);
        memcpy(q->block_conf, a->block_conf, p->nblocks);
        memcpy(q->edge_conf, a->edge_conf, p->nedges);
    }
    return f;
}

static void splitter_free(splitter *S)
{
    free(S->proc_of), free(S->class_of), free(S->cbase), free(S->byproc), free(S->kind);
    free(S->kproc), free(S->kclass), free(S->ktotal), free(S->ctotal), free(S->ptotal);
}

bool est_freq_runs(const struct est_selection *selp, const cfg_program *cfg, const est_freq *sum,
                   est_run **runs, size_t *nruns, char *err, size_t errlen)
{
    *runs = NULL;
    *nruns = 0;
    est_selection sel = *selp;
    sel.processes = true;
    est_set s;
    const est_image *im;
    if (!est_load_image(&sel, cfg->img, NULL, 0, &s, &im, err, errlen))
        return false;
    splitter S = { .cfg = cfg, .im = im, .np = s.nevents };
    bool ok = true;
    if (im && S.np > 1) {
        ok = locate(&S) && sort_kinds(&S) && class_samples(&S);
        if (ok && S.nk > 1 && !(*runs = calloc(S.nk, sizeof **runs)))
            ok = false;
        for (size_t g = 0; ok && S.nk > 1 && g < S.nk; g++) {
            (*runs)[g].share = S.all > 0 ? S.ktotal[g] / S.all : 0;
            for (size_t e = 0; e < S.np; e++)
                (*runs)[g].processes += S.kind[e] == g;
            ok = ((*runs)[g].freq = kind_freq(&S, sum, g)) != NULL;
            *nruns += ok;
        }
    }
    splitter_free(&S);
    est_free(&s);
    if (!ok) {
        est_runs_free(*runs, *nruns);
        *runs = NULL;
        *nruns = 0;
        snprintf(err, errlen, "out of memory");
    }
    return ok;
}

void est_runs_free(est_run *runs, size_t n)
{
    for (size_t k = 0; runs && k < n; k++)
        est_freq_free(runs[k].freq);
    free(runs);
}
