/*
 * estimator/pm_paths.c: the paths that led to a sampled instruction, from
 * the branch histories of its ProfileMe samples (the paper's section 5.3;
 * estimator/profileme.h).
 *
 * A history holds the directions of the last conditional branches before
 * the instruction, not their addresses.  Walking the CFG backwards from
 * the instruction's block, every predecessor whose block ends with a
 * conditional branch must have been left the way the next bit says (taken:
 * its TAKEN edge; not taken: its FALL edge); other edges consume no bit.
 * A path ends when the history is used up, at the procedure's entry, at a
 * block that makes a call (the callee's branches are in the history too,
 * and are not followed), or at EST_PM_PATH_MAX blocks; a walk gives up
 * after 20000 steps or 256 paths.  Where several
 * predecessors agree with the history, the counted frequencies choose:
 * each path's weight is the product, over its steps, of the edge's share
 * of the block's entries (each edge counted one execution more, so that
 * one the samples missed keeps some weight).  A path's score is the sum over the histories
 * of the history's share of the samples times the path's weight among the
 * paths consistent with that history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "common/le.h"
#include "estimator/profileme.h"

/* A walk's budget of steps: merges can multiply the paths. */
#define EST_PM_STEPS 20000

typedef struct walk {
    const cfg_proc *f;
    const est_proc_freq *q;
    const cfg_program *cfg;
    const uint8_t *cbr;         /* per block: ends with a conditional branch */
    uint64_t bits, pc;
    unsigned len;
    est_pm_path *found;         /* paths of this history */
    size_t nfound, max;
    unsigned steps;             /* left of the walk's budget */
    est_pm_path cur;
} walk;

bool est_pm_ends_cbranch(const cfg_program *cfg, const cfg_block *b)
{
    const uint8_t *w = b->end > b->start ? image_bytes_at(cfg->img, b->end - 4, 4) : NULL;
    if (!w)
        return false;
    alpha_insn in;
    alpha_decode(le_get32(w), &in);
    return alpha_flow_of(&in) == FLOW_CBRANCH;
}

static void keep(walk *w, double weight, unsigned ended)
{
    if (w->nfound == w->max)
        return;
    est_pm_path *p = &w->found[w->nfound++];
    *p = w->cur;
    p->score = weight;
    p->ended = (uint8_t)ended;
}

/* A call in block b before address pc: the callee's branches come last
 * in the history. */
bool est_pm_call_before(const cfg_proc *f, uint32_t b, uint64_t pc)
{
    for (size_t k = 0; k < f->ncalls; k++)
        if (f->calls[k].block == b && f->calls[k].site < pc)
            return true;
    return false;
}

/* Paths backwards from block b with `used` bits of the history consumed. */
static void back(walk *w, uint32_t b, unsigned used, double weight)
{
    const cfg_block *bk = &w->f->blocks[b];
    if (!w->steps || w->nfound == w->max)
        return;
    w->steps--;
    w->cur.block[w->cur.nblocks++] = b;
    if (w->cur.nblocks == 1 && est_pm_call_before(w->f, b, w->pc))
        keep(w, weight, EST_PM_END_CALL);
    else if (used == w->len)
        keep(w, weight, EST_PM_END_HISTORY);
    else if (w->cur.nblocks == EST_PM_PATH_MAX)
        keep(w, weight, EST_PM_END_LONG);
    else if (w->cur.nblocks > 1 && (bk->flags & CFG_BF_CALLS))
        keep(w, weight, EST_PM_END_CALL);
    else {
        double in = 0;
        for (uint32_t k = 0; k < bk->nin; k++)
            in += w->q->edge[w->f->in_edges[bk->first_in + k]];
        bool any = false;
        for (uint32_t k = 0; k < bk->nin; k++) {
            uint32_t ei = w->f->in_edges[bk->first_in + k];
            const cfg_edge *e = &w->f->edges[ei];
            if (e->from >= w->f->nblocks)
                continue;
            unsigned u = used;
            if (w->cbr[e->from]) {
                bool taken = (w->bits >> used) & 1;
                if ((e->kind == CFG_EDGE_TAKEN) != taken)
                    continue;
                u++;
            }
            /* (one execution more on every edge: an edge the samples
             * missed still carries a path the history allows) */
            double share = (w->q->edge[ei] + 1) / (in + bk->nin);
            any = true;
            back(w, e->from, u, weight * share);
        }
        if (!any)
            keep(w, weight, EST_PM_END_ENTRY);
    }
    w->cur.nblocks--;
}

static int by_score(const void *a, const void *b)
{
    double x = ((const est_pm_path *)a)->score, y = ((const est_pm_path *)b)->score;
    return (x < y) - (x > y);
}

static bool same(const est_pm_path *a, const est_pm_path *b)
{
    return a->nblocks == b->nblocks && !memcmp(a->block, b->block, a->nblocks * sizeof *a->block);
}

/* The procedure and block of an address: false if none. */
bool est_pm_locate(const cfg_program *cfg, uint64_t pc, size_t *proc, uint32_t *block)
{
    size_t p = 0;
    uint32_t b = 0;
    while (p < cfg->nprocs && !(cfg->procs[p].start <= pc && pc < cfg->procs[p].end))
        p++;
    if (p == cfg->nprocs)
        return false;
    const cfg_proc *fp = &cfg->procs[p];
    while (b < fp->nblocks && !(fp->blocks[b].start <= pc && pc < fp->blocks[b].end))
        b++;
    *proc = p;
    *block = b;
    return b < fp->nblocks;
}

uint8_t *est_pm_cbranch_map(const cfg_program *cfg, size_t proc)
{
    const cfg_proc *f = &cfg->procs[proc];
    uint8_t *m = malloc(f->nblocks ? f->nblocks : 1);
    for (uint32_t b = 0; m && b < f->nblocks; b++)
        m[b] = est_pm_ends_cbranch(cfg, &f->blocks[b]);
    return m;
}

size_t est_pm_paths_of(const cfg_program *cfg, const est_freq *f, size_t proc, uint32_t block, uint64_t pc,
                       uint64_t history, const uint8_t *cbr, est_pm_path *out, size_t max)
{
    walk w = { .f = &cfg->procs[proc], .q = &f->procs[proc], .cfg = cfg, .cbr = cbr, .bits = history & 0xffff,
               .len = (unsigned)(history >> 16) & 31, .found = out, .max = max, .pc = pc, .steps = EST_PM_STEPS };
    back(&w, block, 0, 1.0);
    double total = 0;
    for (size_t i = 0; i < w.nfound; i++)
        total += out[i].score;
    for (size_t i = 0; i < w.nfound && total > 0; i++)
        out[i].score /= total;
    return w.nfound;
}

size_t est_pm_paths(const cfg_program *cfg, const est_freq *f, const profdb_pm *e, size_t *proc, est_pm_path *out,
                    size_t max)
{
    size_t p;
    uint32_t b;
    if (!max || !est_pm_locate(cfg, e->offset, &p, &b))
        return 0;
    *proc = p;
    enum { PER_HISTORY = 256 };
    est_pm_path *found = malloc(PER_HISTORY * sizeof *found);
    uint8_t *cbr = est_pm_cbranch_map(cfg, p);
    if (!found || !cbr) {
        free(found);
        free(cbr);
        return 0;
    }
    hot_value top[HOTLIST_MAX];
    double share[HOTLIST_MAX];
    size_t nh = hotlist_top(&e->paths, top, share, HOTLIST_MAX), n = 0;
    for (size_t h = 0; h < nh; h++) {
        size_t nfound = est_pm_paths_of(cfg, f, p, b, e->offset, top[h].value, cbr, found, PER_HISTORY);
        for (size_t i = 0; i < nfound; i++) {
            double s = share[h] * found[i].score;
            size_t j = 0;
            while (j < n && !same(&out[j], &found[i]))
                j++;
            if (j < n) {
                out[j].score += s;
            } else if (n < max) {
                out[n] = found[i];
                out[n++].score = s;
            } else {
                /* full: replace the weakest if this one is stronger */
                size_t lo = 0;
                for (size_t k = 1; k < n; k++)
                    if (out[k].score < out[lo].score)
                        lo = k;
                if (out[lo].score < s) {
                    out[lo] = found[i];
                    out[lo].score = s;
                }
            }
        }
    }
    free(found);
    free(cbr);
    qsort(out, n, sizeof *out, by_score);
    return n;
}
