/*
 * cpo prof [--db DIR] [-i] [-e EVENT]... [--epoch E | --all-epochs] [--json] [--limit N]
 *
 * Samples per procedure (per image with -i), most samples of the first
 * event first, one column per event, as DCPI's dcpiprof printed them
 * (docs/profile-tools.md).  The selection and the arithmetic are
 * estimator/'s; this file only parses options and prints.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/profset.h"
#include "estimator/samples.h"
#include "report/rows.h"
#include "tools/cpo/commands.h"

static const char USAGE[] =
    "usage: cpo prof [--db DIR] [-i] [-e EVENT]... [--epoch E | --all-epochs] [--json] [--limit N]\n"
    "       cpo prof [--db DIR] [-e EVENT] [--epoch E | --all-epochs] --callers PROC | --callees PROC | --folded\n";

static double pct(uint64_t n, uint64_t total)
{
    return total ? 100.0 * (double)n / (double)total : 0.0;
}

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

static void print_table(const est_set *s, const est_row *rows, size_t n, bool per_image)
{
    size_t nev = s->nevents;
    printf("Database %s, %s%s\n", s->db, s->all_epochs ? "all epochs" : "epoch ",
           s->all_epochs ? "" : s->epoch);
    if (!nev) {
        printf("No samples.\n");
        return;
    }
    printf("Total samples for event type ");
    for (size_t e = 0; e < nev; e++)
        printf("%s%s = %" PRIu64, e ? ", " : "", s->events[e], s->totals[e]);
    printf("\nThe counts given below are the number of samples for each listed event type.\n\n");

    int *w = calloc(nev, sizeof *w);
    int namew = (int)strlen("procedure");
    if (!w)
        return;
    for (size_t e = 0; e < nev; e++)
        w[e] = (int)strlen(s->events[e]);
    for (size_t i = 0; i < n; i++) {
        for (size_t e = 0; e < nev; e++)
            if (digits(rows[i].counts[e]) > w[e])
                w[e] = digits(rows[i].counts[e]);
        if (!per_image && (int)strlen(rows[i].name) > namew)
            namew = (int)strlen(rows[i].name);
    }
    for (size_t e = 0; e < nev; e++) {
        printf("%s%*s %7s", e ? "  " : "", w[e], s->events[e], "%");
        if (e == 0)
            printf(" %7s", "cum%");
    }
    if (per_image)
        printf("  image\n");
    else
        printf("  %-*s  image\n", namew, "procedure");
    uint64_t cum = 0;
    for (size_t i = 0; i < n; i++) {
        const est_row *r = &rows[i];
        cum += r->counts[0];
        for (size_t e = 0; e < nev; e++) {
            printf("%s%*" PRIu64 " %6.2f%%", e ? "  " : "", w[e], r->counts[e],
                   pct(r->counts[e], s->totals[e]));
            if (e == 0)
                printf(" %6.2f%%", pct(cum, s->totals[0]));
        }
        if (per_image)
            printf("  %s\n", s->images[r->image].path);
        else
            printf("  %-*s  %s\n", namew, r->name, s->images[r->image].path);
    }
    free(w);
}

int cmd_prof(int argc, char **argv)
{
    est_selection sel = { 0 };
    est_error err;
    bool per_image = false, json = false;
    size_t limit = 0;
    int rc = 0;
    const char *callers = NULL, *callees = NULL;
    bool folded = false;
    for (int i = 1; i < argc; i++) {
        int k = cpo_selection_arg(&sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: prof: %s\n%s", err.msg, USAGE);
            rc = 2;
            break;
        }
        if (k)
            continue;
        if (!strcmp(argv[i], "-i") || !strcmp(argv[i], "--images")) {
            per_image = true;
        } else if ((!strcmp(argv[i], "--callers") || !strcmp(argv[i], "--callees")) && i + 1 < argc &&
                   *argv[i + 1]) {
            *(!strcmp(argv[i], "--callers") ? &callers : &callees) = argv[i + 1];
            i++;
        } else if (!strcmp(argv[i], "--folded")) {
            folded = true;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            if (!cpo_limit_arg("prof", argv[++i], &limit)) {
                rc = 2;
                break;
            }
        } else {
            fprintf(stderr, "cpo: prof: unknown argument '%s'\n%s", argv[i], USAGE);
            rc = 2;
            break;
        }
    }
    if (rc == 0 && (!!callers + !!callees + folded > 1 || ((callers || callees || folded) && (per_image || json)))) {
        fprintf(stderr, "cpo: prof: --callers, --callees and --folded go alone (not with -i or --json)\n%s",
                USAGE);
        rc = 2;
    }
    if ((rc = cpo_selection_finish("prof", &sel, rc)))
        return rc;
    if (callers || callees || folded) {
        rc = cpo_prof_stacks(&sel, callers ? callers : callees, callers != NULL, limit);
        cpo_selection_release(&sel);
        return rc;
    }
    est_set s;
    rc = cpo_selection_load(&sel, &s);
    if (rc < 0)
        return 1;
    est_row *rows = NULL;
    size_t n = 0;
    if (rc == 0 && !(per_image ? est_images(&s, &rows, &n, &err) : est_procedures(&s, &rows, &n, &err))) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        rc = 1;
    }
    if (rc == 0) {
        est_rows_sort(&s, rows, n, 0);
        size_t shown = limit && limit < n ? limit : n;
        if (json)
            rpt_rows_json(stdout, &s, rows, shown, per_image);
        else
            print_table(&s, rows, shown, per_image);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            perror("cpo: prof: stdout");
            rc = 1;
        }
    }
    est_rows_free(rows, n);
    est_free(&s);
    cpo_selection_release(&sel);
    return rc;
}
