/*
 * machine/loader.c: execve's work: map an Alpha ELF executable and its
 * interpreter into a fresh address space and build the initial stack the
 * way Linux/Alpha's binfmt_elf does (argc, argv, envp, auxv with Alpha's
 * cache shapes, AT_RANDOM, the "ev5" platform string).
 *
 * Nothing is randomised: the executable (or, for ET_DYN, ET_DYN_BASE), the
 * interpreter at the first free address above TASK_UNMAPPED_BASE, the stack
 * just below 0x120000000, and AT_RANDOM's bytes derived from the path.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alpha/ev5.h"
#include "common/hash.h"
#include "image/image.h"
#include "machine/axp.h"
#include "machine/linux.h"

#define MAX_SHEBANG_DEPTH 4
#define ARG_MAX_BYTES (2u << 20)

static int fail(char *err, size_t errsz, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsz, fmt, ap);
    va_end(ap);
    return code;
}

static int img_errno(image_err e)
{
    switch (e) {
    case IMG_EIO: return A_ENOENT;
    case IMG_ENOMEM: return A_ENOMEM;
    default: return A_ENOEXEC;
    }
}

/* Find or add the machine's record for an image file. */
static int mach_image_add(machine *m, const image *im, const char *hostpath, const char *gpath)
{
    struct stat st;
    if (stat(hostpath, &st) != 0)
        return -1;
    for (int i = 0; i < m->nimg; i++)
        if (m->img[i].dev == (uint64_t)st.st_dev && m->img[i].ino == (uint64_t)st.st_ino)
            return i;
    if (m->nimg == m->cimg) {
        m->cimg = m->cimg ? 2 * m->cimg : 8;
        m->img = realloc(m->img, (size_t)m->cimg * sizeof *m->img);
    }
    mimage *r = &m->img[m->nimg];
    memset(r, 0, sizeof *r);
    r->path = strdup(hostpath);
    r->gpath = strdup(gpath);
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    image_build_id_hex(im, r->build_id, sizeof r->build_id);
    for (size_t i = 0; i < im->nsegments && r->nload < 16; i++) {
        const image_segment *s = &im->segments[i];
        if (s->type != PT_LOAD)
            continue;
        r->load[r->nload].off = s->offset;
        r->load[r->nload].vaddr = s->vaddr;
        r->load[r->nload].filesz = s->filesz;
        r->nload++;
    }
    return m->nimg++;
}

int mach_image_register(machine *m, const char *hostpath, const char *gpath)
{
    struct stat st;
    if (stat(hostpath, &st) != 0)
        return -1;
    for (int i = 0; i < m->nimg; i++)
        if (m->img[i].dev == (uint64_t)st.st_dev && m->img[i].ino == (uint64_t)st.st_ino)
            return i;
    image_error ie;
    image *im = image_open_for_running(hostpath, &ie);
    if (!im)
        return -1;
    int r = mach_image_add(m, im, hostpath, gpath);
    image_close(im);
    return r;
}

/* Link-time address minus run-time address for a mapping of file offset
 * off of image i at address start. */
int64_t mach_image_link_delta(machine *m, int i, uint64_t off, uint64_t start)
{
    const mimage *r = &m->img[i];
    for (int k = 0; k < r->nload; k++) {
        uint64_t lo = r->load[k].off & ~PG_MASK, hi = r->load[k].off + r->load[k].filesz;
        if (off >= lo && (off < hi || (k == r->nload - 1)))
            return (int64_t)(r->load[k].vaddr - r->load[k].off + off) - (int64_t)start;
    }
    return r->nload ? (int64_t)(r->load[0].vaddr - r->load[0].off + off) - (int64_t)start : 0;
}

static int prot_of(uint32_t pf)
{
    return ((pf & PF_R) ? GP_R : 0) | ((pf & PF_W) ? GP_W : 0) | ((pf & PF_X) ? GP_X : 0);
}

/* Map the PT_LOAD segments of im at bias.  Returns 0 or -errno. */
static int map_image(machine *m, mm *x, proc *notice_to, const image *im, uint64_t bias, int img,
                     const char *gpath, uint64_t *brk_end, char *err, size_t errsz)
{
    uint64_t hi = 0;
    for (size_t i = 0; i < im->nsegments; i++) {
        const image_segment *s = &im->segments[i];
        if (s->type != PT_LOAD || s->memsz == 0)
            continue;
        if (s->filesz > s->memsz || s->offset + s->filesz > im->file_size ||
            s->offset + s->filesz < s->offset)
            return fail(err, errsz, -A_ENOEXEC, "%s: segment %zu lies outside the file", im->path, i);
        uint64_t va = s->vaddr + bias;
        uint64_t start = va & ~PG_MASK, end = (va + s->memsz + PG_MASK) & ~PG_MASK;
        if (end <= start || end > VA_LIMIT || (va & PG_MASK) != (s->offset & PG_MASK))
            return fail(err, errsz, -A_ENOEXEC, "%s: segment %zu at 0x%llx cannot be mapped",
                        im->path, i, (unsigned long long)s->vaddr);
        int prot = prot_of(s->flags);
        /* Segments may share a page at their edges: the page gets both. */
        for (uint64_t pg = start; pg < end; ) {
            const vma *v = mm_vma_at(x, pg);
            if (v) {
                uint64_t e = v->end < end ? v->end : end;
                mm_protect(m, x, pg, e - pg, v->prot | prot);
                pg = e;
                continue;
            }
            uint64_t e = pg;
            while (e < end && !mm_vma_at(x, e))
                e += PG_SIZE;
            uint64_t off = s->offset - (va - pg);
            mm_map(m, x, pg, e - pg, prot, VMA_FILE, gpath, off, img, -(int64_t)bias);
            if (prot & GP_X)
                mach_image_notice(m, notice_to, img, pg, e - pg, off, -(int64_t)bias);
            pg = e;
        }
        uint64_t fstart = s->offset & ~PG_MASK;
        uint64_t flen = s->offset + s->filesz - fstart;
        if (flen && mem_write_force(x, start, im->file + fstart, flen))
            return fail(err, errsz, -A_ENOMEM, "%s: cannot load segment %zu", im->path, i);
        if (va + s->memsz > hi)
            hi = va + s->memsz;
    }
    *brk_end = hi;
    return 0;
}

static uint64_t span_of(const image *im, uint64_t *lo_out)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < im->nsegments; i++) {
        const image_segment *s = &im->segments[i];
        if (s->type != PT_LOAD)
            continue;
        if (s->vaddr < lo) lo = s->vaddr;
        if (s->vaddr + s->memsz > hi) hi = s->vaddr + s->memsz;
    }
    if (lo == UINT64_MAX)
        lo = hi = 0;
    lo &= ~PG_MASK;
    *lo_out = lo;
    return ((hi + PG_MASK) & ~PG_MASK) - lo;
}

static uint64_t phdr_addr(const image *im, uint64_t bias)
{
    for (size_t i = 0; i < im->nsegments; i++)
        if (im->segments[i].type == PT_PHDR)
            return im->segments[i].vaddr + bias;
    for (size_t i = 0; i < im->nsegments; i++) {
        const image_segment *s = &im->segments[i];
        if (s->type == PT_LOAD && im->phoff >= s->offset && im->phoff < s->offset + s->filesz)
            return s->vaddr + (im->phoff - s->offset) + bias;
    }
    return 0;
}

/* The stack's protection, as Linux gives it: executable when the
 * executable's PT_GNU_STACK asks for it (GCC's nested functions build
 * their trampolines there) or when it has no such header (programs older
 * than the header), else read and write only. */
static int stack_prot(const image *im)
{
    for (size_t i = 0; i < im->nsegments; i++)
        if (im->segments[i].type == PT_GNU_STACK)
            return GP_R | GP_W | (im->segments[i].flags & PF_X ? GP_X : 0);
    return GP_R | GP_W | GP_X;
}

/* glibc 2.36's static start-up finds its program headers only through
 * __ehdr_start, and Debian's Alpha linker relaxes that address to 0, so
 * a static program never sees its PT_TLS segment and dies on its first
 * TLS access (on qemu-alpha too).  Give it what the auxv says: preset
 * _dl_phdr and _dl_phnum, which start-up then leaves alone. */
static void static_glibc_fixup(mm *x, const image *im, uint64_t bias, uint64_t phdr)
{
    const image_symbol *p = image_symbol_by_name(im, "_dl_phdr");
    const image_symbol *n = image_symbol_by_name(im, "_dl_phnum");
    if (!p || !n || !phdr || p->size != 8 || (n->size != 8 && n->size != 4))
        return;
    uint64_t cur = 0, num = im->nsegments;
    if (mem_read(x, p->value + bias, &cur, 8) || cur)
        return;
    mem_write_force(x, p->value + bias, &phdr, 8);
    mem_write_force(x, n->value + bias, &num, n->size);
}

/* Read the first line of a "#!" script: interpreter and optional argument. */
static bool shebang(const char *hostpath, char **interp, char **arg)
{
    int fd = open(hostpath, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 3 || buf[0] != '#' || buf[1] != '!')
        return false;
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
    char *p = buf + 2;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return false;
    char *q = p;
    while (*q && *q != ' ' && *q != '\t')
        q++;
    char *rest = NULL;
    if (*q) {
        *q++ = 0;
        while (*q == ' ' || *q == '\t')
            q++;
        size_t l = strlen(q);
        while (l && (q[l - 1] == ' ' || q[l - 1] == '\t' || q[l - 1] == '\r'))
            q[--l] = 0;
        if (*q)
            rest = q;
    }
    *interp = strdup(p);
    *arg = rest ? strdup(rest) : NULL;
    return true;
}

typedef struct sbuf {     /* the strings area, built downward */
    uint8_t *mem;
    uint64_t top, p;      /* guest addresses */
} sbuf;

static uint64_t push_str(sbuf *s, const char *str)
{
    size_t l = strlen(str) + 1;
    s->p -= l;
    memcpy(s->mem + (s->p - (s->top - ARG_MAX_BYTES)), str, l);
    return s->p;
}

static int build_stack(thread *t, mm *x, char *const argv[], char *const envp[],
                       const char *execfn, uint64_t *auxv, int nauxv, uint64_t *sp_out,
                       char *err, size_t errsz)
{
    size_t argc = 0, envc = 0, bytes = 0;
    for (; argv[argc]; argc++)
        bytes += strlen(argv[argc]) + 1;
    for (; envp[envc]; envc++)
        bytes += strlen(envp[envc]) + 1;
    if (bytes + strlen(execfn) + 4096 > ARG_MAX_BYTES)
        return fail(err, errsz, -A_E2BIG, "argument list too long");
    sbuf s = { .mem = malloc(ARG_MAX_BYTES), .top = STACK_TOP - 8, .p = STACK_TOP - 8 };
    uint64_t fn = push_str(&s, execfn);
    uint64_t *envv = malloc((envc + 1) * sizeof *envv);
    uint64_t *argvv = malloc((argc + 1) * sizeof *argvv);
    for (size_t i = envc; i-- > 0;)
        envv[i] = push_str(&s, envp[i]);
    for (size_t i = argc; i-- > 0;)
        argvv[i] = push_str(&s, argv[i]);
    uint64_t plat = push_str(&s, "ev5");
    s.p &= ~15ULL;
    s.p -= 16;
    uint64_t rnd = s.p;
    uint8_t rb[16];
    uint64_t h = fnv1a_str(FNV1A_INIT, execfn);
    for (int i = 0; i < 16; i++) {
        uint8_t k = (uint8_t)i;
        h = fnv1a(h, &k, 1);
        rb[i] = (uint8_t)(h >> 32);
    }
    memcpy(s.mem + (s.p - (s.top - ARG_MAX_BYTES)), rb, 16);
    /* fill in the addresses the auxv refers to */
    for (int i = 0; i < nauxv; i++) {
        if (auxv[2 * i] == A_AT_RANDOM) auxv[2 * i + 1] = rnd;
        if (auxv[2 * i] == A_AT_EXECFN) auxv[2 * i + 1] = fn;
        if (auxv[2 * i] == A_AT_PLATFORM) auxv[2 * i + 1] = plat;
    }
    size_t words = 1 + argc + 1 + envc + 1 + 2 * (size_t)nauxv;
    uint64_t sp = (s.p - words * 8) & ~15ULL;
    uint64_t *tab = calloc(words, 8);
    size_t k = 0;
    tab[k++] = argc;
    for (size_t i = 0; i < argc; i++) tab[k++] = argvv[i];
    tab[k++] = 0;
    for (size_t i = 0; i < envc; i++) tab[k++] = envv[i];
    tab[k++] = 0;
    for (int i = 0; i < 2 * nauxv; i++) tab[k++] = auxv[i];
    int r = mem_write(x, s.p, s.mem + (s.p - (s.top - ARG_MAX_BYTES)), s.top - s.p);
    if (!r)
        r = mem_write(x, sp, tab, words * 8);
    free(tab);
    free(argvv);
    free(envv);
    free(s.mem);
    if (r)
        return fail(err, errsz, -A_E2BIG, "cannot build the initial stack");
    *sp_out = sp;
    (void)t;
    return 0;
}

/* A cache's AT_L*_CACHESHAPE: bits 0-3 associativity, 4-7 log2 line size,
 * 8-31 size >> 8 (asm/auxvec.h), from alpha/'s EV5 description (the
 * cycle model's, with --ev5 settings, when it runs); 0 for a cache the
 * machine does not have. */
static uint64_t shape(const ev5_cache *c)
{
    unsigned line_log2 = 0;
    while (line_log2 < 15 && (1u << line_log2) < c->line)
        line_log2++;
    return c->size ? ((uint64_t)c->size >> 8) << 8 | line_log2 << 4 | (c->ways & 15) : 0;
}

int load_program(thread *t, const char *hostpath, const char *gpath,
                 char *const argv[], char *const envp[], char *err, size_t errsz)
{
    machine *m = t->m;
    char *const *av = argv;
    char **owned = NULL;
    char *hp = strdup(hostpath), *gp = strdup(gpath);
    int depth = 0, r;
    char *interp, *iarg;

    if (access(hp, F_OK) != 0) {
        r = fail(err, errsz, -xerrno(errno), "%s: %s", gpath, strerror(errno));
        goto out;
    }
    if (access(hp, X_OK) != 0) {
        r = fail(err, errsz, -A_EACCES, "%s: not executable", gpath);
        goto out;
    }
    while (shebang(hp, &interp, &iarg)) {
        if (++depth > MAX_SHEBANG_DEPTH) {
            free(interp);
            free(iarg);
            r = fail(err, errsz, -A_ELOOP, "%s: too many levels of #! interpreters", gpath);
            goto out;
        }
        size_t n = 0;
        while (av[n])
            n++;
        char **nv = calloc(n + 3, sizeof *nv);
        size_t k = 0;
        nv[k++] = strdup(interp);
        if (iarg)
            nv[k++] = strdup(iarg);
        nv[k++] = strdup(gp);
        for (size_t i = 1; i < n; i++)
            nv[k++] = strdup(av[i]);
        if (owned) {
            for (size_t i = 0; owned[i]; i++)
                free(owned[i]);
            free(owned);
        }
        owned = nv;
        av = nv;
        int e = 0;
        char *h = path_host_for_exec(m, t->p, interp, &e);
        free(gp);
        gp = interp;
        free(iarg);
        free(hp);
        hp = h;
        if (!hp) {
            r = fail(err, errsz, e, "%s: interpreter %s: %s", gpath, gp, strerror(ENOENT));
            goto out;
        }
    }

    image_error ie;
    image *im = image_open_for_running(hp, &ie);
    if (!im) {
        r = fail(err, errsz, -img_errno(ie.code), "%s", ie.msg);
        goto out;
    }
    if (im->type != ET_EXEC && im->type != ET_DYN) {
        image_close(im);
        r = fail(err, errsz, -A_ENOEXEC, "%s: not an executable", gp);
        goto out;
    }
    image *ii = NULL;
    char *ihost = NULL;
    if (im->interp) {
        int e = 0;
        ihost = path_host_for_exec(m, t->p, im->interp, &e);
        if (!ihost) {
            r = fail(err, errsz, -A_ENOENT, "%s: program interpreter %s not found (looked under %s and on the host)",
                     gp, im->interp, m->root);
            image_close(im);
            goto out;
        }
        ii = image_open_for_running(ihost, &ie);
        if (!ii) {
            r = fail(err, errsz, -img_errno(ie.code), "%s: program interpreter: %s", gp, ie.msg);
            image_close(im);
            free(ihost);
            goto out;
        }
    }

    uint64_t lo, bias = 0, ibias = 0, brk_end = 0, ibrk;
    uint64_t span = span_of(im, &lo);
    if (im->type == ET_DYN)
        bias = ET_DYN_BASE - lo;
    if (m->cfg.brk_start && m->cfg.brk_start < lo + bias + span) {
        r = fail(err, errsz, -A_ENOEXEC, "%s: --brk 0x%llx lies below the end of its image (0x%llx)", gp,
                 (unsigned long long)m->cfg.brk_start, (unsigned long long)(lo + bias + span));
        image_close(im);
        if (ii)
            image_close(ii);
        free(ihost);
        goto out;
    }

    /* Point of no return: the old image goes. */
    mm *x = mm_new();
    int img = mach_image_add(m, im, hp, gp);
    r = map_image(m, x, t->p, im, bias, img, gp, &brk_end, err, errsz);
    uint64_t entry = im->entry + bias;
    if (!r && ii) {
        uint64_t ilo, ispan = span_of(ii, &ilo);
        uint64_t at = mm_find_free(x, 0, ispan);
        ibias = at - ilo;
        int iimg = mach_image_add(m, ii, ihost, im->interp);
        r = map_image(m, x, t->p, ii, ibias, iimg, im->interp, &ibrk, err, errsz);
    }
    if (r) {
        mm_put(m, x);
        image_close(im);
        if (ii)
            image_close(ii);
        free(ihost);
        goto out;
    }
    x->brk_start = x->brk = m->cfg.brk_start ? m->cfg.brk_start : (brk_end + PG_MASK) & ~PG_MASK;
    mm_map(m, x, STACK_TOP - STACK_MAX, STACK_MAX, stack_prot(im), VMA_STACK, "[stack]", 0, -1, 0);

    uint64_t aux[64];
    int na = 0;
#define AUX(k, v) (aux[2 * na] = (k), aux[2 * na + 1] = (v), na++)
    ev5_params ev5;
    const ev5_params *cp = timing_params(m);
    if (!cp) {
        ev5_defaults(&ev5);
        cp = &ev5;
    }
    AUX(A_AT_L1I_CACHESHAPE, shape(&cp->icache));
    AUX(A_AT_L1D_CACHESHAPE, shape(&cp->dcache));
    AUX(A_AT_L2_CACHESHAPE, shape(&cp->scache));
    AUX(A_AT_L3_CACHESHAPE, shape(&cp->bcache));
    AUX(A_AT_HWCAP, 0);
    AUX(A_AT_PAGESZ, PG_SIZE);
    AUX(A_AT_CLKTCK, 1024);
    AUX(A_AT_PHDR, phdr_addr(im, bias));
    AUX(A_AT_PHENT, sizeof(Elf64_Phdr));
    AUX(A_AT_PHNUM, im->nsegments);
    AUX(A_AT_BASE, ii ? ibias : 0);
    AUX(A_AT_FLAGS, 0);
    AUX(A_AT_ENTRY, entry);
    AUX(A_AT_UID, getuid());
    AUX(A_AT_EUID, geteuid());
    AUX(A_AT_GID, getgid());
    AUX(A_AT_EGID, getegid());
    AUX(A_AT_SECURE, 0);
    AUX(A_AT_RANDOM, 0);
    AUX(A_AT_EXECFN, 0);
    AUX(A_AT_PLATFORM, 0);
    AUX(A_AT_NULL, 0);
#undef AUX
    if (!ii)
        static_glibc_fixup(x, im, bias, phdr_addr(im, bias));
    uint64_t sp = 0;
    r = build_stack(t, x, av, envp, gp, aux, na, &sp, err, errsz);
    uint64_t pc = ii ? ii->entry + ibias : entry;
    image_close(im);
    if (ii)
        image_close(ii);
    free(ihost);
    if (r) {
        mm_put(m, x);
        goto out;
    }

    /* Install: the caller's old address space is released by the caller. */
    mm *old = t->mm;
    t->mm = x;
    t->p->mm = x;
    mm_put(m, old);
    memset(t->r, 0, sizeof t->r);
    memset(t->f, 0, sizeof t->f);
    t->r[30] = sp;
    t->pc = pc;
    t->uniq = 0;
    t->lock = false;
    t->swcr = 0;
    t->fpcr = FPCR_INITIAL;
    free(t->p->exe);
    t->p->exe = strdup(gp);
    r = 0;
out:
    if (owned) {
        for (size_t i = 0; owned[i]; i++)
            free(owned[i]);
        free(owned);
    }
    free(hp);
    free(gp);
    return r;
}
