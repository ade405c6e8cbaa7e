/*
 * machine/sys_file.c: files, directories and descriptors.
 *
 * Calls go to the host on the host descriptor behind the guest's, with
 * Alpha's flag values and structure layouts translated.  Reads and writes
 * that could block (pipes, terminals, sockets) are tried without blocking
 * and park the thread when they would block, so one guest waiting for a
 * pipe never stops the others.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <termios.h>
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

/* ---- open, close, read, write -------------------------------------------- */

static long do_open(thread *t, int dirfd, uint64_t pathva, uint64_t flags, uint64_t mode)
{
    long err;
    char *gp = path_arg(t, pathva, &err);
    if (!gp)
        return err;
    int host = -1;
    char *abs = gp[0] == '/' ? strdup(gp) : NULL;
    if (abs)
        host = path_virtual(t, abs, NULL);
    if (host < 0) {
        hpath hp;
        long r = path_resolve(t, dirfd, gp, &hp, (flags & A_O_CREAT) != 0);
        if (r) {
            free(gp);
            free(abs);
            return r;
        }
        host = openat(hp.dirfd, hp.path, host_oflags(flags), (mode_t)(mode & 07777 & ~(uint64_t)t->p->umask));
        int e = errno;
        hpath_free(&hp);
        if (host < 0) {
            free(gp);
            free(abs);
            return -xerrno(e);
        }
    }
    gfile *f = gfile_new(host, (int)(flags & (A_O_ACCMODE | A_O_APPEND | A_O_NONBLOCK | A_O_DSYNC |
                                              A_O_DIRECT | A_O_NOATIME | A_O_PATH | A_O_LARGEFILE)),
                         gp);
    free(gp);
    free(abs);
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

/* ---- descriptors ----------------------------------------------------------- */

SYS(dup)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    f->refs++;
    int fd = fd_install(t->p, f, 0, false);
    if (fd < 0)
        gfile_put(f);
    return fd;
}

static long do_dup3(thread *t, int oldfd, int newfd, uint64_t flags)
{
    gfile *f = fd_get(t->p, oldfd);
    if (!f)
        return -A_EBADF;
    if (flags & ~(uint64_t)A_O_CLOEXEC)
        return -A_EINVAL;
    f->refs++;
    int r = fd_install_at(t->p, f, newfd, (flags & A_O_CLOEXEC) != 0);
    if (r < 0)
        gfile_put(f);
    return r;
}

SYS(dup2)
{
    if (a[0] == a[1])
        return fd_get(t->p, (int)a[0]) ? (long)a[1] : -A_EBADF;
    return do_dup3(t, (int)a[0], (int)a[1], 0);
}

SYS(dup3)
{
    if (a[0] == a[1])
        return -A_EINVAL;
    return do_dup3(t, (int)a[0], (int)a[1], a[2]);
}

static long make_pipe(thread *t, int fds[2], uint64_t flags)
{
    int h[2];
    if (pipe2(h, O_CLOEXEC | O_NONBLOCK) < 0)
        return -xerrno(errno);
    int nb = (flags & A_O_NONBLOCK) ? A_O_NONBLOCK : 0;
    gfile *r = gfile_new(h[0], 0 | nb, "pipe"), *w = gfile_new(h[1], 1 | nb, "pipe");
    r->hostnb = w->hostnb = true;
    bool ce = flags & A_O_CLOEXEC;
    fds[0] = fd_install(t->p, r, 0, ce);
    if (fds[0] < 0) {
        gfile_put(r);
        gfile_put(w);
        return fds[0];
    }
    fds[1] = fd_install(t->p, w, 0, ce);
    if (fds[1] < 0) {
        fd_close(t->p, fds[0]);
        gfile_put(w);
        return fds[1];
    }
    return 0;
}

SYS(pipe)
{
    int fds[2];
    long r = make_pipe(t, fds, 0);
    if (r)
        return r;
    t->r[20] = (uint64_t)fds[1];     /* OSF convention: second end in a4 */
    return fds[0];
}

SYS(pipe2)
{
    int fds[2];
    if (a[1] & ~(uint64_t)(A_O_CLOEXEC | A_O_NONBLOCK))
        return -A_EINVAL;
    long r = make_pipe(t, fds, a[1]);
    if (r)
        return r;
    if (mem_write(t->mm, a[0], fds, 8)) {
        fd_close(t->p, fds[0]);
        fd_close(t->p, fds[1]);
        return -A_EFAULT;
    }
    return 0;
}

/* struct flock on Alpha: short type, short whence, long start, long len,
 * int pid; lock types 1 read, 2 write, 8 unlock. */
static long do_lock(thread *t, gfile *f, int cmd, uint64_t va)
{
    uint8_t b[32];
    if (mem_read(t->mm, va, b, 32))
        return -A_EFAULT;
    short type, whence;
    int64_t start, len;
    memcpy(&type, b, 2);
    memcpy(&whence, b + 2, 2);
    memcpy(&start, b + 8, 8);
    memcpy(&len, b + 16, 8);
    struct flock fl = { .l_whence = whence, .l_start = start, .l_len = len, .l_pid = 0 };
    switch (type) {
    case A_F_RDLCK: fl.l_type = F_RDLCK; break;
    case A_F_WRLCK: fl.l_type = F_WRLCK; break;
    case A_F_UNLCK: fl.l_type = F_UNLCK; break;
    default: return -A_EINVAL;
    }
    /* Open-file-description locks, so two guest processes (one host
     * process) still conflict. */
    int hcmd = cmd == A_F_GETLK ? F_OFD_GETLK : F_OFD_SETLK;
    if (fcntl(f->host, hcmd, &fl) < 0) {
        if (cmd == A_F_SETLKW && (errno == EAGAIN || errno == EACCES))
            return block_until(t, vtime_ns(t->m) + 1000000);
        return -xerrno(errno);
    }
    if (cmd == A_F_GETLK) {
        short nt = fl.l_type == F_RDLCK ? A_F_RDLCK : fl.l_type == F_WRLCK ? A_F_WRLCK : A_F_UNLCK;
        int pid = nt == A_F_UNLCK ? 0 : -1;
        memcpy(b, &nt, 2);
        whence = (short)fl.l_whence;
        memcpy(b + 2, &whence, 2);
        start = fl.l_start;
        len = fl.l_len;
        memcpy(b + 8, &start, 8);
        memcpy(b + 16, &len, 8);
        memcpy(b + 24, &pid, 4);
        if (mem_write(t->mm, va, b, 32))
            return -A_EFAULT;
    }
    return 0;
}

SYS(fcntl)
{
    int fd = (int)a[0];
    gfile *f = fd_get(t->p, fd);
    if (!f)
        return -A_EBADF;
    switch ((int)a[1]) {
    case A_F_DUPFD:
    case A_F_DUPFD_CLOEXEC: {
        f->refs++;
        int n = fd_install(t->p, f, (int)a[2], a[1] == A_F_DUPFD_CLOEXEC);
        if (n < 0)
            gfile_put(f);
        return n;
    }
    case A_F_GETFD: return t->p->fd->e[fd].cloexec ? 1 : 0;
    case A_F_SETFD: t->p->fd->e[fd].cloexec = a[2] & 1; return 0;
    case A_F_GETFL: return f->flags;
    case A_F_SETFL: {
        int hf = fcntl(f->host, F_GETFL);
        if (hf >= 0) {
            hf = (a[2] & A_O_APPEND) ? (hf | O_APPEND) : (hf & ~O_APPEND);
            fcntl(f->host, F_SETFL, hf);
        }
        int keep = A_O_APPEND | A_O_NONBLOCK | A_O_DIRECT | A_O_NOATIME;
        f->flags = (f->flags & ~keep) | (int)(a[2] & (uint64_t)keep);
        return 0;
    }
    case A_F_GETLK: case A_F_SETLK: case A_F_SETLKW:
    case A_F_OFD_GETLK: case A_F_OFD_SETLK: case A_F_OFD_SETLKW: {
        int cmd = (int)a[1];
        if (cmd == A_F_OFD_GETLK) cmd = A_F_GETLK;
        if (cmd == A_F_OFD_SETLK) cmd = A_F_SETLK;
        if (cmd == A_F_OFD_SETLKW) cmd = A_F_SETLKW;
        return do_lock(t, f, cmd, a[2]);
    }
    case A_F_GETOWN: return 0;
    case A_F_SETOWN: return 0;
    case A_F_GETPIPE_SZ: {
        int r = fcntl(f->host, F_GETPIPE_SZ);
        return r < 0 ? -xerrno(errno) : r;
    }
    case A_F_SETPIPE_SZ: {
        int r = fcntl(f->host, F_SETPIPE_SZ, (int)a[2]);
        return r < 0 ? -xerrno(errno) : r;
    }
    default:
        return -A_EINVAL;
    }
}

SYS(flock)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    int op = (int)a[1];
    if (flock(f->host, op | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK && !(op & LOCK_NB))
            return block_until(t, vtime_ns(t->m) + 1000000);
        return -xerrno(errno);
    }
    return 0;
}

SYS(fsync)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return fsync(f->host) < 0 ? -xerrno(errno) : 0;
}

SYS(sync) { (void)t; (void)a; sync(); return 0; }

SYS(ftruncate)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return ftruncate(f->host, (off_t)a[1]) < 0 ? -xerrno(errno) : 0;
}

SYS(fallocate)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    return fallocate(f->host, (int)a[1], (off_t)a[2], (off_t)a[3]) < 0 ? -xerrno(errno) : 0;
}

SYS(memfd_create)
{
    long err;
    char *name = path_arg(t, a[0], &err);
    if (!name)
        return err;
    int h = memfd_create(name, MFD_CLOEXEC | (int)(a[1] & MFD_ALLOW_SEALING));
    free(name);
    if (h < 0)
        return -xerrno(errno);
    gfile *f = gfile_new(h, 2, "memfd");
    int fd = fd_install(t->p, f, 0, (a[1] & MFD_CLOEXEC) != 0);
    if (fd < 0)
        gfile_put(f);
    return fd;
}

/* ---- terminal and other ioctls ---------------------------------------------- */

static const struct { uint32_t a, h; } iflags[] = {
    {0x1, IGNBRK}, {0x2, BRKINT}, {0x4, IGNPAR}, {0x8, PARMRK}, {0x10, INPCK},
    {0x20, ISTRIP}, {0x40, INLCR}, {0x80, IGNCR}, {0x100, ICRNL}, {0x200, IXON},
    {0x400, IXOFF}, {0x800, IXANY}, {0x1000, IUCLC}, {0x2000, IMAXBEL}, {0x4000, IUTF8},
}, oflags[] = {
    {0x1, OPOST}, {0x2, ONLCR}, {0x4, OLCUC}, {0x8, OCRNL}, {0x10, ONOCR},
    {0x20, ONLRET}, {0x40, OFILL}, {0x80, OFDEL}, {0xc00, TAB3},
}, cflags[] = {
    {0x300, CSIZE}, {0x400, CSTOPB}, {0x800, CREAD}, {0x1000, PARENB},
    {0x2000, PARODD}, {0x4000, HUPCL}, {0x8000, CLOCAL},
}, lflags[] = {
    {0x1, ECHOKE}, {0x2, ECHOE}, {0x4, ECHOK}, {0x8, ECHO}, {0x10, ECHONL},
    {0x20, ECHOPRT}, {0x40, ECHOCTL}, {0x80, ISIG}, {0x100, ICANON}, {0x400, IEXTEN},
    {0x400000, TOSTOP}, {0x800000, FLUSHO}, {0x20000000, PENDIN}, {0x80000000, NOFLSH},
};
static const struct { int a, h; } ccs[] = {
    {0, VEOF}, {1, VEOL}, {2, VEOL2}, {3, VERASE}, {4, VWERASE}, {5, VKILL},
    {6, VREPRINT}, {7, VSWTC}, {8, VINTR}, {9, VQUIT}, {10, VSUSP}, {12, VSTART},
    {13, VSTOP}, {14, VLNEXT}, {15, VDISCARD}, {16, VMIN}, {17, VTIME},
};
#define XLATE(tab, v, from, to) ({                                      \
        uint32_t r_ = 0;                                                \
        for (size_t i_ = 0; i_ < sizeof tab / sizeof tab[0]; i_++) {    \
            if (((v) & tab[i_].from) == tab[i_].from)                   \
                r_ |= tab[i_].to;                                       \
        }                                                               \
        r_;                                                             \
    })

static void termios_to_alpha(const struct termios *h, uint8_t b[44])
{
    uint32_t v[4] = {
        XLATE(iflags, h->c_iflag, h, a), XLATE(oflags, h->c_oflag, h, a),
        XLATE(cflags, h->c_cflag & ~CBAUD, h, a) | (uint32_t)(cfgetospeed(h) & 0xf),
        XLATE(lflags, h->c_lflag, h, a),
    };
    memset(b, 0, 44);
    memcpy(b, v, 16);
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        b[16 + ccs[i].a] = h->c_cc[ccs[i].h];
    uint32_t sp = (uint32_t)(cfgetospeed(h) & 0xf);
    memcpy(b + 36, &sp, 4);
    memcpy(b + 40, &sp, 4);
}

static void termios_from_alpha(const uint8_t b[44], struct termios *h)
{
    uint32_t v[4];
    memcpy(v, b, 16);
    h->c_iflag = XLATE(iflags, v[0], a, h);
    h->c_oflag = XLATE(oflags, v[1], a, h);
    h->c_cflag = (h->c_cflag & CBAUD) | XLATE(cflags, v[2], a, h);
    h->c_lflag = XLATE(lflags, v[3], a, h);
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        h->c_cc[ccs[i].h] = b[16 + ccs[i].a];
}

SYS(ioctl)
{
    int fd = (int)a[0];
    gfile *f = fd_get(t->p, fd);
    if (!f)
        return -A_EBADF;
    uint32_t req = (uint32_t)a[1];
    switch (req) {
    case A_TCGETS: {
        struct termios h;
        if (tcgetattr(f->host, &h) < 0)
            return -xerrno(errno);
        uint8_t b[44];
        termios_to_alpha(&h, b);
        return mem_write(t->mm, a[2], b, 44) ? -A_EFAULT : 0;
    }
    case A_TCSETS: case A_TCSETSW: case A_TCSETSF: {
        struct termios h;
        uint8_t b[44];
        if (tcgetattr(f->host, &h) < 0)
            return -xerrno(errno);
        if (mem_read(t->mm, a[2], b, 44))
            return -A_EFAULT;
        termios_from_alpha(b, &h);
        int act = req == A_TCSETS ? TCSANOW : req == A_TCSETSW ? TCSADRAIN : TCSAFLUSH;
        return tcsetattr(f->host, act, &h) < 0 ? -xerrno(errno) : 0;
    }
    case A_TIOCGWINSZ: {
        struct winsize w;
        if (ioctl(f->host, TIOCGWINSZ, &w) < 0)
            return -xerrno(errno);
        return mem_write(t->mm, a[2], &w, 8) ? -A_EFAULT : 0;
    }
    case A_TIOCSWINSZ: {
        struct winsize w;
        if (mem_read(t->mm, a[2], &w, 8))
            return -A_EFAULT;
        return ioctl(f->host, TIOCSWINSZ, &w) < 0 ? -xerrno(errno) : 0;
    }
    case A_TIOCGPGRP: {
        if (!isatty(f->host))
            return -A_ENOTTY;
        int pg = t->p->pgid;
        return mem_write(t->mm, a[2], &pg, 4) ? -A_EFAULT : 0;
    }
    case A_TIOCSPGRP:
        return isatty(f->host) ? 0 : -A_ENOTTY;
    case A_TIOCGSID: {
        if (!isatty(f->host))
            return -A_ENOTTY;
        int sid = t->p->sid;
        return mem_write(t->mm, a[2], &sid, 4) ? -A_EFAULT : 0;
    }
    case A_FIONREAD: {
        int n;
        if (ioctl(f->host, FIONREAD, &n) < 0)
            return -xerrno(errno);
        return mem_write(t->mm, a[2], &n, 4) ? -A_EFAULT : 0;
    }
    case A_FIONBIO: {
        int on;
        if (mem_read(t->mm, a[2], &on, 4))
            return -A_EFAULT;
        f->flags = on ? (f->flags | A_O_NONBLOCK) : (f->flags & ~A_O_NONBLOCK);
        return 0;
    }
    case A_FIOCLEX: t->p->fd->e[fd].cloexec = true; return 0;
    case A_FIONCLEX: t->p->fd->e[fd].cloexec = false; return 0;
    default:
        return -A_ENOTTY;
    }
}

/* ---- stat family --------------------------------------------------------- */

static void put64(uint8_t *b, size_t o, uint64_t v) { memcpy(b + o, &v, 8); }
static void put32(uint8_t *b, size_t o, uint32_t v) { memcpy(b + o, &v, 4); }

static long put_stat64(thread *t, uint64_t va, const struct stat *s)
{
    uint8_t b[136];
    memset(b, 0, sizeof b);
    put64(b, 0, s->st_dev);
    put64(b, 8, s->st_ino);
    put64(b, 16, s->st_rdev);
    put64(b, 24, (uint64_t)s->st_size);
    put64(b, 32, (uint64_t)s->st_blocks);
    put32(b, 40, s->st_mode);
    put32(b, 44, s->st_uid);
    put32(b, 48, s->st_gid);
    put32(b, 52, (uint32_t)s->st_blksize);
    put32(b, 56, (uint32_t)s->st_nlink);
    put64(b, 64, (uint64_t)s->st_atim.tv_sec);
    put64(b, 72, (uint64_t)s->st_atim.tv_nsec);
    put64(b, 80, (uint64_t)s->st_mtim.tv_sec);
    put64(b, 88, (uint64_t)s->st_mtim.tv_nsec);
    put64(b, 96, (uint64_t)s->st_ctim.tv_sec);
    put64(b, 104, (uint64_t)s->st_ctim.tv_nsec);
    return mem_write(t->mm, va, b, sizeof b) ? -A_EFAULT : 0;
}

static long put_stat(thread *t, uint64_t va, const struct stat *s)
{
    uint8_t b[80];
    memset(b, 0, sizeof b);
    put32(b, 0, (uint32_t)s->st_dev);
    put32(b, 4, (uint32_t)s->st_ino);
    put32(b, 8, s->st_mode);
    put32(b, 12, (uint32_t)s->st_nlink);
    put32(b, 16, s->st_uid);
    put32(b, 20, s->st_gid);
    put32(b, 24, (uint32_t)s->st_rdev);
    put64(b, 32, (uint64_t)s->st_size);
    put64(b, 40, (uint64_t)s->st_atim.tv_sec);
    put64(b, 48, (uint64_t)s->st_mtim.tv_sec);
    put64(b, 56, (uint64_t)s->st_ctim.tv_sec);
    put32(b, 64, (uint32_t)s->st_blksize);
    put32(b, 68, (uint32_t)s->st_blocks);
    return mem_write(t->mm, va, b, sizeof b) ? -A_EFAULT : 0;
}

/* fstatat on the host for a guest (dirfd, path, flags). */
static long host_stat(thread *t, int dirfd, uint64_t pathva, uint64_t flags, struct stat *st)
{
    int hf = 0;
    if (flags & A_AT_SYMLINK_NOFOLLOW) hf |= AT_SYMLINK_NOFOLLOW;
    if (flags & A_AT_EMPTY_PATH) hf |= AT_EMPTY_PATH;
    long err;
    char *gp = path_arg(t, pathva, &err);
    if (!gp)
        return err;
    if (!gp[0]) {
        free(gp);
        if (!(flags & A_AT_EMPTY_PATH))
            return -A_ENOENT;
        int h = AT_FDCWD;
        if (dirfd == A_AT_FDCWD)
            h = t->p->cwd;
        else {
            gfile *f = fd_get(t->p, dirfd);
            if (!f)
                return -A_EBADF;
            h = f->host;
        }
        return fstat(h, st) < 0 ? -xerrno(errno) : 0;
    }
    hpath hp;
    long r = path_resolve(t, dirfd, gp, &hp, false);
    free(gp);
    if (r)
        return r;
    r = fstatat(hp.dirfd, hp.path, st, hf) < 0 ? -xerrno(errno) : 0;
    hpath_free(&hp);
    return r;
}

static long fd_stat(thread *t, int fd, struct stat *st)
{
    gfile *f = fd_get(t->p, fd);
    if (!f)
        return -A_EBADF;
    return fstat(f->host, st) < 0 ? -xerrno(errno) : 0;
}

SYS(stat64) { struct stat s; long r = host_stat(t, A_AT_FDCWD, a[0], 0, &s); return r ? r : put_stat64(t, a[1], &s); }
SYS(lstat64) { struct stat s; long r = host_stat(t, A_AT_FDCWD, a[0], A_AT_SYMLINK_NOFOLLOW, &s); return r ? r : put_stat64(t, a[1], &s); }
SYS(fstat64) { struct stat s; long r = fd_stat(t, (int)a[0], &s); return r ? r : put_stat64(t, a[1], &s); }
SYS(fstatat64) { struct stat s; long r = host_stat(t, (int)a[0], a[1], a[3], &s); return r ? r : put_stat64(t, a[2], &s); }
SYS(stat) { struct stat s; long r = host_stat(t, A_AT_FDCWD, a[0], 0, &s); return r ? r : put_stat(t, a[1], &s); }
SYS(lstat) { struct stat s; long r = host_stat(t, A_AT_FDCWD, a[0], A_AT_SYMLINK_NOFOLLOW, &s); return r ? r : put_stat(t, a[1], &s); }
SYS(fstat) { struct stat s; long r = fd_stat(t, (int)a[0], &s); return r ? r : put_stat(t, a[1], &s); }

SYS(statx)
{
    long err;
    char *gp = path_arg(t, a[1], &err);
    if (!gp)
        return err;
    int hf = 0;
    if (a[2] & A_AT_SYMLINK_NOFOLLOW) hf |= AT_SYMLINK_NOFOLLOW;
    if (a[2] & A_AT_EMPTY_PATH) hf |= AT_EMPTY_PATH;
    if (a[2] & A_AT_NO_AUTOMOUNT) hf |= AT_NO_AUTOMOUNT;
    hf |= (int)(a[2] & 0x6000);       /* AT_STATX_SYNC_TYPE, generic */
    struct statx sx;
    long r;
    if (!gp[0]) {
        int h;
        if ((int)a[0] == A_AT_FDCWD)
            h = t->p->cwd;
        else {
            gfile *f = fd_get(t->p, (int)a[0]);
            if (!f) {
                free(gp);
                return -A_EBADF;
            }
            h = f->host;
        }
        r = statx(h, "", hf | AT_EMPTY_PATH, (unsigned)a[3], &sx) < 0 ? -xerrno(errno) : 0;
    } else {
        hpath hp;
        r = path_resolve(t, (int)a[0], gp, &hp, false);
        if (!r) {
            r = statx(hp.dirfd, hp.path, hf, (unsigned)a[3], &sx) < 0 ? -xerrno(errno) : 0;
            hpath_free(&hp);
        }
    }
    free(gp);
    if (r)
        return r;
    return mem_write(t->mm, a[4], &sx, sizeof sx) ? -A_EFAULT : 0;
}

static long put_statfs(thread *t, uint64_t va, const struct statfs *s, bool wide)
{
    uint8_t b[88];
    memset(b, 0, sizeof b);
    put32(b, 0, (uint32_t)s->f_type);
    put32(b, 4, (uint32_t)s->f_bsize);
    int fsid[2];
    memcpy(fsid, &s->f_fsid, 8);
    if (wide) {
        put64(b, 8, s->f_blocks);
        put64(b, 16, s->f_bfree);
        put64(b, 24, s->f_bavail);
        put64(b, 32, s->f_files);
        put64(b, 40, s->f_ffree);
        memcpy(b + 48, fsid, 8);
        put32(b, 56, (uint32_t)s->f_namelen);
        put32(b, 60, (uint32_t)s->f_frsize);
        put32(b, 64, (uint32_t)s->f_flags);
    } else {
        put32(b, 8, (uint32_t)s->f_blocks);
        put32(b, 12, (uint32_t)s->f_bfree);
        put32(b, 16, (uint32_t)s->f_bavail);
        put32(b, 20, (uint32_t)s->f_files);
        put32(b, 24, (uint32_t)s->f_ffree);
        memcpy(b + 28, fsid, 8);
        put32(b, 36, (uint32_t)s->f_namelen);
        put32(b, 40, (uint32_t)s->f_frsize);
        put32(b, 44, (uint32_t)s->f_flags);
    }
    return mem_write(t->mm, va, b, wide ? 88 : 64) ? -A_EFAULT : 0;
}

static long do_statfs(thread *t, uint64_t pathva, uint64_t out, bool wide)
{
    long err;
    char *gp = path_arg(t, pathva, &err);
    if (!gp)
        return err;
    hpath hp;
    long r = path_resolve(t, A_AT_FDCWD, gp, &hp, false);
    free(gp);
    if (r)
        return r;
    int h = openat(hp.dirfd, hp.path, O_PATH | O_CLOEXEC);
    hpath_free(&hp);
    if (h < 0)
        return -xerrno(errno);
    struct statfs s;
    r = fstatfs(h, &s) < 0 ? -xerrno(errno) : 0;
    close(h);
    return r ? r : put_statfs(t, out, &s, wide);
}

static long do_fstatfs(thread *t, int fd, uint64_t out, bool wide)
{
    gfile *f = fd_get(t->p, fd);
    if (!f)
        return -A_EBADF;
    struct statfs s;
    if (fstatfs(f->host, &s) < 0)
        return -xerrno(errno);
    return put_statfs(t, out, &s, wide);
}

SYS(statfs) { return do_statfs(t, a[0], a[1], false); }
SYS(statfs64) { return do_statfs(t, a[0], a[2], true); }
SYS(fstatfs) { return do_fstatfs(t, (int)a[0], a[1], false); }
SYS(fstatfs64) { return do_fstatfs(t, (int)a[0], a[2], true); }

/* ---- names ------------------------------------------------------------------ */

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
    return WITH_PATH((int)a[0], a[1], false, faccessat(hp.dirfd, hp.path, amode(a[2]), hf));
}
SYS(mkdir) { return WITH_PATH(A_AT_FDCWD, a[0], true, mkdirat(hp.dirfd, hp.path, (mode_t)(a[1] & ~(uint64_t)t->p->umask))); }
SYS(mkdirat) { return WITH_PATH((int)a[0], a[1], true, mkdirat(hp.dirfd, hp.path, (mode_t)(a[2] & ~(uint64_t)t->p->umask))); }
SYS(rmdir) { return WITH_PATH(A_AT_FDCWD, a[0], false, unlinkat(hp.dirfd, hp.path, AT_REMOVEDIR)); }
SYS(unlink) { return WITH_PATH(A_AT_FDCWD, a[0], false, unlinkat(hp.dirfd, hp.path, 0)); }
SYS(unlinkat)
{
    int hf = (a[2] & A_AT_REMOVEDIR) ? AT_REMOVEDIR : 0;
    return WITH_PATH((int)a[0], a[1], false, unlinkat(hp.dirfd, hp.path, hf));
}
SYS(mknod) { return WITH_PATH(A_AT_FDCWD, a[0], true, mknodat(hp.dirfd, hp.path, (mode_t)(a[1] & ~(uint64_t)t->p->umask), (dev_t)a[2])); }
SYS(mknodat) { return WITH_PATH((int)a[0], a[1], true, mknodat(hp.dirfd, hp.path, (mode_t)(a[2] & ~(uint64_t)t->p->umask), (dev_t)a[3])); }
SYS(chmod) { return WITH_PATH(A_AT_FDCWD, a[0], false, fchmodat(hp.dirfd, hp.path, (mode_t)a[1], 0)); }
SYS(fchmodat) { return WITH_PATH((int)a[0], a[1], false, fchmodat(hp.dirfd, hp.path, (mode_t)a[2], 0)); }
SYS(chown) { return WITH_PATH(A_AT_FDCWD, a[0], false, fchownat(hp.dirfd, hp.path, (uid_t)a[1], (gid_t)a[2], 0)); }
SYS(lchown) { return WITH_PATH(A_AT_FDCWD, a[0], false, fchownat(hp.dirfd, hp.path, (uid_t)a[1], (gid_t)a[2], AT_SYMLINK_NOFOLLOW)); }
SYS(fchownat)
{
    int hf = ((a[4] & A_AT_SYMLINK_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) | ((a[4] & A_AT_EMPTY_PATH) ? AT_EMPTY_PATH : 0);
    return WITH_PATH((int)a[0], a[1], false, fchownat(hp.dirfd, hp.path, (uid_t)a[2], (gid_t)a[3], hf));
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
static long two_paths(thread *t, int d1, uint64_t p1, int d2, uint64_t p2, hpath *h1, hpath *h2, bool create2)
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
    err = path_resolve(t, d1, g1, h1, false);
    if (!err) {
        err = path_resolve(t, d2, g2, h2, create2);
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
    long r = two_paths(t, d1, p1, d2, p2, &h1, &h2, true);
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
    long r = two_paths(t, d1, p1, d2, p2, &h1, &h2, true);
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
    err = WITH_PATH(dirfd, lp, true, symlinkat(tg, hp.dirfd, hp.path));
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
    if (gp[0] == '/' && path_virtual(t, gp, &link) == 0) {
        n = (ssize_t)strlen(link);
        memcpy(tmp, link, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp);
        free(link);
    } else {
        hpath hp;
        err = path_resolve(t, dirfd, gp, &hp, false);
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
    return WITH_PATH(dirfd, pathva, false, utimensat(hp.dirfd, hp.path, ts, hf));
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

/* ---- directories ------------------------------------------------------------ */

SYS(getdents64)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    size_t n = a[2] > 65536 ? 65536 : a[2];
    char *buf = malloc(n ? n : 1);
    long r = syscall(SYS_getdents64, f->host, buf, n);
    if (r < 0) {
        free(buf);
        return -xerrno(errno);
    }
    if (r && mem_write(t->mm, a[1], buf, (size_t)r))
        r = -A_EFAULT;
    free(buf);
    return r;
}

/* The old getdents: struct { u32 ino; u16 reclen; u16 namlen; char name[]; }
 * (OSF's dirent) is not what Linux/Alpha's 305 uses: that one is the
 * generic linux_dirent with unsigned long d_ino and d_off.  Same as the
 * host's, so pass it through. */
SYS(getdents)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    size_t n = a[2] > 65536 ? 65536 : a[2];
    char *buf = malloc(n ? n : 1);
    long r = syscall(SYS_getdents, f->host, buf, n);
    if (r < 0) {
        free(buf);
        return -xerrno(errno);
    }
    if (r && mem_write(t->mm, a[1], buf, (size_t)r))
        r = -A_EFAULT;
    free(buf);
    return r;
}

static long set_cwd(thread *t, int host, char *gpath)
{
    struct stat st;
    if (fstat(host, &st) < 0 || !S_ISDIR(st.st_mode)) {
        close(host);
        free(gpath);
        return -A_ENOTDIR;
    }
    if (t->p->cwd >= 0)
        close(t->p->cwd);
    t->p->cwd = host;
    free(t->p->cwd_path);
    t->p->cwd_path = gpath;
    return 0;
}

SYS(chdir)
{
    long err;
    char *gp = path_arg(t, a[0], &err);
    if (!gp)
        return err;
    hpath hp;
    err = path_resolve(t, A_AT_FDCWD, gp, &hp, false);
    if (err) {
        free(gp);
        return err;
    }
    int h = openat(hp.dirfd, hp.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int e = errno;
    hpath_free(&hp);
    if (h < 0) {
        free(gp);
        return -xerrno(e);
    }
    char *np = path_join_norm(t->p->cwd_path ? t->p->cwd_path : "/", gp);
    free(gp);
    return set_cwd(t, h, np);
}

SYS(fchdir)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    int h = fcntl(f->host, F_DUPFD_CLOEXEC, 10);
    if (h < 0)
        return -xerrno(errno);
    char *np = f->path && f->path[0] == '/' ? strdup(f->path)
             : path_join_norm(t->p->cwd_path ? t->p->cwd_path : "/", f->path ? f->path : ".");
    return set_cwd(t, h, np);
}

SYS(getcwd)
{
    const char *c = t->p->cwd_path ? t->p->cwd_path : "/";
    size_t l = strlen(c) + 1;
    if (l > a[1])
        return -A_ERANGE;
    return mem_write(t->mm, a[0], c, l) ? -A_EFAULT : (long)l;
}

SYS(umask)
{
    uint32_t old = t->p->umask;
    t->p->umask = (uint32_t)a[0] & 0777;
    return old;
}

/* ---- poll and select ---------------------------------------------------------- */

/* Poll the guest's set without blocking; n ready, or park until ready or
 * the deadline.  The set is kept in t->wdata while parked. */
static long poll_common(thread *t, uint64_t fdsva, uint64_t nfds, int64_t timeout_ns)
{
    if (nfds > 4096)
        return -A_EINVAL;
    struct { int fd; short ev, rev; } *g = malloc((nfds ? nfds : 1) * 8);
    if (nfds && mem_read(t->mm, fdsva, g, nfds * 8)) {
        free(g);
        return -A_EFAULT;
    }
    struct pollfd *h = malloc((nfds ? nfds : 1) * sizeof *h);
    for (uint64_t i = 0; i < nfds; i++) {
        gfile *f = g[i].fd >= 0 ? fd_get(t->p, g[i].fd) : NULL;
        h[i].fd = f ? f->host : -1;
        h[i].events = g[i].ev;    /* POLLIN etc. have generic values */
        h[i].revents = 0;
    }
    int n = poll(h, (nfds_t)nfds, 0);
    long r;
    if (n < 0) {
        r = -xerrno(errno);
    } else {
        int ready = 0;
        for (uint64_t i = 0; i < nfds; i++) {
            if (g[i].fd >= 0 && h[i].fd < 0)
                h[i].revents = POLLNVAL;
            g[i].rev = h[i].revents;
            if (g[i].rev)
                ready++;
        }
        int64_t now = vtime_ns(t->m);
        if (ready || timeout_ns == 0 || (t->wdeadline >= 0 && now >= t->wdeadline)) {
            r = nfds && mem_write(t->mm, fdsva, g, nfds * 8) ? -A_EFAULT : ready;
        } else {
            if (t->wkind != W_POLL)
                t->wdeadline = timeout_ns > 0 ? now + timeout_ns : -1;
            t->wkind = W_POLL;
            t->waddr = nfds;
            free(t->wdata);
            t->wdata = h;
            free(g);
            return SYS_BLOCK;
        }
    }
    free(h);
    free(g);
    return r;
}

SYS(poll)
{
    int ms = (int)a[2];
    return poll_common(t, a[0], a[1], ms < 0 ? -1 : (int64_t)ms * 1000000);
}

SYS(ppoll)
{
    int64_t to = -1;
    if (a[2]) {
        int64_t ts[2];
        if (mem_read(t->mm, a[2], ts, 16))
            return -A_EFAULT;
        to = ts[0] * 1000000000 + ts[1];
    }
    return poll_common(t, a[0], a[1], to);
}

/* select over poll: fd_set is a bit array of longs on both sides. */
static long select_common(thread *t, const uint64_t *a, int64_t to)
{
    int n = (int)a[0];
    if (n < 0 || n > 4096)
        return -A_EINVAL;
    size_t bytes = (size_t)((n + 63) / 64) * 8;
    uint64_t sets[3][64];
    memset(sets, 0, sizeof sets);
    for (int k = 0; k < 3; k++)
        if (a[1 + k] && bytes && mem_read(t->mm, a[1 + k], sets[k], bytes))
            return -A_EFAULT;
    int cnt = 0;
    struct pollfd *h = malloc((size_t)(n ? n : 1) * sizeof *h);
    int *map = malloc((size_t)(n ? n : 1) * sizeof *map);
    for (int fd = 0; fd < n; fd++) {
        short ev = 0;
        if (sets[0][fd / 64] >> (fd % 64) & 1) ev |= POLLIN;
        if (sets[1][fd / 64] >> (fd % 64) & 1) ev |= POLLOUT;
        if (sets[2][fd / 64] >> (fd % 64) & 1) ev |= POLLPRI;
        if (!ev)
            continue;
        gfile *f = fd_get(t->p, fd);
        if (!f) {
            free(h);
            free(map);
            return -A_EBADF;
        }
        h[cnt].fd = f->host;
        h[cnt].events = ev;
        h[cnt].revents = 0;
        map[cnt++] = fd;
    }
    int r = poll(h, (nfds_t)cnt, 0);
    if (r < 0) {
        free(h);
        free(map);
        return -xerrno(errno);
    }
    int64_t now = vtime_ns(t->m);
    if (r == 0 && to != 0 && !(t->wdeadline >= 0 && now >= t->wdeadline)) {
        if (t->wkind != W_POLL)
            t->wdeadline = to > 0 ? now + to : -1;
        t->wkind = W_POLL;
        t->waddr = (uint64_t)cnt;
        free(t->wdata);
        t->wdata = h;
        free(map);
        return SYS_BLOCK;
    }
    uint64_t out[3][64];
    memset(out, 0, sizeof out);
    int ready = 0;
    for (int i = 0; i < cnt; i++) {
        int fd = map[i];
        short rv = h[i].revents;
        if ((rv & (POLLIN | POLLHUP | POLLERR)) && (h[i].events & POLLIN)) { out[0][fd / 64] |= 1ULL << (fd % 64); ready++; }
        if ((rv & (POLLOUT | POLLERR)) && (h[i].events & POLLOUT)) { out[1][fd / 64] |= 1ULL << (fd % 64); ready++; }
        if ((rv & POLLPRI) && (h[i].events & POLLPRI)) { out[2][fd / 64] |= 1ULL << (fd % 64); ready++; }
    }
    free(h);
    free(map);
    for (int k = 0; k < 3; k++)
        if (a[1 + k] && bytes && mem_write(t->mm, a[1 + k], out[k], bytes))
            return -A_EFAULT;
    return ready;
}

SYS(select)
{
    int64_t to = -1;
    if (a[4]) {
        int64_t tv[2];
        if (mem_read(t->mm, a[4], tv, 16))
            return -A_EFAULT;
        to = tv[0] * 1000000000 + tv[1] * 1000;
    }
    return select_common(t, a, to);
}

SYS(pselect6)
{
    int64_t to = -1;
    if (a[4]) {
        int64_t ts[2];
        if (mem_read(t->mm, a[4], ts, 16))
            return -A_EFAULT;
        to = ts[0] * 1000000000 + ts[1];
    }
    return select_common(t, a, to);
}
