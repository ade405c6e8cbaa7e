/*
 * cfg/loops.c: dominators and natural loops of one procedure.
 *
 * Dominators by the iterative algorithm of Cooper, Harvey and Kennedy over
 * reverse postorder, from a virtual entry that reaches the procedure's entry
 * and every alternate entry.  A back edge goes to a block that dominates its
 * source; its natural loop is the header plus every block that reaches the
 * source without passing the header.  Loops sharing a header are one loop.
 * A retreating edge whose target does not dominate its source makes the
 * procedure irreducible: such cycles are not reported as loops.
 */
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"

#define ROOT 0u   /* node 0 is the virtual entry; block b is node b + 1 */

static uint32_t intersect(const uint32_t *idom, const uint32_t *order, uint32_t a, uint32_t b)
{
    while (a != b) {
        while (order[a] > order[b])
            a = idom[a];
        while (order[b] > order[a])
            b = idom[b];
    }
    return a;
}

static bool dominates(const uint32_t *idom, uint32_t h, uint32_t n)
{
    for (;;) {
        if (n == h)
            return true;
        if (n == ROOT || idom[n] == n)
            return false;
        n = idom[n];
    }
}

static int loop_by_size(const void *a, const void *b)
{
    const cfg_loop *x = a, *y = b;
    return x->nblocks > y->nblocks ? -1 : x->nblocks < y->nblocks;
}

/* The working state: nodes are ROOT and block b as b + 1. */
typedef struct walk {
    size_t nb, post;         /* blocks; nodes reached, in rpo[0..post) */
    uint32_t *rpo, *order;   /* reverse postorder; order[n] = rank or UINT32_MAX */
    uint32_t *idom;
    uint32_t *mark, *list, stamp;   /* loop bodies */
} walk;

bool cfg_rpo(const cfg_proc *f, uint32_t *rpo, uint32_t *order, size_t *nreached)
{
    size_t nb = f->nblocks, nn = nb + 1, sp = 0, post = 0;
    uint32_t *stack = malloc(nn * 2 * sizeof *stack);
    uint8_t *state = calloc(nn, 1);
    if (!stack || !state) {
        free(stack);
        free(state);
        return false;
    }
    stack[sp++] = ROOT;
    stack[sp++] = 0;
    state[ROOT] = 1;
    while (sp) {
        uint32_t n = stack[sp - 2], k = stack[sp - 1];
        uint32_t next = UINT32_MAX;
        if (n == ROOT) {
            for (; k < nb && next == UINT32_MAX; k++)
                if (f->blocks[k].flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY))
                    next = k + 1;
        } else {
            const cfg_block *b = &f->blocks[n - 1];
            for (; k < b->nout && next == UINT32_MAX; k++) {
                uint32_t t = f->edges[f->out_edges[b->first_out + k]].to;
                if (t < nb)
                    next = t + 1;
            }
        }
        stack[sp - 1] = k;
        if (next != UINT32_MAX && !state[next]) {
            state[next] = 1;
            stack[sp++] = next;
            stack[sp++] = 0;
        } else if (next == UINT32_MAX) {
            rpo[post++] = n;
            sp -= 2;
        }
    }
    free(stack);
    free(state);
    for (size_t i = 0; i < post / 2; i++) {
        uint32_t t = rpo[i];
        rpo[i] = rpo[post - 1 - i];
        rpo[post - 1 - i] = t;
    }
    for (size_t i = 0; i < nn; i++)
        order[i] = UINT32_MAX;
    for (size_t i = 0; i < post; i++)
        order[rpo[i]] = (uint32_t)i;
    *nreached = post;
    return true;
}

static void dominators(const cfg_proc *f, walk *w)
{
    for (size_t i = 0; i < w->nb + 1; i++)
        w->idom[i] = UINT32_MAX;
    w->idom[ROOT] = ROOT;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 1; i < w->post; i++) {
            uint32_t n = w->rpo[i], nd = UINT32_MAX;
            const cfg_block *b = &f->blocks[n - 1];
            if (b->flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY))
                nd = ROOT;
            for (uint32_t k = 0; k < b->nin; k++) {
                uint32_t p = f->edges[f->in_edges[b->first_in + k]].from;
                if (p >= w->nb || w->idom[p + 1] == UINT32_MAX)
                    continue;
                nd = nd == UINT32_MAX ? p + 1 : intersect(w->idom, w->order, p + 1, nd);
            }
            if (nd != w->idom[n]) {
                w->idom[n] = nd;
                changed = true;
            }
        }
    }
}

/* Grows the body in list[0..*nbody) (marked with the stamp) by every
 * reached block that reaches its members without passing the header. */
static void grow_body(const cfg_proc *f, walk *w, size_t from, size_t *nbody, uint32_t h)
{
    for (size_t q = from; q < *nbody; q++) {
        uint32_t m = w->list[q];
        if (m == h)
            continue;
        const cfg_block *mb = &f->blocks[m - 1];
        for (uint32_t z = 0; z < mb->nin; z++) {
            uint32_t pp = f->edges[f->in_edges[mb->first_in + z]].from;
            if (pp >= w->nb || w->order[pp + 1] == UINT32_MAX || w->mark[pp + 1] == w->stamp)
                continue;
            w->mark[pp + 1] = w->stamp;
            w->list[(*nbody)++] = pp + 1;
        }
    }
}

/* One loop per header with back edges into it. */
static bool find_loops(cfg_proc *f, walk *w)
{
    for (size_t i = 1; i < w->post; i++) {
        uint32_t h = w->rpo[i];
        const cfg_block *hb = &f->blocks[h - 1];
        size_t nbody = 0;
        w->stamp++;
        for (uint32_t k = 0; k < hb->nin; k++) {
            uint32_t s = f->edges[f->in_edges[hb->first_in + k]].from;
            if (s >= w->nb || w->order[s + 1] == UINT32_MAX || w->order[s + 1] < w->order[h])
                continue;
            if (!dominates(w->idom, h, s + 1)) {
                f->flags |= CFG_PF_IRREDUCIBLE;
                continue;
            }
            if (!nbody) {
                w->mark[h] = w->stamp;
                w->list[nbody++] = h;
            }
            if (w->mark[s + 1] != w->stamp) {
                w->mark[s + 1] = w->stamp;
                w->list[nbody++] = s + 1;
                grow_body(f, w, nbody - 1, &nbody, h);
            }
        }
        if (!nbody)
            continue;
        cfg_loop *l = realloc(f->loops, (f->nloops + 1) * sizeof *l);
        if (!l)
            return false;
        f->loops = l;
        f->loops[f->nloops++] = (cfg_loop){ h - 1, CFG_NONE, 0, (uint32_t)nbody };
    }
    return true;
}

/* Nesting: largest loops first, so a block ends up in its innermost. */
static void nest_loops(cfg_proc *f, walk *w)
{
    if (f->nloops > 1)
        qsort(f->loops, f->nloops, sizeof *f->loops, loop_by_size);
    for (size_t b = 0; b < w->nb; b++) {
        f->blocks[b].loop = CFG_NONE;
        f->blocks[b].loop_depth = 0;
    }
    for (size_t li = 0; li < f->nloops; li++) {
        cfg_loop *l = &f->loops[li];
        uint32_t h = l->header + 1;
        l->parent = f->blocks[l->header].loop;
        l->depth = l->parent == CFG_NONE ? 1 : f->loops[l->parent].depth + 1;
        /* Recompute the body (cheaper than keeping every list). */
        w->stamp++;
        size_t nbody = 0;
        w->mark[h] = w->stamp;
        w->list[nbody++] = h;
        const cfg_block *hb = &f->blocks[l->header];
        for (uint32_t k = 0; k < hb->nin; k++) {
            uint32_t s = f->edges[f->in_edges[hb->first_in + k]].from;
            if (s >= w->nb || w->order[s + 1] == UINT32_MAX || !dominates(w->idom, h, s + 1) ||
                w->mark[s + 1] == w->stamp)
                continue;
            w->mark[s + 1] = w->stamp;
            w->list[nbody++] = s + 1;
        }
        grow_body(f, w, 1, &nbody, h);
        for (size_t q = 0; q < nbody; q++) {
            f->blocks[w->list[q] - 1].loop = (uint32_t)li;
            f->blocks[w->list[q] - 1].loop_depth = l->depth;
        }
    }
}

void cfg_loops(cfg_proc *f)
{
    size_t nn = f->nblocks + 1;
    walk w = { .nb = f->nblocks };
    w.rpo = malloc(nn * sizeof *w.rpo);
    w.order = malloc(nn * sizeof *w.order);
    w.idom = malloc(nn * sizeof *w.idom);
    w.mark = calloc(nn, sizeof *w.mark);
    w.list = malloc(nn * sizeof *w.list);
    if (w.rpo && w.order && w.idom && w.mark && w.list && cfg_rpo(f, w.rpo, w.order, &w.post)) {
        for (size_t b = 0; b < w.nb; b++)
            if (w.order[b + 1] == UINT32_MAX)
                f->blocks[b].flags |= CFG_BF_UNREACH;
        dominators(f, &w);
        if (find_loops(f, &w))
            nest_loops(f, &w);
    }
    free(w.rpo);
    free(w.order);
    free(w.idom);
    free(w.mark);
    free(w.list);
}
