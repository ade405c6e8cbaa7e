/*
 * paths/pathprof.c: path profiles in memory and as text (docs/paths.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "common/readfile.h"
#include "paths/internal.h"
#include "paths/lines.h"
#include "paths/pathprof.h"

pathprof *pathprof_new(const char *const *metrics, size_t n)
{
    if (n > PATHPROF_MAX_METRICS)
        return NULL;
    pathprof *pp = calloc(1, sizeof *pp);
    if (!pp)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(pp->metric[pp->nmetrics++] = strdup(metrics[i]))) {
            pathprof_free(pp);
            return NULL;
        }
    return pp;
}

void pathprof_free(pathprof *pp)
{
    if (!pp)
        return;
    for (size_t i = 0; i < pp->nimages; i++) {
        pathprof_image *im = &pp->images[i];
        for (size_t j = 0; j < im->nprocs; j++) {
            free(im->procs[j].name);
            free(im->procs[j].paths);
            free(im->procs[j].metrics);
        }
        free(im->procs);
        free(im->path);
        free(im->build_id);
    }
    free(pp->images);
    for (size_t i = 0; i < pp->nmetrics; i++)
        free(pp->metric[i]);
    free(pp);
}

int pathprof_metric(const pathprof *pp, const char *name)
{
    for (size_t i = 0; i < pp->nmetrics; i++)
        if (!strcmp(pp->metric[i], name))
            return (int)i;
    return -1;
}

pathprof_image *pathprof_image_add(pathprof *pp, const char *path, const char *build_id)
{
    for (size_t i = 0; i < pp->nimages; i++)
        if (!strcmp(pp->images[i].build_id, build_id) && !strcmp(pp->images[i].path, path))
            return &pp->images[i];
    if (!paths_grow(&pp->images, &pp->cap, pp->nimages, sizeof *pp->images))
        return NULL;
    pathprof_image *im = &pp->images[pp->nimages];
    memset(im, 0, sizeof *im);
    im->path = strdup(path);
    im->build_id = strdup(build_id);
    if (!im->path || !im->build_id) {
        free(im->path);
        free(im->build_id);
        return NULL;
    }
    pp->nimages++;
    return im;
}

pathprof_proc *pathprof_proc_add(pathprof_image *im, uint64_t addr, const char *name)
{
    for (size_t i = 0; i < im->nprocs; i++)
        if (im->procs[i].addr == addr)
            return &im->procs[i];
    if (!paths_grow(&im->procs, &im->cap, im->nprocs, sizeof *im->procs))
        return NULL;
    pathprof_proc *f = &im->procs[im->nprocs];
    memset(f, 0, sizeof *f);
    f->addr = addr;
    if (!(f->name = strdup(name)))
        return NULL;
    im->nprocs++;
    return f;
}

size_t pathprof_path_add(const pathprof *pp, pathprof_proc *f, uint64_t id, uint64_t start, uint64_t end)
{
    if (f->npaths == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 8;
        pathprof_path *np = realloc(f->paths, nc * sizeof *np);
        if (!np)
            return SIZE_MAX;
        f->paths = np;
        uint64_t *nm = realloc(f->metrics, nc * (pp->nmetrics ? pp->nmetrics : 1) * sizeof *nm);
        if (!nm)
            return SIZE_MAX;
        f->metrics = nm;
        f->cap = nc;
    }
    size_t i = f->npaths++;
    f->paths[i] = (pathprof_path){ .id = id, .start = start, .end = end };
    memset(pathprof_metrics(pp, f, i), 0, pp->nmetrics * sizeof(uint64_t));
    return i;
}

/* ---- text ---------------------------------------------------------------- */

static void write_end(FILE *f, uint64_t a, uint64_t sentinel, const char *word)
{
    if (a == sentinel)
        fputs(word, f);
    else
        fprintf(f, "0x%llx", (unsigned long long)a);
}

bool pathprof_write(const pathprof *pp, FILE *f)
{
    fputs("cpo-paths 1\nmetrics", f);
    for (size_t i = 0; i < pp->nmetrics; i++)
        fprintf(f, " %s", pp->metric[i]);
    fputc('\n', f);
    for (size_t i = 0; i < pp->nimages; i++) {
        const pathprof_image *im = &pp->images[i];
        fprintf(f, "image %s ", im->build_id[0] ? im->build_id : "-");
        escape_write(f, im->path);
        fputc('\n', f);
        for (size_t j = 0; j < im->nprocs; j++) {
            const pathprof_proc *fn = &im->procs[j];
            fprintf(f, "proc 0x%llx ", (unsigned long long)fn->addr);
            escape_write(f, fn->name);
            fputc('\n', f);
            for (size_t k = 0; k < fn->npaths; k++) {
                const pathprof_path *p = &fn->paths[k];
                if (pathprof_complete(p)) {
                    fprintf(f, "path %llu", (unsigned long long)p->id);
                } else {
                    fputs("partial ", f);
                    write_end(f, p->start, PATHPROF_ENTRY, "entry");
                    fputc(' ', f);
                    write_end(f, p->end, PATHPROF_EXIT, "exit");
                    fprintf(f, " %llu", (unsigned long long)p->id);
                }
                fprintf(f, " %llu", (unsigned long long)p->count);
                const uint64_t *m = pathprof_metrics(pp, fn, k);
                for (size_t q = 0; q < pp->nmetrics; q++)
                    fprintf(f, " %llu", (unsigned long long)m[q]);
                fputc('\n', f);
            }
        }
    }
    fputs("outside", f);
    for (size_t q = 0; q < pp->nmetrics; q++)
        fprintf(f, " %llu", (unsigned long long)pp->outside[q]);
    fputs("\nend\n", f);
    return !ferror(f);
}

static bool read_end(lines *l, size_t i, uint64_t sentinel, const char *word, uint64_t *v)
{
    if (i < l->n && !strcmp(l->w[i], word)) {
        *v = sentinel;
        return true;
    }
    if (!lines_u64(l, i, v))
        return false;
    if (*v >= PATHPROF_EXIT)
        return lines_error(l, "block address %s is out of range", l->w[i]);
    return true;
}

static bool read_metrics(lines *l, size_t from, size_t nm, uint64_t *m)
{
    if (l->n != from + nm)
        return lines_error(l, "%zu metric values expected, %zu found", nm, l->n > from ? l->n - from : 0);
    for (size_t q = 0; q < nm; q++)
        if (!lines_u64(l, from + q, &m[q]))
            return false;
    return true;
}

static bool parse_header(lines *l, pathprof **out)
{
    if (!lines_next(l) || l->n != 2 || strcmp(l->w[0], "cpo-paths"))
        return lines_failed(l) ? false : lines_error(l, "not a path profile (no 'cpo-paths 1' line)");
    if (strcmp(l->w[1], "1"))
        return lines_error(l, "path profile version %s; this build reads version 1", l->w[1]);
    if (!lines_next(l) || strcmp(l->w[0], "metrics"))
        return lines_failed(l) ? false : lines_error(l, "the 'metrics' line is missing");
    if (l->n - 1 > PATHPROF_MAX_METRICS)
        return lines_error(l, "more than %d metrics", PATHPROF_MAX_METRICS);
    for (size_t i = 1; i < l->n; i++)
        for (size_t j = 1; j < i; j++)
            if (!strcmp(l->w[i], l->w[j]))
                return lines_error(l, "metric '%s' named twice", l->w[i]);
    if (!(*out = pathprof_new((const char *const *)&l->w[1], l->n - 1)))
        return lines_error(l, "out of memory");
    return true;
}

/* One path or partial-path line into f. */
static bool parse_path(lines *l, pathprof *pp, pathprof_proc *f)
{
    bool partial = !strcmp(l->w[0], "partial");
    uint64_t id, start = PATHPROF_ENTRY, end = PATHPROF_EXIT, count;
    size_t at = 1;
    if (partial) {
        if (!read_end(l, 1, PATHPROF_ENTRY, "entry", &start) || !read_end(l, 2, PATHPROF_EXIT, "exit", &end))
            return false;
        if (start == PATHPROF_ENTRY && end == PATHPROF_EXIT)
            return lines_error(l, "a partial path from entry to exit is a complete one");
        at = 3;
    }
    if (!lines_u64(l, at, &id) || !lines_u64(l, at + 1, &count))
        return false;
    size_t i = pathprof_path_add(pp, f, id, start, end);
    if (i == SIZE_MAX)
        return lines_error(l, "out of memory");
    f->paths[i].count = count;
    return read_metrics(l, at + 2, pp->nmetrics, pathprof_metrics(pp, f, i));
}

pathprof *pathprof_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    lines l;
    lines_init(&l, text, len, name, err, errlen);
    pathprof *pp = NULL;
    pathprof_image *im = NULL;
    pathprof_proc *f = NULL;
    bool ended = false;
    if (!parse_header(&l, &pp))
        goto fail;
    while (lines_next(&l)) {
        const char *k = l.w[0];
        if (ended) {
            lines_error(&l, "text after 'end'");
            goto fail;
        } else if (!strcmp(k, "image")) {
            if (l.n != 3 || !escape_decode(l.w[2])) {
                lines_error(&l, "an image line is 'image BUILD-ID PATH'");
                goto fail;
            }
            const char *bid = strcmp(l.w[1], "-") ? l.w[1] : "";
            if (!(im = pathprof_image_add(pp, l.w[2], bid))) {
                lines_error(&l, "out of memory");
                goto fail;
            }
            f = NULL;
        } else if (!strcmp(k, "proc")) {
            uint64_t a;
            if (!im) {
                lines_error(&l, "a proc line before any image line");
                goto fail;
            }
            if (l.n != 3 || !lines_u64(&l, 1, &a) || !escape_decode(l.w[2])) {
                if (!lines_failed(&l))
                    lines_error(&l, "a proc line is 'proc ADDRESS NAME'");
                goto fail;
            }
            if (!(f = pathprof_proc_add(im, a, l.w[2]))) {
                lines_error(&l, "out of memory");
                goto fail;
            }
        } else if (!strcmp(k, "path") || !strcmp(k, "partial")) {
            if (!f) {
                lines_error(&l, "a %s line before any proc line", k);
                goto fail;
            }
            if (!parse_path(&l, pp, f))
                goto fail;
        } else if (!strcmp(k, "outside")) {
            if (!read_metrics(&l, 1, pp->nmetrics, pp->outside))
                goto fail;
        } else if (!strcmp(k, "end") && l.n == 1) {
            ended = true;
        } else {
            lines_error(&l, "unknown line '%s'", k);
            goto fail;
        }
    }
    if (lines_failed(&l))
        goto fail;
    if (!ended) {
        lines_error(&l, "the profile ends early (no 'end' line)");
        goto fail;
    }
    return pp;
fail:
    pathprof_free(pp);
    return NULL;
}

pathprof *pathprof_read(const char *file, char *err, size_t errlen)
{
    size_t len;
    char *text = readfile(file, SIZE_MAX, &len, err, errlen);
    if (!text)
        return NULL;
    pathprof *pp = pathprof_parse(text, len, file, err, errlen);
    free(text);
    return pp;
}
