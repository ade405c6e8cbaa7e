/*
 * optimizer/exttsp.c: block chains by the extended TSP score.
 *
 * Newell and Pupyrev's ext-TSP, the block order BOLT uses, scores a layout
 * by its edges: an edge whose target directly follows its source counts its
 * whole weight; a jump forward over d bytes, up to 1024, counts a tenth of it
 * times (1 - d/1024); a jump back over d bytes, up to 640, a tenth times
 * (1 - d/640).  Besides making hot edges fall through, it keeps short jumps
 * short, so code that runs together shares cache lines.  Chains (single
 * blocks, or blocks glued by a call) merge greedily, the pair whose merge
 * gains the most first.  A merge may cut one chain in two and put the other
 * between or before the halves.
 *
 * Cuts are tried only beside the blocks that have an edge into the other
 * chain: a cut elsewhere gains nothing from a fall-through, and trying every
 * cut of every chain makes a large interpreter procedure cost seconds.  This
 * is the baseline the optimizer's issue names beside Pettis and Hansen's
 * chaining (chains.c); `optimize-image --blocks ext-tsp` selects it.
 */
#include <stdlib.h>
#include <string.h>

#include "optimizer/internal.h"

#define FWD_WEIGHT 0.1
#define FWD_REACH 1024.0
#define BACK_WEIGHT 0.1
#define BACK_REACH 640.0

enum { M_XY, M_X1_Y_X2, M_Y_X2_X1, M_X2_X1_Y, M_KINDS };

typedef struct xchain {
    uint32_t *b, n;
    uint64_t bytes;
} xchain;

typedef struct xmerge {
    double gain;
    uint32_t x, y;          /* x the chain that may be cut */
    uint32_t kind, cut;     /* cut: X1 = x's blocks [0, cut) */
} xmerge;

typedef struct xctx {
    const cfg_proc *p;
    const est_proc_freq *fp;
    xchain *ch;
    uint32_t *chain_of, *idx;
    uint64_t *off;          /* byte offset of a block in its chain */
    uint32_t *ex, nex;      /* scratch: edges between the two chains */
    uint32_t *ix, nix;      /* scratch: edges inside x */
    uint32_t *cuts, ncuts;
    uint32_t *mark;         /* per chain, for listing neighbours once */
    uint32_t stamp;
    xmerge *pairs;
    size_t npairs, cap;
} xctx;

static uint64_t bsize(const cfg_proc *p, uint32_t b)
{
    return p->blocks[b].end - p->blocks[b].start;
}

/* An edge the layout can shorten: inside the procedure, and it ran. */
static bool useful(const xctx *c, uint32_t e)
{
    const cfg_edge *E = &c->p->edges[e];
    return E->from < c->p->nblocks && E->to < c->p->nblocks && c->fp->edge[e] > 0 &&
           (E->kind == CFG_EDGE_FALL || E->kind == CFG_EDGE_TAKEN || E->kind == CFG_EDGE_TABLE);
}

/* The k-th edge of block B, out-edges first, and the block at its other end. */
static uint32_t edge_of(const cfg_proc *p, const cfg_block *B, uint32_t k, uint32_t *other)
{
    uint32_t e = k < B->nout ? p->out_edges[B->first_out + k] : p->in_edges[B->first_in + k - B->nout];
    *other = k < B->nout ? p->edges[e].to : p->edges[e].from;
    return e;
}

static double edge_score(const xctx *c, uint32_t e, uint64_t from, uint64_t to)
{
    const cfg_edge *E = &c->p->edges[e];
    double w = c->fp->edge[e];
    uint64_t end = from + bsize(c->p, E->from);
    if (to == end && E->kind != CFG_EDGE_TABLE)
        return w;
    if (to >= end) {
        double d = (double)(to - end);
        return d <= FWD_REACH ? w * FWD_WEIGHT * (1 - d / FWD_REACH) : 0;
    }
    double d = (double)(end - to);
    return d <= BACK_REACH ? w * BACK_WEIGHT * (1 - d / BACK_REACH) : 0;
}

/* Where block b lands when chains x and y merge as (kind, cut). */
static uint64_t place(const xctx *c, uint32_t x, uint32_t y, uint32_t kind, uint32_t cut,
                      uint32_t b)
{
    const xchain *X = &c->ch[x], *Y = &c->ch[y];
    uint64_t oc = cut < X->n ? c->off[X->b[cut]] : X->bytes, ob = c->off[b];
    if (c->chain_of[b] == y) {
        switch (kind) {
        case M_X1_Y_X2: return oc + ob;
        case M_Y_X2_X1: return ob;
        default: return X->bytes + ob;
        }
    }
    bool first = c->idx[b] < cut;
    switch (kind) {
    case M_X1_Y_X2: return first ? ob : ob + Y->bytes;
    case M_Y_X2_X1: return first ? Y->bytes + (X->bytes - oc) + ob : Y->bytes + ob - oc;
    case M_X2_X1_Y: return first ? (X->bytes - oc) + ob : ob - oc;
    default: return ob;
    }
}

static bool is_entry(const xctx *c, uint32_t b)
{
    return c->p->blocks[b].flags & CFG_BF_ENTRY;
}

/* A merge keeps every entry at the head of its chain and every call's
 * return point after the call. */
static bool allowed(const xctx *c, uint32_t x, uint32_t y, uint32_t kind, uint32_t cut)
{
    const xchain *X = &c->ch[x], *Y = &c->ch[y];
    if (kind != M_XY && (cut == 0 || cut >= X->n ||
                         (c->p->blocks[X->b[cut - 1]].flags & CFG_BF_LINKS)))
        return false;
    bool xe = is_entry(c, X->b[0]), ye = is_entry(c, Y->b[0]);
    switch (kind) {
    case M_XY: case M_X1_Y_X2: return !ye;
    case M_Y_X2_X1: return !xe;
    default: return !xe && !ye;
    }
}

static void list_edges(xctx *c, uint32_t x, uint32_t y)
{
    const cfg_proc *p = c->p;
    const xchain *X = &c->ch[x], *Y = &c->ch[y];
    c->nex = c->nix = 0;
    /* Between: from the blocks of the shorter chain, each edge once. */
    const xchain *S = X->n <= Y->n ? X : Y;
    uint32_t other = S == X ? y : x;
    for (uint32_t i = 0; i < S->n; i++) {
        const cfg_block *B = &p->blocks[S->b[i]];
        for (uint32_t k = 0; k < B->nout + B->nin; k++) {
            uint32_t o, e = edge_of(p, B, k, &o);
            if (useful(c, e) && c->chain_of[o] == other)
                c->ex[c->nex++] = e;
        }
    }
    for (uint32_t i = 0; i < X->n; i++) {
        const cfg_block *B = &p->blocks[X->b[i]];
        for (uint32_t k = 0; k < B->nout; k++) {
            uint32_t e = p->out_edges[B->first_out + k];
            if (useful(c, e) && c->chain_of[p->edges[e].to] == x)
                c->ix[c->nix++] = e;
        }
    }
}

static double merge_gain(const xctx *c, uint32_t x, uint32_t y, uint32_t kind, uint32_t cut)
{
    double g = 0;
    for (uint32_t i = 0; i < c->nex; i++) {
        const cfg_edge *E = &c->p->edges[c->ex[i]];
        g += edge_score(c, c->ex[i], place(c, x, y, kind, cut, E->from),
                        place(c, x, y, kind, cut, E->to));
    }
    if (kind != M_XY)       /* y stays whole; x's edges across the cut change */
        for (uint32_t i = 0; i < c->nix; i++) {
            const cfg_edge *E = &c->p->edges[c->ix[i]];
            if ((c->idx[E->from] < cut) == (c->idx[E->to] < cut))
                continue;
            g += edge_score(c, c->ix[i], place(c, x, y, kind, cut, E->from),
                            place(c, x, y, kind, cut, E->to)) -
                 edge_score(c, c->ix[i], c->off[E->from], c->off[E->to]);
        }
    return g;
}

/* The best way to merge x and y, x the one cut; gain 0 when none helps. */
static void best_merge(xctx *c, uint32_t x, uint32_t y, xmerge *best)
{
    list_edges(c, x, y);
    c->ncuts = 0;
    for (uint32_t i = 0; i < c->nex; i++) {
        const cfg_edge *E = &c->p->edges[c->ex[i]];
        uint32_t b = c->chain_of[E->from] == x ? E->from : E->to;
        c->cuts[c->ncuts++] = c->idx[b];
        c->cuts[c->ncuts++] = c->idx[b] + 1;
    }
    for (uint32_t kind = 0; kind < M_KINDS; kind++)
        for (uint32_t k = 0; k < (kind == M_XY ? 1 : c->ncuts); k++) {
            uint32_t cut = kind == M_XY ? c->ch[x].n : c->cuts[k];
            if (!allowed(c, x, y, kind, cut))
                continue;
            double g = merge_gain(c, x, y, kind, cut);
            if (g > best->gain)
                *best = (xmerge){ g, x, y, kind, cut };
        }
}

static bool add_pair(xctx *c, uint32_t a, uint32_t b)
{
    xmerge m = { 0, 0, 0, 0, 0 };
    best_merge(c, a, b, &m);
    best_merge(c, b, a, &m);
    if (m.gain <= 1e-9)
        return true;
    if (c->npairs == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        xmerge *np = realloc(c->pairs, cap * sizeof *np);
        if (!np)
            return false;
        c->pairs = np, c->cap = cap;
    }
    c->pairs[c->npairs++] = m;
    return true;
}

/* Pairs of x with every chain numbered from `from` up that an edge joins
 * it to (from x itself at the start, so that each pair is made once). */
static bool pair_neighbours(xctx *c, uint32_t x, uint32_t from)
{
    const cfg_proc *p = c->p;
    c->stamp++;
    c->mark[x] = c->stamp;
    for (uint32_t i = 0; i < c->ch[x].n; i++) {
        const cfg_block *B = &p->blocks[c->ch[x].b[i]];
        for (uint32_t k = 0; k < B->nout + B->nin; k++) {
            uint32_t o, e = edge_of(p, B, k, &o);
            if (!useful(c, e))
                continue;
            uint32_t z = c->chain_of[o];
            if (z == CFG_NONE || z < from || c->mark[z] == c->stamp)
                continue;
            c->mark[z] = c->stamp;
            if (!add_pair(c, x, z))
                return false;
        }
    }
    return true;
}

static void renumber(xctx *c, uint32_t x)
{
    uint64_t o = 0;
    for (uint32_t i = 0; i < c->ch[x].n; i++) {
        uint32_t b = c->ch[x].b[i];
        c->chain_of[b] = x, c->idx[b] = i, c->off[b] = o;
        o += bsize(c->p, b);
    }
    c->ch[x].bytes = o;
}

static bool do_merge(xctx *c, const xmerge *m)
{
    xchain *X = &c->ch[m->x], *Y = &c->ch[m->y];
    uint32_t n = X->n + Y->n, *nb = malloc(n * sizeof *nb), k = 0;
    if (!nb)
        return false;
    const uint32_t cut = m->cut;        /* X->n for M_XY */
#define PUT(S, from, to) for (uint32_t i = (from); i < (to); i++) nb[k++] = (S)->b[i]
    switch (m->kind) {
    case M_XY: PUT(X, 0, X->n); PUT(Y, 0, Y->n); break;
    case M_X1_Y_X2: PUT(X, 0, cut); PUT(Y, 0, Y->n); PUT(X, cut, X->n); break;
    case M_Y_X2_X1: PUT(Y, 0, Y->n); PUT(X, cut, X->n); PUT(X, 0, cut); break;
    default: PUT(X, cut, X->n); PUT(X, 0, cut); PUT(Y, 0, Y->n); break;
    }
#undef PUT
    free(X->b);
    free(Y->b);
    X->b = nb, X->n = n;
    *Y = (xchain){ 0 };
    renumber(c, m->x);
    return true;
}

bool opt_exttsp(const cfg_proc *p, const est_proc_freq *fp, uint32_t *next, uint32_t *head,
                uint32_t *tail)
{
    size_t nb = p->nblocks;
    xctx c = { .p = p, .fp = fp };
    c.ch = calloc(nb, sizeof *c.ch);
    c.chain_of = malloc(nb * sizeof *c.chain_of);
    c.idx = malloc(nb * sizeof *c.idx);
    c.off = malloc(nb * sizeof *c.off);
    c.ex = malloc((2 * p->nedges + 1) * sizeof *c.ex);
    c.ix = malloc((p->nedges + 1) * sizeof *c.ix);
    c.cuts = malloc((4 * p->nedges + 2) * sizeof *c.cuts);
    c.mark = calloc(nb, sizeof *c.mark);
    bool ok = c.ch && c.chain_of && c.idx && c.off && c.ex && c.ix && c.cuts && c.mark;
    for (uint32_t b = 0; ok && b < nb; b++)
        c.chain_of[b] = CFG_NONE;
    /* The chains chains.c glued, those that ran. */
    for (uint32_t h = 0; ok && h < nb; h++) {
        if (head[h] != h)
            continue;
        double heat = 0;
        uint32_t n = 0;
        for (uint32_t x = h; x != CFG_NONE; x = next[x], n++)
            heat = fp->block[x] > heat ? fp->block[x] : heat;
        if (heat <= 0)
            continue;
        c.ch[h] = (xchain){ malloc(n * sizeof(uint32_t)), 0, 0 };
        if (!c.ch[h].b) {
            ok = false;
            break;
        }
        for (uint32_t x = h; x != CFG_NONE; x = next[x])
            c.ch[h].b[c.ch[h].n++] = x;
        renumber(&c, h);
    }
    for (uint32_t h = 0; ok && h < nb; h++)
        if (c.ch[h].n)
            ok = pair_neighbours(&c, h, h);
    while (ok && c.npairs) {
        size_t bi = 0;
        for (size_t i = 1; i < c.npairs; i++)
            if (c.pairs[i].gain > c.pairs[bi].gain)
                bi = i;
        xmerge m = c.pairs[bi];
        ok = do_merge(&c, &m);
        size_t k = 0;
        for (size_t i = 0; i < c.npairs; i++) {
            const xmerge *q = &c.pairs[i];
            if (q->x != m.x && q->x != m.y && q->y != m.x && q->y != m.y)
                c.pairs[k++] = *q;
        }
        c.npairs = k;
        ok = ok && pair_neighbours(&c, m.x, 0);
    }
    /* Back into the caller's lists. */
    for (uint32_t h = 0; ok && h < nb; h++) {
        const xchain *X = &c.ch[h];
        if (!X->n)
            continue;
        uint32_t first = X->b[0];
        for (uint32_t i = 0; i < X->n; i++) {
            next[X->b[i]] = i + 1 < X->n ? X->b[i + 1] : CFG_NONE;
            head[X->b[i]] = first;
        }
        tail[first] = X->b[X->n - 1];
    }
    for (uint32_t h = 0; c.ch && h < nb; h++)
        free(c.ch[h].b);
    free(c.ch);
    free(c.chain_of);
    free(c.idx);
    free(c.off);
    free(c.ex);
    free(c.ix);
    free(c.cuts);
    free(c.mark);
    free(c.pairs);
    return ok;
}
