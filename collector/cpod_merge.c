/*
 * collector/cpod_merge.c: merging a generation's profiles into the
 * database, exactly once even when the daemon is killed half way.
 *
 * profdb_merge makes each profile's update atomic, but a generation spans
 * many profiles.  Before writing any, the job is saved whole in
 * STATE/pending-GEN together with the total each target profile holds
 * now (pre).  Whoever finishes the job later (this thread after an error,
 * or the next daemon after a kill) reads the totals again: a profile
 * holding pre has not received its input, one holding pre + the input's
 * total has.  When every input is in, STATE/merged records the generation
 * and the pending file goes; the journals then drop that generation.
 *
 * Only this daemon writes its host's profiles, so the totals move only by
 * our own merges.  (A profile found damaged and set aside by profdb starts
 * again from zero; its pre was read as zero too, so the rule holds.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "collector/cpod_internal.h"

#define PMAGIC "cpod-pending 1\n"
#define PMAGIC_LEN 16u

void cpod_job_free(cpod_job *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++) {
        free(j->pins[i].path);
        free(j->pins[i].event);
        free(j->pins[i].e);
        cpod_prof_free(j->pins[i].prof, NULL);
    }
    free(j->pins);
    if (j->pm) {
        cpod_pmset_free(j->pm);
        free(j->pm);
    }
    if (j->values) {
        cpod_vset_free(j->values);
        free(j->values);
    }
    cpod_stackset_free(&j->stk);
    free(j);
}

size_t cpod_job_unstored(const cpod_job *j, char *out, size_t size)
{
    size_t lists = 0, vi = 0, entries = 0, pi = 0;
    for (size_t i = 0; j->values && i < j->values->nimg; i++)
        if (!j->values->img[i].stored && j->values->img[i].n) {
            lists += j->values->img[i].n;
            vi++;
        }
    for (size_t i = 0; j->pm && i < j->pm->nimg; i++)
        if (!j->pm->img[i].stored && j->pm->img[i].n) {
            entries += j->pm->img[i].n;
            pi++;
        }
    uint64_t stacks = cpod_stacks_held(&j->stk);
    out[0] = '\0';
    if (!lists && !entries && !stacks)
        return 0;
    int n = snprintf(out, size, "%" PRIu64 " stacks, %zu value lists of %zu images, %zu ProfileMe entries of %zu images",
                     stacks, lists, vi, entries, pi);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void state_file(const cpod *d, const char *name, uint64_t gen, char *out, size_t size)
{
    if (gen)
        snprintf(out, size, "%s/%s-%" PRIu64, d->state, name, gen);
    else
        snprintf(out, size, "%s/%s", d->state, name);
}

/* ---- the pending file ---------------------------------------------------------- */

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

/* Write path via a temporary renamed into place, so the file is whole or
 * absent. */
static bool write_pending(cpod *d, const cpod_job *j, profdb_error *err)
{
    char path[CPOD_PATH_MAX + 64], tmp[CPOD_PATH_MAX + 80];
    state_file(d, "pending", j->gen, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s/.pending-%" PRIu64 ".tmp", d->state, j->gen);
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
    for (size_t i = 0; i < j->n; i++) {
        const cpod_pin *p = &j->pins[i];
        wr32(&w, (uint32_t)strlen(p->path));
        wr32(&w, (uint32_t)strlen(p->event));
        wr32(&w, (uint32_t)p->bidlen);
        wr32(&w, 0);
        wr(&w, &p->period, 8);
        wr64(&w, p->total);
        wr64(&w, p->pre);
        wr64(&w, p->n);
        wr(&w, p->path, strlen(p->path));
        wr(&w, p->event, strlen(p->event));
        wr(&w, p->bid, p->bidlen);
        wr(&w, p->e, p->n * sizeof *p->e);
    }
    uint64_t h = w.h;
    fwrite(&h, 1, 8, w.f);
    if (fflush(w.f) != 0 || ferror(w.f)) {
        fclose(w.f);
        goto fail;
    }
    if (fclose(w.f) != 0 || rename(tmp, path) != 0)
        goto fail;
    return true;
fail:
    cpod_msg(err->msg, sizeof err->msg, "%s: cannot write: %s", path, strerror(errno));
    err->code = PROFDB_EIO;
    unlink(tmp);
    return false;
}

typedef struct reader {
    const uint8_t *p, *end;
    bool ok;
} reader;

static const uint8_t *rd(reader *r, size_t n)
{
    if (!r->ok || (size_t)(r->end - r->p) < n) {
        r->ok = false;
        return NULL;
    }
    const uint8_t *q = r->p;
    r->p += n;
    return q;
}

static uint64_t rd64(reader *r)
{
    uint64_t v = 0;
    const uint8_t *q = rd(r, 8);
    if (q)
        memcpy(&v, q, 8);
    return v;
}

static uint32_t rd32(reader *r)
{
    uint32_t v = 0;
    const uint8_t *q = rd(r, 4);
    if (q)
        memcpy(&v, q, 4);
    return v;
}

static char *rdstr(reader *r, size_t n)
{
    const uint8_t *q = rd(r, n);
    char *s = q ? malloc(n + 1) : NULL;
    if (s) {
        memcpy(s, q, n);
        s[n] = '\0';
    } else {
        r->ok = false;
    }
    return s;
}

static cpod_job *read_pending(const char *path, char *msg, size_t msg_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint8_t *buf = NULL;
    off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (size < 0 || !(buf = malloc(size ? (size_t)size : 1)) ||
        pread(fd, buf, (size_t)size, 0) != size) {
        cpod_msg(msg, msg_size, "%s: cannot read: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(buf);
        return NULL;
    }
    close(fd);
    uint64_t h = FNV1A_INIT, want = 0;
    if (size >= PMAGIC_LEN + 8) {
        h = fnv1a(h, buf, (size_t)size - 8);
        memcpy(&want, buf + size - 8, 8);
    }
    cpod_job *j = calloc(1, sizeof *j);
    reader r = { buf, buf + (size >= 8 ? size - 8 : 0), true };
    const uint8_t *magic = rd(&r, PMAGIC_LEN);
    if (!j || !magic || memcmp(magic, PMAGIC, PMAGIC_LEN) || h != want) {
        cpod_msg(msg, msg_size, "%s: damaged (bad magic or checksum)", path);
        goto bad;
    }
    j->gen = rd64(&r);
    const uint8_t *ep = rd(&r, PROFDB_EPOCH_MAX);
    rd(&r, PROFDB_MAX_NAME + 1);   /* the host: ours, by the directory */
    uint64_t n = rd64(&r);
    j->samples = rd64(&r);
    j->unknown = rd64(&r);
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
    for (; j->n < n && r.ok; j->n++) {
        cpod_pin *p = &j->pins[j->n];
        uint32_t pl = rd32(&r), el = rd32(&r), bl = rd32(&r);
        rd32(&r);
        const uint8_t *per = rd(&r, 8);
        if (per)
            memcpy(&p->period, per, 8);
        p->total = rd64(&r);
        p->pre = rd64(&r);
        p->n = rd64(&r);
        if (!r.ok || bl > PROFDB_MAX_BUILD_ID || pl > PROFDB_MAX_PATH || el > 2 * PROFDB_MAX_NAME ||
            p->n > (uint64_t)(r.end - r.p) / sizeof *p->e) {
            r.ok = false;
            break;
        }
        p->path = rdstr(&r, pl);
        p->event = rdstr(&r, el);
        const uint8_t *bid = rd(&r, bl);
        if (bid)
            memcpy(p->bid, bid, bl);
        p->bidlen = bl;
        const uint8_t *e = rd(&r, p->n * sizeof *p->e);
        if (e && (p->e = malloc((p->n ? p->n : 1) * sizeof *p->e)))
            memcpy(p->e, e, p->n * sizeof *p->e);
        else
            r.ok = false;
    }
    if (!r.ok || r.p != r.end) {
        cpod_msg(msg, msg_size, "%s: damaged profile list", path);
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

/* ---- stored totals ----------------------------------------------------------------- */

typedef struct totals {
    profdb_info *v;
    size_t n;
    const profdb_info **ours;   /* this host's, sorted by key and event */
    size_t nours;
} totals;

static int cmp_info(const void *a, const void *b)
{
    const profdb_info *x = *(const profdb_info *const *)a, *y = *(const profdb_info *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->event, y->event);
}

static bool load_totals(cpod *d, const char *epoch, totals *t, profdb_error *err)
{
    memset(t, 0, sizeof *t);
    if (!profdb_list(d->db, epoch, &t->v, &t->n, err)) {
        if (err->code == PROFDB_ENOENT) {   /* no such epoch yet: nothing stored */
            t->v = NULL;
            t->n = 0;
            return true;
        }
        return false;
    }
    t->ours = malloc((t->n ? t->n : 1) * sizeof *t->ours);
    if (!t->ours) {
        profdb_infos_free(t->v, t->n);
        err->code = PROFDB_ENOMEM;
        cpod_msg(err->msg, sizeof err->msg, "out of memory");
        return false;
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].host && !strcmp(t->v[i].host, d->host))
            t->ours[t->nours++] = &t->v[i];
    if (t->nours)
        qsort(t->ours, t->nours, sizeof *t->ours, cmp_info);
    return true;
}

static uint64_t stored_total(const totals *t, const cpod_pin *p)
{
    profdb_info want = { 0 };
    profdb_key(p->bid, p->bidlen, p->path, want.key);
    want.event = p->event;
    const profdb_info *key = &want;
    const profdb_info **hit = bsearch(&key, t->ours, t->nours, sizeof *t->ours, cmp_info);
    return hit ? (*hit)->total : 0;
}

static void free_totals(totals *t)
{
    profdb_infos_free(t->v, t->n);
    free(t->ours);
}

/* ---- running a job ----------------------------------------------------------------- */

static bool write_merged(cpod *d, uint64_t gen)
{
    char path[CPOD_PATH_MAX + 16], tmp[CPOD_PATH_MAX + 32];
    state_file(d, "merged", 0, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s/.merged.tmp", d->state);
    FILE *f = fopen(tmp, "we");
    bool ok = f && fprintf(f, "%" PRIu64 "\n", gen) > 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok || rename(tmp, path) != 0) {
        cpod_log("%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return false;
    }
    return true;
}

void cpod_merge_run(cpod *d, cpod_job *j)
{
    double t0 = now_s();
    profdb_error err = { 0 };
    j->ok = false;
    j->merged = j->skipped = 0;
    j->new_epoch_name[0] = '\0';
    totals t = { 0 };
    if (!j->pended) {
        for (size_t i = 0; i < j->n; i++) {
            cpod_pin *p = &j->pins[i];
            if (!p->prof)
                continue;   /* built by an earlier attempt */
            if (!(p->e = cpod_prof_entries(p->prof))) {
                err.code = PROFDB_ENOMEM;
                cpod_msg(err.msg, sizeof err.msg, "out of memory building profiles");
                goto out;
            }
            p->n = p->prof->n;
            cpod_prof_free(p->prof, NULL);
            p->prof = NULL;
        }
        if (!profdb_current_epoch(d->db, j->epoch, &err)) {
            if (err.code != PROFDB_ENOENT || !profdb_new_epoch(d->db, j->epoch, &err))
                goto out;
            cpod_log("started epoch %s", j->epoch);
        }
        if (!load_totals(d, j->epoch, &t, &err))
            goto out;
        for (size_t i = 0; i < j->n; i++)
            j->pins[i].pre = stored_total(&t, &j->pins[i]);
        free_totals(&t);
        memset(&t, 0, sizeof t);
        if (!write_pending(d, j, &err))
            goto out;
        j->pended = true;
    } else {
        if (!load_totals(d, j->epoch, &t, &err))
            goto out;
        for (size_t i = 0; i < j->n; i++) {
            cpod_pin *p = &j->pins[i];
            if (p->stored)
                continue;
            uint64_t now = stored_total(&t, p);
            if (now == p->pre)
                continue;
            if (now != p->pre + p->total) {
                char key[PROFDB_KEY_MAX];
                cpod_log("%s.%s in epoch %s holds %" PRIu64 " samples, neither %" PRIu64
                         " (before this merge) nor %" PRIu64 " (after it); not merging it again",
                         profdb_key(p->bid, p->bidlen, p->path, key), p->event, j->epoch,
                         now, p->pre, p->pre + p->total);
            }
            p->stored = true;
            j->skipped++;
        }
        free_totals(&t);
        memset(&t, 0, sizeof t);
    }
    size_t need = 0;
    for (size_t i = 0; i < j->n; i++)
        need += !j->pins[i].stored;
    if (need) {
        profdb_input *in = calloc(need, sizeof *in);
        size_t *at = calloc(need, sizeof *at);
        if (!in || !at) {
            free(in);
            free(at);
            err.code = PROFDB_ENOMEM;
            cpod_msg(err.msg, sizeof err.msg, "out of memory");
            goto out;
        }
        size_t k = 0;
        for (size_t i = 0; i < j->n; i++) {
            cpod_pin *p = &j->pins[i];
            if (p->stored)
                continue;
            in[k] = (profdb_input){ .path = p->path, .build_id = p->bid, .build_id_len = p->bidlen,
                                    .event = p->event, .mean_period = p->period, .host = d->host,
                                    .samples = p->e, .nsamples = p->n };
            at[k++] = i;
        }
        size_t done = profdb_merge(d->db, in, need, &err);
        for (size_t q = 0; q < done; q++)
            j->pins[at[q]].stored = true;
        j->merged = done;
        free(in);
        free(at);
        if (done < need)
            goto out;
    }
    if (j->values && !cpod_values_store(d, j->values, &err))
        goto out;
    if (j->pm && !cpod_pm_store(d, j->pm, &err))
        goto out;
    /* Stacks after the profiles: not journalled, so a retry after a
     * failure finds here only the groups not stored yet. */
    if (!cpod_stacks_merge(&j->stk, d->db, d->host, &err))
        goto out;
    if (write_merged(d, j->gen)) {
        char path[CPOD_PATH_MAX + 64];
        state_file(d, "pending", j->gen, path, sizeof path);
        unlink(path);
    }
    j->ok = true;
    err.code = PROFDB_OK;
    if (j->new_epoch && !profdb_new_epoch(d->db, j->new_epoch_name, &err))
        j->new_epoch_name[0] = '\0';
out:
    j->err = err;
    j->seconds = now_s() - t0;
}

void *cpod_merge_thread(void *arg)
{
    cpod *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->job && !d->stop_thread)
            pthread_cond_wait(&d->cv, &d->mu);
        if (!d->job)
            break;
        cpod_job *j = d->job;
        d->job = NULL;
        pthread_mutex_unlock(&d->mu);
        cpod_merge_run(d, j);
        pthread_mutex_lock(&d->mu);
        d->done_job = j;
        uint64_t one = 1;
        if (write(d->wake_fd, &one, sizeof one) < 0)
            cpod_log("cannot wake the main loop: %s", strerror(errno));
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---- start-up ------------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

bool cpod_merge_recover(cpod *d, char *msg, size_t msg_size)
{
    char path[CPOD_PATH_MAX + 64];
    uint64_t merged = 0;
    state_file(d, "merged", 0, path, sizeof path);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fscanf(f, "%" SCNu64, &merged) != 1) {
            cpod_log("%s: unreadable; taking no generation as merged", path);
            merged = 0;
        }
        fclose(f);
    }
    DIR *dir = opendir(d->state);
    if (!dir) {
        cpod_msg(msg, msg_size, "%s: %s", d->state, strerror(errno));
        return false;
    }
    uint64_t *gens = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        char *end;
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' && len > 4 && !strcmp(de->d_name + len - 4, ".tmp")) {
            unlinkat(dirfd(dir), de->d_name, 0);   /* a write a kill cut short */
            continue;
        }
        if (strncmp(de->d_name, "pending-", 8) || !de->d_name[8])
            continue;
        uint64_t g = strtoull(de->d_name + 8, &end, 10);
        if (*end || !g)
            continue;
        if (n == cap) {
            uint64_t *v = realloc(gens, (cap = cap ? 2 * cap : 8) * sizeof *v);
            if (!v)
                break;
            gens = v;
        }
        gens[n++] = g;
    }
    closedir(dir);
    if (n)
        qsort(gens, n, sizeof *gens, cmp_u64);
    uint64_t covered = merged;
    for (size_t i = 0; i < n; i++) {
        state_file(d, "pending", gens[i], path, sizeof path);
        if (gens[i] <= merged) {
            unlink(path);   /* merged; the daemon died before removing it */
            continue;
        }
        char why[512];
        cpod_job *j = read_pending(path, why, sizeof why);
        if (!j) {
            char aside[CPOD_PATH_MAX + 80];
            snprintf(aside, sizeof aside, "%s.damaged", path);
            rename(path, aside);
            cpod_log("%s; set aside as %s: its samples are replayed from the journals, and "
                     "profiles it had already reached may count them twice", why, aside);
            continue;
        }
        if (j->gen != gens[i]) {
            cpod_log("%s: holds generation %" PRIu64 "; ignored", path, j->gen);
            cpod_job_free(j);
            continue;
        }
        covered = j->gen > covered ? j->gen : covered;
        if (d->retry) {
            cpod_log("%s: waits behind generation %" PRIu64 " (left for the next start)", path,
                     d->retry->gen);
            cpod_job_free(j);
            continue;
        }
        cpod_merge_run(d, j);
        if (j->ok) {
            cpod_log("finished the merge of generation %" PRIu64 " left by a stopped daemon: %zu "
                     "profiles merged now, %zu found already merged", j->gen, j->merged, j->skipped);
            merged = j->gen;
            cpod_job_free(j);
        } else {
            cpod_log("cannot finish the merge of generation %" PRIu64 " yet: %s", j->gen, j->err.msg);
            d->retry = j;
        }
    }
    free(gens);
    d->merged_gen = merged;
    d->covered_gen = covered;
    d->gen = covered;
    return true;
}
