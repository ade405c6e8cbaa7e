/*
 * tests/driver/drv_drain.c: an outside consumer of a machine's driver
 * region (axp run --driver PATH), for conservation tests.
 *
 *   drv_drain REGION OUT [--flush-every MS] [--wait S] [--create CPUS:TABLE:BUFFER[:VALUES]]
 *             [--values FILE]
 *
 * With --create it first makes the region itself, with small tables and
 * buffers, and leaves it empty: the machine's drv_open resumes a region of
 * its CPU count whatever its sizes, so a real workload then exercises
 * evictions, hand-overs and salvage.  Then it waits for the region to appear, then drains it while the machine runs:
 * takes full overflow buffers, follows the notices, and every MS
 * milliseconds (default 300; 0: never) asks the machine's CPUs for a flush,
 * which the machine answers from its poll hook.  Once the machine has
 * detached it salvages what the region still holds, like cpod does for a
 * machine that is gone.
 *
 * OUT gets one line per key, "PID PC EVENT COUNT" (PC in hex), then
 * summary lines "# NAME VALUE": drained (samples in buffers taken while the
 * machine ran, flushes included), in_overflow (in full or part-filled
 * buffers at salvage), in_hash (in the hash tables at salvage), entries,
 * flushes, loads, exits, unmapped (samples whose pc lies in no mapping a
 * LOAD notice announced for their pid before the batch arrived), and the
 * region's counters as driver.NAME.  With --values, FILE gets every value
 * record taken from the value rings, "PID PC KIND VALUE" (hex), and OUT
 * the summary lines values (how many) and values_unmapped.
 * When the machine carries stacks
 * (REGION.stacks, axp --stacks) they are taken too: OUT.stacks gets the
 * stacks' leaves per key, "PID PC EVENT COUNT", and OUT the summary lines
 * stacks, stack_frames, stacks.put, stacks.lost and stacks.taken.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/driver.h"
#include "collector/driver_stacks.h"
#include "tests/driver/keymap.h"

typedef struct mapping {
    uint32_t pid;
    uint64_t base, size;
} mapping;

typedef struct consumer {
    keymap km;                 /* a: samples per key */
    uint64_t drained, in_overflow, in_hash, entries;
    uint64_t loads, exits, others, unmapped;
    uint64_t stacks, stack_frames;
    drv_stacks *stk;
    int salvaging;
    mapping *map;
    size_t nmap, cmap;
    FILE *vf;                  /* --values */
    uint64_t values, values_unmapped;
} consumer;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "drv_drain: %s: %s\n", what, msg);
    exit(1);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void nap_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Mappings are never forgotten: an EXEC or EXIT does not remove them, since
 * the check is only whether the pc was ever announced for that pid. */
static int mapped(const consumer *k, uint32_t pid, uint64_t pc)
{
    for (size_t i = 0; i < k->nmap; i++)
        if (k->map[i].pid == pid && pc - k->map[i].base < k->map[i].size)
            return 1;
    return 0;
}

static int take_entries(void *ctx, const drv_batch *b)
{
    consumer *k = ctx;
    uint64_t n = 0;
    for (size_t i = 0; i < b->n; i++) {
        const drv_entry *e = &b->e[i];
        km_get(&k->km, e->pc, e->pid_event)->a += e->count;
        n += e->count;
        if (!mapped(k, drv_entry_pid(e), e->pc))
            k->unmapped += e->count;
    }
    if (b->source == DRV_SRC_TABLE)
        k->in_hash += n;
    else if (k->salvaging)
        k->in_overflow += n;
    else
        k->drained += n;
    k->entries += b->n;
    return 0;
}

static int take_values(void *ctx, const drv_value_batch *b)
{
    consumer *k = ctx;
    for (size_t i = 0; i < b->n; i++) {
        const drv_value *v = &b->v[i];
        fprintf(k->vf, "%u 0x%llx %u 0x%llx\n", v->pid, (unsigned long long)v->pc, v->kind,
                (unsigned long long)v->value);
        if (!mapped(k, v->pid, v->pc))
            k->values_unmapped++;
    }
    k->values += b->n;
    return 0;
}

static int take_stack(void *ctx, unsigned cpu, const drv_stack_rec *r)
{
    consumer *k = ctx;
    (void)cpu;
    km_get(&k->km, r->pc[0], r->pid << 8 | r->event)->b++;
    k->stacks++;
    k->stack_frames += r->n;
    return 0;
}

static void take_stacks(consumer *k, const char *region)
{
    drv_error e;
    if (!k->stk && !(k->stk = drv_stacks_open(region, &e)))
        return;
    if (drv_stacks_take(k->stk, take_stack, k, &e) < 0)
        die("stacks", e.msg);
}

static int take_notice(void *ctx, const drv_notice *n)
{
    consumer *k = ctx;
    if (n->type == DRV_NOTICE_LOAD) {
        k->loads++;
        if (k->nmap == k->cmap) {
            k->cmap = k->cmap ? 2 * k->cmap : 256;
            k->map = realloc(k->map, k->cmap * sizeof *k->map);
            if (!k->map)
                die("notices", "out of memory");
        }
        k->map[k->nmap++] = (mapping){ n->pid, n->base, n->size };
    } else if (n->type == DRV_NOTICE_EXIT) {
        k->exits++;
    } else {
        k->others++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: drv_drain REGION OUT [--flush-every MS] [--wait S] "
                        "[--create CPUS:TABLE:BUFFER[:VALUES]] [--values FILE]\n");
        return 2;
    }
    const char *region = argv[1], *out = argv[2];
    long flush_every = 300, wait_s = 60;
    const char *create = NULL, *values = NULL;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc)
            die(argv[i], "needs a value");
        if (!strcmp(argv[i], "--create")) {
            create = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--values")) {
            values = argv[++i];
            continue;
        }
        char *end;
        long v = strtol(argv[i + 1], &end, 10);
        if (*end || v < 0)
            die(argv[i], "expected a number");
        if (!strcmp(argv[i], "--flush-every"))
            flush_every = v;
        else if (!strcmp(argv[i], "--wait"))
            wait_s = v;
        else
            die(argv[i], "unknown option");
        i++;
    }

    drv_error e;
    if (create) {
        unsigned cpus, table, buffer, nvalues = 0;
        if (sscanf(create, "%u:%u:%u:%u", &cpus, &table, &buffer, &nvalues) < 3)
            die("--create", "expected CPUS:TABLE:BUFFER[:VALUES]");
        drv_params p = { .ncpus = cpus, .table_entries = table, .buffer_entries = buffer,
                         .value_entries = nvalues };
        drv *d = drv_open(region, &p, &e);
        if (!d)
            die("--create", e.msg);
        drv_close(d);
    }
    consumer k = { 0 };
    drvc_sink sink = { take_entries, take_notice, &k };
    if (values && !(k.vf = fopen(values, "w")))
        die(values, strerror(errno));
    drvc *c;
    uint64_t give_up = now_ms() + (uint64_t)wait_s * 1000u;
    while (!(c = drvc_open(region, 0, &e))) {
        if (now_ms() > give_up)
            die(region, e.msg);
        nap_ms(2);
    }
    if (k.vf)
        drvc_set_value_sink(c, take_values, &k);
    /* the region appears a moment before its producer takes the lock
     * that says it is attached: wait for that (or for its first samples,
     * should the machine have come and gone already) */
    for (;;) {
        drv_counters cn;
        drvc_counters(c, -1, &cn);
        if (drvc_producer_alive(c) || cn.samples)
            break;
        if (now_ms() > give_up)
            die(region, "no machine attached");
        nap_ms(1);
    }
    unsigned flushes = 0;
    uint64_t next_flush = now_ms() + (uint64_t)flush_every;
    while (drvc_producer_alive(c)) {
        if (drvc_collect(c, 2, &sink, &e) < 0)
            die("collect", e.msg);
        take_stacks(&k, region);
        if (flush_every && now_ms() >= next_flush) {
            int rc = drvc_flush(c, 30000, &sink, &e);
            /* the machine may leave between the check and the flush: then
             * the flush salvages, which counts the same way */
            if (rc != DRV_OK)
                die("flush", e.msg);
            flushes++;
            next_flush = now_ms() + (uint64_t)flush_every;
        }
    }
    k.salvaging = 1;
    if (drvc_salvage(c, &sink, &e) != DRV_OK)
        die("salvage", e.msg);
    take_stacks(&k, region);
    drv_counters cn;
    drvc_counters(c, -1, &cn);
    drvc_close(c);

    FILE *f = fopen(out, "w");
    if (!f)
        die(out, strerror(errno));
    uint64_t total = 0;
    for (size_t i = 0; i < k.km.cap; i++)
        if (k.km.s[i].used && k.km.s[i].a) {
            fprintf(f, "%u 0x%llx %u %llu\n", k.km.s[i].pe >> 8, (unsigned long long)k.km.s[i].pc,
                    k.km.s[i].pe & 0xff, (unsigned long long)k.km.s[i].a);
            total += k.km.s[i].a;
        }
    fprintf(f, "# consumed %llu\n# drained %llu\n# in_overflow %llu\n# in_hash %llu\n"
               "# entries %llu\n# flushes %u\n# loads %llu\n# exits %llu\n# other_notices %llu\n"
               "# unmapped %llu\n",
            (unsigned long long)total, (unsigned long long)k.drained,
            (unsigned long long)k.in_overflow, (unsigned long long)k.in_hash,
            (unsigned long long)k.entries, flushes, (unsigned long long)k.loads,
            (unsigned long long)k.exits, (unsigned long long)k.others,
            (unsigned long long)k.unmapped);
    if (k.vf) {
        fprintf(f, "# values %llu\n# values_unmapped %llu\n", (unsigned long long)k.values,
                (unsigned long long)k.values_unmapped);
        if (fclose(k.vf) != 0)
            die(values, strerror(errno));
    }
    for (size_t i = 0; i < DRV_NCOUNTERS; i++)
        fprintf(f, "# driver.%s %llu\n", drv_counter_names[i], (unsigned long long)drv_counter_at(&cn, i));
    if (k.stk) {
        drv_stacks_counters sc;
        drv_stacks_counters_get(k.stk, &sc);
        fprintf(f, "# stacks %llu\n# stack_frames %llu\n# stacks.put %llu\n# stacks.lost %llu\n"
                   "# stacks.taken %llu\n", (unsigned long long)k.stacks,
                (unsigned long long)k.stack_frames, (unsigned long long)sc.put,
                (unsigned long long)sc.lost, (unsigned long long)sc.taken);
        char sp[4096];
        snprintf(sp, sizeof sp, "%s.stacks", out);
        FILE *g = fopen(sp, "w");
        if (!g)
            die(sp, strerror(errno));
        for (size_t i = 0; i < k.km.cap; i++)
            if (k.km.s[i].used && k.km.s[i].b)
                fprintf(g, "%u 0x%llx %u %llu\n", k.km.s[i].pe >> 8, (unsigned long long)k.km.s[i].pc,
                        k.km.s[i].pe & 0xff, (unsigned long long)k.km.s[i].b);
        if (fclose(g) != 0)
            die(sp, strerror(errno));
        drv_stacks_close(k.stk);
    }
    if (fclose(f) != 0)
        die(out, strerror(errno));
    km_free(&k.km);
    free(k.map);
    return 0;
}
