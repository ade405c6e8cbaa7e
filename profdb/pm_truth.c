/*
 * profdb/pm_truth.c: axp's --profileme-truth files (pm_truth.h), read
 * whole and sorted by pc so a reader takes one instruction's records at
 * a time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/internal.h"
#include "profdb/pm_truth.h"

#define HEADER "# profileme-truth 1:"

void profdb_pm_truth_free(profdb_pm_truth *t)
{
    if (!t)
        return;
    free(t->e);
    free(t->pool);
    free(t);
}

/* A hex number ending at a space, '-', newline or the end; NULL if none. */
static const char *hex(const char *s, uint64_t *v)
{
    char *end;
    if (*s < '0' || (*s > '9' && (*s | 32) < 'a') || (*s | 32) > 'f')
        return NULL;
    errno = 0;
    *v = strtoull(s, &end, 16);
    return errno || (*end && *end != ' ' && *end != '-' && *end != '\n') ? NULL : end;
}

/* One line into e; its runs appended to *pool (runs as offsets until
 * the pool stops moving). */
static bool parse_line(const char *s, profdb_pmt *e, profdb_pmt_run **pool, size_t *np, size_t *cp,
                       const char *path, unsigned ln, profdb_error *err)
{
    uint64_t count, pid, pc, len, hist;
    int used = 0;
    if (sscanf(s, "%" SCNu64 " %" SCNu64 " %n", &count, &pid, &used) != 2 || !used)
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: expected COUNT PID PC LEN HIST RUNS...", path, ln);
    s += used;
    if (!count || pid > INT32_MAX)
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: count 0 or process id out of range", path, ln);
    if (!(s = hex(s, &pc)) || *s != ' ' || sscanf(s, " %" SCNu64 " %n", &len, &used) != 1 || !used || len > 16)
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: bad pc or history length (0 to 16)", path, ln);
    s += used;
    if (!(s = hex(s, &hist)) || (hist >> len))
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: bad history (more bits than its length?)", path, ln);
    *e = (profdb_pmt){ .count = count, .pc = pc, .pid = (int)pid, .hist = (uint16_t)hist, .len = (uint8_t)len };
    size_t first = *np;
    while (*s == ' ') {
        profdb_pmt_run r;
        if (!(s = hex(s + 1, &r.start)) || *s != '-' || !(s = hex(s + 1, &r.end)) || (r.start | r.end) & 3 ||
            r.start >= r.end)
            return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: a run is not START-END (4-aligned, START < END)", path,
                           ln);
        if (*np - first == PROFDB_PMT_RUNS)
            return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: more than %d runs", path, ln, PROFDB_PMT_RUNS);
        if (*np == *cp) {
            size_t cap = *cp ? 2 * *cp : 4096;
            profdb_pmt_run *p = realloc(*pool, cap * sizeof *p);
            if (!p)
                return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
            *pool = p;
            *cp = cap;
        }
        (*pool)[(*np)++] = r;
    }
    if (*s && *s != '\n')
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: unexpected '%c'", path, ln, *s);
    e->nruns = (uint32_t)(*np - first);
    if (!e->nruns || (*pool)[first].start > pc || (*pool)[first].end != pc + 4)
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: the first run must end right after pc", path, ln);
    e->run = (const profdb_pmt_run *)(uintptr_t)first;
    return true;
}

/* By pc and history, then the rest, so that the order (and what is
 * summed in it) does not depend on the order of the file's lines. */
static int by_pc(const void *a, const void *b)
{
    const profdb_pmt *x = a, *y = b;
    uint32_t hx = (uint32_t)x->len << 16 | x->hist, hy = (uint32_t)y->len << 16 | y->hist;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    if (hx != hy)
        return hx < hy ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    if (x->nruns != y->nruns)
        return x->nruns < y->nruns ? -1 : 1;
    return memcmp(x->run, y->run, x->nruns * sizeof *x->run);
}

profdb_pm_truth *profdb_pm_truth_read(const char *path, profdb_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        pd_fail(err, errno == ENOENT ? PROFDB_ENOENT : PROFDB_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    profdb_pm_truth *t = calloc(1, sizeof *t);
    char *line = NULL;
    size_t lcap = 0, cap = 0, np = 0, cp = 0;
    unsigned ln = 1;
    bool ok = t || pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
    if (ok && (getline(&line, &lcap, f) < 0 || strncmp(line, HEADER, strlen(HEADER))))
        ok = pd_fail(err, PROFDB_EMAGIC, "%s:1: not an axp --profileme-truth file", path);
    while (ok && getline(&line, &lcap, f) >= 0) {
        ln++;
        if (t->n == cap) {
            profdb_pmt *v = realloc(t->e, (cap = cap ? 2 * cap : 1024) * sizeof *v);
            if (!v) {
                ok = pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
                break;
            }
            t->e = v;
        }
        ok = parse_line(line, &t->e[t->n], &t->pool, &np, &cp, path, ln, err);
        t->n += ok;
    }
    free(line);
    fclose(f);
    if (!ok) {
        profdb_pm_truth_free(t);
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++)
        t->e[i].run = t->pool + (uintptr_t)t->e[i].run;
    if (t->n)
        qsort(t->e, t->n, sizeof *t->e, by_pc);
    return t;
}
