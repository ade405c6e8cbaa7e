/*
 * collector/driver_sample.c: the producer's side, what runs once per
 * counter overflow.
 *
 * A hit touches the CPU's handle line, its state line in the region and one
 * 64-byte bucket; it writes the bucket and a counter.  A miss also writes
 * one overflow-buffer entry.  Nothing here is a locked instruction or a
 * fence: the only atomics are a relaxed load of the flush request, and the
 * release store that hands a full buffer over (a plain store on x86).
 *
 * Store order matters in two places, for a producer killed half-way (the
 * consumer salvages what it leaves): an entry is copied out before its slot
 * is reused, so a kill in between duplicates that one entry rather than
 * losing it; and a hand-over publishes the buffer before giving it up
 * locally, which driver_region.c's repair step completes.
 */
#include <string.h>

#include "collector/driver_shm.h"

/* Fibonacci hashing: the top bits of the product depend on every input
 * bit, and sequential PCs (4 apart) land in different buckets. */
static inline uint32_t bucket_of(const drv_pcpu *p, uint64_t pc, uint32_t pe)
{
    uint64_t h = ((pc >> 2) ^ ((uint64_t)pe << 32)) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(((h >> 32) * p->nbuckets) >> 32);
}

/* The producer owns buf[cur] once it has seen it FREE; the acquire pairs
 * with the consumer's release after it finished reading the buffer. */
static int have_room(drv_pcpu *p)
{
    drv_cpu_shm *s = p->s;
    if (s->have_buf)
        return 1;
    if (atomic_load_explicit(&s->desc[s->cur].state, memory_order_acquire) != DRV_BUF_FREE)
        return 0;
    s->fill = 0;
    s->have_buf = 1;
    return 1;
}

static void handover(drv_pcpu *p)
{
    drv_cpu_shm *s = p->s;
    drv_buf_desc *bd = &s->desc[s->cur];
    bd->count = s->fill;
    bd->seq = DRV_LOAD(s->buffers_handed);
    atomic_store_explicit(&bd->state, DRV_BUF_FULL, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);   /* keep the local release after it */
    s->have_buf = 0;
    atomic_signal_fence(memory_order_seq_cst);
    s->cur ^= 1;
    s->fill = 0;
    DRV_BUMP(s->buffers_handed, 1);
}

/* Needs have_room(p) true. */
static inline void spill(drv_pcpu *p, const drv_entry *e)
{
    drv_cpu_shm *s = p->s;
    p->buf[s->cur][s->fill] = *e;
    atomic_signal_fence(memory_order_seq_cst);
    s->fill++;
    DRV_BUMP(s->overflow_entries, 1);
    if (s->fill == p->bufcap)
        handover(p);
}

static int full(drv_pcpu *p, int hit)
{
    drv_cpu_shm *s = p->s;
    DRV_BUMP(s->full_waits, 1);
    if (p->full_mode == DRV_FULL_STALL)
        return DRV_FULL;
    DRV_BUMP(s->dropped, 1);
    if (hit)
        DRV_BUMP(s->hits, 1);
    else
        DRV_BUMP(s->misses, 1);
    return DRV_DROPPED;
}

static inline void swap_front(drv_entry *b, unsigned i)
{
    drv_entry t = b[0];
    b[0] = b[i];
    b[i] = t;
}

static int saturated(drv_pcpu *p, drv_entry *b, unsigned i)
{
    drv_cpu_shm *s = p->s;
    if (!have_room(p))
        return full(p, 1);
    spill(p, &b[i]);
    b[i].count = 1;
    DRV_BUMP(s->evictions, 1);
    DRV_BUMP(s->saturations, 1);
    DRV_BUMP(s->hits, 1);
    if (p->policy == DRV_POLICY_FRONT && i)
        swap_front(b, i);
    return DRV_OK;
}

static int miss(drv_pcpu *p, drv_entry *b, uint64_t pc, uint32_t pe)
{
    drv_cpu_shm *s = p->s;
    unsigned j = 0;
    while (j < DRV_WAYS && b[j].count)
        j++;
    if (j == DRV_WAYS) {
        if (!have_room(p))
            return full(p, 0);
        if (p->policy == DRV_POLICY_RR) {
            j = s->rr;
            s->rr = (j + 1) & (DRV_WAYS - 1);
        } else {
            j = DRV_WAYS - 1;
        }
        spill(p, &b[j]);
        DRV_BUMP(s->evictions, 1);
    }
    if (p->policy == DRV_POLICY_FRONT) {
        memmove(b + 1, b, j * sizeof *b);
        j = 0;
    }
    b[j].pc = pc;
    b[j].pid_event = pe;
    b[j].count = 1;
    DRV_BUMP(s->misses, 1);
    return DRV_OK;
}

/* Room for n more entries without waiting for the consumer. */
static int room_for(drv_pcpu *p, unsigned n)
{
    drv_cpu_shm *s = p->s;
    if (!have_room(p))
        return 0;
    if (p->bufcap - s->fill >= n)
        return 1;
    return atomic_load_explicit(&s->desc[s->cur ^ 1].state, memory_order_acquire) == DRV_BUF_FREE;
}

/* Move the table out, a whole bucket at a time (so entries moving inside a
 * bucket cannot slip behind the cursor), then hand over the part-filled
 * buffer and acknowledge.  Resumes where it stopped when buffers run out. */
static int flush_step(drv_pcpu *p)
{
    drv_cpu_shm *s = p->s;
    if (!s->flush_busy) {
        s->flush_target = atomic_load_explicit(&s->flush_req, memory_order_acquire);
        s->flush_bucket = 0;
        s->flush_busy = 1;
    }
    for (; s->flush_bucket < p->nbuckets; s->flush_bucket++) {
        drv_entry *b = p->table + (size_t)s->flush_bucket * DRV_WAYS;
        unsigned n = (b[0].count != 0) + (b[1].count != 0) + (b[2].count != 0) + (b[3].count != 0);
        if (!n)
            continue;
        if (!room_for(p, n))
            return DRV_FULL;
        for (unsigned i = 0; i < DRV_WAYS; i++) {
            if (!b[i].count)
                continue;
            have_room(p);
            spill(p, &b[i]);
            memset(&b[i], 0, sizeof b[i]);
        }
        DRV_BUMP(s->flush_entries, n);
    }
    if (s->have_buf && s->fill)
        handover(p);
    s->flush_busy = 0;
    s->flush_seen = s->flush_target;
    DRV_BUMP(s->flushes, 1);
    atomic_store_explicit(&s->flush_ack, s->flush_target, memory_order_release);
    return DRV_OK;
}

int drv_sample(drv *d, unsigned cpu, uint32_t pid, uint64_t pc, unsigned event)
{
    if (__builtin_expect(cpu >= d->r.ncpus || pid > DRV_MAX_PID || event > DRV_MAX_EVENT, 0))
        return DRV_EINVAL;
    drv_pcpu *p = &d->cpu[cpu];
    drv_cpu_shm *s = p->s;
    if (__builtin_expect(atomic_load_explicit(&s->flush_req, memory_order_relaxed) != s->flush_seen, 0))
        flush_step(p);
    uint32_t pe = pid << 8 | event;
    drv_entry *b = p->table + (size_t)bucket_of(p, pc, pe) * DRV_WAYS;
    for (unsigned i = 0; i < DRV_WAYS; i++) {
        if (b[i].pc != pc || b[i].pid_event != pe)
            continue;
        uint32_t c = b[i].count;
        if (__builtin_expect(c - 1u < p->max_count - 1u, 1)) {
            b[i].count = c + 1;
            if (p->policy == DRV_POLICY_FRONT && i)
                swap_front(b, i);
            DRV_BUMP(s->hits, 1);
            return DRV_OK;
        }
        if (c)
            return saturated(p, b, i);
        /* an emptied slot that kept a zero key: keep looking */
    }
    return miss(p, b, pc, pe);
}

int drv_poll(drv *d, unsigned cpu)
{
    if (cpu >= d->r.ncpus)
        return DRV_EINVAL;
    drv_pcpu *p = &d->cpu[cpu];
    if (atomic_load_explicit(&p->s->flush_req, memory_order_relaxed) != p->s->flush_seen)
        return flush_step(p);
    return DRV_OK;
}

int drv_wait(drv *d, unsigned cpu, int timeout_ms)
{
    if (cpu >= d->r.ncpus)
        return DRV_EINVAL;
    drv_pcpu *p = &d->cpu[cpu];
    uint64_t end = drv_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
    unsigned us = 20;
    for (;;) {
        if (have_room(p))
            return DRV_OK;
        if (drv_now_ns() >= end)
            return DRV_ETIMEDOUT;
        drv_nap(&us);
    }
}

unsigned drv_bucket(const drv *d, uint32_t pid, uint64_t pc, unsigned event)
{
    return bucket_of(&d->cpu[0], pc, pid << 8 | (event & 0xff));
}

int drv_bucket_read(const drv *d, unsigned cpu, unsigned bucket, drv_entry out[DRV_WAYS])
{
    if (cpu >= d->r.ncpus || bucket >= d->cpu[cpu].nbuckets)
        return DRV_EINVAL;
    memcpy(out, d->cpu[cpu].table + (size_t)bucket * DRV_WAYS, DRV_WAYS * sizeof *out);
    return DRV_OK;
}
