/*
 * profdb/truth.c: axp's --truth files, read and summed per pc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/internal.h"
#include "profdb/truth.h"

void profdb_truth_free(profdb_truth *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncauses; i++)
        free(t->causes[i]);
    free(t->causes);
    free(t->pc);
    free(t->head);
    free(t->stall);
    free(t);
}

/* The header: "# pid pc head_of_queue_cycles EVENT... stall.CAUSE...".
 * *first is the column of the first cause. */
static bool header(profdb_truth *t, char *line, const char *path, size_t *ncols, size_t *first,
                   profdb_error *err)
{
    char *save, *tok = strtok_r(line, " \t\n", &save);
    static const char *const lead[] = { "#", "pid", "pc", "head_of_queue_cycles" };
    size_t col = 0;
    *first = 0;
    for (; tok; tok = strtok_r(NULL, " \t\n", &save), col++) {
        if (col < 4 && strcmp(tok, lead[col]))
            return pd_fail(err, PROFDB_EMAGIC, "%s:1: not an axp --truth file (header '%s')", path, tok);
        if (strncmp(tok, "stall.", 6))
            continue;
        if (!*first)
            *first = col - 1;
        char **v = realloc(t->causes, (t->ncauses + 1) * sizeof *v);
        if (!v || !(v[t->ncauses] = strdup(tok + 6)))
            return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
        t->causes = v;
        t->ncauses++;
    }
    *ncols = col - 1;
    if (col < 4)
        return pd_fail(err, PROFDB_EMAGIC, "%s:1: not an axp --truth file", path);
    return true;
}

typedef struct row {
    uint64_t pc;
    double head;
    double *stall;
} row;

static int by_pc(const void *a, const void *b)
{
    const row *x = a, *y = b;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static bool parse_row(char *line, size_t ncols, size_t first, size_t ncauses, row *r,
                      const char *path, unsigned lineno, profdb_error *err)
{
    char *save, *tok = strtok_r(line, " \t\n", &save);
    for (size_t col = 0; col < ncols; col++, tok = strtok_r(NULL, " \t\n", &save)) {
        if (!tok)
            return pd_fail(err, PROFDB_ETRUNC, "%s:%u: %zu columns, the header names %zu", path, lineno,
                        col, ncols);
        char *end;
        errno = 0;
        if (col == 1) {
            r->pc = strtoull(tok, &end, 16);
            if (strncmp(tok, "0x", 2) || *end || errno)
                return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: pc '%s' is not a hex address", path,
                            lineno, tok);
            continue;
        }
        double v = strtod(tok, &end);
        if (*end || errno || !(v >= 0))
            return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: '%s' is not a count", path, lineno, tok);
        if (col == 2)
            r->head = v;
        else if (first && col >= first && col - first < ncauses)
            r->stall[col - first] = v;
    }
    if (tok)
        return pd_fail(err, PROFDB_ECORRUPT, "%s:%u: more columns than the header names", path, lineno);
    return true;
}

/* Rows of equal pc (several processes) summed into t. */
static bool gather(profdb_truth *t, row *v, size_t n, const char *path, profdb_error *err)
{
    if (n)
        qsort(v, n, sizeof *v, by_pc);          /* v is NULL when there are no rows */
    size_t k = t->ncauses;
    t->pc = malloc((n ? n : 1) * sizeof *t->pc);
    t->head = malloc((n ? n : 1) * sizeof *t->head);
    t->stall = calloc((n ? n : 1) * (k ? k : 1), sizeof *t->stall);
    if (!t->pc || !t->head || !t->stall)
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        if (!t->n || t->pc[t->n - 1] != v[i].pc) {
            t->pc[t->n] = v[i].pc;
            t->head[t->n++] = 0;
        }
        t->head[t->n - 1] += v[i].head;
        for (size_t c = 0; c < k; c++)
            t->stall[(t->n - 1) * k + c] += v[i].stall[c];
    }
    return true;
}

profdb_truth *profdb_truth_read(const char *path, profdb_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        pd_fail(err, errno == ENOENT ? PROFDB_ENOENT : PROFDB_EIO, "%s: cannot open: %s", path,
             strerror(errno));
        return NULL;
    }
    profdb_truth *t = calloc(1, sizeof *t);
    row *v = NULL;
    size_t n = 0, cap = 0, ncols = 0, first = 0;
    char *line = NULL;
    size_t lcap = 0;
    unsigned lineno = 0;
    bool ok = t != NULL;
    if (!ok)
        pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
    ssize_t len = -1;
    if (ok && (len = getline(&line, &lcap, f)) < 0)
        ok = pd_fail(err, PROFDB_ETRUNC, "%s: empty, not an axp --truth file", path);
    lineno = 1;
    /* axp ends every line: a header without its end was cut, and would
     * name fewer columns than the rows have */
    if (ok && line[len - 1] != '\n' && !strncmp(line, "# pid pc ", 9))
        ok = pd_fail(err, PROFDB_ETRUNC, "%s:1: the header is cut short", path);
    ok = ok && header(t, line, path, &ncols, &first, err);
    while (ok && getline(&line, &lcap, f) >= 0) {
        lineno++;
        if (n == cap) {
            row *nv = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v);
            if (!nv) {
                ok = pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
                break;
            }
            v = nv;
        }
        v[n] = (row){ 0 };
        if (!(v[n].stall = calloc(t->ncauses ? t->ncauses : 1, sizeof *v[n].stall))) {
            ok = pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
            break;
        }
        n++;
        ok = parse_row(line, ncols, first, t->ncauses, &v[n - 1], path, lineno, err);
    }
    ok = ok && gather(t, v, n, path, err);
    for (size_t i = 0; i < n; i++)
        free(v[i].stall);
    free(v);
    free(line);
    fclose(f);
    if (!ok) {
        profdb_truth_free(t);
        return NULL;
    }
    return t;
}

long profdb_truth_find(const profdb_truth *t, uint64_t pc)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->pc[mid] < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->pc[lo] == pc ? (long)lo : -1;
}

int profdb_truth_cause(const profdb_truth *t, const char *name)
{
    for (size_t i = 0; i < t->ncauses; i++)
        if (!strcmp(t->causes[i], name))
            return (int)i;
    return -1;
}
