/*
 * collector/driver_drain.c: the consumer's side: taking full buffers,
 * flushing the CPUs, and salvaging what a dead producer left.
 *
 * A FULL buffer belongs to the consumer until it stores FREE (release)
 * after the sink has read it; the producer acquires FREE before writing
 * into it again.  A flush is a per-CPU request counter that the consumer
 * bumps and the producer answers by storing the value it served into
 * flush_ack (release) after its last hand-over, so once every ack has been
 * acquired one more pass over the buffers has seen everything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector/driver_shm.h"

#define CHUNK DRV_SALVAGE_CHUNK

static int writable(const drvc *c, const drvc_sink *s, int need_entries, drv_error *err)
{
    if (!c || !s || (need_entries && !s->entries))
        return drv_fail(err, DRV_EINVAL, "driver consumer: no handle or sink");
    if (!c->locked)
        return drv_fail(err, DRV_EINVAL, "%s: opened read-only", c->r.path);
    return DRV_OK;
}

/* Hand one FULL buffer to the sink and give it back. */
static int take(drvc *c, unsigned cpu, unsigned b, const drvc_sink *s, drv_error *err)
{
    drv_region *r = &c->r;
    drv_cpu_shm *cs = drv_cpu_at(r, cpu);
    uint32_t n = cs->desc[b].count;
    if (n > r->buffer_entries)
        return drv_fail(err, DRV_ECORRUPT, "%s: cpu %u buffer %u holds %u entries, capacity %u",
                        r->path, cpu, b, n, r->buffer_entries);
    drv_batch bt = { cpu, DRV_SRC_BUFFER, cs->desc[b].seq, drv_buf_at(r, cpu, b), n };
    if (s->entries(s->ctx, &bt) != 0)
        return drv_fail(err, DRV_ESINK, "%s: cpu %u buffer %llu refused by the consumer; kept",
                        r->path, cpu, (unsigned long long)bt.seq);
    DRV_BUMP(cs->buffers_taken, 1);
    DRV_BUMP(cs->entries_taken, n);
    atomic_store_explicit(&cs->desc[b].state, DRV_BUF_FREE, memory_order_release);
    return DRV_OK;
}

/* Take the buffers FULL at this moment, oldest first within a CPU.  The
 * notices are read after this snapshot and before the buffers, so every
 * LOAD posted before a sample in them reaches the sink first. */
static int take_all(drvc *c, const drvc_sink *s, drv_error *err)
{
    drv_region *r = &c->r;
    unsigned nfull = 0;
    uint8_t *full = malloc(r->ncpus);
    uint64_t *heads = malloc(r->ncpus * sizeof *heads);
    if (!full || !heads) {
        free(full);
        free(heads);
        return drv_fail(err, DRV_ENOMEM, "%s: out of memory", r->path);
    }
    for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
        drv_cpu_shm *cs = drv_cpu_at(r, cpu);
        full[cpu] = 0;
        for (unsigned b = 0; b < 2; b++)
            if (atomic_load_explicit(&cs->desc[b].state, memory_order_acquire) == DRV_BUF_FULL) {
                full[cpu] |= (uint8_t)(1u << b);
                nfull++;
            }
    }
    int rc = drv_values_snapshot(r, heads, err);
    if (rc < 0)
        goto out;
    if (s->notice && (rc = drv_notice_read(r, s, c->path_buf, err)) < 0)
        goto out;
    if ((rc = drv_values_take(c, heads, err)) < 0)
        goto out;
    rc = 0;
    for (unsigned cpu = 0; cpu < r->ncpus && nfull; cpu++) {
        drv_cpu_shm *cs = drv_cpu_at(r, cpu);
        unsigned first = 0;
        if (full[cpu] == 3 && cs->desc[1].seq < cs->desc[0].seq)
            first = 1;
        for (unsigned k = 0; k < 2; k++) {
            unsigned b = first ^ k;
            if (!(full[cpu] & (1u << b)))
                continue;
            int e = take(c, cpu, b, s, err);
            if (e < 0) {
                rc = e;
                goto out;
            }
            rc++;
        }
    }
out:
    free(full);
    free(heads);
    return rc;
}

int drvc_collect(drvc *c, int timeout_ms, const drvc_sink *s, drv_error *err)
{
    int rc = writable(c, s, 1, err);
    if (rc != DRV_OK)
        return rc;
    uint64_t end = drv_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
    unsigned us = 50;
    for (;;) {
        if ((rc = take_all(c, s, err)) != 0)
            return rc;
        if (atomic_load_explicit(&c->r.h->retired, memory_order_acquire))
            return drv_fail(err, DRV_ERETIRED, "%s: replaced by a new region; reopen it", c->r.path);
        if (drv_now_ns() >= end)
            return 0;
        drv_nap(&us);
    }
}

int drvc_notices(drvc *c, const drvc_sink *s, drv_error *err)
{
    int rc = writable(c, s, 0, err);
    if (rc != DRV_OK)
        return rc;
    if (!s->notice)
        return drv_fail(err, DRV_EINVAL, "%s: no notice callback", c->r.path);
    return drv_notice_read(&c->r, s, c->path_buf, err);
}

static int deliver(const drvc_sink *s, drv_batch *bt)
{
    if (!bt->n || s->entries(s->ctx, bt) == 0)
        return DRV_OK;
    return DRV_ESINK;
}

static int salvage_locked(drvc *c, const drvc_sink *s, drv_error *err)
{
    drv_region *r = &c->r;
    int rc;
    for (unsigned cpu = 0; cpu < r->ncpus; cpu++)
        if ((rc = drv_check_cpu_state(r, cpu, err)) != DRV_OK)
            return rc;
    if ((rc = take_all(c, s, err)) < 0)
        return rc;
    drv_entry *chunk = c->chunk;
    for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
        drv_cpu_shm *cs = drv_cpu_at(r, cpu);
        if (cs->have_buf && cs->fill) {
            drv_batch bt = { cpu, DRV_SRC_ACTIVE, DRV_LOAD(cs->buffers_handed),
                             drv_buf_at(r, cpu, cs->cur), cs->fill };
            if (deliver(s, &bt) != DRV_OK)
                return drv_fail(err, DRV_ESINK, "%s: cpu %u: part-filled buffer refused; kept",
                                r->path, cpu);
            DRV_BUMP(cs->salvaged_entries, cs->fill);
            cs->fill = 0;
        }
        drv_entry *t = drv_table_at(r, cpu);
        for (uint32_t i = 0; i < r->table_entries;) {
            uint32_t start = i, k = 0;
            while (i < r->table_entries && k < CHUNK) {
                if (t[i].count)
                    chunk[k++] = t[i];
                i++;
            }
            drv_batch bt = { cpu, DRV_SRC_TABLE, 0, chunk, k };
            if (deliver(s, &bt) != DRV_OK)
                return drv_fail(err, DRV_ESINK, "%s: cpu %u: table entries refused; kept",
                                r->path, cpu);
            for (uint32_t j = start; j < i; j++)
                if (t[j].count)
                    memset(&t[j], 0, sizeof t[j]);
            DRV_BUMP(cs->salvaged_entries, k);
        }
        /* Everything is out: any flush request is answered. */
        uint32_t req = atomic_load_explicit(&cs->flush_req, memory_order_acquire);
        cs->flush_busy = 0;
        cs->flush_seen = req;
        atomic_store_explicit(&cs->flush_ack, req, memory_order_release);
    }
    return DRV_OK;
}

int drvc_salvage(drvc *c, const drvc_sink *s, drv_error *err)
{
    int rc = writable(c, s, 1, err);
    if (rc != DRV_OK)
        return rc;
    int l = drv_lock(c->r.fd, DRV_LOCK_PRODUCER, 0);
    if (l < 0)
        return drv_fail(err, DRV_EIO, "%s: lock: %s", c->r.path, strerror(errno));
    if (l > 0)
        return drv_fail(err, DRV_EBUSY, "%s: a producer (pid %u) is attached", c->r.path,
                        atomic_load(&c->r.h->producer_pid));
    rc = salvage_locked(c, s, err);
    drv_unlock(c->r.fd, DRV_LOCK_PRODUCER);
    return rc;
}

int drvc_flush(drvc *c, int timeout_ms, const drvc_sink *s, drv_error *err)
{
    int rc = writable(c, s, 1, err);
    if (rc != DRV_OK)
        return rc;
    drv_region *r = &c->r;
    uint32_t *want = malloc(r->ncpus * sizeof *want);
    if (!want)
        return drv_fail(err, DRV_ENOMEM, "%s: out of memory", r->path);
    for (unsigned cpu = 0; cpu < r->ncpus; cpu++)
        want[cpu] = atomic_fetch_add(&drv_cpu_at(r, cpu)->flush_req, 1) + 1;
    uint64_t end = drv_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
    unsigned us = 50;
    for (;;) {
        if ((rc = take_all(c, s, err)) < 0)
            break;
        int waiting = -1;
        for (unsigned cpu = 0; cpu < r->ncpus && waiting < 0; cpu++) {
            uint32_t ack = atomic_load_explicit(&drv_cpu_at(r, cpu)->flush_ack, memory_order_acquire);
            if ((int32_t)(ack - want[cpu]) < 0)
                waiting = (int)cpu;
        }
        if (waiting < 0) {
            rc = take_all(c, s, err);   /* the hand-overs made just before the acks */
            rc = rc < 0 ? rc : DRV_OK;
            break;
        }
        if (!drvc_producer_alive(c)) {
            rc = drvc_salvage(c, s, err);
            if (rc != DRV_EBUSY)   /* EBUSY: a producer attached meanwhile; keep waiting */
                break;
        }
        if (atomic_load_explicit(&r->h->retired, memory_order_acquire)) {
            rc = drv_fail(err, DRV_ERETIRED, "%s: replaced by a new region; reopen it", r->path);
            break;
        }
        if (drv_now_ns() >= end) {
            rc = drv_fail(err, DRV_ETIMEDOUT,
                          "%s: cpu %d did not answer the flush within %d ms (producer pid %u is "
                          "attached but not calling drv_poll or drv_sample for that CPU)",
                          r->path, waiting, timeout_ms, atomic_load(&r->h->producer_pid));
            break;
        }
        drv_nap(&us);
    }
    free(want);
    return rc;
}
