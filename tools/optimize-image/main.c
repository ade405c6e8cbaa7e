/*
 * optimize-image IMAGE --exact FILE... [--report FILE] [--split-warm] [--cold-handlers] [--no-colour] [--gaps]
 *                [--blocks pettis-hansen|ext-tsp] [--procs pettis-hansen|c3] [--write-plan FILE] -o OUT
 * optimize-image IMAGE --db DIR... [--epoch E...|--all-epochs] [--image FILE]... [--stale OLD]...
 *                [--report FILE] ... -o OUT
 * optimize-image IMAGE --plan FILE|identity|random [--seed N] [--check]
 *                [--write-plan FILE] [-v] -o OUT
 *
 * With --db, the optimizer (docs/optimizer.md) makes a layout plan from the
 * estimator's block and edge frequencies of IMAGE from the database's cycle
 * samples (docs/estimator.md; several --db or --epoch: each one's estimates,
 * summed), its rewritten copies' carried back (--image names their files
 * when they are no longer where they were profiled), and those of older
 * builds (--stale) matched onto IMAGE by name and instruction hashes; with
 * --exact, from axp's exact counts; --report writes what it did per
 * procedure and the cycles its cost model predicts.  With --plan, applies a
 * given layout plan (docs/layout-plan.md).  Either way IMAGE, an Alpha
 * executable linked with --emit-relocs, is rewritten to OUT; an IMAGE that
 * is itself a rewrite stands for its original, recovered from its undo
 * record (rewriter/undo.h).  `identity` keeps the original order but moves
 * all code; `random` makes a random valid plan from --seed.  --check
 * overwrites the old copy of moved code with trapping instructions.  Prints
 * a summary: procedures moved, and those left in place by reason; -v names
 * each one left in place.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfg/cfg.h"
#include "common/hash.h"
#include "common/outfile.h"
#include "estimator/samples.h"
#include "optimizer/optimize.h"
#include "rewriter/addrmap.h"
#include "rewriter/rewrite.h"
#include "rewriter/undo.h"
#include "tools/optimize-image/profile.h"

static const char usage_text[] =
    "usage: optimize-image IMAGE --db DIR... [--epoch E...|--all-epochs] [--image FILE]... [--stale OLD]...\n"
    "                      [--report FILE] [--split-warm] [--cold-handlers] [--no-colour] [--gaps]\n"
    "                      [--blocks pettis-hansen|ext-tsp] [--procs pettis-hansen|c3] [--write-plan FILE] [-v] -o OUT\n"
    "       optimize-image IMAGE --exact FILE... [--report FILE] [--split-warm] [--cold-handlers] [--no-colour] [--gaps]\n"
    "                      [--blocks pettis-hansen|ext-tsp] [--procs pettis-hansen|c3] [--write-plan FILE] [-v] -o OUT\n"
    "       optimize-image IMAGE --plan FILE|identity|random [--seed N] [--check]\n"
    "                      [--write-plan FILE] [-v] -o OUT\n"
    "       optimize-image IMAGE --instrument paths|cct|paths,cct [--plan ...] -o OUT\n";

/* A rewritten image is optimized as its original, recovered from it: every
 * round is a rewrite of the original, so the new image's address map leads
 * straight back to it, and profiles of either rewritten copy are carried
 * back through their own maps.  Takes img; NULL after saying why. */
static image *original_of(image *img, const char *in)
{
    char err[512], hex[2 * IMAGE_MAX_BUILD_ID + 1];
    uint8_t *buf;
    size_t size;
    bool ok = undo_recover(img, &buf, &size, err, sizeof err);
    image_close(img);
    if (!ok) {
        fprintf(stderr, "optimize-image: %s\n", err);
        return NULL;
    }
    image_error ierr;
    img = image_open_mem(buf, size, in, &ierr);
    free(buf);
    if (!img) {
        fprintf(stderr, "optimize-image: %s (its original, recovered)\n", ierr.msg);
        return NULL;
    }
    printf("%s: a rewritten image; rewriting its original (build-id %s), recovered from it\n", in,
           image_build_id_hex(img, hex, sizeof hex));
    return img;
}

/* The selection is loaded more than once (the image, its copies, older
 * builds): each warning is said once. */
static void warn_once(void *ctx, const char *msg)
{
    static uint64_t seen[64];
    static size_t n;
    (void)ctx;
    uint64_t h = fnv1a_str(FNV1A_INIT, msg);
    for (size_t i = 0; i < n; i++)
        if (seen[i] == h)
            return;
    if (n < 64)
        seen[n++] = h;
    fprintf(stderr, "optimize-image: warning: %s\n", msg);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Appends optarg to v (n of cap used); false after saying there are too
 * many of what. */
static bool push(const char **v, size_t *n, size_t cap, const char *what)
{
    if (*n == cap) {
        fprintf(stderr, "optimize-image: at most %zu %s\n", cap, what);
        return false;
    }
    v[(*n)++] = optarg;
    return true;
}
/* push for an array field v counted by n */
#define PUSH(v, n, what) push((v), &(n), sizeof (v) / sizeof (v)[0], what)

/* Where samples come from: each database given (--db), in each epoch given
 * (--epoch; none: the current one, or all with --all-epochs). */
typedef struct sources {
    const char *dbs[64], *epochs[64];
    size_t ndbs, nepochs;
} sources;

/* The profile from every database and epoch given, summed: each one's
 * estimate of the image is made from its own samples (as several exact
 * files add up).  One without samples of the image is left out with a
 * warning; all of them without is an error. */
static bool profile_sources(const cfg_program *prog, const est_selection *sel, const sources *src,
                            uint32_t line, uint32_t nsets, const char *const *stale, size_t nstale,
                            oi_profile *prof, char *err, size_t errlen)
{
    bool have = false;
    char first[512] = "";
    size_t ne = src->nepochs ? src->nepochs : 1, n = src->ndbs * ne;
    for (size_t k = 0; k < n; k++) {
        est_selection one = *sel;
        one.db = src->dbs[k / ne];
        one.epoch = src->nepochs ? src->epochs[k % ne] : NULL;
        oi_profile p;
        bool none;
        if (!oi_profile_samples(prog, &one, line, nsets, stale, nstale, &p, &none, err, errlen)) {
            if (!none || n == 1) {
                if (have)
                    oi_profile_free(prof);
                return false;
            }
            fprintf(stderr, "optimize-image: warning: %s%s%s; left out\n", err,
                    one.epoch ? ", epoch " : "", one.epoch ? one.epoch : "");
            if (!first[0])
                snprintf(first, sizeof first, "%s", err);
            continue;
        }
        if (!have) {
            *prof = p;
            have = true;
            continue;
        }
        bool ok = oi_profile_add(prof, &p, nsets);
        oi_profile_free(&p);
        if (!ok) {
            oi_profile_free(prof);
            snprintf(err, errlen, "out of memory");
            return false;
        }
    }
    if (!have)
        snprintf(err, errlen, "%.400s (and in every other database and epoch given)", first);
    return have;
}

/* The optimizer's plan from exact counts or samples, and its report. */
static bool optimize(const image *img, const cfg_program *prog, const est_selection *sel,
                     const sources *src, const char *const *stale, size_t nstale,
                     const char *const *exact, size_t nexact, const char *report,
                     const opt_options *oo, plan *pl, char *err, size_t errlen)
{
    plan_init(pl);
    ev5_params ev5;
    ev5_defaults(&ev5);
    oi_profile prof;
    uint32_t nsets = ev5.icache.size / ev5.icache.line;
    if (sel ? !profile_sources(prog, sel, src, ev5.icache.line, nsets, stale, nstale, &prof, err, errlen)
            : !oi_profile_exact(prog, exact, nexact, ev5.icache.line, nsets, &prof, err, errlen))
        return false;
    opt_options o = *oo;
    o.ev5 = &ev5;
    /* the new segment starts on a boundary of at least the cache's size */
    o.code_phase = (uint32_t)(rw_code_offset(img) % ev5.icache.size);
    o.shared_heat = prof.shared;
    o.jumps = prof.jumps;
    o.njumps = prof.njumps;
    o.runs = (const est_freq *const *)prof.runs;
    o.run_shared = (const double *const *)prof.run_shared;
    o.nruns = prof.nruns;
    opt_result res;
    bool ok = opt_plan(prog, prof.freq, &o, pl, &res, err, errlen);
    if (ok && report) {
        outfile of;
        FILE *rf = outfile_open_stream(&of, report, 0666, err, errlen);
        ok = rf != NULL;
        if (rf) {
            opt_report(rf, prog, &res);
            ok = outfile_commit(&of, err, errlen);
        }
    }
    if (ok)
        printf("optimizer: %zu procedures placed; predicted taken-branch cycles %.0f -> %.0f; "
               "hot I-cache lines %llu -> %llu\n", pl->nprocs, res.bubbles_before,
               res.bubbles_after, (unsigned long long)res.hot_lines_before,
               (unsigned long long)res.hot_lines_after);
    if (ok)
        opt_result_free(&res);
    oi_profile_free(&prof);
    return ok;
}

/* The command line. */
typedef struct args {
    const char *in, *planarg, *out, *wplan, *report;
    const char *exact[64], *images[256], *stale[16];
    size_t nexact, nimages, nstale;
    sources src;
    opt_options oo;
    est_selection sel;
    uint64_t seed;
    bool seeded;
    rw_options ro;
} args;

/* A database, epoch or counts file given twice would count its samples
 * twice and tilt the sum toward it: refused, as a mistake. */
static bool repeated(const char *opt, const char *const *v, size_t n, bool by_file)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (by_file ? outfile_same(v[i], v[j]) : !strcmp(v[i], v[j])) {
                fprintf(stderr, "optimize-image: %s %s and %s %s are the same: it would count twice\n",
                        opt, v[j], opt, v[i]);
                return true;
            }
    return false;
}

/* No output may replace a file the run reads, another output, or a file
 * of a database given: checked before anything is read or written. */
static bool outputs_apart(const args *a)
{
    outfile_arg outs[] = { { "-o", a->out }, { "--report", a->report }, { "--write-plan", a->wplan } };
    outfile_arg ins[2 + sizeof a->exact / sizeof *a->exact + sizeof a->images / sizeof *a->images +
                    sizeof a->stale / sizeof *a->stale],
        dirs[sizeof a->src.dbs / sizeof *a->src.dbs];
    size_t nin = 0, nd = 0;
    ins[nin++] = (outfile_arg){ "the image", a->in };
    for (size_t i = 0; i < a->nexact; i++)
        ins[nin++] = (outfile_arg){ "--exact", a->exact[i] };
    if (a->planarg && strcmp(a->planarg, "identity") && strcmp(a->planarg, "random"))
        ins[nin++] = (outfile_arg){ "--plan", a->planarg };
    for (size_t i = 0; i < a->nimages; i++)
        ins[nin++] = (outfile_arg){ "--image", a->images[i] };
    for (size_t i = 0; i < a->nstale; i++)
        ins[nin++] = (outfile_arg){ "--stale", a->stale[i] };
    for (size_t i = 0; i < a->src.ndbs; i++)
        dirs[nd++] = (outfile_arg){ "the database", a->src.dbs[i] };
    char err[1024];
    if (outfile_apart(outs, 3, ins, nin, dirs, nd, err, sizeof err))
        return true;
    fprintf(stderr, "optimize-image: %s\n", err);
    return false;
}

/* Reads the command line into *a: -1 to go on, else the status to exit
 * with (0 after --help, 2 after a usage error, said). */
static int parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        { "plan", required_argument, 0, 'p' },
        { "exact", required_argument, 0, 'x' },
        { "db", required_argument, 0, 'D' },
        { "epoch", required_argument, 0, 'E' },
        { "all-epochs", no_argument, 0, 'A' },
        { "image", required_argument, 0, 'I' },
        { "stale", required_argument, 0, 'S' },
        { "report", required_argument, 0, 'r' },
        { "split-warm", no_argument, 0, 'W' },
        { "cold-handlers", no_argument, 0, 'H' },
        { "no-colour", no_argument, 0, 'C' },
        { "gaps", no_argument, 0, 'G' },
        { "blocks", required_argument, 0, 'B' },
        { "procs", required_argument, 0, 'P' },
        { "seed", required_argument, 0, 's' },
        { "check", no_argument, 0, 'c' },
        { "instrument", required_argument, 0, 'N' },
        { "write-plan", required_argument, 0, 'w' },
        { "verbose", no_argument, 0, 'v' },
        { "output", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    *a = (args){ .seed = 1 };
    int c;
    while ((c = getopt_long(argc, argv, "p:s:cw:vo:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p': a->planarg = optarg; break;
        case 'x':
            if (!PUSH(a->exact, a->nexact, "--exact files"))
                return 2;
            break;
        case 'r': a->report = optarg; break;
        case 'D':
            if (!PUSH(a->src.dbs, a->src.ndbs, "--db databases"))
                return 2;
            break;
        case 'E':
            if (!PUSH(a->src.epochs, a->src.nepochs, "--epoch epochs"))
                return 2;
            break;
        case 'A': a->sel.all_epochs = true; break;
        case 'S':
            if (!PUSH(a->stale, a->nstale, "--stale images"))
                return 2;
            break;
        case 'I':
            if (!PUSH(a->images, a->nimages, "--image files"))
                return 2;
            break;
        case 'W': a->oo.split_warm = true; break;
        case 'H': a->oo.cold_handlers = true; break;
        case 'C': a->oo.no_colour = true; break;
        case 'G': a->oo.gaps = true; break;
        case 'P':
            if (!strcmp(optarg, "c3") || !strcmp(optarg, "pettis-hansen"))
                a->oo.c3 = !strcmp(optarg, "c3");
            else {
                fprintf(stderr, "optimize-image: --procs '%s': 'pettis-hansen' or 'c3'\n", optarg);
                return 2;
            }
            break;
        case 'B':
            if (!strcmp(optarg, "ext-tsp") || !strcmp(optarg, "pettis-hansen"))
                a->oo.exttsp = !strcmp(optarg, "ext-tsp");
            else {
                fprintf(stderr, "optimize-image: --blocks '%s': 'pettis-hansen' or 'ext-tsp'\n",
                        optarg);
                return 2;
            }
            break;
        case 's': {
            char *end;
            a->seed = strtoull(optarg, &end, 0);
            if (!*optarg || *end) {
                fprintf(stderr, "optimize-image: --seed '%s' is not a number\n", optarg);
                return 2;
            }
            a->seeded = true;
            break;
        }
        case 'c': a->ro.check = true; break;
        case 'N':
            if (!strcmp(optarg, "paths"))
                a->ro.instrument = RW_INSTRUMENT_PATHS;
            else if (!strcmp(optarg, "cct"))
                a->ro.instrument = RW_INSTRUMENT_CCT;
            else if (!strcmp(optarg, "paths,cct") || !strcmp(optarg, "cct,paths"))
                a->ro.instrument = RW_INSTRUMENT_PATHS | RW_INSTRUMENT_CCT;
            else {
                fprintf(stderr, "optimize-image: --instrument '%s': 'paths', 'cct' or 'paths,cct'\n",
                        optarg);
                return 2;
            }
            break;
        case 'w': a->wplan = optarg; break;
        case 'v': a->ro.log = stdout; break;
        case 'o': a->out = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (a->ro.instrument && !a->planarg && !a->nexact && !a->src.ndbs)
        a->planarg = "identity";
    if (optind + 1 != argc || !!a->planarg + !!a->nexact + !!a->src.ndbs != 1 || !a->out) {
        fputs(usage_text, stderr);
        return 2;
    }
    a->in = argv[optind];
    if (a->report && a->planarg) {
        fprintf(stderr, "optimize-image: --report goes with --db or --exact\n");
        return 2;
    }
    if ((a->src.nepochs || a->sel.all_epochs || a->nimages || a->nstale) && !a->src.ndbs) {
        fprintf(stderr, "optimize-image: --epoch, --all-epochs, --image and --stale go with --db\n");
        return 2;
    }
    if (a->seeded && (!a->planarg || strcmp(a->planarg, "random"))) {
        fprintf(stderr, "optimize-image: --seed goes with --plan random\n");
        return 2;
    }
    if (repeated("--db", a->src.dbs, a->src.ndbs, true) ||
        repeated("--epoch", a->src.epochs, a->src.nepochs, false) ||
        repeated("--exact", a->exact, a->nexact, true) || !outputs_apart(a))
        return 2;
    a->sel.image_files = a->images;
    a->sel.nimage_files = a->nimages;
    a->sel.warn = warn_once;
    a->sel.quiet_missing = true;    /* profile.c says which matter */
    return -1;
}

/* What the rewrite did, and the time it took. */
static void print_stats(const args *a, const rw_stats *st, double t0, double t1, double t2)
{
    printf("%s -> %s: %zu procedures, %zu moved, %zu left in place\n", a->in, a->out, st->procs,
           st->moved, st->procs - st->moved);
    for (unsigned r = 1; r < RW_NREASONS; r++)
        if (st->pinned[r])
            printf("  left in place: %zu %s\n", st->pinned[r], rw_reason_name(r));
    for (unsigned r = 1; r < RW_NREASONS; r++)
        if (st->rigid[r])
            printf("  moved whole, blocks not reordered: %zu %s\n", st->rigid[r], rw_reason_name(r));
    printf("code: %" PRIu64 " bytes moved, %" PRIu64 " bytes emitted at 0x%" PRIx64
           "; %zu branches added, %zu removed, %zu inverted\n",
           st->old_text, st->new_text, st->seg_addr, st->branches_added, st->branches_removed,
           st->branches_inverted);
    printf("unwind: %zu FDEs written for moved code, %zu copied; %zu layout rounds\n",
           st->fdes_new, st->fdes_copied, st->rounds);
    if (a->ro.instrument) {
        printf("instrumented: %s counted in %zu procedures, %" PRIu64 " bytes of code "
               "inserted, %" PRIu64 " bytes of counters; %zu system calls hooked",
               a->ro.instrument == RW_INSTRUMENT_CCT ? "calling contexts"
               : a->ro.instrument == RW_INSTRUMENT_PATHS ? "paths" : "paths and calling contexts",
               st->ins_procs, st->ins_bytes, st->counter_bytes, st->hooks);
        if (st->unhooked)
            printf(", %zu in code left in place not hooked", st->unhooked);
        if (st->spills)
            printf("; %zu places with no free registers save three", st->spills);
        if (st->hashed)
            printf("; %zu procedures with more than 65,536 paths count in hashed tables", st->hashed);
        printf("\n");
        for (unsigned r = 0; r < sizeof st->noins / sizeof st->noins[0]; r++)
            if (st->noins[r])
                printf("  not counted: %zu %s\n", st->noins[r], rw_noins_name(r));
    }
    printf("time: %.3f s (analysis %.3f s, rewrite %.3f s)%s\n", t2 - t0, t1 - t0, t2 - t1,
           a->ro.check ? ", check mode" : "");
}

/* The plan to path, whole or not at all. */
static bool write_plan(const char *path, const plan *pl, char *err, size_t errlen)
{
    outfile of;
    if (!outfile_open(&of, path, 0666, err, errlen))
        return false;
    FILE *f = outfile_stream(&of);
    if (!f || !plan_write(f, pl)) {
        outfile_abort(&of);
        snprintf(err, errlen, "%s: cannot write the plan", path);
        return false;
    }
    return outfile_commit(&of, err, errlen);
}

int main(int argc, char **argv)
{
    args a;
    int st0 = parse_args(argc, argv, &a);
    if (st0 >= 0)
        return st0;
    const char *in = a.in;
    const image *open[1];
    double t0 = now();
    image_error ierr;
    image *img = image_open(in, &ierr);
    if (!img) {
        fprintf(stderr, "optimize-image: %s\n", ierr.msg);
        return 1;
    }
    if (image_section_by_name(img, ADDRMAP_SECTION) && !(img = original_of(img, in)))
        return 1;
    /* Its samples are found by build-id, wherever its file is now. */
    open[0] = img;
    a.sel.open_images = open;
    a.sel.nopen_images = 1;
    /* Before the plan and the report: a failure leaves nothing behind. */
    char err[512];
    if (!rw_can_rewrite(img, a.out, err, sizeof err)) {
        fprintf(stderr, "optimize-image: %s\n", err);
        image_close(img);
        return 1;
    }
    cfg_program *prog = cfg_build(img, err, sizeof err);
    if (!prog) {
        fprintf(stderr, "optimize-image: %s\n", err);
        image_close(img);
        return 1;
    }
    plan pl;
    bool ok;
    if (a.nexact || a.src.ndbs)
        ok = optimize(img, prog, a.src.ndbs ? &a.sel : NULL, &a.src, a.stale, a.nstale, a.exact, a.nexact,
                      a.report, &a.oo, &pl, err, sizeof err);
    else if (!strcmp(a.planarg, "identity"))
        ok = plan_identity(prog, &pl) || (snprintf(err, sizeof err, "out of memory"), false);
    else if (!strcmp(a.planarg, "random"))
        ok = plan_random(prog, a.seed, &pl) || (snprintf(err, sizeof err, "out of memory"), false);
    else
        ok = plan_read_file(a.planarg, &pl, err, sizeof err);
    if (ok && a.wplan)
        ok = write_plan(a.wplan, &pl, err, sizeof err);
    rw_stats st;
    double t1 = now();
    if (ok)
        ok = rw_rewrite(img, prog, &pl, &a.ro, a.out, &st, err, sizeof err);
    double t2 = now();
    if (!ok)
        fprintf(stderr, "optimize-image: %s\n", err);
    else
        print_stats(&a, &st, t0, t1, t2);
    plan_free(&pl);
    cfg_free(prog);
    image_close(img);
    return ok ? 0 : 1;
}
