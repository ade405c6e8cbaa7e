/*
 * cpod: the profiling daemon (docs/cpod.md).
 *
 *   cpod --db DIR [--drain INTERVAL] [--flush INTERVAL] [--per-process IMAGE...]
 *        [--log FILE] [--foreground] [--flush-timeout INTERVAL] [--journal-limit BYTES]
 *
 * Without --foreground it detaches, and returns only once the daemon serves
 * DIR (or with the reason it cannot), so `cpod --db DIR && cpo flush --db
 * DIR` never races.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/cpod.h"

static const char usage_text[] =
    "usage: cpod --db DIR [--drain INTERVAL] [--flush INTERVAL] [--per-process IMAGE...]\n"
    "            [--log FILE] [--foreground] [--flush-timeout INTERVAL] [--journal-limit BYTES]\n"
    "\n"
    "  --db DIR            the profile database to serve (created if missing)\n"
    "  --drain INTERVAL    drain the machines' hash tables this often (default 5m)\n"
    "  --flush INTERVAL    merge into the database this often (default 10m)\n"
    "  --per-process IMAGE...  also keep per-process profiles of these images\n"
    "                      (a path, a file name or a build-id)\n"
    "  --log FILE          log here (default DIR/.cpod/HOST/log; stderr with --foreground)\n"
    "  --foreground        do not detach\n"
    "  --flush-timeout INTERVAL  how long a machine may take to answer a flush (default 5s)\n"
    "  --journal-limit BYTES     merge early once this much is journalled (default 64M)\n"
    "INTERVAL: a number with ms, s (default), m, h or d.\n";

static int usage(const char *why, const char *arg)
{
    if (why)
        fprintf(stderr, "cpod: %s%s%s\n", why, arg ? ": " : "", arg ? arg : "");
    fputs(usage_text, stderr);
    return 2;
}

/* The daemon leaves the directory it was started in; every path it keeps
 * must not depend on it. */
static char *absolute(const char *p)
{
    char real[PATH_MAX], cwd[PATH_MAX];
    if (realpath(p, real))
        return strdup(real);
    if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
        return strdup(p);
    size_t n = strlen(cwd) + strlen(p) + 2;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", cwd, p);
    return r;
}

static bool parse_bytes(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return false;
    unsigned shift = 0;
    if (!strcmp(end, "k") || !strcmp(end, "K"))
        shift = 10;
    else if (!strcmp(end, "M"))
        shift = 20;
    else if (!strcmp(end, "G"))
        shift = 30;
    else if (*end)
        return false;
    if (!v || v > (~0ull >> shift))
        return false;
    *out = v << shift;
    return true;
}

static int serve(cpod_options *o, bool foreground);

int main(int argc, char **argv)
{
    cpod_options o = { 0 };
    bool foreground = false;
    const char **pp = calloc((size_t)argc, sizeof *pp);
    size_t npp = 0;
    if (!pp)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long ms;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(a, "--foreground")) {
            foreground = true;
        } else if (!strcmp(a, "--per-process")) {
            if (!v || !strncmp(v, "--", 2))
                return usage("--per-process needs at least one image", NULL);
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
                pp[npp++] = argv[++i];
        } else if (strncmp(a, "--", 2)) {
            return usage("unexpected argument", a);
        } else if (strcmp(a, "--db") && strcmp(a, "--log") && strcmp(a, "--drain") &&
                   strcmp(a, "--flush") && strcmp(a, "--flush-timeout") && strcmp(a, "--journal-limit")) {
            return usage("unknown option", a);
        } else if (!v) {
            return usage("option needs a value", a);
        } else if (!strcmp(a, "--db")) {
            o.db_dir = argv[++i];
        } else if (!strcmp(a, "--log")) {
            o.log_path = argv[++i];
        } else if (!strcmp(a, "--drain") || !strcmp(a, "--flush") || !strcmp(a, "--flush-timeout")) {
            if (!cpod_parse_interval(v, &ms))
                return usage("bad interval (a positive number with ms, s, m, h or d)", v);
            if (!strcmp(a, "--drain"))
                o.drain_ms = ms;
            else if (!strcmp(a, "--flush"))
                o.flush_ms = ms;
            else
                o.flush_timeout_ms = ms > 3600000 ? 3600000 : (int)ms;
            i++;
        } else if (!strcmp(a, "--journal-limit")) {
            if (!parse_bytes(v, &o.journal_limit))
                return usage("bad size (a positive number, optionally k, M or G)", v);
            i++;
        }
    }
    if (!o.db_dir)
        return usage("--db DIR is required", NULL);
    if (mkdir(o.db_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cpod: %s: cannot create: %s\n", o.db_dir, strerror(errno));
        return 1;
    }
    char *db = absolute(o.db_dir), *logp = o.log_path ? absolute(o.log_path) : NULL;
    if (!db || (o.log_path && !logp))
        return 1;
    o.db_dir = db;
    o.log_path = logp;
    for (size_t k = 0; k < npp; k++)
        if (strchr(pp[k], '/'))
            pp[k] = absolute(pp[k]);
    o.per_process = pp;
    o.nper_process = npp;
    int rc = serve(&o, foreground);
    for (size_t k = 0; k < npp; k++)
        if (strchr(pp[k], '/'))
            free((char *)pp[k]);
    free(pp);
    free(db);
    free(logp);
    return rc;
}

static int serve(cpod_options *op, bool foreground)
{
    cpod_options o = *op;
    char msg[1024];
    if (foreground) {
        o.log_stderr = !o.log_path;
        cpod *d = cpod_open(&o, msg, sizeof msg);
        if (!d) {
            fprintf(stderr, "cpod: %s\n", msg);
            return 1;
        }
        int rc = cpod_serve(d);
        cpod_close(d);
        return rc;
    }

    /* Detach: the grandchild serves and tells the waiting parent through
     * a pipe whether it could start. */
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        perror("cpod: pipe");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("cpod: fork");
        return 1;
    }
    if (child > 0) {
        close(p[1]);
        char buf[1024];
        ssize_t n = 0, r;
        while ((r = read(p[0], buf + n, sizeof buf - 1 - (size_t)n)) > 0)
            n += r;
        buf[n > 0 ? n : 0] = '\0';
        waitpid(child, NULL, 0);
        if (n > 0 && !strcmp(buf, "ok"))
            return 0;
        fprintf(stderr, "cpod: %s\n", n > 0 ? buf : "the daemon died while starting");
        return 1;
    }
    close(p[0]);
    setsid();
    pid_t g = fork();
    if (g < 0)
        _exit(1);
    if (g > 0)
        _exit(0);
    if (chdir("/") != 0)
        _exit(1);
    int null = open("/dev/null", O_RDWR);
    cpod *d = cpod_open(&o, msg, sizeof msg);
    if (!d) {
        if (write(p[1], msg, strlen(msg)) < 0)
            {}
        _exit(1);
    }
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2)
            close(null);
    }
    if (write(p[1], "ok", 2) < 0)
        {}
    close(p[1]);
    int rc = cpod_serve(d);
    cpod_close(d);
    return rc;
}
