/* axp: run Alpha Linux programs on the simulated machine. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alpha/ev5.h"
#include "common/outfile.h"
#include "machine/machine.h"
#include "tools/axp/collect.h"
#include "tools/axp/paths.h"
#include "tools/axp/pm_truth.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: axp run [OPTIONS] [--] PROGRAM [ARGS...]\n"
        "\n"
        "Runs an Alpha Linux executable (static or dynamic) on the simulated\n"
        "Alpha 21164 machine and exits with its status (128+N if signal N\n"
        "killed it).  axp's own statuses: 2 usage, 124 axp itself failed,\n"
        "125 the machine stopped, 126 cannot run, 127 no such program.\n"
        "\n"
        "options:\n"
        "  --root DIR       Alpha root overlaid on the host's files (default %s)\n"
        "  --cpus N         simulated CPUs (default 1)\n"
        "  --stats=FILE     write run statistics as JSON\n"
        "  --exact FILE     write exact execution counts (see docs/machine.md)\n"
        "  --strict         stop at the first unsupported system call\n"
        "  --sandbox        confine the guest's files to the root and the working\n"
        "                   directory (no host files elsewhere, no host /proc)\n"
        "  --mem-limit MB   writable guest memory, all processes (default %llu);\n"
        "                   beyond it mmap, brk and fork fail with ENOMEM\n"
        "  --max-threads N  guest threads alive at once (default %d); beyond it\n"
        "                   fork and clone fail with EAGAIN\n"
        "  --quantum N      instructions per CPU per scheduling round (default 20000)\n"
        "  --brk ADDR       start every program's heap (the break) at ADDR, 8 KB\n"
        "                   aligned, above its image, instead of just after it\n"
        "  --ev5 KEY=VALUE  run the EV5 cycle model, with this parameter changed\n"
        "                   (repeatable; --ev5 list prints them all)\n"
        "  --timing         run the EV5 cycle model with the default parameters\n"
        "  --pmu EVENT[:PERIOD],...\n"
        "                   performance-counter sampling (implies the cycle model);\n"
        "                   events: cycles imiss dmiss branchmp dtbmiss itbmiss\n"
        "                   jsrmp smiss issues; values[:PERIOD] starts a value-sampling\n"
        "                   run at each of its interrupts; profileme[:PERIOD] samples\n"
        "                   one fetched instruction in about PERIOD (docs/machine.md)\n"
        "  --profileme-window W\n"
        "                   pair each ProfileMe sample with a second one 1..W fetched\n"
        "                   instructions later (default 0: no pairs)\n"
        "  --profileme-truth FILE\n"
        "                   write the true path behind each ProfileMe sample's branch\n"
        "                   history, for measuring path reconstruction\n"
        "  --values-length N\n"
        "                   instructions each value-sampling run records (default %d,\n"
        "                   at most %d)\n"
        "  --values-skip N  each run first passes over a random number of instructions\n"
        "                   below N (default %d; 0: none), against the interrupts' bias\n"
        "  --values-clock cycles|instructions\n"
        "                   what the values period counts (default instructions)\n"
        "  --values-log FILE\n"
        "                   write every value-sampling record in order (docs/machine.md)\n"
        "  --pmu-seed N     seed of the random sampling periods (default 1)\n"
        "  --truth FILE     write each instruction's head-of-queue cycles and samples\n"
        "  --paths FILE     write the exact path profile of every procedure run, with\n"
        "                   cycles and misses per path (implies the cycle model)\n"
        "  --cct FILE       write the exact calling context tree, with calls, cycles\n"
        "                   and misses per context (implies the cycle model)\n"
        "  --cct-only TREE  give contexts only to the procedures that have a node in\n"
        "                   TREE (an instrumented binary's tree): the others' are\n"
        "                   their callers', before recursion is folded (docs/paths.md)\n"
        "  --collector DIR  send the samples to the cpod daemon of profile database DIR\n"
        "  --driver PATH    send the samples to a driver region at PATH, for another\n"
        "                   consumer (default: a private region drained by axp itself)\n"
        "  --driver-policy front|rr\n"
        "                   the driver's hash-table eviction policy (default front)\n"
        "  --sample-log FILE\n"
        "                   write every sample in order: CPU PID PC EVENT\n"
        "  --stacks[=DEPTH] record the calling context of every sample, up to DEPTH\n"
        "                   frames (default %d, at most %d)\n",
        AXP_DEFAULT_ROOT, (unsigned long long)(AXP_DEFAULT_MEM_LIMIT >> 20), AXP_DEFAULT_MAX_THREADS,
        AXP_VALUES_DEFAULT, AXP_VALUES_MAX, AXP_VALUES_SKIP_DEFAULT, AXP_STACK_DEPTH, AXP_STACK_DEPTH_MAX);
}

/* "--opt=VALUE" or "--opt VALUE"; NULL when argv[*i] is not --opt. */
static const char *optval(int argc, char **argv, int *i, const char *opt, bool *missing)
{
    size_t l = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, l))
        return NULL;
    if (a[l] == '=')
        return a + l + 1;
    if (a[l])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !*s || *end)
        return false;
    *out = v;
    return true;
}

/* What `axp run` was asked to do. */
typedef struct run_opts {
    axp_config cfg;
    const char *stats, *exact, *pmu, *truth, *paths, *cct;
    const char *cct_only;       /* --cct-only TREE, NULL: every procedure */
    const char *values_log;
    uint64_t values_length;     /* 0: the machine's default */
    const char *values_skip;    /* NULL: the machine's default */
    const char *values_clock;   /* NULL: the machine's default, instructions */
    const char *pm_window;      /* --profileme-window, NULL: none */
    const char *pm_truth;       /* --profileme-truth, NULL: none */
    collect_options co;
    bool policy_set, timing;
    const char *ev5[256];
    size_t nev5;
    uint64_t seed;
    unsigned stacks;            /* --stacks: frames per sample, 0 off */
    int prog;                   /* argv index of the program */
} run_opts;

/* No result file may replace the program, a file named among its
 * arguments (its input, most likely), another result file, or a file of
 * the collector's database.  Arguments that name no existing file are
 * not files of the run's and need no check. */
static bool outputs_apart(int argc, char **argv, const run_opts *o)
{
    outfile_arg outs[] = { { "--truth", o->truth }, { "--stats", o->stats }, { "--exact", o->exact },
                           { "--paths", o->paths }, { "--cct", o->cct },
                           { "--profileme-truth", o->pm_truth }, { "--sample-log", o->co.sample_log },
                           { "--values-log", o->values_log } };
    size_t nout = sizeof outs / sizeof outs[0], nin = 0;
    outfile_arg *ins = calloc((size_t)(argc - o->prog), sizeof *ins);
    if (!ins) {
        fprintf(stderr, "axp: out of memory\n");
        return false;
    }
    ins[nin++] = (outfile_arg){ "the program", argv[o->prog] };
    for (int k = o->prog + 1; k < argc; k++) {
        struct stat st;
        if (stat(argv[k], &st) == 0 && !S_ISDIR(st.st_mode))
            ins[nin++] = (outfile_arg){ "the program's argument", argv[k] };
    }
    outfile_arg db = { "the collector's database", o->co.db_dir };
    char err[1024];
    bool ok = outfile_apart(outs, nout, ins, nin, &db, 1, err, sizeof err);
    if (!ok)
        fprintf(stderr, "axp: %s\n", err);
    free(ins);
    return ok;
}

/* One option at argv[*i]: OPT_TAKEN, OPT_UNKNOWN, or the status to exit
 * with now (0 after --help or --ev5 list). */
enum { OPT_TAKEN = -1, OPT_UNKNOWN = -2 };
static int run_option(int argc, char **argv, int *i, run_opts *o, bool *missing)
{
    const char *a = argv[*i], *v;
    uint64_t n;
    if ((v = optval(argc, argv, i, "--root", missing))) {
        o->cfg.root = v;
    } else if ((v = optval(argc, argv, i, "--cpus", missing))) {
        if (!parse_u64(v, &n) || n < 1 || n > 64) {
            fprintf(stderr, "axp: --cpus: expected a number from 1 to 64, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
        o->cfg.ncpus = (int)n;
    } else if ((v = optval(argc, argv, i, "--quantum", missing))) {
        if (!parse_u64(v, &o->cfg.quantum) || o->cfg.quantum < 100) {
            fprintf(stderr, "axp: --quantum: expected a number of at least 100, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
    } else if ((v = optval(argc, argv, i, "--brk", missing))) {
        /* Where a kernel starts the heap is its choice (Linux with ASLR
         * moves it): runs of two images, one rewritten and so larger, can
         * then be given the same heap addresses. */
        char *end;
        errno = 0;
        unsigned long long at = strtoull(v, &end, 0);
        if (errno || !*v || *end || at == 0 || at % 8192 || at >= 1ull << 40) {
            fprintf(stderr, "axp: --brk: expected an address, 8 KB aligned, below 2^40, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
        o->cfg.brk_start = at;
    } else if ((v = optval(argc, argv, i, "--mem-limit", missing))) {
        if (!parse_u64(v, &n) || n < 16 || n > (1u << 30)) {
            fprintf(stderr, "axp: --mem-limit: expected megabytes, at least 16, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
        o->cfg.mem_limit = n << 20;
    } else if ((v = optval(argc, argv, i, "--max-threads", missing))) {
        if (!parse_u64(v, &n) || n < 1 || n > 65536) {
            fprintf(stderr, "axp: --max-threads: expected a number from 1 to 65536, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
        o->cfg.max_threads = (int)n;
    } else if ((v = optval(argc, argv, i, "--stats", missing))) {
        o->stats = v;
    } else if ((v = optval(argc, argv, i, "--exact", missing))) {
        o->exact = v;
    } else if ((v = optval(argc, argv, i, "--ev5", missing))) {
        if (!strcmp(v, "list")) {
            ev5_params p;
            ev5_defaults(&p);
            for (size_t k = 0; k < ev5_param_count; k++) {
                uint32_t val = 0;
                ev5_get(&p, ev5_param_table[k].name, &val);
                printf("%-26s %8u  %s\n", ev5_param_table[k].name, val, ev5_param_table[k].source);
            }
            return 0;
        }
        if (o->nev5 == sizeof o->ev5 / sizeof o->ev5[0]) {
            fprintf(stderr, "axp: too many --ev5 options\n");
            return AXP_EXIT_USAGE;
        }
        o->ev5[o->nev5++] = v;
        o->timing = true;
    } else if (!strcmp(a, "--timing")) {
        o->timing = true;
    } else if ((v = optval(argc, argv, i, "--pmu", missing))) {
        o->pmu = v;
    } else if ((v = optval(argc, argv, i, "--pmu-seed", missing))) {
        if (!parse_u64(v, &o->seed)) {
            fprintf(stderr, "axp: --pmu-seed: expected a number, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
    } else if ((v = optval(argc, argv, i, "--values-length", missing))) {
        if (!parse_u64(v, &n) || n < 1 || n > AXP_VALUES_MAX) {
            fprintf(stderr, "axp: --values-length: expected a number from 1 to %d, got '%s'\n", AXP_VALUES_MAX, v);
            return AXP_EXIT_USAGE;
        }
        o->values_length = n;
    } else if ((v = optval(argc, argv, i, "--values-skip", missing))) {
        if (!parse_u64(v, &n) || n > AXP_VALUES_MAX) {
            fprintf(stderr, "axp: --values-skip: expected a number from 0 to %d, got '%s'\n", AXP_VALUES_MAX, v);
            return AXP_EXIT_USAGE;
        }
        o->values_skip = v;
    } else if ((v = optval(argc, argv, i, "--values-clock", missing))) {
        if (strcmp(v, "cycles") && strcmp(v, "instructions")) {
            fprintf(stderr, "axp: --values-clock: expected cycles or instructions, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
        o->values_clock = v;
    } else if ((v = optval(argc, argv, i, "--profileme-window", missing))) {
        if (!parse_u64(v, &n) || n > AXP_PM_WINDOW_MAX) {
            fprintf(stderr, "axp: --profileme-window: expected a number from 0 to %d, got '%s'\n",
                    AXP_PM_WINDOW_MAX, v);
            return AXP_EXIT_USAGE;
        }
        o->pm_window = v;
    } else if ((v = optval(argc, argv, i, "--profileme-truth", missing))) {
        o->pm_truth = v;
    } else if ((v = optval(argc, argv, i, "--values-log", missing))) {
        o->values_log = v;
    } else if ((v = optval(argc, argv, i, "--truth", missing))) {
        o->truth = v;
    } else if ((v = optval(argc, argv, i, "--paths", missing))) {
        o->paths = v;
        o->timing = true;
    } else if ((v = optval(argc, argv, i, "--cct-only", missing))) {
        o->cct_only = v;
    } else if ((v = optval(argc, argv, i, "--cct", missing))) {
        o->cct = v;
        o->timing = true;
    } else if ((v = optval(argc, argv, i, "--collector", missing))) {
        o->co.db_dir = v;
    } else if ((v = optval(argc, argv, i, "--driver-policy", missing))) {
        if (!strcmp(v, "front"))
            o->co.policy = DRV_POLICY_FRONT;
        else if (!strcmp(v, "rr"))
            o->co.policy = DRV_POLICY_RR;
        else {
            fprintf(stderr, "axp: --driver-policy: expected front or rr, got '%s'\n", v);
            return AXP_EXIT_USAGE;
        }
        o->policy_set = true;
    } else if ((v = optval(argc, argv, i, "--driver", missing))) {
        o->co.driver_path = v;
    } else if ((v = optval(argc, argv, i, "--sample-log", missing))) {
        o->co.sample_log = v;
    } else if (!strcmp(a, "--stacks")) {
        o->stacks = AXP_STACK_DEPTH;
    } else if (!strncmp(a, "--stacks=", 9)) {
        if (!parse_u64(a + 9, &n) || n < 1 || n > AXP_STACK_DEPTH_MAX) {
            fprintf(stderr, "axp: --stacks: expected a depth from 1 to %d, got '%s'\n",
                    AXP_STACK_DEPTH_MAX, a + 9);
            return AXP_EXIT_USAGE;
        }
        o->stacks = (unsigned)n;
    } else if (!strcmp(a, "--strict")) {
        o->cfg.strict = true;
    } else if (!strcmp(a, "--sandbox")) {
        o->cfg.sandbox = true;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        usage(stdout);
        return 0;
    } else {
        return OPT_UNKNOWN;
    }
    return OPT_TAKEN;
}

/* The command line into o: -1 to go on and run, else the status to exit with. */
static int parse_run(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->cfg.ncpus = 1;
    o->co.policy = DRV_POLICY_FRONT;
    o->seed = 1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        bool missing = false;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        int r = run_option(argc, argv, &i, o, &missing);
        if (missing) {
            fprintf(stderr, "axp: option %s needs a value\n", a);
            return AXP_EXIT_USAGE;
        }
        if (r == OPT_UNKNOWN) {
            fprintf(stderr, "axp: unknown option '%s'\n", a);
            usage(stderr);
            return AXP_EXIT_USAGE;
        }
        if (r != OPT_TAKEN)
            return r;
    }
    if (i >= argc) {
        fprintf(stderr, "axp: no program to run\n");
        usage(stderr);
        return AXP_EXIT_USAGE;
    }
    o->prog = i;
    if (o->co.db_dir && o->co.driver_path) {
        fprintf(stderr, "axp: --collector and --driver: choose one destination for the samples\n");
        return AXP_EXIT_USAGE;
    }
    if (o->cct_only && !o->cct) {
        fprintf(stderr, "axp: --cct-only needs --cct (where to write the tree)\n");
        return AXP_EXIT_USAGE;
    }
    const char *needs = o->co.db_dir ? "--collector" : o->co.driver_path ? "--driver"
                      : o->policy_set ? "--driver-policy" : o->co.sample_log ? "--sample-log"
                      : o->values_log ? "--values-log" : o->values_length ? "--values-length"
                      : o->values_skip ? "--values-skip" : o->values_clock ? "--values-clock"
                      : o->stacks ? "--stacks" : o->pm_window ? "--profileme-window"
                      : o->pm_truth ? "--profileme-truth" : NULL;
    if (needs && !o->pmu) {
        fprintf(stderr, "axp: %s needs --pmu (which events to sample)\n", needs);
        return AXP_EXIT_USAGE;
    }
    if (!outputs_apart(argc, argv, o))
        return AXP_EXIT_USAGE;
    o->cfg.exact = o->exact != NULL;
    o->co.stacks = o->stacks != 0;
    return -1;
}

/* The machine the options describe, or NULL (said why). */
static axp_machine *make_machine(run_opts *o)
{
    char err[1024];
    axp_machine *m = axp_new(&o->cfg, err, sizeof err);
    if (!m) {
        fprintf(stderr, "axp: %s\n", err);
        return NULL;
    }
    if ((o->timing || o->pmu || o->truth) && axp_set_timing(m, o->ev5, o->nev5, err, sizeof err)) {
        fprintf(stderr, "axp: --ev5: %s\n", err);
        axp_free(m);
        return NULL;
    }
    if (o->pmu && axp_set_pmu(m, o->pmu, o->seed, err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        axp_free(m);
        return NULL;
    }
    if (o->values_length && axp_set_values_length(m, o->values_length, err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        axp_free(m);
        return NULL;
    }
    if (o->stacks && axp_set_stacks(m, o->stacks, err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        axp_free(m);
        return NULL;
    }
    if (o->values_skip && axp_set_values_skip(m, strtoull(o->values_skip, NULL, 10), err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        axp_free(m);
        return NULL;
    }
    if (o->values_clock && axp_set_values_clock(m, !strcmp(o->values_clock, "instructions"))) {
        fprintf(stderr, "axp: out of memory\n");
        axp_free(m);
        return NULL;
    }
    if (o->pm_window && axp_set_profileme_window(m, strtoull(o->pm_window, NULL, 10), err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        axp_free(m);
        return NULL;
    }
    if (o->pm_truth && !axp_pmu_profileme(m)) {
        fprintf(stderr, "axp: --profileme-truth needs profileme among the --pmu events\n");
        axp_free(m);
        return NULL;
    }
    if (o->truth)
        axp_record_truth(m);
    return m;
}

/* The result files: temporaries made before the run, so a bad path fails
 * first, and renamed into place only when written whole (common/outfile.h):
 * a full disk or a killed run never leaves an empty or truncated file. */
enum { R_TRUTH, R_STATS, R_EXACT, R_PATHS, R_CCT, R_PMTRUTH, R_COUNT };
typedef struct results { outfile of[R_COUNT]; bool open[R_COUNT]; } results;
static const char *const result_opt[R_COUNT] = { "--truth", "--stats", "--exact", "--paths", "--cct",
                                                  "--profileme-truth" };

static void results_close(results *r)
{
    for (int k = 0; k < R_COUNT; k++)
        if (r->open[k])
            outfile_abort(&r->of[k]);
    memset(r, 0, sizeof *r);
}

static bool results_open(const run_opts *o, results *r)
{
    memset(r, 0, sizeof *r);
    const char *path[R_COUNT] = { o->truth, o->stats, o->exact, o->paths, o->cct, o->pm_truth };
    char err[512];
    for (int k = 0; k < R_COUNT; k++) {
        if (!path[k])
            continue;
        if (!outfile_open_stream(&r->of[k], path[k], 0666, err, sizeof err)) {
            fprintf(stderr, "axp: %s %s\n", result_opt[k], err);
            results_close(r);
            return false;
        }
        r->open[k] = true;
    }
    return true;
}

/* Write the result files; status, or 1 when it was 0 and a file could not
 * be written (then no file is left in its place). */
static int write_result(int k, axp_machine *m, axp_paths *ap, const pm_truth *pt, FILE *f)
{
    switch (k) {
    case R_PMTRUTH: return pm_truth_write(pt, f);
    case R_TRUTH: return axp_write_truth(m, f);
    case R_STATS: return axp_write_stats(m, f);
    case R_EXACT: return axp_write_exact(m, f);
    case R_PATHS: return axp_paths_write_paths(ap, f);
    default: return axp_paths_write_cct(ap, f);
    }
}

static int results_write(axp_machine *m, axp_paths *ap, const pm_truth *pt, results *r, int status)
{
    /* --stats first, as before: the cheapest to lose is written last. */
    static const int order[R_COUNT] = { R_STATS, R_EXACT, R_PATHS, R_CCT, R_TRUTH, R_PMTRUTH };
    char err[512];
    for (int i = 0; i < R_COUNT; i++) {
        int k = order[i];
        if (!r->open[k])
            continue;
        r->open[k] = false;
        if (write_result(k, m, ap, pt, r->of[k].fp) != 0) {
            fprintf(stderr, "axp: %s %s: cannot write: %s\n", result_opt[k], r->of[k].path, strerror(errno));
            outfile_abort(&r->of[k]);
            status = status ? status : 1;
        } else if (!outfile_commit(&r->of[k], err, sizeof err)) {
            fprintf(stderr, "axp: %s %s\n", result_opt[k], err);
            status = status ? status : 1;
        }
    }
    return status;
}

static int cmd_run(int argc, char **argv)
{
    run_opts o;
    int rc = parse_run(argc, argv, &o);
    if (rc >= 0)
        return rc;
    axp_machine *m = make_machine(&o);
    if (!m)
        return AXP_EXIT_USAGE;
    results res;
    if (!results_open(&o, &res)) {
        axp_free(m);
        return AXP_EXIT_USAGE;
    }
    const char *prog = argv[o.prog];
    char err[1024];
    /* the samples' destination, before the program's images load */
    collect *col = NULL;
    o.co.ncpus = (unsigned)o.cfg.ncpus;
    o.co.program = prog;
    o.co.values_log = o.values_log;
    if (o.pmu && !(col = collect_start(m, &o.co, err, sizeof err))) {
        fprintf(stderr, "axp: %s\n", err);
        results_close(&res);
        axp_free(m);
        return AXP_EXIT_USAGE;
    }
    axp_paths *ap = NULL;
    if ((o.paths || o.cct) && !(ap = axp_paths_start(m, o.paths != NULL, o.cct != NULL, err, sizeof err))) {
        fprintf(stderr, "axp: %s\n", err);
        results_close(&res);
        collect_close(col);
        axp_free(m);
        return AXP_EXIT_INTERNAL;
    }
    if (ap && o.cct_only && axp_paths_cct_only(ap, o.cct_only, err, sizeof err)) {
        fprintf(stderr, "axp: --cct-only %s\n", err);
        results_close(&res);
        axp_paths_free(ap);
        collect_close(col);
        axp_free(m);
        return AXP_EXIT_USAGE;
    }
    pm_truth *pt = NULL;
    if (o.pm_truth && !(pt = pm_truth_start(m))) {
        fprintf(stderr, "axp: out of memory\n");
        results_close(&res);
        axp_paths_free(ap);
        collect_close(col);
        axp_free(m);
        return AXP_EXIT_INTERNAL;
    }
    if (axp_spawn(m, prog, argv + o.prog, environ, err, sizeof err) != 0) {
        fprintf(stderr, "axp: %s\n", err);
        results_close(&res);
        pm_truth_free(pt);
        axp_paths_free(ap);
        collect_close(col);
        axp_free(m);
        return access(prog, F_OK) ? AXP_EXIT_NOTFOUND : AXP_EXIT_NOEXEC;
    }
    axp_forward_host_signals();
    int status = axp_run(m);
    fflush(stdout);
    if (col && collect_finish(col, err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        status = status ? status : 1;
    }
    if (ap && axp_paths_finish(ap, err, sizeof err)) {
        /* incomplete counts must not pass for exact ones */
        fprintf(stderr, "axp: --paths/--cct: %s\n", err);
        for (int k = R_PATHS; k <= R_CCT; k++)
            if (res.open[k]) {
                outfile_abort(&res.of[k]);
                res.open[k] = false;
            }
        status = status ? status : 1;
    }
    status = results_write(m, ap, pt, &res, status);
    axp_paths_free(ap);
    collect_close(col);
    axp_free(m);
    pm_truth_free(pt);
    return status;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);    /* a guest's broken pipe is its own EPIPE */
    axp_catch_internal_faults(); /* axp's own crash must not look like the guest's */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "run"))
        return cmd_run(argc - 1, argv + 1);
    fprintf(stderr, "axp: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
