/*
 * paths/: the path-profile and CCT formats (round trips, errors naming the
 * line), the tree's recursion folding, and which edges the numbering cuts
 * (cfg/paths.c: back edges and the edges of jumps sharing a table).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/paths.h"
#include "paths/cct.h"
#include "paths/compare.h"
#include "paths/pathprof.h"

static char *to_text(bool (*write)(const void *, FILE *), const void *x, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    cr_assert(f && write(x, f));
    fclose(f);
    return buf;
}
static bool write_pp(const void *x, FILE *f) { return pathprof_write(x, f); }
static bool write_cct(const void *x, FILE *f) { return cct_write(x, f); }

Test(paths_format, profile_round_trip)
{
    const char *m[] = { "instructions", "cycles" };
    pathprof *pp = pathprof_new(m, 2);
    pathprof_image *im = pathprof_image_add(pp, "/usr/bin/a program", "00ff");
    pathprof_proc *f = pathprof_proc_add(im, 0x120001000, "main");
    size_t a = pathprof_path_add(pp, f, 7, PATHPROF_ENTRY, PATHPROF_EXIT);
    size_t b = pathprof_path_add(pp, f, 3, 0x120001010, PATHPROF_EXIT);
    f->paths[a].count = 5;
    pathprof_metrics(pp, f, a)[1] = 99;
    f->paths[b].count = 1;
    pp->outside[0] = 12;
    size_t n;
    char *text = to_text(write_pp, pp, &n);
    char err[256];
    pathprof *q = pathprof_parse(text, n, "t", err, sizeof err);
    cr_assert(q, "%s", err);
    cr_assert_str_eq(q->images[0].path, "/usr/bin/a program");
    cr_assert_str_eq(q->images[0].build_id, "00ff");
    const pathprof_proc *g = &q->images[0].procs[0];
    cr_assert_eq(g->npaths, 2);
    cr_assert(pathprof_complete(&g->paths[0]) && g->paths[0].id == 7 && g->paths[0].count == 5);
    cr_assert_eq(pathprof_metrics(q, g, 0)[1], 99);
    cr_assert(!pathprof_complete(&g->paths[1]) && g->paths[1].start == 0x120001010);
    cr_assert_eq(q->outside[0], 12);
    free(text);
    pathprof_free(q);
    pathprof_free(pp);
}

static void refused(const char *text, const char *what)
{
    char err[256];
    pathprof *pp = pathprof_parse(text, strlen(text), "bad", err, sizeof err);
    cr_assert_null(pp, "accepted: %s", text);
    cr_assert(strstr(err, what) && !strncmp(err, "bad:", 4), "error '%s' lacks '%s'", err, what);
}

Test(paths_format, profile_errors_name_the_line)
{
    refused("", "not a path profile");
    refused("cpo-paths 2\n", "version 2");
    refused("cpo-paths 1\nmetrics a a\n", "named twice");
    refused("cpo-paths 1\nmetrics a\nproc 0x10 f\n", "before any image");
    refused("cpo-paths 1\nmetrics a\nimage - /x\nproc 0x10 f\npath 1 2\nend\n", "1 metric values expected");
    refused("cpo-paths 1\nmetrics a\nimage - /x\nproc 0x10 f\npartial entry exit 0 1 1\nend\n", "complete one");
    refused("cpo-paths 1\nmetrics a\nimage - /x\nproc 0x10 f\npath 1 2 -3\nend\n", "not an unsigned");
    refused("cpo-paths 1\nmetrics a\nimage - /x\nproc 0x10 f\npath 1 2 3\n", "ends early");
    refused("cpo-paths 1\nmetrics a\nend\nend\n", "after 'end'");
    refused("cpo-paths 1\nmetrics a\nimage - /x%zz\nend\n", "image line");
}

Test(paths_cct, recursion_goes_back_to_the_ancestor)
{
    const char *m[] = { "calls" };
    cct *t = cct_new(m, 1);
    cr_assert_eq(cct_image_add(t, "/bin/x", ""), 0);
    uint32_t main_ = cct_call(t, CCT_ROOT, 0, 0, 0x100, "main");
    uint32_t a = cct_call(t, main_, 0x104, 0, 0x200, "a");
    uint32_t b = cct_call(t, a, 0x204, 0, 0x300, "b");
    cr_assert_eq(cct_call(t, b, 0x304, 0, 0x200, "a"), a, "b calling a goes back to a");
    cr_assert_eq(cct_call(t, b, 0x304, 0, 0x200, "a"), a);
    cr_assert_eq(t->nback, 1);
    cr_assert_eq(t->back[0].count, 2);
    cr_assert_eq(cct_call(t, a, 0x208, 0, 0x300, "b"), 4u, "another call site is another context");
    cr_assert_eq(cct_call(t, main_, 0x104, 0, 0x200, "a"), a, "the same call again finds its child");
    cr_assert_eq(t->nnodes, 5);
    cct_metrics(t, b)[0] = 3;
    cct_metrics(t, a)[0] = 2;
    uint64_t *in = cct_inclusive(t);
    cr_assert_eq(in[a], 5);
    cr_assert_eq(in[CCT_ROOT], 5);
    free(in);
    size_t n;
    char *text = to_text(write_cct, t, &n);
    char err[256];
    cct *q = cct_parse(text, n, "t", err, sizeof err);
    cr_assert(q, "%s", err);
    cr_assert_eq(q->nnodes, t->nnodes);
    cr_assert_eq(q->nback, 1);
    cr_assert_eq(cct_call(q, b, 0x304, 0, 0x200, "a"), a, "a tree read back goes on growing the same way");
    free(text);
    cct_free(q);
    cct_free(t);
}

Test(paths_cct, errors_name_the_line)
{
    char err[256];
    const char *bad[][2] = {
        { "cpo-cct 1\nmetrics c\nnode 2 0 - 0x0 0x0 f 1\nend\n", "out of order" },
        { "cpo-cct 1\nmetrics c\nnode 1 1 - 0x0 0x0 f 1\nend\n", "does not come before" },
        { "cpo-cct 1\nmetrics c\nnode 1 0 3 0x0 0x0 f 1\nend\n", "no image line" },
        { "cpo-cct 1\nmetrics c\nnode 1 0 - 0x0 0x0 f 1\nback 0 1 0x0 1\nend\n", "earlier node" },
        { "cpo-cct 1\nmetrics c\nnode 1 0 - 0x0 0x0 f 1\n", "ends early" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cct *t = cct_parse(bad[i][0], strlen(bad[i][0]), "bad", err, sizeof err);
        cr_assert_null(t, "accepted: %s", bad[i][0]);
        cr_assert(strstr(err, bad[i][1]) && !strncmp(err, "bad:", 4), "error '%s' lacks '%s'", err, bad[i][1]);
    }
}

/* axp's tree of a dynamic program against an instrumented binary's,
 * which has no libc (image 1) and no `skipped`: their contexts fold into
 * their callers, what they call hangs from the call site that left the
 * kept caller, and two library routes to main merge. */
Test(paths_cct, fold_to_what_the_other_tree_counts)
{
    static const char exact[] =
        "cpo-cct 1\nmetrics calls cycles\n"
        "image 0 aa /bin/p\nimage 1 bb /lib/libc.so\n"
        "node 1 0 0 0x100 0x0 _start 1 10\n"
        "node 2 1 1 0x900 0x104 __libc_start_main 1 20\n"
        "node 3 2 0 0x200 0x950 main 1 30\n"
        "node 4 3 1 0x980 0x210 printf 4 40\n"
        "node 5 4 1 0x990 0x984 vfprintf 4 50\n"
        "node 6 3 0 0x300 0x220 f 2 60\n"
        "node 7 2 1 0x920 0x960 __libc_csu 1 5\n"
        "node 8 7 0 0x200 0x924 main 1 7\n"
        "node 9 6 0 0x400 0x304 skipped 3 8\n"
        "node 10 9 0 0x500 0x404 g 3 9\n"
        "root 0 1\nend\n";
    static const char inst[] =
        "cpo-cct 1\nmetrics calls cycles\nimage 0 aa /bin/p\n"
        "node 1 0 0 0x100 0x0 _start 1 1\n"
        "node 2 1 0 0x200 0x104 main 2 1\n"
        "node 3 2 0 0x300 0x220 f 2 1\n"
        "node 4 3 0 0x500 0x304 g 3 1\n"
        "root 0 0\nend\n";
    char err[256];
    cct *b = cct_parse(exact, strlen(exact), "exact", err, sizeof err);
    cr_assert(b, "%s", err);
    cct *a = cct_parse(inst, strlen(inst), "inst", err, sizeof err);
    cr_assert(a, "%s", err);
    size_t folded;
    cct *f = cct_fold_to(a, b, &folded);
    cr_assert(f);
    cr_assert_eq(folded, 5, "libc's four contexts and skipped");
    cr_assert_eq(f->nnodes, 5, "_start, main, f and g under the root");
    const uint64_t want[5][3] = { /* proc, site, calls and cycles */
        { 0, 0, 0 }, { 0x100, 0x0, 1 }, { 0x200, 0x104, 2 }, { 0x300, 0x220, 2 }, { 0x500, 0x304, 3 },
    };
    const uint64_t cycles[5] = { 1, 10 + 20 + 5, 30 + 40 + 50 + 7, 60 + 8, 9 };
    for (uint32_t i = 1; i < 5; i++) {
        cr_assert_eq(f->nodes[i].parent, i - 1);
        cr_assert_eq(f->nodes[i].proc, want[i][0]);
        cr_assert_eq(f->nodes[i].site, want[i][1], "node %u's site", i);
        cr_assert_eq(cct_metrics(f, i)[0], want[i][2], "node %u's calls", i);
        cr_assert_eq(cct_metrics(f, i)[1], cycles[i], "node %u's cycles", i);
    }
    cr_assert_eq(cct_metrics(f, CCT_ROOT)[1], 1);
    cct_pair pr[8];
    size_t n = cct_compare(a, 0, f, 0, 8, pr);
    cr_assert_eq(n, 4);
    for (size_t i = 0; i < n; i++)
        cr_assert_neq(pr[i].a, CCT_NONE, "every context lines up");
    cct_free(f);
    cct_free(a);
    cct_free(b);
}

/* ---- cut edges ------------------------------------------------------------ */

/* 0 branches to 1, 2 and 6; jumps 1 and 2 read one table (to 3 and 4),
 * jump 6 a table of its own (to 4 and 5); 3 and 4 go to 5, which returns
 * or loops back to 0.  Block b is the word at 4b. */
enum { CUT_NB = 7, CUT_NE = 13 };
static const struct { uint32_t from, to; uint8_t kind; } cut_edges[CUT_NE] = {
    { CFG_ENTRY, 0, CFG_EDGE_ENTRY }, { 0, 1, CFG_EDGE_TAKEN }, { 0, 2, CFG_EDGE_TAKEN },
    { 0, 6, CFG_EDGE_FALL },  { 1, 3, CFG_EDGE_TABLE }, { 1, 4, CFG_EDGE_TABLE },
    { 2, 3, CFG_EDGE_TABLE }, { 2, 4, CFG_EDGE_TABLE }, { 6, 4, CFG_EDGE_TABLE },
    { 6, 5, CFG_EDGE_TABLE }, { 3, 5, CFG_EDGE_TAKEN }, { 4, 5, CFG_EDGE_FALL },
    { 5, 0, CFG_EDGE_TAKEN },
};

static cfg_proc *shared_table_proc(void)
{
    static cfg_block b[CUT_NB];
    static cfg_edge e[CUT_NE + 1];
    static uint32_t out[CUT_NE + 1], in[CUT_NE + 1];
    static cfg_table t[3] = { { 4, 0x1000, 4, 2 }, { 8, 0x1000, 4, 2 }, { 24, 0x2000, 4, 2 } };
    static cfg_proc f;
    for (uint32_t k = 0; k < CUT_NE; k++)
        e[k] = (cfg_edge){ cut_edges[k].from, cut_edges[k].to, cut_edges[k].kind, 0, CFG_NONE };
    e[CUT_NE] = (cfg_edge){ 5, CFG_EXIT, CFG_EDGE_RETURN, 0, CFG_NONE };
    uint32_t no = 0, ni = 0;
    for (uint32_t i = 0; i < CUT_NB; i++) {
        b[i] = (cfg_block){ .start = 4 * i, .end = 4 * i + 4, .first_out = no, .first_in = ni,
                            .eqclass = CFG_NONE, .loop = CFG_NONE };
        for (uint32_t k = 0; k <= CUT_NE; k++) {
            if (e[k].from == i)
                out[no++] = k, b[i].nout++;
            if (e[k].to == i)
                in[ni++] = k, b[i].nin++;
        }
    }
    b[0].flags = CFG_BF_ENTRY;
    f = (cfg_proc){ .name = "shared", .start = 0, .end = 4 * CUT_NB, .nblocks = CUT_NB, .blocks = b,
                    .nedges = CUT_NE + 1, .edges = e, .out_edges = out, .in_edges = in,
                    .ntables = 3, .tables = t };
    return &f;
}

/* Every ENTRY->EXIT path: a distinct id below npaths, whose increments
 * add up to it as its values do. */
static size_t all_paths(const cfg_paths *P, uint32_t v, uint64_t val, int64_t inc, uint8_t *seen)
{
    if (v == CFG_PATH_EXIT(P->nblocks)) {
        cr_assert_lt(val, P->npaths);
        cr_assert_eq(inc, (int64_t)val, "increments and values disagree");
        cr_assert(!seen[val], "path %llu twice", (unsigned long long)val);
        seen[val] = 1;
        return 1;
    }
    size_t n = 0;
    for (uint32_t i = P->first[v]; i < P->first[v + 1]; i++)
        n += all_paths(P, P->edges[i].to, val + P->edges[i].val, inc + P->edges[i].inc, seen);
    return n;
}

Test(paths_cut, a_table_two_jumps_read_is_cut_the_same_for_both)
{
    cfg_proc *f = shared_table_proc();
    uint64_t s = 7;
    for (int round = 0; round < 40; round++) {
        /* no weights (axp's), table edges above all (the instrumenter's
         * second try), made-up counts */
        double w[CUT_NE + 1];
        for (uint32_t k = 0; k <= CUT_NE; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            w[k] = round > 1 ? (double)(s >> 40) : f->edges[k].kind == CFG_EDGE_TABLE ? 1e300 : 8;
        }
        cfg_paths P;
        char err[256];
        cr_assert(cfg_paths_build(f, round ? w : NULL, &P, err, sizeof err), "%s", err);
        /* paths: from 5 two (return, back), 3 and 4 two, 1 and 2 one
         * (their cut), 6 four, 0 six; ENTRY: 0 twice (entry, loop), 3, 4 */
        cr_assert_eq(P.npaths, 16);
        uint8_t seen[16] = { 0 };
        cr_assert_eq(all_paths(&P, CFG_PATH_ENTRY(CUT_NB), 0, 0, seen), 16);
        for (uint32_t k = 0; k < CUT_NE; k++) {
            bool cut = (f->edges[k].from == 1 || f->edges[k].from == 2 || k == 12);
            cr_assert_eq(P.back_in[k] != CFG_NONE, cut, "edge %u %s", k, cut ? "cut" : "not cut");
            cr_assert_eq(P.edges[P.of_cfg[k]].kind, cut ? CFG_PATH_EDGE_BACK_OUT : CFG_PATH_EDGE_REAL);
        }
        /* Each jump's table edges: one count, then a restart from 0. */
        cr_assert_eq(P.of_cfg[4], P.of_cfg[5]);
        cr_assert_eq(P.of_cfg[6], P.of_cfg[7]);
        for (uint32_t k = 4; k < 8; k++)
            cr_assert_eq(P.edges[P.back_in[k]].inc, 0, "round %d edge %u", round, k);
        cfg_paths_free(&P);
    }
}
