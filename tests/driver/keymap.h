/*
 * tests/driver/keymap.h: (pid, pc, event) -> two counters, an open-
 * addressing table that grows; what the test programs (and, in the
 * benchmark, a stand-in for the daemon) count samples with.
 */
#ifndef TESTS_DRIVER_KEYMAP_H
#define TESTS_DRIVER_KEYMAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct km_slot {
    uint64_t pc;
    uint32_t pe;        /* pid << 8 | event */
    uint32_t used;
    uint64_t a, b;
} km_slot;

typedef struct keymap {
    km_slot *s;
    size_t cap, n;      /* cap: a power of two */
} keymap;

static inline size_t km_hash(uint64_t pc, uint32_t pe)
{
    uint64_t x = (pc ^ ((uint64_t)pe << 40) ^ pe) * 0x9E3779B97F4A7C15ull;
    return (size_t)(x ^ (x >> 29));
}

static inline km_slot *km_get(keymap *m, uint64_t pc, uint32_t pe)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t ncap = m->cap ? 2 * m->cap : 1024;
        km_slot *ns = calloc(ncap, sizeof *ns);
        if (!ns) {
            fprintf(stderr, "keymap: out of memory\n");
            exit(2);
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->s[i].used)
                continue;
            size_t j = km_hash(m->s[i].pc, m->s[i].pe) & (ncap - 1);
            while (ns[j].used)
                j = (j + 1) & (ncap - 1);
            ns[j] = m->s[i];
        }
        free(m->s);
        m->s = ns;
        m->cap = ncap;
    }
    size_t j = km_hash(pc, pe) & (m->cap - 1);
    while (m->s[j].used && (m->s[j].pc != pc || m->s[j].pe != pe))
        j = (j + 1) & (m->cap - 1);
    if (!m->s[j].used) {
        m->s[j].used = 1;
        m->s[j].pc = pc;
        m->s[j].pe = pe;
        m->n++;
    }
    return &m->s[j];
}

static inline void km_free(keymap *m)
{
    free(m->s);
    m->s = NULL;
    m->cap = m->n = 0;
}

#endif
