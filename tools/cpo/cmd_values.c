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

static const char USAGE[] =
    "usage: cpo values [PROC] [--db DIR] [--epoch E | --all-epochs] [--image IMAGE]\n"
    "                  [--kind result|address|latency|target] [--json]\n";

static const char *const levels[] = { "dcache", "scache", "bcache", "memory" };
static const char *const level_names[] = { "D-cache", "S-cache", "B-cache", "memory" };

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

/* One image's lists; none when it has no value profile. */
static bool load_image(const cpo_report *r, profdb *db, const est_set *s, const est_image *im, void **items,
                       size_t *n)
{
    profdb_vlist *v = NULL;
    profdb_error err;
    if (!profdb_values_sum(db, s->all_epochs ? NULL : s->epoch, NULL, im->key, &v, n, &err)) {
        *n = 0;
        if (err.code != PROFDB_ENOENT) {    /* none: the image had no such samples */
            fprintf(stderr, "cpo: values: %s\n", err.msg);
            return false;
        }
    }
    *items = v;
    return true;
}

/* One image's lists within [lo, hi); how many printed. */
static size_t show_image(const cpo_report *r, const est_image *im, const void *items, size_t n, uint64_t lo,
                         uint64_t hi, bool *first)
{
    int kind = *(const int *)r->ctx;
    const profdb_vlist *v = items;
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].offset < lo || v[i].offset >= hi || (kind && v[i].kind != kind))
            continue;
        if (!r->json && !shown)
            printf("\nImage %s (%s)\n%-12s %-8s %8s  values (share of the samples)\n", im->path, im->key, "address",
                   "kind", "samples");
        if (r->json)
            print_json(&v[i], first);
        else
            print_text(&v[i]);
        shown++;
    }
    return shown;
}

static int option(cpo_report *r, int argc, char **argv, int *i)
{
    int *kind = r->ctx;
    if (strcmp(argv[*i], "--kind") || *i + 1 >= argc)
        return 0;
    if (!(*kind = profdb_vkind_by_name(argv[++*i]))) {
        fprintf(stderr, "cpo: values: --kind: expected result, address, latency or target, got '%s'\n%s", argv[*i],
                USAGE);
        return -1;
    }
    return 1;
}

int cmd_values(int argc, char **argv)
{
    int kind = 0;
    cpo_report r = { .cmd = "values", .usage = USAGE, .nothing = "value samples", .option = option,
                     .load = load_image, .show = show_image, .ctx = &kind };
    return cpo_report_images(argc, argv, &r);
}
