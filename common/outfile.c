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

/* dir/name, with "." and ".." (and the "" after a final slash) taken
 * lexically: dir is already a real path, so no link is skipped.  Takes
 * dir; NULL when it is NULL or memory runs out. */
static char *join(char *dir, const char *name)
{
    if (!dir || !*name || !strcmp(name, "."))
        return dir;
    if (!strcmp(name, "..")) {
        char *last = strrchr(dir, '/');
        if (last)
            last[last == dir] = 0;
        return dir;
    }
    size_t n = strlen(dir) + strlen(name) + 2;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", strcmp(dir, "/") ? dir : "", name);
    free(dir);
    return r;
}

char *outfile_resolve(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *real = realpath(dir, NULL);
    if (!real && errno == ENOENT && slash && slash != path)
        real = outfile_resolve(dir);    /* a directory not made yet */
    return join(real, slash ? slash + 1 : path);
}

bool outfile_same(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb)
        return false;
    /* Neither exists yet: two outputs of one run, compared by name. */
    char *ra = outfile_resolve(a), *rb = outfile_resolve(b);
    bool same = ra && rb ? !strcmp(ra, rb) : !strcmp(a, b);
    free(ra);
    free(rb);
    return same;
}

bool outfile_inside(const char *path, const char *dir)
{
    char *p = outfile_resolve(path), *d = realpath(dir, NULL);
    bool in = false;
    if (p && d) {
        size_t n = strcmp(d, "/") ? strlen(d) : 0;   /* everything is below the root */
        in = !strncmp(p, d, n) && (p[n] == 0 || p[n] == '/');
    }
    free(p);
    free(d);
    return in;
}

bool outfile_apart(const outfile_arg *outs, size_t nout, const outfile_arg *ins, size_t nin,
                   const outfile_arg *dirs, size_t ndirs, char *err, size_t errlen)
{
    for (size_t i = 0; i < nout; i++) {
        const outfile_arg *o = &outs[i];
        if (!o->path)
            continue;
        for (size_t k = 0; k < nin; k++)
            if (ins[k].path && outfile_same(o->path, ins[k].path)) {
                snprintf(err, errlen, "%s %s: the same file as %s %s, which writing it would replace",
                         o->how, o->path, ins[k].how, ins[k].path);
                return false;
            }
        for (size_t k = 0; k < i; k++)
            if (outs[k].path && outfile_same(o->path, outs[k].path)) {
                snprintf(err, errlen, "%s %s: the same file as %s %s; give each output its own",
                         o->how, o->path, outs[k].how, outs[k].path);
                return false;
            }
        for (size_t k = 0; k < ndirs; k++)
            if (dirs[k].path && outfile_inside(o->path, dirs[k].path)) {
                snprintf(err, errlen, "%s %s: inside %s %s, whose files are not to be replaced; "
                         "write it elsewhere", o->how, o->path, dirs[k].how, dirs[k].path);
                return false;
            }
    }
    return true;
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

FILE *outfile_open_stream(outfile *o, const char *path, mode_t mode, char *err, size_t errlen)
{
    if (!outfile_open(o, path, mode, err, errlen))
        return NULL;
    FILE *f = outfile_stream(o);
    if (!f) {
        snprintf(err, errlen, "%s: out of memory", path);
        outfile_abort(o);
    }
    return f;
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
