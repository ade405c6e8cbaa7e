/*
 * machine/fd.c: guest file descriptors.
 *
 * Each guest descriptor names a gfile holding one host descriptor, so dup'ed
 * and inherited guest descriptors share the host open file description (and
 * its offset) exactly as they would on Linux.  Pipes the guest creates are
 * host pipes set O_NONBLOCK on the host side: the machine never blocks in
 * them, it parks the guest thread instead.  Descriptors inherited from the
 * host (0, 1, 2) keep their flags; reads from them are preceded by a poll.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/linux.h"

fdtable *fdt_new(void)
{
    fdtable *f = calloc(1, sizeof *f);
    f->refs = 1;
    return f;
}

fdtable *fdt_copy(fdtable *src)
{
    fdtable *f = fdt_new();
    f->n = src->n;
    f->e = calloc((size_t)(f->n ? f->n : 1), sizeof *f->e);
    for (int i = 0; i < src->n; i++) {
        f->e[i] = src->e[i];
        if (f->e[i].f)
            f->e[i].f->refs++;
    }
    return f;
}

void fdt_put(fdtable *f)
{
    if (!f || --f->refs > 0)
        return;
    for (int i = 0; i < f->n; i++)
        if (f->e[i].f)
            gfile_put(f->e[i].f);
    free(f->e);
    free(f);
}

void fdt_cloexec(fdtable *f)
{
    for (int i = 0; i < f->n; i++)
        if (f->e[i].f && f->e[i].cloexec) {
            gfile_put(f->e[i].f);
            f->e[i].f = NULL;
            f->e[i].cloexec = false;
        }
}

int fd_kind(int host)
{
    struct stat st;
    if (fstat(host, &st) != 0)
        return FK_OTHER;
    if (S_ISREG(st.st_mode)) return FK_REG;
    if (S_ISDIR(st.st_mode)) return FK_DIR;
    if (S_ISFIFO(st.st_mode)) return FK_PIPE;
    if (S_ISSOCK(st.st_mode)) return FK_SOCK;
    if (S_ISCHR(st.st_mode)) return isatty(host) ? FK_TTY : FK_CHR;
    return FK_OTHER;
}

gfile *gfile_new(int host, int flags, const char *path)
{
    gfile *f = calloc(1, sizeof *f);
    f->refs = 1;
    f->host = host;
    f->kind = fd_kind(host);
    f->flags = flags;
    /* /dev/random and /dev/urandom (char 1:8, 1:9) read the machine's own
     * generator, like getrandom: runs must repeat exactly. */
    struct stat st;
    if (f->kind == FK_CHR && fstat(host, &st) == 0 && major(st.st_rdev) == 1 &&
        (minor(st.st_rdev) == 8 || minor(st.st_rdev) == 9))
        f->random = true;
    f->path = path ? strdup(path) : NULL;
    return f;
}

void gfile_put(gfile *f)
{
    if (!f || --f->refs > 0)
        return;
    close(f->host);
    free(f->path);
    free(f);
}

gfile *fd_get(proc *p, int fd)
{
    fdtable *t = p->fd;
    if (fd < 0 || fd >= t->n)
        return NULL;
    return t->e[fd].f;
}

int fd_install(proc *p, gfile *f, int minfd, bool cloexec)
{
    fdtable *t = p->fd;
    uint64_t lim = p->rl[A_RLIMIT_NOFILE].cur;
    if (minfd < 0)
        return -A_EINVAL;
    int fd = minfd;
    while (fd < t->n && t->e[fd].f)
        fd++;
    if ((uint64_t)fd >= lim)
        return -A_EMFILE;
    if (fd >= t->n) {
        int n = t->n ? t->n : 16;
        while (n <= fd)
            n *= 2;
        t->e = realloc(t->e, (size_t)n * sizeof *t->e);
        memset(t->e + t->n, 0, (size_t)(n - t->n) * sizeof *t->e);
        t->n = n;
    }
    t->e[fd].f = f;
    t->e[fd].cloexec = cloexec;
    return fd;
}

/* Put f at exactly fd (dup2), closing what was there. */
int fd_install_at(proc *p, gfile *f, int fd, bool cloexec)
{
    fdtable *t = p->fd;
    if (fd < 0 || (uint64_t)fd >= p->rl[A_RLIMIT_NOFILE].cur)
        return -A_EBADF;
    if (fd >= t->n) {
        int n = t->n ? t->n : 16;
        while (n <= fd)
            n *= 2;
        t->e = realloc(t->e, (size_t)n * sizeof *t->e);
        memset(t->e + t->n, 0, (size_t)(n - t->n) * sizeof *t->e);
        t->n = n;
    }
    if (t->e[fd].f)
        gfile_put(t->e[fd].f);
    t->e[fd].f = f;
    t->e[fd].cloexec = cloexec;
    return fd;
}

int fd_close(proc *p, int fd)
{
    fdtable *t = p->fd;
    if (fd < 0 || fd >= t->n || !t->e[fd].f)
        return -A_EBADF;
    gfile_put(t->e[fd].f);
    t->e[fd].f = NULL;
    t->e[fd].cloexec = false;
    return 0;
}

bool fd_ready(int host, short events)
{
    struct pollfd pf = { .fd = host, .events = events };
    return poll(&pf, 1, 0) > 0;
}
