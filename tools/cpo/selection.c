/* tools/cpo/selection.c: the steps prof, list and export share between
 * parsing their selection options and using the loaded profiles. */
#include <stdio.h>

#include "tools/cpo/commands.h"

int cpo_selection_finish(const char *cmd, est_selection *sel, int rc)
{
    est_error err;
    if (rc == 0 && !est_selection_finish(sel, &err)) {
        fprintf(stderr, "cpo: %s: %s\n", cmd, err.msg);
        rc = 2;
    }
    if (rc)
        est_selection_release(sel);
    return rc;
}

int cpo_selection_load(est_selection *sel, est_set *s)
{
    est_error err;
    if (!est_load(sel, s, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        est_selection_release(sel);
        return -1;
    }
    int rc = 0;
    for (size_t e = 0; sel->events && e < s->nevents; e++) {
        if (!s->totals[e]) {
            fprintf(stderr, "cpo: %s: no samples of event '%s' in %s%s\n", s->db, s->events[e],
                    s->all_epochs ? "any epoch" : "epoch ", s->all_epochs ? "" : s->epoch);
            rc = 1;
        }
    }
    return rc;
}
