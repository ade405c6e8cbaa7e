/*
 * profdb/file.c: reading whole files (common/readfile.h, its failures as
 * profdb errors) and replacing them atomically.
 *
 * A replacement is written to a hidden temporary name in the same
 * directory, flushed to disk, renamed over the target and the directory
 * flushed in turn.  Until the rename the old file is untouched; after it
 * the new file is complete on disk.  Readers list only visible names, so
 * they never meet a temporary.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/readfile.h"
#include "profdb/internal.h"

/* The common reader's failure as a profdb error: its message, and a code
 * from the errno it leaves (readfile.h), as pd_fail_sys would give. */
static bool read_failed(profdb_error *err, const char *msg)
{
    int e = errno;
    profdb_err code = e == ENOENT ? PROFDB_ENOENT
                    : e == ENOMEM ? PROFDB_ENOMEM
                    : e == EISDIR || e == EINVAL ? PROFDB_EINVAL
                    : PROFDB_EIO;
    pd_fail(err, code, "%s", msg);
    if (err && code != PROFDB_EINVAL)
        err->sys_errno = e;
    errno = e;
    return false;
}

bool pd_slurp(const char *path, uint8_t **data, size_t *size, profdb_error *err)
{
    char msg[sizeof err->msg];
    *data = readfile(path, (size_t)PROFDB_MAX_ENTRIES * 24 + PROFDB_HDR_MAX, size, msg, sizeof msg);
    if (*data)
        return true;   /* a file shrinking under us shows up as truncation */
    if (errno == EFBIG) {
        size_t n = *size;
        *size = 0;
        return pd_fail(err, PROFDB_ECORRUPT, "%s: %zu bytes, too large for a profile", path, n);
    }
    return read_failed(err, msg);
}

bool pd_slurp_head(const char *path, size_t max, uint8_t **data, size_t *got,
                   uint64_t *file_size, profdb_error *err)
{
    char msg[sizeof err->msg];
    *data = readfile_head(path, max, got, file_size, msg, sizeof msg);
    return *data || read_failed(err, msg);
}

bool pd_fsync_dir(const char *dir, profdb_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return pd_fail_sys(err, dir, "cannot open directory");
    /* Some filesystems cannot sync a directory; they report EINVAL. */
    if (fsync(fd) < 0 && errno != EINVAL) {
        pd_fail_sys(err, dir, "cannot sync directory");
        close(fd);
        return false;
    }
    close(fd);
    return true;
}

bool pd_mkdir(const char *path, bool sync_parent, profdb_error *err)
{
    if (mkdir(path, 0777) == 0) {
        if (!sync_parent)
            return true;
        char *parent = strdup(path), *slash;
        if (!parent)
            return pd_fail(err, PROFDB_ENOMEM, "out of memory");
        slash = strrchr(parent, '/');
        if (slash)
            *slash = '\0';
        bool ok = pd_fsync_dir(slash ? (*parent ? parent : "/") : ".", err);
        free(parent);
        return ok;
    }
    if (errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return true;
        errno = ENOTDIR;
    }
    return pd_fail_sys(err, path, "cannot create directory");
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return false;
        if (w == 0) {
            errno = ENOSPC;
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool pd_write_atomic(const char *dir, const char *name, const void *data, size_t size,
                     bool sync_dir, profdb_error *err)
{
    char *target = pd_join(dir, name, NULL, err);
    if (!target)
        return false;
    size_t tlen = strlen(dir) + strlen(name) + 40;
    char *tmp = malloc(tlen);
    if (!tmp) {
        free(target);
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    }
    /* Random, not the pid alone: hosts sharing a directory over NFS have
     * overlapping pids. */
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 8; tries++) {
        uint64_t r;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
            r = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ (uint64_t)tries * 0x9e3779b97f4a7c15ull;
        snprintf(tmp, tlen, "%s/.%s.%016" PRIx64 ".tmp", dir, name, r);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    bool ok = false;
    if (fd < 0) {
        pd_fail_sys(err, target, "cannot create a temporary file beside it");
        goto out;
    }
    if (!write_all(fd, data, size)) {
        pd_fail_sys(err, target, "cannot write");
    } else if (fsync(fd) < 0) {
        pd_fail_sys(err, target, "cannot sync to disk");
    } else if (close(fd) < 0) {
        fd = -1;
        pd_fail_sys(err, target, "cannot write (on close)");
    } else {
        fd = -1;
        if (rename(tmp, target) < 0)
            pd_fail_sys(err, target, "cannot rename the new version into place");
        else
            ok = !sync_dir || pd_fsync_dir(dir, err);
        if (ok)
            goto out;
    }
    if (fd >= 0)
        close(fd);
    int e = errno;
    unlink(tmp);
    errno = e;
out:
    free(tmp);
    free(target);
    return ok;
}

int pd_lock_host(profdb *db, const char *edir, const char *host, char **hostdir, profdb_error *err)
{
    char esc[3 * PROFDB_MAX_NAME + 1];
    pd_escape(host, true, esc, sizeof esc);
    if (!(*hostdir = pd_join(edir, esc, NULL, err)) || !pd_mkdir(*hostdir, true, err))
        return -1;
    return pd_lock_dir(db, *hostdir, "two writers with this host name would lose each other's updates", err);
}

size_t pd_merge_batch(profdb *db, size_t n, const pd_batch *b, const void *ctx, profdb_error *err)
{
    if (!n)
        return 0;
    char epoch[PROFDB_EPOCH_MAX], myhost[PROFDB_MAX_NAME + 2];
    if (!pd_hostname(myhost, sizeof myhost, err) || !pd_current_or_create(db, epoch, err))
        return 0;
    char *edir = pd_join(db->dir, epoch, NULL, err);
    if (!edir || !pd_mkdir(edir, true, err)) {
        free(edir);
        return 0;
    }
    char *hostdir = NULL;
    const char *lockedhost = NULL;
    int lockfd = -1;
    size_t done = 0;
    for (; done < n; done++) {
        if (!b->check(ctx, done, err))
            break;
        const char *host = b->host(ctx, done) ? b->host(ctx, done) : myhost;
        if (!lockedhost || strcmp(lockedhost, host)) {
            /* Renames so far become durable before the lock is let go. */
            if (hostdir && !pd_fsync_dir(hostdir, err))
                break;
            if (lockfd >= 0)
                close(lockfd);
            lockfd = -1;
            free(hostdir);
            hostdir = NULL;
            if ((lockfd = pd_lock_host(db, edir, host, &hostdir, err)) == -1)
                break;
            if (b->locked)
                b->locked(hostdir);
            lockedhost = host;
        }
        if (!b->merge(db, ctx, done, hostdir, host, err))
            break;
    }
    /* A failed sync is reported but does not lower the count: the renames
     * are visible, and merging those inputs again would count them twice. */
    profdb_error e2;
    if (hostdir && lockfd != -1 && !pd_fsync_dir(hostdir, &e2) && !err->code)
        *err = e2;
    if (lockfd >= 0)
        close(lockfd);
    free(hostdir);
    free(edir);
    return done;
}

bool pd_set_aside(profdb *db, const char *path, const profdb_error *why, profdb_error *err)
{
    size_t n = strlen(path) + 40;
    char *dst = malloc(n);
    if (!dst)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    /* link, not rename, where the file system has links: a file set aside
     * earlier in the same second keeps its name, this one takes the next. */
    long long t = (long long)time(NULL);
    bool ok = false;
    for (unsigned k = 0; k < 1000; k++) {
        if (k)
            snprintf(dst, n, "%s.corrupt-%lld-%u", path, t, k);
        else
            snprintf(dst, n, "%s.corrupt-%lld", path, t);
        if (link(path, dst) == 0) {
            ok = unlink(path) == 0;
            break;
        }
        if (errno != EEXIST) {
            ok = rename(path, dst) == 0;
            break;
        }
    }
    if (ok)
        pd_warn(db, "%s; set aside as %s, merging into a new profile", why->msg, dst);
    else
        pd_fail_sys(err, path, "cannot set the unreadable profile aside");
    free(dst);
    return ok;
}

bool pd_update_host_file(profdb *db, const char *host, const char *key, const char *suffix, pd_update_fn update,
                         void *ctx, profdb_error *err)
{
    char epoch[PROFDB_EPOCH_MAX], myhost[PROFDB_MAX_NAME + 2], fname[PROFDB_KEY_MAX + 16];
    if (host && !pd_check_name(host, "host", err))
        return false;
    if (!host && !pd_hostname(myhost, sizeof myhost, err))
        return false;
    if (snprintf(fname, sizeof fname, "%s%s", key, suffix) >= (int)sizeof fname)
        return pd_fail(err, PROFDB_EINVAL, "\"%s\": name too long", key);
    bool ok = false;
    char *edir = NULL, *hostdir = NULL, *path = NULL;
    uint8_t *old = NULL, *enc = NULL;
    size_t oldn = 0, size = 0;
    int lockfd = -1;
    if (!pd_current_or_create(db, epoch, err) || !(edir = pd_join(db->dir, epoch, NULL, err)) ||
        !pd_mkdir(edir, true, err))
        goto out;
    if ((lockfd = pd_lock_host(db, edir, host ? host : myhost, &hostdir, err)) == -1 ||
        !(path = pd_join(hostdir, fname, NULL, err)))
        goto out;
    struct stat st;
    /* one we cannot read at all (a directory there, EACCES) stays, and the merge fails */
    if (stat(path, &st) == 0 && !pd_slurp(path, &old, &oldn, err))
        goto out;
    profdb_error e = { 0 };
    if (!update(ctx, path, old, oldn, &enc, &size, &e)) {
        /* Damaged bytes would fail every later merge into this file (and
         * so the daemon's whole generation): keep them aside, start anew. */
        bool damaged = old && (e.code == PROFDB_EMAGIC || e.code == PROFDB_ETRUNC ||
                               e.code == PROFDB_ECHECKSUM || e.code == PROFDB_ECORRUPT);
        free(enc);
        enc = NULL;
        if (!damaged || !pd_set_aside(db, path, &e, err) || !update(ctx, path, NULL, 0, &enc, &size, err)) {
            if (!damaged && err)
                *err = e;
            goto out;
        }
    }
    ok = pd_write_atomic(hostdir, fname, enc, size, true, err);
out:
    if (lockfd >= 0)
        close(lockfd);
    free(enc);
    free(old);
    free(path);
    free(hostdir);
    free(edir);
    return ok;
}

/* An exclusive lock on DIR/.lock, released by closing the descriptor.
 * Returns the descriptor, -1 on error, or -2 when the filesystem offers no
 * locks (an NFS mount without a lock service): the caller goes on, after a
 * warning saying what RISK that leaves. */
int pd_lock_dir(profdb *db, const char *dir, const char *risk, profdb_error *err)
{
    char *path = pd_join(dir, PROFDB_LOCKFILE, NULL, err);
    if (!path)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        pd_fail_sys(err, path, "cannot open lock file");
        free(path);
        return -1;
    }
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    int r;
    while ((r = fcntl(fd, F_OFD_SETLKW, &fl)) < 0 && errno == EINTR)
        ;
    if (r < 0 && errno == EINVAL)   /* no OFD locks: process locks do here */
        while ((r = fcntl(fd, F_SETLKW, &fl)) < 0 && errno == EINTR)
            ;
    if (r < 0 && (errno == ENOLCK || errno == EOPNOTSUPP)) {
        pd_warn(db, "%s: cannot lock (%s); %s", path, strerror(errno), risk);
        close(fd);
        fd = -2;
    } else if (r < 0) {
        pd_fail_sys(err, path, "cannot lock");
        close(fd);
        fd = -1;
    }
    free(path);
    return fd;
}
