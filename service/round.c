/*
 * service/round.c: one round of optimization for a program: make a
 * candidate from the profile, and check it before anything runs it.
 *
 * The candidate is always a rewrite of the program's base version (the
 * original build), so every version's address map leads straight back to
 * it and the profiles of every version feed the round.  The optimizer and
 * the checks run as child processes: the service reuses the tools as they
 * are, and a tool that crashes or hangs costs a round, not the service.
 *
 * A candidate must (1) pass the rewriter's structural verifier against the
 * base, (2) give, under the configured test command, the same output and
 * exit status as the deployed version, on axp and on qemu-alpha, and (3)
 * be predicted by the optimizer's cost model to save at least min-gain of
 * the profile's cycles.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "image/image.h"
#include "rewriter/verify.h"
#include "service/internal.h"

/* The optimizer's argument vector; the fault hook (docs/service.md) swaps
 * the profile for a random layout, standing for a bad cost model. */
static char **optimize_argv(const svc_prog *g, const char *tmp, unsigned n, bool *fault)
{
    const char *hook = getenv("CPO_SERVE_FAULT");
    char want[128], want_n[160];
    snprintf(want, sizeof want, "random-plan:%s", g->p->name);
    snprintf(want_n, sizeof want_n, "%s:%u", want, n);
    *fault = hook && (!strcmp(hook, want) || !strcmp(hook, want_n));
    char **v = calloc(32 + 256, sizeof *v);
    size_t k = 0;
    if (!v)
        return NULL;
    v[k++] = svc_format("%s/optimize-image", g->cfg->tools);
    v[k++] = svc_version_exe(g, g->st.base);
    if (*fault) {
        v[k++] = strdup("--plan");
        v[k++] = strdup("random");
        v[k++] = strdup("--seed");
        v[k++] = svc_format("%u", n);
    } else {
        v[k++] = strdup("--db");
        v[k++] = strdup(g->cfg->db);
        v[k++] = strdup("--all-epochs");
        v[k++] = strdup("--report");
        v[k++] = svc_join(tmp, "report");
        if (g->st.stale >= 0) {
            v[k++] = strdup("--stale");
            v[k++] = svc_version_exe(g, (unsigned)g->st.stale);
        }
        /* every version kept: their profiles name the deploy path, which
         * now holds another build */
        for (unsigned i = 0; i < g->st.next && k < 32 + 250; i++) {
            char *exe = svc_version_exe(g, i);
            struct stat sb;
            if (exe && i != g->st.base && stat(exe, &sb) == 0) {
                v[k++] = strdup("--image");
                v[k++] = exe;
            } else {
                free(exe);
            }
        }
    }
    v[k++] = strdup("--write-plan");
    v[k++] = svc_join(tmp, "plan");
    v[k++] = strdup("-o");
    v[k++] = svc_join(tmp, "exe");
    for (size_t i = 0; i < k; i++)
        if (!v[i]) {
            for (size_t j = 0; j < k; j++)
                free(v[j]);
            free(v);
            return NULL;
        }
    return v;
}

static void last_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    char line[512];
    buf[0] = 0;
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '\n')
            snprintf(buf, n, "%.*s", (int)strcspn(line, "\n"), line);
    if (f)
        fclose(f);
}

static bool optimize(const svc_prog *g, const char *tmp, unsigned n, bool *fault, char *err,
                     size_t errlen)
{
    char **argv = optimize_argv(g, tmp, n, fault);
    char *log = svc_join(tmp, "optimize.log");
    bool ok = argv && log;
    if (!ok)
        snprintf(err, errlen, "out of memory");
    int st = ok ? svc_run(argv, NULL, NULL, log, 3600, err, errlen) : -1;
    if (ok && st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        char why[400];
        last_line(log, why, sizeof why);
        snprintf(err, errlen, "optimize-image failed: %s", why[0] ? why : "no message");
    }
    ok = ok && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
    free(log);
    return ok;
}

static bool verify(const svc_prog *g, const char *cand, char *err, size_t errlen)
{
    char *base = svc_version_exe(g, g->st.base);
    image_error ie;
    image *a = base ? image_open(base, &ie) : NULL, *b = a ? image_open(cand, &ie) : NULL;
    bool ok = a && b;
    if (!ok)
        snprintf(err, errlen, "%s", base ? ie.msg : "out of memory");
    rw_verify_stats vs;
    char why[512] = "";
    if (ok && !(ok = rw_verify(a, b, NULL, &vs, why, sizeof why)))
        snprintf(err, errlen, "the structural verifier cannot check it: %s", why);
    if (ok && rw_verify_failures(&vs)) {
        snprintf(err, errlen, "the structural verifier finds %zu mismatches (cpo addrmap %s "
                 "--verify %s names them)", rw_verify_failures(&vs), cand, base);
        ok = false;
    }
    image_close(b);
    image_close(a);
    free(base);
    return ok;
}

/* The test command with $EXE = exe and $RUN = run; its output in out. */
static int check_run(const svc_prog *g, const char *exe, const char *run, const char *out,
                     char *err, size_t errlen)
{
    char *env[3] = { svc_format("EXE=%s", exe), svc_format("RUN=%s", run), NULL };
    int st = env[0] && env[1] ? svc_run(NULL, g->p->test, env, out, g->p->test_timeout, err, errlen)
                              : (snprintf(err, errlen, "out of memory"), -1);
    free(env[0]);
    free(env[1]);
    return st;
}

static bool check(const svc_prog *g, const char *tmp, const char *cand, char *err, size_t errlen)
{
    const char *runs[2] = { g->cfg->axp, g->cfg->qemu }, *names[2] = { "axp", "qemu" };
    char *deployed = svc_version_exe(g, g->st.deployed);
    bool ok = deployed != NULL;
    for (int i = 0; ok && i < 2; i++) {
        char *old_out = svc_format("%s/check-%s.deployed", tmp, names[i]);
        char *new_out = svc_format("%s/check-%s.candidate", tmp, names[i]);
        ok = old_out && new_out;
        int a = ok ? check_run(g, deployed, runs[i], old_out, err, errlen) : -1;
        if (ok && a != 0) {
            if (a != -1)
                snprintf(err, errlen, "the check fails on the deployed version itself on %s "
                         "(status %d; see %s)", names[i], a, old_out);
            ok = false;
        }
        int b = ok ? check_run(g, cand, runs[i], new_out, err, errlen) : -1;
        if (ok && (b != a || !svc_same_file(old_out, new_out))) {
            if (b != -1)
                snprintf(err, errlen, "on %s the candidate's output or status differs from the "
                         "deployed version's (status %d; see %s)", names[i], b, new_out);
            ok = false;
        }
        free(old_out);
        free(new_out);
    }
    free(deployed);
    return ok;
}

/* The message named files in the round's directory, which now has
 * another name: every "from" in err becomes "to". */
static void retarget(char *err, size_t errlen, const char *from, const char *to)
{
    char out[2048];
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = err; *p && n + 1 < sizeof out;) {
        if (!strncmp(p, from, lf) && n + lt + 1 < sizeof out) {
            memcpy(out + n, to, lt);
            n += lt;
            p += lf;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = 0;
    snprintf(err, errlen, "%s", out);
}

/* "predicted taken-branch cycles: B before, A after (S saved, ...)" */
static bool predicted_gain(const char *tmp, double profile_cycles, double *gain, char *err,
                           size_t errlen)
{
    char *path = svc_join(tmp, "report");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[512];
    double before, after, saved;
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "predicted taken-branch cycles: %lf before, %lf after (%lf saved",
                       &before, &after, &saved) == 3;
    if (f)
        fclose(f);
    if (!found)
        snprintf(err, errlen, "%s: no prediction in the optimizer's report", path ? path : "report");
    free(path);
    *gain = found && profile_cycles > 0 ? saved / profile_cycles : 0;
    return found;
}

bool svc_round(svc_prog *g, profdb *db, double profile_cycles, unsigned *made, char *err,
               size_t errlen)
{
    (void)db;
    unsigned n = g->st.next++;
    *made = n;
    char *tmp = svc_format("%s/versions/%u.tmp", g->dir, n), *dir = svc_version_dir(g, n);
    char *cand = tmp ? svc_join(tmp, "exe") : NULL;
    bool ok = tmp && dir && cand && (mkdir(tmp, 0755) == 0 ||
                                     (snprintf(err, errlen, "%s: %s", tmp, strerror(errno)), false));
    bool fault = false;
    double gain = 0;
    ok = ok && optimize(g, tmp, n, &fault, err, errlen) && verify(g, cand, err, errlen) &&
         check(g, tmp, cand, err, errlen);
    if (ok && fault)
        svc_log("%s: version %u made by the fault hook from a random layout; its prediction "
                "is not checked", g->p->name, n);
    else if (ok && (ok = predicted_gain(tmp, profile_cycles, &gain, err, errlen)) &&
             gain < g->p->min_gain) {
        snprintf(err, errlen, "predicted gain %.2f%% is below min-gain %.2f%%", 100 * gain,
                 100 * g->p->min_gain);
        ok = false;
    }
    if (ok && g->st.stale >= 0) {
        /* how much of the older build's profile found its place */
        char *log = svc_join(tmp, "optimize.log"), line[512];
        FILE *f = log ? fopen(log, "r") : NULL;
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "carried over from ", 18))
                svc_history(g, n, "profile", "%.*s", (int)strcspn(line, "\n"), line);
        if (f)
            fclose(f);
        free(log);
    }
    if (ok && rename(tmp, dir)) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        ok = false;
    }
    if (!ok && tmp) {
        /* keep the failed round's files for a person to read */
        char *failed = svc_format("%s/versions/failed-%u", g->dir, n);
        if (failed) {
            svc_remove_tree(failed);
            if (rename(tmp, failed))
                svc_remove_tree(tmp);
            else
                retarget(err, errlen, tmp, failed);
        }
        free(failed);
    } else if (ok) {
        svc_log("%s: version %u passed its checks (predicted gain %.2f%%)", g->p->name, n,
                100 * gain);
    }
    free(tmp);
    free(dir);
    free(cand);
    return ok;
}
