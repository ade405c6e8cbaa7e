/*
 * paths/: the path-profile and CCT formats (round trips, errors naming the
 * line) and the tree's recursion folding.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths/cct.h"
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
