/*
 * profdb/stacks_merge.c: adding stacks to the database, as merge.c adds
 * profiles: per host directory under its lock, read, add, write to a
 * temporary and rename; a damaged file is set aside.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "profdb/internal.h"
#include "profdb/stacks.h"

/* ---- the database ---------------------------------------------------------- */

/* stacks-HASH.EVENT.stk: HASH over the image set's sorted keys. */
static bool file_name(const profdb_stacks *s, char *out, size_t size)
{
    uint64_t h = FNV1A_INIT;
    for (size_t i = 0; i < s->nimages; i++) {
        h = fnv1a_str(h, s->img[i].key);
        h = fnv1a(h, "\n", 1);
    }
    char ev[3 * PROFDB_MAX_NAME + 1];
    pd_escape(s->event, false, ev, sizeof ev);
    return (size_t)snprintf(out, size, "stacks-%016llx.%s" PROFDB_STACKS_SUFFIX, (unsigned long long)h, ev) < size;
}

static bool check_input(const profdb_stacks_input *in, profdb_error *err)
{
    if (!pd_check_name(in->event, "event", err) || (in->host && !pd_check_name(in->host, "host", err)))
        return false;
    if (!in->nimages || in->nimages > PROFDB_STACK_MAX_IMAGES || !in->keys || !in->paths ||
        (in->n && !in->s))
        return pd_fail(err, PROFDB_EINVAL, "stacks: 1 to %d images and a stack array needed",
                       PROFDB_STACK_MAX_IMAGES);
    for (size_t i = 0; i < in->nimages; i++)
        if (!in->keys[i] || !pd_key_valid(in->keys[i]) || !in->paths[i] || !*in->paths[i] ||
            strlen(in->paths[i]) > PROFDB_MAX_PATH)
            return pd_fail(err, PROFDB_EINVAL, "stacks: image %zu: bad key or path", i);
    for (size_t i = 0; i < in->n; i++) {
        const profdb_stack *s = &in->s[i];
        if (!s->count || !s->n || s->n > PROFDB_STACK_MAX_FRAMES || s->end > 255 || !s->f)
            return pd_fail(err, PROFDB_EINVAL, "stacks: stack %zu: bad count, end or frames", i);
        for (uint32_t j = 0; j < s->n; j++)
            if (s->f[j].image >= in->nimages)
                return pd_fail(err, PROFDB_EINVAL, "stacks: stack %zu: frame %u names no image", i, j);
    }
    return true;
}

static bool merge_one(profdb *db, const char *hostdir, const char *host, const profdb_stacks_input *in,
                      profdb_error *err)
{
    profdb_stacks add = { 0 };
    char fname[64 + 3 * PROFDB_MAX_NAME];
    bool ok = false;
    uint8_t *enc = NULL;
    size_t size;
    char *path = NULL;
    if (!pd_stacks_append(&add, in->nimages, in->keys, in->paths, in->s, in->n, err) ||
        !profdb_stacks_normalise(&add, err))
        goto out;
    if (!(add.event = strdup(in->event)) || !(add.host = strdup(host))) {
        pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
        goto out;
    }
    if (!add.n) {
        ok = true;
        goto out;
    }
    file_name(&add, fname, sizeof fname);
    if (!(path = pd_join(hostdir, fname, NULL, err)))
        goto out;
    profdb_stacks old;
    profdb_error e;
    add.created = add.updated = time(NULL);
    if (profdb_stacks_read_file(path, &old, &e)) {
        add.created = old.created;
        bool merged = pd_stacks_add(&add, &old, err) && profdb_stacks_normalise(&add, err);
        profdb_stacks_free(&old);
        if (!merged)
            goto out;
    } else if (e.code == PROFDB_EVERSION || e.code == PROFDB_ENOMEM ||
               (e.code == PROFDB_EIO && e.sys_errno != ENOENT)) {
        if (err)
            *err = e;
        goto out;
    } else if (e.code != PROFDB_ENOENT && !(e.code == PROFDB_EIO && e.sys_errno == ENOENT)) {
        /* damaged: set aside, as profiles are, and start anew */
        if (!pd_set_aside(db, path, &e, err))
            goto out;
    }
    ok = profdb_stacks_encode(&add, &enc, &size, err) &&
         pd_write_atomic(hostdir, fname, enc, size, false, err);
out:
    free(enc);
    free(path);
    profdb_stacks_free(&add);
    return ok;
}

static bool batch_check(const void *ctx, size_t i, profdb_error *err)
{
    return check_input(&((const profdb_stacks_input *)ctx)[i], err);
}

static const char *batch_host(const void *ctx, size_t i)
{
    return ((const profdb_stacks_input *)ctx)[i].host;
}

static bool batch_merge(profdb *db, const void *ctx, size_t i, const char *hostdir, const char *host,
                        profdb_error *err)
{
    return merge_one(db, hostdir, host, &((const profdb_stacks_input *)ctx)[i], err);
}

size_t profdb_stacks_merge(profdb *db, const profdb_stacks_input *in, size_t n, profdb_error *err)
{
    profdb_error scratch;
    if (!err)
        err = &scratch;
    memset(err, 0, sizeof *err);
    static const pd_batch batch = { batch_check, batch_host, batch_merge, NULL };
    return pd_merge_batch(db, n, &batch, in, err);
}

bool profdb_stacks_total(profdb *db, const char *epoch, const char *host, const char *event, size_t nimages,
                         const char *const *keys, uint64_t *total, profdb_error *err)
{
    char hostbuf[PROFDB_MAX_NAME + 1], fname[64 + 3 * PROFDB_MAX_NAME], esc[3 * PROFDB_MAX_NAME + 1];
    *total = 0;
    if (!pd_check_name(event, "event", err) || (host && !pd_check_name(host, "host", err)) ||
        (!host && !pd_hostname(hostbuf, sizeof hostbuf, err)))
        return false;
    if (!pd_epoch_valid(epoch))
        return pd_fail(err, PROFDB_ENOENT, "%s: no epoch \"%s\"", db->dir, epoch);
    profdb_stack_image *img = calloc(nimages ? nimages : 1, sizeof *img);
    if (!img)
        return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    for (size_t i = 0; i < nimages; i++)
        img[i].key = (char *)keys[i];
    profdb_stacks s = { .event = (char *)event, .nimages = nimages, .img = img };
    file_name(&s, fname, sizeof fname);
    free(img);
    pd_escape(host ? host : hostbuf, true, esc, sizeof esc);
    char *hdir = pd_join(db->dir, epoch, esc, err), *path = hdir ? pd_join(hdir, fname, NULL, err) : NULL;
    free(hdir);
    if (!path)
        return false;
    profdb_stacks st;
    bool ok = profdb_stacks_read_file(path, &st, err);
    free(path);
    if (!ok && err->code == PROFDB_EIO && err->sys_errno == ENOENT)
        err->code = PROFDB_ENOENT;
    if (ok)
        *total = st.total;
    profdb_stacks_free(&st);
    return ok;
}
