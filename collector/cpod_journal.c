/*
 * collector/cpod_journal.c: a region's journal, REGIONS/NAME.journal.
 *
 * The daemon takes a buffer from the driver and frees it for the machine
 * straight away; until the samples are merged into the database they live
 * only in the daemon's memory.  So everything taken is first appended
 * here, in the order taken: notices and entry batches, with a marker each
 * time a merge starts.  A daemon killed at any moment leaves a journal
 * from which the next one rebuilds the process maps and the unmerged
 * samples.  The file lives next to the region (on the tmpfs): it is lost
 * exactly when the region is.  Kill -9 leaves every completed write()
 * behind, so there is no fsync.
 *
 * Layout: "cpod-journal 1\n\0", then records:
 *   u32 len (whole record, a multiple of 8) | u32 type | payload | pad | u64 hash
 * where hash covers everything before it.  NOTICE payload: u32 type, pid,
 * ppid, status; u64 seq, base, size, offset; u32 build-id length, path
 * length; the build-id and the path.  BATCH: u32 cpu, source; u64 seq, n;
 * n 16-byte entries.  MARK: u64 generation.  SNAP: u64 generation, seq.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "collector/cpod_internal.h"
#include "collector/driver_shm.h"

#define JMAGIC "cpod-journal 1\n"
#define JMAGIC_LEN 16u
#define MAX_RECORD (64u + 16u * (1u << 24) + 16u)

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h ^ (h >> 32);
}

void cpod_buf_free(cpod_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static uint8_t *reserve(cpod_buf *b, size_t n)
{
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p)
            return NULL;
        b->p = p;
        b->cap = cap;
    }
    uint8_t *r = b->p + b->n;
    b->n += n;
    return r;
}

bool cpod_put(cpod_buf *b, const void *p, size_t n)
{
    uint8_t *q = n ? reserve(b, n) : NULL;
    if (q)
        memcpy(q, p, n);
    return q || !n;
}

bool cpod_put32(cpod_buf *b, uint32_t v) { return cpod_put(b, &v, 4); }
bool cpod_put64(cpod_buf *b, uint64_t v) { return cpod_put(b, &v, 8); }

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

bool cpod_jrec_encode(cpod_buf *b, const cpod_jrec *r)
{
    size_t pay;
    const drv_notice *n = r->notice;
    size_t plen = 0;
    switch (r->type) {
    case CPOD_J_NOTICE:
        plen = n->path ? strlen(n->path) : 0;
        pay = 56 + n->build_id_len + plen;
        break;
    case CPOD_J_BATCH:
        pay = 24 + r->batch->n * sizeof(drv_entry);
        break;
    case CPOD_J_MARK:
        pay = 8;
        break;
    case CPOD_J_SNAP:
        pay = 16;
        break;
    case CPOD_J_VALUES:
        pay = 24 + r->values->n * sizeof(drv_value);
        break;
    case CPOD_J_STACK:
        pay = 32 + 8 * (size_t)r->stack->n;
        break;
    default:
        return false;
    }
    size_t len = (8 + pay + 7) / 8 * 8 + 8;
    size_t start = b->n;
    uint8_t *p = reserve(b, len);
    if (!p)
        return false;
    memset(p, 0, len);
    put32(p, (uint32_t)len);
    put32(p + 4, (uint32_t)r->type);
    uint8_t *q = p + 8;
    switch (r->type) {
    case CPOD_J_NOTICE:
        put32(q, (uint32_t)n->type);
        put32(q + 4, n->pid);
        put32(q + 8, n->ppid);
        put32(q + 12, (uint32_t)n->status);
        put64(q + 16, n->seq);
        put64(q + 24, n->base);
        put64(q + 32, n->size);
        put64(q + 40, n->offset);
        put32(q + 48, (uint32_t)n->build_id_len);
        put32(q + 52, (uint32_t)plen);
        memcpy(q + 56, n->build_id, n->build_id_len);
        memcpy(q + 56 + n->build_id_len, n->path ? n->path : "", plen);
        break;
    case CPOD_J_BATCH:
        put32(q, r->batch->cpu);
        put32(q + 4, (uint32_t)r->batch->source);
        put64(q + 8, r->batch->seq);
        put64(q + 16, r->batch->n);
        if (r->batch->n)
            memcpy(q + 24, r->batch->e, r->batch->n * sizeof(drv_entry));
        break;
    case CPOD_J_MARK:
        put64(q, r->gen);
        break;
    case CPOD_J_SNAP:
        put64(q, r->gen);
        put64(q + 8, r->seq);
        break;
    case CPOD_J_VALUES:
        put32(q, r->values->cpu);
        put64(q + 8, r->values->first);
        put64(q + 16, r->values->n);
        if (r->values->n)
            memcpy(q + 24, r->values->v, r->values->n * sizeof(drv_value));
        break;
    case CPOD_J_STACK:
        put32(q, r->cpu);
        put32(q + 4, r->stack->n);
        put64(q + 8, r->stack->at);
        put64(q + 16, r->stack->next);
        put32(q + 24, r->stack->pid);
        put32(q + 28, r->stack->event | r->stack->end << 8);
        if (r->stack->n)
            memcpy(q + 32, r->stack->pc, 8 * (size_t)r->stack->n);
        break;
    }
    put64(p + len - 8, hash_bytes(b->p + start, len - 8));
    return true;
}

/* Check and decode one record held in rec[0..len); false if damaged. */
static bool decode(const uint8_t *rec, size_t len, cpod_jrec *r, drv_notice *n, drv_batch *bt,
                   drv_value_batch *vb, drv_stack_rec *sr, char *pathbuf, size_t pathsize)
{
    if (len < 16 || len % 8 || get64(rec + len - 8) != hash_bytes(rec, len - 8))
        return false;
    memset(r, 0, sizeof *r);
    r->type = (int)get32(rec + 4);
    const uint8_t *q = rec + 8;
    size_t pay = len - 16;
    switch (r->type) {
    case CPOD_J_NOTICE: {
        if (pay < 56)
            return false;
        memset(n, 0, sizeof *n);
        n->type = (int)get32(q);
        n->pid = get32(q + 4);
        n->ppid = get32(q + 8);
        n->status = (int32_t)get32(q + 12);
        n->seq = get64(q + 16);
        n->base = get64(q + 24);
        n->size = get64(q + 32);
        n->offset = get64(q + 40);
        uint32_t bl = get32(q + 48), pl = get32(q + 52);
        if (bl > sizeof n->build_id || pl >= pathsize || 56 + (uint64_t)bl + pl > pay)
            return false;
        n->build_id_len = bl;
        memcpy(n->build_id, q + 56, bl);
        memcpy(pathbuf, q + 56 + bl, pl);
        pathbuf[pl] = '\0';
        n->path = pathbuf;
        r->notice = n;
        return n->type >= DRV_NOTICE_LOAD && n->type <= DRV_NOTICE_EXEC;
    }
    case CPOD_J_BATCH: {
        if (pay < 24)
            return false;
        bt->cpu = get32(q);
        bt->source = (drv_source)get32(q + 4);
        bt->seq = get64(q + 8);
        bt->n = get64(q + 16);
        if (bt->n > (pay - 24) / sizeof(drv_entry) || bt->cpu >= DRV_MAX_CPUS)
            return false;
        bt->e = (const drv_entry *)(q + 24);   /* 8-aligned in the record buffer */
        r->batch = bt;
        return true;
    }
    case CPOD_J_MARK:
        if (pay < 8)
            return false;
        r->gen = get64(q);
        return true;
    case CPOD_J_SNAP:
        if (pay < 16)
            return false;
        r->gen = get64(q);
        r->seq = get64(q + 8);
        return true;
    case CPOD_J_VALUES:
        if (pay < 24)
            return false;
        vb->cpu = get32(q);
        vb->first = get64(q + 8);
        vb->n = get64(q + 16);
        if (vb->n > (pay - 24) / sizeof(drv_value) || vb->cpu >= DRV_MAX_CPUS)
            return false;
        vb->v = (const drv_value *)(q + 24);   /* 8-aligned in the record buffer */
        r->values = vb;
        return true;
    case CPOD_J_STACK: {
        if (pay < 32)
            return false;
        r->cpu = get32(q);
        uint32_t ev = get32(q + 28);
        *sr = (drv_stack_rec){ .n = get32(q + 4), .at = get64(q + 8), .next = get64(q + 16),
                               .pid = get32(q + 24), .event = ev & 0xff, .end = ev >> 8 & 0xff };
        if (r->cpu >= DRV_MAX_CPUS || sr->n > DRV_STACKS_MAX_FRAMES || 32 + 8 * (size_t)sr->n > pay ||
            sr->next < sr->at || ev >> 16)
            return false;
        sr->pc = (const uint64_t *)(q + 32);    /* 8-aligned in the record buffer */
        r->stack = sr;
        return true;
    }
    }
    return false;
}

static bool read_full(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static bool write_full(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool cpod_journal_open(cpod_journal *j, const char *path, cpod_jrec_fn fn, void *ctx, char *msg,
                       size_t msg_size)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    if (!(j->path = strdup(path))) {
        cpod_msg(msg, msg_size, "%s: out of memory", path);
        return false;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        cpod_msg(msg, msg_size, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }
    j->fd = fd;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        cpod_msg(msg, msg_size, "%s: %s", path, strerror(errno));
        return false;
    }
    uint8_t head[JMAGIC_LEN];
    uint64_t good = 0;
    if (st.st_size >= JMAGIC_LEN && read_full(fd, head, JMAGIC_LEN) && !memcmp(head, JMAGIC, JMAGIC_LEN)) {
        good = JMAGIC_LEN;
        uint8_t *rec = NULL;
        size_t cap = 0;
        char *pathbuf = malloc(DRV_MAX_PATH + 1);
        bool stop = !pathbuf;
        while (!stop && good + 16 <= (uint64_t)st.st_size) {
            uint8_t h[8];
            if (!read_full(fd, h, 8))
                break;
            uint32_t len = get32(h);
            if (len < 16 || len % 8 || len > MAX_RECORD || good + len > (uint64_t)st.st_size)
                break;
            if (len > cap) {
                uint8_t *r2 = realloc(rec, len);
                if (!r2)
                    break;
                rec = r2;
                cap = len;
            }
            memcpy(rec, h, 8);
            if (!read_full(fd, rec + 8, len - 8))
                break;
            cpod_jrec r;
            drv_notice n;
            drv_batch bt;
            drv_value_batch vb;
            drv_stack_rec sr;
            if (!decode(rec, len, &r, &n, &bt, &vb, &sr, pathbuf, DRV_MAX_PATH + 1))
                break;
            if (!fn(ctx, &r)) {
                stop = true;
                cpod_msg(msg, msg_size, "%s: cannot replay the record at byte %llu (out of memory)",
                         path, (unsigned long long)good);
                free(rec);
                free(pathbuf);
                return false;
            }
            good += len;
        }
        free(rec);
        free(pathbuf);
        if (good < (uint64_t)st.st_size)
            cpod_log("%s: damaged or torn record at byte %llu of %llu; cut off there "
                     "(a daemon killed while writing leaves one)", path,
                     (unsigned long long)good, (unsigned long long)st.st_size);
    } else if (st.st_size > 0) {
        cpod_log("%s: not a journal; starting it afresh", path);
    }
    if (good == 0) {
        if (ftruncate(fd, 0) != 0 || pwrite(fd, JMAGIC, JMAGIC_LEN, 0) != JMAGIC_LEN) {
            cpod_msg(msg, msg_size, "%s: cannot write: %s", path, strerror(errno));
            return false;
        }
        good = JMAGIC_LEN;
    } else if (good < (uint64_t)st.st_size && ftruncate(fd, (off_t)good) != 0) {
        cpod_msg(msg, msg_size, "%s: cannot truncate: %s", path, strerror(errno));
        return false;
    }
    j->size = good;
    if (lseek(fd, (off_t)good, SEEK_SET) < 0) {
        cpod_msg(msg, msg_size, "%s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

bool cpod_journal_append(cpod_journal *j, const cpod_jrec *r)
{
    if (j->failed || j->fd < 0)
        return false;
    j->scratch.n = 0;
    if (!cpod_jrec_encode(&j->scratch, r) || !write_full(j->fd, j->scratch.p, j->scratch.n)) {
        int e = errno;
        /* A partial record would hide every later one: cut it off. */
        if (ftruncate(j->fd, (off_t)j->size) == 0)
            lseek(j->fd, (off_t)j->size, SEEK_SET);
        cpod_log("%s: cannot append (%s); samples taken from here on are not protected "
                 "against a daemon crash until the next merge", j->path, strerror(e));
        j->failed = true;
        return false;
    }
    j->size += j->scratch.n;
    if (j->scratch.cap > (1u << 22)) {   /* one huge batch must not pin memory */
        cpod_buf_free(&j->scratch);
    }
    return true;
}

bool cpod_journal_compact(cpod_journal *j, const cpod_buf *head, uint64_t tail_from)
{
    size_t n = strlen(j->path);
    char *tmp = malloc(n + 8);
    if (!tmp)
        return false;
    snprintf(tmp, n + 8, "%s.new", j->path);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write_full(fd, JMAGIC, JMAGIC_LEN) &&
              (!head->n || write_full(fd, head->p, head->n));
    uint64_t size = JMAGIC_LEN + head->n;
    if (ok && j->fd >= 0 && tail_from < j->size) {
        uint8_t buf[65536];
        for (uint64_t at = tail_from; ok && at < j->size;) {
            size_t want = j->size - at < sizeof buf ? (size_t)(j->size - at) : sizeof buf;
            ssize_t r = pread(j->fd, buf, want, (off_t)at);
            ok = r > 0 && write_full(fd, buf, (size_t)r);
            at += r > 0 ? (uint64_t)r : 0;
            size += r > 0 ? (uint64_t)r : 0;
        }
    }
    if (ok && rename(tmp, j->path) != 0)
        ok = false;
    if (!ok) {
        cpod_log("%s: cannot rewrite the journal (%s); keeping the old one", j->path,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        unlink(tmp);
        free(tmp);
        return false;
    }
    free(tmp);
    if (j->fd >= 0)
        close(j->fd);
    j->fd = fd;
    j->size = size;
    j->failed = false;
    lseek(fd, (off_t)size, SEEK_SET);
    return true;
}

void cpod_journal_close(cpod_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    free(j->path);
    cpod_buf_free(&j->scratch);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}
