/*
 * collector/driver.h: the sampling driver, the part of DCPI that lived in
 * the kernel, as a shared-memory region between two processes.
 *
 * The producer is the machine (axp).  It calls drv_sample() once per
 * performance-counter overflow; each simulated CPU aggregates its samples in
 * a private 4-way hash table of (pid, pc, event) -> count and spills evicted
 * entries into a pair of overflow buffers.  It also posts image-load,
 * fork, exec and exit notices.
 *
 * The consumer is the daemon (cpod).  It takes full overflow buffers, asks
 * the CPUs to flush their hash tables, reads the notices and the counters,
 * and recovers everything a crashed producer left behind.
 *
 * There is no lock on the sample path: each CPU's structures are written by
 * one thread only, and the two sides meet through a handful of C11 atomics
 * (buffer states, flush request and acknowledgement).  The region layout and
 * the protocol are specified in docs/driver-shm.md.
 *
 * Threads: each CPU must be driven by one thread at a time (any thread, as
 * long as calls for one CPU do not overlap); different CPUs may be driven by
 * different threads concurrently.  The notice calls may come from any thread.
 */
#ifndef COLLECTOR_DRIVER_H
#define COLLECTOR_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Results.  The positive ones come only from drv_sample(). */
enum {
    DRV_OK = 0,
    DRV_DROPPED = 1,      /* no overflow space: the sample was counted as dropped */
    DRV_FULL = 2,         /* stall mode, no overflow space: nothing recorded, retry */
    DRV_EINVAL = -1,      /* bad argument */
    DRV_EIO = -2,         /* a system call failed (message says which) */
    DRV_EFORMAT = -3,     /* not a driver region (magic, byte order, size) */
    DRV_EVERSION = -4,    /* a region of another layout version */
    DRV_ECORRUPT = -5,    /* inconsistent header, buffer or notice */
    DRV_EBUSY = -6,       /* another producer / consumer holds the region */
    DRV_ETIMEDOUT = -7,   /* the other side did not answer in time */
    DRV_ERETIRED = -8,    /* the region was replaced by a new one: reopen */
    DRV_EGEOMETRY = -9,   /* an existing region of another shape holds data */
    DRV_ENOMEM = -10,
    DRV_ESINK = -11,      /* a consumer callback refused the data (kept) */
};

typedef struct drv_error {
    int code;
    char msg[512];        /* "PATH: what is wrong" */
} drv_error;

const char *drv_strerror(int code);

/* Limits of the packed entry (see docs/driver-shm.md). */
#define DRV_MAX_PID    0xffffffu    /* 24 bits */
#define DRV_MAX_BUILD_ID 64u        /* bytes of build-id a LOAD notice carries */
#define DRV_MAX_EVENT  0xffu        /* 8 bits */
#define DRV_MAX_CPUS   1024u
#define DRV_WAYS       4u

/* One aggregated sample: 16 bytes, in hash tables and overflow buffers. */
typedef struct drv_entry {
    uint64_t pc;
    uint32_t pid_event;   /* pid << 8 | event */
    uint32_t count;       /* 0: empty slot; saturates at the region's max_count */
} drv_entry;

static inline uint32_t drv_entry_pid(const drv_entry *e) { return e->pid_event >> 8; }
static inline unsigned drv_entry_event(const drv_entry *e) { return e->pid_event & 0xff; }

typedef enum {
    DRV_POLICY_FRONT = 0,  /* hit: swap to the bucket's front; miss: insert at front */
    DRV_POLICY_RR = 1,     /* DCPI's: a per-CPU mod-4 counter picks the victim */
} drv_policy;

typedef enum {
    DRV_FULL_DROP = 0,     /* a sample with nowhere to go is dropped and counted */
    DRV_FULL_STALL = 1,    /* ... is refused with DRV_FULL; the caller retries */
} drv_full_mode;

typedef struct drv_params {
    unsigned ncpus;             /* 1..DRV_MAX_CPUS */
    unsigned table_entries;     /* per CPU, a power of two >= 4; 0: 16384 (or the region's) */
    unsigned buffer_entries;    /* per overflow buffer, 16..2^24; 0: 8192 (or the region's) */
    unsigned notice_bytes;      /* notice ring, a power of two >= 4096; 0: 256 KiB (or the region's) */
    drv_policy policy;
    drv_full_mode full_mode;
    uint32_t max_count;         /* counts saturate here (>= 2); 0: UINT32_MAX */
    unsigned value_entries;     /* per-CPU value ring, a power of two 16..2^24; 0: none (or the region's) */
} drv_params;

/* Counters of one CPU, or of all of them added up.  Both sides can read
 * them at any time; each is exact once the producer is quiet. */
typedef struct drv_counters {
    uint64_t samples;           /* hits + misses */
    uint64_t hits;              /* key found in the hash table */
    uint64_t misses;            /* key not found (includes dropped ones) */
    uint64_t evictions;         /* entries pushed out of the table by the sample path */
    uint64_t saturations;       /* ... of which because the count saturated */
    uint64_t overflow_entries;  /* entries written to overflow buffers (evictions + flushes) */
    uint64_t buffers_handed;    /* overflow buffers handed to the consumer */
    uint64_t full_waits;        /* sample calls that found both buffers full */
    uint64_t dropped;           /* samples lost that way (DRV_FULL_DROP) */
    uint64_t flushes;           /* flush requests completed */
    uint64_t flush_entries;     /* entries moved out of the table by flushes */
    uint64_t buffers_taken;     /* buffers the consumer has taken */
    uint64_t entries_taken;     /* entries in them */
    uint64_t salvaged_entries;  /* entries recovered after the producer died */
    uint64_t notices;           /* notices posted (region-wide, in totals only) */
    uint64_t notices_lost;      /* notices refused because the ring was full */
    uint64_t values_posted;     /* value records put in the value rings */
    uint64_t values_dropped;    /* value records refused because a ring was full */
    uint64_t values_taken;      /* value records the consumer has taken */
} drv_counters;

/* Field names in struct order, for printing (e.g. as JSON keys). */
extern const char *const drv_counter_names[];
#define DRV_NCOUNTERS (sizeof(drv_counters) / sizeof(uint64_t))
static inline uint64_t drv_counter_at(const drv_counters *c, size_t i)
{
    return ((const uint64_t *)c)[i];
}

/* ---- producer (the machine) ----------------------------------------------- */

typedef struct drv drv;

/* Create the region at PATH (an ordinary file; on a tmpfs for speed), or
 * attach to the one there: a region of the same shape is resumed with all
 * its contents; a region of another shape is replaced only when it holds no
 * data, else DRV_EGEOMETRY.  One producer per region (DRV_EBUSY). */
drv *drv_open(const char *path, const drv_params *p, drv_error *err);

/* Detach.  Nothing is flushed and nothing is lost: the consumer takes what
 * remains (drvc_salvage) or the next drv_open resumes it. */
void drv_close(drv *d);

unsigned drv_ncpus(const drv *d);

/* One counter overflow on CPU cpu.  No lock, no system call.  Returns
 * DRV_OK, DRV_DROPPED, DRV_FULL (stall mode: present the same sample
 * again later) or DRV_EINVAL (cpu, pid or event out of range). */
int drv_sample(drv *d, unsigned cpu, uint32_t pid, uint64_t pc, unsigned event);

/* A safe point: answers a pending flush request.  Call it for every CPU,
 * busy or idle, at least once per scheduling quantum, or the consumer's
 * flush times out.  Returns DRV_OK, or DRV_FULL while a flush is waiting
 * for the consumer to free an overflow buffer. */
int drv_poll(drv *d, unsigned cpu);

/* Stall mode helper: sleep until CPU cpu has overflow space again (DRV_OK)
 * or timeout_ms passes (DRV_ETIMEDOUT).  Never on the sample path. */
int drv_wait(drv *d, unsigned cpu, int timeout_ms);

/* Notices, in the order the machine makes them.  A LOAD must be posted
 * before any sample in that mapping, an EXIT after the process's last one.
 * Returns DRV_OK, DRV_DROPPED (ring full; counted) or DRV_EINVAL. */
int drv_notice_load(drv *d, uint32_t pid, uint64_t base, uint64_t size, uint64_t offset,
                    const char *path, const uint8_t *build_id, size_t build_id_len);
int drv_notice_exit(drv *d, uint32_t pid, int32_t status);
int drv_notice_fork(drv *d, uint32_t ppid, uint32_t pid);
int drv_notice_exec(drv *d, uint32_t pid);

/* Inspection, for tests and tools: the bucket a key hashes to (the same on
 * every CPU), and a copy of one bucket's four slots. */
unsigned drv_bucket(const drv *d, uint32_t pid, uint64_t pc, unsigned event);
int drv_bucket_read(const drv *d, unsigned cpu, unsigned bucket, drv_entry out[DRV_WAYS]);

/* cpu < ncpus: that CPU; cpu < 0: the total. */
void drv_counters_get(const drv *d, int cpu, drv_counters *out);

/* Is some consumer attached to the region? */
bool drv_consumer_alive(const drv *d);

/* ---- consumer (the daemon) -------------------------------------------------- */

typedef struct drvc drvc;

enum { DRVC_READONLY = 1 };   /* counters and liveness only; no lock taken */

/* Open an existing region.  One consumer per region (DRV_EBUSY) unless
 * DRVC_READONLY. */
drvc *drvc_open(const char *path, int flags, drv_error *err);
void drvc_close(drvc *c);
unsigned drvc_ncpus(const drvc *c);

typedef enum {
    DRV_SRC_BUFFER = 0,   /* an overflow buffer the producer handed over */
    DRV_SRC_ACTIVE = 1,   /* salvage: the part-filled buffer of a dead producer */
    DRV_SRC_TABLE = 2,    /* salvage: hash-table entries of a dead producer */
} drv_source;

typedef struct drv_batch {
    unsigned cpu;
    drv_source source;
    uint64_t seq;             /* the buffer's hand-over number on this CPU */
    const drv_entry *e;       /* read-only; valid only during the callback */
    size_t n;
} drv_batch;

enum { DRV_NOTICE_LOAD = 1, DRV_NOTICE_EXIT = 2, DRV_NOTICE_FORK = 3, DRV_NOTICE_EXEC = 4 };

typedef struct drv_notice {
    int type;
    uint64_t seq;             /* 0, 1, 2... in posting order */
    uint32_t pid;
    uint32_t ppid;            /* FORK: the parent */
    int32_t status;           /* EXIT: the wait status */
    uint64_t base, size, offset;   /* LOAD: mapped at base, size bytes, from file offset */
    uint8_t build_id[DRV_MAX_BUILD_ID];
    size_t build_id_len;
    const char *path;         /* LOAD: NUL-terminated; valid only during the callback */
} drv_notice;

/* Where the consumer's data goes.  A callback returning nonzero refuses the
 * batch or notice: it stays in the region and the call fails with DRV_ESINK,
 * so a daemon that cannot store data yet loses nothing. */
typedef struct drvc_sink {
    int (*entries)(void *ctx, const drv_batch *b);
    int (*notice)(void *ctx, const drv_notice *n);   /* NULL: leave notices */
    void *ctx;
} drvc_sink;

/* Wait up to timeout_ms for full overflow buffers and hand every one to the
 * sink, oldest first; pending notices go to the sink before any buffer.
 * Returns the number of buffers (0 on timeout) or a negative error. */
int drvc_collect(drvc *c, int timeout_ms, const drvc_sink *s, drv_error *err);

/* Ask every CPU to move its hash table out and hand over its part-filled
 * buffer, collecting meanwhile, and return once all have acknowledged:
 * every sample taken before the call has then reached the sink.  If the
 * producer is gone, salvages instead.  DRV_ETIMEDOUT names the CPU that did
 * not answer. */
int drvc_flush(drvc *c, int timeout_ms, const drvc_sink *s, drv_error *err);

/* With no producer attached: deliver everything left in the region (full
 * buffers, part-filled buffers, hash tables) and empty it.  DRV_EBUSY if a
 * producer is attached. */
int drvc_salvage(drvc *c, const drvc_sink *s, drv_error *err);

/* Hand every pending notice to s->notice.  Returns how many, or < 0. */
int drvc_notices(drvc *c, const drvc_sink *s, drv_error *err);

void drvc_counters(const drvc *c, int cpu, drv_counters *out);
bool drvc_producer_alive(const drvc *c);

/* ---- value samples (driver_values.c) ------------------------------------------
 * Value-sampling records travel beside the samples: each CPU has a ring
 * of fixed records in the region (when it was made with value_entries),
 * written by the producer alone and read by the consumer alone; nothing
 * aggregates them.  A full ring drops the record and counts it, so
 * posted = taken + dropped + what the rings hold. */
enum { DRV_VALUE_RESULT = 1, DRV_VALUE_ADDRESS = 2, DRV_VALUE_LATENCY = 3, DRV_VALUE_TARGET = 4 };
#define DRV_MAX_VALUE_KIND DRV_VALUE_TARGET
#define DRV_MIN_VALUES 16u
#define DRV_MAX_VALUES (1u << 24)

typedef struct drv_value {
    uint64_t pc;
    uint64_t value;           /* LATENCY: cycles */
    uint32_t pid;
    uint8_t kind;             /* DRV_VALUE_* */
    uint8_t level;            /* LATENCY: 0 D-cache, 1 S-cache, 2 B-cache, 3 memory */
    uint16_t pad;
    uint64_t run;             /* the value-sampling run it came from */
} drv_value;

/* Producer: one record from CPU cpu.  DRV_OK, DRV_DROPPED (ring full),
 * DRV_EINVAL (no rings, cpu, pid or kind out of range). */
int drv_value_post(drv *d, unsigned cpu, const drv_value *v);
unsigned drv_value_entries(const drv *d);   /* 0: the region has no value rings */

typedef struct drv_value_batch {
    unsigned cpu;
    const drv_value *v;       /* read-only; valid only during the callback */
    size_t n;
    uint64_t first;           /* v[0]'s place in the CPU's stream: a batch
                               * refused or taken by a consumer that died
                               * before the ring moved on comes again with
                               * the same numbers */
} drv_value_batch;

/* Consumer: from now on drvc_collect, drvc_flush and drvc_salvage hand the
 * value records to fn too, after the notices posted before them.  fn
 * returning nonzero refuses the batch: it stays in the ring (DRV_ESINK). */
void drvc_set_value_sink(drvc *c, int (*fn)(void *ctx, const drv_value_batch *b), void *ctx);

/* Check a region header held in memory (len bytes of the file's start,
 * file_size the whole file's size).  DRV_OK or the error, with a message. */
int drv_check_header(const void *buf, size_t len, uint64_t file_size, drv_error *err);

#endif
