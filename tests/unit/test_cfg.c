/*
 * cfg/: frequency-equivalence classes and loops on hand-made graphs, checked
 * against the definition (brute force) and against counts from random walks;
 * then whole programs from build/programs (skipped when missing).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/paths.h"

/* ---- hand-made graphs ------------------------------------------------------ */

typedef struct { uint32_t from, to; } E;
#define X CFG_EXIT

/* A procedure of nb blocks (block 0 the entry) and the given edges. */
static cfg_proc *mkproc(uint32_t nb, const E *es, size_t ne)
{
    cfg_proc *f = calloc(1, sizeof *f);
    f->nblocks = nb;
    f->blocks = calloc(nb, sizeof *f->blocks);
    f->nedges = ne + 1;
    f->edges = calloc(ne + 1, sizeof *f->edges);
    f->edges[0] = (cfg_edge){ CFG_ENTRY, 0, CFG_EDGE_ENTRY, 0, CFG_NONE };
    for (size_t i = 0; i < ne; i++)
        f->edges[i + 1] = (cfg_edge){ es[i].from, es[i].to,
                                      es[i].to == X ? CFG_EDGE_RETURN : CFG_EDGE_TAKEN, 0, CFG_NONE };
    for (uint32_t b = 0; b < nb; b++)
        f->blocks[b] = (cfg_block){ .start = 4 * b, .end = 4 * b + 4, .eqclass = CFG_NONE,
                                    .loop = CFG_NONE };
    f->blocks[0].flags = CFG_BF_ENTRY;
    f->start = 0;
    f->end = 4 * nb;
    f->out_edges = malloc(f->nedges * sizeof *f->out_edges);
    f->in_edges = malloc(f->nedges * sizeof *f->in_edges);
    uint32_t o = 0, in = 0;
    for (uint32_t b = 0; b < nb; b++) {
        f->blocks[b].first_out = o;
        f->blocks[b].first_in = in;
        for (size_t e = 0; e < f->nedges; e++) {
            if (f->edges[e].from == b)
                f->out_edges[o++] = (uint32_t)e, f->blocks[b].nout++;
            if (f->edges[e].to == b)
                f->in_edges[in++] = (uint32_t)e, f->blocks[b].nin++;
        }
    }
    return f;
}

static void freeproc(cfg_proc *f)
{
    free(f->blocks);
    free(f->edges);
    free(f->out_edges);
    free(f->in_edges);
    free(f->loops);
    free(f);
}

#define BC(f, b) ((f)->blocks[b].eqclass)
#define EC(f, e) ((f)->edges[(e) + 1].eqclass)   /* e: index in the E list */

Test(cfg_equiv, straight_line)
{
    E es[] = { { 0, 1 }, { 1, 2 }, { 2, X } };
    cfg_proc *f = mkproc(3, es, 3);
    cfg_equiv(f);
    cr_assert_eq(BC(f, 0), BC(f, 1));
    cr_assert_eq(BC(f, 1), BC(f, 2));
    cr_assert_eq(EC(f, 0), BC(f, 0));
    cr_assert_eq(EC(f, 2), BC(f, 0));
    cr_assert_eq(f->nclasses, 1);
    freeproc(f);
}

Test(cfg_equiv, diamond)
{
    E es[] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, X } };
    cfg_proc *f = mkproc(4, es, 5);
    cfg_equiv(f);
    cr_assert_eq(BC(f, 0), BC(f, 3));
    cr_assert_neq(BC(f, 1), BC(f, 0));
    cr_assert_neq(BC(f, 2), BC(f, 0));
    cr_assert_neq(BC(f, 1), BC(f, 2));
    cr_assert_eq(EC(f, 0), BC(f, 1));
    cr_assert_eq(EC(f, 2), BC(f, 1));
    cr_assert_eq(EC(f, 1), BC(f, 2));
    cr_assert_eq(EC(f, 3), BC(f, 2));
    cr_assert_eq(EC(f, 4), BC(f, 0));
    freeproc(f);
}

Test(cfg_equiv, while_loop)
{
    E es[] = { { 0, 1 }, { 1, 2 }, { 2, 1 }, { 1, 3 }, { 3, X } };
    cfg_proc *f = mkproc(4, es, 5);
    cfg_equiv(f);
    cr_assert_eq(BC(f, 0), BC(f, 3));
    cr_assert_neq(BC(f, 1), BC(f, 0));
    cr_assert_eq(BC(f, 2), EC(f, 1));
    cr_assert_eq(BC(f, 2), EC(f, 2));
    cr_assert_neq(BC(f, 2), BC(f, 1));
    cr_assert_eq(EC(f, 3), BC(f, 0));
    freeproc(f);
}

Test(cfg_equiv, self_loop)
{
    E es[] = { { 0, 1 }, { 1, 1 }, { 1, 2 }, { 2, X } };
    cfg_proc *f = mkproc(3, es, 4);
    cfg_equiv(f);
    cr_assert_eq(BC(f, 0), BC(f, 2));
    cr_assert_neq(BC(f, 1), BC(f, 0));
    cr_assert_neq(EC(f, 1), BC(f, 1));
    cr_assert_neq(EC(f, 1), BC(f, 0));
    freeproc(f);
}

Test(cfg_equiv, infinite_loop)
{
    /* No way out: the builder adds a never-run edge to the exit. */
    E es[] = { { 0, 1 }, { 1, 2 }, { 2, 1 } };
    cfg_proc *f = mkproc(3, es, 3);
    cfg_equiv(f);
    cr_assert_eq(BC(f, 1), BC(f, 2));
    cr_assert_neq(BC(f, 0), BC(f, 1));
    freeproc(f);
}

Test(cfg_equiv, unreachable_block)
{
    E es[] = { { 0, 1 }, { 1, X }, { 2, 1 } };
    cfg_proc *f = mkproc(3, es, 3);
    cfg_equiv(f);
    cr_assert_neq(BC(f, 0), BC(f, 1));
    cr_assert_neq(BC(f, 2), BC(f, 1));
    cr_assert_neq(BC(f, 2), BC(f, 0));
    freeproc(f);
}

Test(cfg_equiv, missing_edges)
{
    E es[] = { { 0, 1 }, { 1, 2 }, { 2, X } };
    cfg_proc *f = mkproc(3, es, 3);
    f->flags |= CFG_PF_MISSING;
    cfg_equiv(f);
    cr_assert_eq(f->nclasses, 3 + 4);
    cr_assert_neq(BC(f, 0), BC(f, 1));
    freeproc(f);
}

/* Brute force: in the split undirected graph closed by exit->entry, two
 * edges are cycle equivalent exactly when removing both disconnects it. */
typedef struct { uint32_t u, v; } UE;

static bool connected_without(const UE *g, size_t ne, uint32_t nn, size_t a, size_t b)
{
    uint32_t *comp = malloc(nn * sizeof *comp);
    for (uint32_t i = 0; i < nn; i++)
        comp[i] = i;
    for (bool ch = true; ch;) {
        ch = false;
        for (size_t e = 0; e < ne; e++) {
            if (e == a || e == b)
                continue;
            uint32_t m = comp[g[e].u] < comp[g[e].v] ? comp[g[e].u] : comp[g[e].v];
            if (comp[g[e].u] != m || comp[g[e].v] != m)
                comp[g[e].u] = comp[g[e].v] = m, ch = true;
        }
    }
    bool ok = true;
    for (uint32_t i = 0; i < nn; i++)
        ok &= comp[i] == comp[0];
    free(comp);
    return ok;
}

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* A random CFG where every block is reachable and reaches the exit. */
static cfg_proc *random_proc(uint64_t *s, uint32_t nb, E *es, size_t *ne)
{
    size_t n = 0;
    for (uint32_t b = 0; b + 1 < nb; b++)
        es[n++] = (E){ b, b + 1 };          /* a spine keeps it connected */
    es[n++] = (E){ nb - 1, X };
    size_t extra = rnd(s) % (2 * nb);
    for (size_t i = 0; i < extra; i++) {
        uint32_t a = (uint32_t)(rnd(s) % nb), z = (uint32_t)(rnd(s) % (nb + 1));
        es[n++] = (E){ a, z == nb ? X : z };
    }
    *ne = n;
    return mkproc(nb, es, n);
}

Test(cfg_equiv, matches_definition_on_random_graphs)
{
    uint64_t s = 12345;
    for (int round = 0; round < 300; round++) {
        uint32_t nb = 1 + (uint32_t)(rnd(&s) % 7);
        E es[64];
        size_t ne;
        cfg_proc *f = random_proc(&s, nb, es, &ne);
        cfg_equiv(f);
        /* Undirected split graph: 0 entry, 1 exit, block b in 2+2b, out 3+2b;
         * edge ids: blocks, then f->edges, then exit->entry. */
        size_t tot = nb + f->nedges + 1;
        UE *g = malloc(tot * sizeof *g);
        uint32_t *cls = malloc(tot * sizeof *cls);
        for (uint32_t b = 0; b < nb; b++) {
            g[b] = (UE){ 2 + 2 * b, 3 + 2 * b };
            cls[b] = f->blocks[b].eqclass;
        }
        for (size_t e = 0; e < f->nedges; e++) {
            const cfg_edge *x = &f->edges[e];
            g[nb + e] = (UE){ x->from == CFG_ENTRY ? 0 : 3 + 2 * x->from,
                              x->to == CFG_EXIT ? 1 : 2 + 2 * x->to };
            cls[nb + e] = x->eqclass;
        }
        g[tot - 1] = (UE){ 1, 0 };
        cls[tot - 1] = CFG_NONE;
        for (size_t a = 0; a + 1 < tot; a++)
            for (size_t b = a + 1; b + 1 < tot; b++) {
                bool equiv = !connected_without(g, tot, 2 + 2 * nb, a, b);
                cr_assert_eq(equiv, cls[a] == cls[b],
                             "round %d (%u blocks): items %zu and %zu: definition says %d",
                             round, nb, a, b, equiv);
            }
        free(g);
        free(cls);
        freeproc(f);
    }
}

Test(cfg_equiv, classes_have_equal_counts_on_random_walks)
{
    uint64_t s = 777;
    for (int round = 0; round < 200; round++) {
        uint32_t nb = 2 + (uint32_t)(rnd(&s) % 10);
        E es[64];
        size_t ne;
        cfg_proc *f = random_proc(&s, nb, es, &ne);
        cfg_equiv(f);
        uint64_t *bc = calloc(nb, sizeof *bc), *ec = calloc(f->nedges, sizeof *ec);
        for (int walk = 0; walk < 50; walk++) {
            uint32_t b = 0;
            ec[0]++;
            for (int steps = 0; steps < 10000; steps++) {
                bc[b]++;
                const cfg_block *bl = &f->blocks[b];
                /* After a while follow the spine (every block's first
                 * edge), which always reaches the exit: every walk ends. */
                uint32_t e = f->out_edges[bl->first_out + (steps > 200 ? 0 : rnd(&s) % bl->nout)];
                ec[e]++;
                if (f->edges[e].to == CFG_EXIT)
                    break;
                b = f->edges[e].to;
            }
        }
        for (size_t x = 0; x < nb + f->nedges; x++)
            for (size_t y = 0; y < nb + f->nedges; y++) {
                uint32_t cx = x < nb ? f->blocks[x].eqclass : f->edges[x - nb].eqclass;
                uint32_t cy = y < nb ? f->blocks[y].eqclass : f->edges[y - nb].eqclass;
                uint64_t nx = x < nb ? bc[x] : ec[x - nb], ny = y < nb ? bc[y] : ec[y - nb];
                if (cx == cy)
                    cr_assert_eq(nx, ny, "round %d: same class %u, counts %llu and %llu",
                                 round, cx, (unsigned long long)nx, (unsigned long long)ny);
            }
        free(bc);
        free(ec);
        freeproc(f);
    }
}

Test(cfg_loops, nested)
{
    /* 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2 ; 3 -> 4 -> 1 ; 4 -> 5 -> exit */
    E es[] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 2 }, { 3, 4 }, { 4, 1 }, { 4, 5 }, { 5, X } };
    cfg_proc *f = mkproc(6, es, 8);
    cfg_loops(f);
    cr_assert_eq(f->nloops, 2);
    cr_assert_eq(f->blocks[0].loop_depth, 0);
    cr_assert_eq(f->blocks[1].loop_depth, 1);
    cr_assert_eq(f->blocks[2].loop_depth, 2);
    cr_assert_eq(f->blocks[3].loop_depth, 2);
    cr_assert_eq(f->blocks[4].loop_depth, 1);
    cr_assert_eq(f->blocks[5].loop_depth, 0);
    const cfg_loop *inner = &f->loops[f->blocks[2].loop];
    cr_assert_eq(inner->header, 2);
    cr_assert_eq(inner->nblocks, 2);
    cr_assert_eq(f->loops[inner->parent].header, 1);
    cr_assert_eq(f->loops[inner->parent].nblocks, 4);
    cr_assert(!(f->flags & CFG_PF_IRREDUCIBLE));
    freeproc(f);
}

Test(cfg_loops, irreducible)
{
    E es[] = { { 0, 1 }, { 0, 2 }, { 1, 2 }, { 2, 1 }, { 2, X } };
    cfg_proc *f = mkproc(3, es, 5);
    cfg_loops(f);
    cr_assert(f->flags & CFG_PF_IRREDUCIBLE);
    cr_assert_eq(f->nloops, 0);
    freeproc(f);
}

Test(cfg_loops, unreachable_is_marked)
{
    E es[] = { { 0, X }, { 1, 1 } };
    cfg_proc *f = mkproc(2, es, 2);
    cfg_loops(f);
    cr_assert(f->blocks[1].flags & CFG_BF_UNREACH);
    cr_assert(!(f->blocks[0].flags & CFG_BF_UNREACH));
    freeproc(f);
}

/* ---- Ball-Larus paths ------------------------------------------------------ */

static int64_t inc_sum(const cfg_paths *P, const uint32_t *pe, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += P->edges[pe[i]].inc;
    return s;
}

/* Every ENTRY->EXIT path of the path graph, depth first: its value sum and
 * increment sum must agree, lie in [0, npaths), and regenerate to itself. */
static void enumerate(const cfg_paths *P, uint32_t v, uint32_t *pe, size_t n, uint64_t val,
                      uint8_t *seen, size_t *count)
{
    if (v == CFG_PATH_EXIT(P->nblocks)) {
        cr_assert_lt(val, P->npaths);
        cr_assert_eq(inc_sum(P, pe, n), (int64_t)val, "increments and values disagree");
        cr_assert(!seen[val], "path id %llu twice", (unsigned long long)val);
        seen[val] = 1;
        uint32_t again[256];
        cr_assert_eq(cfg_path_edges(P, val, again, 256), n);
        cr_assert_arr_eq(again, pe, n * sizeof *pe);
        ++*count;
        return;
    }
    for (uint32_t i = P->first[v]; i < P->first[v + 1]; i++) {
        pe[n] = i;
        enumerate(P, P->edges[i].to, pe, n + 1, val + P->edges[i].val, seen, count);
    }
}

/* The path a finished stretch of a walk took, checked against its id. */
static void check_walked(const cfg_paths *P, uint64_t id, const uint32_t *blocks, size_t nb)
{
    uint32_t pe[256];
    size_t n = cfg_path_edges(P, id, pe, 256);
    cr_assert_eq(n, nb + 1, "path %llu has %zu edges, the walk %zu blocks",
                 (unsigned long long)id, n, nb);
    for (size_t i = 0; i < nb; i++)
        cr_assert_eq(P->edges[pe[i]].to, blocks[i], "path %llu step %zu", (unsigned long long)id, i);
}

Test(cfg_paths, diamond_and_loop)
{
    E d[] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 }, { 3, X } };
    cfg_proc *f = mkproc(4, d, 5);
    cfg_paths P;
    char err[256];
    cr_assert(cfg_paths_build(f, NULL, &P, err, sizeof err), "%s", err);
    cr_assert_eq(P.npaths, 2);
    /* Six edges and EXIT->ENTRY over six nodes: a tree of five, two chords. */
    cr_assert_eq(P.nchords, 2);
    cfg_paths_free(&P);
    freeproc(f);
    /* 0 -> 1 <-> 2, 2 -> exit: paths 0-1-2-X, 0-1-2-(back), 1-2-X, 1-2-(back) */
    E l[] = { { 0, 1 }, { 1, 2 }, { 2, 1 }, { 2, X } };
    f = mkproc(3, l, 4);
    cr_assert(cfg_paths_build(f, NULL, &P, err, sizeof err), "%s", err);
    cr_assert_eq(P.npaths, 4);
    cr_assert_neq(P.back_in[3], CFG_NONE, "2->1 is the back edge");
    cr_assert_eq(P.edges[P.of_cfg[3]].kind, CFG_PATH_EDGE_BACK_OUT);
    cfg_paths_free(&P);
    freeproc(f);
}

Test(cfg_paths, numbering_is_a_bijection_and_walks_decode)
{
    uint64_t s = 4242;
    for (int round = 0; round < 300; round++) {
        uint32_t nb = 1 + (uint32_t)(rnd(&s) % 9);
        E es[64];
        size_t ne;
        cfg_proc *f = random_proc(&s, nb, es, &ne);
        cfg_loops(f);
        double *w = NULL;
        if (round & 1) {                        /* half by made-up counts */
            w = malloc(f->nedges * sizeof *w);
            for (size_t e = 0; e < f->nedges; e++)
                w[e] = (double)(rnd(&s) % 1000);
        }
        cfg_paths P;
        char err[256];
        cr_assert(cfg_paths_build(f, w, &P, err, sizeof err), "round %d: %s", round, err);
        cr_assert_eq(P.nchords, P.nedges - nb, "a spanning tree has a chord per extra edge");
        if (P.npaths <= 20000) {
            uint8_t *seen = calloc(P.npaths, 1);
            uint32_t pe[256];
            size_t count = 0;
            enumerate(&P, CFG_PATH_ENTRY(nb), pe, 0, 0, seen, &count);
            cr_assert_eq(count, P.npaths, "round %d", round);
            free(seen);
        }
        /* Random walks counted the way instrumented code counts. */
        for (int walk = 0; walk < 20; walk++) {
            uint32_t blocks[256], nw = 0, b = 0;
            int64_t r = P.edges[P.of_cfg[0]].inc;
            blocks[nw++] = 0;
            for (int steps = 0;; steps++) {
                const cfg_block *bl = &f->blocks[b];
                uint32_t e = f->out_edges[bl->first_out + (steps > 50 ? 0 : rnd(&s) % bl->nout)];
                uint32_t to = f->edges[e].to;
                if (P.back_in[e] != CFG_NONE) {
                    check_walked(&P, (uint64_t)(r + P.edges[P.of_cfg[e]].inc), blocks, nw);
                    r = P.edges[P.back_in[e]].inc;
                    nw = 0;
                } else {
                    r += P.edges[P.of_cfg[e]].inc;
                }
                if (to == CFG_EXIT) {
                    check_walked(&P, (uint64_t)r, blocks, nw);
                    break;
                }
                cr_assert_lt(nw, 256);
                blocks[nw++] = to;
                b = to;
            }
        }
        cfg_paths_free(&P);
        free(w);
        freeproc(f);
    }
}

/* Any piece of a walk, from any of its nodes to any later one, decodes
 * from the sum of the path values between them (cfg_path_piece), as the
 * path tracker records pieces of paths left by longjmps and exits. */
Test(cfg_paths, pieces_decode_from_their_value_sums)
{
    uint64_t s = 99;
    for (int round = 0; round < 200; round++) {
        uint32_t nb = 2 + (uint32_t)(rnd(&s) % 14);
        E es[64];
        size_t ne;
        cfg_proc *f = random_proc(&s, nb, es, &ne);
        cfg_loops(f);
        cfg_paths P;
        char err[256];
        cr_assert(cfg_paths_build(f, NULL, &P, err, sizeof err), "%s", err);
        /* one acyclic walk: nodes and the path edges between them */
        uint32_t node[64], pe[64], n = 0, b = 0;
        node[n] = CFG_PATH_ENTRY(nb);
        pe[n] = P.of_cfg[0];
        node[++n] = 0;
        for (int steps = 0; n < 60; steps++) {
            const cfg_block *bl = &f->blocks[b];
            uint32_t e = f->out_edges[bl->first_out + (steps > 40 ? 0 : rnd(&s) % bl->nout)];
            pe[n] = P.of_cfg[e];    /* a back edge: its dummy to the exit */
            if (f->edges[e].to == CFG_EXIT || P.back_in[e] != CFG_NONE) {
                node[++n] = CFG_PATH_EXIT(nb);
                break;
            }
            node[++n] = b = f->edges[e].to;
        }
        if (node[n] != CFG_PATH_EXIT(nb))
            goto next;              /* (cut short: no piece to check) */
        for (int k = 0; k < 10; k++) {
            uint32_t i = (uint32_t)(rnd(&s) % (n + 1)), j = i + (uint32_t)(rnd(&s) % (n + 1 - i));
            uint64_t val = 0;
            for (uint32_t q = i; q < j; q++)
                val += P.edges[pe[q]].val;
            uint32_t got[64];
            size_t ng;
            cr_assert(cfg_path_piece(&P, node[i], node[j], val, got, 64, &ng), "round %d piece %u..%u", round, i,
                      j);
            cr_assert_eq(ng, j - i);
            for (uint32_t q = 0; q < ng; q++)
                cr_assert_eq(got[q], pe[i + q], "round %d piece %u..%u edge %u", round, i, j, q);
            if (j > i && P.npaths > 1)  /* a value too large for any piece */
                cr_assert(!cfg_path_piece(&P, node[i], node[j], val + P.npaths, got, 64, &ng));
        }
    next:
        cfg_paths_free(&P);
        freeproc(f);
    }
}

/* k diamonds in a row have 2^k paths. */
static cfg_proc *diamonds(uint32_t k)
{
    E *es = malloc((4 * k + 1) * sizeof *es);
    size_t n = 0;
    for (uint32_t i = 0; i < k; i++) {
        es[n++] = (E){ 3 * i, 3 * i + 1 };
        es[n++] = (E){ 3 * i, 3 * i + 2 };
        es[n++] = (E){ 3 * i + 1, 3 * i + 3 };
        es[n++] = (E){ 3 * i + 2, 3 * i + 3 };
    }
    es[n++] = (E){ 3 * k, X };
    cfg_proc *f = mkproc(3 * k + 1, es, n);
    free(es);
    return f;
}

Test(cfg_paths, refuses_above_2_to_the_63)
{
    cfg_proc *f = diamonds(63);
    cfg_paths P;
    char err[256];
    cr_assert(cfg_paths_build(f, NULL, &P, err, sizeof err), "%s", err);
    cr_assert_eq(P.npaths, UINT64_C(1) << 63);
    uint32_t pe[256];
    uint64_t last = P.npaths - 1;
    size_t n = cfg_path_edges(&P, last, pe, 256);
    cr_assert_eq(n, 2 * 63 + 2);
    cr_assert_eq((uint64_t)inc_sum(&P, pe, n), last);
    cr_assert_eq(cfg_path_edges(&P, P.npaths, pe, 256), 0);
    cfg_paths_free(&P);
    freeproc(f);
    f = diamonds(64);
    f->name = "wide";
    cr_assert(!cfg_paths_build(f, NULL, &P, err, sizeof err));
    cr_assert(strstr(err, "wide") && strstr(err, "2^63"), "%s", err);
    cr_assert_null(P.edges);
    freeproc(f);
}

/* ---- real programs -------------------------------------------------------- */

static image *open_program(const char *name)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[512];
    snprintf(path, sizeof path, "%s/programs/%s", build, name);
    image_error err;
    image *img = image_open(path, &err);
    if (!img) {
        if (err.code == IMG_EIO)
            cr_skip_test("%s missing: run `make programs`", path);
        cr_assert_fail("%s", err.msg);
    }
    return img;
}

/* Invariants every CFG must satisfy. */
static void check_program(const cfg_program *p)
{
    for (size_t i = 0; i < p->nprocs; i++) {
        const cfg_proc *f = &p->procs[i];
        cr_assert_lt(f->start, f->end, "%s", f->name);
        if (i)
            cr_assert_geq(f->start, p->procs[i - 1].end, "%s overlaps", f->name);
        cr_assert_gt(f->nblocks, 0);
        cr_assert_eq(f->blocks[0].start, f->start);
        cr_assert(f->blocks[0].flags & CFG_BF_ENTRY);
        cr_assert_eq(f->blocks[f->nblocks - 1].end, f->end, "%s", f->name);
        for (size_t b = 0; b + 1 < f->nblocks; b++)
            cr_assert_eq(f->blocks[b].end, f->blocks[b + 1].start, "%s B%zu", f->name, b);
        for (size_t e = 0; e < f->nedges; e++) {
            const cfg_edge *x = &f->edges[e];
            cr_assert(x->from == CFG_ENTRY || x->from < f->nblocks);
            cr_assert(x->to == CFG_EXIT || x->to < f->nblocks);
            if (x->to < f->nblocks && x->kind != CFG_EDGE_ENTRY)
                cr_assert_eq(f->blocks[x->to].start, x->target, "%s edge %zu", f->name, e);
            cr_assert_lt(x->eqclass, f->nclasses);
        }
        for (size_t b = 0; b < f->nblocks; b++)
            cr_assert_lt(f->blocks[b].eqclass, f->nclasses);
    }
}

Test(cfg_program, switch_table_resolved)
{
    image *img = open_program("bytecode-dyn");
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    check_program(p);
    size_t tables = 0, missing = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        tables += p->procs[i].ntables;
        missing += (p->procs[i].flags & CFG_PF_MISSING) != 0;
        for (size_t t = 0; t < p->procs[i].ntables; t++)
            cr_assert_gt(p->procs[i].tables[t].count, 1);
    }
    cr_assert_geq(tables, 1, "the interpreter's switch should be a resolved jump table");
    cr_assert_eq(missing, 0);
    const cfg_proc *m = cfg_proc_named(p, "main");
    cr_assert_not_null(m);
    cr_assert_eq(cfg_proc_at(p, m->start + 4), m);
    cr_assert_eq(cfg_block_at(m, m->start), 0);
    cfg_free(p);
    image_close(img);
}

Test(cfg_program, static_program_invariants)
{
    image *img = open_program("funcptr-static");
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    check_program(p);
    cr_assert_gt(p->nprocs, 500);
    /* Loops were found somewhere, and every loop header dominates its body. */
    size_t loops = 0;
    for (size_t i = 0; i < p->nprocs; i++)
        loops += p->procs[i].nloops;
    cr_assert_gt(loops, 100);
    cfg_free(p);
    image_close(img);
}

Test(cfg_program, printing)
{
    image *img = open_program("intloop-dyn");
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    const cfg_proc *m = cfg_proc_named(p, "main");
    cr_assert_not_null(m);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cfg_print_dot(f, p, m);
    fclose(f);
    cr_assert(strstr(buf, "digraph \"main\"") == buf);
    cr_assert(strstr(buf, "ENTRY -> B0"));
    free(buf);
    f = open_memstream(&buf, &len);
    cfg_print(f, p, m);
    fclose(f);
    cr_assert(strstr(buf, "proc main"));
    free(buf);
    cfg_free(p);
    image_close(img);
}

/* Damaged images: whatever image_open accepts, cfg_build must handle
 * without crashing (under the sanitizers in the ASan run). */
Test(cfg_program, survives_damaged_images)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[512];
    snprintf(path, sizeof path, "%s/programs/bytecode-dyn", build);
    FILE *f = fopen(path, "rb");
    if (!f)
        cr_skip_test("%s missing: run `make programs`", path);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *orig = malloc(n), *b = malloc(n);
    cr_assert_eq(fread(orig, 1, n, f), n);
    fclose(f);
    uint64_t s = 99;
    size_t opened = 0;
    for (int round = 0; round < 300; round++) {
        memcpy(b, orig, n);
        /* Flip a few bytes; half the rounds aim at the first 64 KB, where
         * the headers, code and symbols of a small program live. */
        int flips = 1 + (int)(rnd(&s) % 8);
        for (int k = 0; k < flips; k++) {
            size_t at = (size_t)(rnd(&s) % (round & 1 ? n : (n < 65536 ? n : 65536)));
            b[at] ^= (uint8_t)(1u << (rnd(&s) % 8));
        }
        image_error err;
        image *img = image_open_mem(b, n, "damaged", &err);
        if (!img)
            continue;
        opened++;
        char e[256];
        cfg_program *p = cfg_build(img, e, sizeof e);
        if (p)
            cfg_free(p);
        image_close(img);
    }
    cr_assert_gt(opened, 10);
    free(orig);
    free(b);
}

Test(cfg_program, path_numbering_of_every_procedure)
{
    image *img = open_program("funcptr-static");
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    size_t built = 0, eligible = 0;
    uint64_t s = 5;
    for (size_t i = 0; i < p->nprocs; i++) {
        const cfg_proc *f = &p->procs[i];
        if (f->flags & CFG_PF_MISSING)
            continue;
        eligible++;
        cfg_paths P;
        if (!cfg_paths_build(f, NULL, &P, err, sizeof err)) {
            cr_assert(strstr(err, "2^63"), "%s", err);
            continue;
        }
        built++;
        for (int k = 0; k < 20; k++) {
            uint64_t id = k == 0 ? 0 : k == 1 ? P.npaths - 1 : rnd(&s) % P.npaths;
            static uint32_t pe[1 << 16];
            size_t n = cfg_path_edges(&P, id, pe, 1 << 16);
            cr_assert(n > 0 && n <= (1 << 16), "%s path %llu", f->name, (unsigned long long)id);
            cr_assert_eq(P.edges[pe[0]].from, CFG_PATH_ENTRY(f->nblocks));
            cr_assert_eq(P.edges[pe[n - 1]].to, CFG_PATH_EXIT(f->nblocks));
            for (size_t j = 1; j < n; j++)
                cr_assert_eq(P.edges[pe[j]].from, P.edges[pe[j - 1]].to);
            cr_assert_eq((uint64_t)inc_sum(&P, pe, n), id, "%s path %llu", f->name,
                         (unsigned long long)id);
        }
        cfg_paths_free(&P);
    }
    cr_assert_geq(built * 100, eligible * 99, "%zu of %zu procedures numbered", built, eligible);
    cfg_free(p);
    image_close(img);
}
