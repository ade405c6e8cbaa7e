/*
 * machine/path.c: where a guest path lives on the host.
 *
 * The guest sees the host's file system with the Alpha root (--root, by
 * default the cross sysroot) laid over it: an absolute path P is ROOT/P when
 * that exists, else the host's P.  So /lib/libc.so.6.1 comes from the
 * sysroot while /tmp, /etc/passwd and the user's files are the host's.
 * "/" itself stays the host's root, and ".." at the root stays there.
 * Relative paths resolve against the process's working directory, which is
 * a host directory descriptor, and the *at() calls against the host
 * descriptor behind the guest's.
 *
 * With --sandbox the guest sees only two trees: the working directory axp
 * started in (under its own path) and the root (everything else).  The
 * kernel does the confining (openat2 with RESOLVE_BENEATH for the working
 * directory, RESOLVE_IN_ROOT for the root), so no "..", absolute path or
 * symbolic link gets out, however the guest builds it.
 *
 * The guest's own /proc entries (self, thread-self and its pids) are the
 * machine's: the host's would describe axp itself, and /proc/self/mem
 * would let a guest write into axp's heap.  Entries the machine does not
 * make do not exist.  Magic links (/proc/N/fd/M, /proc/N/exe) on the
 * host are never followed, and a descriptor that turns out to be one of
 * axp's own /proc files is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/linux.h"

static int openat2_(int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
    struct open_how how = { .flags = (uint64_t)flags, .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                            .resolve = resolve };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

static bool exists_nofollow(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* An absolute guest path with every ".." that would climb above "/"
 * dropped, as the kernel stays at the root there; the rest is untouched
 * (a ".." after a symbolic link is the host's business). */
static char *fold_root(const char *g)
{
    char *out = malloc(strlen(g) + 2);
    size_t o = 0;
    int depth = 0;
    for (const char *s = g; *s;) {
        while (*s == '/')
            s++;
        const char *e = s;
        while (*e && *e != '/')
            e++;
        size_t l = (size_t)(e - s);
        if (!l)
            break;
        bool dotdot = l == 2 && s[0] == '.' && s[1] == '.';
        if (!(dotdot && depth == 0)) {
            if (dotdot)
                depth--;
            else if (!(l == 1 && s[0] == '.'))
                depth++;
            out[o++] = '/';
            memcpy(out + o, s, l);
            o += l;
        }
        s = e;
    }
    if (!o)
        out[o++] = '/';
    if (g[0] && g[strlen(g) - 1] == '/' && out[o - 1] != '/')
        out[o++] = '/';
    out[o] = 0;
    return out;
}

/* ROOT/gpath when it exists (or when its parent does and we create). */
static char *overlay(machine *m, const char *gpath, bool creating)
{
    if (!m->root || gpath[0] != '/' || !gpath[1])
        return NULL;
    char *p;
    if (asprintf(&p, "%s%s", m->root, gpath) < 0)
        return NULL;
    if (exists_nofollow(p))
        return p;
    if (creating) {
        /* create next to an overlay directory that exists only there */
        char *slash = strrchr(p, '/');
        if (slash && slash > p + strlen(m->root)) {
            *slash = 0;
            char *hostdir = strndup(gpath, (size_t)(strrchr(gpath, '/') - gpath));
            bool ovl = exists_nofollow(p) && hostdir[0] && !exists_nofollow(hostdir);
            free(hostdir);
            *slash = '/';
            if (ovl)
                return p;
        }
    }
    free(p);
    return NULL;
}

/* ---- the guest's own /proc ----------------------------------------------- */

/* Whether host pid n is axp itself or one of its threads. */
static bool host_self(int n)
{
    if (n == getpid())
        return true;
    char b[64];
    snprintf(b, sizeof b, "/proc/self/task/%d", n);
    return access(b, F_OK) == 0;
}

/* If gpath (absolute, ".." folded) is under /proc/self, /proc/thread-self
 * or /proc/PID of a guest process, that process and what follows ("" for
 * the directory itself); *hostself when it names axp's own host pid. */
static proc *proc_dir(thread *t, const char *g, const char **rest, bool *hostself)
{
    *hostself = false;
    if (strncmp(g, "/proc/", 6))
        return NULL;
    const char *s = g + 6, *e = strchr(s, '/');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    *rest = e ? e + 1 : "";
    proc *p = NULL;
    if ((l == 4 && !strncmp(s, "self", 4)) || (l == 11 && !strncmp(s, "thread-self", 11)))
        p = t->p;
    else if (l && l < 10 && strspn(s, "0123456789") == l) {
        int n = atoi(s);
        p = proc_find(t->m, n);
        if (!p && host_self(n))
            *hostself = true;
    }
    /* /proc/PID/task/TID/...: the same process's entries */
    if (p && !strncmp(*rest, "task/", 5)) {
        const char *d = *rest + 5;
        size_t k = strspn(d, "0123456789");
        if (k && (d[k] == '/' || !d[k]))
            *rest = d[k] ? d + k + 1 : "";
    }
    return p;
}

static int memfd_text(const char *name, const char *text, size_t n)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if ((n && write(fd, text, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* /proc/PID/maps (smaps: with sizes) of a guest process, in a memfd. */
static int maps_file(proc *mp, bool smaps)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    for (size_t i = 0; mp->mm && i < mp->mm->nv; i++) {
        const vma *v = &mp->mm->v[i];
        const char *name = v->kind == VMA_STACK ? "[stack]" : v->kind == VMA_HEAP ? "[heap]"
                         : v->name ? v->name : "";
        fprintf(f, "%08llx-%08llx %c%c%c%c %08llx 00:00 0%s%s\n",
                (unsigned long long)v->start, (unsigned long long)v->end,
                v->prot & GP_R ? 'r' : '-', v->prot & GP_W ? 'w' : '-',
                v->prot & GP_X ? 'x' : '-', v->shared ? 's' : 'p',
                (unsigned long long)v->off, *name ? "                          " : "", name);
        if (smaps)
            fprintf(f, "Size:           %8llu kB\nKernelPageSize:        8 kB\nMMUPageSize:           8 kB\n",
                    (unsigned long long)((v->end - v->start) >> 10));
    }
    fclose(f);
    int fd = memfd_text("axp-maps", buf, len);
    free(buf);
    return fd;
}

/* The text of /proc/PID/ENTRY of a guest process, or -1 with *err. */
static int proc_text(thread *t, proc *p, const char *ent, long *err)
{
    char b[256];
    int n = -1;
    if (!strcmp(ent, "maps") || !strcmp(ent, "smaps"))
        return maps_file(p, ent[0] == 's');
    if (!strcmp(ent, "comm")) {
        const char *e = p->exe ? strrchr(p->exe, '/') : NULL;
        n = snprintf(b, sizeof b, "%.15s\n", e ? e + 1 : p->exe ? p->exe : "");
    } else if (!strcmp(ent, "cmdline")) {
        n = snprintf(b, sizeof b, "%s", p->exe ? p->exe : "") + 1;   /* with its NUL */
    } else if (!strcmp(ent, "status")) {
        n = snprintf(b, sizeof b, "Pid:\t%d\nPPid:\t%d\nThreads:\t%d\n", p->pid,
                     p->parent ? p->parent->pid : 0, p->nthreads);
    }
    if (n < 0) {
        *err = -A_ENOENT;
        return -1;
    }
    (void)t;
    int fd = memfd_text("axp-proc", b, (size_t)n < sizeof b ? (size_t)n : sizeof b);
    if (fd < 0)
        *err = -xerrno(errno);
    return fd;
}

/* gpath names one of the guest's standard descriptors the host spells as
 * links into its own /proc (/dev/fd/N, /dev/stdin...): the number, else -1. */
static int dev_fd(const char *g)
{
    static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
    for (int i = 0; i < 3; i++)
        if (!strcmp(g, std[i]))
            return i;
    if (!strncmp(g, "/dev/fd/", 8) && g[8] && strspn(g + 8, "0123456789") == strlen(g + 8))
        return atoi(g + 8);
    return -1;
}

/* Where descriptor fd of p is, as the guest would see it. */
static char *fd_link(machine *m, proc *p, int fd)
{
    gfile *f = fd >= 0 && fd < p->fd->n ? p->fd->e[fd].f : NULL;
    if (!f)
        return NULL;
    char hp[64], tg[4096];
    snprintf(hp, sizeof hp, "/proc/self/fd/%d", f->host);
    ssize_t n = readlink(hp, tg, sizeof tg - 1);
    if (n < 0)
        return strdup(f->path ? f->path : "");
    tg[n] = 0;
    size_t rl = m->root ? strlen(m->root) : 0;
    if (rl && !strncmp(tg, m->root, rl) && (tg[rl] == '/' || !tg[rl]))
        return strdup(tg[rl] ? tg + rl : "/");
    return strdup(tg);
}

int path_virtual(thread *t, const char *gpath, int hflags, int *fd, char **link, long *err)
{
    machine *m = t->m;
    *fd = -1;
    *err = 0;
    char *g = fold_root(gpath);
    const char *ent;
    bool hostself;
    int dn = dev_fd(g);
    proc *p = dn >= 0 ? t->p : proc_dir(t, g, &ent, &hostself);
    int r = 1;
    char tmp[32];
    if (dn >= 0) {
        snprintf(tmp, sizeof tmp, "fd/%d", dn);
        ent = tmp;
    }
    if (!p && hostself) {
        *err = -A_ENOENT;                      /* axp's own: not the guest's business */
    } else if (!p && !strncmp(g, "/proc/", 6) && m->cfg.sandbox) {
        if (!(g[6] == 0 || !strcmp(g, "/proc/")))
            *err = -A_ENOENT;                  /* no host /proc in a sandbox */
        else
            r = 0;
    } else if (!p) {
        r = 0;
    } else if (!strcmp(ent, "exe") || !strcmp(ent, "cwd") || !strcmp(ent, "root") ||
               !strncmp(ent, "fd/", 3)) {
        char *tg = !strcmp(ent, "exe") ? strdup(p->exe ? p->exe : "")
                 : !strcmp(ent, "cwd") ? strdup(p->cwd_path ? p->cwd_path : "/")
                 : !strcmp(ent, "root") ? strdup("/")
                 : fd_link(m, p, atoi(ent + 3));
        if (!tg)
            *err = -A_ENOENT;
        else if (link)
            *link = tg;
        else {
            free(tg);
            if (!strncmp(ent, "fd/", 3)) {      /* reopen the guest's own file */
                int n = atoi(ent + 3);
                gfile *f = n < p->fd->n ? p->fd->e[n].f : NULL;
                char hp[64];
                snprintf(hp, sizeof hp, "/proc/self/fd/%d", f ? f->host : -1);
                *fd = f ? open(hp, hflags | O_CLOEXEC, 0600) : -1;
            } else {
                int h = -1;
                if (!strcmp(ent, "cwd"))
                    h = dup(p->cwd);
                else if (!strcmp(ent, "root"))
                    h = open(m->cfg.sandbox && m->root ? m->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                else if ((hflags & O_ACCMODE) != O_RDONLY || (hflags & (O_TRUNC | O_CREAT))) {
                    errno = ETXTBSY;           /* a running program, as Linux says */
                } else {
                    int e = 0;
                    char *hx = path_host_for_exec(m, p, p->exe ? p->exe : "", &e);
                    h = hx ? open(hx, hflags | O_CLOEXEC) : -1;
                    free(hx);
                }
                *fd = h;
            }
            if (*fd < 0)
                *err = -xerrno(errno);
        }
    } else if (link) {
        *err = ent[0] ? -A_EINVAL : -A_EINVAL;   /* not a link */
        if (!ent[0] || !strcmp(ent, "maps") || !strcmp(ent, "smaps") || !strcmp(ent, "comm") ||
            !strcmp(ent, "cmdline") || !strcmp(ent, "status"))
            ;
        else
            *err = -A_ENOENT;
    } else if (!ent[0]) {
        *err = -A_EACCES;                      /* the directory: not listed */
    } else {
        if ((hflags & O_ACCMODE) != O_RDONLY)
            *err = -A_EACCES;
        else
            *fd = proc_text(t, p, ent, err);
    }
    free(g);
    return r;
}

/* Whether host descriptor fd is a /proc file of axp itself (reached
 * through some link the names above did not catch). */
static bool is_own_proc(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
        return false;
    char hp[64], tg[256];
    snprintf(hp, sizeof hp, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(hp, tg, sizeof tg - 1);
    if (n < 0)
        return true;
    tg[n] = 0;
    if (strncmp(tg, "/proc/", 6))
        return false;
    return strspn(tg + 6, "0123456789") && host_self(atoi(tg + 6));
}

/* ---- resolution ------------------------------------------------------------ */

/* Sandbox: the tree holding absolute guest path g, and g within it. */
static int sandbox_base(machine *m, const char *g, const char **sub, uint64_t *res)
{
    size_t wl = strlen(m->work);
    if (!strncmp(g, m->work, wl) && (g[wl] == '/' || !g[wl] || wl == 1)) {
        *sub = g + wl;
        *res = RESOLVE_BENEATH;
        return m->workfd;
    }
    *sub = g;
    *res = RESOLVE_IN_ROOT;
    return m->rootfd;
}

/* Errors of the confinement itself look like files that are not there. */
static long sandbox_err(int e) { return e == EXDEV ? -A_EACCES : -xerrno(e); }

static long sandbox_resolve(thread *t, int gdirfd, const char *gpath, hpath *out, unsigned how)
{
    machine *m = t->m;
    int base;
    uint64_t res;
    char *path;
    if (gpath[0] == '/' || gdirfd == A_AT_FDCWD) {
        char *abs;
        if (gpath[0] == '/')
            abs = strdup(gpath);
        else if (asprintf(&abs, "%s/%s", t->p->cwd_path ? t->p->cwd_path : "/", gpath) < 0)
            return -A_ENOMEM;
        char *g = fold_root(abs);
        free(abs);
        const char *sub;
        base = sandbox_base(m, g, &sub, &res);
        while (*sub == '/')
            sub++;
        path = strdup(*sub ? sub : ".");
        free(g);
    } else {
        gfile *f = fd_get(t->p, gdirfd);
        if (!f)
            return -A_EBADF;
        base = f->host;
        res = RESOLVE_BENEATH;
        path = strdup(gpath);
    }
    res |= RESOLVE_NO_MAGICLINKS;
    /* the parent directory, confined; then the last name in it */
    size_t l = strlen(path);
    while (l > 1 && path[l - 1] == '/')
        path[--l] = 0;
    char *slash = strrchr(path, '/');
    const char *last = slash ? slash + 1 : path;
    bool dir_only = !strcmp(last, ".") || !strcmp(last, "..");
    int pfd;
    if (dir_only)
        pfd = openat2_(base, path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, res);
    else if (slash) {
        *slash = 0;
        pfd = openat2_(base, *path ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, res);
        *slash = '/';
    } else
        pfd = openat2_(base, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, res);
    if (pfd < 0) {
        long r = sandbox_err(errno);
        free(path);
        return r;
    }
    out->dirfd = pfd;
    out->own = pfd;
    if (dir_only) {
        out->path = strdup(".");
        free(path);
        return 0;
    }
    struct stat st;
    if (!(how & PR_NOFOLLOW) && fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        /* the link's target, confined the same way, by descriptor */
        int fd = openat2_(base, path, O_PATH | O_CLOEXEC, 0, res);
        if (fd < 0) {
            long r = sandbox_err(errno);
            close(pfd);
            free(path);
            return r;
        }
        close(pfd);
        out->own = fd;
        out->dirfd = AT_FDCWD;
        if (asprintf(&out->path, "/proc/self/fd/%d", fd) < 0)
            out->path = NULL;
        out->magic = true;
        free(path);
        return 0;
    }
    out->path = strdup(last);
    free(path);
    return 0;
}

int path_resolve(thread *t, int gdirfd, const char *gpath, hpath *out, unsigned how)
{
    machine *m = t->m;
    out->dirfd = AT_FDCWD;
    out->path = NULL;
    out->own = -1;
    out->magic = false;
    if (gpath[0] == '/' || m->cfg.sandbox) {
        /* the guest's own /proc: only open and readlink make sense there */
        int vfd;
        long err;
        char *g = gpath[0] == '/' ? fold_root(gpath) : NULL;
        if (g && path_virtual(t, g, O_PATH, &vfd, NULL, &err)) {
            free(g);
            if (err)
                return err;
            out->own = vfd;
            out->magic = true;
            if (asprintf(&out->path, "/proc/self/fd/%d", vfd) < 0)
                out->path = NULL;
            return 0;
        }
        if (m->cfg.sandbox) {
            free(g);
            return sandbox_resolve(t, gdirfd, gpath, out, how);
        }
        char *o = overlay(m, g, how & PR_CREATE);
        out->path = o ? o : g;
        if (o)
            free(g);
        return 0;
    }
    if (gdirfd == A_AT_FDCWD) {
        out->dirfd = t->p->cwd;
    } else {
        gfile *f = fd_get(t->p, gdirfd);
        if (!f)
            return -A_EBADF;
        out->dirfd = f->host;
    }
    out->path = strdup(gpath);
    return 0;
}

void hpath_free(hpath *h)
{
    free(h->path);
    h->path = NULL;
    if (h->own >= 0)
        close(h->own);
    h->own = -1;
}

int path_open(thread *t, hpath *hp, int hflags, mode_t mode)
{
    /* never through the host's magic links (its /proc/N/fd/M would be
     * axp's descriptors), except the one path_resolve made itself */
    int fd = hp->magic ? openat(hp->dirfd, hp->path, hflags, mode)
                       : openat2_(hp->dirfd, hp->path, hflags, mode, RESOLVE_NO_MAGICLINKS);
    if (fd < 0 && errno == ENOSYS)
        fd = openat(hp->dirfd, hp->path, hflags, mode);
    if (fd >= 0 && is_own_proc(fd)) {
        close(fd);
        errno = EACCES;
        return -1;
    }
    (void)t;
    return fd;
}

char *path_host_for_exec(machine *m, proc *p, const char *gpath, int *err)
{
    if (m->cfg.sandbox && p->threads) {
        /* where the confined resolution lands, by the host's name for it */
        thread *t = p->threads;
        hpath hp;
        long r = t ? path_resolve(t, A_AT_FDCWD, gpath, &hp, 0) : -A_ENOENT;
        if (r) {
            *err = (int)r;
            return NULL;
        }
        int fd = path_open(t, &hp, O_PATH | O_CLOEXEC, 0);
        int e = errno;
        hpath_free(&hp);
        if (fd < 0) {
            *err = -xerrno(e);
            return NULL;
        }
        char lk[64], tg[4096];
        snprintf(lk, sizeof lk, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(lk, tg, sizeof tg - 1);
        close(fd);
        if (n < 0) {
            *err = -A_ENOENT;
            return NULL;
        }
        tg[n] = 0;
        return strdup(tg);
    }
    if (gpath[0] == '/') {
        char *g = fold_root(gpath);
        char *o = overlay(m, g, false);
        if (o) {
            free(g);
            return o;
        }
        if (access(g, F_OK) == 0)
            return g;
        free(g);
        *err = -A_ENOENT;
        return NULL;
    }
    /* relative to the working directory */
    char *full;
    if (asprintf(&full, "/proc/self/fd/%d/%s", p->cwd, gpath) < 0)
        return NULL;
    char *real = realpath(full, NULL);
    free(full);
    if (!real) {
        *err = -xerrno(errno);
        return NULL;
    }
    return real;
}

char *path_exe_alias(thread *t, const char *gpath)
{
    char *g = fold_root(gpath);
    const char *ent;
    bool hs;
    proc *p = g[0] == '/' ? proc_dir(t, g, &ent, &hs) : NULL;
    char *r = p && !strcmp(ent, "exe") && p->exe ? strdup(p->exe) : NULL;
    free(g);
    return r;
}

/* Join base and a relative path, then fold "." and ".." by name. */
char *path_join_norm(const char *base, const char *rel)
{
    size_t n = strlen(base) + strlen(rel) + 3;
    char *in = malloc(n), *out = malloc(n);
    if (rel[0] == '/')
        snprintf(in, n, "%s", rel);
    else
        snprintf(in, n, "%s/%s", base, rel);
    size_t o = 0;
    out[o++] = '/';
    for (char *s = in; *s;) {
        while (*s == '/')
            s++;
        char *e = s;
        while (*e && *e != '/')
            e++;
        size_t l = (size_t)(e - s);
        if (l == 0)
            break;
        if (l == 1 && s[0] == '.') {
        } else if (l == 2 && s[0] == '.' && s[1] == '.') {
            if (o > 1) {
                o--;
                while (o > 1 && out[o - 1] != '/')
                    o--;
            }
        } else {
            if (o > 1 && out[o - 1] != '/')
                out[o++] = '/';
            memcpy(out + o, s, l);
            o += l;
        }
        s = e;
    }
    if (o > 1 && out[o - 1] == '/')
        o--;
    out[o] = 0;
    free(in);
    return out;
}

/* The machine's own /sys files: the CPU lists sysconf reads.  A host
 * memfd holding the text, or -1 if gpath is not one of them. */
int path_sys(thread *t, const char *gpath)
{
    machine *m = t->m;
    char text[64];
    if (strcmp(gpath, "/sys/devices/system/cpu/online") &&
        strcmp(gpath, "/sys/devices/system/cpu/possible") &&
        strcmp(gpath, "/sys/devices/system/cpu/present"))
        return -1;
    if (m->ncpu == 1)
        snprintf(text, sizeof text, "0\n");
    else
        snprintf(text, sizeof text, "0-%d\n", m->ncpu - 1);
    return memfd_text("axp", text, strlen(text));
}
