/*
 * service/store.c: one program's versions and state, kept so that a kill
 * at any moment leaves them consistent (docs/service.md, "State").
 *
 * STATE/NAME/state is a small text file replaced whole (temporary, sync,
 * rename), so it is always one complete version of itself.  A version is
 * made in versions/N.tmp and renamed to versions/N only when complete; a
 * leftover .tmp is a round a kill interrupted, and is removed.  Installing
 * a version at the deploy path is a copy to a temporary beside it renamed
 * over it: the path always holds the old or the new executable, and a
 * process already running keeps its own.  The state says "deploying N"
 * before the rename and "deployed N" after, so a restart knows which side
 * of the rename a kill fell on and finishes the job.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/outfile.h"
#include "service/internal.h"

#define STATE_MAGIC "cpo-serve-state 1"
#define HISTORY_MAX 200

char *svc_version_dir(const svc_prog *g, unsigned v)
{
    return svc_format("%s/versions/%u", g->dir, v);
}

char *svc_version_exe(const svc_prog *g, unsigned v)
{
    return svc_format("%s/versions/%u/exe", g->dir, v);
}

bool svc_deploy_holds(const svc_prog *g)
{
    char *exe = svc_version_exe(g, g->st.deployed);
    bool same = exe && svc_same_file(exe, g->p->deploy);
    free(exe);
    return same;
}

void svc_state_free(svc_state *st)
{
    for (size_t i = 0; i < st->nhistory; i++)
        free(st->history[i]);
    free(st->history);
    memset(st, 0, sizeof *st);
}

static bool push_history(svc_state *st, char *line)
{
    if (!line)
        return false;
    if (st->nhistory == HISTORY_MAX) {
        free(st->history[0]);
        memmove(st->history, st->history + 1, (HISTORY_MAX - 1) * sizeof *st->history);
        st->nhistory--;
    }
    char **v = realloc(st->history, (st->nhistory + 1) * sizeof *v);
    if (!v) {
        free(line);
        return false;
    }
    st->history = v;
    v[st->nhistory++] = line;
    return true;
}

bool svc_history(svc_prog *g, unsigned version, const char *what, const char *fmt, ...)
{
    char text[1024], stamp[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (char *c = text; *c; c++)
        if (*c == '\n')
            *c = ' ';
    time_t t = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    svc_log("%s: version %u %s: %s", g->p->name, version, what, text);
    return push_history(&g->st, svc_format("%s %u %s: %s", stamp, version, what, text));
}

static bool parse_line(svc_state *st, char *line)
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return false;
    *sp = 0;
    char *key = line, *val = sp + 1;
    unsigned *num = !strcmp(key, "base") ? &st->base : !strcmp(key, "deployed") ? &st->deployed
                  : !strcmp(key, "previous") ? &st->previous : !strcmp(key, "target") ? &st->target
                  : !strcmp(key, "next") ? &st->next : NULL;
    if (num) {
        char *end;
        if (!isdigit((unsigned char)*val))
            return false;   /* a line cut short reads as no number, not 0 */
        unsigned long v = strtoul(val, &end, 10);
        *num = (unsigned)v;
        return !*end && v < 1000000;
    }
    if (!strcmp(key, "stale") || !strcmp(key, "reference")) {
        char *end;
        long v = strtol(val, &end, 10);
        *(key[0] == 's' ? &st->stale : &st->reference) = (int)v;
        return *val && !*end && v >= -1 && v < 1000000;
    }
    if (!strcmp(key, "carried")) {
        st->carried = !strcmp(val, "1");
        return true;
    }
    if (!strcmp(key, "build"))
        return snprintf(st->build, sizeof st->build, "%s", val) < (int)sizeof st->build;
    if (!strcmp(key, "phase"))
        return snprintf(st->phase, sizeof st->phase, "%s", val) < (int)sizeof st->phase;
    if (!strcmp(key, "then"))
        return snprintf(st->then, sizeof st->then, "%s", val) < (int)sizeof st->then;
    if (!strcmp(key, "through"))
        return snprintf(st->through, sizeof st->through, "%s", val) < (int)sizeof st->through;
    if (!strcmp(key, "since"))
        return snprintf(st->since, sizeof st->since, "%s", val) < (int)sizeof st->since;
    if (!strcmp(key, "history"))
        return push_history(st, strdup(val));
    return false;
}

bool svc_state_read(const char *path, svc_state *st, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    char buf[2048];
    unsigned line = 0;
    bool ok = fgets(buf, sizeof buf, f) && !strncmp(buf, STATE_MAGIC "\n", sizeof STATE_MAGIC);
    if (!ok)
        snprintf(err, errlen, "%s: not a cpo serve state file", path);
    while (ok && fgets(buf, sizeof buf, f)) {
        line++;
        buf[strcspn(buf, "\n")] = 0;
        if (!(ok = parse_line(st, buf)))
            snprintf(err, errlen, "%s:%u: cannot read this line", path, line + 1);
    }
    fclose(f);
    if (ok && strcmp(st->phase, SVC_PHASE_WATCHING) && strcmp(st->phase, SVC_PHASE_DEPLOYING) &&
        strcmp(st->phase, SVC_PHASE_JUDGING)) {
        snprintf(err, errlen, "%s: phase '%s' is none of watching, deploying, judging", path, st->phase);
        ok = false;
    }
    /* Every version it names was made before next. */
    if (ok && (st->base >= st->next || st->deployed >= st->next || st->previous >= st->next ||
               st->target >= st->next)) {
        snprintf(err, errlen, "%s: a version named is not below next (%u): damaged", path, st->next);
        ok = false;
    }
    return ok;
}

bool svc_state_save(svc_prog *g, char *err, size_t errlen)
{
    char *path = svc_join(g->dir, "state");
    outfile o;
    FILE *f = path ? outfile_open_stream(&o, path, 0644, err, errlen) : NULL;
    if (!path)
        snprintf(err, errlen, "out of memory");
    free(path);
    if (!f)
        return false;
    const svc_state *st = &g->st;
    fprintf(f, "%s\nbuild %s\nbase %u\ndeployed %u\nprevious %u\ntarget %u\nnext %u\nphase %s\n",
            STATE_MAGIC, st->build[0] ? st->build : "-", st->base, st->deployed, st->previous,
            st->target, st->next, st->phase);
    if (st->then[0])
        fprintf(f, "then %s\n", st->then);
    if (st->through[0])
        fprintf(f, "through %s\n", st->through);
    if (st->since[0])
        fprintf(f, "since %s\n", st->since);
    if (st->stale >= 0)
        fprintf(f, "stale %d\ncarried %d\n", st->stale, st->carried);
    if (st->reference >= 0)
        fprintf(f, "reference %d\n", st->reference);
    for (size_t i = 0; i < st->nhistory; i++)
        fprintf(f, "history %s\n", st->history[i]);
    return outfile_commit(&o, err, errlen);
}

bool svc_install(svc_prog *g, unsigned v, char *err, size_t errlen)
{
    svc_state *st = &g->st;
    if (!st->then[0])
        snprintf(st->then, sizeof st->then, "%s", SVC_PHASE_WATCHING);
    snprintf(st->phase, sizeof st->phase, "%s", SVC_PHASE_DEPLOYING);
    st->target = v;
    char *exe = svc_version_exe(g, v);
    bool ok = exe && svc_state_save(g, err, errlen) && svc_copy(exe, g->p->deploy, 0755, err, errlen);
    free(exe);
    if (!ok)
        return false;
    st->deployed = v;
    snprintf(st->phase, sizeof st->phase, "%s", st->then);
    st->then[0] = 0;
    return svc_state_save(g, err, errlen);
}

/* What a stop left in versions/, in one walk: a version a kill left half
 * made (N.tmp), and, once the state is known (recorded), a version at or
 * above next: a round a kill cut off after it renamed its version into
 * place and before it saved the state.  Nothing refers to such a version,
 * and the next round would fail on its name (directory not empty): removed,
 * the round done again. */
static void remove_leftovers(const svc_prog *g, bool recorded)
{
    char *vdir = svc_join(g->dir, "versions");
    DIR *d = vdir ? opendir(vdir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char *end;
        unsigned long v = strtoul(e->d_name, &end, 10);
        bool partial = n > 4 && !strcmp(e->d_name + n - 4, ".tmp");
        bool unrecorded = recorded && isdigit((unsigned char)e->d_name[0]) && !*end && v >= g->st.next;
        if (!partial && !unrecorded)
            continue;
        char *p = svc_join(vdir, e->d_name);
        if (p && unrecorded)
            svc_log("%s: removing version %lu, which a stop left unrecorded", g->p->name, v);
        if (p)
            svc_remove_tree(p);
        free(p);
    }
    if (d)
        closedir(d);
    free(vdir);
}

/* Temporaries an install a kill interrupted left beside the deploy path
 * (svc_copy writes through outfile_open). */
static void remove_install_temps(const svc_prog *g)
{
    char *dir = svc_dirname(g->p->deploy);
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *s = e->d_name;
        if (!outfile_is_temp(g->p->deploy, s))
            continue;
        char *p = svc_join(dir, s);
        struct stat st;
        if (p && lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            svc_log("%s: removing %s, left by an install a stop interrupted", g->p->name, p);
            unlink(p);
        }
        free(p);
    }
    if (d)
        closedir(d);
    free(dir);
}

/* A first start: the original becomes version 0 and is what runs. */
static bool first_start(svc_prog *g, char *err, size_t errlen)
{
    svc_state *st = &g->st;
    char *dir = svc_version_dir(g, 0), *exe = svc_version_exe(g, 0);
    bool made = dir && exe && (mkdir(dir, 0755) == 0 || errno == EEXIST);
    if (!made)   /* start() prints err whatever failed */
        snprintf(err, errlen, "%s: %s", dir ? dir : g->dir, dir && exe ? strerror(errno) : "out of memory");
    bool ok = made && svc_copy(g->p->original, exe, 0755, err, errlen) &&
              svc_build_id(exe, st->build, err, errlen);
    if (ok && !st->build[0]) {
        snprintf(err, errlen, "%s: no build-id: profiles of it could not be told from "
                 "those of its versions (link it with --build-id)", g->p->original);
        ok = false;
    }
    st->next = 1;
    snprintf(st->phase, sizeof st->phase, "%s", SVC_PHASE_WATCHING);
    if (ok && !svc_same_file(exe, g->p->deploy)) {
        ok = svc_install(g, 0, err, errlen);
        if (ok)
            svc_history(g, 0, "deployed", "the original build %s", g->p->original);
    } else if (ok) {
        svc_history(g, 0, "adopted", "the original build, already at %s", g->p->deploy);
    }
    ok = ok && svc_state_save(g, err, errlen);
    free(dir);
    free(exe);
    return ok;
}

bool svc_state_open(svc_prog *g, char *err, size_t errlen)
{
    char *vdir = svc_join(g->dir, "versions"), *path = svc_join(g->dir, "state");
    bool ok = vdir && path && (mkdir(g->dir, 0755) == 0 || errno == EEXIST) &&
              (mkdir(vdir, 0755) == 0 || errno == EEXIST);
    if (!ok)
        snprintf(err, errlen, "%s: %s", g->dir, vdir && path ? strerror(errno) : "out of memory");
    /* mkdir's EEXIST holds for a file too.  A versions/ that is no
     * directory would have the clean-ups below find nothing and every
     * round fail: refused before anything of the program is touched. */
    struct stat vs, ls;
    if (ok && (stat(vdir, &vs) || !S_ISDIR(vs.st_mode))) {
        bool there = lstat(vdir, &ls) == 0;
        snprintf(err, errlen, "%s is %s, not a directory (the program's versions are kept there); "
                 "left as it is", vdir, !there ? "gone" : S_ISREG(ls.st_mode) ? "a file"
                 : S_ISLNK(ls.st_mode) ? "a symbolic link" : "a special file");
        ok = false;
    }
    g->st.stale = g->st.reference = -1;
    if (ok) {
        /* a half-made version needs no state to be known as one; next
         * is known only from a state read whole or just made */
        bool recorded = access(path, F_OK) == 0 ? svc_state_read(path, &g->st, err, errlen)
                                                : first_start(g, err, errlen);
        remove_leftovers(g, recorded);
        ok = recorded;
    }
    if (ok)
        remove_install_temps(g);
    if (ok && !strcmp(g->st.phase, SVC_PHASE_DEPLOYING)) {
        svc_log("%s: finishing the install of version %u a stop interrupted", g->p->name,
                g->st.target);
        ok = svc_install(g, g->st.target, err, errlen);
    }
    free(vdir);
    free(path);
    return ok;
}

static int cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

void svc_prune(svc_prog *g)
{
    char *vdir = svc_join(g->dir, "versions");
    DIR *d = vdir ? opendir(vdir) : NULL;
    unsigned v[1024];
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 1024) {
        char *end;
        unsigned long x = strtoul(e->d_name, &end, 10);
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && !*end)
            v[n++] = (unsigned)x;
    }
    if (d)
        closedir(d);
    qsort(v, n, sizeof *v, cmp_unsigned);
    const svc_state *st = &g->st;
    size_t others = 0;
    for (size_t i = n; i-- > 0;) {
        if (v[i] == st->base || v[i] == st->deployed || v[i] == st->previous)
            continue;
        if (++others <= g->p->keep)
            continue;
        char *dir = svc_version_dir(g, v[i]);
        if (dir) {
            svc_remove_tree(dir);
            svc_log("%s: version %u removed (keep = %u)", g->p->name, v[i], g->p->keep);
        }
        free(dir);
    }
    free(vdir);
}
