/*
 * machine/sys_fd.c: descriptors: dup, pipes, fcntl and locks, sync and
 * size, memfd.  Guest pipes are host pipes, non-blocking on the host side
 * (machine/fd.c).  Record locks become open-file-description locks, since
 * every guest process is the same host process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "machine/sys.h"

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
