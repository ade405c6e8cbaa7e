/*
 * machine/cycles_mem.h: the memory side of the cycle model: caches, the
 * translation buffers and the write buffer.  Internal to the cycle model
 * (cycles.c); the lookups are inline because they run once per fetch line,
 * page or memory access.
 *
 * Caches and TLBs are tagged with the address-space number as well as the
 * virtual address: the 21164's caches are indexed virtually and its TLB
 * entries carry ASNs, so processes do not flush each other on a switch;
 * what we give up is sharing between processes (a library's text mapped by
 * two processes occupies the caches twice).
 */
#ifndef MACHINE_CYCLES_MEM_H
#define MACHINE_CYCLES_MEM_H

#include <stdbool.h>
#include <stdint.h>

/* log2 of a power of two (the smallest s with 2^s >= v otherwise). */
static inline uint32_t clog2(uint32_t v)
{
    uint32_t s = 0;
    while ((1u << s) < v)
        s++;
    return s;
}

/* Keys: bit 63 marks a valid entry, the ASN sits above any user address. */
#define CKEY(asn, unit) ((1ULL << 63) | ((uint64_t)((asn) & 0xfffff) << 43) | (unit))

/* A set-associative cache with LRU replacement (ways kept in MRU order).
 * ready[] (optional) is when each way's line finished filling: a second
 * miss to a line still being filled waits for that fill instead of
 * starting another (the 21164's miss merging). */
typedef struct ccache {
    uint32_t sets, ways, line_shift;
    uint64_t *tag;        /* sets * ways */
    uint64_t *ready;      /* sets * ways, or NULL */
} ccache;

/* Look key (line number with ASN) up; on a miss the line is brought in,
 * evicting the least recently used way.  Returns the way's index in
 * tag[]/ready[], with *hit telling which happened. */
static inline uint32_t ccache_access(ccache *c, uint64_t line, uint64_t key, bool *hit)
{
    uint32_t set = (uint32_t)(line & (c->sets - 1));
    uint64_t *t = c->tag + (uint64_t)set * c->ways;
    if (t[0] == key) {
        *hit = true;
        return set * c->ways;
    }
    uint32_t w = 1;
    while (w < c->ways && t[w] != key)
        w++;
    *hit = w < c->ways;
    if (w == c->ways)
        w = c->ways - 1;          /* the LRU way is replaced */
    uint64_t r = c->ready ? c->ready[set * c->ways + w] : 0;
    for (uint32_t i = w; i > 0; i--) {
        t[i] = t[i - 1];
        if (c->ready)
            c->ready[set * c->ways + i] = c->ready[set * c->ways + i - 1];
    }
    t[0] = key;
    if (c->ready)
        c->ready[set * c->ways] = *hit ? r : 0;
    return set * c->ways;
}

/* Is key present?  No state change. */
static inline bool ccache_probe(const ccache *c, uint64_t line, uint64_t key)
{
    uint32_t set = (uint32_t)(line & (c->sets - 1));
    const uint64_t *t = c->tag + (uint64_t)set * c->ways;
    for (uint32_t w = 0; w < c->ways; w++)
        if (t[w] == key)
            return true;
    return false;
}

/* A fully associative TLB with round-robin replacement.  A small
 * open-addressed index finds entries without scanning them all; it is
 * rebuilt on every replacement, which only misses pay. */
typedef struct ctlb {
    uint32_t n, next;
    uint64_t *key;        /* n entries, 0 = empty */
    uint32_t hmask;       /* index size - 1 (a power of two >= 2n) */
    uint64_t *index;      /* keys, 0 = empty slot */
    uint64_t last;        /* the last key found: most lookups repeat it */
} ctlb;

static inline uint32_t ctlb_hash(uint64_t key, uint32_t mask)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> 40) & mask;
}

void ctlb_insert(ctlb *t, uint64_t key);

/* Is key present?  No state change. */
static inline bool ctlb_probe(const ctlb *t, uint64_t key)
{
    if (key == t->last)
        return true;
    for (uint32_t h = ctlb_hash(key, t->hmask);; h = (h + 1) & t->hmask) {
        if (t->index[h] == key)
            return true;
        if (!t->index[h])
            return false;
    }
}

/* True on a hit; a miss inserts the entry. */
static inline bool ctlb_access(ctlb *t, uint64_t key)
{
    bool hit = ctlb_probe(t, key);
    if (!hit)
        ctlb_insert(t, key);
    t->last = key;
    return hit;
}

/* The write buffer: entries of one cache line each, written to the S-cache
 * one after another.  done[] is when each entry's write completes.  The
 * ring is WB_MAX long whatever the capacity, so indexing is a mask, not a
 * division (this runs for every store). */
#define WB_MAX 32
#define WB_AT(i) ((i) & (WB_MAX - 1))
typedef struct cwbuf {
    uint32_t cap, head, n;
    uint64_t line[WB_MAX];
    uint64_t done[WB_MAX];
} cwbuf;

/* Retire the entries whose write has finished by cycle t. */
static inline void cwbuf_retire(cwbuf *w, uint64_t t)
{
    while (w->n && w->done[w->head] <= t) {
        w->head = WB_AT(w->head + 1);
        w->n--;
    }
}

/* The entry holding line, or -1. */
static inline int cwbuf_find(const cwbuf *w, uint64_t line)
{
    for (uint32_t i = 0, j = w->head; i < w->n; i++, j = WB_AT(j + 1))
        if (w->line[j] == line)
            return (int)j;
    return -1;
}

bool ccache_init(ccache *c, uint32_t size, uint32_t line, uint32_t ways, bool with_ready);
void ccache_free(ccache *c);
bool ctlb_init(ctlb *t, uint32_t entries);
void ctlb_free(ctlb *t);

#endif
