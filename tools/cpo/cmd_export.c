/*
 * cpo export --pprof FILE [--db DIR] [-e EVENT]... [--epoch E | --all-epochs]
 *
 * A profile selection in another tool's format; for now pprof's
 * profile.proto, gzip-compressed (report/pprof.c, docs/profile-tools.md),
 * with the selection's stacks where every sample of an event has one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outfile.h"
#include "report/pprof.h"
#include "estimator/profset.h"
#include "tools/cpo/commands.h"

static const char USAGE[] =
    "usage: cpo export --pprof FILE [--db DIR] [-e EVENT]... [--epoch E | --all-epochs]\n";

int cmd_export(int argc, char **argv)
{
    est_selection sel = { 0 };
    est_error err;
    const char *pprof = NULL;
    int rc = 0;
    for (int i = 1; rc == 0 && i < argc; i++) {
        int k = cpo_selection_arg(&sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: export: %s\n%s", err.msg, USAGE);
            rc = 2;
        } else if (k == 0) {
            if (!strcmp(argv[i], "--pprof") && i + 1 < argc && *argv[i + 1]) {
                pprof = argv[++i];
            } else if (!strncmp(argv[i], "--pprof=", 8) && argv[i][8]) {
                pprof = argv[i] + 8;
            } else {
                fprintf(stderr, "cpo: export: unexpected argument '%s'\n%s", argv[i], USAGE);
                rc = 2;
            }
        }
    }
    if (rc == 0 && !pprof) {
        fprintf(stderr, "cpo: export: no output format given (--pprof FILE)\n%s", USAGE);
        rc = 2;
    }
    if ((rc = cpo_selection_finish("export", &sel, rc)))
        return rc;
    outfile_arg out = { "--pprof", pprof }, db = { "the database", sel.db };
    char why[1024];
    if (!outfile_apart(&out, 1, NULL, 0, &db, 1, why, sizeof why)) {
        fprintf(stderr, "cpo: export: %s\n", why);
        return 2;
    }
    est_set s;
    rc = cpo_selection_load(&sel, &s);
    if (rc < 0)
        return 1;
    /* each event's stacks, read with a selection of that event alone */
    est_stacks *stk = rc == 0 ? calloc(s.nevents + 1, sizeof *stk) : NULL;
    const est_stacks **sp = rc == 0 ? calloc(s.nevents + 1, sizeof *sp) : NULL;
    if (rc == 0 && (!stk || !sp)) {
        fprintf(stderr, "cpo: export: out of memory\n");
        rc = 1;
    }
    for (size_t e = 0; rc == 0 && e < s.nevents; e++) {
        est_selection one = sel;
        const char *ev = s.events[e];
        one.events = &ev;
        one.nevents = 1;
        if (!est_stacks_load_mapped(&one, cpo_origin_of, NULL, &stk[e], &err)) {
            fprintf(stderr, "cpo: export: %s\n", err.msg);
            rc = 1;
        } else if (stk[e].st.n && stk[e].samples != s.totals[e]) {
            fprintf(stderr, "cpo: export: warning: %s: %llu of %llu samples have stacks; "
                            "written without stacks\n", ev, (unsigned long long)stk[e].samples,
                    (unsigned long long)s.totals[e]);
        } else if (stk[e].st.n) {
            sp[e] = &stk[e];
        }
    }
    if (rc == 0 && !est_pprof_write_stacks(&s, sp, pprof, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        rc = 1;
    }
    for (size_t e = 0; stk && e < s.nevents; e++)
        est_stacks_free(&stk[e]);
    free(stk);
    free(sp);
    est_free(&s);
    cpo_selection_release(&sel);
    return rc;
}
