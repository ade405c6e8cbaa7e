/*
 * profdb/profileme.c: ProfileMe profiles.  Bytes round-trip; every kind
 * of damage is an error naming the file, never a crash; merging into the
 * database twice and from two hosts adds the counts; a damaged stored
 * file is neither read as data nor written over.  And the driver's
 * record words (collector/driver_pm.c) round-trip and refuse nonsense.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "collector/driver_stacks.h"
#include "common/hash.h"
#include "common/le.h"
#include "profdb/profileme.h"
#include "tests/profdb/testutil.h"

#define KEY "00112233445566778899aabbccddeeff00112233"

static profdb_pm entry(uint64_t offset, uint64_t samples, int histories)
{
    profdb_pm e;
    memset(&e, 0, sizeof e);
    e.offset = offset;
    e.c[PDPM_SAMPLES] = samples;
    e.c[PDPM_WEIGHT2] = 2000 * samples;
    e.c[PDPM_LOADS] = samples / 2;
    e.c[PDPM_DMISS] = samples / 4;
    e.c[PDPM_LAT_ISSUE] = 3 * samples;
    e.hist[PDPM_L_ISSUE][profdb_pm_bin(3)] = samples;
    hotlist_init(&e.paths, offset);
    for (uint64_t s = 0; s < samples; s++)
        hotlist_add(&e.paths, (uint64_t)16 << 16 | (s % (uint64_t)histories));
    return e;
}

Test(profdb_profileme, bins)
{
    cr_assert_eq(profdb_pm_bin(0), 0);
    cr_assert_eq(profdb_pm_bin(1), 1);
    cr_assert_eq(profdb_pm_bin(2), 2);
    cr_assert_eq(profdb_pm_bin(3), 2);
    cr_assert_eq(profdb_pm_bin(4), 3);
    cr_assert_eq(profdb_pm_bin(1u << 30), PDPM_NBINS - 1);
    cr_assert_str_eq(profdb_pm_counter_name(PDPM_SLOTS_USED), "slots_used");
    cr_assert_null(profdb_pm_counter_name(PDPM_NCOUNTERS));
}

Test(profdb_profileme, round_trip_and_damage)
{
    profdb_pm in[3] = { entry(0x10, 40, 3), entry(0x14, 7, 1), entry(0x80, 100, 50) };
    uint8_t *d;
    size_t size;
    profdb_error e;
    cr_assert(profdb_pm_encode(in, 3, &d, &size, &e), "%s", e.msg);
    profdb_pm *out;
    size_t n;
    cr_assert(profdb_pm_decode(d, size, "x", &out, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(out[i].offset, in[i].offset);
        cr_assert_eq(memcmp(out[i].c, in[i].c, sizeof in[i].c), 0);
        cr_assert_eq(memcmp(out[i].hist, in[i].hist, sizeof in[i].hist), 0);
        cr_assert(out[i].paths.n == in[i].paths.n && out[i].paths.samples == in[i].paths.samples);
    }
    free(out);
    profdb_pm rev[2] = { in[1], in[0] };
    uint8_t *d2;
    size_t s2;
    cr_assert_not(profdb_pm_encode(rev, 2, &d2, &s2, &e));
    for (size_t cut = 0; cut < size; cut += cut < 64 ? 1 : 37) {
        cr_assert_not(profdb_pm_decode(d, cut, "x", &out, &n, &e), "cut at %zu", cut);
        cr_assert(!strncmp(e.msg, "x: ", 3), "%s", e.msg);
    }
    uint8_t *b = malloc(size);
    for (size_t at = 0; at < size; at += at < 700 ? 1 : 13) {
        memcpy(b, d, size);
        b[at] ^= 0x5a;
        if (profdb_pm_decode(b, size, "x", &out, &n, &e))
            free(out);
        else
            cr_assert(!strncmp(e.msg, "x: ", 3), "%s", e.msg);
        le_put64(b + 32, fnv1a(FNV1A_INIT, b + 40, size - 40));
        if (profdb_pm_decode(b, size, "x", &out, &n, &e)) {
            for (size_t i = 0; i < n; i++)
                cr_assert_null(hotlist_check(&out[i].paths));
            free(out);
        } else {
            cr_assert(!strncmp(e.msg, "x: ", 3), "%s", e.msg);
        }
    }
    memcpy(b, d, size);
    b[8] = 9;
    cr_assert_not(profdb_pm_decode(b, size, "x", &out, &n, &e));
    cr_assert_eq(e.code, PROFDB_EVERSION);
    free(b);
    free(d);
}

Test(profdb_profileme, merge_into_the_database)
{
    char *dir = tu_tmpdir();
    profdb_error e;
    profdb *db = profdb_open(dir, PROFDB_CREATE, &e);
    cr_assert(db, "%s", e.msg);
    profdb_pm a[2] = { entry(0x10, 40, 3), entry(0x20, 8, 2) };
    profdb_pm b[2] = { entry(0x10, 60, 3), entry(0x30, 5, 1) };
    cr_assert(profdb_pm_merge(db, "hostA", KEY, a, 2, &e), "%s", e.msg);
    cr_assert(profdb_pm_merge(db, "hostA", KEY, b, 1, &e), "%s", e.msg);
    cr_assert(profdb_pm_merge(db, "hostB", KEY, b + 1, 1, &e), "%s", e.msg);
    profdb_pm *v;
    size_t n;
    cr_assert(profdb_pm_sum(db, NULL, NULL, KEY, &v, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_eq(v[0].offset, 0x10);
    cr_assert_eq(v[0].c[PDPM_SAMPLES], 100);
    cr_assert_eq(v[0].c[PDPM_WEIGHT2], 200000);
    cr_assert_eq(v[0].c[PDPM_DMISS], 25);
    cr_assert_eq(v[0].hist[PDPM_L_ISSUE][2], 100);
    cr_assert_eq(v[0].paths.samples, 100);
    cr_assert_eq(v[2].offset, 0x30);
    free(v);
    cr_assert(profdb_pm_sum(db, NULL, "hostB", KEY, &v, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 1);
    free(v);
    cr_assert_not(profdb_pm_sum(db, NULL, NULL, "ffff", &v, &n, &e));
    cr_assert_eq(e.code, PROFDB_ENOENT);
    char epoch[PROFDB_EPOCH_MAX], path[1024];
    cr_assert(profdb_current_epoch(db, epoch, &e));
    snprintf(path, sizeof path, "%s/%s/hostA/%s.pm", dir, epoch, KEY);
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, 60, SEEK_SET);
    fputc(0xff, f);
    fclose(f);
    struct stat before, after;
    cr_assert_eq(stat(path, &before), 0);
    /* set aside as NAME.corrupt-TIME (bytes kept), and the merge starts anew */
    cr_assert(profdb_pm_merge(db, "hostA", KEY, a, 1, &e), "%s", e.msg);
    cr_assert_eq(stat(path, &after), 0);
    cr_assert_neq(before.st_ino, after.st_ino);
    ino_t aside;
    cr_assert_eq(tu_set_aside(path, &aside), 1);
    cr_assert_eq(aside, before.st_ino);
    cr_assert(profdb_pm_sum(db, NULL, "hostA", KEY, &v, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 1);
    free(v);
    profdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

Test(profdb_profileme, driver_record_words)
{
    drv_pm r = { .pc = 0x120001234, .ea = 0x11ff0000, .flags = DRV_PM_LOAD | DRV_PM_DMISS | DRV_PM_PAIRED,
                 .hist = 0xa5a5, .hist_len = 16, .level = 3, .fetch_issue = 2, .head = 7, .issue_ready = 120,
                 .issue_width = 4, .window = 64, .distance = 9, .period = 1000 };
    uint64_t w[DRV_PM_WORDS];
    drv_pm_encode(&r, w);
    drv_stack_rec rec = { .event = DRV_PM_EVENT, .end = DRV_PM_VERSION, .n = DRV_PM_WORDS, .pc = w };
    drv_pm o;
    cr_assert(drv_pm_decode(&rec, &o));
    cr_assert(o.pc == r.pc && o.ea == r.ea && o.flags == r.flags && o.hist == r.hist && o.hist_len == 16 &&
              o.level == 3 && o.issue_ready == 120 && o.window == 64 && o.distance == 9 && o.period == 1000);
    rec.n = 5;
    cr_assert_not(drv_pm_decode(&rec, &o), "too few words");
    rec.n = DRV_PM_WORDS;
    rec.end = 2;
    cr_assert_not(drv_pm_decode(&rec, &o), "another version");
    rec.end = DRV_PM_VERSION;
    w[2] |= 1u << 20;
    cr_assert_not(drv_pm_decode(&rec, &o), "an unknown flag");
}
