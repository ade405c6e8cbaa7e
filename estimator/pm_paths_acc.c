/*
 * estimator/pm_paths_acc.c: path reconstruction (pm_paths.c) measured
 * against the true paths axp recorded behind each ProfileMe record
 * (profdb/pm_truth.h), as the paper measured its own against traces.
 *
 * A record's true path is cut the way the walk cuts its paths, by the
 * same rules (est_pm_ends_cbranch, est_pm_call_before), so that "the
 * true path is among the reconstructed ones" compares like with like:
 * the blocks the thread went through, newest first, from the sampled
 * instruction's block back until the history's branches are used up, a
 * block that makes a call, the procedure's entry (the thread came from
 * outside it) or EST_PM_PATH_MAX blocks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/profileme.h"
#include "profdb/pm_truth.h"

/* Is there an edge from block a to block b of f? */
static bool edge(const cfg_proc *f, uint32_t a, uint32_t b)
{
    for (uint32_t k = 0; k < f->blocks[b].nin; k++)
        if (f->edges[f->in_edges[f->blocks[b].first_in + k]].from == a)
            return true;
    return false;
}

/* The true path of record t of an instruction in block b0 of procedure
 * proc: true with out filled, false when the runs end before the walk
 * would have. */
static bool true_path(const cfg_program *cfg, size_t proc, uint32_t b0, const profdb_pmt *t, est_pm_path *out)
{
    const cfg_proc *f = &cfg->procs[proc];
    unsigned used = 0;
    out->nblocks = 0;
    out->score = 0;
    for (uint32_t r = 0; r < t->nruns; r++) {
        /* the run's blocks, newest first (the first run's newest is b0's) */
        uint64_t a = t->run[r].end - 4;
        while (a >= t->run[r].start && a + 4 > a) {
            const cfg_proc *g = cfg_proc_at(cfg, a);
            uint32_t b = g == f ? cfg_block_at(f, a) : CFG_NONE;
            if (!out->nblocks) {
                b = b0;
            } else if (b == CFG_NONE || !edge(f, b, out->block[out->nblocks - 1])) {
                /* came from outside the procedure (a recursive call too) */
                out->ended = EST_PM_END_ENTRY;
                return true;
            } else if (est_pm_ends_cbranch(cfg, &f->blocks[b])) {
                used++;
            }
            out->block[out->nblocks++] = b;
            if (out->nblocks == 1 && est_pm_call_before(f, b, t->pc))
                out->ended = EST_PM_END_CALL;
            else if (used >= t->len)
                out->ended = EST_PM_END_HISTORY;
            else if (out->nblocks == EST_PM_PATH_MAX)
                out->ended = EST_PM_END_LONG;
            else if (out->nblocks > 1 && (f->blocks[b].flags & CFG_BF_CALLS))
                out->ended = EST_PM_END_CALL;
            else {
                if (f->blocks[b].start < 4)
                    return false;
                a = f->blocks[b].start - 4;
                continue;
            }
            return true;
        }
    }
    return false;
}

static bool same(const est_pm_path *a, const est_pm_path *b)
{
    return a->nblocks == b->nblocks && !memcmp(a->block, b->block, a->nblocks * sizeof *a->block);
}

/* The share of a record that picking the top-scored of v (ties drawn
 * evenly) gets right when the true path is v[k] (k < 0: not in v). */
static double top_credit(const est_pm_path *v, size_t n, long k)
{
    double best = 0, tied = 0;
    for (size_t i = 0; i < n; i++)
        best = fmax(best, v[i].score);
    for (size_t i = 0; i < n; i++)
        tied += v[i].score == best;
    return k >= 0 && v[k].score == best ? 1 / tied : 0;
}

static long find(const est_pm_path *v, size_t n, const est_pm_path *p)
{
    for (size_t i = 0; i < n; i++)
        if (same(&v[i], p))
            return (long)i;
    return -1;
}

/* One instruction's records t[0..nt) (one pc), against its profile entry e. */
static bool one(const cfg_program *cfg, const est_freq *f, const profdb_pm *e,
                const profdb_pmt *t, size_t nt, est_pm_path *set, est_pm_path *own, est_pm_path *truths,
                double *tcount, est_pm_path_accuracy *a)
{
    size_t proc, nset = est_pm_paths(cfg, f, e, &proc, set, EST_PM_ACC_SET), nown = 0, ntrue = 0;
    uint32_t b0;
    if (!est_pm_locate(cfg, e->offset, &proc, &b0))
        return true;
    uint8_t *cbr = est_pm_cbranch_map(cfg, proc);
    if (!cbr)
        return false;
    double known = 0;
    a->instructions++;
    for (size_t i = 0; i < nt; i++) {
        double c = (double)t[i].count;
        a->samples += c;
        est_pm_path tp;
        if (!true_path(cfg, proc, b0, &t[i], &tp)) {
            a->unknown += c;
            continue;
        }
        known += c;
        a->ends[tp.ended & 3] += c;
        if (!i || t[i].hist != t[i - 1].hist || t[i].len != t[i - 1].len)
            nown = est_pm_paths_of(cfg, f, proc, b0, e->offset, (uint64_t)t[i].len << 16 | t[i].hist, cbr,
                                   own, EST_PM_ACC_SET);
        long k = find(set, nset, &tp), o = find(own, nown, &tp);
        a->top += c * top_credit(set, nset, k);
        a->in_set += k >= 0 ? c : 0;
        a->true_score += k >= 0 ? c * set[k].score : 0;
        a->top_score += nset ? c * set[0].score : 0;
        a->consistent += o >= 0 ? c : 0;
        a->own_top += c * top_credit(own, nown, o);
        a->ambiguous += nown > 1 ? c : 0;
        /* the true paths' shares, for the distance to the scores */
        long j = find(truths, ntrue, &tp);
        if (j < 0 && ntrue < EST_PM_ACC_SET) {
            truths[ntrue] = tp;
            tcount[ntrue++] = 0;
            j = (long)ntrue - 1;
        }
        if (j >= 0)
            tcount[j] += c;
    }
    /* total variation distance: half the sum of the differences, over
     * the paths either side has (a true path beyond the table counts
     * whole, as a reconstructed one no record took) */
    double d = 0, covered = 0;
    for (size_t j = 0; j < ntrue && known > 0; j++) {
        long k = find(set, nset, &truths[j]);
        double s = k >= 0 ? set[k].score : 0;
        d += fabs(tcount[j] / known - s);
        covered += tcount[j] / known;
    }
    for (size_t k = 0; k < nset; k++)
        if (find(truths, ntrue, &set[k]) < 0)
            d += set[k].score;
    if (known > 0)
        a->distance += known * fmin(1, (d + (1 - covered)) / 2);
    free(cbr);
    return true;
}

bool est_pm_path_accuracy_of(const cfg_program *cfg, const est_freq *f, const profdb_pm *e, size_t n,
                             const struct profdb_pm_truth *truth, double min_samples, est_pm_path_accuracy *out)
{
    memset(out, 0, sizeof *out);
    est_pm_path *buf = malloc(3 * EST_PM_ACC_SET * sizeof *buf);
    double *tcount = malloc(EST_PM_ACC_SET * sizeof *tcount);
    if (!buf || !tcount) {
        free(buf);
        free(tcount);
        return false;
    }
    size_t i = 0;
    for (size_t j; i < truth->n; i = j) {
        for (j = i + 1; j < truth->n && truth->e[j].pc == truth->e[i].pc;)
            j++;
        const profdb_pm *x = est_pm_at(e, n, truth->e[i].pc);
        if (x && (double)x->c[PDPM_SAMPLES] >= min_samples && x->paths.n &&
            !one(cfg, f, x, &truth->e[i], j - i, buf, buf + EST_PM_ACC_SET, buf + 2 * EST_PM_ACC_SET, tcount,
                 out))
            break;
    }
    bool ok = i == truth->n;
    free(buf);
    free(tcount);
    return ok;
}
