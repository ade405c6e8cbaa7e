/*
 * tests/driver/driver_stress.c: conservation under concurrency.
 *
 *   driver_stress produce REGION OUT [options]   one thread per CPU pushes a
 *       deterministic skewed stream, counting per key what it produced and
 *       what the driver dropped; posts fork/exec/load/exit notices
 *   driver_stress consume REGION OUT [options]   a separate process: drains
 *       buffers, requests flushes at random moments, follows the notices,
 *       and once every process has exited, takes what is left
 *   driver_stress compare PRODUCED CONSUMED      exact per-key check
 *
 * Options: --policy rr|front  --full drop|stall  --cpus N  --samples N (per
 * CPU)  --rate N (samples/s per CPU, 0: flat out)  --table N  --buffer N
 * --final flush|exit (how the run ends: a last flush answered by a live
 * producer, or the producer leaving and the consumer salvaging)  --seed N.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/driver.h"
#include "tests/driver/keymap.h"
#include "tests/driver/stream.h"

typedef struct opts {
    const char *region, *out;
    drv_policy policy;
    drv_full_mode full;
    unsigned cpus, table, buffer;
    uint64_t samples, rate, seed;
    int final_flush;
} opts;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "driver_stress: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    nanosleep(&ts, NULL);
}

static void parse(opts *o, int argc, char **argv)
{
    *o = (opts){ .policy = DRV_POLICY_FRONT, .full = DRV_FULL_STALL, .cpus = 4,
                 .samples = 1000000, .rate = 1000000, .seed = 1, .final_flush = 1 };
    o->region = argv[2];
    o->out = argv[3];
    for (int i = 4; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            die("option %s needs a value", k);
        if (!strcmp(k, "--policy")) {
            if (!strcmp(v, "rr")) o->policy = DRV_POLICY_RR;
            else if (!strcmp(v, "front")) o->policy = DRV_POLICY_FRONT;
            else die("--policy: rr or front, not '%s'", v);
        } else if (!strcmp(k, "--full")) {
            if (!strcmp(v, "drop")) o->full = DRV_FULL_DROP;
            else if (!strcmp(v, "stall")) o->full = DRV_FULL_STALL;
            else die("--full: drop or stall, not '%s'", v);
        } else if (!strcmp(k, "--final")) {
            if (!strcmp(v, "flush")) o->final_flush = 1;
            else if (!strcmp(v, "exit")) o->final_flush = 0;
            else die("--final: flush or exit, not '%s'", v);
        } else {
            char *end;
            unsigned long long n = strtoull(v, &end, 0);
            if (*end || !*v)
                die("not a number: '%s'", v);
            if (!strcmp(k, "--cpus")) o->cpus = (unsigned)n;
            else if (!strcmp(k, "--samples")) o->samples = n;
            else if (!strcmp(k, "--rate")) o->rate = n;
            else if (!strcmp(k, "--table")) o->table = (unsigned)n;
            else if (!strcmp(k, "--buffer")) o->buffer = (unsigned)n;
            else if (!strcmp(k, "--seed")) o->seed = n;
            else die("unknown option %s", k);
        }
    }
}

/* ---- producer ------------------------------------------------------------- */

typedef struct worker {
    pthread_t th;
    drv *d;
    const opts *o;
    unsigned cpu;
    const stream_cdf *hot, *flat;
    keymap km;               /* a: produced, b: dropped */
    int failed;
} worker;

static void post_start(drv *d, uint32_t ppid, uint32_t pid)
{
    static const uint8_t bid_exec[20] = { 0xc0, 0xde, 1 }, bid_lib[20] = { 0x11, 0xb, 2 };
    if (drv_notice_fork(d, ppid, pid) != DRV_OK || drv_notice_exec(d, pid) != DRV_OK ||
        drv_notice_load(d, pid, STREAM_EXEC, 0x1000000, 0, "/bin/synthetic", bid_exec, 20) != DRV_OK ||
        drv_notice_load(d, pid, STREAM_LIB, 0x1000000, 0, "/lib/libsynthetic.so", bid_lib, 20) != DRV_OK)
        die("%s", "cannot post a notice (ring full?)");
}

static void *produce_cpu(void *arg)
{
    worker *w = arg;
    const opts *o = w->o;
    stream s;
    stream_init(&s, &stream_tail_shape, w->hot, w->flat, o->seed * 1000 + w->cpu,
                1000000 + w->cpu * 100000);
    uint32_t short_seen = 0;
    uint64_t t0 = now_ns();
    for (uint64_t i = 0; i < o->samples; i++) {
        uint32_t pid;
        uint64_t pc;
        unsigned ev;
        stream_next(&s, &pid, &pc, &ev);
        if (s.short_pid != short_seen) {   /* a short-lived process starts */
            if (short_seen)
                drv_notice_exit(w->d, short_seen, 0);
            post_start(w->d, STREAM_PID0, s.short_pid);
            short_seen = s.short_pid;
        }
        int rc;
        while ((rc = drv_sample(w->d, w->cpu, pid, pc, ev)) == DRV_FULL)
            if (drv_wait(w->d, w->cpu, 20000) != DRV_OK) {
                fprintf(stderr, "driver_stress: cpu %u: no overflow space for 20 s\n", w->cpu);
                w->failed = 1;
                return NULL;
            }
        km_slot *k = km_get(&w->km, pc, pid << 8 | ev);
        k->a++;
        if (rc == DRV_DROPPED)
            k->b++;
        else if (rc != DRV_OK) {
            fprintf(stderr, "driver_stress: drv_sample: %s\n", drv_strerror(rc));
            w->failed = 1;
            return NULL;
        }
        if ((i & 1023) == 1023) {
            drv_poll(w->d, w->cpu);   /* the machine's end of quantum */
            if (o->rate) {
                uint64_t due = t0 + (i + 1) * 1000000000ull / o->rate, t = now_ns();
                if (due > t)
                    sleep_ns(due - t);
            }
        }
    }
    if (short_seen)
        drv_notice_exit(w->d, short_seen, 0);
    return NULL;
}

static int produce(const opts *o)
{
    drv_params p = { .ncpus = o->cpus, .table_entries = o->table, .buffer_entries = o->buffer,
                     .policy = o->policy, .full_mode = o->full };
    drv_error e;
    drv *d = drv_open(o->region, &p, &e);
    if (!d)
        die("%s", e.msg);
    stream_cdf hot, flat;
    if (stream_cdf_init(&hot, stream_tail_shape.blocks, stream_tail_shape.zipf_s) ||
        stream_cdf_init(&flat, stream_tail_shape.blocks, stream_tail_shape.imiss_zipf))
        die("%s", "out of memory");
    /* every long-lived process exists before any CPU samples, so the
     * consumer's set of live processes is empty only at the very end */
    for (unsigned i = 0; i < stream_tail_shape.pids; i++)
        post_start(d, 1, STREAM_PID0 + i);
    worker *w = calloc(o->cpus, sizeof *w);
    for (unsigned c = 0; c < o->cpus; c++) {
        w[c] = (worker){ .d = d, .o = o, .cpu = c, .hot = &hot, .flat = &flat };
        pthread_create(&w[c].th, NULL, produce_cpu, &w[c]);
    }
    keymap all = { 0 };
    int failed = 0;
    for (unsigned c = 0; c < o->cpus; c++) {
        pthread_join(w[c].th, NULL);
        failed |= w[c].failed;
        for (size_t i = 0; i < w[c].km.cap; i++)
            if (w[c].km.s[i].used) {
                km_slot *k = km_get(&all, w[c].km.s[i].pc, w[c].km.s[i].pe);
                k->a += w[c].km.s[i].a;
                k->b += w[c].km.s[i].b;
            }
        km_free(&w[c].km);
    }
    if (failed)
        return 1;
    for (unsigned i = 0; i < stream_tail_shape.pids; i++)
        drv_notice_exit(d, STREAM_PID0 + i, 0);

    drv_counters c;
    drv_counters_get(d, -1, &c);
    FILE *f = fopen(o->out, "w");
    if (!f)
        die("cannot write %s", o->out);
    uint64_t produced = 0, lost = 0;
    for (size_t i = 0; i < all.cap; i++)
        if (all.s[i].used) {
            fprintf(f, "%u %llx %u %llu %llu\n", all.s[i].pe >> 8, (unsigned long long)all.s[i].pc,
                    all.s[i].pe & 0xff, (unsigned long long)all.s[i].a, (unsigned long long)all.s[i].b);
            produced += all.s[i].a;
            lost += all.s[i].b;
        }
    fprintf(f, "# produced %llu\n# lost %llu\n# keys %zu\n", (unsigned long long)produced,
            (unsigned long long)lost, all.n);
    for (size_t i = 0; i < DRV_NCOUNTERS; i++)
        fprintf(f, "# driver.%s %llu\n", drv_counter_names[i], (unsigned long long)drv_counter_at(&c, i));
    fclose(f);

    if (o->final_flush) {
        /* stay attached and answer the consumer's last flush, like a
         * machine that keeps running its idle loop */
        char done[4096];
        snprintf(done, sizeof done, "%s.done", o->region);
        uint64_t end = now_ns() + 120 * 1000000000ull;
        while (access(done, F_OK) != 0) {
            for (unsigned cpu = 0; cpu < o->cpus; cpu++)
                drv_poll(d, cpu);
            if (now_ns() > end)
                die("%s", "the consumer never finished");
            sleep_ns(200000);
        }
    }
    drv_close(d);
    free(w);
    km_free(&all);
    free(hot.c);
    free(flat.c);
    return 0;
}

/* ---- consumer ------------------------------------------------------------- */

typedef struct consumer {
    keymap km;                       /* a: samples received */
    uint64_t by_source[3];           /* samples per drv_source */
    uint64_t entries;
    uint8_t *live;                   /* per pid: 1 while the process exists */
    long nlive;
    int seen_any;
    uint64_t notices;
    int salvaging;                   /* count SRC_BUFFER as "in overflow" */
    uint64_t salvaged_buffers;
} consumer;

static int take_entries(void *ctx, const drv_batch *b)
{
    consumer *k = ctx;
    uint64_t n = 0;
    for (size_t i = 0; i < b->n; i++) {
        km_get(&k->km, b->e[i].pc, b->e[i].pid_event)->a += b->e[i].count;
        n += b->e[i].count;
    }
    if (k->salvaging && b->source == DRV_SRC_BUFFER)
        k->salvaged_buffers += n;
    else
        k->by_source[b->source] += n;
    k->entries += b->n;
    return 0;
}

static int take_notice(void *ctx, const drv_notice *n)
{
    consumer *k = ctx;
    k->notices++;
    if (n->pid > DRV_MAX_PID)
        return 0;
    if (n->type == DRV_NOTICE_FORK && !k->live[n->pid]) {
        k->live[n->pid] = 1;
        k->nlive++;
        k->seen_any = 1;
    } else if (n->type == DRV_NOTICE_EXIT && k->live[n->pid]) {
        k->live[n->pid] = 0;
        k->nlive--;
    }
    return 0;
}

static int consume(const opts *o)
{
    consumer k = { 0 };
    k.live = calloc(DRV_MAX_PID + 1, 1);
    drvc_sink sink = { take_entries, take_notice, &k };
    drv_error e;
    drvc *c = NULL;
    uint64_t end = now_ns() + 30 * 1000000000ull;
    while (!(c = drvc_open(o->region, 0, &e))) {
        if (now_ns() > end)
            die("%s", e.msg);
        sleep_ns(1000000);
    }
    uint64_t rng = stream_mix(o->seed + 99);
    unsigned flushes = 0;
    int rc;
    end = now_ns() + 600 * 1000000000ull;
    /* In drop mode with a salvage at the end, stop draining for the second
     * half of the run, so that full buffers are left for the salvage too
     * (a window wide enough not to be missed on a busy machine). */
    int lazy = o->full == DRV_FULL_DROP && !o->final_flush;
    while (!(k.seen_any && k.nlive == 0)) {
        drv_counters cn;
        drvc_counters(c, -1, &cn);
        if (lazy && cn.samples >= o->samples * o->cpus / 2) {
            if ((rc = drvc_notices(c, &sink, &e)) < 0)
                die("%s", e.msg);
            sleep_ns(2000000);
            continue;
        }
        if ((rc = drvc_collect(c, 2, &sink, &e)) < 0)
            die("%s", e.msg);
        if ((rc = drvc_notices(c, &sink, &e)) < 0)
            die("%s", e.msg);
        rng = stream_mix(rng);
        if (rng % 25 == 0) {   /* about every 50 ms */
            if ((rc = drvc_flush(c, 30000, &sink, &e)) != DRV_OK)
                die("flush: %s", e.msg);
            flushes++;
        }
        if (now_ns() > end)
            die("%s", "the producer never finished");
    }
    uint64_t in_final_flush = 0;
    if (o->final_flush) {
        uint64_t before = k.by_source[DRV_SRC_BUFFER];
        if ((rc = drvc_flush(c, 30000, &sink, &e)) != DRV_OK)
            die("final flush: %s", e.msg);
        flushes++;
        in_final_flush = k.by_source[DRV_SRC_BUFFER] - before;
        char done[4096];
        snprintf(done, sizeof done, "%s.done", o->region);
        FILE *f = fopen(done, "w");
        if (f)
            fclose(f);
    }
    /* Leave the rest where it is: full buffers, part-filled ones and the
     * tables are the salvage's to find. */
    end = now_ns() + 120 * 1000000000ull;
    while (drvc_producer_alive(c)) {
        sleep_ns(5000000);
        if (now_ns() > end)
            die("%s", "the producer did not exit");
    }
    k.salvaging = 1;
    if ((rc = drvc_salvage(c, &sink, &e)) != DRV_OK)
        die("salvage: %s", e.msg);
    drv_counters cn;
    drvc_counters(c, -1, &cn);
    drvc_close(c);

    FILE *f = fopen(o->out, "w");
    if (!f)
        die("cannot write %s", o->out);
    uint64_t total = 0;
    for (size_t i = 0; i < k.km.cap; i++)
        if (k.km.s[i].used) {
            fprintf(f, "%u %llx %u %llu\n", k.km.s[i].pe >> 8, (unsigned long long)k.km.s[i].pc,
                    k.km.s[i].pe & 0xff, (unsigned long long)k.km.s[i].a);
            total += k.km.s[i].a;
        }
    fprintf(f, "# consumed %llu\n# drained %llu\n# in_final_flush %llu\n# in_overflow_full %llu\n"
               "# in_overflow_part %llu\n# in_hash %llu\n# entries %llu\n# flushes %u\n# notices %llu\n",
            (unsigned long long)total, (unsigned long long)k.by_source[DRV_SRC_BUFFER],
            (unsigned long long)in_final_flush, (unsigned long long)k.salvaged_buffers,
            (unsigned long long)k.by_source[DRV_SRC_ACTIVE],
            (unsigned long long)k.by_source[DRV_SRC_TABLE], (unsigned long long)k.entries, flushes,
            (unsigned long long)k.notices);
    for (size_t i = 0; i < DRV_NCOUNTERS; i++)
        fprintf(f, "# driver.%s %llu\n", drv_counter_names[i], (unsigned long long)drv_counter_at(&cn, i));
    fclose(f);
    km_free(&k.km);
    free(k.live);
    return 0;
}

/* ---- compare -------------------------------------------------------------- */

typedef struct summary {
    char name[64];
    unsigned long long v;
} summary;

static int read_file(const char *path, keymap *m, int produced, summary *sm, int *nsm)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot read %s", path);
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') {
            if (*nsm < 64 && sscanf(line, "# %63s %llu", sm[*nsm].name, &sm[*nsm].v) == 2)
                (*nsm)++;
            continue;
        }
        unsigned pid, ev;
        unsigned long long pc, a, b = 0;
        int n = sscanf(line, "%u %llx %u %llu %llu", &pid, &pc, &ev, &a, &b);
        if (n != (produced ? 5 : 4))
            die("bad line in %s", path);
        km_slot *k = km_get(m, pc, pid << 8 | ev);
        if (produced) {
            k->a += a - b;   /* what should have arrived */
            k->b += b;
        } else {
            k->a -= a;       /* what did */
        }
    }
    fclose(f);
    return 0;
}

static unsigned long long get(const summary *sm, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(sm[i].name, name))
            return sm[i].v;
    die("summary line '%s' missing", name);
    return 0;
}

static int compare(const char *prod, const char *cons)
{
    keymap m = { 0 };
    summary sp[64], sc[64];
    int np = 0, nc = 0;
    read_file(prod, &m, 1, sp, &np);
    read_file(cons, &m, 0, sc, &nc);
    size_t bad = 0;
    for (size_t i = 0; i < m.cap; i++)
        if (m.s[i].used && m.s[i].a) {
            if (bad++ < 10)
                printf("MISMATCH pid %u pc %llx event %u: off by %lld\n", m.s[i].pe >> 8,
                       (unsigned long long)m.s[i].pc, m.s[i].pe & 0xff, (long long)m.s[i].a);
        }
    unsigned long long produced = get(sp, np, "produced"), lost = get(sp, np, "lost");
    unsigned long long consumed = get(sc, nc, "consumed"), drained = get(sc, nc, "drained");
    unsigned long long full = get(sc, nc, "in_overflow_full"), part = get(sc, nc, "in_overflow_part");
    unsigned long long hash = get(sc, nc, "in_hash"), entries = get(sc, nc, "entries");
    printf("keys %llu, produced %llu = drained %llu + in overflow %llu (full %llu, part-filled %llu) "
           "+ in hash %llu + dropped %llu\n",
           get(sp, np, "keys"), produced, drained, full + part, full, part, hash, lost);
    printf("aggregation %.1f samples/entry, %llu flushes, %llu notices, driver: %llu full-buffer waits, "
           "%llu buffers handed\n",
           entries ? (double)consumed / (double)entries : 0.0, get(sc, nc, "flushes"),
           get(sc, nc, "notices"), get(sc, nc, "driver.full_waits"), get(sc, nc, "driver.buffers_handed"));
    int ok = 1;
    if (bad) {
        printf("FAIL: %zu keys do not add up\n", bad);
        ok = 0;
    }
    if (produced != drained + full + part + hash + lost || consumed + lost != produced) {
        printf("FAIL: totals do not add up\n");
        ok = 0;
    }
    if (get(sp, np, "driver.samples") != produced || get(sp, np, "driver.dropped") != lost) {
        printf("FAIL: driver counters (samples %llu, dropped %llu) disagree with the producer\n",
               get(sp, np, "driver.samples"), get(sp, np, "driver.dropped"));
        ok = 0;
    }
    km_free(&m);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "compare"))
        return compare(argv[2], argv[3]);
    if (argc < 4 || (strcmp(argv[1], "produce") && strcmp(argv[1], "consume"))) {
        fprintf(stderr, "usage: driver_stress produce|consume REGION OUT [options]\n"
                        "       driver_stress compare PRODUCED CONSUMED\n");
        return 2;
    }
    opts o;
    parse(&o, argc, argv);
    if (o.cpus < 1 || o.cpus > 64)
        die("%s", "--cpus: 1..64");
    return !strcmp(argv[1], "produce") ? produce(&o) : consume(&o);
}
