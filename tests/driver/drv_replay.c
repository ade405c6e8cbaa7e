/*
 * tests/driver/drv_replay.c: a real machine's sample stream, replayed
 * through the driver under both eviction policies.
 *
 *   drv_replay LOG [--reps N] [--dir DIR]
 *
 * LOG is what `axp run --pmu ... --sample-log LOG` wrote: every sample in
 * the order the machine took it ("CPU PID PC EVENT").  Per policy it
 * prints the hash miss rate, the aggregation (samples per entry reaching
 * the consumer, the final table flush included: the same figure as axp's
 * --stats reports for its private region) and the CPU time per drv_sample
 * call (this thread's CPU time, median of N replays alternating the
 * policies, each into warm tables emptied by a flush; the consumer's
 * draining is not timed).  Replayed in a tight loop, the tables stay in
 * the host's caches, so the time is a lower bound of what a sample costs
 * inside the machine, where the simulator runs between samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/driver.h"

typedef struct sample {
    uint64_t pc;
    uint32_t pid;
    uint16_t cpu, event;
} sample;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "drv_replay: %s: %s\n", what, msg);
    exit(1);
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int discard(void *ctx, const drv_batch *b)
{
    *(uint64_t *)ctx += b->n;
    return 0;
}

static sample *read_log(const char *path, size_t *n, unsigned *ncpus)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, strerror(errno));
    size_t cap = 1 << 16, k = 0, line = 0;
    sample *v = malloc(cap * sizeof *v);
    char buf[256];
    *ncpus = 1;
    while (v && fgets(buf, sizeof buf, f)) {
        line++;
        if (buf[0] == '#')
            continue;
        unsigned cpu, pid, ev;
        unsigned long long pc;
        if (sscanf(buf, "%u %u %llx %u", &cpu, &pid, &pc, &ev) != 4 || cpu >= DRV_MAX_CPUS ||
            pid > DRV_MAX_PID || ev > DRV_MAX_EVENT) {
            char msg[64];
            snprintf(msg, sizeof msg, "line %zu: not CPU PID PC EVENT", line);
            die(path, msg);
        }
        if (k == cap) {
            cap *= 2;
            sample *nv = realloc(v, cap * sizeof *v);
            if (!nv)
                free(v);
            v = nv;
            if (!v)
                break;
        }
        v[k++] = (sample){ pc, pid, (uint16_t)cpu, (uint16_t)ev };
        if (cpu + 1 > *ncpus)
            *ncpus = cpu + 1;
    }
    if (!v)
        die(path, "out of memory");
    fclose(f);
    *n = k;
    return v;
}

typedef struct run {
    drv *d;
    drvc *c;
    uint64_t taken;             /* entries the consumer received */
    double ns[64];
    int nns;
    drv_counters first;         /* after the warm-up replay */
} run;

/* One replay: every sample in order; the consumer empties both buffers
 * when the producer finds them full (stall mode), off the clock; then a
 * flush moves the tables out, so the next replay starts from empty
 * tables whose pages are already mapped. */
static void replay(run *r, const sample *v, size_t n, unsigned ncpus, bool timed)
{
    drvc_sink s = { discard, NULL, &r->taken };
    drv_error e;
    uint64_t spent = 0, t0 = cpu_ns();
    for (size_t i = 0; i < n; i++) {
        int rc = drv_sample(r->d, v[i].cpu, v[i].pid, v[i].pc, v[i].event);
        if (rc == DRV_FULL) {
            spent += cpu_ns() - t0;
            if (drvc_collect(r->c, 0, &s, &e) < 0)
                die("collect", e.msg);
            t0 = cpu_ns();
            rc = drv_sample(r->d, v[i].cpu, v[i].pid, v[i].pc, v[i].event);
        }
        if (rc != DRV_OK)
            die("drv_sample", drv_strerror(rc));
    }
    spent += cpu_ns() - t0;
    if (timed && r->nns < 64)
        r->ns[r->nns++] = (double)spent / (double)n;
    int f = drvc_flush(r->c, 0, &s, &e);   /* pending until answered below */
    if (f != DRV_OK && f != DRV_ETIMEDOUT)
        die("flush", e.msg);
    for (int busy = 1; busy;) {
        busy = 0;
        for (unsigned cpu = 0; cpu < ncpus; cpu++)
            busy |= drv_poll(r->d, cpu) == DRV_FULL;
        if (drvc_collect(r->c, 0, &s, &e) < 0)
            die("collect", e.msg);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: drv_replay LOG [--reps N] [--dir DIR]\n");
        return 2;
    }
    int reps = 11;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > 64)
                die("--reps", "1..64");
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else {
            die(argv[i], "unknown option");
        }
    }
    size_t n;
    unsigned ncpus;
    sample *v = read_log(argv[1], &n, &ncpus);
    if (!n)
        die(argv[1], "no samples");

    static const char *const names[2] = { "front", "rr" };
    run r[2] = { { 0 } };
    char path[2][4096];
    for (int p = 0; p < 2; p++) {
        snprintf(path[p], sizeof path[p], "%s/drv-replay-%d-%s", dir, (int)getpid(), names[p]);
        drv_params prm = { .ncpus = ncpus, .policy = p ? DRV_POLICY_RR : DRV_POLICY_FRONT,
                           .full_mode = DRV_FULL_STALL };
        drv_error e;
        if (!(r[p].d = drv_open(path[p], &prm, &e)) || !(r[p].c = drvc_open(path[p], 0, &e))) {
            unlink(path[p]);
            die(path[p], e.msg);
        }
        unlink(path[p]);
        /* the warm-up replay gives the miss and aggregation figures: they
         * are exact and the same in every replay */
        replay(&r[p], v, n, ncpus, false);
        drv_counters_get(r[p].d, -1, &r[p].first);
    }
    for (int k = 0; k < reps; k++)
        for (int p = 0; p < 2; p++)
            replay(&r[(k + p) & 1], v, n, ncpus, true);

    printf("%zu samples on %u CPUs, %d timed replays per policy\n", n, ncpus, reps);
    printf("%-6s %8s %12s %12s\n", "policy", "miss", "aggregation", "ns/sample");
    double med[2], agg[2];
    for (int p = 0; p < 2; p++) {
        const drv_counters *c = &r[p].first;
        qsort(r[p].ns, (size_t)r[p].nns, sizeof r[p].ns[0], cmp_double);
        med[p] = r[p].ns[r[p].nns / 2];
        agg[p] = c->overflow_entries ? (double)c->samples / (double)c->overflow_entries : 0;
        printf("%-6s %7.2f%% %12.2f %12.1f\n", names[p],
               c->samples ? 100.0 * (double)c->misses / (double)c->samples : 0.0, agg[p], med[p]);
        drvc_close(r[p].c);
        drv_close(r[p].d);
    }
    printf("front/rr: aggregation x%.2f, ns/sample x%.2f\n", agg[1] ? agg[0] / agg[1] : 0.0,
           med[1] ? med[0] / med[1] : 0.0);
    free(v);
    return 0;
}
