/*
 * collector/driver_values.c: the value rings.  Records arrive in order
 * and once each, a full ring drops and counts, a refused batch stays, a
 * gone producer's records are salvaged, a region without rings refuses
 * records, and a damaged ring is reported, never read past.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector/driver_shm.h"
#include "tests/unit/scratch.h"

static char path[96];

static void setup(void)
{
    scratch_make_shm();
    snprintf(path, sizeof path, "%s/region", scratch_dir);
}

TestSuite(driver_values, .init = setup, .fini = scratch_remove);

typedef struct got {
    uint64_t n, next[2];      /* records seen; the next run number expected per CPU */
    int refuse, out_of_order;
} got;

static int take(void *ctx, const drv_value_batch *b)
{
    got *g = ctx;
    if (g->refuse)
        return 1;
    for (size_t i = 0; i < b->n; i++) {
        if (b->v[i].run != g->next[b->cpu] || b->v[i].pc != 0x1000 + 4 * b->v[i].run)
            g->out_of_order++;
        g->next[b->cpu] = b->v[i].run + 1;
    }
    g->n += b->n;
    return 0;
}

static int no_entries(void *ctx, const drv_batch *b)
{
    (void)ctx;
    (void)b;
    return 0;
}

static drv *open_values(unsigned values)
{
    drv_params p = { .ncpus = 2, .table_entries = 64, .buffer_entries = 16, .value_entries = values };
    drv_error e;
    drv *d = drv_open(path, &p, &e);
    cr_assert(d, "%s", e.msg);
    return d;
}

static int post(drv *d, unsigned cpu, uint64_t run)
{
    drv_value v = { .pc = 0x1000 + 4 * run, .value = run * 3, .pid = 7, .kind = DRV_VALUE_RESULT, .run = run };
    return drv_value_post(d, cpu, &v);
}

Test(driver_values, in_order_once_and_full_rings_drop)
{
    drv *d = open_values(16);
    cr_assert_eq(drv_value_entries(d), 16);
    drv_error e;
    drvc *c = drvc_open(path, 0, &e);
    cr_assert(c, "%s", e.msg);
    got g = { 0 };
    drvc_set_value_sink(c, take, &g);
    drvc_sink s = { no_entries, NULL, NULL };
    uint64_t run[2] = { 0, 0 };
    /* wrap the ring several times, with the consumer behind by up to 10 */
    for (int round = 0; round < 20; round++) {
        for (unsigned cpu = 0; cpu < 2; cpu++)
            for (int k = 0; k < 10; k++)
                cr_assert_eq(post(d, cpu, run[cpu]++), DRV_OK);
        cr_assert_geq(drvc_collect(c, 0, &s, &e), 0, "%s", e.msg);
    }
    cr_assert_eq(g.n, 400);
    cr_assert_eq(g.out_of_order, 0);
    /* 16 fit, the 17th is dropped and counted */
    for (int k = 0; k < 16; k++)
        cr_assert_eq(post(d, 0, run[0]++), DRV_OK);
    cr_assert_eq(post(d, 0, 999), DRV_DROPPED);
    /* refused: kept */
    g.refuse = 1;
    cr_assert_eq(drvc_collect(c, 0, &s, &e), DRV_ESINK);
    g.refuse = 0;
    cr_assert_geq(drvc_collect(c, 0, &s, &e), 0, "%s", e.msg);
    cr_assert_eq(g.n, 416);
    cr_assert_eq(g.out_of_order, 0);
    drv_counters k;
    drvc_counters(c, -1, &k);
    cr_assert_eq(k.values_posted, 416);
    cr_assert_eq(k.values_dropped, 1);
    cr_assert_eq(k.values_taken, 416);
    drvc_close(c);
    drv_close(d);
}

Test(driver_values, salvaged_after_the_producer_leaves)
{
    drv *d = open_values(64);
    for (uint64_t r = 0; r < 40; r++)
        cr_assert_eq(post(d, 1, r), DRV_OK);
    drv_close(d);
    drv_error e;
    drvc *c = drvc_open(path, 0, &e);
    cr_assert(c, "%s", e.msg);
    got g = { 0 };
    drvc_set_value_sink(c, take, &g);
    drvc_sink s = { no_entries, NULL, NULL };
    cr_assert_eq(drvc_salvage(c, &s, &e), DRV_OK, "%s", e.msg);
    cr_assert_eq(g.n, 40);
    cr_assert_eq(drvc_salvage(c, &s, &e), DRV_OK, "%s", e.msg);
    cr_assert_eq(g.n, 40, "nothing twice");
    drvc_close(c);
}

Test(driver_values, no_rings_no_records)
{
    drv *d = open_values(0);
    cr_assert_eq(drv_value_entries(d), 0);
    cr_assert_eq(post(d, 0, 0), DRV_EINVAL);
    drv_close(d);
    /* asking for rings later: the empty region is replaced by one with them */
    d = open_values(32);
    cr_assert_eq(drv_value_entries(d), 32);
    drv_value bad = { .pc = 4, .pid = 7, .kind = 9 };
    cr_assert_eq(drv_value_post(d, 0, &bad), DRV_EINVAL);
    cr_assert_eq(post(d, 2, 0), DRV_EINVAL);
    drv_close(d);
}

Test(driver_values, bad_geometry_refused)
{
    drv_params p = { .ncpus = 1, .value_entries = 100 };
    drv_error e;
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert(strstr(e.msg, "value_entries"), "%s", e.msg);
}

Test(driver_values, damaged_ring_reported)
{
    drv *d = open_values(16);
    cr_assert_eq(post(d, 0, 0), DRV_OK);
    drv_close(d);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    off_t size = lseek(fd, 0, SEEK_END);
    uint8_t *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    cr_assert_neq(m, MAP_FAILED);
    drv_shm_header *h = (drv_shm_header *)m;
    drv_vring_shm *q = (drv_vring_shm *)(m + h->value_offset);
    atomic_store(&q->head, 1000);          /* more than the ring holds */
    drv_error e;
    drvc *c = drvc_open(path, 0, &e);
    cr_assert(c, "%s", e.msg);
    got g = { 0 };
    drvc_set_value_sink(c, take, &g);
    drvc_sink s = { no_entries, NULL, NULL };
    int rc = drvc_salvage(c, &s, &e);
    cr_assert_eq(rc, DRV_ECORRUPT, "%d %s", rc, e.msg);
    cr_assert(strstr(e.msg, "value ring"), "%s", e.msg);
    cr_assert_eq(g.n, 0);
    drvc_close(c);
    /* and a header whose ring geometry does not add up is no region */
    atomic_store(&q->head, 1);
    h->value_ring_size += 4096;
    c = drvc_open(path, 0, &e);
    cr_assert_null(c);
    cr_assert_eq(e.code, DRV_ECORRUPT);
    munmap(m, (size_t)size);
    close(fd);
}
