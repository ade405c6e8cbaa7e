/*
 * cfg/procs.c: code sections and procedures.
 *
 * Procedures come from the symbol table first: function and untyped symbols
 * in code sections.  A symbol lying inside a sized function is an alternate
 * entry of that function, not a procedure of its own; code that no symbol
 * covers becomes an anonymous procedure.  Alignment padding after a
 * procedure's last instruction belongs to none.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "cfg/internal.h"

typedef struct cand {
    uint64_t value, size;
    const image_symbol *sym;
    uint32_t section;
    int rank;
} cand;

typedef struct pbuild {
    size_t n, cap;
    cfg_proc *p;
} pbuild;

static const image_section *code_section(const cfg_program *p, uint64_t addr)
{
    for (size_t i = 0; i < p->ncode; i++)
        if (addr >= p->code[i]->addr && addr - p->code[i]->addr < p->code[i]->size)
            return p->code[i];
    return NULL;
}

bool cfg_is_code(const cfg_program *p, uint64_t addr)
{
    return code_section(p, addr) != NULL;
}

bool cfg_word(const cfg_program *p, uint64_t addr, uint32_t *word)
{
    if (addr & 3)
        return false;
    /* sections may overlap in a damaged image: any that holds all four bytes */
    for (size_t i = 0; i < p->ncode; i++) {
        const image_section *s = p->code[i];
        if (addr >= s->addr && addr - s->addr < s->size && s->size - (addr - s->addr) >= 4) {
            *word = le_get32(s->data + (addr - s->addr));
            return true;
        }
    }
    return false;
}

uint64_t cfg_past_padding(const cfg_program *p, uint64_t addr)
{
    uint32_t w;
    uint64_t a = addr;
    while (cfg_word(p, a, &w) && (cfg_is_pad(w) || w == 0) && a - addr < 256)
        a += 4;
    return cfg_is_code(p, a) ? a : addr;
}

bool cfg_is_code_section(const image_section *s)
{
    /* The PLT is the linker's, rewritten by the dynamic loader's rules, and
     * carries no relocations: it is never a procedure.  Alpha code is
     * word-aligned: a section that is not holds no instructions we read. */
    return s->type == SHT_PROGBITS && (s->flags & SHF_ALLOC) && s->addr + s->size > s->addr &&
           (s->flags & SHF_EXECINSTR) && s->data && s->size >= 4 && !(s->addr & 3) &&
           strcmp(s->name, ".plt") != 0;
}

static int cand_rank(const image_symbol *s)
{
    int r = s->type == STT_FUNC || s->type == STT_GNU_IFUNC ? 4 : 0;
    r += s->bind == STB_GLOBAL ? 2 : s->bind == STB_WEAK ? 1 : 0;
    return r;
}

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (x->rank != y->rank)
        return y->rank - x->rank;
    return x->size > y->size ? -1 : x->size < y->size;
}

static cfg_proc *proc_add(pbuild *pb, const char *name, uint64_t start, uint64_t end,
                          uint32_t section, uint32_t flags)
{
    if (pb->n == pb->cap) {
        size_t cap = pb->cap ? pb->cap * 2 : 256;
        cfg_proc *p = realloc(pb->p, cap * sizeof *p);
        if (!p)
            return NULL;
        pb->p = p;
        pb->cap = cap;
    }
    cfg_proc *f = &pb->p[pb->n];
    memset(f, 0, sizeof *f);
    f->name = strdup(name);
    if (!f->name)
        return NULL;
    f->start = start;
    f->end = end;
    f->section = section;
    f->flags = flags;
    pb->n++;
    return f;
}

/* Drop padding after the last instruction that cannot fall through: the
 * linker's alignment fill belongs to no procedure. */
static uint64_t trim_padding(const cfg_program *p, uint64_t start, uint64_t end)
{
    uint64_t e = end;
    uint32_t w;
    while (e > start && cfg_word(p, e - 4, &w) && (cfg_is_pad(w) || w == 0))
        e -= 4;
    if (e == end || e == start)
        return e == start ? end : e;
    alpha_insn in;
    cfg_word(p, e - 4, &w);
    alpha_decode(w, &in);
    return cfg_ends_flow(&in) && in.op ? e : end;
}

static bool gap_has_code(const cfg_program *p, uint64_t *start, uint64_t end)
{
    uint32_t w;
    for (uint64_t a = *start; a + 4 <= end; a += 4)
        if (cfg_word(p, a, &w) && !cfg_is_pad(w) && w != 0) {
            *start = a;
            return true;
        }
    return false;
}

static int proc_cmp(const void *a, const void *b)
{
    const cfg_proc *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

bool cfg_find_procs(cfg_program *p, cfg_refvec *rs)
{
    const image *img = p->img;
    bool have_static = false;
    for (size_t i = 0; i < img->nsymbols; i++)
        if (!img->symbols[i].dynamic && img->symbols[i].shndx != SHN_UNDEF) {
            have_static = true;
            break;
        }
    cand *c = malloc((img->nsymbols + 1) * sizeof *c);
    if (!c)
        return false;
    size_t nc = 0;
    for (size_t i = 0; i < img->nsymbols; i++) {
        const image_symbol *s = &img->symbols[i];
        if (s->dynamic == have_static || !s->name[0] || s->name[0] == '$' ||
            !strncmp(s->name, ".L", 2))
            continue;
        if (s->type != STT_FUNC && s->type != STT_NOTYPE && s->type != STT_GNU_IFUNC)
            continue;
        if (s->shndx == SHN_UNDEF || s->shndx >= img->nsections || (s->value & 3))
            continue;
        const image_section *sec = &img->sections[s->shndx];
        if (!cfg_is_code_section(sec) || s->value < sec->addr || s->value >= sec->addr + sec->size)
            continue;
        /* A size running past the section (hostile input) stops at its end. */
        uint64_t size = s->size < sec->addr + sec->size - s->value ? s->size
                                                                   : sec->addr + sec->size - s->value;
        c[nc++] = (cand){ s->value, size, s, s->shndx, cand_rank(s) };
    }
    qsort(c, nc, sizeof *c, cand_cmp);

    pbuild pb = { 0, 0, NULL };
    uint64_t cover_end = 0;     /* end of the last sized function */
    cfg_proc *cover = NULL;
    for (size_t i = 0; i < nc; i++) {
        if (i && c[i].value == c[i - 1].value)
            continue;
        /* Inside a sized function: an alternate entry, or a label. */
        if (cover && c[i].value < cover_end && c[i].section == cover->section) {
            if (c[i].sym->type == STT_FUNC || c[i].sym->type == STT_GNU_IFUNC)
                if (!cfg_ref_add(rs, c[i].value, 0, REF_SYM))
                    goto oom;
            continue;
        }
        const image_section *sec = &img->sections[c[i].section];
        uint64_t end = sec->addr + sec->size;
        for (size_t j = i + 1; j < nc; j++)
            if (c[j].value != c[i].value) {
                if (c[j].section == c[i].section && c[j].value < end &&
                    !(c[i].size && c[j].value < c[i].value + c[i].size))
                    end = c[j].value;
                break;
            }
        uint64_t send = sec->addr + sec->size;
        if (c[i].size && c[i].value + c[i].size <= send)
            end = c[i].value + c[i].size;
        cfg_proc *f = proc_add(&pb, c[i].sym->name, c[i].value, end, c[i].section, 0);
        if (!f)
            goto oom;
        if (c[i].size) {
            cover = f;
            cover_end = end;
        } else {
            cover = NULL;
            f->end = trim_padding(p, f->start, f->end);
        }
    }
    free(c);
    c = NULL;
    /* Overlaps (a sized function running past the next symbol that is not
     * inside it cannot happen above; clip anyway for hostile input). */
    if (pb.n)
        qsort(pb.p, pb.n, sizeof *pb.p, proc_cmp);
    for (size_t i = 0; i + 1 < pb.n; i++)
        if (pb.p[i].end > pb.p[i + 1].start)
            pb.p[i].end = pb.p[i + 1].start;

    /* Code no symbol covers. */
    size_t nsym = pb.n;
    for (size_t s = 0; s < p->ncode; s++) {
        const image_section *sec = p->code[s];
        uint64_t at = sec->addr, send = sec->addr + sec->size;
        for (size_t k = 0; k <= nsym; k++) {
            if (k < nsym && pb.p[k].section != sec->index)
                continue;
            uint64_t gend = k < nsym ? pb.p[k].start : send, g = at;
            if (gend > g && gap_has_code(p, &g, gend)) {
                char name[40];
                snprintf(name, sizeof name, "anon.%llx", (unsigned long long)g);
                if (!proc_add(&pb, name, g, trim_padding(p, g, gend), sec->index, CFG_PF_NOSYM))
                    goto oom;
            }
            if (k < nsym && pb.p[k].end > at)
                at = pb.p[k].end;
        }
    }
    if (pb.n)
        qsort(pb.p, pb.n, sizeof *pb.p, proc_cmp);
    p->procs = pb.p;
    p->nprocs = pb.n;
    return true;
oom:
    free(c);
    for (size_t i = 0; i < pb.n; i++)
        free(pb.p[i].name);
    free(pb.p);
    return false;
}

/* GP of a procedure: what its entry (or any) GPDISP pair computes. */
void cfg_find_gp(const cfg_program *p, cfg_proc *f)
{
    size_t i = cfg_relocs_from(&p->relocs, f->start);
    for (; i < p->relocs.n && p->relocs.r[i].where < f->end; i++) {
        const cfg_rel *r = &p->relocs.r[i];
        if (r->type != R_ALPHA_GPDISP)
            continue;
        uint32_t hi, lo;
        if (!cfg_word(p, r->where, &hi) || !cfg_word(p, r->where + (uint64_t)r->addend, &lo))
            continue;
        int64_t v = (int64_t)(int16_t)(hi & 0xffff) * 65536 + (int16_t)(lo & 0xffff);
        f->gp = r->where + (uint64_t)v;
        f->flags |= CFG_PF_HASGP;
        return;
    }
    f->gp = p->img->gp;
}

cfg_proc *cfg_proc_at(const cfg_program *p, uint64_t addr)
{
    size_t lo = 0, hi = p->nprocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->procs[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nprocs && p->procs[lo].start <= addr && addr < p->procs[lo].end
           ? &p->procs[lo] : NULL;
}

cfg_proc *cfg_proc_named(const cfg_program *p, const char *name)
{
    for (size_t i = 0; i < p->nprocs; i++)
        if (!strcmp(p->procs[i].name, name))
            return &p->procs[i];
    return NULL;
}
