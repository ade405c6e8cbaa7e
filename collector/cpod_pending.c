/*
 * collector/cpod_pending.c: STATE/pending-GEN, a merge generation saved
 * whole before its first file is written (see cpod_merge.c), and the rule
 * that tells, after a stop, which of its inputs landed.
 *
 * The file holds everything of the generation: the PC profiles, then the
 * value lists and ProfileMe entries of each image (in profdb's own file
 * encodings, which check them on the way back) and the stacks of each
 * (image set, event), each with the total its target file held before
 * the merge.  The next daemon's journal replay skips a generation that has
 * a pending file, so whatever the file does not hold would be lost.
 *
 * Layout: "cpod-pending 2\n\0", generation, epoch, host, the profiles,
 * the value, ProfileMe and stack sections, FNV-1a of all before it.  A
 * version 1 file (PC profiles only, from an older daemon) is still read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/readfile.h"
#include "collector/cpod_internal.h"

#define PMAGIC_V1 "cpod-pending 1\n"
#define PMAGIC "cpod-pending 2\n"
#define PMAGIC_LEN 16u

/* ---- did it land? --------------------------------------------------------------- */

static bool absent(const profdb_error *e)
{
    return e->code == PROFDB_ENOENT || (e->code == PROFDB_EIO && e->sys_errno == ENOENT);
}

/* What profdb sets aside and replaces when a merge finds it. */
static bool damaged(const profdb_error *e)
{
    return e->code == PROFDB_EMAGIC || e->code == PROFDB_ETRUNC || e->code == PROFDB_ECHECKSUM ||
           e->code == PROFDB_ECORRUPT;
}

void cpod_land_before(cpod_land *l, bool ok, uint64_t total, const profdb_error *err)
{
    /* absent or damaged: a merge starts it from nothing */
    l->pre = ok ? total : 0;
    l->known = ok || absent(err) || damaged(err);
}

bool cpod_land_arrived(const cpod_land *l, bool ok, uint64_t now, const profdb_error *err, uint64_t total,
                       const char *what, const char *epoch)
{
    if (!ok && !absent(err))
        return false;   /* a merge that got in leaves a readable file */
    if (!ok)
        now = 0;
    /* Unreadable before (a directory in its place, say): a merge could
     * only get in once that was gone, starting from nothing. */
    if (!l->known)
        return now == total;
    if (now == l->pre)
        return false;
    if (now != l->pre + total)
        cpod_log("%s in epoch %s holds %" PRIu64 " samples, neither %" PRIu64 " (before this merge) nor %" PRIu64
                 " (after it); not merging it again", what, epoch, now, l->pre, l->pre + total);
    return true;
}

/* ---- reading fields ----------------------------------------------------------------- */

const uint8_t *cpod_get(cpod_rd *r, size_t n)
{
    if (!r->ok || (size_t)(r->end - r->p) < n) {
        r->ok = false;
        return NULL;
    }
    const uint8_t *q = r->p;
    r->p += n;
    return q;
}

uint64_t cpod_get64(cpod_rd *r)
{
    uint64_t v = 0;
    const uint8_t *q = cpod_get(r, 8);
    if (q)
        memcpy(&v, q, 8);
    return v;
}

uint32_t cpod_get32(cpod_rd *r)
{
    uint32_t v = 0;
    const uint8_t *q = cpod_get(r, 4);
    if (q)
        memcpy(&v, q, 4);
    return v;
}

/* One image's part of a value or ProfileMe set: its key, what its target
 * held before the merge, and the encoded entries. */
bool cpod_put_image(cpod_buf *b, const char *key, const cpod_land *land, const uint8_t *data,
                    size_t size)
{
    return cpod_put32(b, (uint32_t)strlen(key)) && cpod_put32(b, land->known) &&
           cpod_put64(b, land->pre) && cpod_put64(b, size) && cpod_put(b, key, strlen(key)) &&
           cpod_put(b, data, size);
}

bool cpod_get_image(cpod_rd *r, char *key, size_t keysize, cpod_land *land, const uint8_t **data,
                    size_t *size)
{
    uint32_t kl = cpod_get32(r), known = cpod_get32(r);
    *land = (cpod_land){ cpod_get64(r), known != 0 };
    uint64_t n = cpod_get64(r);
    const uint8_t *k = kl < keysize ? cpod_get(r, kl) : NULL;
    *data = k && n <= (uint64_t)(r->end - r->p) ? cpod_get(r, n) : NULL;
    if (!*data || known > 1)
        return false;
    memcpy(key, k, kl);
    key[kl] = '\0';
    *size = (size_t)n;
    return true;
}

char *cpod_getstr(cpod_rd *r, size_t n)
{
    const uint8_t *q = cpod_get(r, n);
    char *s = q ? malloc(n + 1) : NULL;
    if (s) {
        memcpy(s, q, n);
        s[n] = '\0';
    } else {
        r->ok = false;
    }
    return s;
}

/* ---- writing ------------------------------------------------------------------------ */

typedef struct writer {
    FILE *f;
    uint64_t h;
} writer;

static void wr(writer *w, const void *p, size_t n)
{
    w->h = fnv1a(w->h, p, n);
    fwrite(p, 1, n, w->f);
}

static void wr64(writer *w, uint64_t v) { wr(w, &v, 8); }
static void wr32(writer *w, uint32_t v) { wr(w, &v, 4); }

static void write_pins(writer *w, const cpod_job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        const cpod_pin *p = &j->pins[i];
        wr32(w, (uint32_t)strlen(p->path));
        wr32(w, (uint32_t)strlen(p->event));
        wr32(w, (uint32_t)p->bidlen);
        wr32(w, 0);
        wr(w, &p->period, 8);
        wr64(w, p->total);
        wr64(w, p->pre);
        wr64(w, p->n);
        wr(w, p->path, strlen(p->path));
        wr(w, p->event, strlen(p->event));
        wr(w, p->bid, p->bidlen);
        wr(w, p->e, p->n * sizeof *p->e);
    }
}

/* The value, ProfileMe and stack sections. */
static bool sections(cpod_job *j, cpod_buf *b)
{
    cpod_vset no_values = { 0 };
    cpod_pmset no_pm = { 0 };
    return cpod_values_save(j->values ? j->values : &no_values, b) && cpod_pm_save(j->pm ? j->pm : &no_pm, b) &&
           cpod_stacks_save(&j->stk, b);
}

/* Written to a temporary renamed into place, so the file is whole or
 * absent. */
bool cpod_pending_write(cpod *d, cpod_job *j, profdb_error *err)
{
    char path[CPOD_PATH_MAX + 64], tmp[CPOD_PATH_MAX + 80];
    cpod_state_file(d, "pending", j->gen, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s/.pending-%" PRIu64 ".tmp", d->state, j->gen);
    cpod_buf more = { 0 };
    if (!sections(j, &more)) {
        cpod_buf_free(&more);
        cpod_msg(err->msg, sizeof err->msg, "%s: out of memory saving the value lists, ProfileMe entries and "
                 "stacks", path);
        err->code = PROFDB_ENOMEM;
        return false;
    }
    writer w = { fopen(tmp, "we"), FNV1A_INIT };
    if (!w.f)
        goto fail;
    char epoch[PROFDB_EPOCH_MAX] = { 0 }, host[PROFDB_MAX_NAME + 1] = { 0 };
    snprintf(epoch, sizeof epoch, "%s", j->epoch);
    snprintf(host, sizeof host, "%s", d->host);
    wr(&w, PMAGIC, PMAGIC_LEN);
    wr64(&w, j->gen);
    wr(&w, epoch, sizeof epoch);
    wr(&w, host, sizeof host);
    wr64(&w, j->n);
    wr64(&w, j->samples);
    wr64(&w, j->unknown);
    write_pins(&w, j);
    wr(&w, more.p, more.n);
    uint64_t h = w.h;
    fwrite(&h, 1, 8, w.f);
    if (fflush(w.f) != 0 || ferror(w.f)) {
        fclose(w.f);
        goto fail;
    }
    if (fclose(w.f) != 0 || rename(tmp, path) != 0)
        goto fail;
    cpod_buf_free(&more);
    return true;
fail:
    cpod_msg(err->msg, sizeof err->msg, "%s: cannot write: %s", path, strerror(errno));
    err->code = PROFDB_EIO;
    unlink(tmp);
    cpod_buf_free(&more);
    return false;
}

/* ---- reading ------------------------------------------------------------------------ */

static bool read_pins(cpod_job *j, cpod_rd *r, uint64_t n)
{
    for (; j->n < n && r->ok; j->n++) {
        cpod_pin *p = &j->pins[j->n];
        uint32_t pl = cpod_get32(r), el = cpod_get32(r), bl = cpod_get32(r);
        cpod_get32(r);
        const uint8_t *per = cpod_get(r, 8);
        if (per)
            memcpy(&p->period, per, 8);
        p->total = cpod_get64(r);
        p->pre = cpod_get64(r);
        p->n = cpod_get64(r);
        if (!r->ok || bl > PROFDB_MAX_BUILD_ID || pl > PROFDB_MAX_PATH || el > 2 * PROFDB_MAX_NAME ||
            p->n > (uint64_t)(r->end - r->p) / sizeof *p->e)
            return false;
        p->path = cpod_getstr(r, pl);
        p->event = cpod_getstr(r, el);
        const uint8_t *bid = cpod_get(r, bl);
        if (bid)
            memcpy(p->bid, bid, bl);
        p->bidlen = bl;
        const uint8_t *e = cpod_get(r, p->n * sizeof *p->e);
        if (e && (p->e = malloc((p->n ? p->n : 1) * sizeof *p->e)))
            memcpy(p->e, e, p->n * sizeof *p->e);
        else
            r->ok = false;
    }
    return r->ok;
}

/* The value, ProfileMe and stack sections into j; false with why. */
static bool read_sections(cpod_job *j, cpod_rd *r, char *why, size_t why_size)
{
    cpod_vset *v = calloc(1, sizeof *v);
    cpod_pmset *pm = calloc(1, sizeof *pm);
    bool ok = v && pm;
    if (!ok)
        cpod_msg(why, why_size, "out of memory");
    ok = ok && cpod_values_load(v, r, why, why_size) && cpod_pm_load(pm, r, why, why_size) &&
         cpod_stacks_load(&j->stk, r, why, why_size);
    if (ok && v->nimg) {
        j->values = v;
        v = NULL;
    }
    if (ok && pm->nimg) {
        j->pm = pm;
        pm = NULL;
    }
    if (v)
        cpod_vset_free(v);
    if (pm)
        cpod_pmset_free(pm);
    free(v);
    free(pm);
    return ok;
}

cpod_job *cpod_pending_read(const char *path, char *msg, size_t msg_size)
{
    size_t size;
    uint8_t *buf = readfile(path, SIZE_MAX, &size, msg, msg_size);
    if (!buf)
        return NULL;
    uint64_t h = FNV1A_INIT, want = 0;
    if (size >= PMAGIC_LEN + 8) {
        h = fnv1a(h, buf, size - 8);
        memcpy(&want, buf + size - 8, 8);
    }
    cpod_job *j = calloc(1, sizeof *j);
    cpod_rd r = { buf, buf + (size >= 8 ? size - 8 : 0), true };
    const uint8_t *magic = cpod_get(&r, PMAGIC_LEN);
    bool v1 = magic && !memcmp(magic, PMAGIC_V1, PMAGIC_LEN);
    if (!j || !magic || (!v1 && memcmp(magic, PMAGIC, PMAGIC_LEN)) || h != want) {
        cpod_msg(msg, msg_size, "%s: damaged (bad magic or checksum)", path);
        goto bad;
    }
    j->gen = cpod_get64(&r);
    const uint8_t *ep = cpod_get(&r, PROFDB_EPOCH_MAX);
    cpod_get(&r, PROFDB_MAX_NAME + 1);   /* the host: ours, by the directory */
    uint64_t n = cpod_get64(&r);
    j->samples = cpod_get64(&r);
    j->unknown = cpod_get64(&r);
    if (!r.ok || n > (uint64_t)size / 48) {
        cpod_msg(msg, msg_size, "%s: damaged header", path);
        goto bad;
    }
    memcpy(j->epoch, ep, PROFDB_EPOCH_MAX);
    j->epoch[PROFDB_EPOCH_MAX - 1] = '\0';
    if (!(j->pins = calloc(n ? n : 1, sizeof *j->pins))) {
        cpod_msg(msg, msg_size, "%s: out of memory", path);
        goto bad;
    }
    if (!read_pins(j, &r, n)) {
        cpod_msg(msg, msg_size, "%s: damaged profile list", path);
        goto bad;
    }
    char why[400];
    if (!v1 && !read_sections(j, &r, why, sizeof why)) {
        cpod_msg(msg, msg_size, "%s: damaged: %s", path, why);
        goto bad;
    }
    if (r.p != r.end) {
        cpod_msg(msg, msg_size, "%s: damaged: %zu bytes after its last section", path, (size_t)(r.end - r.p));
        goto bad;
    }
    free(buf);
    j->pended = true;
    j->retry = true;
    return j;
bad:
    free(buf);
    cpod_job_free(j);
    return NULL;
}
