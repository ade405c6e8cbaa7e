/*
 * machine/sys_name.c: calls on names: access, mkdir, unlink, rename, link,
 * symlink, readlink, chmod, chown, utimes, truncate.  Each guest path is
 * resolved to a host (directory, path) pair (machine/path.c) and the host's
 * *at() call does the work; the guest's umask applies to what it creates.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "machine/sys.h"

/* Run fn on the host path of a guest (dirfd, path). */
#define WITH_PATH(dirfd, va, creating, expr) ({                              \
        long err_;                                                            \
        char *gp_ = path_arg(t, (va), &err_);                                 \
        if (gp_) {                                                            \
            hpath hp;                                                         \
            err_ = path_resolve(t, (dirfd), gp_, &hp, (creating));            \
            free(gp_);                                                        \
            if (!err_) {                                                      \
                err_ = (expr) < 0 ? -xerrno(errno) : 0;                       \
                hpath_free(&hp);                                              \
            }                                                                 \
        }                                                                     \
        err_;                                                                 \
    })

static int amode(uint64_t m) { return (int)(m & 7); }

SYS(access) { return WITH_PATH(A_AT_FDCWD, a[0], false, faccessat(hp.dirfd, hp.path, amode(a[1]), 0)); }
SYS(faccessat) { return WITH_PATH((int)a[0], a[1], false, faccessat(hp.dirfd, hp.path, amode(a[2]), 0)); }
SYS(faccessat2)
{
    int hf = ((a[3] & A_AT_EACCESS) ? AT_EACCESS : 0) | ((a[3] & A_AT_SYMLINK_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0);
    return WITH_PATH((int)a[0], a[1], (hf & AT_SYMLINK_NOFOLLOW) ? PR_NOFOLLOW : 0, faccessat(hp.dirfd, hp.path, amode(a[2]), hf));
}
SYS(mkdir) { return WITH_PATH(A_AT_FDCWD, a[0], PR_CREATE | PR_NOFOLLOW, mkdirat(hp.dirfd, hp.path, (mode_t)(a[1] & ~(uint64_t)t->p->umask))); }
SYS(mkdirat) { return WITH_PATH((int)a[0], a[1], PR_CREATE | PR_NOFOLLOW, mkdirat(hp.dirfd, hp.path, (mode_t)(a[2] & ~(uint64_t)t->p->umask))); }
SYS(rmdir) { return WITH_PATH(A_AT_FDCWD, a[0], PR_NOFOLLOW, unlinkat(hp.dirfd, hp.path, AT_REMOVEDIR)); }
SYS(unlink) { return WITH_PATH(A_AT_FDCWD, a[0], PR_NOFOLLOW, unlinkat(hp.dirfd, hp.path, 0)); }
SYS(unlinkat)
{
    int hf = (a[2] & A_AT_REMOVEDIR) ? AT_REMOVEDIR : 0;
    return WITH_PATH((int)a[0], a[1], PR_NOFOLLOW, unlinkat(hp.dirfd, hp.path, hf));
}
SYS(mknod) { return WITH_PATH(A_AT_FDCWD, a[0], PR_CREATE | PR_NOFOLLOW, mknodat(hp.dirfd, hp.path, (mode_t)(a[1] & ~(uint64_t)t->p->umask), (dev_t)a[2])); }
SYS(mknodat) { return WITH_PATH((int)a[0], a[1], PR_CREATE | PR_NOFOLLOW, mknodat(hp.dirfd, hp.path, (mode_t)(a[2] & ~(uint64_t)t->p->umask), (dev_t)a[3])); }
SYS(chmod) { return WITH_PATH(A_AT_FDCWD, a[0], false, fchmodat(hp.dirfd, hp.path, (mode_t)a[1], 0)); }
SYS(fchmodat) { return WITH_PATH((int)a[0], a[1], false, fchmodat(hp.dirfd, hp.path, (mode_t)a[2], 0)); }
SYS(chown) { return WITH_PATH(A_AT_FDCWD, a[0], false, fchownat(hp.dirfd, hp.path, (uid_t)a[1], (gid_t)a[2], 0)); }
SYS(lchown) { return WITH_PATH(A_AT_FDCWD, a[0], PR_NOFOLLOW, fchownat(hp.dirfd, hp.path, (uid_t)a[1], (gid_t)a[2], AT_SYMLINK_NOFOLLOW)); }
SYS(fchownat)
{
    int hf = ((a[4] & A_AT_SYMLINK_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) | ((a[4] & A_AT_EMPTY_PATH) ? AT_EMPTY_PATH : 0);
    return WITH_PATH((int)a[0], a[1], (hf & AT_SYMLINK_NOFOLLOW) ? PR_NOFOLLOW : 0, fchownat(hp.dirfd, hp.path, (uid_t)a[2], (gid_t)a[3], hf));
}
SYS(fchmod)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return fchmod(f->host, (mode_t)a[1]) < 0 ? -xerrno(errno) : 0;
}
SYS(fchown)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return fchown(f->host, (uid_t)a[1], (gid_t)a[2]) < 0 ? -xerrno(errno) : 0;
}
static int truncate_at(int dirfd, const char *path, off_t len)
{
    int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = ftruncate(fd, len), e = errno;
    close(fd);
    errno = e;
    return r;
}
SYS(truncate) { return WITH_PATH(A_AT_FDCWD, a[0], false, truncate_at(hp.dirfd, hp.path, (off_t)a[1])); }

/* Two-path calls. */
static long two_paths(thread *t, int d1, uint64_t p1, int d2, uint64_t p2, hpath *h1, hpath *h2, bool create2, bool follow1)
{
    long err;
    char *g1 = path_arg(t, p1, &err);
    if (!g1)
        return err;
    char *g2 = path_arg(t, p2, &err);
    if (!g2) {
        free(g1);
        return err;
    }
    err = path_resolve(t, d1, g1, h1, follow1 ? 0 : PR_NOFOLLOW);
    if (!err) {
        err = path_resolve(t, d2, g2, h2, (create2 ? PR_CREATE : 0) | PR_NOFOLLOW);
        if (err)
            hpath_free(h1);
    }
    free(g1);
    free(g2);
    return err;
}

static long do_rename(thread *t, int d1, uint64_t p1, int d2, uint64_t p2, unsigned flags)
{
    hpath h1, h2;
    long r = two_paths(t, d1, p1, d2, p2, &h1, &h2, true, false);
    if (r)
        return r;
    r = renameat2(h1.dirfd, h1.path, h2.dirfd, h2.path, flags) < 0 ? -xerrno(errno) : 0;
    hpath_free(&h1);
    hpath_free(&h2);
    return r;
}

SYS(rename) { return do_rename(t, A_AT_FDCWD, a[0], A_AT_FDCWD, a[1], 0); }
SYS(renameat) { return do_rename(t, (int)a[0], a[1], (int)a[2], a[3], 0); }
SYS(renameat2) { return do_rename(t, (int)a[0], a[1], (int)a[2], a[3], (unsigned)a[4]); }

static long do_link(thread *t, int d1, uint64_t p1, int d2, uint64_t p2, uint64_t flags)
{
    hpath h1, h2;
    long r = two_paths(t, d1, p1, d2, p2, &h1, &h2, true, (flags & A_AT_SYMLINK_FOLLOW) != 0);
    if (r)
        return r;
    int hf = (flags & A_AT_SYMLINK_FOLLOW) ? AT_SYMLINK_FOLLOW : 0;
    r = linkat(h1.dirfd, h1.path, h2.dirfd, h2.path, hf) < 0 ? -xerrno(errno) : 0;
    hpath_free(&h1);
    hpath_free(&h2);
    return r;
}

SYS(link) { return do_link(t, A_AT_FDCWD, a[0], A_AT_FDCWD, a[1], 0); }
SYS(linkat) { return do_link(t, (int)a[0], a[1], (int)a[2], a[3], a[4]); }

static long do_symlink(thread *t, uint64_t target, int dirfd, uint64_t lp)
{
    long err;
    char *tg = path_arg(t, target, &err);
    if (!tg)
        return err;
    err = WITH_PATH(dirfd, lp, PR_CREATE | PR_NOFOLLOW, symlinkat(tg, hp.dirfd, hp.path));
    free(tg);
    return err;
}

SYS(symlink) { return do_symlink(t, a[0], A_AT_FDCWD, a[1]); }
SYS(symlinkat) { return do_symlink(t, a[0], (int)a[1], a[2]); }

static long do_readlink(thread *t, int dirfd, uint64_t pathva, uint64_t buf, uint64_t size)
{
    long err;
    char *gp = path_arg(t, pathva, &err);
    if (!gp)
        return err;
    if ((int64_t)size <= 0) {
        free(gp);
        return -A_EINVAL;
    }
    char *link = NULL;
    char tmp[PATH_MAX];
    ssize_t n;
    int vfd;
    if (path_virtual(t, gp, 0, &vfd, &link, &err)) {
        if (err) {
            free(gp);
            return err;
        }
        n = (ssize_t)strlen(link);
        memcpy(tmp, link, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp);
        free(link);
    } else {
        hpath hp;
        err = path_resolve(t, dirfd, gp, &hp, PR_NOFOLLOW);
        if (err) {
            free(gp);
            return err;
        }
        n = readlinkat(hp.dirfd, hp.path, tmp, sizeof tmp);
        int e = errno;
        hpath_free(&hp);
        if (n < 0) {
            free(gp);
            return -xerrno(e);
        }
    }
    free(gp);
    if ((uint64_t)n > size)
        n = (ssize_t)size;
    return mem_write(t->mm, buf, tmp, (size_t)n) ? -A_EFAULT : n;
}

SYS(readlink) { return do_readlink(t, A_AT_FDCWD, a[0], a[1], a[2]); }
SYS(readlinkat) { return do_readlink(t, (int)a[0], a[1], a[2], a[3]); }

static long do_utimens(thread *t, int dirfd, uint64_t pathva, const struct timespec *ts, int hf)
{
    if (!pathva) {
        gfile *f = fd_get(t->p, dirfd);
        if (!f)
            return -A_EBADF;
        return futimens(f->host, ts) < 0 ? -xerrno(errno) : 0;
    }
    return WITH_PATH(dirfd, pathva, (hf & AT_SYMLINK_NOFOLLOW) ? PR_NOFOLLOW : 0, utimensat(hp.dirfd, hp.path, ts, hf));
}

SYS(utimensat)
{
    struct timespec ts[2], *p = NULL;
    if (a[2]) {
        if (mem_read(t->mm, a[2], ts, sizeof ts))
            return -A_EFAULT;
        p = ts;
    }
    int hf = (a[3] & A_AT_SYMLINK_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
    return do_utimens(t, (int)a[0], a[1], p, hf);
}

static long utimes_common(thread *t, int dirfd, uint64_t pathva, uint64_t tv)
{
    struct timespec ts[2], *p = NULL;
    if (tv) {
        int64_t v[4];
        if (mem_read(t->mm, tv, v, sizeof v))
            return -A_EFAULT;
        ts[0].tv_sec = v[0]; ts[0].tv_nsec = v[1] * 1000;
        ts[1].tv_sec = v[2]; ts[1].tv_nsec = v[3] * 1000;
        p = ts;
    }
    return do_utimens(t, dirfd, pathva, p, 0);
}

SYS(utimes) { return utimes_common(t, A_AT_FDCWD, a[0], a[1]); }
SYS(futimesat) { return utimes_common(t, (int)a[0], a[1], a[2]); }
