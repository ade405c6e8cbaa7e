/*
 * tests/driver/driver_bench.c: the two eviction policies side by side on
 * the same synthetic sample streams (tests/driver/stream.h).
 *
 *   driver_bench [--samples N] [--reps N] [--shape program|procs|tail|all]
 *
 * Per policy and stream: hash miss rate, aggregation (samples per entry the
 * daemon receives, the final table drain included), time per drv_sample
 * call, the daemon stand-in's time per entry (merging into a hash table by
 * key, roughly what cpod does before mapping PCs to images), and their sum
 * per sample, which is the "overall cost" DCPI's section 5.4 compares
 * policies by.  Streams are generated before timing; times are medians of
 * --reps runs alternating the policies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/driver.h"
#include "tests/driver/keymap.h"
#include "tests/driver/stream.h"

typedef struct sample {
    uint64_t pc;
    uint32_t pid;
    uint32_t event;
} sample;

typedef struct result {
    double miss, aggregation, ns_sample, ns_entry;
} result;

/* CPU time of this thread: on a shared machine, time spent preempted would
 * otherwise land on whichever chunk of samples it interrupted. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct daemon_sim {
    keymap km;
    uint64_t entries;
} daemon_sim;

static int merge(void *ctx, const drv_batch *b)
{
    daemon_sim *d = ctx;
    for (size_t i = 0; i < b->n; i++)
        km_get(&d->km, b->e[i].pc, b->e[i].pid_event)->a += b->e[i].count;
    d->entries += b->n;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run(const char *path, const sample *s, size_t n, drv_policy pol, result *r)
{
    unlink(path);
    drv_params p = { .ncpus = 1, .policy = pol };
    drv_error e;
    drv *d = drv_open(path, &p, &e);
    if (!d) {
        fprintf(stderr, "driver_bench: %s\n", e.msg);
        return -1;
    }
    drvc *c = drvc_open(path, 0, &e);
    if (!c) {
        fprintf(stderr, "driver_bench: %s\n", e.msg);
        return -1;
    }
    daemon_sim dm = { 0 };
    drvc_sink sink = { merge, NULL, &dm };
    uint64_t prod = 0, cons = 0;
    /* 2048 samples evict at most 2048 entries: with the buffers emptied
     * between chunks the sample path never finds both full */
    for (size_t i = 0; i < n; i += 2048) {
        size_t end = i + 2048 < n ? i + 2048 : n;
        uint64_t t0 = now_ns();
        for (size_t j = i; j < end; j++)
            drv_sample(d, 0, s[j].pid, s[j].pc, s[j].event);
        uint64_t t1 = now_ns();
        if (drvc_collect(c, 0, &sink, &e) < 0) {
            fprintf(stderr, "driver_bench: %s\n", e.msg);
            return -1;
        }
        cons += now_ns() - t1;
        prod += t1 - t0;
    }
    drv_counters k;
    drv_counters_get(d, 0, &k);
    drv_close(d);
    uint64_t t0 = now_ns();
    if (drvc_salvage(c, &sink, &e) != DRV_OK) {   /* the last drain: the table */
        fprintf(stderr, "driver_bench: %s\n", e.msg);
        return -1;
    }
    cons += now_ns() - t0;
    drvc_close(c);
    unlink(path);
    if (k.samples != n || k.full_waits) {
        fprintf(stderr, "driver_bench: %llu samples recorded of %zu, %llu full-buffer waits\n",
                (unsigned long long)k.samples, n, (unsigned long long)k.full_waits);
        return -1;
    }
    r->miss = (double)k.misses / (double)n;
    r->aggregation = (double)n / (double)dm.entries;
    r->ns_sample = (double)prod / (double)n;
    r->ns_entry = (double)cons / (double)dm.entries;
    km_free(&dm.km);
    return 0;
}

static void bench_shape(const char *name, const stream_shape *sh, size_t n, int reps, const char *path)
{
    stream_cdf hot, flat;
    sample *s = malloc(n * sizeof *s);
    if (!s || stream_cdf_init(&hot, sh->blocks, sh->zipf_s) || stream_cdf_init(&flat, sh->blocks, sh->imiss_zipf)) {
        fprintf(stderr, "driver_bench: out of memory\n");
        exit(1);
    }
    stream st;
    stream_init(&st, sh, &hot, &flat, 42, 10000);
    keymap keys = { 0 };
    for (size_t i = 0; i < n; i++) {
        unsigned ev;
        stream_next(&st, &s[i].pid, &s[i].pc, &ev);
        s[i].event = ev;
        km_get(&keys, s[i].pc, s[i].pid << 8 | ev);
    }
    printf("%s: %zu samples, %zu distinct (pid, pc, event); %u blocks, Zipf %.2f, phase %u, "
           "%u processes + %.1f%% in short ones of %u samples, %.0f%% IMISS\n",
           name, n, keys.n, sh->blocks, sh->zipf_s, sh->phase_len, sh->pids, 100 * sh->short_frac,
           sh->short_len, 100 * sh->imiss_frac);
    km_free(&keys);

    result res[2][16];
    for (int rep = 0; rep < reps; rep++)
        for (int pol = 0; pol < 2; pol++)
            if (run(path, s, n, pol == 0 ? DRV_POLICY_RR : DRV_POLICY_FRONT, &res[pol][rep]) != 0)
                exit(1);
    result med[2];
    for (int pol = 0; pol < 2; pol++) {
        double a[16], b[16];
        for (int rep = 0; rep < reps; rep++) {
            a[rep] = res[pol][rep].ns_sample;
            b[rep] = res[pol][rep].ns_entry;
        }
        qsort(a, (size_t)reps, sizeof *a, cmp_double);
        qsort(b, (size_t)reps, sizeof *b, cmp_double);
        med[pol] = res[pol][0];
        med[pol].ns_sample = a[reps / 2];
        med[pol].ns_entry = b[reps / 2];
    }
    printf("  %-8s %8s %12s %11s %16s %16s\n", "policy", "miss", "aggregation", "ns/sample",
           "daemon ns/entry", "total ns/sample");
    double total[2];
    for (int pol = 0; pol < 2; pol++) {
        result *r = &med[pol];
        total[pol] = r->ns_sample + r->ns_entry / r->aggregation;
        printf("  %-8s %7.2f%% %12.1f %11.2f %16.1f %16.2f\n", pol ? "front" : "rr", 100 * r->miss,
               r->aggregation, r->ns_sample, r->ns_entry, total[pol]);
    }
    printf("  front/rr: miss x%.3f, aggregation x%.3f, ns/sample x%.3f, total x%.3f\n",
           med[1].miss / med[0].miss, med[1].aggregation / med[0].aggregation,
           med[1].ns_sample / med[0].ns_sample, total[1] / total[0]);
    free(s);
    free(hot.c);
    free(flat.c);
}

int main(int argc, char **argv)
{
    size_t n = 4000000;
    int reps = 5;
    const char *shape = "all";
    stream_shape custom = stream_program_shape;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--samples"))
            n = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--reps"))
            reps = atoi(v);
        else if (!strcmp(k, "--shape"))
            shape = v;
        else if (!strcmp(k, "--blocks") && (shape = "custom"))
            custom.blocks = (unsigned)atoi(v);
        else if (!strcmp(k, "--zipf") && (shape = "custom"))
            custom.zipf_s = atof(v);
        else if (!strcmp(k, "--phase") && (shape = "custom"))
            custom.phase_len = (unsigned)atoi(v);
        else if (!strcmp(k, "--pids") && (shape = "custom"))
            custom.pids = (unsigned)atoi(v);
        else if (!strcmp(k, "--short") && (shape = "custom"))
            custom.short_frac = atof(v);
        else if (!strcmp(k, "--short-len") && (shape = "custom"))
            custom.short_len = (unsigned)atoi(v);
        else if (!strcmp(k, "--imiss") && (shape = "custom"))
            custom.imiss_frac = atof(v);
        else if (!strcmp(k, "--imiss-zipf") && (shape = "custom"))
            custom.imiss_zipf = atof(v);
        else {
            fprintf(stderr, "usage: driver_bench [--samples N] [--reps N] [--shape program|procs|tail|all]\n");
            return 2;
        }
    }
    if (n < 1 || reps < 1 || reps > 16) {
        fprintf(stderr, "driver_bench: --samples >= 1, --reps 1..16\n");
        return 2;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/cpo-driver-bench.%d",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
    printf("1 CPU, 16384-entry hash table (4-way), two 8192-entry overflow buffers; "
           "times: median of %d runs\n", reps);
    if (!strcmp(shape, "custom"))
        bench_shape("custom", &custom, n, reps, path);
    if (!strcmp(shape, "program") || !strcmp(shape, "all"))
        bench_shape("program", &stream_program_shape, n, reps, path);
    if (!strcmp(shape, "procs") || !strcmp(shape, "all"))
        bench_shape("procs", &stream_procs_shape, n, reps, path);
    if (!strcmp(shape, "tail") || !strcmp(shape, "all"))
        bench_shape("tail", &stream_tail_shape, n, reps, path);
    return 0;
}
