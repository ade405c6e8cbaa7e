/*
 * Fuzz target for the files cpod reads back: a region's journal (first
 * byte 0), a machine's description (first byte 1) and a pending merge
 * (first byte 2: the bytes get the checksum a daemon would have written,
 * so that the reader goes past it).  Whatever the bytes,
 * opening a journal must cut it at the first bad record, replaying what
 * came before into process maps; the maps' snapshot, replayed into fresh
 * maps, must rebuild as many processes.  A description is accepted or
 * refused with a message.  Never a crash or a leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/cpod_internal.h"
#include "common/hash.h"

typedef struct ctx {
    cpod_procs *p;
    size_t records;
    bool churn;          /* reap now and then, with varying generations */
} ctx;

static bool apply(void *arg, const cpod_jrec *r)
{
    ctx *c = arg;
    c->records++;
    if (r->type != CPOD_J_NOTICE)
        return true;
    /* Paths are the fuzzer's: keep them away from real files. */
    drv_notice n = *r->notice;
    char path[64];
    snprintf(path, sizeof path, "/nonexistent/cpod-fuzz/%zu", strlen(n.path ? n.path : "") % 7);
    n.path = path;
    cpod_procs_notice(c->p, &n, c->churn ? c->records % 3 : 0);
    cpod_procs_lookup(c->p, n.pid, n.base + n.size / 2);
    if (c->churn && c->records % 5 == 0)
        cpod_procs_reap(c->p, c->records % 4);
    return true;
}

static bool encode_notice(void *arg, const drv_notice *n)
{
    cpod_jrec r = { .type = CPOD_J_NOTICE, .notice = n };
    return cpod_jrec_encode(arg, &r);
}

static char *temp_with(const uint8_t *data, size_t size)
{
    char *path = strdup("/tmp/cpod-fuzz-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) {
        free(path);
        return NULL;
    }
    if (size && write(fd, data, size) != (ssize_t)size) {}
    close(fd);
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        cpod_log_open("/dev/null", (char[64]){ 0 }, 64);
        quiet = true;
    }
    if (size < 1)
        return 0;
    char msg[512];
    if ((data[0] & 3) == 2) {
        uint8_t *buf = malloc(size + 8);
        if (!buf)
            return 0;
        memcpy(buf, data + 1, size - 1);
        uint64_t h = fnv1a(FNV1A_INIT, buf, size - 1);
        memcpy(buf + size - 1, &h, 8);
        char *pp = temp_with(buf, size + 7);
        free(buf);
        cpod_job *j = pp ? cpod_pending_read(pp, msg, sizeof msg) : NULL;
        if (j)
            cpod_job_free(j);
        if (pp)
            unlink(pp);
        free(pp);
        return 0;
    }
    char *path = temp_with(data + 1, size - 1);
    if (!path)
        return 0;
    if (data[0] & 1) {
        cpod_meta m;
        if (cpod_meta_read(path, &m, msg, sizeof msg)) {
            cpod_evdef ev;
            for (unsigned id = 0; id < 256; id++)
                cpod_meta_event(&m, id, &ev);
        }
    } else {
        cpod_images im;
        cpod_images_init(&im, NULL, 0);
        cpod_procs p, q;
        cpod_procs_init(&p, &im);
        cpod_procs_init(&q, &im);
        ctx c = { &p, 0, true };
        cpod_journal j;
        if (cpod_journal_open(&j, path, apply, &c, msg, sizeof msg)) {
            /* What was kept must read back whole. */
            cpod_journal_close(&j);
            ctx again = { &q, 0, true };
            if (!cpod_journal_open(&j, path, apply, &again, msg, sizeof msg) || again.records != c.records)
                abort();
            cpod_procs_free(&q);
            cpod_procs_init(&q, &im);
        }
        cpod_journal_close(&j);
        cpod_buf b = { 0 };
        if (cpod_procs_snapshot(&p, encode_notice, &b)) {
            char *snap = temp_with(NULL, 0);
            FILE *f = snap ? fopen(snap, "w") : NULL;
            if (f) {
                fwrite("cpod-journal 1\n\0", 1, 16, f);
                fwrite(b.p, 1, b.n, f);
                fclose(f);
                ctx r2 = { &q, 0, false };
                cpod_journal j2;
                if (!cpod_journal_open(&j2, snap, apply, &r2, msg, sizeof msg))
                    abort();
                cpod_journal_close(&j2);
                if (q.n != p.n)
                    abort();
            }
            if (snap)
                unlink(snap);
            free(snap);
        }
        cpod_buf_free(&b);
        cpod_procs_free(&p);
        cpod_procs_free(&q);
        cpod_images_free(&im);
    }
    unlink(path);
    free(path);
    return 0;
}
