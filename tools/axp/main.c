/* axp: run Alpha Linux programs on the simulated machine. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alpha/ev5.h"
#include "machine/machine.h"
#include "tools/axp/collect.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: axp run [OPTIONS] [--] PROGRAM [ARGS...]\n"
        "\n"
        "Runs an Alpha Linux executable (static or dynamic) on the simulated\n"
        "Alpha 21164 machine and exits with its status (128+N if signal N\n"
        "killed it).\n"
        "\n"
        "options:\n"
        "  --root DIR       Alpha root overlaid on the host's files (default %s)\n"
        "  --cpus N         simulated CPUs (default 1)\n"
        "  --stats=FILE     write run statistics as JSON\n"
        "  --exact FILE     write exact execution counts (see docs/machine.md)\n"
        "  --strict         stop at the first unsupported system call\n"
        "  --quantum N      instructions per CPU per scheduling round (default 20000)\n"
        "  --ev5 KEY=VALUE  run the EV5 cycle model, with this parameter changed\n"
        "                   (repeatable; --ev5 list prints them all)\n"
        "  --timing         run the EV5 cycle model with the default parameters\n"
        "  --pmu EVENT[:PERIOD],...\n"
        "                   performance-counter sampling (implies the cycle model);\n"
        "                   events: cycles imiss dmiss branchmp dtbmiss itbmiss\n"
        "                   jsrmp smiss issues\n"
        "  --pmu-seed N     seed of the random sampling periods (default 1)\n"
        "  --truth FILE     write each instruction's head-of-queue cycles and samples\n"
        "  --collector DIR  send the samples to the cpod daemon of profile database DIR\n"
        "  --driver PATH    send the samples to a driver region at PATH, for another\n"
        "                   consumer (default: a private region drained by axp itself)\n"
        "  --driver-policy front|rr\n"
        "                   the driver's hash-table eviction policy (default front)\n"
        "  --sample-log FILE\n"
        "                   write every sample in order: CPU PID PC EVENT\n",
        AXP_DEFAULT_ROOT);
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

/* Leave `axp run` before the program has run: close what is open. */
static int abandon(axp_machine *m, collect *col, FILE *tf, FILE *sf, FILE *xf, int rc)
{
    if (tf)
        fclose(tf);
    if (sf)
        fclose(sf);
    if (xf)
        fclose(xf);
    collect_close(col);
    axp_free(m);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    axp_config cfg = { .ncpus = 1 };
    const char *stats = NULL, *exact = NULL, *pmu = NULL, *truth = NULL;
    collect_options co = { .policy = DRV_POLICY_FRONT };
    bool policy_set = false;
    const char *ev5[256];
    size_t nev5 = 0;
    bool timing = false;
    uint64_t seed = 1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if ((v = optval(argc, argv, &i, "--root", &missing))) {
            cfg.root = v;
        } else if ((v = optval(argc, argv, &i, "--cpus", &missing))) {
            uint64_t n;
            if (!parse_u64(v, &n) || n < 1 || n > 64) {
                fprintf(stderr, "axp: --cpus: expected a number from 1 to 64, got '%s'\n", v);
                return 2;
            }
            cfg.ncpus = (int)n;
        } else if ((v = optval(argc, argv, &i, "--quantum", &missing))) {
            if (!parse_u64(v, &cfg.quantum) || cfg.quantum < 100) {
                fprintf(stderr, "axp: --quantum: expected a number of at least 100, got '%s'\n", v);
                return 2;
            }
        } else if ((v = optval(argc, argv, &i, "--stats", &missing))) {
            stats = v;
        } else if ((v = optval(argc, argv, &i, "--exact", &missing))) {
            exact = v;
        } else if ((v = optval(argc, argv, &i, "--ev5", &missing))) {
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
            if (nev5 == sizeof ev5 / sizeof ev5[0]) {
                fprintf(stderr, "axp: too many --ev5 options\n");
                return 2;
            }
            ev5[nev5++] = v;
            timing = true;
        } else if (!strcmp(a, "--timing")) {
            timing = true;
        } else if ((v = optval(argc, argv, &i, "--pmu", &missing))) {
            pmu = v;
        } else if ((v = optval(argc, argv, &i, "--pmu-seed", &missing))) {
            if (!parse_u64(v, &seed)) {
                fprintf(stderr, "axp: --pmu-seed: expected a number, got '%s'\n", v);
                return 2;
            }
        } else if ((v = optval(argc, argv, &i, "--truth", &missing))) {
            truth = v;
        } else if ((v = optval(argc, argv, &i, "--collector", &missing))) {
            co.db_dir = v;
        } else if ((v = optval(argc, argv, &i, "--driver-policy", &missing))) {
            if (!strcmp(v, "front"))
                co.policy = DRV_POLICY_FRONT;
            else if (!strcmp(v, "rr"))
                co.policy = DRV_POLICY_RR;
            else {
                fprintf(stderr, "axp: --driver-policy: expected front or rr, got '%s'\n", v);
                return 2;
            }
            policy_set = true;
        } else if ((v = optval(argc, argv, &i, "--driver", &missing))) {
            co.driver_path = v;
        } else if ((v = optval(argc, argv, &i, "--sample-log", &missing))) {
            co.sample_log = v;
        } else if (!strcmp(a, "--strict")) {
            cfg.strict = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            if (missing)
                fprintf(stderr, "axp: option %s needs a value\n", a);
            else
                fprintf(stderr, "axp: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (missing) {
            fprintf(stderr, "axp: option %s needs a value\n", a);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "axp: no program to run\n");
        usage(stderr);
        return 2;
    }
    if (co.db_dir && co.driver_path) {
        fprintf(stderr, "axp: --collector and --driver: choose one destination for the samples\n");
        return 2;
    }
    const char *needs = co.db_dir ? "--collector" : co.driver_path ? "--driver"
                      : policy_set ? "--driver-policy" : co.sample_log ? "--sample-log" : NULL;
    if (needs && !pmu) {
        fprintf(stderr, "axp: %s needs --pmu (which events to sample)\n", needs);
        return 2;
    }
    cfg.exact = exact != NULL;
    char err[1024];
    axp_machine *m = axp_new(&cfg, err, sizeof err);
    if (!m) {
        fprintf(stderr, "axp: %s\n", err);
        return 2;
    }
    if ((timing || pmu || truth) && axp_set_timing(m, ev5, nev5, err, sizeof err)) {
        fprintf(stderr, "axp: --ev5: %s\n", err);
        axp_free(m);
        return 2;
    }
    if (pmu && axp_set_pmu(m, pmu, seed, err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        axp_free(m);
        return 2;
    }
    if (truth)
        axp_record_truth(m);
    /* open the result files first: a bad path should fail before the run */
    FILE *sf = NULL, *xf = NULL, *tf = NULL;
    if (truth && !(tf = fopen(truth, "w"))) {
        fprintf(stderr, "axp: --truth %s: %s\n", truth, strerror(errno));
        return abandon(m, NULL, tf, sf, xf, 2);
    }
    if (stats && !(sf = fopen(stats, "w"))) {
        fprintf(stderr, "axp: --stats %s: %s\n", stats, strerror(errno));
        return abandon(m, NULL, tf, sf, xf, 2);
    }
    if (exact && !(xf = fopen(exact, "w"))) {
        fprintf(stderr, "axp: --exact %s: %s\n", exact, strerror(errno));
        return abandon(m, NULL, tf, sf, xf, 2);
    }
    const char *prog = argv[i];
    /* the samples' destination, before the program's images load */
    collect *col = NULL;
    co.ncpus = (unsigned)cfg.ncpus;
    co.program = prog;
    if (pmu && !(col = collect_start(m, &co, err, sizeof err))) {
        fprintf(stderr, "axp: %s\n", err);
        return abandon(m, NULL, tf, sf, xf, 2);
    }
    if (axp_spawn(m, prog, argv + i, environ, err, sizeof err) != 0) {
        fprintf(stderr, "axp: %s\n", err);
        return abandon(m, col, tf, sf, xf, access(prog, F_OK) ? 127 : 126);
    }
    axp_forward_host_signals();
    int status = axp_run(m);
    fflush(stdout);
    if (col && collect_finish(col, err, sizeof err)) {
        fprintf(stderr, "axp: %s\n", err);
        status = status ? status : 1;
    }
    if (sf) {
        if (axp_write_stats(m, sf) || fclose(sf)) {
            fprintf(stderr, "axp: --stats %s: %s\n", stats, strerror(errno));
            status = status ? status : 1;
        }
    }
    if (xf) {
        if (axp_write_exact(m, xf) || fclose(xf)) {
            fprintf(stderr, "axp: --exact %s: %s\n", exact, strerror(errno));
            status = status ? status : 1;
        }
    }
    if (tf) {
        if (axp_write_truth(m, tf) || fclose(tf)) {
            fprintf(stderr, "axp: --truth %s: %s\n", truth, strerror(errno));
            status = status ? status : 1;
        }
    }
    collect_close(col);
    axp_free(m);
    return status;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);    /* a guest's broken pipe is its own EPIPE */
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
