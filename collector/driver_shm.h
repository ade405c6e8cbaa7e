/*
 * collector/driver_shm.h: the driver region's layout (version 1) and the
 * handles both sides keep on it.  docs/driver-shm.md is the prose version;
 * the two must change together, and any change to an offset or a meaning
 * bumps DRV_VERSION.
 *
 * Region = header page | CPU 0 block | ... | CPU n-1 block | notice ring.
 * Every block starts on a page; within a block, data written by different
 * sides sits on different 64-byte lines so the sample path never pulls a
 * line the consumer keeps writing.
 */
#ifndef COLLECTOR_DRIVER_SHM_H
#define COLLECTOR_DRIVER_SHM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/driver.h"

#define DRV_MAGIC        "cpo-drv\n"
#define DRV_VERSION      1u
#define DRV_ENDIAN       0x01020304u
#define DRV_HEADER_SIZE  4096u
#define DRV_CPU_HDR      256u         /* state lines before the hash table */
#define DRV_PAGE         4096u

#define DRV_DEF_TABLE    16384u       /* DCPI's sizes: 16K-entry table, 8K-entry buffers */
#define DRV_DEF_BUFFER   8192u
#define DRV_DEF_NOTICE   (256u << 10)
#define DRV_MIN_BUFFER   16u
#define DRV_MAX_TABLE    (1u << 24)
#define DRV_MAX_BUFFER   (1u << 24)
#define DRV_MIN_NOTICE   (16u << 10)
#define DRV_MAX_NOTICE   (1u << 28)
#define DRV_MAX_PATH     4095u
#define DRV_SALVAGE_CHUNK 1024u

/* Byte ranges locked (Linux open-file-description locks) to say who is
 * attached; the kernel drops them when a process dies, which is how each
 * side learns that the other has crashed. */
#define DRV_LOCK_PRODUCER 0
#define DRV_LOCK_CONSUMER 1

enum { DRV_BUF_FREE = 0, DRV_BUF_FULL = 1 };

typedef struct drv_shm_header {
    /* 0: geometry, written once before the region becomes visible */
    char magic[8];
    uint32_t version;
    uint32_t endian;
    uint32_t header_size;
    uint32_t ncpus;
    uint32_t ways;
    uint32_t entry_size;
    uint32_t table_entries;        /* per CPU */
    uint32_t buffer_entries;       /* per overflow buffer */
    uint32_t notice_bytes;
    uint32_t cpu_size;             /* bytes per CPU block */
    uint64_t cpu_offset;           /* CPU i's block at cpu_offset + i * cpu_size */
    uint64_t notice_offset;
    uint64_t total_size;           /* == file size */
    uint64_t created_ns;           /* CLOCK_REALTIME */
    uint8_t pad0[128 - 80];
    /* 128: the attached producer's settings */
    _Atomic uint32_t producer_pid;
    uint32_t policy;
    uint32_t full_mode;
    uint32_t max_count;
    _Atomic uint32_t retired;      /* 1: replaced by a new region at the same path */
    _Atomic uint32_t consumer_pid;
    uint64_t attaches;             /* producer attachments so far */
    uint8_t pad1[192 - 160];
    /* 192: notice ring, written by the producer */
    _Atomic uint64_t notice_head;  /* bytes ever written; published with release */
    _Atomic uint64_t notices;      /* notices posted == next sequence number */
    _Atomic uint64_t notices_lost;
    uint8_t pad2[256 - 216];
    /* 256: notice ring, written by the consumer */
    _Atomic uint64_t notice_tail;  /* bytes ever consumed */
    /* 264: value rings (geometry, written once; all 0 in a region without) */
    uint32_t value_entries;        /* records per CPU ring, a power of two */
    uint32_t value_ring_size;      /* bytes per CPU ring */
    uint64_t value_offset;         /* CPU i's ring at value_offset + i * value_ring_size */
    uint8_t pad3[DRV_HEADER_SIZE - 280];
} drv_shm_header;

/* A CPU's value ring: this, then value_entries drv_value records. */
typedef struct drv_vring_shm {
    _Atomic uint64_t head;         /* records ever written; published with release */
    _Atomic uint64_t dropped;      /* records refused: ring full */
    uint8_t pad0[64 - 16];
    _Atomic uint64_t tail;         /* records ever taken; released after reading */
    _Atomic uint64_t taken;
    uint8_t pad1[64 - 16];
} drv_vring_shm;
#define DRV_VRING_HDR 128u

typedef struct drv_buf_desc {
    _Atomic uint32_t state;        /* FREE: the producer's; FULL: the consumer's */
    uint32_t count;                /* entries, set before state becomes FULL */
    uint64_t seq;                  /* hand-over number on this CPU */
} drv_buf_desc;

typedef struct drv_cpu_shm {
    /* line 0: producer state and the counters of every sample */
    uint32_t cur;                  /* buffer being filled (or next to fill) */
    uint32_t fill;                 /* entries in it */
    uint32_t have_buf;             /* 1: buf[cur] was seen FREE and is ours */
    uint32_t rr;                   /* round-robin victim, 0..3 */
    uint32_t flush_seen;           /* last flush request completed */
    uint32_t flush_busy;           /* a flush is under way ... */
    uint32_t flush_bucket;         /* ... next bucket to move out */
    uint32_t flush_target;         /* ... answering this request */
    _Atomic uint64_t hits;
    _Atomic uint64_t misses;
    _Atomic uint64_t evictions;
    uint64_t pad0;
    /* line 1: producer, rarer */
    _Atomic uint32_t flush_ack;
    uint32_t pad1;
    _Atomic uint64_t saturations;
    _Atomic uint64_t overflow_entries;
    _Atomic uint64_t buffers_handed;
    _Atomic uint64_t full_waits;
    _Atomic uint64_t dropped;
    _Atomic uint64_t flushes;
    _Atomic uint64_t flush_entries;
    /* line 2: consumer */
    _Atomic uint32_t flush_req;
    uint32_t pad2;
    _Atomic uint64_t buffers_taken;
    _Atomic uint64_t entries_taken;
    _Atomic uint64_t salvaged_entries;
    uint8_t pad3[64 - 32];
    /* line 3: the two overflow buffers' descriptors */
    drv_buf_desc desc[2];
    uint8_t pad4[64 - 2 * sizeof(drv_buf_desc)];
    /* 256: table_entries entries, then buffer 0, then buffer 1 */
} drv_cpu_shm;

/* Notice record: 8-byte aligned, never split by the ring's end (a PAD
 * record fills the tail instead); variable part = build-id then path+NUL. */
typedef struct drv_notice_rec {
    uint32_t len;                  /* whole record incl. padding, multiple of 8 */
    uint16_t type;                 /* DRV_NOTICE_* or DRV_NOTICE_PAD */
    uint16_t path_len;             /* without the NUL */
    uint32_t pid;
    uint32_t aux;                  /* FORK: ppid; EXIT: status */
    uint64_t seq;
    uint64_t base, size, offset;
    uint8_t build_id_len;
    uint8_t pad[7];
} drv_notice_rec;
#define DRV_NOTICE_PAD 0xffff

_Static_assert(sizeof(drv_shm_header) == DRV_HEADER_SIZE, "header is one page");
_Static_assert(offsetof(drv_shm_header, producer_pid) == 128, "header line 2");
_Static_assert(offsetof(drv_shm_header, notice_head) == 192, "header line 3");
_Static_assert(offsetof(drv_shm_header, notice_tail) == 256, "header line 4");
_Static_assert(sizeof(drv_entry) == 16, "entry is 16 bytes");
_Static_assert(offsetof(drv_cpu_shm, flush_ack) == 64, "cpu line 1");
_Static_assert(offsetof(drv_cpu_shm, flush_req) == 128, "cpu line 2");
_Static_assert(offsetof(drv_cpu_shm, desc) == 192, "cpu line 3");
_Static_assert(sizeof(drv_cpu_shm) == DRV_CPU_HDR, "cpu header is 4 lines");
_Static_assert(sizeof(drv_notice_rec) == 56, "notice header");
_Static_assert(offsetof(drv_shm_header, value_entries) == 264, "value ring geometry");
_Static_assert(sizeof(drv_vring_shm) == DRV_VRING_HDR, "value ring header is 2 lines");
_Static_assert(sizeof(drv_value) == 32, "value record is 32 bytes");

/* Single-writer counters: a plain load and store (no locked instruction),
 * atomic only so a concurrent reader sees whole values. */
#define DRV_BUMP(x, n) \
    atomic_store_explicit(&(x), atomic_load_explicit(&(x), memory_order_relaxed) + (n), \
                          memory_order_relaxed)
#define DRV_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* ---- process-local handles ------------------------------------------------ */

typedef struct drv_region {
    int fd;
    char *path;
    uint8_t *map;
    size_t size;
    drv_shm_header *h;
    unsigned ncpus;
    uint32_t table_entries, buffer_entries, notice_bytes;
    uint32_t value_entries;        /* 0: no value rings */
} drv_region;

/* What the sample path reads besides the bucket: one line per CPU, with
 * private copies of the global settings (DCPI's per-processor block). */
typedef struct drv_pcpu {
    drv_cpu_shm *s;
    drv_entry *table;
    drv_entry *buf[2];
    uint32_t nbuckets;
    uint32_t bufcap;
    uint32_t max_count;
    uint8_t policy, full_mode;
} __attribute__((aligned(64))) drv_pcpu;

struct drv {
    drv_pcpu *cpu;                 /* ncpus lines */
    drv_region r;
    pthread_mutex_t notice_lock;
};

struct drvc {
    drv_region r;
    int flags;
    int locked;                    /* holds the consumer lock */
    char path_buf[DRV_MAX_PATH + 1];
    int (*values)(void *ctx, const drv_value_batch *b);   /* drvc_set_value_sink */
    void *values_ctx;
    drv_entry chunk[DRV_SALVAGE_CHUNK];   /* table entries on their way out */
};

static inline drv_cpu_shm *drv_cpu_at(const drv_region *r, unsigned cpu)
{
    return (drv_cpu_shm *)(r->map + r->h->cpu_offset + (uint64_t)cpu * r->h->cpu_size);
}
static inline drv_entry *drv_table_at(const drv_region *r, unsigned cpu)
{
    return (drv_entry *)((uint8_t *)drv_cpu_at(r, cpu) + DRV_CPU_HDR);
}
static inline drv_entry *drv_buf_at(const drv_region *r, unsigned cpu, unsigned b)
{
    return drv_table_at(r, cpu) + r->table_entries + (size_t)b * r->buffer_entries;
}

static inline drv_vring_shm *drv_vring_at(const drv_region *r, unsigned cpu)
{
    return (drv_vring_shm *)(r->map + r->h->value_offset + (uint64_t)cpu * r->h->value_ring_size);
}
static inline drv_value *drv_values_at(const drv_region *r, unsigned cpu)
{
    return (drv_value *)((uint8_t *)drv_vring_at(r, cpu) + DRV_VRING_HDR);
}

/* driver_values.c: the consumer's part, from take_all (driver_drain.c):
 * note how far each ring was written, then (after the notices) hand the
 * records up to there to the value sink. */
int drv_values_snapshot(const drv_region *r, uint64_t *heads, drv_error *err);
int drv_values_take(drvc *c, const uint64_t *heads, drv_error *err);

/* driver_region.c */
int drv_fail(drv_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int drv_lock(int fd, int which, int wait_ms);
void drv_unlock(int fd, int which);
int drv_lock_held(int fd, int which);   /* 1 held by someone else, 0 free, <0 error */
uint64_t drv_now_ns(void);
void drv_nap(unsigned *us);            /* sleep, backing off up to 2 ms */
int drv_check_cpu_state(const drv_region *r, unsigned cpu, drv_error *err);
void drv_read_counters(const drv_region *r, int cpu, drv_counters *out);

/* driver_notice.c */
int drv_notice_read(drv_region *r, const drvc_sink *s, char *path_buf, drv_error *err);

#endif
