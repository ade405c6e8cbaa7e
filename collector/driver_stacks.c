/*
 * collector/driver_stacks.c: per-CPU rings of stack records beside a
 * driver region (collector/driver_stacks.h, docs/driver-shm.md "Stack
 * rings").
 *
 * File = header page | per CPU: a control page (producer line, consumer
 * line) then ring_bytes of records.  A record is 8-byte aligned and never
 * split by the ring's end: u32 length, u16 frames, u8 event, u8 end, u32
 * pid, u32 zero, then the frames as u64; a record with no frames pads the
 * ring's tail.  head and tail count bytes ever written and taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/driver_stacks.h"

#define MAGIC    "cpo-stk\n"
#define VERSION  1u
#define ENDIAN   0x01020304u
#define PAGE     4096u
#define REC_HDR  16u

typedef struct stk_header {
    char magic[8];
    uint32_t version, endian, ncpus, ring_bytes;
    uint64_t total_size, created_ns;
} stk_header;

typedef struct stk_ctl {
    _Atomic uint64_t head;       /* producer line */
    _Atomic uint64_t put, lost;
    uint8_t pad0[64 - 24];
    _Atomic uint64_t tail;       /* consumer line */
    _Atomic uint64_t taken;
    uint8_t pad1[64 - 16];
} stk_ctl;

_Static_assert(sizeof(stk_header) <= PAGE, "header fits its page");
_Static_assert(sizeof(stk_ctl) == 128, "two lines");

struct drv_stacks {
    int fd;
    uint8_t *map;
    size_t size;
    unsigned ncpus;
    uint32_t ring;
};

#define BUMP(x, n) atomic_store_explicit(&(x), atomic_load_explicit(&(x), memory_order_relaxed) + (n), \
                                         memory_order_relaxed)

static stk_ctl *ctl(const drv_stacks *s, unsigned cpu)
{
    return (stk_ctl *)(s->map + PAGE + (size_t)cpu * (PAGE + s->ring));
}

static uint8_t *ring(const drv_stacks *s, unsigned cpu)
{
    return (uint8_t *)ctl(s, cpu) + PAGE;
}

static char *path_of(const char *region)
{
    size_t n = strlen(region) + sizeof DRV_STACKS_SUFFIX;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s", region, DRV_STACKS_SUFFIX);
    return p;
}

static int fail(drv_error *err, int code, const char *path, const char *fmt, const char *what)
{
    err->code = code;
    snprintf(err->msg, sizeof err->msg, fmt, path ? path : "?", what);
    return code;
}

/* Map and check an open file; 0 or an error. */
static int map_file(drv_stacks *s, const char *path, drv_error *err)
{
    struct stat st;
    if (fstat(s->fd, &st) != 0)
        return fail(err, DRV_EIO, path, "%s: %s", strerror(errno));
    if ((size_t)st.st_size < PAGE)
        return fail(err, DRV_EFORMAT, path, "%s: %s", "too short for a stack-ring file");
    s->size = (size_t)st.st_size;
    s->map = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        return fail(err, DRV_EIO, path, "%s: mmap: %s", strerror(errno));
    }
    const stk_header *h = (const stk_header *)s->map;
    if (memcmp(h->magic, MAGIC, 8) || h->endian != ENDIAN)
        return fail(err, DRV_EFORMAT, path, "%s: %s", "not a stack-ring file");
    if (h->version != VERSION)
        return fail(err, DRV_EVERSION, path, "%s: %s", "stack-ring file of another version");
    if (!h->ncpus || h->ncpus > DRV_MAX_CPUS || h->ring_bytes < PAGE || h->ring_bytes > DRV_STACKS_MAX_RING ||
        (h->ring_bytes & (h->ring_bytes - 1)) ||
        h->total_size != PAGE + (uint64_t)h->ncpus * (PAGE + h->ring_bytes) || h->total_size != s->size)
        return fail(err, DRV_ECORRUPT, path, "%s: %s", "inconsistent stack-ring header");
    s->ncpus = h->ncpus;
    s->ring = h->ring_bytes;
    return 0;
}

static void drop(drv_stacks *s)
{
    if (!s)
        return;
    if (s->map)
        munmap(s->map, s->size);
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}

drv_stacks *drv_stacks_create(const char *region, unsigned ncpus, uint32_t ring_bytes, drv_error *err)
{
    uint32_t rb = ring_bytes ? ring_bytes : DRV_STACKS_DEF_RING;
    char *path = path_of(region);
    drv_stacks *s = calloc(1, sizeof *s);
    if (!path || !s) {
        free(path);
        free(s);
        fail(err, DRV_ENOMEM, region, "%s: %s", "out of memory");
        return NULL;
    }
    s->fd = -1;
    if (!ncpus || ncpus > DRV_MAX_CPUS || rb < PAGE || rb > DRV_STACKS_MAX_RING || (rb & (rb - 1))) {
        fail(err, DRV_EINVAL, path, "%s: %s", "bad CPU count or ring size");
        goto bad;
    }
    s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        fail(err, DRV_EIO, path, "%s: %s", strerror(errno));
        goto bad;
    }
    uint64_t total = PAGE + (uint64_t)ncpus * (PAGE + rb);
    struct stat st;
    if (fstat(s->fd, &st) == 0 && (uint64_t)st.st_size == total && map_file(s, path, err) == 0 &&
        s->ncpus == ncpus && s->ring == rb) {
        free(path);
        return s;       /* the same shape: resumed with what it holds */
    }
    if (s->map) {
        munmap(s->map, s->size);
        s->map = NULL;
    }
    if (ftruncate(s->fd, 0) != 0 || ftruncate(s->fd, (off_t)total) != 0) {
        fail(err, DRV_EIO, path, "%s: %s", strerror(errno));
        goto bad;
    }
    int rc = posix_fallocate(s->fd, 0, (off_t)total);
    if (rc && rc != EOPNOTSUPP && rc != EINVAL) {
        fail(err, DRV_EIO, path, "%s: cannot reserve the stack rings: %s", strerror(rc));
        goto bad;
    }
    s->size = total;
    s->map = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        fail(err, DRV_EIO, path, "%s: mmap: %s", strerror(errno));
        goto bad;
    }
    stk_header *h = (stk_header *)s->map;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *h = (stk_header){ .version = VERSION, .endian = ENDIAN, .ncpus = ncpus, .ring_bytes = rb,
                       .total_size = total, .created_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec };
    s->ncpus = ncpus;
    s->ring = rb;
    atomic_thread_fence(memory_order_release);
    memcpy(h->magic, MAGIC, 8);   /* last: a reader sees a whole header or none */
    free(path);
    return s;
bad:
    free(path);
    drop(s);
    return NULL;
}

int drv_stack_put(drv_stacks *s, unsigned cpu, uint32_t pid, unsigned event, unsigned end,
                  const uint64_t *pc, unsigned n)
{
    if (cpu >= s->ncpus || !n || n > DRV_STACKS_MAX_FRAMES || event > 255 || end > 255)
        return DRV_EINVAL;
    stk_ctl *c = ctl(s, cpu);
    uint8_t *r = ring(s, cpu);
    uint64_t size = REC_HDR + 8u * (uint64_t)n;
    uint64_t h = atomic_load_explicit(&c->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&c->tail, memory_order_acquire);
    uint64_t pos = h % s->ring, pad = pos + size > s->ring ? s->ring - pos : 0;
    if (size > s->ring || h + pad + size - t > s->ring)
        return DRV_FULL;
    if (pad) {
        uint32_t rec[4] = { (uint32_t)pad, 0, 0, 0 };
        memcpy(r + pos, rec, sizeof rec);
        h += pad;
        pos = 0;
    }
    uint32_t rec[4] = { (uint32_t)size, (uint32_t)n | event << 16 | end << 24, pid, 0 };
    memcpy(r + pos, rec, sizeof rec);
    memcpy(r + pos + REC_HDR, pc, 8u * n);
    atomic_store_explicit(&c->head, h + size, memory_order_release);
    BUMP(c->put, 1);
    return DRV_OK;
}

void drv_stacks_lost(drv_stacks *s, unsigned cpu)
{
    if (cpu < s->ncpus)
        BUMP(ctl(s, cpu)->lost, 1);
}

drv_stacks *drv_stacks_open(const char *region, drv_error *err)
{
    char *path = path_of(region);
    drv_stacks *s = calloc(1, sizeof *s);
    if (!path || !s) {
        free(path);
        free(s);
        fail(err, DRV_ENOMEM, region, "%s: %s", "out of memory");
        return NULL;
    }
    s->fd = open(path, O_RDWR | O_CLOEXEC);
    if (s->fd < 0 || map_file(s, path, err) != 0) {
        if (s->fd < 0)
            fail(err, DRV_EIO, path, "%s: %s", strerror(errno));
        free(path);
        drop(s);
        return NULL;
    }
    free(path);
    return s;
}

int drv_stacks_take(drv_stacks *s, int (*fn)(void *ctx, unsigned cpu, const drv_stack_rec *r),
                    void *ctx, drv_error *err)
{
    int taken = 0;
    uint64_t pcs[DRV_STACKS_MAX_FRAMES];
    for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
        stk_ctl *c = ctl(s, cpu);
        const uint8_t *r = ring(s, cpu);
        uint64_t t = atomic_load_explicit(&c->tail, memory_order_relaxed);
        uint64_t h = atomic_load_explicit(&c->head, memory_order_acquire);
        if (h < t || h - t > s->ring || (h | t) % 8)
            return fail(err, DRV_ECORRUPT, "stack ring", "%s: %s", "head and tail inconsistent");
        while (t < h) {
            uint64_t pos = t % s->ring;
            uint32_t rec[4];
            memcpy(rec, r + pos, sizeof rec);
            unsigned n = rec[1] & 0xffff;
            if (!n) {
                if (rec[0] != s->ring - pos || t + rec[0] > h)
                    return fail(err, DRV_ECORRUPT, "stack ring", "%s: %s", "bad padding record");
                t += rec[0];
                continue;
            }
            if (n > DRV_STACKS_MAX_FRAMES || rec[0] != REC_HDR + 8u * n || pos + rec[0] > s->ring ||
                t + rec[0] > h)
                return fail(err, DRV_ECORRUPT, "stack ring", "%s: %s", "bad record");
            memcpy(pcs, r + pos + REC_HDR, 8u * n);
            drv_stack_rec sr = { rec[2], rec[1] >> 16 & 0xff, rec[1] >> 24, n, pcs, t, t + rec[0] };
            if (fn(ctx, cpu, &sr)) {
                atomic_store_explicit(&c->tail, t, memory_order_release);
                err->code = DRV_ESINK;
                snprintf(err->msg, sizeof err->msg, "stack ring: the consumer refused a record");
                return DRV_ESINK;
            }
            t += rec[0];
            BUMP(c->taken, 1);
            taken++;
        }
        atomic_store_explicit(&c->tail, t, memory_order_release);
    }
    return taken;
}

void drv_stacks_counters_get(const drv_stacks *s, drv_stacks_counters *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
        const stk_ctl *c = ctl(s, cpu);
        out->put += atomic_load_explicit(&c->put, memory_order_relaxed);
        out->lost += atomic_load_explicit(&c->lost, memory_order_relaxed);
        out->taken += atomic_load_explicit(&c->taken, memory_order_relaxed);
    }
}

void drv_stacks_close(drv_stacks *s)
{
    drop(s);
}

void drv_stacks_unlink(const char *region)
{
    char *p = path_of(region);
    if (p)
        unlink(p);
    free(p);
}
