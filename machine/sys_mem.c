/*
 * machine/sys_mem.c: the address space calls.
 *
 * File mappings are read into private frames page by page when touched: a
 * MAP_SHARED mapping of a file therefore does not write back to it
 * (reported once).
 * Mapping a file executable registers it as an image, so exact counts (and
 * later profiles) can name it and its link-time addresses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "machine/sys.h"


#define PAGE_UP(x) (((x) + PG_MASK) & ~PG_MASK)

SYS(brk)
{
    mm *x = t->mm;
    uint64_t want = a[0];
    if (!want || want == x->brk)
        return (long)x->brk;
    if (want < x->brk_start)
        return -A_ENOMEM;
    uint64_t old_top = PAGE_UP(x->brk), new_top = PAGE_UP(want);
    if (new_top > old_top) {
        if (!mm_range_free(x, old_top, new_top - old_top) || mem_over_limit(t->m, new_top - old_top))
            return -A_ENOMEM;
        int r = mm_map(t->m, x, old_top, new_top - old_top, GP_R | GP_W, VMA_HEAP, NULL, 0, -1, 0);
        if (r)
            return -A_ENOMEM;
    } else if (new_top < old_top) {
        mm_unmap(t->m, x, new_top, old_top - new_top);
    }
    x->brk = want;
    return (long)want;
}

static int gprot(uint64_t p) { return (int)(p & (GP_R | GP_W | GP_X)); }

SYS(mmap)
{
    machine *m = t->m;
    mm *x = t->mm;
    uint64_t addr = a[0], len = a[1], flags = a[3];
    int prot = gprot(a[2]);
    int64_t off = (int64_t)a[5];
    if (!len || (off & (int64_t)PG_MASK))
        return -A_EINVAL;
    len = PAGE_UP(len);
    if (!len || len > VA_LIMIT)
        return -A_ENOMEM;
    int type = (int)(flags & A_MAP_TYPE);
    if (type != A_MAP_SHARED && type != A_MAP_PRIVATE && type != 3)
        return -A_EINVAL;
    gfile *f = NULL;
    if (!(flags & A_MAP_ANONYMOUS)) {
        f = fd_get(t->p, (int)a[4]);
        if (!f)
            return -A_EBADF;
        if (f->kind != FK_REG && f->kind != FK_CHR)
            return -A_EACCES;
    }
    /* --mem-limit: writable memory of the guest's own (a MAP_FIXED over
     * an existing mapping is counted twice: stricter, never looser) */
    if ((prot & GP_W) && !(f && type == A_MAP_SHARED) && mem_over_limit(m, len))
        return -A_ENOMEM;
    uint64_t at;
    if (flags & (A_MAP_FIXED | A_MAP_FIXED_NOREPLACE)) {
        if (addr & PG_MASK)
            return -A_EINVAL;
        if (addr + len < addr || addr + len > VA_LIMIT)
            return -A_ENOMEM;
        if ((flags & A_MAP_FIXED_NOREPLACE) && !(flags & A_MAP_FIXED) && !mm_range_free(x, addr, len))
            return -A_EEXIST;
        at = addr;
    } else {
        at = mm_find_free(x, addr & ~PG_MASK, len);
        if (!at)
            return -A_ENOMEM;
    }
    int img = -1;
    int64_t link = 0;
    const char *name = f ? (f->path ? f->path : "?") : NULL;
    /* images matter to exact counts and the image hook only: opening one
     * (symbols, relocations) is the slowest part of a short run */
    if (f && f->kind == FK_REG && (m->x || m->ihook)) {
        char proc_path[64];
        snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", f->host);
        char *real = realpath(proc_path, NULL);
        if (real) {
            struct stat st;
            bool known = false;
            if (stat(real, &st) == 0)
                for (int i = 0; i < m->nimg; i++)
                    if (m->img[i].dev == (uint64_t)st.st_dev && m->img[i].ino == (uint64_t)st.st_ino) {
                        img = i;
                        known = true;
                    }
            if (!known && (prot & GP_X))
                img = mach_image_register(m, real, f->path ? f->path : real);
            free(real);
        }
        if (img >= 0)
            link = mach_image_link_delta(m, img, (uint64_t)off, at);
    }
    int r = mm_map(m, x, at, len, prot, f ? VMA_FILE : VMA_ANON, name, (uint64_t)off, img, link);
    if (r)
        return r;
    if (type == A_MAP_SHARED || type == 3) {
        for (size_t i = 0; i < x->nv; i++)
            if (x->v[i].start >= at && x->v[i].end <= at + len)
                x->v[i].shared = true;
        if (f && (prot & GP_W) && !(m->nosys_seen[0] & 1)) {
            m->nosys_seen[0] |= 1;     /* bit 0: syscall 0 is never "seen" otherwise */
            mlog(m, "pid %d: a shared writable mapping of %s does not write back to the file",
                 t->p->pid, name);
        }
    }
    if (f) {
        /* pages are read when first touched */
        vfile *vf = vfile_new(f->host);
        if (!vf) {
            mm_unmap(m, x, at, len);
            return -A_EMFILE;
        }
        mm_set_file(x, at, at + len, vf);
    }
    if (prot & GP_X)
        mach_image_notice(m, t->p, img, at, len, (uint64_t)off, link);
    return (long)at;
}

SYS(munmap)
{
    uint64_t addr = a[0], len = PAGE_UP(a[1]);
    if ((addr & PG_MASK) || !a[1])
        return -A_EINVAL;
    return mm_unmap(t->m, t->mm, addr, len);
}

SYS(mprotect)
{
    uint64_t addr = a[0], len = PAGE_UP(a[1]);
    if (addr & PG_MASK)
        return -A_EINVAL;
    if (!len)
        return 0;
    return mm_protect(t->m, t->mm, addr, len, gprot(a[2]));
}

SYS(mremap)
{
    machine *m = t->m;
    mm *x = t->mm;
    uint64_t old = a[0], olen = PAGE_UP(a[1]), nlen = PAGE_UP(a[2]), flags = a[3];
    if ((old & PG_MASK) || !nlen)
        return -A_EINVAL;
    const vma *v = mm_vma_at(x, old);
    if (!v || old + olen > v->end)
        return -A_EFAULT;
    int prot = v->prot;
    bool shared = v->shared;
    if (flags & A_MREMAP_FIXED) {
        uint64_t to = a[4];
        if (!(flags & A_MREMAP_MAYMOVE) || (to & PG_MASK))
            return -A_EINVAL;
        mm_unmap(m, x, to, nlen);
        uint64_t keep = olen < nlen ? olen : nlen;
        int r = mm_move(m, x, old, keep, to);
        if (r)
            return r;
        if (olen > keep)
            mm_unmap(m, x, old + keep, olen - keep);
        if (nlen > keep)
            mm_map(m, x, to + keep, nlen - keep, prot, VMA_ANON, NULL, 0, -1, 0);
        return (long)to;
    }
    if (nlen > olen && (prot & GP_W) && mem_over_limit(m, nlen - olen))
        return -A_ENOMEM;
    if (nlen <= olen) {
        if (nlen < olen)
            mm_unmap(m, x, old + nlen, olen - nlen);
        return (long)old;
    }
    if (mm_range_free(x, old + olen, nlen - olen)) {
        int r = mm_map(m, x, old + olen, nlen - olen, prot, VMA_ANON, NULL, 0, -1, 0);
        if (r)
            return r;
        return (long)old;
    }
    if (!(flags & A_MREMAP_MAYMOVE))
        return -A_ENOMEM;
    uint64_t to = mm_find_free(x, 0, nlen);
    if (!to)
        return -A_ENOMEM;
    int r = mm_move(m, x, old, olen, to);
    if (r)
        return r;
    r = mm_map(m, x, to + olen, nlen - olen, prot, VMA_ANON, NULL, 0, -1, 0);
    if (r)
        return r;
    if (shared)
        for (size_t i = 0; i < x->nv; i++)
            if (x->v[i].start >= to && x->v[i].end <= to + nlen)
                x->v[i].shared = true;
    return (long)to;
}

SYS(madvise)
{
    if (a[0] & PG_MASK)
        return -A_EINVAL;
    if (a[2] == A_MADV_DONTNEED)
        mm_discard(t->mm, a[0], PAGE_UP(a[1]));
    return 0;
}

SYS(msync) { (void)t; return (a[0] & PG_MASK) ? -A_EINVAL : 0; }
SYS(mlock) { (void)t; (void)a; return 0; }
SYS(getpagesize) { (void)t; (void)a; return (long)PG_SIZE; }

SYS(mincore)
{
    uint64_t n = PAGE_UP(a[1]) / PG_SIZE;
    for (uint64_t i = 0; i < n; i++) {
        if (!mm_vma_at(t->mm, a[0] + i * PG_SIZE))
            return -A_ENOMEM;
        uint8_t one = 1;
        if (mem_write(t->mm, a[2] + i, &one, 1))
            return -A_EFAULT;
    }
    return 0;
}
