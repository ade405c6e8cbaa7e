/*
 * machine/sys_stat.c: the stat family and statfs, in Alpha's layouts:
 * struct stat (32-bit fields), stat64, statx (the generic one) and the
 * 32-bit statfs and 64-bit statfs64.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "machine/sys.h"

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
    long r = path_resolve(t, dirfd, gp, &hp, (hf & AT_SYMLINK_NOFOLLOW) ? PR_NOFOLLOW : 0);
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
        r = path_resolve(t, (int)a[0], gp, &hp, (hf & AT_SYMLINK_NOFOLLOW) ? PR_NOFOLLOW : 0);
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
