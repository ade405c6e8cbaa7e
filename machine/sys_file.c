/*
 * machine/sys_file.c: opening, reading and writing files.
 *
 * Calls go to the host on the host descriptor behind the guest's, with
 * Alpha's flag values translated.  Reads and writes that could block
 * (pipes, terminals, sockets) are tried without blocking and park the
 * thread when they would block, so one guest waiting for a pipe never
 * stops the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "machine/sys.h"

#define MAXIOV 1024


static int host_oflags(uint64_t f)
{
    int h = (int)(f & A_O_ACCMODE);
    if (f & A_O_CREAT) h |= O_CREAT;
    if (f & A_O_TRUNC) h |= O_TRUNC;
    if (f & A_O_EXCL) h |= O_EXCL;
    if (f & A_O_NOCTTY) h |= O_NOCTTY;
    if (f & A_O_APPEND) h |= O_APPEND;
    if (f & A_O_NONBLOCK) h |= O_NONBLOCK;
    if (f & A_O_DSYNC) h |= O_DSYNC;
    if (f & A_O_DIRECTORY) h |= O_DIRECTORY;
    if (f & A_O_NOFOLLOW) h |= O_NOFOLLOW;
    if (f & A_O_DIRECT) h |= O_DIRECT;
    if (f & A_O_NOATIME) h |= O_NOATIME;
    if ((f & A_O_SYNC) == (uint64_t)A_O_SYNC) h |= O_SYNC;
    if (f & A_O_PATH) h |= O_PATH;
    if ((f & A_O_TMPFILE) == A_O_TMPFILE) h |= O_TMPFILE;
    return h | O_CLOEXEC;
}

static bool may_block(const gfile *f)
{
    return f->kind == FK_PIPE || f->kind == FK_TTY || f->kind == FK_SOCK || f->kind == FK_CHR;
}

static long do_open(thread *t, int dirfd, uint64_t pathva, uint64_t flags, uint64_t mode)
{
    long err;
    char *gp = path_arg(t, pathva, &err);
    if (!gp)
        return err;
    int host = gp[0] == '/' ? path_sys(t, gp) : -1;
    long verr = 0;
    if (host < 0 && path_virtual(t, gp, host_oflags(flags) & ~O_CREAT, &host, NULL, &verr) && verr) {
        free(gp);
        return verr;
    }
    if (host < 0) {
        hpath hp;
        bool excl = (flags & A_O_CREAT) && (flags & A_O_EXCL);
        long r = path_resolve(t, dirfd, gp, &hp, ((flags & A_O_CREAT) ? PR_CREATE : 0) |
                              ((excl || (flags & A_O_NOFOLLOW)) ? PR_NOFOLLOW : 0));
        if (r) {
            free(gp);
            return r;
        }
        host = path_open(t, &hp, host_oflags(flags), (mode_t)(mode & 07777 & ~(uint64_t)t->p->umask));
        int e = errno;
        hpath_free(&hp);
        if (host < 0) {
            free(gp);
            return -xerrno(e);
        }
    }
    gfile *f = gfile_new(host, (int)(flags & (A_O_ACCMODE | A_O_APPEND | A_O_NONBLOCK | A_O_DSYNC |
                                              A_O_DIRECT | A_O_NOATIME | A_O_PATH | A_O_LARGEFILE)),
                         gp);
    free(gp);
    int fd = fd_install(t->p, f, 0, (flags & A_O_CLOEXEC) != 0);
    if (fd < 0)
        gfile_put(f);
    return fd;
}

SYS(open) { return do_open(t, A_AT_FDCWD, a[0], a[1], a[2]); }
SYS(openat) { return do_open(t, (int)a[0], a[1], a[2], a[3]); }
SYS(close) { return fd_close(t->p, (int)a[0]); }

SYS(close_range)
{
    unsigned lo = (unsigned)a[0], hi = (unsigned)a[1];
    if (lo > hi)
        return -A_EINVAL;
    for (unsigned i = lo; i <= hi && (int)i < t->p->fd->n; i++) {
        if (a[2] & 4)          /* CLOSE_RANGE_CLOEXEC */
            t->p->fd->e[i].cloexec = t->p->fd->e[i].f != NULL;
        else
            fd_close(t->p, (int)i);
    }
    return 0;
}

/* read into guest memory at buf from host: at most n bytes, once. */
static long do_read(thread *t, gfile *f, uint64_t buf, uint64_t n, int64_t off)
{
    if (f->kind == FK_DIR)
        return -A_EISDIR;
    if ((f->flags & A_O_ACCMODE) == 1)
        return -A_EBADF;
    if (n == 0)
        return 0;
    bool nb = f->flags & A_O_NONBLOCK;
    if (off < 0 && may_block(f) && !f->hostnb && !fd_ready(f->host, POLLIN))
        return nb ? -A_EAGAIN : wait_fd(t, f, POLLIN);
    struct iovec iov[MAXIOV];
    if (n > (uint64_t)SSIZE_MAX)
        n = SSIZE_MAX;
    int k = mem_iov(t->mm, buf, n, true, iov, MAXIOV);
    if (k < 0)
        return k;
    if (f->random) {
        size_t got = 0;
        for (int i = 0; i < k; i++) {
            random_fill(t->m, iov[i].iov_base, iov[i].iov_len);
            got += iov[i].iov_len;
        }
        return (long)got;
    }
    ssize_t r = off >= 0 ? preadv(f->host, iov, k, off) : readv(f->host, iov, k);
    if (r < 0) {
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && !nb)
            return wait_fd(t, f, POLLIN);
        return -xerrno(errno);
    }
    return r;
}

SYS(read)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return do_read(t, f, a[1], a[2], -1);
}

SYS(pread64)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    if ((int64_t)a[3] < 0)
        return -A_EINVAL;
    if (f->kind == FK_PIPE || f->kind == FK_SOCK)
        return -A_ESPIPE;
    return do_read(t, f, a[1], a[2], (int64_t)a[3]);
}

static void sigpipe(thread *t)
{
    ksiginfo si = { .signo = A_SIGPIPE, .code = A_SI_USER, .pid = t->p->pid };
    sig_send_thread(t, &si);
}

/* Write n bytes from guest buf; blocking writes to pipes finish across
 * retries, t->progress counting what is done. */
static long do_write(thread *t, gfile *f, uint64_t buf, uint64_t n, int64_t off)
{
    if ((f->flags & A_O_ACCMODE) == 0 && f->kind != FK_TTY && f->kind != FK_CHR)
        return -A_EBADF;
    if (n == 0)
        return 0;
    bool nb = f->flags & A_O_NONBLOCK;
    uint64_t done = t->progress;
    while (done < n) {
        if (off < 0 && may_block(f) && !f->hostnb && !fd_ready(f->host, POLLOUT)) {
            if (nb)
                return done ? (long)done : -A_EAGAIN;
            t->progress = done;
            return wait_fd(t, f, POLLOUT);
        }
        struct iovec iov[MAXIOV];
        int k = mem_iov(t->mm, buf + done, n - done, false, iov, MAXIOV);
        if (k < 0)
            return done ? (long)done : k;
        ssize_t r = off >= 0 ? pwritev(f->host, iov, k, off + (int64_t)done) : writev(f->host, iov, k);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (nb)
                    return done ? (long)done : -A_EAGAIN;
                t->progress = done;
                return wait_fd(t, f, POLLOUT);
            }
            if (errno == EPIPE)
                sigpipe(t);
            return done ? (long)done : -xerrno(errno);
        }
        done += (uint64_t)r;
        if (r == 0)
            break;
    }
    t->progress = 0;
    return (long)done;
}

SYS(write)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return do_write(t, f, a[1], a[2], -1);
}

SYS(pwrite64)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    if ((int64_t)a[3] < 0)
        return -A_EINVAL;
    return do_write(t, f, a[1], a[2], (int64_t)a[3]);
}

/* readv/writev: one guest iovec after the other.  A blocking writev that
 * has to wait keeps the bytes already written in t->progress, like write. */
static long do_rwv(thread *t, const uint64_t *a, bool wr, int64_t off)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    uint64_t cnt = a[2];
    if (cnt > MAXIOV)
        return -A_EINVAL;
    uint64_t (*gv)[2] = malloc((cnt ? cnt : 1) * 16);
    if (cnt && mem_read(t->mm, a[1], gv, cnt * 16)) {
        free(gv);
        return -A_EFAULT;
    }
    uint64_t skip = wr ? t->progress : 0, total = 0;
    long r = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t base = gv[i][0], len = gv[i][1];
        if (skip >= len) {
            skip -= len;
            total += len;
            continue;
        }
        base += skip;
        len -= skip;
        total += skip;
        skip = 0;
        t->progress = 0;
        r = wr ? do_write(t, f, base, len, off >= 0 ? off + (int64_t)total : -1)
               : do_read(t, f, base, len, off >= 0 ? off + (int64_t)total : -1);
        if (r == SYS_BLOCK) {
            if (!wr && total) {
                r = 0;
                break;
            }
            t->progress += total;
            free(gv);
            return SYS_BLOCK;
        }
        if (r < 0)
            break;
        uint64_t got = (uint64_t)r;
        total += got;
        r = 0;
        if (got < len)
            break;          /* a short transfer ends the call */
        /* after the first piece, do not wait for more input */
        if (!wr && may_block(f) && !fd_ready(f->host, POLLIN))
            break;
    }
    free(gv);
    t->progress = 0;
    if (r < 0 && !total)
        return r;
    return (long)total;
}

SYS(readv) { return do_rwv(t, a, false, -1); }
SYS(writev) { return do_rwv(t, a, true, -1); }
SYS(preadv) { return do_rwv(t, a, false, (int64_t)a[3]); }
SYS(pwritev) { return do_rwv(t, a, true, (int64_t)a[3]); }

SYS(lseek)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    off_t r = lseek(f->host, (off_t)a[1], (int)a[2]);
    return r < 0 ? -xerrno(errno) : (long)r;
}

SYS(sendfile)
{
    gfile *out = fd_get(t->p, (int)a[0]), *in = fd_get(t->p, (int)a[1]);
    if (!out || !in)
        return -A_EBADF;
    off_t off, *po = NULL;
    if (a[2]) {
        if (mem_read(t->mm, a[2], &off, 8))
            return -A_EFAULT;
        po = &off;
    }
    ssize_t r = sendfile(out->host, in->host, po, a[3]);
    if (r < 0)
        return -xerrno(errno);
    if (po && mem_write(t->mm, a[2], &off, 8))
        return -A_EFAULT;
    return r;
}

SYS(copy_file_range)
{
    gfile *in = fd_get(t->p, (int)a[0]), *out = fd_get(t->p, (int)a[2]);
    if (!out || !in)
        return -A_EBADF;
    loff_t oi, oo, *pi = NULL, *pout = NULL;
    if (a[1]) { if (mem_read(t->mm, a[1], &oi, 8)) return -A_EFAULT; pi = &oi; }
    if (a[3]) { if (mem_read(t->mm, a[3], &oo, 8)) return -A_EFAULT; pout = &oo; }
    ssize_t r = copy_file_range(in->host, pi, out->host, pout, a[4], (unsigned)a[5]);
    if (r < 0)
        return -xerrno(errno);
    if (pi) mem_write(t->mm, a[1], &oi, 8);
    if (pout) mem_write(t->mm, a[3], &oo, 8);
    return r;
}
