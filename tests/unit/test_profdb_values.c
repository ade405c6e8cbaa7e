/*
 * profdb/values.c: value profiles.  Bytes round-trip; every kind of
 * damage is an error naming the file, never a crash; merging into the
 * database twice and from two hosts gives the lists merged; a damaged
 * stored file is neither read as data nor written over.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hash.h"
#include "common/le.h"
#include "profdb/values.h"
#include "tests/profdb/testutil.h"

#define KEY "00112233445566778899aabbccddeeff00112233"

static profdb_vlist list(uint64_t offset, int kind, uint64_t seed, int nvalues, int times)
{
    profdb_vlist l = { .offset = offset, .kind = kind };
    hotlist_init(&l.h, seed);
    for (int t = 0; t < times; t++)
        for (int i = 0; i < nvalues; i++)
            hotlist_add(&l.h, 0x1000 + (uint64_t)i * (uint64_t)(i + 1));
    return l;
}

Test(profdb_values, round_trip_and_damage)
{
    profdb_vlist in[3] = { list(0x10, PROFDB_VK_RESULT, 1, 5, 3), list(0x10, PROFDB_VK_TARGET, 2, 3, 10),
                           list(0x40, PROFDB_VK_LATENCY, 3, 100, 2) };
    uint8_t *d;
    size_t size;
    profdb_error e;
    cr_assert(profdb_values_encode(in, 3, &d, &size, &e), "%s", e.msg);
    profdb_vlist *out;
    size_t n;
    cr_assert(profdb_values_decode(d, size, "x", &out, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(out[i].offset, in[i].offset);
        cr_assert_eq(out[i].kind, in[i].kind);
        const hotlist *x = &out[i].h, *y = &in[i].h;
        cr_assert(x->tau == y->tau && x->samples == y->samples && x->rng == y->rng && x->n == y->n);
        for (uint32_t k = 0; k < x->n; k++)
            cr_assert(x->v[k].value == y->v[k].value && x->v[k].count == y->v[k].count &&
                      x->v[k].pieces == y->v[k].pieces);
    }
    free(out);
    /* unsorted input refused */
    profdb_vlist rev[2] = { in[1], in[0] };
    uint8_t *d2;
    size_t s2;
    cr_assert_not(profdb_values_encode(rev, 2, &d2, &s2, &e));
    /* every truncation is an error naming the input */
    for (size_t cut = 0; cut < size; cut++) {
        cr_assert_not(profdb_values_decode(d, cut, "x", &out, &n, &e), "cut at %zu", cut);
        cr_assert(!strncmp(e.msg, "x: ", 3), "%s", e.msg);
    }
    /* a flipped byte: the checksum, or with it recomputed, the contents */
    uint8_t *b = malloc(size);
    for (size_t at = 0; at < size; at++) {
        memcpy(b, d, size);
        b[at] ^= 0x5a;
        if (profdb_values_decode(b, size, "x", &out, &n, &e))
            free(out);
        else
            cr_assert(!strncmp(e.msg, "x: ", 3), "%s", e.msg);
        le_put64(b + 32, fnv1a(FNV1A_INIT, b + 40, size - 40));
        if (profdb_values_decode(b, size, "x", &out, &n, &e)) {
            for (size_t i = 0; i < n; i++)
                cr_assert_null(hotlist_check(&out[i].h));
            free(out);
        }
    }
    memcpy(b, d, size);
    b[9] = 9;
    cr_assert_not(profdb_values_decode(b, size, "x", &out, &n, &e));
    cr_assert_eq(e.code, PROFDB_EVERSION);
    free(b);
    free(d);
}

Test(profdb_values, merge_into_the_database)
{
    char *dir = tu_tmpdir();
    profdb_error e;
    profdb *db = profdb_open(dir, PROFDB_CREATE, &e);
    cr_assert(db, "%s", e.msg);
    profdb_vlist a[2] = { list(0x10, PROFDB_VK_TARGET, 1, 3, 10), list(0x20, PROFDB_VK_RESULT, 2, 2, 5) };
    profdb_vlist b[2] = { list(0x10, PROFDB_VK_TARGET, 3, 3, 20), list(0x30, PROFDB_VK_ADDRESS, 4, 1, 7) };
    cr_assert(profdb_values_merge(db, "hostA", KEY, a, 2, &e), "%s", e.msg);
    cr_assert(profdb_values_merge(db, "hostA", KEY, b, 1, &e), "%s", e.msg);
    cr_assert(profdb_values_merge(db, "hostB", KEY, b + 1, 1, &e), "%s", e.msg);
    profdb_vlist *v;
    size_t n;
    cr_assert(profdb_values_sum(db, NULL, NULL, KEY, &v, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_eq(v[0].offset, 0x10);
    cr_assert_eq(v[0].h.samples, 90, "30 + 60 target samples");
    cr_assert_eq(v[0].h.n, 3);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(v[0].h.v[i].count, 30);
    cr_assert_eq(v[1].h.samples, 10);
    cr_assert_eq(v[2].kind, PROFDB_VK_ADDRESS);
    free(v);
    cr_assert(profdb_values_sum(db, NULL, "hostB", KEY, &v, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 1);
    free(v);
    cr_assert_not(profdb_values_sum(db, NULL, NULL, "ffff", &v, &n, &e));
    /* a damaged stored file */
    char epoch[PROFDB_EPOCH_MAX], path[1024];
    cr_assert(profdb_current_epoch(db, epoch, &e));
    snprintf(path, sizeof path, "%s/%s/hostA/%s.values", dir, epoch, KEY);
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, 50, SEEK_SET);
    fputc(0xff, f);
    fclose(f);
    struct stat before, after;
    cr_assert_eq(stat(path, &before), 0);
    /* set aside as NAME.corrupt-TIME (bytes kept), and the merge starts anew */
    cr_assert(profdb_values_merge(db, "hostA", KEY, a, 1, &e), "%s", e.msg);
    cr_assert_eq(stat(path, &after), 0);
    cr_assert_neq(before.st_ino, after.st_ino);
    ino_t aside;
    cr_assert_eq(tu_set_aside(path, &aside), 1);
    cr_assert_eq(aside, before.st_ino);
    cr_assert(profdb_values_sum(db, NULL, "hostA", KEY, &v, &n, &e), "%s", e.msg);
    cr_assert_eq(n, 1);
    free(v);
    /* damaged again within the second: the first one set aside keeps its name */
    cr_assert((f = fopen(path, "r+b")));
    fseek(f, 50, SEEK_SET);
    fputc(0xfe, f);
    fclose(f);
    cr_assert(profdb_values_merge(db, "hostA", KEY, a, 1, &e), "%s", e.msg);
    cr_assert_eq(tu_set_aside(path, &aside), 2);
    profdb_close(db);
    tu_rmrf(dir);
    free(dir);
}
