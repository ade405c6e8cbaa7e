/*
 * cpo profileme [PROC] [--db DIR] [--epoch E | --all-epochs] [--image IMAGE] [--json] [--histories N]
 *
 * The ProfileMe profiles (profdb/profileme.h) per instruction: samples,
 * estimated executions, event rates, mean latencies and, from paired
 * samples, wasted issue slots (estimator/profileme.h).  Addresses are
 * link-time.  With PROC, that procedure's instructions only
 * (docs/profile-tools.md).  `cpo list PROC --profileme` shows the same
 * columns beside the disassembly (cpo_pm_* below).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/profileme.h"
#include "tools/cpo/commands.h"

static const char USAGE[] =
    "usage: cpo profileme [PROC] [--db DIR] [--epoch E | --all-epochs] [--image IMAGE] [--json]\n"
    "                     [--histories N]\n";

bool cpo_pm_load(const est_set *s, const est_image *im, profdb_pm **e, size_t *n)
{
    est_selection sel = { .db = s->db, .epoch = s->all_epochs ? NULL : s->epoch, .all_epochs = s->all_epochs };
    char msg[1024] = "";
    if (!est_pm_load(&sel, im->key, e, n, msg, sizeof msg)) {
        fprintf(stderr, "cpo: %s\n", msg);
        return false;
    }
    return true;
}

void cpo_pm_header(void)
{
    printf("  %7s %11s %6s %6s %6s %6s %6s %6s %6s %6s %11s", "pm", "execs", "dmiss%", "mispr%", "imiss%", "f>i",
           "head", "i>r", "load", "useful", "wasted");
}

/* A column of a rate (scale 100: in percent) or of cycles; "-" where
 * it does not apply. */
static void col(double v, double scale)
{
    if (isnan(v))
        printf(" %6s", "-");
    else
        printf(" %6.1f", scale * v);
}

void cpo_pm_columns(const profdb_pm *e)
{
    if (!e) {
        printf("  %7s %11s %6s %6s %6s %6s %6s %6s %6s %6s %11s", "", "", "", "", "", "", "", "", "", "", "");
        return;
    }
    est_pm_metrics m;
    est_pm_metrics_of(e, &m);
    printf("  %7.0f %11.0f", m.samples, m.executions);
    col(m.dmiss, 100);
    col(m.mispredict, 100);
    col(m.imiss, 100);
    col(m.fetch_issue, 1);
    col(m.head, 1);
    col(m.issue_ready, 1);
    col(m.load, 1);
    col(e->c[PDPM_PAIRED] ? (double)e->c[PDPM_USEFUL] / (double)e->c[PDPM_PAIRED] : NAN, 100);
    if (isnan(m.wasted))
        printf(" %11s", "-");
    else
        printf(" %11.0f", m.wasted);
}

static const char *const ends[] = { "history used up", "entry, or no predecessor agrees", "a call", "length limit" };

int cpo_pm_paths(const est_image *im, const profdb_pm *e, size_t n, uint64_t lo, uint64_t hi, uint64_t addr,
                 size_t top)
{
    const profdb_pm *x = NULL;
    if (addr) {
        x = est_pm_at(e, n, addr);
    } else {            /* the procedure's most sampled instruction with a history */
        for (size_t i = 0; i < n; i++)
            if (e[i].offset >= lo && e[i].offset < hi && e[i].paths.n &&
                (!x || e[i].c[PDPM_SAMPLES] > x->c[PDPM_SAMPLES]))
                x = &e[i];
    }
    if (!x || !x->paths.n) {
        printf("\n(no ProfileMe branch histories at %s0x%" PRIx64 ")\n", addr ? "" : "any instruction of ",
               addr ? addr : lo);
        return addr ? 1 : 0;
    }
    char msg[512];
    cfg_program *cfg = cfg_build(im->img, msg, sizeof msg);
    est_freq *f = cfg ? est_freq_from_pm(cfg, e, n, NULL, msg, sizeof msg) : NULL;
    est_pm_path *p = f ? calloc(top, sizeof *p) : NULL;
    if (!p) {
        fprintf(stderr, "cpo: %s: %s\n", im->path, f ? "out of memory" : msg);
        est_freq_free(f);
        cfg_free(cfg);
        return 1;
    }
    size_t proc = 0, np = est_pm_paths(cfg, f, x, &proc, p, top);
    printf("\nPaths to 0x%" PRIx64 " (%" PRIu64 " ProfileMe samples, %u branch histories), most likely first:\n",
           x->offset, x->c[PDPM_SAMPLES], x->paths.n);
    for (size_t i = 0; i < np; i++) {
        const cfg_proc *fp = &cfg->procs[proc];
        printf("  %5.1f%%  ", 100 * p[i].score);
        for (uint32_t k = p[i].nblocks; k-- > 0;)
            printf("0x%" PRIx64 "%s", fp->blocks[p[i].block[k]].start, k ? " > " : "");
        printf("  (ends: %s)\n", ends[p[i].ended & 3]);
    }
    if (!np)
        printf("  (no path of the CFG agrees with the histories)\n");
    free(p);
    est_freq_free(f);
    cfg_free(cfg);
    return 0;
}

/* A history value (length << 16 | bits) as the branch outcomes, oldest
 * first: T taken, N not. */
static void history_text(uint64_t v, char *out)
{
    unsigned len = (unsigned)(v >> 16) & 31;
    for (unsigned i = 0; i < len; i++)
        out[i] = (v >> (len - 1 - i)) & 1 ? 'T' : 'N';
    out[len] = '\0';
}

/* The nhist commonest histories before e with their shares. */
static void histories(const profdb_pm *e, size_t nhist, bool json)
{
    hot_value top[HOTLIST_MAX];
    double share[HOTLIST_MAX];
    size_t n = hotlist_top(&e->paths, top, share, nhist);
    for (size_t i = 0; i < n; i++) {
        char h[40];
        history_text(top[i].value, h);
        if (json)
            printf("%s{\"branches\": \"%s\", \"share\": %.4f}", i ? ", " : "", h, share[i]);
        else
            printf("%s%s %.0f%%", i ? ", " : "  ", h[0] ? h : "-", 100 * share[i]);
    }
}

static void json_num(const char *name, double v)
{
    if (isnan(v))
        printf(", \"%s\": null", name);
    else
        printf(", \"%s\": %.6g", name, v);
}

static void print_json(const profdb_pm *e, size_t nhist, bool *first)
{
    est_pm_metrics m;
    est_pm_metrics_of(e, &m);
    printf("%s\n  {\"address\": \"0x%" PRIx64 "\"", *first ? "" : ",", e->offset);
    *first = false;
    for (int k = 0; k < PDPM_NCOUNTERS; k++)
        printf(", \"%s\": %" PRIu64, profdb_pm_counter_name(k), e->c[k]);
    json_num("executions", m.executions);
    json_num("dmiss_rate", m.dmiss);
    json_num("mispredict_rate", m.mispredict);
    json_num("imiss_rate", m.imiss);
    json_num("wasted_slots", m.wasted);
    printf(", \"histograms\": {");
    for (int l = 0; l < PDPM_NLAT; l++) {
        printf("%s\"%s\": [", l ? ", " : "", profdb_pm_latency_name(l));
        for (int k = 0; k < PDPM_NBINS; k++)
            printf("%s%" PRIu64, k ? ", " : "", e->hist[l][k]);
        printf("]");
    }
    printf("}, \"histories\": [");
    histories(e, nhist, true);
    printf("]}");
}

static void print_text(const profdb_pm *e, size_t nhist)
{
    printf("0x%-10" PRIx64, e->offset);
    cpo_pm_columns(e);
    histories(e, nhist, false);
    printf("\n");
}

/* One image's entries; none when it has no ProfileMe profile. */
static bool load_image(const cpo_report *r, profdb *db, const est_set *s, const est_image *im, void **items,
                       size_t *n)
{
    profdb_pm *e = NULL;
    profdb_error err;
    if (!profdb_pm_sum(db, s->all_epochs ? NULL : s->epoch, NULL, im->key, &e, n, &err)) {
        *n = 0;
        if (err.code != PROFDB_ENOENT) {    /* none: the image had no such samples */
            fprintf(stderr, "cpo: profileme: %s\n", err.msg);
            return false;
        }
    }
    *items = e;
    return true;
}

/* One image's entries within [lo, hi); how many printed. */
static size_t show_image(const cpo_report *r, const est_image *im, const void *items, size_t n, uint64_t lo,
                         uint64_t hi, bool *first)
{
    size_t nhist = *(const size_t *)r->ctx, shown = 0;
    const profdb_pm *e = items;
    for (size_t i = 0; i < n; i++) {
        if (e[i].offset < lo || e[i].offset >= hi)
            continue;
        if (!r->json && !shown) {
            printf("\nImage %s (%s)\n%-12s", im->path, im->key, "address");
            cpo_pm_header();
            printf("  %s\n", nhist ? "branch histories before it (oldest first)" : "");
        }
        if (r->json)
            print_json(&e[i], nhist, first);
        else
            print_text(&e[i], nhist);
        shown++;
    }
    return shown;
}

static int option(cpo_report *r, int argc, char **argv, int *i)
{
    size_t *nhist = r->ctx;
    char *end;
    if (strcmp(argv[*i], "--histories") || *i + 1 >= argc)
        return 0;
    unsigned long v = strtoul(argv[++*i], &end, 10);
    if (*end || v > HOTLIST_MAX || argv[*i][0] == '-') {
        fprintf(stderr, "cpo: profileme: --histories: expected 0 to %d, got '%s'\n%s", HOTLIST_MAX, argv[*i], USAGE);
        return -1;
    }
    *nhist = v;
    return 1;
}

int cmd_profileme(int argc, char **argv)
{
    size_t nhist = 3;
    cpo_report r = { .cmd = "profileme", .usage = USAGE, .nothing = "ProfileMe samples", .option = option,
                     .load = load_image, .show = show_image, .ctx = &nhist };
    return cpo_report_images(argc, argv, &r);
}
