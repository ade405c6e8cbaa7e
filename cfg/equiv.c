/*
 * cfg/equiv.c: frequency-equivalence classes by cycle equivalence.
 *
 * Two edges of a strongly connected graph are cycle equivalent when every
 * cycle through one passes through the other; in a CFG closed by an edge
 * from the exit back to the entry, flow conservation then makes their
 * execution counts equal.  Blocks join in by splitting each block into an
 * in-node and an out-node joined by a "block edge".  The classes are found
 * in linear time with the bracket-list algorithm of Johnson, Pearson and
 * Pingali (PLDI 1994) on the undirected graph.
 *
 * The algorithm needs every node on a path from entry to exit.  Code that
 * cannot be reached from an entry gets an extra edge from the entry, and
 * code that cannot reach the exit (an infinite loop, a call that never
 * returns with nothing after it) an extra edge to the exit.  Those edges
 * never run, so their count is zero and conservation still holds: the
 * classes stay sound.  This is our extension for infinite loops (DCPI §6.1.2).
 *
 * When the CFG is missing edges, conservation cannot be trusted and every
 * block and edge is its own class.
 */
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"

#define INF UINT32_MAX

typedef struct graph {
    uint32_t nn, ne, cap;
    uint32_t *u, *v;          /* edge endpoints */
} graph;

static bool gadd(graph *g, uint32_t a, uint32_t b)
{
    if (g->ne == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 64;
        uint32_t *u = realloc(g->u, cap * sizeof *u);
        if (!u)
            return false;
        g->u = u;
        uint32_t *v = realloc(g->v, cap * sizeof *v);
        if (!v)
            return false;
        g->v = v;
        g->cap = cap;
    }
    g->u[g->ne] = a;
    g->v[g->ne] = b;
    g->ne++;
    return true;
}

/* Bracket lists: doubly linked, the head is the top. */
typedef struct blist {
    uint32_t head, tail, size;
} blist;

typedef struct bnode {
    uint32_t prev, next;
    uint32_t recent_size, recent_class;
} bnode;

typedef struct bstate {
    bnode *b;
    uint32_t nb, cap;
} bstate;

static void bl_push(bstate *s, blist *l, uint32_t x)
{
    s->b[x].prev = INF;
    s->b[x].next = l->head;
    if (l->head != INF)
        s->b[l->head].prev = x;
    else
        l->tail = x;
    l->head = x;
    l->size++;
}

static void bl_delete(bstate *s, blist *l, uint32_t x)
{
    bnode *n = &s->b[x];
    if (n->prev != INF)
        s->b[n->prev].next = n->next;
    else
        l->head = n->next;
    if (n->next != INF)
        s->b[n->next].prev = n->prev;
    else
        l->tail = n->prev;
    n->prev = n->next = INF;
    l->size--;
}

/* Append b's list below a's (a stays on top). */
static void bl_concat(bstate *s, blist *a, blist *b)
{
    if (!b->size)
        return;
    if (!a->size) {
        *a = *b;
    } else {
        s->b[a->tail].next = b->head;
        s->b[b->head].prev = a->tail;
        a->tail = b->tail;
        a->size += b->size;
    }
    b->head = b->tail = INF;
    b->size = 0;
}

/* Cycle equivalence of g (connected); class[e] for every edge.  Returns the
 * number of classes, or 0 when out of memory. */
static uint32_t cycle_equiv(const graph *g, uint32_t root, uint32_t *cls)
{
    uint32_t nn = g->nn, ne = g->ne, ncls = 0;
    uint32_t *deg = calloc(nn + 1, sizeof *deg), *adj = malloc((2 * ne + 1) * sizeof *adj);
    uint32_t *dfs = malloc(nn * sizeof *dfs), *order = malloc(nn * sizeof *order);
    uint32_t *pedge = malloc(nn * sizeof *pedge), *hi = malloc(nn * sizeof *hi);
    uint32_t *stk = malloc(2 * (nn + 1) * sizeof *stk), *capl = malloc(nn * sizeof *capl);
    uint32_t *capnext = NULL;
    blist *bl = malloc(nn * sizeof *bl);
    /* Brackets: the real edges, then at most one capping edge per node. */
    bstate bs = { malloc((ne + nn + 1) * sizeof(bnode)), ne, ne + nn + 1 };
    if (!deg || !adj || !dfs || !order || !pedge || !hi || !stk || !capl || !bl || !bs.b)
        goto out;
    capnext = malloc(bs.cap * sizeof *capnext);
    if (!capnext)
        goto out;

    for (uint32_t e = 0; e < ne; e++) {
        deg[g->u[e] + 1]++;
        deg[g->v[e] + 1]++;
    }
    for (uint32_t n = 0; n < nn; n++)
        deg[n + 1] += deg[n];
    {
        uint32_t *fill = malloc((nn + 1) * sizeof *fill);
        if (!fill)
            goto out;
        memcpy(fill, deg, (nn + 1) * sizeof *fill);
        for (uint32_t e = 0; e < ne; e++) {
            adj[fill[g->u[e]]++] = e;
            adj[fill[g->v[e]]++] = e;
        }
        free(fill);
    }
    for (uint32_t n = 0; n < nn; n++) {
        dfs[n] = INF;
        pedge[n] = INF;
        capl[n] = INF;
        bl[n] = (blist){ INF, INF, 0 };
    }
    for (uint32_t e = 0; e < bs.cap; e++)
        bs.b[e] = (bnode){ INF, INF, INF, INF };
    for (uint32_t e = 0; e < ne; e++)
        cls[e] = INF;

    /* Undirected DFS: preorder numbers, tree edges. */
    uint32_t cnt = 0, sp = 0;
    dfs[root] = cnt;
    order[cnt++] = root;
    stk[sp++] = root;
    stk[sp++] = deg[root];
    while (sp) {
        uint32_t n = stk[sp - 2], k = stk[sp - 1];
        if (k == deg[n + 1]) {
            sp -= 2;
            continue;
        }
        stk[sp - 1] = k + 1;
        uint32_t e = adj[k], m = g->u[e] == n ? g->v[e] : g->u[e];
        if (dfs[m] != INF)
            continue;
        dfs[m] = cnt;
        order[cnt++] = m;
        pedge[m] = e;
        stk[sp++] = m;
        stk[sp++] = deg[m];
    }

    for (uint32_t i = cnt; i-- > 0;) {
        uint32_t n = order[i];
        uint32_t hi0 = INF, hi1 = INF, hi2 = INF;
        /* hi0: own backedges to ancestors; hi1/hi2: children. */
        for (uint32_t k = deg[n]; k < deg[n + 1]; k++) {
            uint32_t e = adj[k], m = g->u[e] == n ? g->v[e] : g->u[e];
            if (m == n)
                continue;
            if (pedge[m] == e && dfs[m] > dfs[n]) {          /* child */
                if (hi[m] < hi1) {
                    hi2 = hi1;
                    hi1 = hi[m];
                } else if (hi[m] < hi2) {
                    hi2 = hi[m];
                }
            } else if (e != pedge[n] && dfs[m] < dfs[n] && dfs[m] < hi0) {
                hi0 = dfs[m];
            }
        }
        hi[n] = hi0 < hi1 ? hi0 : hi1;
        for (uint32_t k = deg[n]; k < deg[n + 1]; k++) {
            uint32_t e = adj[k], m = g->u[e] == n ? g->v[e] : g->u[e];
            if (m != n && pedge[m] == e && dfs[m] > dfs[n])
                bl_concat(&bs, &bl[n], &bl[m]);
        }
        for (uint32_t c = capl[n]; c != INF; c = capnext[c])
            bl_delete(&bs, &bl[n], c);
        for (uint32_t k = deg[n]; k < deg[n + 1]; k++) {
            uint32_t e = adj[k], m = g->u[e] == n ? g->v[e] : g->u[e];
            if (m == n) {
                if (cls[e] == INF)
                    cls[e] = ncls++;
                continue;
            }
            if (pedge[m] != e && pedge[n] != e && dfs[m] > dfs[n]) {   /* backedge into n */
                bl_delete(&bs, &bl[n], e);
                if (cls[e] == INF)
                    cls[e] = ncls++;
            }
        }
        for (uint32_t k = deg[n]; k < deg[n + 1]; k++) {
            uint32_t e = adj[k], m = g->u[e] == n ? g->v[e] : g->u[e];
            if (m != n && e != pedge[n] && pedge[m] != e && dfs[m] < dfs[n])
                bl_push(&bs, &bl[n], e);
        }
        if (hi2 < hi0) {
            /* Capping backedge from n to the node numbered hi2. */
            if (bs.nb == bs.cap)
                goto out;       /* cannot happen: at most one per node */
            uint32_t d = bs.nb++, dst = order[hi2];
            capnext[d] = capl[dst];
            capl[dst] = d;
            bl_push(&bs, &bl[n], d);
        }
        if (n != root) {
            uint32_t e = pedge[n], b = bl[n].head;
            if (b == INF) {
                cls[e] = ncls++;      /* a bridge: no cycle at all */
                continue;
            }
            if (bs.b[b].recent_size != bl[n].size) {
                bs.b[b].recent_size = bl[n].size;
                bs.b[b].recent_class = ncls++;
            }
            cls[e] = bs.b[b].recent_class;
            if (bs.b[b].recent_size == 1 && b < ne)
                cls[b] = cls[e];
        }
    }
    for (uint32_t e = 0; e < ne; e++)
        if (cls[e] == INF)
            cls[e] = ncls++;
out:
    free(deg);
    free(adj);
    free(dfs);
    free(order);
    free(pedge);
    free(hi);
    free(stk);
    free(capl);
    free(capnext);
    free(bl);
    free(bs.b);
    return ncls;
}

/* Mark what `from` reaches, forwards or backwards, over the CFG. */
static void reach(const cfg_proc *f, uint32_t from, bool forward, uint8_t *seen, uint32_t *stk)
{
    size_t sp = 0;
    if (seen[from])
        return;
    seen[from] = 1;
    stk[sp++] = from;
    while (sp) {
        const cfg_block *b = &f->blocks[stk[--sp]];
        uint32_t n = forward ? b->nout : b->nin;
        for (uint32_t k = 0; k < n; k++) {
            const cfg_edge *e = &f->edges[forward ? f->out_edges[b->first_out + k]
                                                  : f->in_edges[b->first_in + k]];
            uint32_t m = forward ? e->to : e->from;
            if (m < f->nblocks && !seen[m]) {
                seen[m] = 1;
                stk[sp++] = m;
            }
        }
    }
}

static void each_own_class(cfg_proc *f)
{
    uint32_t c = 0;
    for (size_t b = 0; b < f->nblocks; b++)
        f->blocks[b].eqclass = c++;
    for (size_t e = 0; e < f->nedges; e++)
        f->edges[e].eqclass = c++;
    f->nclasses = c;
}

void cfg_equiv(cfg_proc *f)
{
    uint32_t nb = (uint32_t)f->nblocks;
    if ((f->flags & CFG_PF_MISSING) || !nb) {
        each_own_class(f);
        return;
    }
    enum { N_ENTRY = 0, N_EXIT = 1 };
    graph g = { 2 + 2 * nb, 0, 0, NULL, NULL };
    uint8_t *seen = calloc(nb, 1);
    uint32_t *stk = malloc(nb * sizeof *stk), *cls = NULL, *renum = NULL;
    bool ok = seen && stk;
    for (uint32_t b = 0; ok && b < nb; b++)
        ok = gadd(&g, 2 + 2 * b, 3 + 2 * b);
    for (size_t e = 0; ok && e < f->nedges; e++) {
        const cfg_edge *x = &f->edges[e];
        uint32_t a = x->from == CFG_ENTRY ? N_ENTRY : 3 + 2 * x->from;
        uint32_t z = x->to == CFG_EXIT ? N_EXIT : 2 + 2 * x->to;
        ok = gadd(&g, a, z);
    }
    ok = ok && gadd(&g, N_EXIT, N_ENTRY);
    /* Never-run edges that make every node lie between entry and exit. */
    for (uint32_t b = 0; ok && b < nb; b++)
        if (f->blocks[b].flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY))
            reach(f, b, true, seen, stk);
    for (uint32_t b = 0; ok && b < nb; b++)
        if (!seen[b]) {
            ok = gadd(&g, N_ENTRY, 2 + 2 * b);
            reach(f, b, true, seen, stk);
        }
    if (ok) {
        memset(seen, 0, nb);
        for (size_t e = 0; e < f->nedges; e++)
            if (f->edges[e].to == CFG_EXIT && f->edges[e].from < nb)
                reach(f, f->edges[e].from, false, seen, stk);
    }
    for (uint32_t b = nb; ok && b-- > 0;)
        if (!seen[b]) {
            ok = gadd(&g, 3 + 2 * b, N_EXIT);
            reach(f, b, false, seen, stk);
        }
    if (ok) {
        cls = malloc((g.ne * 2 + 1) * sizeof *cls);
        renum = malloc((g.ne * 2 + 1) * sizeof *renum);
        ok = cls && renum;
    }
    uint32_t n = ok ? cycle_equiv(&g, N_ENTRY, cls) : 0;
    if (!n) {
        each_own_class(f);
    } else {
        /* Dense numbering in the order blocks, then edges, first use them. */
        for (uint32_t i = 0; i < n; i++)
            renum[i] = INF;
        uint32_t c = 0;
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t k = cls[b];
            if (renum[k] == INF)
                renum[k] = c++;
            f->blocks[b].eqclass = renum[k];
        }
        for (size_t e = 0; e < f->nedges; e++) {
            uint32_t k = cls[nb + e];
            if (renum[k] == INF)
                renum[k] = c++;
            f->edges[e].eqclass = renum[k];
        }
        f->nclasses = c;
    }
    free(seen);
    free(stk);
    free(cls);
    free(renum);
    free(g.u);
    free(g.v);
}
