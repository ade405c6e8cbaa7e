/*
 * collector/driver_values.c: the value rings, both sides.
 *
 * One ring per CPU, written only by the thread driving that CPU and read
 * only by the consumer: the producer fills the slot at head and publishes
 * head + 1 with a release store; the consumer reads up to the head it
 * acquired and gives the slots back by storing tail (release), which the
 * producer acquires before reusing them.  No lock, no read-modify-write.
 * A record is in the ring until tail passes it, so a consumer that dies
 * or refuses a batch loses nothing, and a producer that dies leaves only
 * published records behind: a salvage is an ordinary take.
 */
#include <stdlib.h>

#include "collector/driver_shm.h"

int drv_value_post(drv *d, unsigned cpu, const drv_value *v)
{
    drv_region *r = &d->r;
    if (__builtin_expect(!r->value_entries || cpu >= r->ncpus || v->pid > DRV_MAX_PID || !v->kind ||
                         v->kind > DRV_MAX_VALUE_KIND, 0))
        return DRV_EINVAL;
    drv_vring_shm *q = drv_vring_at(r, cpu);
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (head - tail >= r->value_entries) {
        DRV_BUMP(q->dropped, 1);
        return DRV_DROPPED;
    }
    drv_values_at(r, cpu)[head & (r->value_entries - 1)] = *v;
    atomic_store_explicit(&q->head, head + 1, memory_order_release);
    return DRV_OK;
}

unsigned drv_value_entries(const drv *d)
{
    return d->r.value_entries;
}

void drvc_set_value_sink(drvc *c, int (*fn)(void *ctx, const drv_value_batch *b), void *ctx)
{
    c->values = fn;
    c->values_ctx = ctx;
}

int drv_values_snapshot(const drv_region *r, uint64_t *heads, drv_error *err)
{
    for (unsigned cpu = 0; r->value_entries && cpu < r->ncpus; cpu++) {
        drv_vring_shm *q = drv_vring_at(r, cpu);
        heads[cpu] = atomic_load_explicit(&q->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
        if (heads[cpu] < tail || heads[cpu] - tail > r->value_entries)
            return drv_fail(err, DRV_ECORRUPT, "%s: cpu %u value ring head %llu / tail %llu inconsistent",
                            r->path, cpu, (unsigned long long)heads[cpu], (unsigned long long)tail);
    }
    return DRV_OK;
}

int drv_values_take(drvc *c, const uint64_t *heads, drv_error *err)
{
    drv_region *r = &c->r;
    if (!c->values || !r->value_entries)
        return DRV_OK;
    for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
        drv_vring_shm *q = drv_vring_at(r, cpu);
        const drv_value *ring = drv_values_at(r, cpu);
        uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
        while (tail < heads[cpu]) {
            /* up to the ring's end at most: batches are contiguous */
            uint64_t at = tail & (r->value_entries - 1);
            uint64_t n = heads[cpu] - tail;
            if (n > r->value_entries - at)
                n = r->value_entries - at;
            drv_value_batch b = { cpu, ring + at, (size_t)n, tail };
            if (c->values(c->values_ctx, &b) != 0)
                return drv_fail(err, DRV_ESINK, "%s: cpu %u: value records refused by the consumer; kept",
                                r->path, cpu);
            tail += n;
            DRV_BUMP(q->taken, n);
            atomic_store_explicit(&q->tail, tail, memory_order_release);
        }
    }
    return DRV_OK;
}
