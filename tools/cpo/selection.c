/* tools/cpo/selection.c: the selection options every command reading
 * profiles takes (--db DIR, default $CPO_DB; --epoch E or --all-epochs;
 * -e EVENT, repeatable), and the steps prof, list and export share between
 * parsing them and using the loaded profiles. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cpo/commands.h"

bool cpo_limit_arg(const char *cmd, const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    /* strtoull takes "-1" for 2^64-1 and stops quietly at "5x" */
    if (!*s || *end || v == 0 || s[0] == '-' || errno || v > SIZE_MAX) {
        fprintf(stderr, "cpo: %s: --limit '%s' is not a positive number\n", cmd, s);
        return false;
    }
    *out = (size_t)v;
    return true;
}

static int usage(est_error *err, const char *fmt, const char *arg)
{
    if (err)
        snprintf(err->msg, sizeof err->msg, fmt, arg);
    return -1;
}

/* "--opt VALUE" or "--opt=VALUE"; NULL when argv[*i] is not opt. */
static const char *value_of(const char *opt, int argc, char **argv, int *i, bool *missing)
{
    size_t n = strlen(opt);
    const char *a = argv[*i];
    *missing = false;
    if (strncmp(a, opt, n))
        return NULL;
    if (a[n] == '=' && opt[1] == '-')
        return a + n + 1;
    if (a[n])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

int cpo_selection_arg(est_selection *sel, int argc, char **argv, int *i, est_error *err)
{
    const char *a = argv[*i], *v;
    bool missing;
    if ((v = value_of("--db", argc, argv, i, &missing)) || missing) {
        if (missing || !*v)
            return usage(err, "option %s needs a database directory", a);
        sel->db = v;
        return 1;
    }
    if ((v = value_of("--epoch", argc, argv, i, &missing)) || missing) {
        if (missing || !*v)
            return usage(err, "option %s needs an epoch name", a);
        if (sel->all_epochs)
            return usage(err, "--epoch and --all-epochs cannot both be given (%s)", a);
        sel->epoch = v;
        return 1;
    }
    if (!strcmp(a, "--all-epochs")) {
        if (sel->epoch)
            return usage(err, "--epoch and --all-epochs cannot both be given (%s)", a);
        sel->all_epochs = true;
        return 1;
    }
    if ((v = value_of("-e", argc, argv, i, &missing)) || missing ||
        (v = value_of("--event", argc, argv, i, &missing)) || missing) {
        if (missing || !*v)
            return usage(err, "option %s needs an event name", a);
        const char **nv = realloc((void *)sel->events, (sel->nevents + 1) * sizeof *nv);
        if (!nv)
            return usage(err, "out of memory%s", "");
        nv[sel->nevents++] = v;
        sel->events = nv;
        return 1;
    }
    return 0;
}

static bool default_db(est_selection *sel, est_error *err)
{
    if (!sel->db) {
        const char *env = getenv("CPO_DB");
        if (!env || !*env) {
            if (err)
                snprintf(err->msg, sizeof err->msg,
                         "no profile database: give --db DIR or set CPO_DB");
            return false;
        }
        sel->db = env;
    }
    return true;
}

void cpo_selection_release(est_selection *sel)
{
    free((void *)sel->events);
    sel->events = NULL;
    sel->nevents = 0;
}

int cpo_selection_finish(const char *cmd, est_selection *sel, int rc)
{
    est_error err;
    if (rc == 0 && !default_db(sel, &err)) {
        fprintf(stderr, "cpo: %s: %s\n", cmd, err.msg);
        rc = 2;
    }
    if (rc)
        cpo_selection_release(sel);
    return rc;
}

int cpo_selection_load(est_selection *sel, est_set *s)
{
    est_error err;
    if (!est_load(sel, s, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        cpo_selection_release(sel);
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
