/*
 * machine/sys_dir.c: directories: reading them, the working directory (a
 * host directory descriptor per guest process, with the guest path kept
 * beside it for getcwd), umask.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "machine/sys.h"

/* Both getdents calls return records in the host's own layout: Linux/Alpha's
 * 305 is the generic linux_dirent (unsigned long d_ino and d_off), not OSF's
 * dirent, so the host's bytes pass straight through. */
static long dirents(thread *t, const uint64_t *a, long hostcall)
{
    gfile *f = fd_get(t->p, (int)a[0]);
    if (!f)
        return -A_EBADF;
    size_t n = a[2] > 65536 ? 65536 : a[2];
    char *buf = malloc(n ? n : 1);
    if (!buf)
        return -A_ENOMEM;
    long r = syscall(hostcall, f->host, buf, n);
    if (r < 0)
        r = -xerrno(errno);
    else if (r && mem_write(t->mm, a[1], buf, (size_t)r))
        r = -A_EFAULT;
    free(buf);
    return r;
}

SYS(getdents64) { return dirents(t, a, SYS_getdents64); }
SYS(getdents) { return dirents(t, a, SYS_getdents); }

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
