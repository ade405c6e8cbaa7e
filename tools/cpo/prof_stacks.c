/*
 * tools/cpo/prof_stacks.c: cpo prof --callers PROC, --callees PROC and
 * --folded: the selection's stacks (estimator/stacks.h) printed
 * (docs/profile-tools.md "Stacks").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "estimator/stacks.h"
#include "tools/cpo/commands.h"

int cpo_prof_stacks(est_selection *sel, const char *proc, bool callers, size_t limit)
{
    est_stacks s;
    est_error err;
    if (!est_stacks_load_mapped(sel, cpo_origin_of, NULL, &s, &err)) {
        fprintf(stderr, "cpo: prof: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    if (!s.st.n) {
        fprintf(stderr, "cpo: prof: no stacks in %s (samples taken with axp run --stacks carry them)\n",
                sel->db);
        rc = 1;
    } else if (!proc) {
        est_stacks_folded(stdout, &s);
    } else {
        est_edge *e;
        size_t n;
        uint64_t with;
        if (!est_stacks_edges(&s, proc, callers, &e, &n, &with, &err)) {
            fprintf(stderr, "cpo: prof: %s\n", err.msg);
            rc = 1;
        } else if (!with) {
            fprintf(stderr, "cpo: prof: no stack holds procedure '%s'\n", proc);
            rc = 1;
        } else {
            printf("%s of %s: %" PRIu64 " of %" PRIu64 " samples (%.2f%%) have %s on their stack\n",
                   callers ? "Callers" : "Callees", proc, with, s.samples,
                   100.0 * (double)with / (double)s.samples, proc);
            printf("%12s %7s  %s\n", "samples", "%", callers ? "caller" : "callee");
            for (size_t i = 0; i < n && (!limit || i < limit); i++)
                printf("%12" PRIu64 " %6.2f%%  %s\n", e[i].count, 100.0 * (double)e[i].count / (double)with,
                       e[i].name);
            free(e);
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("cpo: prof: stdout");
        rc = 1;
    }
    est_stacks_free(&s);
    return rc;
}
