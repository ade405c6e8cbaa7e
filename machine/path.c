/*
 * machine/path.c: where a guest path lives on the host.
 *
 * The guest sees the host's file system with the Alpha root (--root, by
 * default the cross sysroot) laid over it: an absolute path P is ROOT/P when
 * that exists, else the host's P.  So /lib/libc.so.6.1 comes from the
 * sysroot while /tmp, /etc/passwd and the user's files are the host's.
 * "/" itself stays the host's root.  Relative paths resolve against the
 * process's working directory, which is a host directory descriptor, and
 * the *at() calls against the host descriptor behind the guest's.
 *
 * A few /proc and /sys names are answered by the machine itself, since the
 * host's would describe axp rather than the guest: /proc/self/exe (and
 * /proc/<pid>/exe), /proc/self/maps, and the CPU lists sysconf reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/linux.h"

static bool exists_nofollow(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
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

int path_resolve(thread *t, int gdirfd, const char *gpath, hpath *out, bool creating)
{
    machine *m = t->m;
    out->dirfd = AT_FDCWD;
    out->path = NULL;
    if (gpath[0] == '/') {
        char *o = overlay(m, gpath, creating);
        out->path = o ? o : strdup(gpath);
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
}

char *path_host_for_exec(machine *m, proc *p, const char *gpath, int *err)
{
    if (gpath[0] == '/') {
        char *o = overlay(m, gpath, false);
        if (o)
            return o;
        if (access(gpath, F_OK) == 0)
            return strdup(gpath);
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

/* Machine-made files: a host memfd holding the text, or -1 if gpath is
 * not one of ours.  exe_link receives the target for readlink. */
int path_virtual(thread *t, const char *gpath, char **exe_link)
{
    machine *m = t->m;
    if (exe_link) {
        int pid;
        char tail[8];
        if (!strcmp(gpath, "/proc/self/exe") || !strcmp(gpath, "/proc/thread-self/exe")) {
            *exe_link = strdup(t->p->exe ? t->p->exe : "");
            return 0;
        }
        if (sscanf(gpath, "/proc/%d/ex%1s", &pid, tail) == 2 && !strcmp(tail, "e")) {
            proc *p = proc_find(m, pid);
            if (p && p->exe) {
                *exe_link = strdup(p->exe);
                return 0;
            }
        }
        return -1;
    }
    char text[64];
    int pid = 0;
    char tail[16];
    proc *mp = NULL;
    if (!strcmp(gpath, "/proc/self/maps") || !strcmp(gpath, "/proc/thread-self/maps"))
        mp = t->p;
    else if (sscanf(gpath, "/proc/%d/map%1s", &pid, tail) == 2 && !strcmp(tail, "s"))
        mp = proc_find(m, pid);
    if (mp && mp->mm) {
        /* the guest's own map, in /proc/PID/maps format */
        int fd = memfd_create("axp-maps", MFD_CLOEXEC);
        if (fd < 0)
            return -1;
        FILE *f = fdopen(dup(fd), "w");
        for (size_t i = 0; f && i < mp->mm->nv; i++) {
            const vma *v = &mp->mm->v[i];
            const char *name = v->kind == VMA_STACK ? "[stack]" : v->kind == VMA_HEAP ? "[heap]"
                             : v->name ? v->name : "";
            fprintf(f, "%08llx-%08llx %c%c%c%c %08llx 00:00 0%s%s\n",
                    (unsigned long long)v->start, (unsigned long long)v->end,
                    v->prot & GP_R ? 'r' : '-', v->prot & GP_W ? 'w' : '-',
                    v->prot & GP_X ? 'x' : '-', v->shared ? 's' : 'p',
                    (unsigned long long)v->off, *name ? "                          " : "", name);
        }
        if (f)
            fclose(f);
        lseek(fd, 0, SEEK_SET);
        return fd;
    }
    if (!strcmp(gpath, "/sys/devices/system/cpu/online") ||
        !strcmp(gpath, "/sys/devices/system/cpu/possible") ||
        !strcmp(gpath, "/sys/devices/system/cpu/present")) {
        if (m->ncpu == 1)
            snprintf(text, sizeof text, "0\n");
        else
            snprintf(text, sizeof text, "0-%d\n", m->ncpu - 1);
    } else {
        return -1;
    }
    int fd = memfd_create("axp", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (write(fd, text, strlen(text)) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}
