/*
 * machine/mem.c: guest address spaces.
 *
 * A guest address is never a host pointer: it goes through a three-level
 * software page table of 8 KB host frames, with a direct-mapped TLB in
 * front for the executor's fast path.  Frames are reference counted so fork
 * shares them copy-on-write; an untouched page reads as the shared zero
 * frame.  Pages that hold translated code have no write TLB entry, so the
 * first store to one goes through the slow path and invalidates the blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/linux.h"

static frame zero_frame = { .refs = 1u << 30 };

static frame *frame_new(void)
{
    frame *f = aligned_alloc(64, sizeof(frame));
    if (!f)
        axp_fatal("the host is out of memory for guest pages");
    f->refs = 1;
    return f;
}

static void frame_put(mm *x, frame *f)
{
    if (!f || f == &zero_frame)
        return;
    x->frames--;
    if (--f->refs == 0)
        free(f);
}

mm *mm_new(void)
{
    mm *x = calloc(1, sizeof *x);
    x->refs = 1;
    x->dir = calloc(512, sizeof *x->dir);
    x->cc.hmask = 1023;
    x->cc.hash = calloc(1024, sizeof(block *));
    x->cc.gen = 1;
    tlb_flush(x);
    return x;
}

void tlb_flush(mm *x)
{
    for (unsigned i = 0; i < TLB_N; i++)
        x->tlb[i].rtag = x->tlb[i].wtag = TAG_NONE;
}

void tlb_flush_page(mm *x, uint64_t va)
{
    tlbent *e = &x->tlb[(va >> PG_SHIFT) & (TLB_N - 1)];
    uint64_t pg = va & ~PG_MASK;
    if (e->rtag == pg || e->wtag == pg)
        e->rtag = e->wtag = TAG_NONE;
}

pte *mm_pte(mm *x, uint64_t va, bool create)
{
    if (va >= VA_LIMIT)
        return NULL;
    uint64_t vpn = va >> PG_SHIFT;
    pte ***l1 = &x->dir[vpn >> 20];
    if (!*l1) {
        if (!create)
            return NULL;
        *l1 = calloc(1024, sizeof(pte *));
    }
    pte **l2 = &(*l1)[(vpn >> 10) & 1023];
    if (!*l2) {
        if (!create)
            return NULL;
        *l2 = calloc(1024, sizeof(pte));
    }
    return &(*l2)[vpn & 1023];
}

/* The pte of a mapped page, made from its region on first touch: regions
 * are recorded without page-table entries, so reserving a huge range costs
 * nothing.  NULL when va is not mapped. */
static pte *pte_present(mm *x, uint64_t va)
{
    pte *p = mm_pte(x, va, false);
    if (p && (p->flags & PTE_MAPPED))
        return p;
    const vma *v = mm_vma_at(x, va);
    if (!v)
        return NULL;
    p = mm_pte(x, va, true);
    p->prot = v->prot;
    p->flags = PTE_MAPPED;
    if (v->file) {
        /* a file page, read the first time it is touched */
        frame *f = frame_new();
        f->refs = 1;
        uint64_t pg = va & ~PG_MASK;
        ssize_t n = pread(v->file->fd, f->data, PG_SIZE, (off_t)(v->off + (pg - v->start)));
        if (n < 0)
            n = 0;
        memset(f->data + n, 0, PG_SIZE - (size_t)n);
        p->f = f;
        x->frames++;
    }
    return p;
}

/* Next page-table slot at or after va that may hold a pte (skips the
 * 8 GB and 8 MB ranges with no table). */
static uint64_t next_pte_va(mm *x, uint64_t va)
{
    uint64_t vpn = va >> PG_SHIFT;
    if (va >= VA_LIMIT)
        return VA_LIMIT;
    if (!x->dir[vpn >> 20])
        return ((vpn >> 20) + 1) << (20 + PG_SHIFT);
    if (!x->dir[vpn >> 20][(vpn >> 10) & 1023])
        return ((vpn >> 10) + 1) << (10 + PG_SHIFT);
    return va;
}

/* Walk every present pte of x. */
#define FOR_EACH_PTE(x, va, p)                                                 \
    for (uint64_t i1_ = 0; i1_ < 512; i1_++)                                   \
        if ((x)->dir[i1_])                                                     \
            for (uint64_t i2_ = 0; i2_ < 1024; i2_++)                          \
                if ((x)->dir[i1_][i2_])                                        \
                    for (uint64_t i3_ = 0, va = ((i1_ << 20 | i2_ << 10) << PG_SHIFT); \
                         i3_ < 1024; i3_++, va += PG_SIZE)                     \
                        for (pte *p = &(x)->dir[i1_][i2_][i3_]; p; p = NULL)

vfile *vfile_new(int hostfd)
{
    int fd = fcntl(hostfd, F_DUPFD_CLOEXEC, 10);
    if (fd < 0)
        return NULL;
    vfile *f = calloc(1, sizeof *f);
    f->fd = fd;
    f->refs = 0;
    return f;
}

static vfile *vfile_ref(vfile *f)
{
    if (f)
        f->refs++;
    return f;
}

static void vfile_put(vfile *f)
{
    if (f && --f->refs <= 0) {
        close(f->fd);
        free(f);
    }
}

static void vma_release(vma *v)
{
    free(v->name);
    vfile_put(v->file);
}

static void vma_free_names(mm *x)
{
    for (size_t i = 0; i < x->nv; i++)
        vma_release(&x->v[i]);
}

/* Give the regions inside [start, end) their file (sys_mmap, after mm_map). */
void mm_set_file(mm *x, uint64_t start, uint64_t end, vfile *f)
{
    for (size_t i = 0; i < x->nv; i++)
        if (x->v[i].start >= start && x->v[i].end <= end && !x->v[i].file)
            x->v[i].file = vfile_ref(f);
    if (f && !f->refs)
        vfile_put(f);
}

mm *mm_fork(mm *src)
{
    mm *x = mm_new();
    x->brk_start = src->brk_start;
    x->brk = src->brk;
    x->cv = x->nv = src->nv;
    x->v = malloc((x->cv ? x->cv : 1) * sizeof *x->v);
    for (size_t i = 0; i < src->nv; i++) {
        x->v[i] = src->v[i];
        x->v[i].name = src->v[i].name ? strdup(src->v[i].name) : NULL;
        vfile_ref(x->v[i].file);
    }
    for (size_t i = 0; i < src->nv; i++)
        if (src->v[i].shared)
            for (uint64_t va = src->v[i].start; va < src->v[i].end; va += PG_SIZE)
                pte_present(src, va);
    FOR_EACH_PTE(src, va, p) {
        if (!(p->flags & PTE_MAPPED))
            continue;
        const vma *v = mm_vma_at(src, va);
        bool shared = v && v->shared;
        pte *q = mm_pte(x, va, true);
        q->prot = p->prot;
        q->flags = PTE_MAPPED;
        if (shared && (!p->f || p->f == &zero_frame)) {
            /* both sides must see the same frame from now on */
            frame *f = frame_new();
            memset(f->data, 0, PG_SIZE);
            p->f = f;
            p->flags &= ~PTE_COW;
            src->frames++;
        }
        if (p->f) {
            q->f = p->f;
            if (p->f != &zero_frame) {
                p->f->refs++;
                x->frames++;
            }
            if (!shared) {
                p->flags |= PTE_COW;
                q->flags |= PTE_COW;
            }
        }
    }
    tlb_flush(src);   /* its writable entries now point at shared frames */
    return x;
}

void mm_put(machine *m, mm *x)
{
    if (!x || --x->refs > 0)
        return;
    code_free_all(m, x);
    for (int i = 0; i < 512; i++) {
        if (!x->dir[i])
            continue;
        for (int j = 0; j < 1024; j++) {
            pte *l3 = x->dir[i][j];
            if (!l3)
                continue;
            for (int k = 0; k < 1024; k++)
                frame_put(x, l3[k].f);
            free(l3);
        }
        free(x->dir[i]);
    }
    free(x->dir);
    vma_free_names(x);
    free(x->v);
    free(x->cc.hash);
    free(x);
}

/* ---- regions ------------------------------------------------------------ */

const vma *mm_vma_at(const mm *x, uint64_t va)
{
    size_t lo = 0, hi = x->nv;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (va < x->v[mid].start)
            hi = mid;
        else if (va >= x->v[mid].end)
            lo = mid + 1;
        else
            return &x->v[mid];
    }
    return NULL;
}

bool mm_range_free(const mm *x, uint64_t start, uint64_t len)
{
    uint64_t end = start + len;
    if (end < start || end > VA_LIMIT)
        return false;
    for (size_t i = 0; i < x->nv; i++)
        if (x->v[i].start < end && x->v[i].end > start)
            return false;
    return true;
}

uint64_t mm_find_free(mm *x, uint64_t hint, uint64_t len)
{
    if (hint && !(hint & PG_MASK) && mm_range_free(x, hint, len))
        return hint;
    uint64_t at = MMAP_BASE;
    for (size_t i = 0; i < x->nv; i++) {
        if (x->v[i].end <= at)
            continue;
        if (x->v[i].start >= at + len)
            break;
        at = x->v[i].end;
    }
    if (at + len <= VA_LIMIT)
        return at;
    /* below the mmap base, above the heap */
    at = (x->brk + (64ULL << 20) + PG_MASK) & ~PG_MASK;
    for (size_t i = 0; i < x->nv; i++) {
        if (x->v[i].end <= at)
            continue;
        if (x->v[i].start >= at + len)
            break;
        at = x->v[i].end;
    }
    return at + len <= MMAP_BASE ? at : 0;
}

static void vma_insert(mm *x, size_t at, const vma *v)
{
    if (x->nv == x->cv) {
        x->cv = x->cv ? 2 * x->cv : 16;
        x->v = realloc(x->v, x->cv * sizeof *x->v);
    }
    memmove(&x->v[at + 1], &x->v[at], (x->nv - at) * sizeof *x->v);
    x->v[at] = *v;
    x->nv++;
}

/* Split so that no region straddles addr. */
static void vma_split(mm *x, uint64_t addr)
{
    for (size_t i = 0; i < x->nv; i++) {
        vma *v = &x->v[i];
        if (v->start < addr && addr < v->end) {
            vma tail = *v;
            tail.start = addr;
            if (tail.kind == VMA_FILE)
                tail.off += addr - v->start;
            tail.name = v->name ? strdup(v->name) : NULL;
            vfile_ref(tail.file);
            v->end = addr;
            vma_insert(x, i + 1, &tail);
            return;
        }
    }
}

static void release_pages(mm *x, uint64_t start, uint64_t end)
{
    for (uint64_t va = start; va < end; va += PG_SIZE) {
        uint64_t nx = next_pte_va(x, va);
        if (nx != va) {
            va = nx - PG_SIZE;
            continue;
        }
        pte *p = mm_pte(x, va, false);
        if (!p)
            continue;
        frame_put(x, p->f);
        p->f = NULL;
        p->prot = 0;
        p->flags = 0;
        tlb_flush_page(x, va);
    }
}

int mm_unmap(machine *m, mm *x, uint64_t start, uint64_t len)
{
    (void)m;
    uint64_t end = start + len;
    if ((start & PG_MASK) || end < start || end > VA_LIMIT)
        return -A_EINVAL;
    code_invalidate_range(x, start, end);
    vma_split(x, start);
    vma_split(x, end);
    size_t j = 0;
    for (size_t i = 0; i < x->nv; i++) {
        if (x->v[i].start >= start && x->v[i].end <= end)
            vma_release(&x->v[i]);
        else
            x->v[j++] = x->v[i];
    }
    x->nv = j;
    release_pages(x, start, end);
    return 0;
}

int mm_map(machine *m, mm *x, uint64_t start, uint64_t len, int prot, int kind,
           const char *name, uint64_t off, int img, int64_t link)
{
    if ((start & PG_MASK) || (len & PG_MASK) || !len)
        return -A_EINVAL;
    int r = mm_unmap(m, x, start, len);
    if (r)
        return r;
    vma v = { .start = start, .end = start + len, .prot = (uint8_t)prot,
              .kind = (uint8_t)kind, .img = img, .link = link, .off = off,
              .name = name ? strdup(name) : NULL };
    size_t at = 0;
    while (at < x->nv && x->v[at].start < start)
        at++;
    vma *prev = at ? &x->v[at - 1] : NULL;
    if (prev && prev->end == start && !prev->name && !v.name && !prev->file && prev->prot == v.prot &&
        prev->kind == v.kind && !prev->shared && prev->img < 0 && img < 0)
        prev->end = v.end;      /* grow the heap or an anonymous region in place */
    else
        vma_insert(x, at, &v);
    return 0;
}

int mm_protect(machine *m, mm *x, uint64_t start, uint64_t len, int prot)
{
    (void)m;
    uint64_t end = start + len;
    if ((start & PG_MASK) || end < start || end > VA_LIMIT)
        return -A_EINVAL;
    /* every page must be mapped */
    uint64_t at = start;
    for (size_t i = 0; i < x->nv && at < end; i++) {
        if (x->v[i].end <= at)
            continue;
        if (x->v[i].start > at)
            return -A_ENOMEM;
        at = x->v[i].end;
    }
    if (at < end)
        return -A_ENOMEM;
    vma_split(x, start);
    vma_split(x, end);
    for (size_t i = 0; i < x->nv; i++)
        if (x->v[i].start >= start && x->v[i].end <= end)
            x->v[i].prot = (uint8_t)prot;
    if (!(prot & GP_X))
        code_invalidate_range(x, start, end);
    for (uint64_t va = start; va < end; va += PG_SIZE) {
        uint64_t nx = next_pte_va(x, va);
        if (nx != va) {
            va = nx - PG_SIZE;
            continue;
        }
        pte *p = mm_pte(x, va, false);
        if (p && (p->flags & PTE_MAPPED)) {
            p->prot = (uint8_t)prot;
            tlb_flush_page(x, va);
        }
    }
    return 0;
}

/* ---- page access ---------------------------------------------------------- */

/* Host address of the page holding va, ready for the access in need
 * (GP_R, GP_W or GP_X); NULL with *code = SEGV_MAPERR/ACCERR if denied.
 * force ignores protections (the loader writing read-only segments). */
static uint8_t *page_get(mm *x, uint64_t va, int need, bool force, int *code)
{
    pte *p = pte_present(x, va);
    if (!p) {
        *code = A_SEGV_MAPERR;
        return NULL;
    }
    if (!force && !(p->prot & need)) {
        *code = A_SEGV_ACCERR;
        return NULL;
    }
    if (need == GP_W) {
        if (p->flags & PTE_CODE)
            code_invalidate_page(x, va);
        if (!p->f || p->f == &zero_frame) {
            p->f = frame_new();
            memset(p->f->data, 0, PG_SIZE);
            x->frames++;
        } else if ((p->flags & PTE_COW) && p->f->refs > 1) {
            frame *f = frame_new();
            memcpy(f->data, p->f->data, PG_SIZE);
            p->f->refs--;
            p->f = f;
        }
        p->flags &= ~PTE_COW;
    } else if (!p->f) {
        p->f = &zero_frame;
        p->flags |= PTE_COW;
    }
    tlbent *e = &x->tlb[(va >> PG_SHIFT) & (TLB_N - 1)];
    uint64_t pg = va & ~PG_MASK;
    if (force && !(p->prot & need))
        return p->f->data;      /* no TLB entry for a forced access */
    if (e->rtag != pg)
        e->wtag = TAG_NONE;
    e->rtag = (p->prot & GP_R) ? pg : TAG_NONE;
    e->add = (intptr_t)p->f->data - (intptr_t)pg;
    if ((p->prot & GP_W) && !(p->flags & (PTE_COW | PTE_CODE)))
        e->wtag = pg;
    else
        e->wtag = TAG_NONE;
    return p->f->data;
}

/* Mark a page as holding code (translate.c) and read its words. */
const uint8_t *mem_code_page(mm *x, uint64_t va, pte **pp)
{
    pte *p = pte_present(x, va);
    if (!p || !(p->prot & GP_X))
        return NULL;
    if (!p->f) {
        p->f = &zero_frame;
        p->flags |= PTE_COW;
    }
    if (!(p->flags & PTE_CODE)) {
        p->flags |= PTE_CODE;
        tlbent *e = &x->tlb[(va >> PG_SHIFT) & (TLB_N - 1)];
        if (e->wtag == (va & ~PG_MASK))
            e->wtag = TAG_NONE;
    }
    *pp = p;
    return p->f->data;
}

static int copy(mm *x, uint64_t va, void *buf, size_t n, int dir, bool force)
{
    uint8_t *b = buf;
    while (n) {
        int code;
        uint8_t *pg = page_get(x, va, dir, force, &code);
        if (!pg)
            return -A_EFAULT;
        size_t in = PG_SIZE - (va & PG_MASK);
        if (in > n)
            in = n;
        if (dir == GP_W) {
            if (b)
                memcpy(pg + (va & PG_MASK), b, in);
            else
                memset(pg + (va & PG_MASK), 0, in);
        } else
            memcpy(b, pg + (va & PG_MASK), in);
        if (b)
            b += in;
        va += in;
        n -= in;
    }
    return 0;
}

bool mem_peek(const mm *x, uint64_t va, void *buf, size_t n)
{
    uint8_t *b = buf;
    while (n) {
        const pte *p = mm_pte((mm *)x, va, false);
        if (!p || !(p->flags & PTE_MAPPED) || !(p->prot & GP_R) || !p->f)
            return false;
        size_t in = PG_SIZE - (va & PG_MASK);
        if (in > n)
            in = n;
        memcpy(b, p->f->data + (va & PG_MASK), in);
        b += in;
        va += in;
        n -= in;
    }
    return true;
}

int mem_read(mm *x, uint64_t va, void *buf, size_t n) { return copy(x, va, buf, n, GP_R, false); }
int mem_write(mm *x, uint64_t va, const void *buf, size_t n) { return copy(x, va, (void *)buf, n, GP_W, false); }
int mem_write_force(mm *x, uint64_t va, const void *buf, size_t n) { return copy(x, va, (void *)buf, n, GP_W, true); }
int mem_zero(mm *x, uint64_t va, size_t n) { return copy(x, va, NULL, n, GP_W, false); }

char *mem_strdup(mm *x, uint64_t va, size_t max, int *err)
{
    size_t cap = 256, len = 0;
    char *s = malloc(cap);
    for (;;) {
        int code;
        uint8_t *pg = page_get(x, va, GP_R, false, &code);
        if (!pg) {
            free(s);
            *err = -A_EFAULT;
            return NULL;
        }
        size_t in = PG_SIZE - (va & PG_MASK);
        const uint8_t *src = pg + (va & PG_MASK);
        const uint8_t *z = memchr(src, 0, in);
        size_t take = z ? (size_t)(z - src) : in;
        if (len + take + 1 > max) {
            free(s);
            *err = -A_ENAMETOOLONG;
            return NULL;
        }
        if (len + take + 1 > cap) {
            while (len + take + 1 > cap)
                cap *= 2;
            s = realloc(s, cap);
        }
        memcpy(s + len, src, take);
        len += take;
        if (z) {
            s[len] = 0;
            return s;
        }
        va += in;
    }
}

int mem_iov(mm *x, uint64_t va, size_t n, bool write, struct iovec *iov, int max)
{
    int k = 0;
    while (n) {
        int code;
        uint8_t *pg = page_get(x, va, write ? GP_W : GP_R, false, &code);
        if (!pg)
            return -A_EFAULT;
        size_t in = PG_SIZE - (va & PG_MASK);
        if (in > n)
            in = n;
        if (k > 0 && (uint8_t *)iov[k - 1].iov_base + iov[k - 1].iov_len == pg + (va & PG_MASK))
            iov[k - 1].iov_len += in;
        else {
            if (k == max)
                return k;
            iov[k].iov_base = pg + (va & PG_MASK);
            iov[k].iov_len = in;
            k++;
        }
        va += in;
        n -= in;
    }
    return k;
}

/* ---- executor slow paths --------------------------------------------------- */

static uint8_t load_byte(thread *t, block *b, const dinsn *d, uint64_t ea)
{
    int code;
    uint8_t *pg = page_get(t->mm, ea, GP_R, false, &code);
    if (!pg)
        guest_fault(t, b, d, A_SIGSEGV, code, ea, false);
    return pg[ea & PG_MASK];
}

uint64_t mem_load_slow(thread *t, block *b, const dinsn *d, uint64_t ea, int size)
{
    if (ea & (uint64_t)(size - 1)) {
        /* Linux/Alpha fixes unaligned user loads up in the kernel unless
         * the process asked for SIGBUS (UAC_SIGBUS); so do we. */
        if (t->uac & A_UAC_SIGBUS)
            guest_fault(t, b, d, A_SIGBUS, A_BUS_ADRALN, ea, false);
        t->m->unaligned++;
        uint64_t v = 0;
        for (int i = 0; i < size; i++)
            v |= (uint64_t)load_byte(t, b, d, ea + i) << (8 * i);
        return v;
    }
    int code;
    uint8_t *pg = page_get(t->mm, ea, GP_R, false, &code);
    if (!pg)
        guest_fault(t, b, d, A_SIGSEGV, code, ea, false);
    const uint8_t *s = pg + (ea & PG_MASK);
    switch (size) {
    case 1: return s[0];
    case 2: { uint16_t v; memcpy(&v, s, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, s, 4); return v; }
    default: { uint64_t v; memcpy(&v, s, 8); return v; }
    }
}

void mem_store_slow(thread *t, block *b, const dinsn *d, uint64_t ea, uint64_t v, int size)
{
    int code;
    if (ea & (uint64_t)(size - 1)) {
        if (t->uac & A_UAC_SIGBUS)
            guest_fault(t, b, d, A_SIGBUS, A_BUS_ADRALN, ea, false);
        t->m->unaligned++;
        /* check every byte first so a fault leaves memory untouched */
        for (int i = 0; i < size; i++)
            if (!page_get(t->mm, ea + i, GP_W, false, &code))
                guest_fault(t, b, d, A_SIGSEGV, code, ea + i, false);
        for (int i = 0; i < size; i++) {
            uint8_t *pg = page_get(t->mm, ea + i, GP_W, false, &code);
            pg[(ea + i) & PG_MASK] = (uint8_t)(v >> (8 * i));
        }
        return;
    }
    uint8_t *pg = page_get(t->mm, ea, GP_W, false, &code);
    if (!pg)
        guest_fault(t, b, d, A_SIGSEGV, code, ea, false);
    memcpy(pg + (ea & PG_MASK), &v, (size_t)size);   /* little-endian host */
}

/* ---- bulk operations for mmap, mremap, madvise ----------------------------- */

void mm_discard(mm *x, uint64_t start, uint64_t len)
{
    code_invalidate_range(x, start, start + len);
    for (uint64_t va = start; va < start + len; va += PG_SIZE) {
        uint64_t nx = next_pte_va(x, va);
        if (nx != va) {
            va = nx - PG_SIZE;
            continue;
        }
        pte *p = mm_pte(x, va, false);
        if (!p || !(p->flags & PTE_MAPPED))
            continue;
        const vma *v = mm_vma_at(x, va);
        if (v && v->shared)
            continue;
        frame_put(x, p->f);
        p->f = NULL;
        p->flags &= ~PTE_COW;
        tlb_flush_page(x, va);
    }
}

/* Move the pages of [from, from+len) to [to, to+len) (mremap): frames
 * change owner, nothing is copied.  The target must be unmapped. */
int mm_move(machine *m, mm *x, uint64_t from, uint64_t len, uint64_t to)
{
    const vma *v = mm_vma_at(x, from);
    if (!v)
        return -A_EFAULT;
    vma nv = *v;
    vfile *vf = vfile_ref(nv.file);         /* outlives the old region */
    int r = mm_map(m, x, to, len, nv.prot, nv.kind, nv.name, nv.off, nv.img,
                   nv.img >= 0 ? nv.link + (int64_t)from - (int64_t)to : 0);
    if (!r && vf)
        mm_set_file(x, to, to + len, vf);
    vfile_put(vf);
    if (r)
        return r;
    code_invalidate_range(x, from, from + len);
    for (uint64_t i = 0; i < len; i += PG_SIZE) {
        pte *a = mm_pte(x, from + i, false), *b = mm_pte(x, to + i, true);
        if (!a)
            continue;
        b->f = a->f;
        b->flags = (a->flags & PTE_COW) | PTE_MAPPED;
        b->prot = a->prot;
        a->f = NULL;
        tlb_flush_page(x, from + i);
        tlb_flush_page(x, to + i);
    }
    return mm_unmap(m, x, from, len);
}

/* Private writable memory and shared anonymous memory: what can become
 * frames of this address space's own.  Read-only and shared file mappings
 * are the file's. */
uint64_t mm_committed(const mm *x)
{
    uint64_t n = 0;
    for (size_t i = 0; x && i < x->nv; i++) {
        const vma *v = &x->v[i];
        if ((v->prot & GP_W) && !(v->shared && v->file))
            n += v->end - v->start;
    }
    return n;
}

/* Strict accounting, as Linux's overcommit_memory=2: a mapping, brk or
 * fork that would commit more than --mem-limit over every live address
 * space fails with ENOMEM, so touching pages later never can. */
bool mem_over_limit(machine *m, uint64_t more)
{
    uint64_t n = more;
    for (proc *p = m->procs; p; p = p->all_next) {
        if (!p->mm || p->state != P_LIVE)
            continue;
        bool seen = false;
        for (proc *q = m->procs; q != p && !seen; q = q->all_next)
            seen = q->mm == p->mm && q->state == P_LIVE;
        if (!seen)
            n += mm_committed(p->mm);
        if (n > m->mem_limit)
            return true;
    }
    return n > m->mem_limit;
}
