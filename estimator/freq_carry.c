/*
 * estimator/freq_carry.c: frequencies of a rewritten image carried back to
 * the image it was rewritten from.
 *
 * A rewritten image is analysed on its own CFG, where its samples were
 * taken and where alignment and fall-throughs are what really ran; only the
 * result is carried back.  A block of the original takes the count of the
 * rewritten block that holds its first instruction (a block's instructions
 * all run equally often, so the block need not start there).  An edge takes
 * the count of the rewritten edge leaving the block of its source's last
 * instruction for the block that holds its target's first one, looking
 * through a branch the rewriter added to replace a fall-through.  What
 * found no counterpart is left to the flow step, which then makes every
 * procedure consistent with the counts that were carried.  A procedure the
 * rewritten CFG could not follow (an indirect jump whose table it did not
 * find) takes the fallback's estimate instead: the same samples mapped to
 * the original addresses and estimated on the original CFG.
 *
 * The address map itself belongs to the rewriter, above this room: the
 * caller passes it as two lookups.
 */
#include <stdlib.h>
#include <string.h>

#include "estimator/freq_internal.h"

typedef struct nblock {
    uint64_t start, end;
    uint32_t proc, block;
} nblock;

typedef struct carry {
    const est_freq *from;
    const est_addr_map *m;
    nblock *v;
    size_t n;
} carry;

static int cmp_nblock(const void *a, const void *b)
{
    const nblock *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static const nblock *holding(const carry *c, uint64_t addr)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < c->v[mid].start)
            hi = mid;
        else if (addr >= c->v[mid].end)
            lo = mid + 1;
        else
            return &c->v[mid];
    }
    return NULL;
}

static uint64_t new_of(const carry *c, uint64_t orig)
{
    uint64_t a = c->m->to_new(c->m->ctx, orig);
    return a ? a : orig;
}

/* The original address control reaches over rewritten edge e: its target
 * block's first instruction, or, when that block is only a branch the
 * rewriter added, where that branch goes. */
static bool edge_goes_to(const carry *c, const cfg_proc *nf, const cfg_edge *e, uint64_t *orig)
{
    if (e->to == CFG_EXIT)
        return false;
    const cfg_block *t = &nf->blocks[e->to];
    if (c->m->added(c->m->ctx, t->start)) {
        if (t->nout != 1)
            return false;
        const cfg_edge *next = &nf->edges[nf->out_edges[t->first_out]];
        if (next->to == CFG_EXIT)
            return false;
        t = &nf->blocks[next->to];
    }
    *orig = c->m->to_orig(c->m->ctx, t->start);
    return true;
}

/* The rewritten edge that stands for edge e of f, or -1. */
static long counterpart(const carry *c, const cfg_proc *f, const cfg_edge *e)
{
    const cfg_block *to = e->to == CFG_EXIT ? NULL : &f->blocks[e->to];
    if (e->from == CFG_ENTRY) {
        const nblock *nb = to ? holding(c, new_of(c, to->start)) : NULL;
        if (!nb || c->from->cfg->procs[nb->proc].blocks[nb->block].start != new_of(c, to->start))
            return -1;
        const cfg_proc *nf = &c->from->cfg->procs[nb->proc];
        for (size_t k = 0; k < nf->nedges; k++)
            if (nf->edges[k].from == CFG_ENTRY && nf->edges[k].to == nb->block)
                return (long)k;
        return -1;
    }
    const cfg_block *from = &f->blocks[e->from];
    const nblock *nb = holding(c, new_of(c, from->end - 4));
    if (!nb)
        return -1;
    const cfg_proc *nf = &c->from->cfg->procs[nb->proc];
    const cfg_block *b = &nf->blocks[nb->block];
    for (uint32_t k = 0; k < b->nout; k++) {
        uint32_t ei = nf->out_edges[b->first_out + k];
        const cfg_edge *ne = &nf->edges[ei];
        uint64_t dest;
        if (!to ? ne->to == CFG_EXIT && ne->kind == e->kind
                : edge_goes_to(c, nf, ne, &dest) && dest == to->start)
            return (long)ei;
    }
    return -1;
}

static void carry_proc(const carry *c, const cfg_proc *f, est_proc_freq *q)
{
    for (size_t b = 0; b < f->nblocks; b++) {
        const nblock *nb = holding(c, new_of(c, f->blocks[b].start));
        if (!nb)
            continue;
        const est_proc_freq *nq = &c->from->procs[nb->proc];
        q->block[b] = nq->block[nb->block];
        q->block_conf[b] = nq->block_conf[nb->block];
        q->block_from[b] = EST_FROM_SAMPLES;
    }
    const nblock *entry = f->nblocks ? holding(c, new_of(c, f->blocks[0].start)) : NULL;
    q->samples = entry ? c->from->procs[entry->proc].samples : 0;
    for (size_t e = 0; e < f->nedges; e++) {
        long k = counterpart(c, f, &f->edges[e]);
        if (k < 0)
            continue;
        const nblock *any = holding(c, new_of(c, f->edges[e].from == CFG_ENTRY
                                                      ? f->blocks[f->edges[e].to].start
                                                      : f->blocks[f->edges[e].from].end - 4));
        const est_proc_freq *nq = &c->from->procs[any->proc];
        q->edge[e] = nq->edge[k];
        q->edge_conf[e] = nq->edge_conf[k];
        q->edge_from[e] = EST_FROM_SAMPLES;
    }
}

static void copy_proc(const cfg_proc *f, const est_proc_freq *from, est_proc_freq *to)
{
    memcpy(to->block, from->block, f->nblocks * sizeof *to->block);
    memcpy(to->block_conf, from->block_conf, f->nblocks);
    memcpy(to->block_from, from->block_from, f->nblocks);
    memcpy(to->edge, from->edge, f->nedges * sizeof *to->edge);
    memcpy(to->edge_conf, from->edge_conf, f->nedges);
    memcpy(to->edge_from, from->edge_from, f->nedges);
    to->samples = from->samples;
}

est_freq *est_freq_carry(const cfg_program *orig, const est_freq *from, const est_freq *fallback,
                         const est_addr_map *m, char *err, size_t errlen)
{
    carry c = { .from = from, .m = m };
    const cfg_program *np = from->cfg;
    size_t total = 0;
    for (size_t p = 0; p < np->nprocs; p++)
        total += np->procs[p].nblocks;
    est_freq *out = est_freq_new(orig);
    c.v = malloc((total ? total : 1) * sizeof *c.v);
    if (!out || !c.v) {
        snprintf(err, errlen, "out of memory carrying frequencies back");
        goto fail;
    }
    for (size_t p = 0; p < np->nprocs; p++)
        for (size_t b = 0; b < np->procs[p].nblocks; b++)
            c.v[c.n++] = (nblock){ np->procs[p].blocks[b].start, np->procs[p].blocks[b].end,
                                   (uint32_t)p, (uint32_t)b };
    qsort(c.v, c.n, sizeof *c.v, cmp_nblock);
    for (size_t p = 0; p < orig->nprocs; p++) {
        const cfg_proc *f = &orig->procs[p];
        if (f->flags & CFG_PF_MISSING)
            continue;
        const nblock *entry = f->nblocks ? holding(&c, new_of(&c, f->blocks[0].start)) : NULL;
        if (!entry || np->procs[entry->proc].flags & CFG_PF_MISSING) {
            if (fallback)
                copy_proc(f, &fallback->procs[p], &out->procs[p]);
            continue;
        }
        carry_proc(&c, f, &out->procs[p]);
        if (!est_flow_solve(f, &out->procs[p])) {
            snprintf(err, errlen, "out of memory carrying frequencies back");
            goto fail;
        }
    }
    free(c.v);
    return out;
fail:
    free(c.v);
    est_freq_free(out);
    return NULL;
}

typedef struct moved {
    uint64_t addr;
    double samples;
} moved;

static int cmp_moved(const void *a, const void *b)
{
    const moved *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

bool est_samples_to_orig(const est_addr_map *m, const uint64_t *addr, const double *samples, size_t n,
                         est_sample_col *out)
{
    moved *v = malloc((n ? n : 1) * sizeof *v);
    uint64_t *a = malloc((n ? n : 1) * sizeof *a);
    double *s = malloc((n ? n : 1) * sizeof *s);
    memset(out, 0, sizeof *out);
    if (!v || !a || !s) {
        free(v);
        free(a);
        free(s);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (moved){ m->to_orig(m->ctx, addr[i]), samples[i] };
    qsort(v, n, sizeof *v, cmp_moved);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && a[k - 1] == v[i].addr) {
            s[k - 1] += v[i].samples;
            continue;
        }
        a[k] = v[i].addr;
        s[k++] = v[i].samples;
    }
    free(v);
    *out = (est_sample_col){ a, s, k };
    return true;
}

est_freq *est_freq_carry_samples(const cfg_program *orig, const est_freq *from, const est_addr_map *m,
                                 const est_sample_col *orig_samples, double period, est_sched **sched,
                                 char *err, size_t errlen)
{
    est_freq *fb = est_freq_from_samples(orig, orig_samples, period, NULL, sched, err, errlen);
    est_freq *cf = fb ? est_freq_carry(orig, from, fb, m, err, errlen) : NULL;
    est_freq_free(fb);
    return cf;
}
