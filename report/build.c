/*
 * report/build.c: gathering a before-and-after report from the database.
 *
 * Samples per procedure come from the same rows `cpo prof` and `cpo diff`
 * print (estimator/samples.h), so the report's sample counts are theirs.
 * Executions, instructions, CPI and stall cycles come from the estimator
 * run on each image's own CFG: the blocks' estimated counts times the
 * static schedule give the cycles the schedule explains, by reason; what
 * the samples show beyond that is dynamic stall (cache misses, mispredicts
 * and the rest).
 */
#include <stdlib.h>
#include <string.h>

#include "alpha/ev5.h"
#include "estimator/freq.h"
#include "estimator/samples.h"
#include "report/report.h"

const char *rpt_cause_name(unsigned cause)
{
    if (cause == RPT_DYNAMIC)
        return "dynamic";
    if (cause < ASR_COUNT && cause != ASR_DUAL && cause != ASR_FIRST)
        return alpha_sched_reason_names[cause];
    return NULL;
}

static rpt_proc *proc_named(rpt *r, const char *name)
{
    for (size_t i = 0; i < r->nprocs; i++)
        if (!strcmp(r->procs[i].name, name))
            return &r->procs[i];
    rpt_proc *v = realloc(r->procs, (r->nprocs + 1) * sizeof *v);
    if (!v)
        return NULL;
    r->procs = v;
    rpt_proc *p = &v[r->nprocs];
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup(name)))
        return NULL;
    r->nprocs++;
    return p;
}

/* The image of a set with the build-id of the file at path. */
static const est_image *image_of(const est_set *s, const image *img)
{
    for (size_t i = 0; i < s->nimages; i++)
        if (img->build_id_len && s->images[i].build_id_len == img->build_id_len &&
            !memcmp(s->images[i].build_id, img->build_id, img->build_id_len))
            return &s->images[i];
    return NULL;
}

/* Samples per procedure and the side's totals, from the set's rows. */
static bool add_samples(rpt *r, int k, const est_set *s, const image *img, char *err,
                        size_t errlen)
{
    const est_image *im = image_of(s, img);
    if (!im)
        return true;
    int cyc = est_event_index(s, "cycles"), imiss = est_event_index(s, "imiss");
    int exits = est_event_index(s, PROFDB_EXITS_EVENT);
    rpt_side *sd = &r->side[k];
    sd->samples = cyc >= 0 ? (double)im->totals[cyc] : 0;
    sd->period = cyc >= 0 ? est_mean_period(im->period_sums[cyc], im->totals[cyc]) : 0;
    sd->imiss = imiss >= 0 ? (double)im->totals[imiss] : 0;
    r->has_imiss |= imiss >= 0 && im->totals[imiss] > 0;
    for (uint64_t how = 0; exits >= 0 && how < 3; how++) {
        const uint64_t *c = est_counts_at(im, how);
        sd->exits[how] = c ? c[exits] : 0;
    }
    uint64_t runs = sd->exits[0] + sd->exits[1] + sd->exits[2];
    sd->cycles_per_run = runs ? sd->samples * sd->period / (double)runs : 0;
    est_row *rows;
    size_t n;
    est_error ee;
    if (!est_procedures(s, &rows, &n, &ee)) {
        snprintf(err, errlen, "%s", ee.msg);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        if (rows[i].image != (size_t)(im - s->images) || !rows[i].name)
            continue;
        rpt_proc *p = proc_named(r, rows[i].name);
        if (!(ok = p != NULL))
            snprintf(err, errlen, "out of memory");
        else {
            p->samples[k] += cyc >= 0 ? (double)rows[i].counts[cyc] : 0;
            p->imiss[k] += imiss >= 0 ? (double)rows[i].counts[imiss] : 0;
            p->start[k] = rows[i].start;
            p->size[k] = rows[i].end - rows[i].start;
        }
    }
    est_rows_free(rows, n);
    return ok;
}

/* The estimator's view of one procedure: executions, instructions, cycles
 * the schedule explains by reason. */
static void add_estimates(rpt_proc *p, int k, const est_analysis *a, size_t fi)
{
    const cfg_proc *f = &a->cfg->procs[fi];
    const est_proc_freq *q = &a->freq->procs[fi];
    const est_proc_sched *ps = &a->sched->procs[fi];
    /* calls from inside the image skip the GP prologue: every way in counts */
    p->execs[k] = 0;
    for (size_t e = 0; e < f->nedges; e++)
        if (f->edges[e].from == CFG_ENTRY)
            p->execs[k] += q->edge[e];
    double explained = 0, samples = 0;
    for (size_t b = 0; b < f->nblocks && b < ps->nblocks; b++) {
        const est_block_sched *bs = &ps->blocks[b];
        p->insns[k] += q->block[b] * bs->n;
        for (uint32_t i = 0; i < bs->n; i++) {
            explained += q->block[b] * bs->slots[i].m;
            samples += bs->samples ? bs->samples[i] : 0;
            if (bs->slots[i].stall && bs->slots[i].reason < ASR_COUNT)
                p->stall[k][bs->slots[i].reason] += q->block[b] * bs->slots[i].stall;
        }
    }
    double cycles = samples * a->period;
    p->stall[k][RPT_DYNAMIC] = cycles > explained ? cycles - explained : 0;
    p->cpi[k] = p->insns[k] > 0 ? cycles / p->insns[k] : 0;
}

static void analyse(rpt *r, int k, const est_selection *sel)
{
    rpt_side *sd = &r->side[k];
    est_analysis *a = est_analyse(sel, sd->path, sd->why, sizeof sd->why);
    if (!a)
        return;
    sd->analysed = true;
    for (size_t i = 0; i < a->cfg->nprocs; i++) {
        const cfg_proc *f = &a->cfg->procs[i];
        if (!(f->flags & CFG_PF_MISSING) && a->freq->procs[i].samples > 0) {
            rpt_proc *p = proc_named(r, f->name);
            if (p)
                add_estimates(p, k, a, i);
        }
    }
    est_analysis_free(a);
}

static int by_samples(const void *x, const void *y)
{
    const rpt_proc *a = x, *b = y;
    double sa = a->samples[0] + a->samples[1], sb = b->samples[0] + b->samples[1];
    if (sa != sb)
        return sa > sb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Other images of the database whose files moved are not this report's
 * business: no warnings about them. */
static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

bool rpt_build(const char *db, const char *epoch, const char *before, const char *after, rpt *out,
               char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    ev5_params ev5;
    ev5_defaults(&ev5);
    out->icache_size = ev5.icache.size;
    out->icache_line = ev5.icache.line;
    const char *paths[2] = { before, after };
    static const char *const events[] = { "cycles", "imiss", PROFDB_EXITS_EVENT };
    est_selection sel = { .db = db, .epoch = epoch, .all_epochs = !epoch, .image_files = paths,
                          .nimage_files = 2, .events = events, .nevents = 3, .warn = quiet };
    est_set s;
    est_error ee;
    bool loaded = false;
    image *img[2] = { NULL, NULL };
    bool ok = (out->db = strdup(db)) != NULL;
    for (int k = 0; ok && k < 2; k++) {
        image_error ie;
        ok = (out->side[k].path = strdup(paths[k])) && (img[k] = image_open(paths[k], &ie));
        if (!ok)
            snprintf(err, errlen, "%s", img[k] || !out->side[k].path ? "out of memory" : ie.msg);
        else
            image_build_id_hex(img[k], out->side[k].build_id, sizeof out->side[k].build_id);
    }
    if (ok && !(ok = loaded = est_load(&sel, &s, &ee)))
        snprintf(err, errlen, "%s", ee.msg);
    for (int k = 0; ok && k < 2; k++)
        ok = add_samples(out, k, &s, img[k], err, errlen);
    if (loaded)
        est_free(&s);
    for (int k = 0; k < 2; k++)
        image_close(img[k]);
    if (!ok) {
        rpt_free(out);
        return false;
    }
    for (int k = 0; k < 2; k++)
        analyse(out, k, &sel);
    if (out->nprocs)    /* procs is NULL then, and qsort's pointer must not be */
        qsort(out->procs, out->nprocs, sizeof *out->procs, by_samples);
    return true;
}

void rpt_free(rpt *r)
{
    for (size_t i = 0; i < r->nprocs; i++)
        free(r->procs[i].name);
    free(r->procs);
    free(r->db);
    free(r->side[0].path);
    free(r->side[1].path);
    memset(r, 0, sizeof *r);
}

double rpt_stall_scale(const rpt *r, int k)
{
    uint64_t runs[2];
    for (int i = 0; i < 2; i++)
        runs[i] = r->side[i].exits[0] + r->side[i].exits[1] + r->side[i].exits[2];
    return runs[0] && runs[1] ? 1.0 / (double)runs[k] : 1;
}

size_t rpt_hot(const rpt *r, size_t max)
{
    double total = r->side[0].samples + r->side[1].samples, seen = 0;
    size_t n = 0;
    while (n < r->nprocs && n < max && (total <= 0 || seen < 0.99 * total)) {
        seen += r->procs[n].samples[0] + r->procs[n].samples[1];
        n++;
    }
    return n;
}
