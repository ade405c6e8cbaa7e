/*
 * cpo stats [-e EVENT] [--limit N] SET...
 *
 * How each procedure's samples vary across profile sets (runs of one
 * workload), as DCPI's dcpistats printed it: range%, sum, sum%, N, mean,
 * standard deviation, min and max (docs/profile-tools.md).  SET is DIR,
 * DIR@EPOCH or DIR@all (estimator/profset.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/profset.h"
#include "estimator/stats.h"
#include "tools/cpo/commands.h"

static const char USAGE[] = "usage: cpo stats [-e EVENT] [--limit N] SET...   (SET: DIR, DIR@EPOCH or DIR@all)\n";

static void print_stats(const est_stats *st, const est_setspec *specs, const char *event, size_t limit)
{
    printf("Number of samples of type %s\n", event);
    for (size_t k = 0; k < st->nsets; k++)
        printf("  set %zu = %" PRIu64 "  %s\n", k + 1, st->set_totals[k], specs[k].text);
    printf("  TOTAL %" PRIu64 "\n\n", st->total);
    printf("Statistics calculated using the sample counts for each procedure from %zu different "
           "sample set(s)\n\n", st->nsets);
    size_t n = limit && limit < st->nrows ? limit : st->nrows;
    int namew = (int)strlen("procedure");
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(st->rows[i].procedure) > namew)
            namew = (int)strlen(st->rows[i].procedure);
    printf("%8s %12s %8s %4s %14s %14s %12s %12s  %-*s  %s\n", "range%", "sum", "sum%", "N", "mean",
           "std-dev", "min", "max", namew, "procedure", "image");
    for (size_t i = 0; i < n; i++) {
        const est_stat_row *r = &st->rows[i];
        printf("%7.2f%% %12" PRIu64 " %7.2f%% %4zu %14.2f %14.2f %12" PRIu64 " %12" PRIu64 "  %-*s  %s\n",
               r->range_pct, r->sum, r->sum_pct, r->present, r->mean, r->stddev, r->min, r->max, namew,
               r->procedure, r->image);
    }
}

int cmd_stats(int argc, char **argv)
{
    const char *event = "cycles";
    size_t limit = 0, nspecs = 0;
    est_setspec *specs = calloc(argc > 1 ? (size_t)argc : 1, sizeof *specs);
    est_error err;
    int rc = specs ? 0 : 1;
    for (int i = 1; rc == 0 && i < argc; i++) {
        if ((!strcmp(argv[i], "-e") || !strcmp(argv[i], "--event")) && i + 1 < argc && *argv[i + 1]) {
            event = argv[++i];
        } else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            if (!cpo_limit_arg("stats", argv[++i], &limit))
                rc = 2;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "cpo: stats: unknown option '%s'\n%s", argv[i], USAGE);
            rc = 2;
        } else if (!est_parse_set(argv[i], &specs[nspecs], &err)) {
            fprintf(stderr, "cpo: stats: %s\n", err.msg);
            rc = 2;
        } else {
            nspecs++;
        }
    }
    if (rc == 0 && !nspecs) {
        fprintf(stderr, "cpo: stats: no SET given\n%s", USAGE);
        rc = 2;
    }
    est_set *sets = calloc(nspecs ? nspecs : 1, sizeof *sets);
    size_t nloaded = 0;
    if (!sets)
        rc = 1;
    const char *events[1] = { event };
    for (size_t k = 0; rc == 0 && k < nspecs; k++) {
        est_selection sel = { .events = events, .nevents = 1 };
        est_setspec_select(&specs[k], &sel);
        if (!est_load(&sel, &sets[k], &err)) {
            fprintf(stderr, "cpo: %s\n", err.msg);
            rc = 1;
        } else {
            nloaded++;
        }
    }
    est_stats st = { 0 };
    if (rc == 0 && !est_stats_compute(sets, nspecs, event, &st, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        rc = 1;
    }
    if (rc == 0 && st.total == 0) {
        fprintf(stderr, "cpo: stats: no samples of event '%s' in any SET\n", event);
        rc = 1;
    }
    if (rc == 0) {
        print_stats(&st, specs, event, limit);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            perror("cpo: stats: stdout");
            rc = 1;
        }
    }
    est_stats_free(&st);
    for (size_t k = 0; k < nloaded; k++)
        est_free(&sets[k]);
    free(sets);
    for (size_t k = 0; k < nspecs; k++)
        est_setspec_free(&specs[k]);
    free(specs);
    return rc;
}
