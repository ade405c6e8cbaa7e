/*
 * profdb/hotlist.c: concise samples.  Exact while the values fit; on
 * skewed streams far larger than the list, the top values and their
 * shares as the issue asks of value profiles (the top one right, shares
 * within 5 points); merging two halves gives what one whole stream gives;
 * the same stream, the same list; damaged lists are caught.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "profdb/hotlist.h"

Test(hotlist, exact_while_it_fits)
{
    hotlist h;
    hotlist_init(&h, 1);
    for (int i = 0; i < 1000; i++)
        hotlist_add(&h, (uint64_t)(i % 10) * 8);
    cr_assert_eq(h.tau, 1);
    hot_value top[HOTLIST_MAX];
    double share[HOTLIST_MAX];
    cr_assert_eq(hotlist_top(&h, top, share, HOTLIST_MAX), 10);
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(top[i].count, 100);
        cr_assert_eq(top[i].value, (uint64_t)i * 8, "ties by value");
        cr_assert_float_eq(share[i], 0.1, 1e-12);
    }
    cr_assert_null(hotlist_check(&h));
}

/* A Zipf-like stream over many values: value k has weight 1/(k+1)^1.5. */
static uint64_t draw(uint64_t *s, const double *cum, int n)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = (double)(*s >> 11) / 9007199254740992.0 * cum[n - 1];
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cum[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint64_t)lo;
}

#define NV 2000
#define NS 200000

static void zipf(double *cum)
{
    double c = 0;
    for (int k = 0; k < NV; k++)
        cum[k] = c += 1 / pow(k + 1, 1.5);
}

static void check_top(const hotlist *h, const double *cum)
{
    hot_value top[3];
    double share[3];
    cr_assert_eq(hotlist_top(h, top, share, 3), 3);
    cr_assert_eq(top[0].value, 0, "the top value");
    for (int i = 0; i < 3; i++) {
        double truth = (cum[top[i].value] - (top[i].value ? cum[top[i].value - 1] : 0)) / cum[NV - 1];
        cr_assert(fabs(share[i] - truth) < 0.05, "value %lu: share %.3f, truth %.3f", (unsigned long)top[i].value,
                  share[i], truth);
    }
    cr_assert_null(hotlist_check(h));
}

Test(hotlist, skewed_stream)
{
    static double cum[NV];
    zipf(cum);
    hotlist h;
    hotlist_init(&h, 7);
    uint64_t s = 1;
    for (int i = 0; i < NS; i++)
        hotlist_add(&h, draw(&s, cum, NV));
    cr_assert_eq(h.samples, NS);
    cr_assert_gt(h.tau, 1, "the stream did not fit");
    check_top(&h, cum);
}

Test(hotlist, merged_halves)
{
    static double cum[NV];
    zipf(cum);
    hotlist a, b;
    hotlist_init(&a, 3);
    hotlist_init(&b, 4);
    uint64_t s = 99;
    for (int i = 0; i < NS / 2; i++)
        hotlist_add(&a, draw(&s, cum, NV));
    for (int i = 0; i < NS / 4; i++)     /* b sees less: its tau is lower */
        hotlist_add(&b, draw(&s, cum, NV));
    hotlist_merge(&a, &b);
    cr_assert_eq(a.samples, NS / 2 + NS / 4);
    check_top(&a, cum);
    /* merging into the one with the smaller tau works the same */
    hotlist c;
    hotlist_init(&c, 5);
    for (int i = 0; i < 100; i++)
        hotlist_add(&c, 0);
    hotlist_merge(&c, &a);
    cr_assert_eq(c.samples, NS / 2 + NS / 4 + 100);
    check_top(&c, cum);
}

Test(hotlist, same_stream_same_list)
{
    hotlist a, b;
    hotlist_init(&a, 11);
    hotlist_init(&b, 11);
    for (uint64_t i = 0; i < 50000; i++) {
        hotlist_add(&a, i * i % 977);
        hotlist_add(&b, i * i % 977);
    }
    cr_assert(a.tau == b.tau && a.n == b.n && a.rng == b.rng);
    for (uint32_t i = 0; i < a.n; i++)
        cr_assert(a.v[i].value == b.v[i].value && a.v[i].count == b.v[i].count);
}

Test(hotlist, damage_is_caught)
{
    hotlist h;
    hotlist_init(&h, 1);
    hotlist_add(&h, 1);
    hotlist_add(&h, 2);
    hotlist d = h;
    d.tau = 0.5;
    cr_assert_not_null(hotlist_check(&d));
    d = h;
    d.n = HOTLIST_MAX + 1;
    cr_assert_not_null(hotlist_check(&d));
    d = h;
    d.v[1].value = 1;
    cr_assert_not_null(hotlist_check(&d));
    d = h;
    d.v[0].count = 0;
    cr_assert_not_null(hotlist_check(&d));
    d = h;
    d.v[0].count = 5;
    cr_assert_not_null(hotlist_check(&d));
}
