/*
 * cpo paths IMAGE --from FILE [--proc NAME|ADDR] [--metric M] [--top N]
 *           [--threshold F] [--json] [--exact FILE]
 *
 * The hot paths of a path profile (axp --paths, or an instrumented
 * binary's table) ranked by a metric, each as its blocks with source
 * lines; the hot-path table of seed 004 (hot, dense, sparse); or, with
 * --exact, the check that the paths through every block add up to axp's
 * exact count of it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "paths/analyse.h"
#include "profdb/exact.h"
#include "tools/cpo/commands.h"

static const char usage_text[] =
    "usage: cpo paths IMAGE --from FILE [--proc NAME|ADDR] [--metric M] [--top N]\n"
    "                 [--threshold F] [--json] [--exact FILE]\n";

typedef struct popts {
    const char *image, *from, *proc, *metric, *exact;
    size_t top;
    double threshold;
    bool json;
} popts;

/* A procedure of the profile with its CFG and numbering, for showing. */
typedef struct pview {
    image *img;
    cfg_program *cfg;
    const pathprof *pp;
    const pathprof_image *pim;
    int m, mi;                   /* the ranking metric, instructions */
    double avg_rate;
} pview;

static void show_blocks(FILE *f, pview *v, const cfg_proc *fn, const uint32_t *blk, size_t n, bool json)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t a = fn->blocks[blk[i]].start;
        if (json) {
            fprintf(f, "%s\"0x%" PRIx64 "\"", i ? ", " : "", a);
            continue;
        }
        const char *file, *func;
        unsigned line;
        if (image_source_line(v->img, a, &file, &line, &func)) {
            const char *base = strrchr(file, '/');
            fprintf(f, "      0x%" PRIx64 "  %s:%u\n", a, base ? base + 1 : file, line);
        } else {
            fprintf(f, "      0x%" PRIx64 "\n", a);
        }
    }
}

/* (value, index) pairs: value descending, index ascending */
static int by_metric_desc(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? 1 : x[0] > y[0] ? -1 : (x[1] > y[1]) - (x[1] < y[1]);
}

/* One procedure: its paths by the metric, the top ones shown. */
static int show_proc(pview *v, const pathprof_proc *pf, const popts *o, bool *first)
{
    const cfg_proc *fn = cfg_proc_at(v->cfg, pf->addr);
    char err[256];
    cfg_paths bl;
    if (!fn || fn->start != pf->addr) {
        fprintf(stderr, "cpo: %s: no procedure starts at 0x%" PRIx64 " (%s): the profile is of another build\n",
                o->image, pf->addr, pf->name);
        return 1;
    }
    if (!cfg_paths_build(fn, NULL, &bl, err, sizeof err)) {
        fprintf(stderr, "cpo: %s\n", err);
        return 1;
    }
    uint64_t (*order)[2] = malloc((pf->npaths ? pf->npaths : 1) * sizeof *order);
    uint32_t *blk = malloc((fn->nblocks + 1) * sizeof *blk);
    if (!order || !blk) {
        free(order);
        free(blk);
        cfg_paths_free(&bl);
        fprintf(stderr, "cpo: out of memory\n");
        return 1;
    }
    uint64_t total = 0;
    for (size_t k = 0; k < pf->npaths; k++) {
        order[k][0] = pathprof_metrics(v->pp, pf, k)[v->m];
        order[k][1] = k;
        total += order[k][0];
    }
    qsort(order, pf->npaths, sizeof *order, by_metric_desc);
    size_t shown = pf->npaths < o->top ? pf->npaths : o->top;
    uint64_t covered = 0;
    if (o->json)
        printf("%s\n    {\"name\": ", *first ? "" : ",");
    else
        printf("%s (0x%" PRIx64 "): %zu paths, %s %" PRIu64 "\n", pf->name, pf->addr, pf->npaths,
               v->pp->metric[v->m], total);
    if (o->json) {
        json_string(stdout, pf->name);
        printf(", \"address\": \"0x%" PRIx64 "\", \"paths\": [", pf->addr);
    }
    *first = false;
    int rc = 0;
    for (size_t r = 0; r < shown; r++) {
        size_t k = (size_t)order[r][1];
        const pathprof_path *p = &pf->paths[k];
        const uint64_t *mv = pathprof_metrics(v->pp, pf, k);
        size_t n;
        if (!paths_blocks(fn, &bl, p, blk, fn->nblocks + 1, &n) || n > fn->nblocks) {
            fprintf(stderr, "cpo: %s: path %" PRIu64 " is not a path of this build of the procedure\n", pf->name,
                    p->id);
            rc = 1;
            break;
        }
        covered += mv[v->m];
        double rate = v->mi >= 0 && mv[v->mi] ? (double)mv[v->m] / (double)mv[v->mi] : 0;
        if (o->json) {
            printf("%s\n      {\"id\": %" PRIu64 ", \"count\": %" PRIu64 ", \"partial\": %s, \"blocks\": [",
                   r ? "," : "", p->id, p->count, pathprof_complete(p) ? "false" : "true");
            show_blocks(stdout, v, fn, blk, n, true);
            printf("], \"metrics\": {");
            for (size_t q = 0; q < v->pp->nmetrics; q++)
                printf("%s\"%s\": %" PRIu64, q ? ", " : "", v->pp->metric[q], mv[q]);
            printf("}}");
        } else {
            printf("  path %" PRIu64 "%s  count %" PRIu64 "  %s %" PRIu64 " (%.1f%%)  per instruction %.4f  %s\n",
                   p->id, pathprof_complete(p) ? "" : " (partial)", p->count, v->pp->metric[v->m], mv[v->m],
                   total ? 100.0 * (double)mv[v->m] / (double)total : 0.0, rate,
                   rate > v->avg_rate ? "dense" : "sparse");
            show_blocks(stdout, v, fn, blk, n, false);
        }
    }
    if (o->json)
        printf("]}");
    else if (rc == 0)
        printf("  the hottest %zu paths: %.1f%% of the procedure's %s\n", shown,
               total ? 100.0 * (double)covered / (double)total : 0.0, v->pp->metric[v->m]);
    free(order);
    free(blk);
    cfg_paths_free(&bl);
    return rc;
}

static void hot_table(const pathprof *pp, int m, double threshold)
{
    paths_hot_table h;
    if (!paths_hot_paths(pp, m, threshold, &h)) {
        fprintf(stderr, "cpo: the profile has no instructions column or out of memory\n");
        return;
    }
    printf("%s: %" PRIu64 " in all, %.5f per instruction; %zu paths ran\n", pp->metric[m], h.total, h.avg_rate,
           h.npaths);
    printf("hot paths (at least %.2f%% each): %zu with %.1f%%; dense %zu with %.1f%%; sparse %zu with %.1f%%\n",
           100 * threshold, h.nhot, 100 * h.hot_share, h.ndense, 100 * h.dense_share, h.nsparse,
           100 * h.sparse_share);
    paths_hot_free(&h);
}

static int check_exact(pview *v, const popts *o)
{
    profdb_error pe;
    profdb_exact *ex = profdb_exact_read(o->exact, &pe);
    if (!ex) {
        fprintf(stderr, "cpo: %s\n", pe.msg);
        return 1;
    }
    const profdb_exact_image *xi = v->img->build_id_len
        ? profdb_exact_find(ex, v->img->build_id, v->img->build_id_len) : NULL;
    if (!xi)
        xi = profdb_exact_find_path(ex, v->img->path);
    if (!xi || !xi->nruns) {     /* declared but never run: a file cut short */
        fprintf(stderr, "cpo: %s: no exact counts for %s\n", o->exact, o->image);
        profdb_exact_free(ex);
        return 1;
    }
    size_t procs, blocks, bad;
    char err[512];
    bool ok = paths_check_exact(v->pim, v->cfg, xi, stdout, &procs, &blocks, &bad, err, sizeof err);
    profdb_exact_free(ex);
    if (!ok) {
        fprintf(stderr, "cpo: %s\n", err);
        return 1;
    }
    printf("%zu procedures, %zu blocks: %zu differ from the exact counts\n", procs, blocks, bad);
    return bad ? 1 : 0;
}

static int parse(int argc, char **argv, popts *o)
{
    static const struct option opts[] = {
        { "from", required_argument, 0, 'f' }, { "proc", required_argument, 0, 'p' },
        { "metric", required_argument, 0, 'm' }, { "top", required_argument, 0, 't' },
        { "threshold", required_argument, 0, 'T' }, { "json", no_argument, 0, 'j' },
        { "exact", required_argument, 0, 'x' }, { 0, 0, 0, 0 },
    };
    memset(o, 0, sizeof *o);
    o->metric = "cycles";
    o->top = 10;
    o->threshold = 0.01;
    int c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:p:m:t:T:jx:", opts, NULL)) != -1) {
        switch (c) {
        case 'f': o->from = optarg; break;
        case 'p': o->proc = optarg; break;
        case 'm': o->metric = optarg; break;
        case 'j': o->json = true; break;
        case 'x': o->exact = optarg; break;
        case 't':
            o->top = strtoull(optarg, &end, 10);
            if (*end || !o->top) {
                fprintf(stderr, "cpo: --top: expected a positive number, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'T':
            o->threshold = strtod(optarg, &end);
            if (*end || !(o->threshold > 0 && o->threshold <= 1)) {
                fprintf(stderr, "cpo: --threshold: expected a fraction in (0, 1], got '%s'\n", optarg);
                return 2;
            }
            break;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (optind + 1 != argc || !o->from) {
        fputs(usage_text, stderr);
        return 2;
    }
    o->image = argv[optind];
    return -1;
}

static int run(pview *v, const popts *o)
{
    if (o->exact)
        return check_exact(v, o);
    const cfg_proc *only = NULL;
    if (o->proc) {
        only = cfg_proc_named(v->cfg, o->proc);
        if (!only && !strncmp(o->proc, "0x", 2))
            only = cfg_proc_at(v->cfg, strtoull(o->proc, NULL, 16));
        if (!only) {
            fprintf(stderr, "cpo: %s: no procedure '%s'\n", o->image, o->proc);
            return 1;
        }
    }
    if (!o->json && !only)
        hot_table(v->pp, v->m, o->threshold);
    bool first = true;
    int rc = 0;
    if (o->json)
        printf("{\"procedures\": [");
    /* procedures by the metric, most first */
    size_t n = v->pim->nprocs;
    uint64_t (*order)[2] = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        fprintf(stderr, "cpo: out of memory\n");
        return 1;
    }
    for (size_t j = 0; j < n; j++) {
        const pathprof_proc *pf = &v->pim->procs[j];
        uint64_t t = 0;
        for (size_t k = 0; k < pf->npaths; k++)
            t += pathprof_metrics(v->pp, pf, k)[v->m];
        order[j][0] = t;
        order[j][1] = j;
    }
    qsort(order, n, sizeof *order, by_metric_desc);
    for (size_t r = 0; r < n && !rc; r++) {
        const pathprof_proc *pf = &v->pim->procs[order[r][1]];
        if (only ? pf->addr != only->start : !order[r][0])
            continue;
        rc = show_proc(v, pf, o, &first);
    }
    free(order);
    if (o->json)
        printf("\n]}\n");
    return rc;
}

int cmd_paths(int argc, char **argv)
{
    popts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    char err[512];
    pview v = { 0 };
    pathprof *pp = pathprof_read(o.from, err, sizeof err);
    if (!pp) {
        fprintf(stderr, "cpo: %s\n", err);
        return 1;
    }
    v.pp = pp;
    if ((v.m = pathprof_metric(pp, o.metric)) < 0) {
        fprintf(stderr, "cpo: %s has no metric '%s'\n", o.from, o.metric);
        pathprof_free(pp);
        return 2;
    }
    v.mi = pathprof_metric(pp, "instructions");
    image_error ie;
    if (!(v.img = image_open(o.image, &ie))) {
        fprintf(stderr, "cpo: %s\n", ie.msg);
        pathprof_free(pp);
        return 1;
    }
    rc = 1;
    if (!(v.cfg = cfg_build(v.img, err, sizeof err))) {
        fprintf(stderr, "cpo: %s\n", err);
    } else if (!(v.pim = paths_image_for(pp, v.img))) {
        fprintf(stderr, "cpo: %s has no paths of %s\n", o.from, o.image);
    } else {
        paths_hot_table h;
        if (paths_hot_paths(pp, v.m, 1.0, &h)) {
            v.avg_rate = h.avg_rate;
            paths_hot_free(&h);
        }
        rc = run(&v, &o);
    }
    cfg_free(v.cfg);
    image_close(v.img);
    pathprof_free(pp);
    return rc;
}
