/*
 * estimator/freq_flow.c: making frequency estimates agree with the CFG.
 *
 * Two steps.  Local propagation is DCPI's: where a block's count and all
 * but one of its in- (or out-) edges are known, the last one follows; where
 * all are known, the block follows.  The global step goes further, as
 * LLVM's profile inference does for sampled profiles: it finds the counts
 * that conserve flow at every block and depart least from the estimates,
 * a departure of d executions from an estimate of confidence c costing
 * d * weight(c).  That is a minimum-cost flow problem.
 *
 * Formulation: each block b is an arc b.in -> b.out carrying its count,
 * each CFG edge an arc between blocks (from a source S for entry edges,
 * to a sink T for exit edges), and T -> S closes the circulation.  An item
 * with estimate c gets a "base" arc of capacity c and cost -w, which is
 * filled at the start (so every node with consistent estimates starts
 * balanced), plus an "extra" arc of unlimited capacity and cost +w; an item
 * with no estimate gets only a cheap extra arc.  Pre-filling leaves an
 * excess or a deficit only where the estimates disagree, and successive
 * shortest paths (Dijkstra with potentials, all reduced costs
 * non-negative) move the excesses to the deficits at least cost: the
 * residual of a filled base arc is its reverse at cost +w, so giving back
 * part of an estimate costs what exceeding it does, except for an "upper"
 * estimate (one that rests on issue points that may all have stalled),
 * which gives back at half the cost.  A block's count above its cap (what
 * its own samples allow: estimator/freq.h) costs OVER_CAP more per
 * execution, so the flow does not, for instance, run a loop round a block
 * that has no samples to balance an overestimate elsewhere.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/freq_internal.h"

/* ---- local propagation -------------------------------------------- */

typedef struct members {
    uint32_t *first, *next;  /* per class: a chain through blocks then edges */
} members;

static void set_item(const cfg_proc *f, est_proc_freq *q, bool isblock, size_t i, double v,
                     uint8_t conf, bool *changed);

/* Gives every unknown member of class k the value v. */
static void share(const cfg_proc *f, est_proc_freq *q, uint32_t k, double v, uint8_t conf,
                  bool *changed)
{
    for (size_t b = 0; b < f->nblocks; b++)
        if (f->blocks[b].eqclass == k && q->block_from[b] == EST_FROM_NONE)
            set_item(f, q, true, b, v, conf, changed);
    for (size_t e = 0; e < f->nedges; e++)
        if (f->edges[e].eqclass == k && q->edge_from[e] == EST_FROM_NONE)
            set_item(f, q, false, e, v, conf, changed);
}

static void set_item(const cfg_proc *f, est_proc_freq *q, bool isblock, size_t i, double v,
                     uint8_t conf, bool *changed)
{
    if (v < 0)
        v = 0;
    uint32_t k;
    if (isblock) {
        q->block[i] = v;
        q->block_conf[i] = conf;
        q->block_from[i] = EST_FROM_PROPAGATION;
        k = f->blocks[i].eqclass;
    } else {
        q->edge[i] = v;
        q->edge_conf[i] = conf;
        q->edge_from[i] = EST_FROM_PROPAGATION;
        k = f->edges[i].eqclass;
    }
    *changed = true;
    if (!(f->flags & CFG_PF_MISSING) && k != CFG_NONE)
        share(f, q, k, v, conf, changed);
}

/* One side (in or out) of block b: fills what the others determine. */
static void side(const cfg_proc *f, est_proc_freq *q, size_t b, const uint32_t *list, uint32_t n,
                 bool *changed)
{
    double sum = 0;
    uint32_t unknown = 0, last = 0;
    uint8_t conf = q->block_conf[b];
    for (uint32_t k = 0; k < n; k++) {
        uint32_t e = list[k];
        if (q->edge_from[e] == EST_FROM_NONE) {
            unknown++;
            last = e;
        } else {
            sum += q->edge[e];
            if (q->edge_conf[e] < conf)
                conf = q->edge_conf[e];
        }
    }
    bool bknown = q->block_from[b] != EST_FROM_NONE;
    if (bknown && unknown == 1)
        set_item(f, q, false, last, q->block[b] - sum, conf, changed);
    else if (!bknown && unknown == 0 && n > 0)
        set_item(f, q, true, b, sum, conf, changed);
}

void est_propagate(const cfg_proc *f, est_proc_freq *q)
{
    if (f->flags & CFG_PF_MISSING)
        return;
    /* Each pass makes at least one estimate or stops; a pass is linear. */
    for (size_t pass = 0; pass <= f->nblocks + f->nedges; pass++) {
        bool changed = false;
        for (size_t b = 0; b < f->nblocks; b++) {
            const cfg_block *bl = &f->blocks[b];
            side(f, q, b, f->in_edges + bl->first_in, bl->nin, &changed);
            side(f, q, b, f->out_edges + bl->first_out, bl->nout, &changed);
        }
        if (!changed)
            break;
    }
}

/* ---- the global step: minimum-cost flow ---------------------------- */

typedef struct arc {
    uint32_t to, next;
    double cap, cost;
} arc;

typedef struct net {
    arc *a;
    size_t n, cap;
    uint32_t *head;
    size_t nnodes;
} net;

#define NIL UINT32_MAX
#define INF_CAP 1e300

static bool add_arc(net *g, uint32_t u, uint32_t v, double cap, double cost, uint32_t *id)
{
    if (g->n + 2 > g->cap) {
        size_t c = g->cap ? 2 * g->cap : 64;
        arc *na = realloc(g->a, c * sizeof *na);
        if (!na)
            return false;
        g->a = na;
        g->cap = c;
    }
    uint32_t i = (uint32_t)g->n;
    g->a[i] = (arc){ v, g->head[u], cap, cost };
    g->head[u] = i;
    g->a[i + 1] = (arc){ u, g->head[v], 0, -cost };
    g->head[v] = i + 1;
    g->n += 2;
    if (id)
        *id = i;
    return true;
}

static double weight(uint8_t conf)
{
    static const double w[] = { 1, 4, 16, 1000 };
    return conf < 4 ? w[conf] : 1;
}

#define FREE_COST 1e-3   /* per execution on an item with no estimate */
#define OVER_CAP  64     /* per execution above a block's cap */
#define UPPER_DOWN 0.5    /* lowering an "upper" estimate, per its weight */

/* A binary heap of (distance, node). */
typedef struct hitem { double d; uint32_t v; } hitem;

static void hpush(hitem *h, size_t *n, hitem x)
{
    size_t i = (*n)++;
    while (i && h[(i - 1) / 2].d > x.d) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static hitem hpop(hitem *h, size_t *n)
{
    hitem top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].d < h[c].d)
            c++;
        if (h[c].d >= x.d)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* Successive shortest paths from ss to sk until no excess is left. */
static bool min_cost_flow(net *g, uint32_t ss, uint32_t sk, double need)
{
    size_t nn = g->nnodes;
    double *pot = calloc(nn, sizeof *pot), *dist = malloc(nn * sizeof *dist);
    uint32_t *via = malloc(nn * sizeof *via);
    hitem *heap = malloc((g->n + nn + 1) * sizeof *heap);
    bool ok = pot && dist && via && heap;
    double eps = 1e-9 * (need > 1 ? need : 1);
    for (size_t iter = 0; ok && need > eps && iter < 50 * nn + 1000; iter++) {
        for (size_t v = 0; v < nn; v++) {
            dist[v] = INFINITY;
            via[v] = NIL;
        }
        size_t hn = 0;
        dist[ss] = 0;
        hpush(heap, &hn, (hitem){ 0, ss });
        while (hn) {
            hitem it = hpop(heap, &hn);
            if (it.d > dist[it.v])
                continue;
            if (it.v == sk)
                break;   /* its path is known: the rest would only cost time */
            for (uint32_t i = g->head[it.v]; i != NIL; i = g->a[i].next) {
                const arc *a = &g->a[i];
                if (a->cap <= eps)
                    continue;
                double rc = a->cost + pot[it.v] - pot[a->to];
                if (rc < 0)
                    rc = 0;   /* rounding */
                double d = it.d + rc;
                if (d < dist[a->to]) {
                    dist[a->to] = d;
                    via[a->to] = i;
                    hpush(heap, &hn, (hitem){ d, a->to });
                }
            }
        }
        if (via[sk] == NIL)
            break;
        /* Nodes not settled before sk (their distance is at least sk's)
         * move with sk, which keeps every reduced cost non-negative.
         * Stopping at sk rather than settling the whole network took
         * speedtest1's solves from 2.45 s to 0.28 s (sqlite3VdbeExec, 624
         * paths, the most of it); the least costs were the same for every
         * procedure of speedtest1 and lua, only ties between equally cheap
         * flows went another way. */
        double dsk = dist[sk];
        for (size_t v = 0; v < nn; v++)
            pot[v] += dist[v] < dsk ? dist[v] : dsk;
        double push = need;
        for (uint32_t v = sk; v != ss; v = g->a[via[v] ^ 1].to)
            if (g->a[via[v]].cap < push)
                push = g->a[via[v]].cap;
        for (uint32_t v = sk; v != ss; v = g->a[via[v] ^ 1].to) {
            g->a[via[v]].cap -= push;
            g->a[via[v] ^ 1].cap += push;
        }
        need -= push;
    }
    free(pot);
    free(dist);
    free(via);
    free(heap);
    return ok;
}

/* An item's arcs: base (filled to its estimate) and extra. */
typedef struct item {
    uint32_t base, extra, over;   /* arc ids, NIL when absent */
    double est;
} item;

static bool item_arcs(net *g, double *imb, uint32_t u, uint32_t v, bool known, double est,
                      uint8_t conf, bool upper, double cap, item *it)
{
    it->base = it->over = NIL;
    it->est = known ? est : 0;
    double w = known ? weight(conf) : FREE_COST;
    if (known && est > 0) {
        double down = upper ? w * UPPER_DOWN : w;
        if (!add_arc(g, u, v, 0, -down, &it->base))
            return false;
        g->a[it->base ^ 1].cap = est;   /* filled: only its reverse is left */
        imb[u] -= est;
        imb[v] += est;
    }
    if (!(cap < INFINITY))
        return add_arc(g, u, v, INF_CAP, w, &it->extra);
    /* Above its cap the item costs as much as a count can. */
    double room = cap > it->est ? cap - it->est : 0;
    return add_arc(g, u, v, room, w, &it->extra) &&
           add_arc(g, u, v, INF_CAP, w + OVER_CAP, &it->over);
}

static double item_flow(const net *g, const item *it)
{
    double v = g->a[it->extra ^ 1].cap;
    if (it->over != NIL)
        v += g->a[it->over ^ 1].cap;
    if (it->base != NIL)
        v += it->est - g->a[it->base].cap;
    return v > 0 ? v : 0;
}

bool est_flow_solve(const cfg_proc *f, est_proc_freq *q)
{
    if (f->flags & CFG_PF_MISSING || !f->nblocks)
        return true;
    size_t nb = f->nblocks;
    net g = { 0 };
    g.nnodes = 2 * nb + 4;   /* S, T, then in/out per block, then ss, sk */
    uint32_t S = 0, T = 1, ss = (uint32_t)(2 * nb + 2), sk = (uint32_t)(2 * nb + 3);
    g.head = malloc(g.nnodes * sizeof *g.head);
    double *imb = calloc(g.nnodes, sizeof *imb);
    item *bi = malloc(nb * sizeof *bi), *ei = malloc((f->nedges + 1) * sizeof *ei);
    bool ok = g.head && imb && bi && ei;
    if (ok)
        memset(g.head, 0xff, g.nnodes * sizeof *g.head);
    for (size_t b = 0; ok && b < nb; b++)
        ok = item_arcs(&g, imb, (uint32_t)(2 + 2 * b), (uint32_t)(3 + 2 * b),
                       q->block_from[b] == EST_FROM_SAMPLES || q->block_from[b] == EST_FROM_COUNTS,
                       q->block[b], q->block_conf[b], q->block_upper[b], q->block_cap[b], &bi[b]);
    for (size_t e = 0; ok && e < f->nedges; e++) {
        const cfg_edge *ed = &f->edges[e];
        uint32_t u = ed->from == CFG_ENTRY ? S : (uint32_t)(3 + 2 * ed->from);
        uint32_t v = ed->to == CFG_EXIT ? T : (uint32_t)(2 + 2 * ed->to);
        ok = item_arcs(&g, imb, u, v,
                       q->edge_from[e] == EST_FROM_SAMPLES || q->edge_from[e] == EST_FROM_COUNTS,
                       q->edge[e], q->edge_conf[e], q->edge_upper[e], INFINITY, &ei[e]);
    }
    ok = ok && add_arc(&g, T, S, INF_CAP, 0, NULL);
    double need = 0;
    for (uint32_t v = 0; ok && v < 2 * nb + 2; v++) {
        if (imb[v] > 0) {
            ok = add_arc(&g, ss, v, imb[v], 0, NULL);
            need += imb[v];
        } else if (imb[v] < 0) {
            ok = add_arc(&g, v, sk, -imb[v], 0, NULL);
        }
    }
    ok = ok && min_cost_flow(&g, ss, sk, need);
    for (size_t b = 0; ok && b < nb; b++) {
        q->block[b] = item_flow(&g, &bi[b]);
        if (q->block_from[b] == EST_FROM_NONE)
            q->block_conf[b] = EST_CONF_LOW;
    }
    for (size_t e = 0; ok && e < f->nedges; e++) {
        q->edge[e] = item_flow(&g, &ei[e]);
        if (q->edge_from[e] == EST_FROM_NONE)
            q->edge_conf[e] = EST_CONF_LOW;
    }
    free(g.a);
    free(g.head);
    free(imb);
    free(bi);
    free(ei);
    return ok;
}
