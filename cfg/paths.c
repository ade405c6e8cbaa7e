/*
 * cfg/paths.c: Ball-Larus path numbering (cfg/paths.h).
 *
 * Four steps over the path graph (blocks, ENTRY, EXIT): the depth-first
 * walk of cfg_rpo finds the retreating edges and a reverse topological order
 * (which holds once they and the shared tables' edges are cut);
 * the values come from counting, in that order, the paths from each node
 * to EXIT; a maximum spanning tree (Kruskal, with the edge EXIT->ENTRY
 * forced in) picks the chords; potentials along the tree turn values into
 * increments, inc(u->v) = val + phi(u) - phi(v), zero on tree edges.  Any
 * path from ENTRY to EXIT then adds up the same in both, because the tree
 * path EXIT->ENTRY closes every such path into a cycle of zero potential.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"
#include "cfg/paths.h"

#define PATHS_MAX (UINT64_C(1) << 63)

/* The edges as they are collected, before parallel ones are merged. */
typedef struct edge_list {
    cfg_path_edge *e;
    size_t n, cap;
} edge_list;

static bool add_edge(edge_list *B, uint32_t from, uint32_t to, uint8_t kind, uint32_t ce,
                     double w)
{
    if (B->n == B->cap) {
        size_t cap = B->cap ? 2 * B->cap : 64;
        cfg_path_edge *ne = realloc(B->e, cap * sizeof *ne);
        if (!ne)
            return false;
        B->e = ne, B->cap = cap;
    }
    B->e[B->n++] = (cfg_path_edge){ .from = from, .to = to, .kind = kind, .cfg_edge = ce,
                                    .weight = w };
    return true;
}

double cfg_paths_depth_weight(const cfg_proc *f, uint32_t e)
{
    uint32_t b = f->edges[e].from < f->nblocks ? f->edges[e].from : f->edges[e].to;
    uint32_t d = b < f->nblocks ? f->blocks[b].loop_depth : 0;
    return pow(8, d < 10 ? d : 10);
}

static double edge_weight(const cfg_proc *f, const double *weight, uint32_t e)
{
    if (e == CFG_NONE)
        return 0;
    if (weight)
        return weight[e] > 0 ? weight[e] : 0;
    return cfg_paths_depth_weight(f, e);
}

/* Why a CFG edge is cut into a dummy pair: it retreats, or it is a table
 * edge of a jump sharing its table (cut_shared_tables). */
enum { CUT_BACK = 1, CUT_TABLE = 2 };

/* The walk: reach[b] for blocks the entries reach, cut[e] = CUT_BACK for
 * retreating CFG edges, and post[] the path-graph nodes in reverse
 * topological order once those are cut (ENTRY last); cutting more edges
 * keeps it one. */
static bool walk(const cfg_proc *f, uint8_t *reach, uint32_t *post, size_t *npost, uint8_t *cut)
{
    uint32_t nb = (uint32_t)f->nblocks;
    uint32_t *rpo = malloc((nb + 1) * sizeof *rpo), *order = malloc((nb + 1) * sizeof *order);
    size_t n = 0;
    bool ok = rpo && order && cfg_rpo(f, rpo, order, &n);
    for (size_t k = 0; ok && k < n; k++) {
        uint32_t node = rpo[n - 1 - k];
        post[k] = node ? node - 1 : nb;         /* the root is ENTRY */
        if (node)
            reach[node - 1] = 1;
    }
    *npost = ok ? n : 0;
    for (size_t e = 0; ok && e < f->nedges; e++) {
        const cfg_edge *E = &f->edges[e];
        cut[e] = E->from < nb && E->to < nb && order[E->from + 1] != UINT32_MAX &&
                  order[E->to + 1] <= order[E->from + 1];
    }
    free(rpo), free(order);
    return ok;
}

/* A jump that reads a table another jump reads too: code on one of its
 * table edges would sit on a table entry, which every jump reading it
 * runs.  Its table edges are cut as back edges are (cut[e] |= CUT_TABLE),
 * so the path ends before the jump, with one dummy to the exit for all of
 * them (parallel dummies merge), and starts again at the target. */
static void cut_shared_tables(const cfg_proc *f, uint8_t *cut)
{
    for (size_t k = 0; k < f->ntables; k++) {
        const cfg_table *t = &f->tables[k];
        uint64_t lo = t->table, hi = lo + (uint64_t)t->count * t->entsize;
        bool shared = false;
        for (size_t j = 0; j < f->ntables && !shared; j++) {
            const cfg_table *o = &f->tables[j];
            shared = o->jump != t->jump && o->table < hi &&
                     o->table + (uint64_t)o->count * o->entsize > lo;
        }
        uint32_t b = shared ? cfg_block_at(f, t->jump) : CFG_NONE;
        if (b == CFG_NONE || f->blocks[b].end - 4 != t->jump)
            continue;
        for (uint32_t i = 0; i < f->blocks[b].nout; i++) {
            uint32_t e = f->out_edges[f->blocks[b].first_out + i];
            if (f->edges[e].kind == CFG_EDGE_TABLE && f->edges[e].to < f->nblocks)
                cut[e] |= CUT_TABLE;
        }
    }
}

static int by_from(const void *a, const void *b)
{
    const cfg_path_edge *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

static uint32_t find(uint32_t *up, uint32_t x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

static const cfg_path_edge *sort_edges;
static int by_weight(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double wx = sort_edges[x].weight, wy = sort_edges[y].weight;
    if (wx != wy)
        return wx > wy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The spanning tree and the increments on its chords. */
static bool place_increments(cfg_paths *P, char *err, size_t errlen, const char *name)
{
    uint32_t nn = P->nblocks + 2, entry = P->nblocks, exit = P->nblocks + 1;
    size_t ne = P->nedges;
    uint32_t *up = malloc(nn * sizeof *up), *ord = malloc((ne + 1) * sizeof *ord);
    uint32_t *adj = malloc((2 * ne + 1) * sizeof *adj), *deg = calloc(nn + 1, sizeof *deg);
    uint32_t *queue = malloc(nn * sizeof *queue), *fill = calloc(nn, sizeof *fill);
    __int128 *phi = calloc(nn, sizeof *phi);
    uint8_t *seen = calloc(nn, 1), *tree = calloc(ne + 1, 1);
    bool ok = up && ord && adj && deg && queue && fill && phi && seen && tree;
    if (!ok) {
        snprintf(err, errlen, "%s: out of memory", name);
        goto out;
    }
    for (uint32_t v = 0; v < nn; v++)
        up[v] = v;
    up[exit] = entry;                           /* EXIT->ENTRY is in the tree */
    for (size_t i = 0; i < ne; i++)
        ord[i] = (uint32_t)i;
    sort_edges = P->edges;
    qsort(ord, ne, sizeof *ord, by_weight);
    for (size_t k = 0; k < ne; k++) {
        const cfg_path_edge *E = &P->edges[ord[k]];
        uint32_t a = find(up, E->from), b = find(up, E->to);
        if (a != b) {
            up[a] = b;
            tree[ord[k]] = 1;
        }
    }
    /* Potentials over the tree (undirected), from ENTRY; phi(EXIT) = 0. */
    for (size_t i = 0; i < ne; i++)
        if (tree[i])
            deg[P->edges[i].from + 1]++, deg[P->edges[i].to + 1]++;
    for (uint32_t v = 0; v < nn; v++)
        deg[v + 1] += deg[v];
    for (size_t i = 0; i < ne; i++)
        if (tree[i]) {
            adj[deg[P->edges[i].from] + fill[P->edges[i].from]++] = (uint32_t)i;
            adj[deg[P->edges[i].to] + fill[P->edges[i].to]++] = (uint32_t)i;
        }
    size_t qh = 0, qt = 0;
    queue[qt++] = entry, seen[entry] = 1;
    queue[qt++] = exit, seen[exit] = 1;
    while (qh < qt) {
        uint32_t v = queue[qh++];
        for (uint32_t k = deg[v]; k < deg[v + 1]; k++) {
            const cfg_path_edge *E = &P->edges[adj[k]];
            uint32_t u = E->from == v ? E->to : E->from;
            if (seen[u])
                continue;
            phi[u] = E->from == v ? phi[v] + (__int128)E->val : phi[v] - (__int128)E->val;
            seen[u] = 1;
            queue[qt++] = u;
        }
    }
    P->nchords = 0;
    for (size_t i = 0; i < ne && ok; i++) {
        cfg_path_edge *E = &P->edges[i];
        E->chord = !tree[i];
        __int128 inc = tree[i] ? 0 : (__int128)E->val + phi[E->from] - phi[E->to];
        if (inc > INT64_MAX || inc < INT64_MIN) {
            snprintf(err, errlen, "%s: a path increment does not fit in 64 bits", name);
            ok = false;
        }
        E->inc = (int64_t)inc;
        P->nchords += E->chord;
    }
out:
    free(up), free(ord), free(adj), free(deg), free(queue), free(fill), free(phi), free(seen),
        free(tree);
    return ok;
}

/* Collects the path graph's edges of f into B; has_out[b] is set for every
 * block that got an edge out. */
static bool collect(const cfg_proc *f, const double *weight, const uint8_t *reach,
                    const uint8_t *cut, edge_list *B)
{
    uint32_t nb = (uint32_t)f->nblocks, entry = nb, exit = nb + 1;
    uint8_t *has_out = calloc(nb + 1, 1);
    bool ok = has_out != NULL;
    for (uint32_t b = 0; ok && b < nb; b++)
        if (reach[b] && f->blocks[b].flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY))
            ok = add_edge(B, entry, b, CFG_PATH_EDGE_REAL, CFG_NONE, 0);
    for (size_t e = 0; ok && e < f->nedges; e++) {
        const cfg_edge *E = &f->edges[e];
        double w = edge_weight(f, weight, (uint32_t)e);
        if (E->from == CFG_ENTRY) {
            if (E->to < nb && reach[E->to])
                ok = add_edge(B, entry, E->to, CFG_PATH_EDGE_REAL, (uint32_t)e, w);
            continue;
        }
        if (E->from >= nb || !reach[E->from])
            continue;
        has_out[E->from] = 1;
        if (E->to >= nb)
            ok = add_edge(B, E->from, exit, CFG_PATH_EDGE_REAL, (uint32_t)e, w);
        else if (cut[e])
            /* A shared table's restarts weigh above anything, so they are
             * all on the spanning tree (a star from ENTRY has no cycle)
             * and their increments 0: every edge of the jump then needs
             * the same code, the count of its one dummy to the exit. */
            ok = add_edge(B, E->from, exit, CFG_PATH_EDGE_BACK_OUT, (uint32_t)e, w) &&
                 add_edge(B, entry, E->to, CFG_PATH_EDGE_BACK_IN, (uint32_t)e,
                          cut[e] & CUT_TABLE ? HUGE_VAL : w);
        else
            ok = add_edge(B, E->from, E->to, CFG_PATH_EDGE_REAL, (uint32_t)e, w);
    }
    /* A reachable block with no way out (a call that never returns, a
     * trap) ends its paths there. */
    for (uint32_t b = 0; ok && b < nb; b++)
        if (reach[b] && !has_out[b])
            ok = add_edge(B, b, exit, CFG_PATH_EDGE_REAL, CFG_NONE, 0);
    free(has_out);
    return ok;
}

/* Sorts B by node and merges parallel edges into the first of each run
 * (their weights added; an edge named by a CFG edge is preferred). */
static void merge_parallel(edge_list *B)
{
    if (!B->n)
        return;                                 /* no entry reached: no paths */
    qsort(B->e, B->n, sizeof *B->e, by_from);
    size_t k = 0;
    for (size_t i = 0; i < B->n; i++) {
        cfg_path_edge *x = &B->e[i];
        if (k && B->e[k - 1].from == x->from && B->e[k - 1].to == x->to &&
            B->e[k - 1].kind == x->kind) {
            B->e[k - 1].weight += x->weight;
            if (B->e[k - 1].cfg_edge == CFG_NONE)
                B->e[k - 1].cfg_edge = x->cfg_edge;
            continue;
        }
        B->e[k++] = *x;
    }
    B->n = k;
}

/* Values: the paths from each node to EXIT, counted in reverse topological
 * order (the walk's finishing order); false above 2^63. */
static bool number(cfg_paths *P, const uint32_t *post, size_t npost, char *err, size_t errlen,
                   const char *name)
{
    uint32_t nb = P->nblocks;
    uint64_t *np = calloc(nb + 2, sizeof *np);
    if (!np) {
        snprintf(err, errlen, "%s: out of memory", name);
        return false;
    }
    np[nb + 1] = 1;
    bool ok = true;
    for (size_t k = 0; ok && k < npost; k++) {
        uint32_t v = post[k];
        uint64_t n = 0;
        for (uint32_t i = P->first[v]; i < P->first[v + 1]; i++) {
            P->edges[i].val = n;
            if (np[P->edges[i].to] > PATHS_MAX - n) {
                snprintf(err, errlen, "%s: more than 2^63 potential paths: no path numbering",
                         name);
                ok = false;
                break;
            }
            n += np[P->edges[i].to];
        }
        np[v] = n;
    }
    P->npaths = np[nb];
    free(np);
    return ok;
}

/* of_cfg and back_in: which path edge stands for each CFG edge. */
static void map_cfg_edges(cfg_paths *P, const cfg_proc *f, const uint8_t *reach,
                          const uint8_t *cut)
{
    uint32_t nb = P->nblocks;
    for (size_t e = 0; e < f->nedges; e++) {
        const cfg_edge *E = &f->edges[e];
        P->of_cfg[e] = P->back_in[e] = CFG_NONE;
        if (E->from == CFG_ENTRY) {
            if (E->to < nb && reach[E->to])
                P->of_cfg[e] = cfg_path_edge_between(P, nb, E->to);
            continue;
        }
        if (E->from >= nb || !reach[E->from])
            continue;
        if (!cut[e]) {
            P->of_cfg[e] = cfg_path_edge_between(P, E->from, E->to >= nb ? nb + 1 : E->to);
            continue;
        }
        for (uint32_t i = P->first[E->from]; i < P->first[E->from + 1]; i++)
            if (P->edges[i].kind == CFG_PATH_EDGE_BACK_OUT)
                P->of_cfg[e] = i;
        for (uint32_t i = P->first[nb]; i < P->first[nb + 1]; i++)
            if (P->edges[i].kind == CFG_PATH_EDGE_BACK_IN && P->edges[i].to == E->to)
                P->back_in[e] = i;
    }
}

bool cfg_paths_build(const cfg_proc *f, const double *weight, cfg_paths *P, char *err, size_t errlen)
{
    const char *name = f->name ? f->name : "?";
    memset(P, 0, sizeof *P);
    if (f->flags & CFG_PF_MISSING) {
        snprintf(err, errlen, "%s: its CFG misses edges (%s): no path numbering", name,
                 f->why[0] ? f->why : "unresolved control flow");
        return false;
    }
    uint32_t nb = (uint32_t)f->nblocks, nn = nb + 2;
    edge_list B = { 0 };
    uint8_t *reach = calloc(nn, 1), *cut = calloc(f->nedges + 1, 1);
    uint32_t *post = malloc(nn * sizeof *post);
    size_t npost = 0;
    P->nblocks = nb;
    P->of_cfg = malloc((f->nedges + 1) * sizeof *P->of_cfg);
    P->back_in = malloc((f->nedges + 1) * sizeof *P->back_in);
    P->first = calloc(nn + 1, sizeof *P->first);
    bool ok = reach && cut && post && P->of_cfg && P->back_in && P->first &&
              walk(f, reach, post, &npost, cut);
    if (ok)
        cut_shared_tables(f, cut);
    ok = ok && collect(f, weight, reach, cut, &B);
    if (!ok) {
        snprintf(err, errlen, "%s: out of memory", name);
        free(B.e);
    } else {
        merge_parallel(&B);
        P->edges = B.e, P->nedges = B.n;
        for (size_t i = 0; i < P->nedges; i++)
            P->first[P->edges[i].from + 1]++;
        for (uint32_t v = 0; v < nn; v++)
            P->first[v + 1] += P->first[v];
        ok = number(P, post, npost, err, errlen, name);
    }
    if (ok) {
        map_cfg_edges(P, f, reach, cut);
        ok = place_increments(P, err, errlen, name);
    }
    free(reach), free(cut), free(post);
    if (!ok)
        cfg_paths_free(P);
    return ok;
}

void cfg_paths_free(cfg_paths *p)
{
    free(p->edges);
    free(p->first);
    free(p->of_cfg);
    free(p->back_in);
    memset(p, 0, sizeof *p);
}

size_t cfg_path_edges(const cfg_paths *p, uint64_t id, uint32_t *edges, size_t cap)
{
    if (id >= p->npaths)
        return 0;
    uint32_t v = p->nblocks, exit = p->nblocks + 1;
    uint64_t r = id;
    size_t n = 0;
    while (v != exit) {
        uint32_t pick = CFG_NONE;
        for (uint32_t i = p->first[v]; i < p->first[v + 1] && p->edges[i].val <= r; i++)
            pick = i;
        if (pick == CFG_NONE)
            return 0;                           /* cannot happen: val 0 is first */
        r -= p->edges[pick].val;
        if (n < cap)
            edges[n] = pick;
        n++;
        v = p->edges[pick].to;
    }
    return n;
}

/* Values are such that the paths from a node to the exit add up to
 * distinct sums, and each node's first edge is worth 0: the piece worth val
 * from `from` to `to`, followed by nothing but first edges, is the one
 * path from `from` worth val, which taking at each node the largest value
 * that fits finds. */
bool cfg_path_piece(const cfg_paths *p, uint32_t from, uint32_t to, uint64_t val, uint32_t *edges, size_t cap,
                    size_t *n)
{
    uint32_t exit = p->nblocks + 1;
    if (from > exit || to > exit)
        return false;
    uint32_t v = from;
    uint64_t r = val;
    *n = 0;
    while (v != to) {
        if (v == exit)
            return false;
        uint32_t pick = CFG_NONE;
        for (uint32_t i = p->first[v]; i < p->first[v + 1] && p->edges[i].val <= r; i++)
            pick = i;
        if (pick == CFG_NONE)
            return false;                       /* a node on no path */
        r -= p->edges[pick].val;
        if (*n < cap)
            edges[*n] = pick;
        (*n)++;
        v = p->edges[pick].to;
    }
    return r == 0;
}

uint32_t cfg_path_edge_between(const cfg_paths *p, uint32_t a, uint32_t b)
{
    if (a > p->nblocks + 1)
        return CFG_NONE;
    for (uint32_t i = p->first[a]; i < p->first[a + 1]; i++)
        if (p->edges[i].to == b && p->edges[i].kind == CFG_PATH_EDGE_REAL)
            return i;
    return CFG_NONE;
}
