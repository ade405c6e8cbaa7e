/*
 * machine/cycles_mem.c: setting up and refilling the cycle model's caches
 * and translation buffers (the lookups are inline in cycles_mem.h).
 */
#include <stdlib.h>
#include <string.h>

#include "machine/cycles_mem.h"

/* n zeroed words on cache lines of their own: the model's front end and
 * the rest may run on two host CPUs, and must not share a line. */
static uint64_t *words(size_t n)
{
    size_t sz = (n * sizeof(uint64_t) + 63) & ~(size_t)63;
    uint64_t *p = aligned_alloc(64, sz);
    if (p)
        memset(p, 0, sz);
    return p;
}

bool ccache_init(ccache *c, uint32_t size, uint32_t line, uint32_t ways, bool with_ready)
{
    memset(c, 0, sizeof *c);
    if (!size)
        return true;              /* absent (an unfitted B-cache) */
    c->ways = ways;
    c->sets = size / line / ways;
    c->line_shift = clog2(line);
    c->tag = words((size_t)c->sets * ways);
    if (with_ready)
        c->ready = words((size_t)c->sets * ways);
    return c->tag && (!with_ready || c->ready);
}

void ccache_free(ccache *c)
{
    free(c->tag);
    free(c->ready);
    memset(c, 0, sizeof *c);
}

bool ctlb_init(ctlb *t, uint32_t entries)
{
    memset(t, 0, sizeof *t);
    t->n = entries;
    uint32_t isz = 4;
    while (isz < 2 * entries)
        isz <<= 1;
    t->hmask = isz - 1;
    t->key = words(entries);
    t->index = words(isz);
    return t->key && t->index;
}

void ctlb_free(ctlb *t)
{
    free(t->key);
    free(t->index);
    memset(t, 0, sizeof *t);
}

void ctlb_insert(ctlb *t, uint64_t key)
{
    t->key[t->next] = key;
    t->next = (t->next + 1) % t->n;
    memset(t->index, 0, ((size_t)t->hmask + 1) * sizeof *t->index);
    for (uint32_t i = 0; i < t->n; i++) {
        if (!t->key[i])
            continue;
        uint32_t h = ctlb_hash(t->key[i], t->hmask);
        while (t->index[h])
            h = (h + 1) & t->hmask;
        t->index[h] = t->key[i];
    }
}
