/*
 * profdb/merge.c: the daemon's side, adding in-memory profiles to the
 * current epoch.
 *
 * Hosts never share a file: each writes DB/<epoch>/<host>/, and readers
 * add the hosts up.  That needs no lock between machines, which matters
 * over NFS where locks are the least reliable part.  Two writers that do
 * share a host name (a second daemon started by mistake, a test) take a
 * lock on DB/<epoch>/<host>/.lock for the length of a batch, so they
 * serialise instead of losing each other's updates; the lock is never
 * needed for reading.
 *
 * While holding that lock a writer is alone in its directory, so any
 * temporary file there is left over from a writer that died; it removes
 * them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profdb/internal.h"

static int cmp_offset(const void *a, const void *b)
{
    uint64_t x = ((const profdb_entry *)a)->offset, y = ((const profdb_entry *)b)->offset;
    return x < y ? -1 : x > y;
}

static void remove_stale_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] == '.' && n > 4 && !strcmp(de->d_name + n - 4, ".tmp"))
            unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
}

/* Sorted copy of the samples with repeats added up and zeros dropped. */
static profdb_entry *normalise(const profdb_input *in, size_t *n, uint64_t *total,
                               profdb_error *err)
{
    profdb_entry *v = malloc((in->nsamples ? in->nsamples : 1) * sizeof *v);
    if (!v) {
        pd_fail(err, PROFDB_ENOMEM, "out of memory");
        return NULL;
    }
    if (in->nsamples)
        memcpy(v, in->samples, in->nsamples * sizeof *v);
    qsort(v, in->nsamples, sizeof *v, cmp_offset);
    size_t k = 0;
    uint64_t t = 0;
    for (size_t i = 0; i < in->nsamples; i++) {
        if (!v[i].count)
            continue;
        if (t + v[i].count < t) {
            free(v);
            pd_fail(err, PROFDB_EOVERFLOW, "more than 2^64-1 samples in one input");
            return NULL;
        }
        t += v[i].count;
        if (k && v[k - 1].offset == v[i].offset) {
            v[k - 1].count += v[i].count;
        } else {
            v[k++] = v[i];
        }
    }
    *n = k;
    *total = t;
    return v;
}

static bool merge_one(profdb *db, const char *hostdir, const char *host, const profdb_input *in,
                      profdb_error *err)
{
    char key[PROFDB_KEY_MAX], fname[PROFDB_KEY_MAX + 3 * PROFDB_MAX_NAME + 16];
    const char *ipath = in->path ? in->path : PROFDB_UNKNOWN_PATH;
    profdb_key(in->build_id, in->build_id_len, ipath, key);
    pd_profile_name(key, in->event, fname, sizeof fname);

    size_t nin;
    uint64_t tin;
    profdb_entry *add = normalise(in, &nin, &tin, err);
    if (!add)
        return false;
    if (nin == 0) {
        free(add);
        return true;
    }
    char *path = pd_join(hostdir, fname, NULL, err);
    if (!path) {
        free(add);
        return false;
    }
    profdb_profile old = { 0 };
    bool have_old = false, ok = false;
    uint8_t *bytes = NULL, *enc = NULL;
    size_t size;
    profdb_error e;
    if (pd_slurp(path, &bytes, &size, &e)) {
        have_old = profdb_decode(bytes, size, path, &old, &e);
        free(bytes);
        if (!have_old) {
            if (e.code == PROFDB_EVERSION || e.code == PROFDB_ENOMEM) {
                if (err)
                    *err = e;
                goto out;
            }
            if (!pd_set_aside(db, path, &e, err))
                goto out;
        }
    } else if (e.code != PROFDB_ENOENT) {
        if (err)
            *err = e;
        goto out;
    }

    profdb_profile p = { 0 };
    p.e = malloc((old.n + nin) * sizeof *p.e);
    if (!p.e) {
        pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    size_t i = 0, j = 0, k = 0;
    while (i < old.n || j < nin) {
        if (j == nin || (i < old.n && old.e[i].offset < add[j].offset)) {
            p.e[k++] = old.e[i++];
        } else if (i == old.n || add[j].offset < old.e[i].offset) {
            p.e[k++] = add[j++];
        } else {
            p.e[k] = old.e[i++];
            p.e[k++].count += add[j++].count;   /* overflow caught by the total */
        }
    }
    p.n = k;
    profdb_info *h = &p.info, *oh = &old.info;
    double events = in->mean_period * (double)tin;
    if (old.info.total + tin < tin || events >= 0x1p63 ||
        oh->period_sum + (uint64_t)llround(events) < oh->period_sum) {
        pd_fail(err, PROFDB_EOVERFLOW, "%s: more than 2^64-1 samples or events", path);
        goto outp;
    }
    h->file = path;
    h->event = (char *)in->event;
    h->host = (char *)host;
    if (in->build_id_len)
        memcpy(h->build_id, in->build_id, in->build_id_len);
    h->build_id_len = in->build_id_len;
    h->paths[h->npaths++] = (char *)ipath;
    for (unsigned q = 0; q < oh->npaths && h->npaths < PROFDB_MAX_PATHS; q++)
        if (strcmp(oh->paths[q], ipath))
            h->paths[h->npaths++] = oh->paths[q];
    h->period_sum = oh->period_sum + (uint64_t)llround(events);
    h->updated = time(NULL);
    h->created = have_old ? oh->created : h->updated;
    if (profdb_encode(&p, db->level, &enc, &size, err))
        ok = pd_write_atomic(hostdir, fname, enc, size, false, err);
    free(enc);
outp:
    free(p.e);
out:
    profdb_profile_free(&old);
    free(path);
    free(add);
    return ok;
}

static bool check_input(const profdb_input *in, profdb_error *err)
{
    if (!pd_check_name(in->event, "event", err))
        return false;
    if (in->host && !pd_check_name(in->host, "host", err))
        return false;
    if (in->path && (!*in->path || strlen(in->path) > PROFDB_MAX_PATH))
        return pd_fail(err, PROFDB_EINVAL, "image path empty or longer than %d bytes",
                       PROFDB_MAX_PATH);
    if (!in->path && in->build_id_len)
        return pd_fail(err, PROFDB_EINVAL, "an image with a build-id needs a path");
    if (in->build_id_len > PROFDB_MAX_BUILD_ID)
        return pd_fail(err, PROFDB_EINVAL, "build-id longer than %d bytes", PROFDB_MAX_BUILD_ID);
    if (!(in->mean_period >= 0) || !isfinite(in->mean_period))
        return pd_fail(err, PROFDB_EINVAL, "mean period %g is not a finite non-negative number",
                       in->mean_period);
    if (in->nsamples && !in->samples)
        return pd_fail(err, PROFDB_EINVAL, "no sample array");
    return true;
}

static bool batch_check(const void *ctx, size_t i, profdb_error *err)
{
    return check_input(&((const profdb_input *)ctx)[i], err);
}

static const char *batch_host(const void *ctx, size_t i)
{
    return ((const profdb_input *)ctx)[i].host;
}

static bool batch_merge(profdb *db, const void *ctx, size_t i, const char *hostdir, const char *host,
                        profdb_error *err)
{
    return merge_one(db, hostdir, host, &((const profdb_input *)ctx)[i], err);
}

size_t profdb_merge(profdb *db, const profdb_input *in, size_t n, profdb_error *err)
{
    profdb_error scratch;
    if (!err)
        err = &scratch;
    err->code = PROFDB_OK;
    err->sys_errno = 0;
    err->msg[0] = '\0';
    static const pd_batch batch = { batch_check, batch_host, batch_merge, remove_stale_temps };
    return pd_merge_batch(db, n, &batch, in, err);
}
