/*
 * cpo values [PROC] [--db DIR] [--epoch E | --all-epochs] [--image IMAGE]
 *            [--kind result|address|latency|target] [--json]
 *
 * The value profiles (profdb/values.h): per instruction and kind, the hot
 * values with their estimated shares and the value samples behind them;
 * for load latencies also the histogram over the level that answered
 * (D-cache, S-cache, B-cache, memory).  Addresses are link-time.  With
 * PROC, that procedure's instructions only (docs/profile-tools.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/values.h"
#include "tools/cpo/commands.h"

#ifndef STT_FUNC
#define STT_FUNC 2
#endif

static const char USAGE[] =
    "usage: cpo values [PROC] [--db DIR] [--epoch E | --all-epochs] [--image IMAGE]\n"
    "                  [--kind result|address|latency|target] [--json]\n";

static const char *const levels[] = { "dcache", "scache", "bcache", "memory" };
static const char *const level_names[] = { "D-cache", "S-cache", "B-cache", "memory" };

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool names_image(const est_image *im, const char *want)
{
    size_t n = strlen(want);
    return !strcmp(im->path, want) || !strcmp(base_name(im->path), want) || (n >= 8 && !strncmp(im->key, want, n));
}

/* A latency value: level << 32 | cycles (collector/cpod_values.c). */
static unsigned level_of(uint64_t v) { return (unsigned)(v >> 32) & 3; }
static uint64_t cycles_of(uint64_t v) { return v & 0xffffffffu; }

/* Shares per level: the hot list's estimates summed by level, over the samples. */
static void bins(const profdb_vlist *l, double out[4])
{
    memset(out, 0, 4 * sizeof *out);
    for (uint32_t i = 0; i < l->h.n; i++)
        out[level_of(l->h.v[i].value)] += hotlist_estimate(&l->h, &l->h.v[i]);
    for (int k = 0; k < 4; k++)
        out[k] = l->h.samples ? out[k] / (double)l->h.samples : 0;
}

static void print_json(const profdb_vlist *l, bool *first)
{
    hot_value top[HOTLIST_MAX];
    double share[HOTLIST_MAX];
    size_t n = hotlist_top(&l->h, top, share, HOTLIST_MAX);
    printf("%s\n  {\"address\": \"0x%" PRIx64 "\", \"kind\": \"%s\", \"samples\": %" PRIu64 ", \"values\": [",
           *first ? "" : ",", l->offset, profdb_vkind_name(l->kind), l->h.samples);
    *first = false;
    for (size_t i = 0; i < n; i++) {
        bool lat = l->kind == PROFDB_VK_LATENCY;
        printf("%s{\"value\": \"0x%" PRIx64 "\", \"share\": %.4f", i ? ", " : "",
               lat ? cycles_of(top[i].value) : top[i].value, share[i]);
        if (lat)
            printf(", \"level\": \"%s\"", levels[level_of(top[i].value)]);
        printf("}");
    }
    printf("]");
    if (l->kind == PROFDB_VK_LATENCY) {
        double b[4];
        bins(l, b);
        printf(", \"levels\": {");
        for (int k = 0; k < 4; k++)
            printf("%s\"%s\": %.4f", k ? ", " : "", levels[k], b[k]);
        printf("}");
    }
    printf("}");
}

static void print_text(const profdb_vlist *l)
{
    hot_value top[HOTLIST_MAX];
    double share[HOTLIST_MAX];
    size_t n = hotlist_top(&l->h, top, share, 6);
    printf("0x%-10" PRIx64 " %-8s %8" PRIu64 "  ", l->offset, profdb_vkind_name(l->kind), l->h.samples);
    if (l->kind == PROFDB_VK_LATENCY) {
        double b[4];
        bins(l, b);
        for (int k = 0; k < 4; k++)
            printf("%s%s %.1f%%", k ? ", " : "", level_names[k], 100 * b[k]);
        printf(" |");
        for (size_t i = 0; i < n; i++)
            printf(" %" PRIu64 " cycles %.1f%%", cycles_of(top[i].value), 100 * share[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            printf("%s0x%" PRIx64 " %.1f%%", i ? ", " : "", top[i].value, 100 * share[i]);
    }
    printf("\n");
}

typedef struct opts {
    const char *proc, *want;
    int kind;
    bool json;
} opts;

/* One image's lists, within PROC when one is given; how many printed. */
static size_t show_image(profdb *db, const est_set *s, const est_image *im, const opts *o, bool *first)
{
    uint64_t lo = 0, hi = UINT64_MAX;
    if (o->proc) {
        const image_symbol *sym = im->img ? image_symbol_by_name(im->img, o->proc) : NULL;
        if (!sym || sym->type != STT_FUNC)
            return 0;
        lo = sym->value;
        hi = sym->value + sym->size;
    }
    profdb_vlist *v;
    size_t n;
    profdb_error err;
    if (!profdb_values_sum(db, s->all_epochs ? NULL : s->epoch, NULL, im->key, &v, &n, &err)) {
        if (err.code != PROFDB_ENOENT)
            fprintf(stderr, "cpo: values: %s\n", err.msg);
        return 0;
    }
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].offset < lo || v[i].offset >= hi || (o->kind && v[i].kind != o->kind))
            continue;
        if (!o->json && !shown)
            printf("\nImage %s (%s)\n%-12s %-8s %8s  values (share of the samples)\n", im->path, im->key, "address",
                   "kind", "samples");
        if (o->json)
            print_json(&v[i], first);
        else
            print_text(&v[i]);
        shown++;
    }
    free(v);
    return shown;
}

static int parse(int argc, char **argv, est_selection *sel, opts *o)
{
    est_error err;
    for (int i = 1; i < argc; i++) {
        int k = cpo_selection_arg(sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: values: %s\n%s", err.msg, USAGE);
            return 2;
        }
        if (k)
            continue;
        if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            o->want = argv[++i];
        } else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
            if (!(o->kind = profdb_vkind_by_name(argv[++i]))) {
                fprintf(stderr, "cpo: values: --kind: expected result, address, latency or target, got '%s'\n%s",
                        argv[i], USAGE);
                return 2;
            }
        } else if (argv[i][0] != '-' && !o->proc) {
            o->proc = argv[i];
        } else {
            fprintf(stderr, "cpo: values: unexpected argument '%s'\n%s", argv[i], USAGE);
            return 2;
        }
    }
    return 0;
}

int cmd_values(int argc, char **argv)
{
    est_selection sel = { 0 };
    opts o = { 0 };
    int rc = parse(argc, argv, &sel, &o);
    if ((rc = cpo_selection_finish("values", &sel, rc)))
        return rc;
    est_set s;
    est_error err;
    if (!est_load(&sel, &s, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        cpo_selection_release(&sel);
        return 1;
    }
    profdb_error perr;
    profdb *db = profdb_open(s.db, 0, &perr);
    if (!db) {
        fprintf(stderr, "cpo: %s\n", perr.msg);
        est_free(&s);
        cpo_selection_release(&sel);
        return 1;
    }
    bool first = true;
    size_t shown = 0, named = 0;
    if (o.json)
        printf("[");
    else
        printf("Database %s, %s%s\n", s.db, s.all_epochs ? "all epochs" : "epoch ", s.all_epochs ? "" : s.epoch);
    for (size_t i = 0; i < s.nimages; i++) {
        const est_image *im = &s.images[i];
        if (im->status == EST_IMAGE_UNKNOWN || (o.want && !names_image(im, o.want)))
            continue;
        named++;
        shown += show_image(db, &s, im, &o, &first);
    }
    if (o.json)
        printf("%s]\n", first ? "" : "\n");
    rc = 0;
    if (o.want && !named) {
        fprintf(stderr, "cpo: values: no image %s in the selection\n", o.want);
        rc = 1;
    } else if (!shown && !o.json) {
        printf("(no value samples%s%s)\n", o.proc ? " in " : "", o.proc ? o.proc : "");
    }
    profdb_close(db);
    est_free(&s);
    cpo_selection_release(&sel);
    return rc;
}
