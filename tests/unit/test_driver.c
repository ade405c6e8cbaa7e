/*
 * collector/driver: the sample path.  Hashing, both eviction policies on
 * crafted sequences, saturation, full buffers in both modes, flushes, and
 * counts that add up exactly against a reference.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/driver.h"
#include "tests/unit/scratch.h"

static char path[96];

static void mkregion_path(void)
{
    scratch_make_shm();
    snprintf(path, sizeof path, "%s/region", scratch_dir);
}

static drv *open_drv(unsigned ncpus, unsigned table, unsigned buffer, drv_policy pol,
                     drv_full_mode fm, uint32_t max_count)
{
    drv_params p = { .ncpus = ncpus, .table_entries = table, .buffer_entries = buffer,
                     .policy = pol, .full_mode = fm, .max_count = max_count };
    drv_error e = { 0 };
    drv *d = drv_open(path, &p, &e);
    cr_assert(d, "drv_open: %s", e.msg);
    return d;
}

/* ---- a sink that adds everything up, per key ------------------------------ */

#define NKEYS 16384
typedef struct { uint64_t pc; uint32_t pe; uint64_t n; } tally_slot;
typedef struct {
    tally_slot slot[NKEYS];
    uint64_t total, entries, batches[3];
    int refuse;
} tally;

static tally_slot *tally_find(tally *t, uint64_t pc, uint32_t pe)
{
    size_t h = (size_t)((pc * 31 + pe) * 0x9E3779B97F4A7C15ull >> 52) % NKEYS;
    for (size_t i = 0; i < NKEYS; i++, h = (h + 1) % NKEYS) {
        tally_slot *s = &t->slot[h];
        if (!s->n && !s->pc && !s->pe) {
            s->pc = pc;
            s->pe = pe;
            return s;
        }
        if (s->pc == pc && s->pe == pe)
            return s;
    }
    cr_assert_fail("tally full");
    return NULL;
}

static void tally_add(tally *t, uint64_t pc, uint32_t pe, uint64_t n)
{
    tally_find(t, pc, pe)->n += n;
    t->total += n;
}

static int tally_entries(void *ctx, const drv_batch *b)
{
    tally *t = ctx;
    if (t->refuse)
        return 1;
    t->batches[b->source]++;
    for (size_t i = 0; i < b->n; i++) {
        cr_assert(b->e[i].count > 0);
        tally_add(t, b->e[i].pc, b->e[i].pid_event, b->e[i].count);
        t->entries++;
    }
    return 0;
}

static uint64_t tally_get(tally *t, uint64_t pc, uint32_t pe) { return tally_find(t, pc, pe)->n; }

/* Keys that all hash to the bucket of the first one. */
static void same_bucket(drv *d, uint64_t *pcs, int n)
{
    unsigned b = drv_bucket(d, 7, 0x120000000, 0);
    int k = 0;
    for (uint64_t pc = 0x120000000; k < n; pc += 4)
        if (drv_bucket(d, 7, pc, 0) == b)
            pcs[k++] = pc;
}

static void bucket_of(drv *d, uint64_t pc, drv_entry out[4])
{
    cr_assert_eq(drv_bucket_read(d, 0, drv_bucket(d, 7, pc, 0), out), DRV_OK);
}

#define PE(pid, ev) ((uint32_t)(pid) << 8 | (ev))

TestSuite(driver, .init = mkregion_path, .fini = scratch_remove);

Test(driver, hash_spreads_sequential_pcs)
{
    drv *d = open_drv(1, 16384, 0, DRV_POLICY_FRONT, DRV_FULL_DROP, 0);
    static unsigned load[4096];
    for (uint64_t i = 0; i < 16384; i++)
        load[drv_bucket(d, 1234, 0x120001000 + 4 * i, 0)]++;
    unsigned max = 0, empty = 0;
    for (int b = 0; b < 4096; b++) {
        max = load[b] > max ? load[b] : max;
        empty += !load[b];
    }
    cr_assert_leq(max, 8, "a bucket got %u of 16384 sequential PCs", max);
    cr_assert_leq(empty, 64, "%u of 4096 buckets got nothing", empty);
    /* pid and event take part in the hash too */
    int differ = 0;
    for (uint64_t i = 0; i < 64; i++)
        differ += drv_bucket(d, 1, 0x120000000 + 4 * i, 0) != drv_bucket(d, 2, 0x120000000 + 4 * i, 0);
    cr_assert_geq(differ, 56);
    drv_close(d);
}

Test(driver, hits_and_misses)
{
    drv *d = open_drv(1, 64, 16, DRV_POLICY_FRONT, DRV_FULL_DROP, 0);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(drv_sample(d, 0, 7, 0x120000000, 0), DRV_OK);
    cr_assert_eq(drv_sample(d, 0, 7, 0x120000000, 1), DRV_OK);   /* another event: another key */
    drv_counters c;
    drv_counters_get(d, 0, &c);
    cr_assert_eq(c.samples, 11);
    cr_assert_eq(c.hits, 9);
    cr_assert_eq(c.misses, 2);
    cr_assert_eq(c.evictions, 0);
    drv_entry b[4];
    bucket_of(d, 0x120000000, b);
    int found = 0;
    for (int i = 0; i < 4; i++)
        if (b[i].pc == 0x120000000 && b[i].pid_event == PE(7, 0)) {
            cr_assert_eq(b[i].count, 10);
            found = 1;
        }
    cr_assert(found);
    drv_close(d);
}

Test(driver, round_robin_evicts_in_turn)
{
    drv *d = open_drv(1, 64, 16, DRV_POLICY_RR, DRV_FULL_DROP, 0);
    uint64_t k[6];
    same_bucket(d, k, 6);
    for (int i = 0; i < 4; i++)              /* fill: no eviction, slots in order */
        for (int j = 0; j <= i; j++)
            drv_sample(d, 0, 7, k[i], 0);
    drv_entry b[4];
    bucket_of(d, k[0], b);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(b[i].pc, k[i]);
        cr_assert_eq(b[i].count, (uint32_t)i + 1);
    }
    drv_sample(d, 0, 7, k[4], 0);            /* victim: slot 0 */
    drv_sample(d, 0, 7, k[5], 0);            /* victim: slot 1 */
    bucket_of(d, k[0], b);
    cr_assert_eq(b[0].pc, k[4]);
    cr_assert_eq(b[1].pc, k[5]);
    cr_assert_eq(b[2].pc, k[2]);
    cr_assert_eq(b[3].pc, k[3]);
    drv_sample(d, 0, 7, k[0], 0);            /* a hit after eviction is a miss: slot 2 goes */
    bucket_of(d, k[0], b);
    cr_assert_eq(b[2].pc, k[0]);
    cr_assert_eq(b[2].count, 1);
    drv_counters c;
    drv_counters_get(d, 0, &c);
    cr_assert_eq(c.evictions, 3);
    cr_assert_eq(c.overflow_entries, 3);
    cr_assert_eq(c.misses, 7);
    cr_assert_eq(c.hits, 6);
    drv_close(d);

    /* The evicted entries and the table together hold every sample. */
    drvc *cs = drvc_open(path, 0, NULL);
    cr_assert(cs);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    cr_assert_eq(drvc_salvage(cs, &s, NULL), DRV_OK);
    cr_assert_eq(t->total, 13);
    cr_assert_eq(tally_get(t, k[0], PE(7, 0)), 2);   /* 1 evicted + 1 in the table */
    cr_assert_eq(tally_get(t, k[1], PE(7, 0)), 2);
    cr_assert_eq(tally_get(t, k[2], PE(7, 0)), 3);
    cr_assert_eq(tally_get(t, k[3], PE(7, 0)), 4);
    cr_assert_eq(t->batches[DRV_SRC_ACTIVE], 1);
    drvc_close(cs);
    free(t);
}

Test(driver, swap_to_front_and_insert_at_front)
{
    drv *d = open_drv(1, 64, 16, DRV_POLICY_FRONT, DRV_FULL_DROP, 0);
    uint64_t k[5];
    same_bucket(d, k, 5);
    for (int i = 0; i < 4; i++)
        drv_sample(d, 0, 7, k[i], 0);
    drv_entry b[4];
    bucket_of(d, k[0], b);                   /* inserted at front: newest first */
    for (int i = 0; i < 4; i++)
        cr_assert_eq(b[i].pc, k[3 - i]);
    drv_sample(d, 0, 7, k[0], 0);            /* hit in the last slot swaps with the first */
    bucket_of(d, k[0], b);
    cr_assert_eq(b[0].pc, k[0]);
    cr_assert_eq(b[0].count, 2);
    cr_assert_eq(b[3].pc, k[3]);
    cr_assert_eq(b[1].pc, k[2]);
    cr_assert_eq(b[2].pc, k[1]);
    drv_sample(d, 0, 7, k[4], 0);            /* miss: the last (k3) goes, the rest shift */
    bucket_of(d, k[0], b);
    cr_assert_eq(b[0].pc, k[4]);
    cr_assert_eq(b[1].pc, k[0]);
    cr_assert_eq(b[2].pc, k[2]);
    cr_assert_eq(b[3].pc, k[1]);
    drv_sample(d, 0, 7, k[0], 0);            /* hit in slot 1 */
    bucket_of(d, k[0], b);
    cr_assert_eq(b[0].pc, k[0]);
    cr_assert_eq(b[0].count, 3);
    cr_assert_eq(b[1].pc, k[4]);
    drv_counters c;
    drv_counters_get(d, 0, &c);
    cr_assert_eq(c.evictions, 1);
    cr_assert_eq(c.hits, 2);
    cr_assert_eq(c.misses, 5);
    drv_close(d);

    drvc *cs = drvc_open(path, 0, NULL);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    cr_assert_eq(drvc_salvage(cs, &s, NULL), DRV_OK);
    cr_assert_eq(t->total, 7);
    cr_assert_eq(tally_get(t, k[3], PE(7, 0)), 1);
    cr_assert_eq(tally_get(t, k[0], PE(7, 0)), 3);
    drvc_close(cs);
    free(t);
}

Test(driver, saturated_counts_are_evicted)
{
    drv *d = open_drv(1, 64, 16, DRV_POLICY_FRONT, DRV_FULL_DROP, 3);
    for (int i = 0; i < 7; i++)
        cr_assert_eq(drv_sample(d, 0, 9, 0x120000040, 2), DRV_OK);
    drv_counters c;
    drv_counters_get(d, 0, &c);
    cr_assert_eq(c.saturations, 2);
    cr_assert_eq(c.evictions, 2);
    cr_assert_eq(c.hits, 6);
    cr_assert_eq(c.misses, 1);
    drv_entry b[4];
    cr_assert_eq(drv_bucket_read(d, 0, drv_bucket(d, 9, 0x120000040, 2), b), DRV_OK);
    cr_assert_eq(b[0].count, 1);
    drv_close(d);
    drvc *cs = drvc_open(path, 0, NULL);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    cr_assert_eq(drvc_salvage(cs, &s, NULL), DRV_OK);
    cr_assert_eq(tally_get(t, 0x120000040, PE(9, 2)), 7);
    cr_assert_eq(t->entries, 3);             /* 3 + 3 evicted, 1 in the table */
    drvc_close(cs);
    free(t);
}

Test(driver, bad_arguments)
{
    drv *d = open_drv(2, 64, 16, DRV_POLICY_FRONT, DRV_FULL_DROP, 0);
    cr_assert_eq(drv_sample(d, 2, 1, 0x1000, 0), DRV_EINVAL);
    cr_assert_eq(drv_sample(d, 0, DRV_MAX_PID + 1, 0x1000, 0), DRV_EINVAL);
    cr_assert_eq(drv_sample(d, 0, 1, 0x1000, 256), DRV_EINVAL);
    cr_assert_eq(drv_poll(d, 5), DRV_EINVAL);
    cr_assert_eq(drv_sample(d, 1, DRV_MAX_PID, 0x1000, 255), DRV_OK);
    drv_counters c;
    drv_counters_get(d, -1, &c);
    cr_assert_eq(c.samples, 1);
    drv_close(d);
}

Test(driver, cpus_are_separate)
{
    drv *d = open_drv(3, 64, 16, DRV_POLICY_RR, DRV_FULL_DROP, 0);
    for (unsigned cpu = 0; cpu < 3; cpu++)
        for (unsigned i = 0; i <= cpu; i++)
            drv_sample(d, cpu, 5, 0x2000, 0);
    for (unsigned cpu = 0; cpu < 3; cpu++) {
        drv_entry b[4];
        drv_bucket_read(d, cpu, drv_bucket(d, 5, 0x2000, 0), b);
        cr_assert_eq(b[0].count, cpu + 1);
        drv_counters c;
        drv_counters_get(d, (int)cpu, &c);
        cr_assert_eq(c.samples, cpu + 1);
    }
    drv_counters c;
    drv_counters_get(d, -1, &c);
    cr_assert_eq(c.samples, 6);
    cr_assert_eq(c.misses, 3);
    drv_close(d);
}

/* Many keys through a tiny table: every eviction path runs. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void stream_adds_up(drv_policy pol)
{
    drv *d = open_drv(2, 64, 16, pol, DRV_FULL_STALL, 50);
    drvc *cs = drvc_open(path, 0, NULL);
    cr_assert(cs);
    tally *ref = calloc(1, sizeof *ref), *got = calloc(1, sizeof *got);
    drvc_sink s = { tally_entries, NULL, got };
    uint64_t seed = 88172645463325252ull;
    int stalls = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t r = next_rand(&seed);
        /* skewed: half the samples on 8 PCs, the rest over 1000 */
        uint64_t pc = 0x120000000 + 4 * ((r & 1) ? (r >> 8) % 8 : (r >> 8) % 1000);
        uint32_t pid = 100 + (uint32_t)((r >> 40) % 3);
        unsigned cpu = (unsigned)(r >> 50) & 1, ev = (r >> 52) % 5 == 0;
        int rc;
        while ((rc = drv_sample(d, cpu, pid, pc, ev)) == DRV_FULL) {
            stalls++;
            cr_assert_geq(drvc_collect(cs, 0, &s, NULL), 1);
        }
        cr_assert_eq(rc, DRV_OK);
        tally_add(ref, pc, PE(pid, ev), 1);
    }
    cr_assert_gt(stalls, 0);
    drv_counters c;
    drv_counters_get(d, -1, &c);
    cr_assert_eq(c.samples, 200000);
    cr_assert_eq(c.dropped, 0);
    cr_assert_eq(c.full_waits, (uint64_t)stalls);
    drv_close(d);
    cr_assert_eq(drvc_salvage(cs, &s, NULL), DRV_OK);
    cr_assert_eq(got->total, 200000);
    for (int i = 0; i < NKEYS; i++)
        if (ref->slot[i].n)
            cr_assert_eq(tally_get(got, ref->slot[i].pc, ref->slot[i].pe), ref->slot[i].n,
                         "pc %#lx pe %#x", (unsigned long)ref->slot[i].pc, ref->slot[i].pe);
    drvc_counters(cs, -1, &c);
    cr_assert_eq(c.entries_taken + c.salvaged_entries, got->entries);
    drvc_close(cs);
    free(ref);
    free(got);
}

Test(driver, stream_adds_up_round_robin) { stream_adds_up(DRV_POLICY_RR); }
Test(driver, stream_adds_up_front) { stream_adds_up(DRV_POLICY_FRONT); }

Test(driver, full_buffers_drop_and_count)
{
    drv *d = open_drv(1, 4, 16, DRV_POLICY_RR, DRV_FULL_DROP, 0);
    /* one bucket: 4 resident keys, then every new key evicts */
    int dropped = 0, ok = 0;
    for (uint64_t i = 0; i < 100; i++) {
        int rc = drv_sample(d, 0, 1, 0x1000 + 4 * i, 0);
        dropped += rc == DRV_DROPPED;
        ok += rc == DRV_OK;
    }
    cr_assert_eq(ok, 4 + 32);                /* 32 evictions fill both buffers */
    cr_assert_eq(dropped, 100 - 36);
    cr_assert_eq(drv_sample(d, 0, 1, 0x1000 + 4 * 35, 0), DRV_OK);   /* a hit needs no room */
    drv_counters c;
    drv_counters_get(d, 0, &c);
    cr_assert_eq(c.dropped, 64);
    cr_assert_eq(c.full_waits, 64);
    cr_assert_eq(c.samples, 101);
    cr_assert_eq(c.buffers_handed, 2);
    drv_close(d);
    drvc *cs = drvc_open(path, 0, NULL);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    cr_assert_eq(drvc_salvage(cs, &s, NULL), DRV_OK);
    cr_assert_eq(t->total, 101 - 64);
    cr_assert_eq(t->batches[DRV_SRC_BUFFER], 2);
    drvc_close(cs);
    free(t);
}

Test(driver, full_buffers_stall_changes_nothing)
{
    drv *d = open_drv(1, 4, 16, DRV_POLICY_FRONT, DRV_FULL_STALL, 0);
    for (uint64_t i = 0; i < 36; i++)
        cr_assert_eq(drv_sample(d, 0, 1, 0x1000 + 4 * i, 0), DRV_OK);
    drv_entry before[4], after[4];
    drv_bucket_read(d, 0, 0, before);
    cr_assert_eq(drv_sample(d, 0, 1, 0x9000, 0), DRV_FULL);
    cr_assert_eq(drv_wait(d, 0, 20), DRV_ETIMEDOUT);
    drv_bucket_read(d, 0, 0, after);
    cr_assert_eq(memcmp(before, after, sizeof before), 0);
    drv_counters c;
    drv_counters_get(d, 0, &c);
    cr_assert_eq(c.samples, 36);
    cr_assert_eq(c.full_waits, 1);
    cr_assert_eq(c.dropped, 0);
    drvc *cs = drvc_open(path, 0, NULL);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    cr_assert_eq(drvc_collect(cs, 0, &s, NULL), 2);
    cr_assert_eq(drv_wait(d, 0, 20), DRV_OK);
    cr_assert_eq(drv_sample(d, 0, 1, 0x9000, 0), DRV_OK);
    drv_close(d);
    drvc_close(cs);
    free(t);
}

/* ---- flush: a producer thread polls, the test consumes ---------------------- */

typedef struct {
    drv *d;
    volatile int stop;
} poller;

static void *poll_loop(void *arg)
{
    poller *p = arg;
    while (!p->stop)
        for (unsigned cpu = 0; cpu < drv_ncpus(p->d); cpu++)
            drv_poll(p->d, cpu);
    return NULL;
}

static void flush_moves_everything(unsigned table, unsigned buffer)
{
    drv *d = open_drv(2, table, buffer, DRV_POLICY_FRONT, DRV_FULL_STALL, 0);
    drvc *cs = drvc_open(path, 0, NULL);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    uint64_t n = 0;
    for (unsigned cpu = 0; cpu < 2; cpu++)
        for (uint64_t i = 0; i < 3000; i++) {
            uint64_t pc = 0x120000000 + 4 * (i % 700);
            while (drv_sample(d, cpu, 3, pc, 0) == DRV_FULL)
                drvc_collect(cs, 0, &s, NULL);
            n++;
        }
    poller p = { d, 0 };
    pthread_t th;
    pthread_create(&th, NULL, poll_loop, &p);
    drv_error e = { 0 };
    cr_assert_eq(drvc_flush(cs, 5000, &s, &e), DRV_OK, "%s", e.msg);
    p.stop = 1;
    pthread_join(th, NULL);
    cr_assert_eq(t->total, n);
    for (unsigned cpu = 0; cpu < 2; cpu++)
        for (unsigned b = 0; b < table / 4; b++) {
            drv_entry x[4];
            drv_bucket_read(d, cpu, b, x);
            for (int i = 0; i < 4; i++)
                cr_assert_eq(x[i].count, 0);
        }
    drv_counters c;
    drv_counters_get(d, -1, &c);
    cr_assert_eq(c.flushes, 2);
    cr_assert_eq(c.buffers_taken, c.buffers_handed);
    cr_assert_eq(c.entries_taken, c.overflow_entries);
    drvc_close(cs);
    drv_close(d);
    free(t);
}

Test(driver, flush_moves_everything) { flush_moves_everything(1024, 512); }
/* the table is bigger than both buffers: the flush must wait for the consumer */
Test(driver, flush_in_steps_with_small_buffers) { flush_moves_everything(2048, 16); }

Test(driver, flush_is_answered_at_the_next_sample)
{
    drv *d = open_drv(1, 64, 64, DRV_POLICY_RR, DRV_FULL_DROP, 0);
    drvc *cs = drvc_open(path, 0, NULL);
    tally *t = calloc(1, sizeof *t);
    drvc_sink s = { tally_entries, NULL, t };
    for (int i = 0; i < 10; i++)
        drv_sample(d, 0, 1, 0x4000 + 4 * (uint64_t)i, 0);
    drv_error e = { 0 };
    cr_assert_eq(drvc_flush(cs, 50, &s, &e), DRV_ETIMEDOUT);   /* nobody polls */
    cr_assert(strstr(e.msg, "cpu 0"), "%s", e.msg);
    /* the request stays pending; the next sample moves the table out first */
    drv_sample(d, 0, 1, 0x4000, 0);
    cr_assert_eq(drvc_collect(cs, 0, &s, NULL), 1);
    cr_assert_eq(t->total, 10);
    drv_entry b[4];
    drv_bucket_read(d, 0, drv_bucket(d, 1, 0x4000, 0), b);
    cr_assert_eq(b[0].count, 1);
    drvc_close(cs);
    drv_close(d);
    free(t);
}
