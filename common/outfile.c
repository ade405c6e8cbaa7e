/*
 * common/outfile.c: safe output files (common/outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

bool outfile_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!*path) {
        snprintf(err, errlen, "empty output file name");
        return false;
    }
    if (lstat(path, &st) != 0)
        return true;   /* absent (or unreachable: creating the temporary will say) */
    if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
        return true;
    snprintf(err, errlen, "%s: exists and is %s: refusing to replace it", path, kind_of(st.st_mode));
    return false;
}

bool outfile_is(const char *path, const char *in)
{
    struct stat a, b;
    return stat(path, &a) == 0 && stat(in, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool outfile_is_temp(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    /* ".NAME." and mkostemp's six letters, as outfile_open names it */
    return name[0] == '.' && !strncmp(name + 1, base, n) && name[1 + n] == '.' &&
           strlen(name + 2 + n) == 6;
}

bool outfile_open(outfile *o, const char *path, mode_t mode, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!outfile_check(path, err, errlen))
        return false;
    size_t n = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    o->path = strdup(path);
    o->tmp = malloc(n + 16);
    if (!o->path || !o->tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        outfile_abort(o);
        return false;
    }
    /* DIR/.NAME.XXXXXX: hidden, next to the output, same file system. */
    snprintf(o->tmp, n + 16, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd < 0) {
        snprintf(err, errlen, "%s: cannot create a file in its directory: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        outfile_abort(o);
        return false;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(o->fd, mode & ~mask) != 0) {
        snprintf(err, errlen, "%s: cannot set its permissions: %s", path, strerror(errno));
        outfile_abort(o);
        return false;
    }
    return true;
}

FILE *outfile_stream(outfile *o)
{
    if (!o->fp && o->fd >= 0)
        o->fp = fdopen(o->fd, "w");
    return o->fp;
}

void outfile_abort(outfile *o)
{
    if (o->fp)
        fclose(o->fp);
    else if (o->fd >= 0)
        close(o->fd);
    o->fp = NULL;
    o->fd = -1;
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
}

bool outfile_commit(outfile *o, char *err, size_t errlen)
{
    int e = 0;
    if (o->fp) {
        if (fflush(o->fp) != 0 || ferror(o->fp))
            e = errno ? errno : EIO;
    }
    if (!e && o->fd >= 0 && fsync(o->fd) != 0 && errno != EINVAL)
        e = errno;
    if (o->fp) {
        if (fclose(o->fp) != 0 && !e)
            e = errno;
    } else if (o->fd >= 0 && close(o->fd) != 0 && !e) {
        e = errno;
    }
    o->fp = NULL;
    o->fd = -1;
    /* The output may have become a device or directory since the open. */
    if (!e && !outfile_check(o->path, err, errlen)) {
        outfile_abort(o);
        return false;
    }
    if (!e && rename(o->tmp, o->path) != 0)
        e = errno;
    if (e) {
        snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(e));
        outfile_abort(o);
        return false;
    }
    free(o->tmp);
    o->tmp = NULL;
    free(o->path);
    o->path = NULL;
    return true;
}
