/*
 * collector/cpod_merge.c: merging a generation into the database (its
 * profiles, then its value lists, ProfileMe entries and stacks), exactly
 * once even when the daemon is killed half way or exits with the merge
 * refused.
 *
 * profdb makes each file's update atomic, but a generation spans many
 * files.  Before writing any, the job is saved whole in STATE/pending-GEN
 * (cpod_pending.c) together with the total each target file holds now
 * (pre): samples for a profile and a stack file, value samples for a
 * value profile, records for a ProfileMe profile, each an exact count that
 * a merge adds to.  Whoever finishes the job later (this thread after an
 * error, or the next daemon after a kill or an exit) reads the totals
 * again: a file holding pre has not received its input, one holding pre +
 * the input's total has.  When every input is in, STATE/merged records the
 * generation and the pending file goes; the journals then drop that
 * generation (the next daemon's replay skips it while the file is there).
 *
 * Only this daemon writes its host's files, so the totals move only by
 * our own merges.  (A file found damaged and set aside by profdb starts
 * again from zero; its pre was read as zero too, so the rule holds.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "collector/cpod_internal.h"

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

/* Appends ", " (unless first) and the formatted text to out, which holds *n
 * characters, without passing size. */
static void part(char *out, size_t size, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void part(char *out, size_t size, size_t *n, const char *fmt, ...)
{
    if (*n + 2 >= size)
        return;
    if (*n)
        *n += (size_t)snprintf(out + *n, size - *n, ", ");
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *n, size - *n, fmt, ap);
    va_end(ap);
    *n = k < 0 ? *n : *n + (size_t)k < size ? *n + (size_t)k : size - 1;
}

size_t cpod_job_unstored(const cpod_job *j, char *out, size_t size)
{
    size_t profiles = 0, lists = 0, vi = 0, entries = 0, pi = 0, n = 0;
    for (size_t i = 0; i < j->n; i++)
        profiles += !j->pins[i].stored;
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
    if (profiles)
        part(out, size, &n, "%zu profiles", profiles);
    if (stacks)
        part(out, size, &n, "%" PRIu64 " stacks", stacks);
    if (lists)
        part(out, size, &n, "%zu value lists of %zu images", lists, vi);
    if (entries)
        part(out, size, &n, "%zu ProfileMe entries of %zu images", entries, pi);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cpod_state_file(const cpod *d, const char *name, uint64_t gen, char *out, size_t size)
{
    if (gen)
        snprintf(out, size, "%s/%s-%" PRIu64, d->state, name, gen);
    else
        snprintf(out, size, "%s/%s", d->state, name);
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
    cpod_state_file(d, "merged", 0, path, sizeof path);
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

/* A new job: build its profiles' entries, note what every target file
 * holds, and save it all in the pending file before writing any. */
static bool prepare(cpod *d, cpod_job *j, profdb_error *err)
{
    for (size_t i = 0; i < j->n; i++) {
        cpod_pin *p = &j->pins[i];
        if (!p->prof)
            continue;   /* built by an earlier attempt */
        if (!(p->e = cpod_prof_entries(p->prof))) {
            err->code = PROFDB_ENOMEM;
            cpod_msg(err->msg, sizeof err->msg, "out of memory building profiles");
            return false;
        }
        p->n = p->prof->n;
        cpod_prof_free(p->prof, NULL);
        p->prof = NULL;
    }
    if (!profdb_current_epoch(d->db, j->epoch, err)) {
        if (err->code != PROFDB_ENOENT || !profdb_new_epoch(d->db, j->epoch, err))
            return false;
        cpod_log("started epoch %s", j->epoch);
    }
    totals t;
    if (!load_totals(d, j->epoch, &t, err))
        return false;
    for (size_t i = 0; i < j->n; i++)
        j->pins[i].pre = stored_total(&t, &j->pins[i]);
    free_totals(&t);
    if (j->values)
        cpod_values_land(d, j->values, j->epoch, true);
    if (j->pm)
        cpod_pm_land(d, j->pm, j->epoch, true);
    cpod_stacks_land(d, &j->stk, j->epoch, true);
    if (!cpod_pending_write(d, j, err))
        return false;
    j->pended = true;
    return true;
}

/* A job tried before (by this daemon or a stopped one): mark what is in
 * the database already, by the totals its files hold now. */
static bool settle(cpod *d, cpod_job *j, profdb_error *err)
{
    totals t;
    if (!load_totals(d, j->epoch, &t, err))
        return false;
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
    if (j->values)
        j->files_found += cpod_values_land(d, j->values, j->epoch, false);
    if (j->pm)
        j->files_found += cpod_pm_land(d, j->pm, j->epoch, false);
    j->files_found += cpod_stacks_land(d, &j->stk, j->epoch, false);
    return true;
}

/* The profiles not stored yet, in one profdb_merge. */
static bool store_profiles(cpod *d, cpod_job *j, profdb_error *err)
{
    size_t need = 0;
    for (size_t i = 0; i < j->n; i++)
        need += !j->pins[i].stored;
    if (!need)
        return true;
    profdb_input *in = calloc(need, sizeof *in);
    size_t *at = calloc(need, sizeof *at);
    if (!in || !at) {
        free(in);
        free(at);
        err->code = PROFDB_ENOMEM;
        cpod_msg(err->msg, sizeof err->msg, "out of memory");
        return false;
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
    size_t done = profdb_merge(d->db, in, need, err);
    for (size_t q = 0; q < done; q++)
        j->pins[at[q]].stored = true;
    j->merged = done;
    free(in);
    free(at);
    return done == need;
}

void cpod_merge_run(cpod *d, cpod_job *j)
{
    double t0 = now_s();
    profdb_error err = { 0 };
    j->ok = false;
    j->merged = j->skipped = 0;
    j->new_epoch_name[0] = '\0';
    if (!(j->pended ? settle(d, j, &err) : prepare(d, j, &err)) || !store_profiles(d, j, &err))
        goto out;
    /* After the profiles, each kind in turn; what got in is marked (the
     * stacks stored leave the set), so a retry merges only the rest. */
    if (j->values && !cpod_values_store(d, j->values, &j->files_merged, &err))
        goto out;
    if (j->pm && !cpod_pm_store(d, j->pm, &j->files_merged, &err))
        goto out;
    if (!cpod_stacks_merge(&j->stk, d->db, d->host, &j->files_merged, &err))
        goto out;
    if (write_merged(d, j->gen)) {
        char path[CPOD_PATH_MAX + 64];
        cpod_state_file(d, "pending", j->gen, path, sizeof path);
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
    cpod_state_file(d, "merged", 0, path, sizeof path);
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
        cpod_state_file(d, "pending", gens[i], path, sizeof path);
        if (gens[i] <= merged) {
            unlink(path);   /* merged; the daemon died before removing it */
            continue;
        }
        char why[512];
        cpod_job *j = cpod_pending_read(path, why, sizeof why);
        if (!j) {
            char aside[CPOD_PATH_MAX + 80];
            snprintf(aside, sizeof aside, "%s.damaged", path);
            rename(path, aside);
            cpod_log("%s; set aside as %s: its samples, values, stacks and ProfileMe records are replayed "
                     "from the journals, and files it had already reached may count them twice", why, aside);
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
                     "profiles merged now, %zu found already merged; value, ProfileMe and stack files: "
                     "%zu merged now, %zu found already merged", j->gen, j->merged, j->skipped,
                     j->files_merged, j->files_found);
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
