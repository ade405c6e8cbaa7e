/*
 * estimator/freq_exact.c: exact counts (axp --exact) laid onto a CFG.
 *
 * A block's count is the count of its first instruction, which is the sum
 * of the recorded runs that cover it: runs may overlap (a run starts
 * wherever control arrives), so the counts come from a difference array over
 * run starts and ends.  Edges take the most direct record there is: a
 * conditional branch's taken and not-taken counts, a table jump's target
 * histogram, a BR's edge; edges with no record of their own (falls, returns,
 * exits) take the count of the block's last instruction less the times
 * control stopped there (exits), and entry edges what the block's count
 * leaves after its other in-edges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/freq.h"

typedef struct delta {
    uint64_t addr;
    double d;
} delta;

typedef struct counts {
    const profdb_exact_image *im;
    delta *ev;          /* run starts (+) and ends (-), by address */
    double *pre;        /* prefix sums of ev[].d */
    size_t nev;
    const profdb_exact_branch **br;   /* sorted by pc */
    const profdb_exact_jump **jmp;    /* sorted by pc */
    const profdb_exact_edge **edg;    /* sorted by from */
    const profdb_exact_exit **ext;    /* sorted by addr */
} counts;

static int by_delta(const void *a, const void *b)
{
    uint64_t x = ((const delta *)a)->addr, y = ((const delta *)b)->addr;
    return x < y ? -1 : x > y;
}

/* The records are sorted through pointers; each record type starts with
 * its key address. */
static int by_key(const void *a, const void *b)
{
    uint64_t x = **(const uint64_t *const *)a, y = **(const uint64_t *const *)b;
    return x < y ? -1 : x > y;
}

/* Index of the first of n sorted pointers whose key is at least k. */
static size_t lower(const void *arr, size_t n, uint64_t k)
{
    const uint64_t *const *v = arr;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (*v[m] < k)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static double count_at(const counts *c, uint64_t a)
{
    size_t lo = 0, hi = c->nev;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->ev[m].addr <= a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo ? c->pre[lo - 1] : 0;
}

static const profdb_exact_branch *branch_at(const counts *c, uint64_t pc)
{
    size_t i = lower(c->br, c->im->nbranches, pc);
    return i < c->im->nbranches && c->br[i]->pc == pc ? c->br[i] : NULL;
}

static const profdb_exact_jump *jump_at(const counts *c, uint64_t pc)
{
    size_t i = lower(c->jmp, c->im->njumps, pc);
    return i < c->im->njumps && c->jmp[i]->pc == pc ? c->jmp[i] : NULL;
}

/* Times control stopped at pc without leading on (exits other than faults). */
static double stops_at(const counts *c, uint64_t pc)
{
    double s = 0;
    for (size_t i = lower(c->ext, c->im->nexits, pc); i < c->im->nexits && c->ext[i]->addr == pc; i++)
        if (c->ext[i]->kind != 'X')
            s += (double)c->ext[i]->count;
    return s;
}

/* Edges recorded from pc to `to` inside this image, of the given kind (0: any). */
static double edges_to(const counts *c, uint64_t pc, uint64_t to, char kind, const profdb_exact_image *self,
                       const profdb_exact *ex)
{
    double s = 0;
    for (size_t i = lower(c->edg, c->im->nedges, pc); i < c->im->nedges && c->edg[i]->from == pc; i++) {
        const profdb_exact_edge *e = c->edg[i];
        if (e->to == to && (!kind || e->kind == kind) && e->to_image < ex->nimages &&
            &ex->images[e->to_image] == self)
            s += (double)e->count;
    }
    return s;
}

static void free_counts(counts *c)
{
    free(c->ev);
    free(c->pre);
    free(c->br);
    free(c->jmp);
    free(c->edg);
    free(c->ext);
}

static bool index_counts(counts *c, const profdb_exact_image *im)
{
    memset(c, 0, sizeof *c);
    c->im = im;
    c->ev = malloc((2 * im->nruns + 1) * sizeof *c->ev);
    c->pre = malloc((2 * im->nruns + 1) * sizeof *c->pre);
    c->br = malloc((im->nbranches + 1) * sizeof *c->br);
    c->jmp = malloc((im->njumps + 1) * sizeof *c->jmp);
    c->edg = malloc((im->nedges + 1) * sizeof *c->edg);
    c->ext = malloc((im->nexits + 1) * sizeof *c->ext);
    if (!c->ev || !c->pre || !c->br || !c->jmp || !c->edg || !c->ext) {
        free_counts(c);
        return false;
    }
    for (size_t i = 0; i < im->nruns; i++) {
        c->ev[c->nev++] = (delta){ im->runs[i].start, (double)im->runs[i].count };
        c->ev[c->nev++] = (delta){ im->runs[i].end, -(double)im->runs[i].count };
    }
    qsort(c->ev, c->nev, sizeof *c->ev, by_delta);
    double run = 0;
    for (size_t i = 0; i < c->nev; i++)
        c->pre[i] = run += c->ev[i].d;
    for (size_t i = 0; i < im->nbranches; i++)
        c->br[i] = &im->branches[i];
    for (size_t i = 0; i < im->njumps; i++)
        c->jmp[i] = &im->jumps[i];
    for (size_t i = 0; i < im->nedges; i++)
        c->edg[i] = &im->edges[i];
    for (size_t i = 0; i < im->nexits; i++)
        c->ext[i] = &im->exits[i];
    qsort(c->br, im->nbranches, sizeof *c->br, by_key);
    qsort(c->jmp, im->njumps, sizeof *c->jmp, by_key);
    qsort(c->edg, im->nedges, sizeof *c->edg, by_key);
    qsort(c->ext, im->nexits, sizeof *c->ext, by_key);
    return true;
}

static double clamp0(double v)
{
    return v > 0 ? v : 0;
}

/* One edge that leaves a block of f (not an entry edge). */
static double edge_count(const counts *c, const profdb_exact *ex, const cfg_proc *f, const cfg_edge *e)
{
    const cfg_block *b = &f->blocks[e->from];
    uint64_t last = b->end - 4;
    const profdb_exact_branch *br = branch_at(c, last);
    double rest = clamp0(count_at(c, last) - stops_at(c, last));
    switch (e->kind) {
    case CFG_EDGE_TAKEN:
        if (br)
            return br->target == e->target ? (double)br->taken : 0;
        return edges_to(c, last, e->target, 0, c->im, ex);
    case CFG_EDGE_FALL:
        if (br)
            return (double)br->not_taken;
        /* After a call, control comes back only when the callee returns
         * (exit and longjmp do not): no more than the next block ran. */
        if (b->flags & CFG_BF_LINKS && e->to < f->nblocks) {
            double next = count_at(c, f->blocks[e->to].start);
            return rest < next ? rest : next;
        }
        return rest;
    case CFG_EDGE_TABLE: {
        const profdb_exact_jump *j = jump_at(c, last);
        double s = 0;
        for (size_t k = 0; j && k < j->ntargets; k++) {
            const profdb_exact_target *t = &c->im->targets[j->first + k];
            if (t->to == e->target && t->image < ex->nimages && &ex->images[t->image] == c->im)
                s += (double)t->count;
        }
        return s;
    }
    case CFG_EDGE_OUT:
        if (br)   /* a conditional branch that leaves on one side */
            return br->target == e->target ? (double)br->taken : (double)br->not_taken;
        return rest;
    default:      /* RETURN */
        return rest;
    }
}

static void fill_proc(const counts *c, const profdb_exact *ex, const cfg_proc *f, est_proc_freq *q)
{
    for (size_t b = 0; b < f->nblocks; b++) {
        q->block[b] = count_at(c, f->blocks[b].start);
        q->block_conf[b] = EST_CONF_EXACT;
    }
    for (size_t i = 0; i < f->nedges; i++) {
        const cfg_edge *e = &f->edges[i];
        q->edge_conf[i] = EST_CONF_EXACT;
        if (e->from != CFG_ENTRY)
            q->edge[i] = edge_count(c, ex, f, e);
    }
    /* Entry edges: what the block's count leaves after its other in-edges. */
    for (size_t i = 0; i < f->nedges; i++) {
        const cfg_edge *e = &f->edges[i];
        if (e->from != CFG_ENTRY || e->to >= f->nblocks)
            continue;
        const cfg_block *to = &f->blocks[e->to];
        double in = 0;
        for (uint32_t k = 0; k < to->nin; k++) {
            uint32_t ei = f->in_edges[to->first_in + k];
            if (f->edges[ei].from != CFG_ENTRY)
                in += q->edge[ei];
        }
        q->edge[i] = clamp0(q->block[e->to] - in);
    }
}

est_freq *est_freq_from_exact(const cfg_program *cfg, const profdb_exact *ex, char *err,
                              size_t errlen)
{
    const image *img = cfg->img;
    const profdb_exact_image *im = img->build_id_len
        ? profdb_exact_find(ex, img->build_id, img->build_id_len)
        : profdb_exact_find_path(ex, img->path);
    if (!im) {
        char hex[2 * 64 + 1];
        snprintf(err, errlen, "the exact counts hold no image %s (build-id %s)", img->path,
                 img->build_id_len ? image_build_id_hex(img, hex, sizeof hex) : "none");
        return NULL;
    }
    counts c;
    est_freq *f = est_freq_new(cfg);
    if (!f || !index_counts(&c, im)) {
        est_freq_free(f);
        snprintf(err, errlen, "out of memory reading exact counts for %s", img->path);
        return NULL;
    }
    for (size_t p = 0; p < cfg->nprocs; p++)
        fill_proc(&c, ex, &cfg->procs[p], &f->procs[p]);
    free_counts(&c);
    return f;
}
