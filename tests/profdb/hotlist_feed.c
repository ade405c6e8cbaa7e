/*
 * tests/profdb/hotlist_feed: hot lists from a stream, for benchmarks that
 * hold value samples against exact counts (scripts/bench/values.sh).
 *
 *   hotlist_feed < PAIRS
 *
 * Reads lines "KEY VALUE" (hex), keeps one hot list (profdb/hotlist.h)
 * per KEY, seeded by the key as cpod seeds its own, and prints per key
 * "KEY SAMPLES VALUE SHARE ..." most frequent first.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "profdb/hotlist.h"

typedef struct slot {
    uint64_t key;
    hotlist h;
    int used;
} slot;

int main(void)
{
    size_t cap = 1 << 12, n = 0;
    slot *t = calloc(cap, sizeof *t);
    char line[256];
    while (t && fgets(line, sizeof line, stdin)) {
        uint64_t k, v;
        if (sscanf(line, "%" SCNx64 " %" SCNx64, &k, &v) != 2)
            continue;
        if (2 * (n + 1) > cap) {
            slot *nt = calloc(2 * cap, sizeof *nt);
            if (!nt)
                break;
            for (size_t i = 0; i < cap; i++)
                if (t[i].used) {
                    size_t h = (t[i].key * 0x9E3779B97F4A7C15ull >> 20) & (2 * cap - 1);
                    while (nt[h].used)
                        h = (h + 1) & (2 * cap - 1);
                    nt[h] = t[i];
                }
            free(t);
            t = nt;
            cap *= 2;
        }
        size_t h = (k * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
        while (t[h].used && t[h].key != k)
            h = (h + 1) & (cap - 1);
        if (!t[h].used) {
            t[h].used = 1;
            t[h].key = k;
            hotlist_init(&t[h].h, k);
            n++;
        }
        hotlist_add(&t[h].h, v);
    }
    if (!t) {
        fprintf(stderr, "hotlist_feed: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < cap; i++) {
        if (!t[i].used)
            continue;
        hot_value top[HOTLIST_MAX];
        double share[HOTLIST_MAX];
        size_t k = hotlist_top(&t[i].h, top, share, HOTLIST_MAX);
        printf("0x%" PRIx64 " %" PRIu64, t[i].key, t[i].h.samples);
        for (size_t j = 0; j < k; j++)
            printf(" 0x%" PRIx64 " %.6f", top[j].value, share[j]);
        printf("\n");
    }
    free(t);
    return 0;
}
