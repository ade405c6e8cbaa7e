/*
 * collector/driver_region.c: creating, checking and attaching the shared
 * region, and the locks that tell each side whether the other is alive.
 *
 * A region becomes visible at its path only when complete: it is built in a
 * temporary file next to it and then hard-linked into place, so a consumer
 * never maps half a header, and two producers racing to create it cannot
 * both win (link fails on an existing name, rename would not).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/driver_shm.h"

const char *const drv_counter_names[] = {
    "samples", "hits", "misses", "evictions", "saturations", "overflow_entries",
    "buffers_handed", "full_waits", "dropped", "flushes", "flush_entries",
    "buffers_taken", "entries_taken", "salvaged_entries", "notices", "notices_lost",
    "values_posted", "values_dropped", "values_taken",
};
_Static_assert(sizeof drv_counter_names / sizeof *drv_counter_names == DRV_NCOUNTERS,
               "one name per counter");

const char *drv_strerror(int code)
{
    switch (code) {
    case DRV_OK: return "ok";
    case DRV_DROPPED: return "sample dropped (overflow buffers full)";
    case DRV_FULL: return "overflow buffers full";
    case DRV_EINVAL: return "invalid argument";
    case DRV_EIO: return "system error";
    case DRV_EFORMAT: return "not a driver region";
    case DRV_EVERSION: return "unsupported region version";
    case DRV_ECORRUPT: return "corrupt region";
    case DRV_EBUSY: return "region in use";
    case DRV_ETIMEDOUT: return "timed out";
    case DRV_ERETIRED: return "region replaced";
    case DRV_EGEOMETRY: return "region of another shape holds data";
    case DRV_ENOMEM: return "out of memory";
    case DRV_ESINK: return "consumer refused data";
    }
    return "unknown error";
}

int drv_fail(drv_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

uint64_t drv_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void drv_nap(unsigned *us)
{
    struct timespec ts = { 0, (long)*us * 1000 };
    nanosleep(&ts, NULL);
    if (*us < 2000)
        *us = *us * 2 > 2000 ? 2000 : *us * 2;
}

/* ---- liveness locks ------------------------------------------------------- */

static struct flock lock_range(int which, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);   /* OFD locks insist on l_pid == 0 */
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = which;
    fl.l_len = 1;
    return fl;
}

int drv_lock(int fd, int which, int wait_ms)
{
    uint64_t end = drv_now_ns() + (uint64_t)wait_ms * 1000000u;
    unsigned us = 100;
    for (;;) {
        struct flock fl = lock_range(which, F_WRLCK);
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES)
            return -1;
        if (drv_now_ns() >= end)
            return 1;
        drv_nap(&us);
    }
}

void drv_unlock(int fd, int which)
{
    struct flock fl = lock_range(which, F_UNLCK);
    fcntl(fd, F_OFD_SETLK, &fl);
}

int drv_lock_held(int fd, int which)
{
    struct flock fl = lock_range(which, F_WRLCK);
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
        return -1;
    return fl.l_type != F_UNLCK;
}

/* ---- layout --------------------------------------------------------------- */

typedef struct layout {
    uint32_t cpu_size;
    uint64_t cpu_offset, notice_offset, total;
    uint32_t value_ring_size;
    uint64_t value_offset;
} layout;

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
static int pow2(uint64_t x) { return x && !(x & (x - 1)); }

static layout layout_of(uint32_t ncpus, uint32_t table, uint32_t buffer, uint32_t notice, uint32_t values)
{
    layout l;
    l.cpu_size = (uint32_t)round_up(DRV_CPU_HDR + ((uint64_t)table + 2u * buffer) * 16u, DRV_PAGE);
    l.cpu_offset = DRV_HEADER_SIZE;
    l.notice_offset = l.cpu_offset + (uint64_t)ncpus * l.cpu_size;
    l.total = l.notice_offset + notice;
    /* value rings after the notice ring, so a region without them is laid
     * out as before they existed */
    l.value_ring_size = values ? (uint32_t)round_up(DRV_VRING_HDR + (uint64_t)values * sizeof(drv_value), DRV_PAGE) : 0;
    l.value_offset = values ? l.total : 0;
    l.total += (uint64_t)ncpus * l.value_ring_size;
    return l;
}

/* The geometry limits, shared by drv_open's parameter check and the header
 * check; returns the name of the first bad field or NULL. */
static const char *bad_geometry(uint64_t ncpus, uint64_t table, uint64_t buffer, uint64_t notice, uint64_t values)
{
    if (values && (!pow2(values) || values < DRV_MIN_VALUES || values > DRV_MAX_VALUES)) return "value_entries";
    if (ncpus < 1 || ncpus > DRV_MAX_CPUS) return "ncpus";
    if (!pow2(table) || table < DRV_WAYS || table > DRV_MAX_TABLE) return "table_entries";
    if (buffer < DRV_MIN_BUFFER || buffer > DRV_MAX_BUFFER) return "buffer_entries";
    if (!pow2(notice) || notice < DRV_MIN_NOTICE || notice > DRV_MAX_NOTICE) return "notice_bytes";
    return NULL;
}

int drv_check_header(const void *buf, size_t len, uint64_t file_size, drv_error *err)
{
    const drv_shm_header *h = buf;
    if (len < DRV_HEADER_SIZE || file_size < DRV_HEADER_SIZE)
        return drv_fail(err, DRV_EFORMAT, "too short for a driver region (%llu bytes)",
                        (unsigned long long)file_size);
    if (memcmp(h->magic, DRV_MAGIC, 8) != 0)
        return drv_fail(err, DRV_EFORMAT, "not a driver region (bad magic)");
    if (h->endian != DRV_ENDIAN)
        return drv_fail(err, DRV_EFORMAT, "driver region of another byte order");
    if (h->version != DRV_VERSION)
        return drv_fail(err, DRV_EVERSION, "driver region version %u, this build reads %u",
                        h->version, DRV_VERSION);
    if (h->header_size != DRV_HEADER_SIZE || h->ways != DRV_WAYS || h->entry_size != sizeof(drv_entry))
        return drv_fail(err, DRV_ECORRUPT, "header_size %u, ways %u, entry_size %u: expected %u, %u, %zu",
                        h->header_size, h->ways, h->entry_size, DRV_HEADER_SIZE, DRV_WAYS,
                        sizeof(drv_entry));
    const char *bad = bad_geometry(h->ncpus, h->table_entries, h->buffer_entries, h->notice_bytes, h->value_entries);
    if (bad)
        return drv_fail(err, DRV_ECORRUPT, "header field %s out of range", bad);
    layout l = layout_of(h->ncpus, h->table_entries, h->buffer_entries, h->notice_bytes, h->value_entries);
    if (h->value_ring_size != l.value_ring_size || h->value_offset != l.value_offset)
        return drv_fail(err, DRV_ECORRUPT, "value ring offsets do not match their geometry "
                        "(value_ring_size %u, value_offset %llu)", h->value_ring_size,
                        (unsigned long long)h->value_offset);
    if (h->cpu_size != l.cpu_size || h->cpu_offset != l.cpu_offset ||
        h->notice_offset != l.notice_offset || h->total_size != l.total)
        return drv_fail(err, DRV_ECORRUPT, "header offsets do not match its geometry "
                        "(cpu_size %u, cpu_offset %llu, notice_offset %llu, total_size %llu)",
                        h->cpu_size, (unsigned long long)h->cpu_offset,
                        (unsigned long long)h->notice_offset, (unsigned long long)h->total_size);
    if (file_size != h->total_size)
        return drv_fail(err, DRV_ECORRUPT, "file is %llu bytes, header says %llu",
                        (unsigned long long)file_size, (unsigned long long)h->total_size);
    uint64_t head = atomic_load_explicit(&((drv_shm_header *)h)->notice_head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&((drv_shm_header *)h)->notice_tail, memory_order_acquire);
    if ((head | tail) % 8 || head < tail || head - tail > h->notice_bytes)
        return drv_fail(err, DRV_ECORRUPT, "notice ring head %llu / tail %llu inconsistent",
                        (unsigned long long)head, (unsigned long long)tail);
    return DRV_OK;
}

/* A producer killed inside a hand-over leaves one of two states behind
 * (see the store order in driver_sample.c); both are completed here. */
static void repair_cpu_state(drv_cpu_shm *s)
{
    if (s->have_buf == 1 && s->cur <= 1 &&
        atomic_load_explicit(&s->desc[s->cur].state, memory_order_acquire) == DRV_BUF_FULL)
        s->have_buf = 0;
    if (s->have_buf == 0)
        s->fill = 0;
}

int drv_check_cpu_state(const drv_region *r, unsigned cpu, drv_error *err)
{
    drv_cpu_shm *s = drv_cpu_at(r, cpu);
    repair_cpu_state(s);   /* callers hold the producer lock on a writable map */
    const char *bad = NULL;
    if (s->cur > 1) bad = "cur";
    else if (s->have_buf > 1) bad = "have_buf";
    else if (s->fill >= r->buffer_entries) bad = "fill";
    else if (s->rr >= DRV_WAYS) bad = "rr";
    else if (s->flush_busy > 1) bad = "flush_busy";
    else if (r->value_entries) {
        drv_vring_shm *v = drv_vring_at(r, cpu);
        uint64_t head = atomic_load(&v->head), tail = atomic_load(&v->tail);
        if (head < tail || head - tail > r->value_entries)
            bad = "value ring head/tail";
    }
    else if (s->flush_bucket > r->table_entries / DRV_WAYS) bad = "flush_bucket";
    for (unsigned b = 0; !bad && b < 2; b++) {
        uint32_t st = atomic_load_explicit(&s->desc[b].state, memory_order_acquire);
        if (st > DRV_BUF_FULL) bad = "buffer state";
        else if (st == DRV_BUF_FULL && s->desc[b].count > r->buffer_entries) bad = "buffer count";
    }
    if (bad)
        return drv_fail(err, DRV_ECORRUPT, "%s: cpu %u: bad %s", r->path, cpu, bad);
    return DRV_OK;
}

void drv_read_counters(const drv_region *r, int cpu, drv_counters *out)
{
    memset(out, 0, sizeof *out);
    unsigned lo = cpu < 0 ? 0 : (unsigned)cpu, hi = cpu < 0 ? r->ncpus : (unsigned)cpu + 1;
    if (cpu >= (int)r->ncpus)
        return;
    for (unsigned i = lo; i < hi; i++) {
        drv_cpu_shm *s = drv_cpu_at(r, i);
        out->hits += DRV_LOAD(s->hits);
        out->misses += DRV_LOAD(s->misses);
        out->evictions += DRV_LOAD(s->evictions);
        out->saturations += DRV_LOAD(s->saturations);
        out->overflow_entries += DRV_LOAD(s->overflow_entries);
        out->buffers_handed += DRV_LOAD(s->buffers_handed);
        out->full_waits += DRV_LOAD(s->full_waits);
        out->dropped += DRV_LOAD(s->dropped);
        out->flushes += DRV_LOAD(s->flushes);
        out->flush_entries += DRV_LOAD(s->flush_entries);
        out->buffers_taken += DRV_LOAD(s->buffers_taken);
        out->entries_taken += DRV_LOAD(s->entries_taken);
        out->salvaged_entries += DRV_LOAD(s->salvaged_entries);
        if (r->value_entries) {
            drv_vring_shm *v = drv_vring_at(r, i);
            out->values_posted += DRV_LOAD(v->head);
            out->values_dropped += DRV_LOAD(v->dropped);
            out->values_taken += DRV_LOAD(v->taken);
        }
    }
    out->samples = out->hits + out->misses;
    if (cpu < 0) {
        out->notices = DRV_LOAD(r->h->notices);
        out->notices_lost = DRV_LOAD(r->h->notices_lost);
    }
}

/* ---- mapping -------------------------------------------------------------- */

static void region_unmap(drv_region *r)
{
    if (r->map)
        munmap(r->map, r->size);
    if (r->fd >= 0)
        close(r->fd);
    free(r->path);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

/* Map an open region file and check its header. */
static int region_map(drv_region *r, int fd, const char *path, int writable, drv_error *err)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    if (!(r->path = strdup(path))) {
        close(fd);
        r->fd = -1;
        return drv_fail(err, DRV_ENOMEM, "%s: out of memory", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        region_unmap(r);
        return drv_fail(err, DRV_EIO, "%s: fstat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < DRV_HEADER_SIZE) {
        region_unmap(r);
        return drv_fail(err, DRV_EFORMAT, "%s: not a driver region (%s)", path,
                        S_ISREG(st.st_mode) ? "too short" : "not a regular file");
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | (writable ? PROT_WRITE : 0),
                   MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        region_unmap(r);
        return drv_fail(err, DRV_EIO, "%s: mmap: %s", path, strerror(e));
    }
    r->map = m;
    r->size = (size_t)st.st_size;
    r->h = m;
    int rc = drv_check_header(m, r->size, (uint64_t)st.st_size, err);
    if (rc != DRV_OK) {
        if (err) {
            char why[sizeof err->msg];
            memcpy(why, err->msg, sizeof why);
            snprintf(err->msg, sizeof err->msg, "%.255s: %.250s", path, why);
        }
        region_unmap(r);
        return rc;
    }
    r->ncpus = r->h->ncpus;
    r->table_entries = r->h->table_entries;
    r->buffer_entries = r->h->buffer_entries;
    r->notice_bytes = r->h->notice_bytes;
    r->value_entries = r->h->value_entries;
    return DRV_OK;
}

/* ---- producer: create or attach -------------------------------------------- */

static int create_region(const char *path, uint32_t ncpus, uint32_t table, uint32_t buffer,
                         uint32_t notice, uint32_t values, drv_error *err)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 8);
    if (!tmp)
        return drv_fail(err, DRV_ENOMEM, "%s: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".XXXXXX", 8);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return drv_fail(err, DRV_EIO, "%s: cannot create: %s", path, strerror(e));
    }
    layout l = layout_of(ncpus, table, buffer, notice, values);
    int rc = DRV_OK;
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)l.total) != 0 ||
        (m = mmap(NULL, l.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        rc = drv_fail(err, DRV_EIO, "%s: cannot size %llu bytes: %s", tmp,
                      (unsigned long long)l.total, strerror(errno));
        goto out;
    }
    drv_shm_header *h = m;
    h->version = DRV_VERSION;
    h->endian = DRV_ENDIAN;
    h->header_size = DRV_HEADER_SIZE;
    h->ncpus = ncpus;
    h->ways = DRV_WAYS;
    h->entry_size = sizeof(drv_entry);
    h->table_entries = table;
    h->buffer_entries = buffer;
    h->notice_bytes = notice;
    h->cpu_size = l.cpu_size;
    h->cpu_offset = l.cpu_offset;
    h->notice_offset = l.notice_offset;
    h->total_size = l.total;
    h->value_entries = values;
    h->value_ring_size = l.value_ring_size;
    h->value_offset = l.value_offset;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->created_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    memcpy(h->magic, DRV_MAGIC, 8);   /* last: nothing reads it before link() below */
    munmap(m, l.total);
    if (link(tmp, path) != 0) {
        rc = errno == EEXIST ? DRV_EBUSY
                             : drv_fail(err, DRV_EIO, "%s: cannot create: %s", path, strerror(errno));
    }
out:
    unlink(tmp);
    close(fd);
    free(tmp);
    return rc;   /* DRV_EBUSY: someone else created it first; open theirs */
}

/* A region is drained when nothing in it is waiting for the consumer. */
static int region_drained(const drv_region *r)
{
    if (atomic_load(&r->h->notice_head) != atomic_load(&r->h->notice_tail))
        return 0;
    for (unsigned c = 0; c < r->ncpus; c++) {
        drv_cpu_shm *s = drv_cpu_at(r, c);
        if (s->fill || atomic_load(&s->desc[0].state) || atomic_load(&s->desc[1].state))
            return 0;
        const drv_entry *t = drv_table_at(r, c);
        for (uint32_t i = 0; i < r->table_entries; i++)
            if (t[i].count)
                return 0;
        if (r->value_entries && atomic_load(&drv_vring_at(r, c)->head) != atomic_load(&drv_vring_at(r, c)->tail))
            return 0;
    }
    return 1;
}

/* Files are opened O_NONBLOCK so that a FIFO given by mistake is reported
 * as "not a regular file" instead of hanging the open. */
drv *drv_open(const char *path, const drv_params *p, drv_error *err)
{
    if (!path || !*path) {
        drv_fail(err, DRV_EINVAL, "driver region: no path given");
        return NULL;
    }
    if (!p) {
        drv_fail(err, DRV_EINVAL, "%s: no parameters given", path);
        return NULL;
    }
    uint32_t table = p->table_entries ? p->table_entries : DRV_DEF_TABLE;
    uint32_t buffer = p->buffer_entries ? p->buffer_entries : DRV_DEF_BUFFER;
    uint32_t notice = p->notice_bytes ? p->notice_bytes : DRV_DEF_NOTICE;
    const char *bad = bad_geometry(p->ncpus, table, buffer, notice, p->value_entries);
    if (!bad && p->policy != DRV_POLICY_FRONT && p->policy != DRV_POLICY_RR) bad = "policy";
    if (!bad && p->full_mode != DRV_FULL_DROP && p->full_mode != DRV_FULL_STALL) bad = "full_mode";
    if (!bad && p->max_count == 1) bad = "max_count";
    if (bad) {
        drv_fail(err, DRV_EINVAL, "%s: driver parameter %s out of range", path, bad);
        return NULL;
    }

    drv *d = calloc(1, sizeof *d);
    if (!d) {
        drv_fail(err, DRV_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    d->r.fd = -1;
    int rc = DRV_EIO;
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT) {
            rc = create_region(path, p->ncpus, table, buffer, notice, p->value_entries, err);
            if (rc == DRV_OK || rc == DRV_EBUSY)
                continue;   /* now open it (ours or a racing producer's) */
            goto fail;
        }
        if (fd < 0) {
            rc = drv_fail(err, DRV_EIO, "%s: cannot open: %s", path, strerror(errno));
            goto fail;
        }
        if ((rc = region_map(&d->r, fd, path, 1, err)) != DRV_OK)
            goto fail;
        int l = drv_lock(fd, DRV_LOCK_PRODUCER, 2000);
        if (l != 0) {
            rc = l < 0 ? drv_fail(err, DRV_EIO, "%s: lock: %s", path, strerror(errno))
                       : drv_fail(err, DRV_EBUSY, "%s: in use by another producer (pid %u)", path,
                                  atomic_load(&d->r.h->producer_pid));
            goto fail;
        }
        if (atomic_load_explicit(&d->r.h->retired, memory_order_acquire)) {
            region_unmap(&d->r);   /* replaced under us: open the new one */
            continue;
        }
        drv_region *r = &d->r;
        int same = r->ncpus == p->ncpus &&
                   (!p->table_entries || r->table_entries == table) &&
                   (!p->buffer_entries || r->buffer_entries == buffer) &&
                   (!p->notice_bytes || r->notice_bytes == notice) &&
                   (!p->value_entries || r->value_entries);   /* rings of any size will do */
        if (!same) {
            if (!region_drained(r)) {
                rc = drv_fail(err, DRV_EGEOMETRY,
                              "%s: holds undrained samples for %u CPUs, %u-entry tables, "
                              "%u-entry buffers; drain it with the daemon or remove it",
                              path, r->ncpus, r->table_entries, r->buffer_entries);
                goto fail;
            }
            /* Empty: replace it.  A consumer attached to the old one sees
             * 'retired' and reopens the path. */
            atomic_store_explicit(&r->h->retired, 1, memory_order_release);
            unlink(path);
            region_unmap(r);
            continue;
        }
        for (unsigned c = 0; c < r->ncpus; c++)
            if ((rc = drv_check_cpu_state(r, c, err)) != DRV_OK)
                goto fail;
        rc = DRV_OK;
        break;
    }
    if (rc != DRV_OK || !d->r.map) {
        if (rc == DRV_OK || rc == DRV_EBUSY)
            rc = drv_fail(err, DRV_EBUSY, "%s: keeps changing under us; giving up", path);
        goto fail;
    }

    drv_region *r = &d->r;
    if (posix_memalign((void **)&d->cpu, 64, r->ncpus * sizeof *d->cpu) != 0) {
        rc = drv_fail(err, DRV_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    uint32_t nb = r->table_entries / DRV_WAYS;
    for (unsigned c = 0; c < r->ncpus; c++) {
        drv_pcpu *pc = &d->cpu[c];
        memset(pc, 0, sizeof *pc);
        pc->s = drv_cpu_at(r, c);
        pc->table = drv_table_at(r, c);
        pc->buf[0] = drv_buf_at(r, c, 0);
        pc->buf[1] = drv_buf_at(r, c, 1);
        pc->nbuckets = nb;
        pc->bufcap = r->buffer_entries;
        pc->max_count = p->max_count ? p->max_count : UINT32_MAX;
        pc->policy = (uint8_t)p->policy;
        pc->full_mode = (uint8_t)p->full_mode;
    }
    pthread_mutex_init(&d->notice_lock, NULL);
    r->h->policy = p->policy;
    r->h->full_mode = p->full_mode;
    r->h->max_count = p->max_count ? p->max_count : UINT32_MAX;
    r->h->attaches++;
    atomic_store(&r->h->producer_pid, (uint32_t)getpid());
    return d;
fail:
    region_unmap(&d->r);
    free(d->cpu);
    free(d);
    return NULL;
}

void drv_close(drv *d)
{
    if (!d)
        return;
    atomic_store(&d->r.h->producer_pid, 0);
    drv_unlock(d->r.fd, DRV_LOCK_PRODUCER);
    pthread_mutex_destroy(&d->notice_lock);
    region_unmap(&d->r);
    free(d->cpu);
    free(d);
}

unsigned drv_ncpus(const drv *d) { return d->r.ncpus; }

void drv_counters_get(const drv *d, int cpu, drv_counters *out)
{
    drv_read_counters(&d->r, cpu, out);
}

bool drv_consumer_alive(const drv *d)
{
    return drv_lock_held(d->r.fd, DRV_LOCK_CONSUMER) == 1;
}

/* ---- consumer ------------------------------------------------------------- */

drvc *drvc_open(const char *path, int flags, drv_error *err)
{
    if (!path || !*path) {
        drv_fail(err, DRV_EINVAL, "driver region: no path given");
        return NULL;
    }
    int ro = flags & DRVC_READONLY;
    int fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        drv_fail(err, DRV_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    drvc *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        drv_fail(err, DRV_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    c->flags = flags;
    if (region_map(&c->r, fd, path, !ro, err) != DRV_OK) {
        free(c);
        return NULL;
    }
    if (!ro) {
        int l = drv_lock(fd, DRV_LOCK_CONSUMER, 0);
        if (l != 0) {
            if (l < 0)
                drv_fail(err, DRV_EIO, "%s: lock: %s", path, strerror(errno));
            else
                drv_fail(err, DRV_EBUSY, "%s: another consumer (pid %u) is attached", path,
                         atomic_load(&c->r.h->consumer_pid));
            drvc_close(c);
            return NULL;
        }
        c->locked = 1;
        atomic_store(&c->r.h->consumer_pid, (uint32_t)getpid());
    }
    return c;
}

void drvc_close(drvc *c)
{
    if (!c)
        return;
    if (c->locked)
        atomic_store(&c->r.h->consumer_pid, 0);
    region_unmap(&c->r);
    free(c);
}

unsigned drvc_ncpus(const drvc *c) { return c->r.ncpus; }

void drvc_counters(const drvc *c, int cpu, drv_counters *out)
{
    drv_read_counters(&c->r, cpu, out);
}

bool drvc_producer_alive(const drvc *c)
{
    return drv_lock_held(c->r.fd, DRV_LOCK_PRODUCER) == 1;
}
