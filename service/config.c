/*
 * service/config.c: reading cpo serve's configuration (docs/service.md).
 *
 * A line is "key = value", a "[program NAME]" heading, a comment (#) or
 * blank.  Keys before the first heading are the service's; keys after one
 * are that program's.  Every mistake is reported with its file and line
 * (a program's, found once the file is read, with its heading's line; one
 * about the whole file, such as a missing 'db', with the file alone), and
 * an unknown key is a mistake: a misspelt policy silently ignored would
 * leave a program unprotected.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/outfile.h"
#include "service/internal.h"

typedef struct parser {
    const char *file, *dir;
    unsigned line;            /* the line a mistake is about; 0: the whole file */
    char *err;
    size_t errlen;
    char seen[16][32];        /* keys of the current section so far (a
                                 section has at most 11, none over 12 bytes) */
    unsigned nseen;
} parser;

static bool bad(parser *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->line)
        snprintf(p->err, p->errlen, "%s:%u: %s", p->file, p->line, msg);
    else
        snprintf(p->err, p->errlen, "%s: %s", p->file, msg);
    return false;
}

/* value made absolute against the configuration's directory */
static bool set_path(parser *p, char **dst, const char *value)
{
    free(*dst);
    *dst = value[0] == '/' ? strdup(value) : svc_join(p->dir, value);
    return *dst ? true : bad(p, "out of memory");
}

static bool set_text(parser *p, char **dst, const char *value)
{
    free(*dst);
    return (*dst = strdup(value)) ? true : bad(p, "out of memory");
}

static bool set_number(parser *p, double *dst, const char *key, const char *value, double lo,
                       double hi)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !(v >= lo && v <= hi))
        return bad(p, "%s: '%s' is not a number from %g to %g", key, value, lo, hi);
    *dst = v;
    return true;
}

static bool service_key(parser *p, svc_config *c, const char *key, const char *value)
{
    if (!strcmp(key, "db"))
        return set_path(p, &c->db, value);
    if (!strcmp(key, "state"))
        return set_path(p, &c->state, value);
    if (!strcmp(key, "poll"))
        return set_number(p, &c->poll, key, value, 0.01, 86400);
    if (!strcmp(key, "axp"))
        return set_text(p, &c->axp, value);
    if (!strcmp(key, "qemu"))
        return set_text(p, &c->qemu, value);
    return bad(p, "unknown service key '%s' (db, state, poll, axp, qemu)", key);
}

static bool program_key(parser *p, svc_program *g, const char *key, const char *value)
{
    double v;
    if (!strcmp(key, "original"))
        return set_path(p, &g->original, value);
    if (!strcmp(key, "deploy"))
        return set_path(p, &g->deploy, value);
    if (!strcmp(key, "test"))
        return set_text(p, &g->test, value);
    if (!strcmp(key, "work")) {
        if (!strcmp(value, "runs")) {
            g->work = SVC_WORK_RUNS;
            return true;
        }
        if (!strncmp(value, "calls ", 6) && value[6]) {
            g->work = SVC_WORK_CALLS;
            return set_text(p, &g->work_proc, value + 6);
        }
        return bad(p, "work: '%s' is neither 'runs' nor 'calls PROCEDURE'", value);
    }
    if (!strcmp(key, "test-timeout"))
        return set_number(p, &g->test_timeout, key, value, 1, 86400);
    if (!strcmp(key, "converge"))
        return set_number(p, &g->converge, key, value, 0, 1);
    if (!strcmp(key, "min-gain"))
        return set_number(p, &g->min_gain, key, value, 0, 1);
    if (!strcmp(key, "regression"))
        return set_number(p, &g->regression, key, value, 0, 10);
    if (!strcmp(key, "min-samples")) {
        if (!set_number(p, &v, key, value, 1, 1e15))
            return false;
        g->min_samples = (uint64_t)v;
        return true;
    }
    if (!strcmp(key, "keep")) {
        if (!set_number(p, &v, key, value, 1, 1000))
            return false;
        g->keep = (unsigned)v;
        return true;
    }
    return bad(p, "unknown program key '%s' (original, deploy, work, test, test-timeout, "
                  "min-samples, converge, min-gain, regression, keep)", key);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static bool name_ok(const char *s)
{
    if (!*s || *s == '.' || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
            return false;
    return true;
}

static bool heading(parser *p, svc_config *c, char *s)
{
    size_t n = strlen(s);
    if (s[n - 1] != ']' || strncmp(s, "[program ", 9))
        return bad(p, "a heading is '[program NAME]'");
    s[n - 1] = 0;
    char *name = trim(s + 9);
    if (!name_ok(name))
        return bad(p, "program name '%s': letters, digits, '_', '.', '-' only", name);
    for (size_t i = 0; i < c->nprograms; i++)
        if (!strcmp(c->programs[i].name, name))
            return bad(p, "program '%s' named twice", name);
    svc_program *v = realloc(c->programs, (c->nprograms + 1) * sizeof *v);
    if (!v)
        return bad(p, "out of memory");
    c->programs = v;
    svc_program *g = &v[c->nprograms++];
    *g = (svc_program){ .name = strdup(name), .line = p->line, .work = SVC_WORK_RUNS, .test_timeout = 600,
                        .min_samples = 20000, .converge = 0.9, .min_gain = 0.005,
                        .regression = 0.02, .keep = 4 };
    return g->name ? true : bad(p, "out of memory");
}

static bool line_of(parser *p, svc_config *c, char *s)
{
    s = trim(s);
    if (!*s || *s == '#')
        return true;
    if (*s == '[') {
        p->nseen = 0;
        return heading(p, c, s);
    }
    char *eq = strchr(s, '=');
    if (!eq)
        return bad(p, "expected 'key = value'");
    *eq = 0;
    char *key = trim(s), *value = trim(eq + 1);
    if (!*value)
        return bad(p, "%s: no value", key);
    /* The second of two would silently win: as much a mistake as a
     * misspelt key. */
    for (unsigned i = 0; i < p->nseen; i++)
        if (!strcmp(p->seen[i], key))
            return bad(p, "'%s' given twice in one section", key);
    if (p->nseen < sizeof p->seen / sizeof p->seen[0] && strlen(key) < sizeof p->seen[0])
        strcpy(p->seen[p->nseen++], key);
    return c->nprograms ? program_key(p, &c->programs[c->nprograms - 1], key, value)
                        : service_key(p, c, key, value);
}

/* Whether two paths name one place: one file (hard links, a symbolic
 * link to a directory on the way, "./") when both exist, else one name in
 * one directory.  A symbolic link at the last step is its own place: the
 * service replaces the link, never what it points to. */
static bool same_place(const char *a, const char *b)
{
    struct stat x, y;
    if (lstat(a, &x) == 0 && lstat(b, &y) == 0)
        return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
    char *ra = outfile_resolve(a), *rb = outfile_resolve(b);
    /* unresolvable: compared as spelt */
    bool same = ra && rb ? !strcmp(ra, rb) : !strcmp(a, b);
    free(ra);
    free(rb);
    return same;
}

/* A deploy path that is an original build, its own or another program's,
 * or another program's deploy path too, would be written over. */
static bool paths_apart(parser *p, const svc_config *c)
{
    for (size_t i = 0; i < c->nprograms; i++) {
        const svc_program *g = &c->programs[i];
        p->line = g->line;
        for (size_t j = 0; j < c->nprograms; j++) {
            const svc_program *h = &c->programs[j];
            if (same_place(g->deploy, h->original))
                return j == i ? bad(p, "program '%s': 'deploy' must not be the original build (%s)",
                                    g->name, g->original)
                              : bad(p, "program '%s': 'deploy' is the original build of '%s' (%s)",
                                    g->name, h->name, h->original);
            if (j < i && same_place(g->deploy, h->deploy))
                return bad(p, "programs '%s' and '%s' have one 'deploy' (%s)", h->name, g->name,
                           g->deploy);
        }
    }
    return true;
}

static bool complete(parser *p, svc_config *c, const char *tools)
{
    p->line = 0;    /* no one line is to blame for what is missing */
    if (!c->db)
        return bad(p, "no 'db' (the profile database cpod fills)");
    if (!c->state)
        return bad(p, "no 'state' (the service's own directory)");
    if (!c->nprograms)
        return bad(p, "no [program NAME] to look after");
    /* Every round writes its candidate, plan and report under the state
     * directory, and no tool writes into a database it reads. */
    if (outfile_inside(c->state, c->db))
        return bad(p, "'state' (%s) lies inside 'db' (%s): keep the service's files out of the database",
                   c->state, c->db);
    if (!c->tools && !(c->tools = strdup(tools)))
        return bad(p, "out of memory");
    if (!c->axp && !(c->axp = svc_format("%s/axp run --", c->tools)))
        return bad(p, "out of memory");
    if (!c->qemu && !(c->qemu = strdup("qemu-alpha -L /usr/alpha-linux-gnu")))
        return bad(p, "out of memory");
    for (size_t i = 0; i < c->nprograms; i++) {
        const svc_program *g = &c->programs[i];
        p->line = g->line;
        if (!g->original || !g->deploy || !g->test)
            return bad(p, "program '%s' needs 'original', 'deploy' and 'test'", g->name);
    }
    return paths_apart(p, c);
}

bool svc_config_load(const char *path, const char *tools, svc_config *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->poll = 5;
    char *rel = svc_dirname(path), *dir = rel ? realpath(rel, NULL) : NULL;
    free(rel);
    parser p = { .file = path, .dir = dir, .err = err, .errlen = errlen };
    FILE *f = fopen(path, "r");
    if (!dir || !f || !(out->path = strdup(path))) {
        /* a missing directory is as missing a file as a missing name */
        snprintf(err, errlen, "%s: %s", path, f && dir ? "out of memory" : strerror(errno));
        goto fail;
    }
    char buf[4096];
    while (fgets(buf, sizeof buf, f)) {
        p.line++;
        if (!strchr(buf, '\n') && !feof(f)) {
            bad(&p, "line longer than %zu bytes", sizeof buf - 2);
            goto fail;
        }
        if (!line_of(&p, out, buf))
            goto fail;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    if (!complete(&p, out, tools))
        goto fail;
    fclose(f);
    free(dir);
    return true;
fail:
    if (f)
        fclose(f);
    free(dir);
    svc_config_free(out);
    return false;
}

void svc_config_free(svc_config *c)
{
    for (size_t i = 0; i < c->nprograms; i++) {
        svc_program *g = &c->programs[i];
        free(g->name);
        free(g->original);
        free(g->deploy);
        free(g->work_proc);
        free(g->test);
    }
    free(c->programs);
    free(c->path);
    free(c->db);
    free(c->state);
    free(c->tools);
    free(c->axp);
    free(c->qemu);
    memset(c, 0, sizeof *c);
}
