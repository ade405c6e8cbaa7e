/*
 * profdb/epoch.c: opening a database, its epochs and the current-epoch
 * marker.
 *
 * The marker, not the newest name, says which epoch is current: hosts
 * sharing a database may disagree about the time, and an epoch started on
 * a host whose clock lags would otherwise never become current.  Without a
 * marker (a database copied without it, or written by hand) the newest
 * epoch is current.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profdb/internal.h"

static void warn_stderr(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "profdb: warning: %s\n", msg);
}

profdb *profdb_open(const char *dir, unsigned flags, profdb_error *err)
{
    struct stat st;
    if (!dir || !*dir) {
        pd_fail(err, PROFDB_EINVAL, "empty database directory name");
        return NULL;
    }
    if (stat(dir, &st) < 0) {
        if (errno != ENOENT || !(flags & PROFDB_CREATE)) {
            pd_fail_sys(err, dir, "cannot open profile database");
            return NULL;
        }
        if (!pd_mkdir(dir, true, err))
            return NULL;
    } else if (!S_ISDIR(st.st_mode)) {
        pd_fail(err, PROFDB_EINVAL, "%s: not a directory", dir);
        return NULL;
    }
    profdb *db = calloc(1, sizeof *db);
    if (!db || !(db->dir = strdup(dir))) {
        free(db);
        pd_fail(err, PROFDB_ENOMEM, "out of memory");
        return NULL;
    }
    size_t n = strlen(db->dir);
    while (n > 1 && db->dir[n - 1] == '/')
        db->dir[--n] = '\0';
    db->flags = flags;
    db->level = 9;
    db->warn = warn_stderr;
    return db;
}

void profdb_close(profdb *db)
{
    if (db) {
        free(db->dir);
        free(db);
    }
}

const char *profdb_dir(const profdb *db) { return db->dir; }

void profdb_set_warn(profdb *db, void (*warn)(void *ctx, const char *msg), void *ctx)
{
    db->warn = warn ? warn : warn_stderr;
    db->warn_ctx = ctx;
}


void profdb_strv_free(char **v)
{
    if (v)
        for (char **p = v; *p; p++)
            free(*p);
    free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return pd_epoch_cmp(*(char *const *)a, *(char *const *)b);
}

bool profdb_epochs(profdb *db, char ***names, size_t *count, profdb_error *err)
{
    *names = NULL;
    *count = 0;
    DIR *d = opendir(db->dir);
    if (!d)
        return pd_fail_sys(err, db->dir, "cannot read profile database");
    size_t n = 0, cap = 8;
    char **v = malloc(cap * sizeof *v);
    struct dirent *de;
    bool ok = v != NULL;
    if (!ok)
        pd_fail(err, PROFDB_ENOMEM, "out of memory");
    while (ok && (errno = 0, de = readdir(d))) {
        if (!pd_epoch_valid(de->d_name))
            continue;
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
            continue;
        if (n + 1 >= cap) {
            char **nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv) {
                ok = pd_fail(err, PROFDB_ENOMEM, "out of memory");
                break;
            }
            v = nv;
        }
        if (!(v[n] = pd_strdup(de->d_name, err)))
            ok = false;
        else
            n++;
    }
    if (ok && errno)
        ok = pd_fail_sys(err, db->dir, "cannot read profile database");
    closedir(d);
    if (v)
        v[n] = NULL;
    if (!ok) {
        profdb_strv_free(v);
        return false;
    }
    qsort(v, n, sizeof *v, cmp_str);
    *names = v;
    *count = n;
    return true;
}

/* The marker's epoch, "" when there is no marker. */
static bool read_marker(profdb *db, char name[PROFDB_EPOCH_MAX], profdb_error *err)
{
    char *path = pd_join(db->dir, PROFDB_MARKER, NULL, err);
    if (!path)
        return false;
    uint8_t *data;
    size_t size;
    name[0] = '\0';
    bool ok = pd_slurp(path, &data, &size, err);
    if (!ok && err && err->code == PROFDB_ENOENT) {
        free(path);
        return true;
    }
    if (ok) {
        while (size && (data[size - 1] == '\n' || data[size - 1] == '\r'))
            size--;
        if (size >= PROFDB_EPOCH_MAX || memchr(data, 0, size)) {
            ok = pd_fail(err, PROFDB_ECORRUPT, "%s: does not name an epoch", path);
        } else {
            memcpy(name, data, size);
            name[size] = '\0';
            if (!pd_epoch_valid(name))
                ok = pd_fail(err, PROFDB_ECORRUPT, "%s: \"%s\" is not an epoch name", path, name);
        }
        free(data);
    }
    free(path);
    return ok;
}

bool profdb_current_epoch(profdb *db, char name[PROFDB_EPOCH_MAX], profdb_error *err)
{
    if (!read_marker(db, name, err))
        return false;
    if (name[0]) {
        char *path = pd_join(db->dir, name, NULL, err);
        struct stat st;
        bool ok = path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
        if (path && !ok)
            pd_fail(err, PROFDB_ENOENT, "%s/%s: names epoch %s, which does not exist", db->dir,
                    PROFDB_MARKER, name);
        free(path);
        return ok;
    }
    char **v;
    size_t n;
    if (!profdb_epochs(db, &v, &n, err))
        return false;
    if (n)
        snprintf(name, PROFDB_EPOCH_MAX, "%s", v[n - 1]);
    profdb_strv_free(v);
    return n ? true : pd_fail(err, PROFDB_ENOENT, "%s: no epochs yet", db->dir);
}

bool profdb_new_epoch(profdb *db, char out[PROFDB_EPOCH_MAX], profdb_error *err)
{
    char name[PROFDB_EPOCH_MAX];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(name, sizeof name, "%Y%m%dT%H%M%SZ", &tm);
    size_t base = strlen(name);
    bool made = false;
    for (int seq = 0; seq < 1000 && !made; seq++) {
        if (seq)
            snprintf(name + base, sizeof name - base, "-%03d", seq);
        char *path = pd_join(db->dir, name, NULL, err);
        if (!path)
            return false;
        /* mkdir is the arbiter: of two hosts starting an epoch in the
         * same second, one gets the bare name and the other -001. */
        if (mkdir(path, 0777) == 0)
            made = true;
        else if (errno != EEXIST) {
            pd_fail_sys(err, path, "cannot create epoch");
            free(path);
            return false;
        }
        free(path);
    }
    if (!made)
        return pd_fail(err, PROFDB_EIO, "%s: 1000 epochs already started in second %.16s",
                       db->dir, name);
    if (!pd_fsync_dir(db->dir, err))
        return false;
    char line[PROFDB_EPOCH_MAX + 1];
    int len = snprintf(line, sizeof line, "%s\n", name);
    if (!pd_write_atomic(db->dir, PROFDB_MARKER, line, (size_t)len, true, err))
        return false;
    if (out)
        snprintf(out, PROFDB_EPOCH_MAX, "%s", name);
    return true;
}

/* No epoch yet, or the marker names one that was deleted: start one.
 * Writers that find none at the same moment must agree on a single epoch,
 * or their samples would land in two; so the look and the start happen
 * under the database's lock, and whoever comes second finds the first's. */
bool pd_current_or_create(profdb *db, char name[PROFDB_EPOCH_MAX], profdb_error *err)
{
    profdb_error e;
    if (profdb_current_epoch(db, name, &e))
        return true;
    if (e.code != PROFDB_ENOENT) {
        if (err)
            *err = e;
        return false;
    }
    int fd = pd_lock_dir(db, db->dir, "writers starting the first epoch at once may start two", err);
    if (fd == -1)
        return false;
    bool ok = profdb_current_epoch(db, name, &e);
    if (!ok && e.code == PROFDB_ENOENT)
        ok = profdb_new_epoch(db, name, err);
    else if (!ok && err)
        *err = e;
    if (fd >= 0)
        close(fd);
    return ok;
}
