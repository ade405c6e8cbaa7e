/*
 * collector/driver_notice.c: the notice ring (image loads, forks, execs,
 * exits), a byte ring with one writer and one reader.
 *
 * Producer threads take a process-local mutex to post, so the ring itself
 * only ever sees one writer; notices are rare and never on the sample path.
 * The writer fills a record and then publishes it by advancing notice_head
 * with release; the reader consumes up to the head it acquired and gives
 * space back by advancing notice_tail with release.  A record that would
 * straddle the ring's end is preceded by a PAD record filling the rest, so
 * every record is contiguous.  A writer that dies mid-record never
 * published it: the reader cannot see half a notice.
 */
#include <string.h>

#include "collector/driver_shm.h"

static uint32_t rec_len(size_t bid_len, size_t path_len)
{
    return (uint32_t)((sizeof(drv_notice_rec) + bid_len + path_len + 1 + 7) & ~(size_t)7);
}

static int post(drv *d, uint16_t type, uint32_t pid, uint32_t aux, uint64_t base,
                uint64_t size, uint64_t offset, const char *path, const uint8_t *bid,
                size_t bid_len)
{
    if (pid > DRV_MAX_PID)
        return DRV_EINVAL;
    size_t path_len = path ? strlen(path) : 0;
    if (path_len > DRV_MAX_PATH || bid_len > DRV_MAX_BUILD_ID || (bid_len && !bid))
        return DRV_EINVAL;
    drv_shm_header *h = d->r.h;
    uint32_t cap = d->r.notice_bytes;
    uint32_t len = rec_len(bid_len, path_len);
    uint8_t *ring = d->r.map + h->notice_offset;

    pthread_mutex_lock(&d->notice_lock);
    uint64_t head = atomic_load_explicit(&h->notice_head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&h->notice_tail, memory_order_acquire);
    uint32_t off = (uint32_t)(head & (cap - 1));
    uint32_t pad = cap - off < len ? cap - off : 0;
    if (head + pad + len - tail > cap) {
        DRV_BUMP(h->notices_lost, 1);
        pthread_mutex_unlock(&d->notice_lock);
        return DRV_DROPPED;
    }
    if (pad) {
        drv_notice_rec pr = { .len = pad, .type = DRV_NOTICE_PAD };
        memcpy(ring + off, &pr, 8);   /* a pad may be only 8 bytes long */
        off = 0;
    }
    drv_notice_rec r = {
        .len = len, .type = type, .path_len = (uint16_t)path_len, .pid = pid, .aux = aux,
        .seq = DRV_LOAD(h->notices), .base = base, .size = size, .offset = offset,
        .build_id_len = (uint8_t)bid_len,
    };
    uint8_t *p = ring + off;
    memcpy(p, &r, sizeof r);
    if (bid_len)
        memcpy(p + sizeof r, bid, bid_len);
    if (path_len)
        memcpy(p + sizeof r + bid_len, path, path_len);
    memset(p + sizeof r + bid_len + path_len, 0, len - sizeof r - bid_len - path_len);
    DRV_BUMP(h->notices, 1);
    atomic_store_explicit(&h->notice_head, head + pad + len, memory_order_release);
    pthread_mutex_unlock(&d->notice_lock);
    return DRV_OK;
}

int drv_notice_load(drv *d, uint32_t pid, uint64_t base, uint64_t size, uint64_t offset,
                    const char *path, const uint8_t *build_id, size_t build_id_len)
{
    if (!path)
        return DRV_EINVAL;
    return post(d, DRV_NOTICE_LOAD, pid, 0, base, size, offset, path, build_id, build_id_len);
}

int drv_notice_exit(drv *d, uint32_t pid, int32_t status)
{
    return post(d, DRV_NOTICE_EXIT, pid, (uint32_t)status, 0, 0, 0, NULL, NULL, 0);
}

int drv_notice_fork(drv *d, uint32_t ppid, uint32_t pid)
{
    if (ppid > DRV_MAX_PID)
        return DRV_EINVAL;
    return post(d, DRV_NOTICE_FORK, pid, ppid, 0, 0, 0, NULL, NULL, 0);
}

int drv_notice_exec(drv *d, uint32_t pid)
{
    return post(d, DRV_NOTICE_EXEC, pid, 0, 0, 0, 0, NULL, NULL, 0);
}

/* ---- consumer ------------------------------------------------------------- */

/* Everything read from the ring is copied before it is checked and used, so
 * a misbehaving producer can at worst make us report corruption. */
int drv_notice_read(drv_region *rg, const drvc_sink *s, char *path_buf, drv_error *err)
{
    drv_shm_header *h = rg->h;
    uint32_t cap = rg->notice_bytes;
    const uint8_t *ring = rg->map + h->notice_offset;
    uint64_t head = atomic_load_explicit(&h->notice_head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&h->notice_tail, memory_order_relaxed);
    if ((head | tail) % 8 || head < tail || head - tail > cap)
        return drv_fail(err, DRV_ECORRUPT, "%s: notice ring head %llu / tail %llu inconsistent",
                        rg->path, (unsigned long long)head, (unsigned long long)tail);
    int n = 0;
    while (tail < head) {
        uint32_t off = (uint32_t)(tail & (cap - 1));
        drv_notice_rec r;
        memset(&r, 0, sizeof r);
        memcpy(&r, ring + off, 8);
        const char *bad = NULL;
        if (r.len < 8 || r.len % 8 || r.len > cap - off || r.len > head - tail)
            bad = "bad length";
        else if (r.type == DRV_NOTICE_PAD) {
            tail += r.len;
            atomic_store_explicit(&h->notice_tail, tail, memory_order_release);
            continue;
        } else if (r.len < sizeof r)
            bad = "shorter than its header";
        if (!bad) {
            memcpy(&r, ring + off, sizeof r);
            if (r.type < DRV_NOTICE_LOAD || r.type > DRV_NOTICE_EXEC)
                bad = "unknown type";
            else if (r.build_id_len > DRV_MAX_BUILD_ID || r.path_len > DRV_MAX_PATH ||
                     rec_len(r.build_id_len, r.path_len) > r.len)
                bad = "contents longer than the record";
        }
        if (bad)
            return drv_fail(err, DRV_ECORRUPT, "%s: notice at ring position %llu: %s",
                            rg->path, (unsigned long long)tail, bad);
        drv_notice nt;
        memset(&nt, 0, sizeof nt);
        nt.type = r.type;
        nt.seq = r.seq;
        nt.pid = r.pid;
        if (r.type == DRV_NOTICE_FORK)
            nt.ppid = r.aux;
        if (r.type == DRV_NOTICE_EXIT)
            nt.status = (int32_t)r.aux;
        nt.base = r.base;
        nt.size = r.size;
        nt.offset = r.offset;
        nt.build_id_len = r.build_id_len;
        memcpy(nt.build_id, ring + off + sizeof r, r.build_id_len);
        memcpy(path_buf, ring + off + sizeof r + r.build_id_len, r.path_len);
        path_buf[r.path_len] = 0;
        nt.path = path_buf;
        if (s->notice(s->ctx, &nt) != 0)
            return drv_fail(err, DRV_ESINK, "%s: notice %llu refused by the consumer; kept",
                            rg->path, (unsigned long long)r.seq);
        tail += r.len;
        atomic_store_explicit(&h->notice_tail, tail, memory_order_release);
        n++;
    }
    return n;
}
