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
 * A path ends when the history is used up, at a block that makes a call
 * (the callee's branches are in the history too, and are not followed),
 * at EST_PM_PATH_MAX blocks, or at an entry of the procedure, which is
 * also entered from outside (its callers; at an alternative entry, the
 * callers that skip the gp set-up) though predecessors may agree.  Where
 * predecessors are but none agrees, the history rules the path out.
 * Where several agree, the counted frequencies choose: each path's
 * weight is the product, over its steps, of the edge's share of the
 * block's entries (each edge counted one execution more, so that one the
 * samples missed keeps some weight; an entry's callers count as an edge
 * of the block's count less its in-edges').  A walk keeps the 256
 * strongest paths, following the likeliest predecessor first and no path
 * weaker than the weakest kept or than EST_PM_NEGLIGIBLE of the strongest,
 * and gives up after EST_PM_STEPS steps.  A path's score is the sum over
 * the histories of the history's share of the samples times the path's
 * weight among the paths of that history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "common/le.h"
#include "estimator/profileme.h"

/* A path weaker than this share of the strongest found is not followed:
 * it could not change a score by more than that. */
#define EST_PM_NEGLIGIBLE 1e-3
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
    size_t nfound, max, lo;     /* lo: the weakest kept, once the table is full */
    double best;                /* the strongest kept */
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

/* Keep the path so far: while there is room, else in place of the
 * weakest kept when stronger, so that the walk ends with the strongest
 * max paths whatever order it found them in. */
static void keep(walk *w, double weight, unsigned ended)
{
    size_t k = w->nfound;
    if (k == w->max) {
        if (w->found[w->lo].score >= weight)
            return;
        k = w->lo;
    } else {
        w->nfound++;
    }
    est_pm_path *p = &w->found[k];
    *p = w->cur;
    p->score = weight;
    p->ended = (uint8_t)ended;
    w->best = fmax(w->best, weight);
    if (w->nfound == w->max)
        for (size_t i = 0; i < w->nfound; i++)
            if (w->found[i].score < w->found[w->lo].score)
                w->lo = i;
}

/* A block b of f makes a call before address pc: the callee's branches
 * come last in the history. */
bool est_pm_call_before(const cfg_proc *f, uint32_t b, uint64_t pc)
{
    for (size_t k = 0; k < f->ncalls; k++)
        if (f->calls[k].block == b && f->calls[k].site < pc)
            return true;
    return false;
}

/* Does in-edge ei agree with the history after `used` bits; *u the bits
 * used once it is taken. */
static bool agrees(const walk *w, uint32_t ei, unsigned used, unsigned *u)
{
    const cfg_edge *e = &w->f->edges[ei];
    *u = used;
    if (e->from >= w->f->nblocks)
        return false;
    if (!w->cbr[e->from])
        return true;
    *u = used + 1;
    return (e->kind == CFG_EDGE_TAKEN) == ((w->bits >> used) & 1);
}

/* Paths backwards from block b with `used` bits of the history consumed.
 * Weights only shrink along a path, so once the table is full a path
 * weaker than its weakest cannot lead to one worth keeping. */
static void back(walk *w, uint32_t b, unsigned used, double weight)
{
    const cfg_block *bk = &w->f->blocks[b];
    if (!w->steps || (w->nfound == w->max && weight <= w->found[w->lo].score) || weight < w->best * EST_PM_NEGLIGIBLE)
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
        double in = 0, outside = 0;
        for (uint32_t k = 0; k < bk->nin; k++)
            in += w->q->edge[w->f->in_edges[bk->first_in + k]];
        /* an entry is also entered from outside, as often as its count
         * exceeds its in-edges' (the procedure's callers; at an
         * alternative entry, those that skip the gp set-up): a path
         * may end there though predecessors agree */
        if (bk->flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY))
            outside = fmax(0, w->q->block[b] - in) + 1;
        /* (one execution more on every edge: an edge the samples
         * missed still carries a path the history allows) */
        double total = in + bk->nin + outside;
        bool any = outside > 0;
        if (any)
            keep(w, weight * outside / total, EST_PM_END_ENTRY);
        /* the likeliest agreeing predecessor first: it sets the bar the
         * others' paths must pass */
        uint32_t best = bk->nin;
        unsigned u;
        for (uint32_t k = 0; k < bk->nin; k++) {
            uint32_t ei = w->f->in_edges[bk->first_in + k];
            if (agrees(w, ei, used, &u) &&
                (best == bk->nin || w->q->edge[ei] > w->q->edge[w->f->in_edges[bk->first_in + best]]))
                best = k;
        }
        for (uint32_t j = 0; j <= bk->nin && best < bk->nin; j++) {
            uint32_t k = j ? j - 1 : best;
            uint32_t ei = w->f->in_edges[bk->first_in + k];
            if ((j && k == best) || !agrees(w, ei, used, &u))
                continue;
            any = true;
            back(w, w->f->edges[ei].from, u, weight * (w->q->edge[ei] + 1) / total);
        }
        /* where predecessors are but none agrees the history rules
         * this path out; none at all, the CFG knows no way in */
        if (!any && !bk->nin)
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
    const cfg_proc *fp = cfg_proc_at(cfg, pc);
    if (!fp)
        return false;
    *proc = (size_t)(fp - cfg->procs);
    *block = cfg_block_at(fp, pc);
    return *block != CFG_NONE;
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
