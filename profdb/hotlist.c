/*
 * profdb/hotlist.c: counting samples (see hotlist.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "profdb/hotlist.h"

static uint64_t next(uint64_t *rng)
{
    *rng ^= *rng >> 12;     /* xorshift64* */
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    return *rng * 0x2545f4914f6cdd1dULL;
}

static double uniform(uint64_t *rng)
{
    return ((double)(next(rng) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

void hotlist_init(hotlist *h, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->tau = 1;
    h->rng = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
    if (!h->rng)
        h->rng = 1;
}

/* A count after tau goes from was to now: a coin of probability was/now;
 * on tails one less, then one less per tails of coins of probability
 * 1/now (a geometric number of them) until heads or zero. */
static uint64_t cut(uint64_t *rng, uint64_t c, double was, double now)
{
    if (uniform(rng) < was / now)
        return c;
    c--;
    double q = 1 - 1 / now;
    if (!c || q <= 0)
        return c;
    double tails = floor(log(uniform(rng)) / log(q));
    return tails >= (double)c ? 0 : c - (uint64_t)tails;
}

static uint32_t cut_all(uint64_t *rng, hot_value *v, uint32_t n, double was, double now)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        v[i].count = cut(rng, v[i].count, was, now);
        if (v[i].count)
            v[j++] = v[i];
    }
    return j;
}

static int find(const hotlist *h, uint64_t value)
{
    for (uint32_t i = 0; i < h->n; i++)
        if (h->v[i].value == value)
            return (int)i;
    return -1;
}

void hotlist_add(hotlist *h, uint64_t value)
{
    h->samples++;
    int i = find(h, value);
    if (i >= 0) {
        h->v[i].count++;
        return;
    }
    if (h->tau > 1 && uniform(&h->rng) * h->tau >= 1)
        return;
    while (h->n == HOTLIST_MAX) {
        /* the raise cuts the newcomer too: it stays with probability
         * old tau / new tau, as a count of 1 would */
        double was = h->tau;
        h->tau *= HOTLIST_RAISE;
        h->n = cut_all(&h->rng, h->v, h->n, was, h->tau);
        if (uniform(&h->rng) >= was / h->tau)
            return;
    }
    h->v[h->n++] = (hot_value){ value, 1, 1 };
}

void hotlist_merge(hotlist *into, const hotlist *also)
{
    hotlist b = *also;
    b.rng = next(&into->rng) | 1;
    if (b.tau > into->tau) {
        into->n = cut_all(&into->rng, into->v, into->n, into->tau, b.tau);
        into->tau = b.tau;
    } else if (b.tau < into->tau) {
        b.n = cut_all(&b.rng, b.v, b.n, b.tau, into->tau);
    }
    into->samples += b.samples;
    hot_value all[2 * HOTLIST_MAX];
    uint32_t n = into->n;
    memcpy(all, into->v, n * sizeof *all);
    for (uint32_t i = 0; i < b.n; i++) {
        uint32_t k = 0;
        while (k < n && all[k].value != b.v[i].value)
            k++;
        if (k < n) {
            all[k].count += b.v[i].count;
            all[k].pieces += b.v[i].pieces;
        } else {
            all[n++] = b.v[i];
        }
    }
    while (n > HOTLIST_MAX) {
        double was = into->tau;
        into->tau *= HOTLIST_RAISE;
        n = cut_all(&into->rng, all, n, was, into->tau);
    }
    memcpy(into->v, all, n * sizeof *all);
    into->n = n;
}

double hotlist_estimate(const hotlist *h, const hot_value *v)
{
    double missed = 0.418 * h->tau - 1;
    return (double)v->count + (missed > 0 ? missed * v->pieces : 0);
}

static int by_estimate(const void *a, const void *b, void *list)
{
    const hot_value *x = a, *y = b;
    double ex = hotlist_estimate(list, x), ey = hotlist_estimate(list, y);
    if (ex != ey)
        return ex < ey ? 1 : -1;
    return (x->value > y->value) - (x->value < y->value);
}

size_t hotlist_top(const hotlist *h, hot_value *out, double *share, size_t max)
{
    hot_value all[HOTLIST_MAX];
    uint32_t n = h->n < HOTLIST_MAX ? h->n : HOTLIST_MAX;
    memcpy(all, h->v, n * sizeof *all);
    qsort_r(all, n, sizeof *all, by_estimate, (void *)h);
    size_t k = n < max ? n : max;
    for (size_t i = 0; i < k; i++) {
        out[i] = all[i];
        if (share) {
            double s = h->samples ? hotlist_estimate(h, &all[i]) / (double)h->samples : 0;
            share[i] = s > 1 ? 1 : s;
        }
    }
    return k;
}

const char *hotlist_check(const hotlist *h)
{
    if (!(h->tau >= 1) || h->tau > 1e300)
        return "tau below 1 or not a number";
    if (h->n > HOTLIST_MAX)
        return "more values than a list holds";
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        if (!h->v[i].count || !h->v[i].pieces)
            return "a value with count or pieces 0";
        for (uint32_t j = 0; j < i; j++)
            if (h->v[j].value == h->v[i].value)
                return "a value listed twice";
        if (h->v[i].count > h->samples || sum + h->v[i].count < sum)
            return "a count above the samples";
        sum += h->v[i].count;
    }
    if (sum > h->samples)
        return "counts add up to more than the samples";
    return NULL;
}

void hotlist_put_values(uint8_t *p, const hotlist *h)
{
    for (uint32_t k = 0; k < h->n; k++, p += HOTLIST_VALUE_BYTES) {
        le_put64(p, h->v[k].value);
        le_put64(p + 8, h->v[k].count);
        le_put32(p + 16, h->v[k].pieces);
        le_put32(p + 20, 0);
    }
}

const char *hotlist_get_values(const uint8_t *p, hotlist *h)
{
    for (uint32_t k = 0; k < h->n; k++, p += HOTLIST_VALUE_BYTES) {
        h->v[k] = (hot_value){ le_get64(p), le_get64(p + 8), le_get32(p + 16) };
        if (le_get32(p + 20))
            return "reserved bytes not zero";
    }
    return NULL;
}
