/*
 * cpo diff [-e EVENT] [-i] [--limit N] A B
 *
 * Where the samples moved between two profile sets A and B (SET syntax of
 * estimator/profset.h): per image, then per procedure, the samples in
 * each, the difference, and the change in share of each set's samples
 * (docs/profile-tools.md).  A rewritten image is lined up with its
 * original through its address map, which rewriter/ reads; the rest is
 * estimator/diff.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/diff.h"
#include "estimator/profset.h"
#include "tools/cpo/commands.h"

static const char USAGE[] = "usage: cpo diff [-e EVENT] [-i] [--limit N] A B   (A, B: DIR, DIR@EPOCH or DIR@all)\n";

static void print_rows(const char *title, const est_diff_row *r, size_t n, size_t limit, bool procs)
{
    if (limit && limit < n)
        n = limit;
    int namew = (int)strlen("procedure");
    for (size_t i = 0; procs && i < n; i++)
        if ((int)strlen(r[i].procedure) > namew)
            namew = (int)strlen(r[i].procedure);
    printf("\n%s\n%12s %12s %13s %8s %8s %8s  ", title, "A", "B", "delta", "A%", "B%", "change");
    if (procs)
        printf("%-*s  ", namew, "procedure");
    printf("image\n");
    for (size_t i = 0; i < n; i++) {
        char delta[32];
        if (r[i].b >= r[i].a)
            snprintf(delta, sizeof delta, "+%" PRIu64, r[i].b - r[i].a);
        else
            snprintf(delta, sizeof delta, "-%" PRIu64, r[i].a - r[i].b);
        printf("%12" PRIu64 " %12" PRIu64 " %13s %7.2f%% %7.2f%% %+8.2f  ", r[i].a, r[i].b, delta,
               r[i].a_pct, r[i].b_pct, r[i].b_pct - r[i].a_pct);
        if (procs)
            printf("%-*s  ", namew, r[i].procedure);
        printf("%s\n", r[i].image);
    }
}

int cmd_diff(int argc, char **argv)
{
    const char *event = "cycles";
    const char *names[2] = { NULL, NULL };
    bool images_only = false;
    size_t limit = 0;
    int rc = 0;
    for (int i = 1; rc == 0 && i < argc; i++) {
        if ((!strcmp(argv[i], "-e") || !strcmp(argv[i], "--event")) && i + 1 < argc && *argv[i + 1]) {
            event = argv[++i];
        } else if (!strcmp(argv[i], "-i") || !strcmp(argv[i], "--images")) {
            images_only = true;
        } else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            if (!cpo_limit_arg("diff", argv[++i], &limit))
                rc = 2;
        } else if (argv[i][0] == '-' || names[1]) {
            fprintf(stderr, "cpo: diff: unexpected argument '%s'\n%s", argv[i], USAGE);
            rc = 2;
        } else {
            names[names[0] ? 1 : 0] = argv[i];
        }
    }
    if (rc == 0 && !names[1]) {
        fprintf(stderr, "cpo: diff: two SETs needed\n%s", USAGE);
        rc = 2;
    }
    est_setspec spec[2] = { { 0 }, { 0 } };
    est_error err;
    for (int k = 0; rc == 0 && k < 2; k++) {
        if (!est_parse_set(names[k], &spec[k], &err)) {
            fprintf(stderr, "cpo: diff: %s\n", err.msg);
            rc = 2;
        }
    }
    est_set sets[2];
    int loaded = 0;
    const char *events[1] = { event };
    for (int k = 0; rc == 0 && k < 2; k++) {
        est_selection sel = { .events = events, .nevents = 1 };
        est_setspec_select(&spec[k], &sel);
        if (!est_load(&sel, &sets[k], &err)) {
            fprintf(stderr, "cpo: %s\n", err.msg);
            rc = 1;
        } else {
            loaded++;
        }
    }
    est_diff d = { 0 };
    if (rc == 0) {
        est_diff_options opt = { .event = event, .origin = cpo_origin_of };
        if (!est_diff_compute(&sets[0], &sets[1], &opt, &d, &err)) {
            fprintf(stderr, "cpo: %s\n", err.msg);
            rc = 1;
        } else if (!d.total_a && !d.total_b) {
            fprintf(stderr, "cpo: diff: no samples of event '%s' in %s or %s\n", event, names[0],
                    names[1]);
            rc = 1;
        }
    }
    if (rc == 0) {
        printf("A: %s, %" PRIu64 " samples of %s\n", spec[0].text, d.total_a, event);
        printf("B: %s, %" PRIu64 " samples of %s\n", spec[1].text, d.total_b, event);
        print_rows("Images", d.images, d.nimages, limit, false);
        if (!images_only)
            print_rows("Procedures", d.procs, d.nprocs, limit, true);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            perror("cpo: diff: stdout");
            rc = 1;
        }
    }
    est_diff_free(&d);
    for (int k = 0; k < loaded; k++)
        est_free(&sets[k]);
    est_setspec_free(&spec[0]);
    est_setspec_free(&spec[1]);
    return rc;
}
