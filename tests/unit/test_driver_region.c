/*
 * collector/driver: the region around the sample path.  Header checks
 * (every error code, and random damage that must never crash), who may
 * attach, resuming and replacing a region, notices, a refusing sink,
 * salvage after the producer has gone.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/driver.h"
#include "collector/driver_shm.h"
#include "tests/unit/scratch.h"

static char path[96];

static void setup(void)
{
    scratch_make_shm();
    snprintf(path, sizeof path, "%s/region", scratch_dir);
}

TestSuite(driver_region, .init = setup, .fini = scratch_remove);

static drv *open_small(unsigned ncpus, drv_error *e)
{
    drv_params p = { .ncpus = ncpus, .table_entries = 64, .buffer_entries = 16 };
    return drv_open(path, &p, e);
}

static uint8_t *read_file(size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*n);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void write_file(const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

static int count_entries(void *ctx, const drv_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        *(uint64_t *)ctx += b->e[i].count;
    return 0;
}

static int refuse_entries(void *ctx, const drv_batch *b) { return 1; }

Test(driver_region, header_describes_the_layout)
{
    drv_error e = { 0 };
    drv *d = open_small(3, &e);
    cr_assert(d, "%s", e.msg);
    drv_close(d);
    size_t n;
    uint8_t *b = read_file(&n);
    const drv_shm_header *h = (const void *)b;
    cr_assert_eq(memcmp(h->magic, "cpo-drv\n", 8), 0);
    cr_assert_eq(h->version, 1);
    cr_assert_eq(h->ncpus, 3);
    cr_assert_eq(h->table_entries, 64);
    cr_assert_eq(h->buffer_entries, 16);
    cr_assert_eq(h->cpu_offset, 4096);
    cr_assert_eq(h->cpu_size, 4096);   /* 256 + (64 + 32) * 16 rounds up to a page */
    cr_assert_eq(h->notice_offset, 4096 + 3 * 4096);
    cr_assert_eq(h->total_size, n);
    cr_assert_eq(drv_check_header(b, n, n, &e), DRV_OK, "%s", e.msg);
    free(b);
}

/* Damage one field, expect one error code. */
static void damaged(size_t off, const void *val, size_t len, int code, const char *word)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    cr_assert(d);
    drv_close(d);
    size_t n;
    uint8_t *b = read_file(&n);
    memcpy(b + off, val, len);
    cr_assert_eq(drv_check_header(b, n, n, &e), code, "offset %zu: got %d (%s)", off, e.code, e.msg);
    cr_assert(strstr(e.msg, word), "'%s' lacks '%s'", e.msg, word);
    /* the same through drvc_open, with the path in front */
    write_file(b, n);
    drvc *c = drvc_open(path, 0, &e);
    cr_assert_null(c);
    cr_assert_eq(e.code, code);
    cr_assert(strncmp(e.msg, path, strlen(path)) == 0, "%s", e.msg);
    free(b);
}

Test(driver_region, bad_magic) { damaged(0, "cpo-drX\n", 8, DRV_EFORMAT, "magic"); }
Test(driver_region, other_byte_order)
{
    uint32_t v = 0x04030201;
    damaged(offsetof(drv_shm_header, endian), &v, 4, DRV_EFORMAT, "byte order");
}
Test(driver_region, other_version)
{
    uint32_t v = 2;
    damaged(offsetof(drv_shm_header, version), &v, 4, DRV_EVERSION, "version 2");
}
Test(driver_region, zero_cpus)
{
    uint32_t v = 0;
    damaged(offsetof(drv_shm_header, ncpus), &v, 4, DRV_ECORRUPT, "ncpus");
}
Test(driver_region, table_not_power_of_two)
{
    uint32_t v = 96;
    damaged(offsetof(drv_shm_header, table_entries), &v, 4, DRV_ECORRUPT, "table_entries");
}
Test(driver_region, offsets_disagree)
{
    uint64_t v = 8192;
    damaged(offsetof(drv_shm_header, cpu_offset), &v, 8, DRV_ECORRUPT, "offsets");
}
Test(driver_region, more_cpus_than_the_file_holds)
{
    uint32_t v = 2;
    damaged(offsetof(drv_shm_header, ncpus), &v, 4, DRV_ECORRUPT, "offsets");
}
Test(driver_region, notice_ring_inconsistent)
{
    uint64_t v = 12;
    damaged(offsetof(drv_shm_header, notice_head), &v, 8, DRV_ECORRUPT, "notice ring");
}

Test(driver_region, truncated_and_foreign_files)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    drv_close(d);
    cr_assert_eq(truncate(path, 20000), 0);
    cr_assert_null(drvc_open(path, 0, &e));
    cr_assert_eq(e.code, DRV_ECORRUPT);
    cr_assert(strstr(e.msg, "file is 20000 bytes"), "%s", e.msg);
    cr_assert_eq(truncate(path, 100), 0);
    cr_assert_null(drvc_open(path, 0, &e));
    cr_assert_eq(e.code, DRV_EFORMAT);
    /* a producer must not take over a file that is not a region */
    write_file((const uint8_t *)"hello\n", 6);
    drv_params p = { .ncpus = 1 };
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert_eq(e.code, DRV_EFORMAT);
    size_t n;
    free(read_file(&n));
    cr_assert_eq(n, 6, "the foreign file was left alone");
    cr_assert_null(drvc_open("/nonexistent/region", 0, &e));
    cr_assert_eq(e.code, DRV_EIO);
    cr_assert(strstr(e.msg, "/nonexistent/region"));
}

/* Random damage to the header: an error or OK, never a crash or a hang. */
Test(driver_region, random_header_damage)
{
    drv_error e = { 0 };
    drv *d = open_small(2, &e);
    drv_close(d);
    size_t n;
    uint8_t *orig = read_file(&n), *b = malloc(n);
    uint64_t s = 12345;
    for (int i = 0; i < 20000; i++) {
        memcpy(b, orig, n);
        for (int k = 0; k < 1 + i % 4; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            b[(s >> 33) % 280] ^= (uint8_t)(1u << ((s >> 20) & 7));
        }
        int rc = drv_check_header(b, n, n, &e);
        cr_assert(rc == DRV_OK || rc == DRV_EFORMAT || rc == DRV_EVERSION || rc == DRV_ECORRUPT);
    }
    free(orig);
    free(b);
}

Test(driver_region, bad_parameters_are_named)
{
    drv_error e = { 0 };
    drv_params p = { .ncpus = 0 };
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert(strstr(e.msg, "ncpus"), "%s", e.msg);
    p = (drv_params){ .ncpus = 1, .table_entries = 100 };
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert(strstr(e.msg, "table_entries"), "%s", e.msg);
    p = (drv_params){ .ncpus = 1, .buffer_entries = 3 };
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert(strstr(e.msg, "buffer_entries"), "%s", e.msg);
    p = (drv_params){ .ncpus = 1, .policy = 7 };
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert(strstr(e.msg, "policy"), "%s", e.msg);
    p = (drv_params){ .ncpus = 1, .max_count = 1 };
    cr_assert_null(drv_open(path, &p, &e));
    cr_assert(strstr(e.msg, "max_count"), "%s", e.msg);
    cr_assert_null(drv_open("", &p, &e));
    cr_assert_eq(e.code, DRV_EINVAL);
    cr_assert_eq(access(path, F_OK), -1, "nothing was created");
}

Test(driver_region, one_producer_one_consumer)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    cr_assert(d);
    cr_assert_null(open_small(1, &e));   /* waits 2 s for the lock, then gives up */
    cr_assert_eq(e.code, DRV_EBUSY);
    cr_assert(strstr(e.msg, "another producer"), "%s", e.msg);
    cr_assert_not(drv_consumer_alive(d));
    drvc *c = drvc_open(path, 0, &e);
    cr_assert(c, "%s", e.msg);
    cr_assert(drv_consumer_alive(d));
    cr_assert(drvc_producer_alive(c));
    cr_assert_null(drvc_open(path, 0, &e));
    cr_assert_eq(e.code, DRV_EBUSY);
    drvc *ro = drvc_open(path, DRVC_READONLY, &e);   /* readers are always welcome */
    cr_assert(ro, "%s", e.msg);
    drvc_sink s = { count_entries, NULL, &(uint64_t){ 0 } };
    cr_assert_eq(drvc_collect(ro, 0, &s, &e), DRV_EINVAL);
    cr_assert_eq(drvc_salvage(c, &s, &e), DRV_EBUSY);
    drv_close(d);
    cr_assert_not(drvc_producer_alive(c));
    cr_assert_not(drvc_producer_alive(ro));
    drvc_close(ro);
    drvc_close(c);
}

Test(driver_region, resume_keeps_everything)
{
    drv_error e = { 0 };
    drv *d = open_small(2, &e);
    for (int i = 0; i < 500; i++)
        drv_sample(d, (unsigned)i & 1, 4, 0x1000 + 4 * (uint64_t)(i % 50), 0);
    drv_counters before;
    drv_counters_get(d, -1, &before);
    drv_close(d);
    drv_params p = { .ncpus = 2 };   /* sizes 0: take the region's */
    d = drv_open(path, &p, &e);
    cr_assert(d, "%s", e.msg);
    drv_counters after;
    drv_counters_get(d, -1, &after);
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0);
    for (int i = 0; i < 500; i++)
        drv_sample(d, (unsigned)i & 1, 4, 0x1000 + 4 * (uint64_t)(i % 50), 0);
    drv_close(d);
    drvc *c = drvc_open(path, 0, &e);
    uint64_t total = 0;
    drvc_sink s = { count_entries, NULL, &total };
    cr_assert_eq(drvc_salvage(c, &s, &e), DRV_OK, "%s", e.msg);
    cr_assert_eq(total, 1000);
    drvc_close(c);
}

Test(driver_region, other_shape_replaces_only_an_empty_region)
{
    drv_error e = { 0 };
    drv *d = open_small(2, &e);
    drv_sample(d, 0, 1, 0x1000, 0);
    drv_close(d);
    drv *d4 = open_small(4, &e);
    cr_assert_null(d4);
    cr_assert_eq(e.code, DRV_EGEOMETRY);
    cr_assert(strstr(e.msg, "undrained"), "%s", e.msg);
    drvc *c = drvc_open(path, 0, &e);
    uint64_t total = 0;
    drvc_sink s = { count_entries, NULL, &total };
    cr_assert_eq(drvc_salvage(c, &s, &e), DRV_OK);
    cr_assert_eq(total, 1);
    d4 = open_small(4, &e);                       /* drained now: replaced */
    cr_assert(d4, "%s", e.msg);
    cr_assert_eq(drv_ncpus(d4), 4);
    cr_assert_eq(drvc_collect(c, 0, &s, &e), DRV_ERETIRED);
    drvc_close(c);
    c = drvc_open(path, 0, &e);
    cr_assert_eq(drvc_ncpus(c), 4);
    drvc_close(c);
    drv_close(d4);
}

/* ---- notices ---------------------------------------------------------------- */

typedef struct {
    int n;
    drv_notice last;
    char path[DRV_MAX_PATH + 1];
    uint64_t next_seq;
    int refuse_at;
} notes;

static int note(void *ctx, const drv_notice *n)
{
    notes *x = ctx;
    if (x->refuse_at && x->n + 1 == x->refuse_at)
        return 1;
    cr_assert_eq(n->seq, x->next_seq);
    x->next_seq++;
    x->n++;
    x->last = *n;
    strcpy(x->path, n->path);
    return 0;
}

Test(driver_region, notices_in_order)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    drvc *c = drvc_open(path, 0, &e);
    notes *x = calloc(1, sizeof *x);
    drvc_sink s = { count_entries, note, x };
    uint8_t bid[20];
    for (int i = 0; i < 20; i++)
        bid[i] = (uint8_t)(i * 7);
    cr_assert_eq(drv_notice_fork(d, 1, 2), DRV_OK);
    cr_assert_eq(drv_notice_exec(d, 2), DRV_OK);
    cr_assert_eq(drv_notice_load(d, 2, 0x120000000, 0x4000, 0, "/usr/bin/lua", bid, 20), DRV_OK);
    cr_assert_eq(drvc_notices(c, &s, &e), 3);
    cr_assert_eq(x->last.type, DRV_NOTICE_LOAD);
    cr_assert_eq(x->last.pid, 2);
    cr_assert_eq(x->last.base, 0x120000000);
    cr_assert_eq(x->last.size, 0x4000);
    cr_assert_eq(x->last.build_id_len, 20);
    cr_assert_eq(memcmp(x->last.build_id, bid, 20), 0);
    cr_assert_str_eq(x->path, "/usr/bin/lua");
    cr_assert_eq(drv_notice_exit(d, 2, 256), DRV_OK);
    cr_assert_eq(drvc_notices(c, &s, &e), 1);
    cr_assert_eq(x->last.type, DRV_NOTICE_EXIT);
    cr_assert_eq(x->last.status, 256);
    cr_assert_eq(drv_notice_fork(d, 7, 8), DRV_OK);
    cr_assert_eq(drvc_notices(c, &s, &e), 1);
    cr_assert_eq(x->last.ppid, 7);
    cr_assert_eq(x->last.pid, 8);
    /* bad notices are refused without touching the ring */
    char longp[DRV_MAX_PATH + 2];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = 0;
    cr_assert_eq(drv_notice_load(d, 2, 0, 1, 0, longp, NULL, 0), DRV_EINVAL);
    longp[DRV_MAX_PATH] = 0;
    cr_assert_eq(drv_notice_load(d, 2, 0, 1, 0, longp, NULL, 0), DRV_OK);
    cr_assert_eq(drv_notice_load(d, 2, 0, 1, 0, "/x", bid, 65), DRV_EINVAL);
    cr_assert_eq(drv_notice_exit(d, DRV_MAX_PID + 1, 0), DRV_EINVAL);
    cr_assert_eq(drvc_notices(c, &s, &e), 1);
    cr_assert_eq(strlen(x->path), DRV_MAX_PATH);
    drvc_close(c);
    drv_close(d);
    free(x);
}

Test(driver_region, notice_ring_wraps_and_fills)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);   /* 256 KiB ring */
    drvc *c = drvc_open(path, 0, &e);
    notes *x = calloc(1, sizeof *x);
    drvc_sink s = { count_entries, note, x };
    char p[300];
    int posted = 0;
    for (int round = 0; round < 40; round++) {
        for (int i = 0; i < 97; i++) {
            snprintf(p, sizeof p, "/lib/%0*d.so", 1 + (round * 97 + i) % 250, i);
            cr_assert_eq(drv_notice_load(d, 5, 0x1000, 0x1000, 0, p, NULL, 0), DRV_OK);
            posted++;
        }
        cr_assert_eq(drvc_notices(c, &s, &e), 97, "%s", e.msg);
        cr_assert_str_eq(x->path, p);
    }
    /* nobody reading: the ring fills, and the rest is refused and counted */
    int lost = 0;
    for (int i = 0; i < 5000; i++)
        lost += drv_notice_load(d, 5, 0, 1, 0, "/lib/a-rather-long-library-name.so", NULL, 0) == DRV_DROPPED;
    cr_assert_gt(lost, 0);
    drv_counters k;
    drv_counters_get(d, -1, &k);
    cr_assert_eq(k.notices_lost, (uint64_t)lost);
    cr_assert_eq(k.notices, (uint64_t)posted + 5000 - (uint64_t)lost);
    cr_assert_eq(drvc_notices(c, &s, &e), 5000 - lost);
    cr_assert_eq(drv_notice_exit(d, 5, 0), DRV_OK);   /* room again */
    drvc_close(c);
    drv_close(d);
    free(x);
}

Test(driver_region, corrupt_notice_is_reported)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    drv_notice_exit(d, 3, 0);
    drv_close(d);
    int fd = open(path, O_RDWR);
    struct stat st;
    fstat(fd, &st);
    uint16_t bad = 77;   /* the type of the first record */
    cr_assert_eq(pwrite(fd, &bad, 2, st.st_size - 256 * 1024 + 4), 2);
    close(fd);
    drvc *c = drvc_open(path, 0, &e);
    notes *x = calloc(1, sizeof *x);
    drvc_sink s = { count_entries, note, x };
    cr_assert_eq(drvc_notices(c, &s, &e), DRV_ECORRUPT);
    cr_assert(strstr(e.msg, "unknown type"), "%s", e.msg);
    drvc_close(c);
    free(x);
}

Test(driver_region, refused_data_is_kept)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    drvc *c = drvc_open(path, 0, &e);
    for (uint64_t i = 0; i < 64 + 16; i++)   /* fills the table, then one buffer */
        drv_sample(d, 0, 1, 0x1000 + 4 * i, 0);
    notes *x = calloc(1, sizeof *x);
    x->refuse_at = 1;
    drv_notice_exit(d, 9, 0);
    drvc_sink s = { refuse_entries, note, x };
    cr_assert_eq(drvc_collect(c, 0, &s, &e), DRV_ESINK);   /* the notice goes first */
    cr_assert(strstr(e.msg, "notice 0"), "%s", e.msg);
    x->refuse_at = 0;
    cr_assert_eq(drvc_collect(c, 0, &s, &e), DRV_ESINK);
    cr_assert(strstr(e.msg, "buffer 0"), "%s", e.msg);
    cr_assert_eq(x->n, 1);
    uint64_t total = 0;
    drvc_sink ok = { count_entries, note, x };
    ok.ctx = &total;
    ok.notice = NULL;
    cr_assert_geq(drvc_collect(c, 0, &ok, &e), 1);
    cr_assert_geq(total, 16);
    drvc_close(c);
    drv_close(d);
    free(x);
}

Test(driver_region, flush_of_a_dead_producer_salvages)
{
    drv_error e = { 0 };
    drv *d = open_small(2, &e);
    for (int i = 0; i < 300; i++)
        drv_sample(d, (unsigned)i % 2, 1, 0x1000 + 4 * (uint64_t)(i % 120), 0);
    drv_close(d);
    drvc *c = drvc_open(path, 0, &e);
    uint64_t total = 0;
    drvc_sink s = { count_entries, NULL, &total };
    cr_assert_eq(drvc_flush(c, 1000, &s, &e), DRV_OK, "%s", e.msg);
    cr_assert_eq(total, 300);
    drv_counters k;
    drvc_counters(c, -1, &k);
    cr_assert_gt(k.salvaged_entries, 0, "the tables were salvaged");
    total = 0;
    cr_assert_eq(drvc_salvage(c, &s, &e), DRV_OK);
    cr_assert_eq(total, 0, "nothing is delivered twice");
    drvc_close(c);
}

Test(driver_region, strerror_and_counter_names)
{
    cr_assert_str_eq(drv_strerror(DRV_ETIMEDOUT), "timed out");
    cr_assert_str_eq(drv_counter_names[0], "samples");
    cr_assert_str_eq(drv_counter_names[DRV_NCOUNTERS - 1], "values_taken");
}

/* ---- random damage below the header: errors, never crashes ----------------- */

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static int any_notice(void *ctx, const drv_notice *n)
{
    (*(int *)ctx)++;
    return 0;
}

Test(driver_region, random_notice_damage)
{
    drv_error e = { 0 };
    drv_params p = { .ncpus = 1, .table_entries = 64, .buffer_entries = 16, .notice_bytes = 16384 };
    drv *d = drv_open(path, &p, &e);
    cr_assert(d, "%s", e.msg);
    for (int i = 0; i < 60; i++)   /* wraps the 16 KiB ring: a PAD record in it */
        drv_notice_load(d, (uint32_t)i, 0x1000, 0x1000, 0, "/usr/lib/alpha-linux-gnu/libfoo.so.1",
                        (const uint8_t *)"0123456789abcdef0123", 20);
    drvc *c = drvc_open(path, 0, &e);
    int seen = 0;
    drvc_sink s = { count_entries, any_notice, &seen };
    cr_assert_eq(drvc_notices(c, &s, &e), 60);
    drvc_close(c);
    for (int i = 0; i < 60; i++)
        drv_notice_load(d, (uint32_t)i, 0x1000, 0x1000, 0, "/lib/x.so", NULL, 0);
    drv_close(d);
    size_t n;
    uint8_t *orig = read_file(&n), *b = malloc(n);
    const size_t ring = n - 16384;
    uint64_t rs = 99;
    for (int it = 0; it < 1500; it++) {
        memcpy(b, orig, n);
        for (int k = 0; k < 1 + it % 3; k++) {
            size_t at = ring + lcg(&rs) % 16384;
            if (it % 7 == 0)   /* sometimes the ring pointers instead */
                at = offsetof(drv_shm_header, notice_head) + lcg(&rs) % 8;
            b[at] ^= (uint8_t)(1u << (lcg(&rs) & 7));
        }
        write_file(b, n);
        c = drvc_open(path, 0, &e);
        if (!c) {
            cr_assert_eq(e.code, DRV_ECORRUPT, "%s", e.msg);
            continue;
        }
        seen = 0;
        int rc = drvc_notices(c, &s, &e);
        cr_assert(rc >= 0 || rc == DRV_ECORRUPT, "rc %d: %s", rc, e.msg);
        drvc_close(c);
    }
    free(orig);
    free(b);
}

Test(driver_region, random_cpu_state_damage)
{
    drv_error e = { 0 };
    drv_params p = { .ncpus = 1, .table_entries = 64, .buffer_entries = 16, .notice_bytes = 16384 };
    drv *d = drv_open(path, &p, &e);
    for (uint64_t i = 0; i < 100; i++)
        drv_sample(d, 0, 3, 0x1000 + 8 * i, 0);
    drv_close(d);
    size_t n;
    uint8_t *orig = read_file(&n), *b = malloc(n);
    uint64_t rs = 7;
    for (int it = 0; it < 1500; it++) {
        memcpy(b, orig, n);
        for (int k = 0; k < 1 + it % 3; k++) {
            size_t at = 4096 + lcg(&rs) % 256;   /* the CPU block's state lines */
            b[at] ^= (uint8_t)(1u << (lcg(&rs) & 7));
        }
        write_file(b, n);
        drvc *c = drvc_open(path, 0, &e);
        cr_assert(c, "%s", e.msg);
        uint64_t total = 0;
        drvc_sink s = { count_entries, NULL, &total };
        int rc = drvc_collect(c, 0, &s, &e);
        cr_assert(rc >= 0 || rc == DRV_ECORRUPT, "rc %d: %s", rc, e.msg);
        rc = drvc_salvage(c, &s, &e);
        cr_assert(rc == DRV_OK || rc == DRV_ECORRUPT, "rc %d: %s", rc, e.msg);
        drvc_close(c);
        if (it % 50 == 0) {   /* and a producer resuming it */
            write_file(b, n);
            d = drv_open(path, &p, &e);
            if (d) {
                drv_sample(d, 0, 3, 0x1000, 0);
                drv_close(d);
            } else {
                cr_assert_eq(e.code, DRV_ECORRUPT, "%s", e.msg);
            }
        }
    }
    free(orig);
    free(b);
}

Test(driver_region, resume_refuses_corrupt_cpu_state)
{
    drv_error e = { 0 };
    drv *d = open_small(1, &e);
    drv_close(d);
    int fd = open(path, O_RDWR);
    uint32_t bad = 7;
    cr_assert_eq(pwrite(fd, &bad, 4, 4096 + offsetof(drv_cpu_shm, cur)), 4);
    close(fd);
    cr_assert_null(open_small(1, &e));
    cr_assert_eq(e.code, DRV_ECORRUPT);
    cr_assert(strstr(e.msg, "cpu 0: bad cur"), "%s", e.msg);
}
