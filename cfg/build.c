/*
 * cfg/build.c: procedures and basic blocks from an image.
 *
 * Procedures come from the symbol table first: function and untyped symbols
 * in code sections.  A symbol lying inside a sized function is an alternate
 * entry of that function, not a procedure of its own; code that no symbol
 * covers becomes an anonymous procedure.  Blocks start at every address
 * something refers to (branches, jump tables, code pointers in data,
 * addresses built in code, symbols) and after every instruction that ends
 * straight-line flow.  Calls do not end blocks: a call returns, and the
 * instruction after it must stay after it (its return address, and the GP
 * reload that follows, depend on that).
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"

typedef struct refvec {
    size_t n, cap;
    cfg_ref *r;
} refvec;

static bool ref_add(refvec *rs, uint64_t target, uint64_t source, unsigned kind)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 1024;
        cfg_ref *r = realloc(rs->r, cap * sizeof *r);
        if (!r)
            return false;
        rs->r = r;
        rs->cap = cap;
    }
    rs->r[rs->n++] = (cfg_ref){ target, source, (uint8_t)kind };
    return true;
}

static int ref_cmp(const void *a, const void *b)
{
    const cfg_ref *x = a, *y = b;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* ---- code sections --------------------------------------------------- */

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
    const image_section *s = code_section(p, addr);
    if (!s || (addr & 3) || addr + 4 > s->addr + s->size)
        return false;
    const uint8_t *b = s->data + (addr - s->addr);
    *word = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

uint64_t cfg_past_padding(const cfg_program *p, uint64_t addr)
{
    uint32_t w;
    uint64_t a = addr;
    while (cfg_word(p, a, &w) && (cfg_is_pad(w) || w == 0) && a - addr < 256)
        a += 4;
    return cfg_is_code(p, a) ? a : addr;
}

static bool is_code_section(const image_section *s)
{
    /* The PLT is the linker's, rewritten by the dynamic loader's rules, and
     * carries no relocations: it is never a procedure. */
    return s->type == SHT_PROGBITS && (s->flags & SHF_ALLOC) &&
           (s->flags & SHF_EXECINSTR) && s->data && s->size >= 4 &&
           strcmp(s->name, ".plt") != 0;
}

/* ---- procedures from symbols ---------------------------------------- */

typedef struct cand {
    uint64_t value, size;
    const image_symbol *sym;
    uint32_t section;
    int rank;
} cand;

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

typedef struct pbuild {
    size_t n, cap;
    cfg_proc *p;
} pbuild;

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

static bool find_procs(cfg_program *p, refvec *rs)
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
        if (!is_code_section(sec) || s->value < sec->addr || s->value >= sec->addr + sec->size)
            continue;
        c[nc++] = (cand){ s->value, s->size, s, s->shndx, cand_rank(s) };
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
                if (!ref_add(rs, c[i].value, 0, REF_SYM))
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

/* ---- references into code ------------------------------------------- */

static bool collect_refs(cfg_program *p, refvec *rs)
{
    const image *img = p->img;
    if (cfg_is_code(p, img->entry) && !ref_add(rs, img->entry, 0, REF_ENTRY))
        return false;
    for (size_t i = 0; i < img->ndyn; i++)
        if ((img->dyn[i].tag == DT_INIT || img->dyn[i].tag == DT_FINI) &&
            cfg_is_code(p, img->dyn[i].val) && !ref_add(rs, img->dyn[i].val, 0, REF_ENTRY))
            return false;
    for (size_t i = 0; i < p->relocs.n; i++) {
        const cfg_rel *r = &p->relocs.r[i];
        if (!cfg_is_code(p, r->target))
            continue;
        unsigned kind;
        bool from_code = cfg_is_code(p, r->where);
        switch (r->type) {
        case R_ALPHA_REFQUAD: case R_ALPHA_REFLONG:
            if (from_code)
                continue;
            kind = REF_DATA;
            break;
        case R_ALPHA_GPREL32:
            if (from_code)
                continue;
            kind = REF_TABLE32;
            break;
        case R_ALPHA_GPRELLOW: case R_ALPHA_GPREL16: case R_ALPHA_LITERAL:
            if (!from_code)
                continue;
            kind = REF_ADDR;
            break;
        default:
            continue;
        }
        if (!ref_add(rs, r->target, r->where, kind))
            return false;
    }
    for (size_t s = 0; s < p->ncode; s++) {
        const image_section *sec = p->code[s];
        for (uint64_t a = sec->addr; a + 4 <= sec->addr + sec->size; a += 4) {
            uint32_t w;
            alpha_insn in;
            cfg_word(p, a, &w);
            alpha_decode(w, &in);
            if (!alpha_is_pcrel_branch(&in))
                continue;
            uint64_t t = alpha_branch_target(&in, a);
            if (cfg_is_code(p, t) &&
                !ref_add(rs, t, a, alpha_flow_of(&in) == FLOW_CALL ? REF_CALL : REF_BRANCH))
                return false;
        }
    }
    qsort(rs->r, rs->n, sizeof *rs->r, ref_cmp);
    return true;
}

/* ---- one procedure's blocks and edges -------------------------------- */

typedef struct ebuild {
    size_t n, cap;
    cfg_edge *e;
} ebuild;

static bool edge_add(ebuild *eb, uint32_t from, uint32_t to, unsigned kind, uint64_t target)
{
    for (size_t i = eb->n; i-- > 0 && eb->e[i].from == from;)
        if (eb->e[i].to == to && eb->e[i].kind == kind && eb->e[i].target == target)
            return true;
    if (eb->n == eb->cap) {
        size_t cap = eb->cap ? eb->cap * 2 : 64;
        cfg_edge *e = realloc(eb->e, cap * sizeof *e);
        if (!e)
            return false;
        eb->e = e;
        eb->cap = cap;
    }
    eb->e[eb->n++] = (cfg_edge){ from, to, (uint8_t)kind, target, CFG_NONE };
    return true;
}

uint32_t cfg_block_at(const cfg_proc *f, uint64_t addr)
{
    if (addr < f->start || addr >= f->end || !f->nblocks)
        return CFG_NONE;
    size_t lo = 0, hi = f->nblocks;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->blocks[mid].start <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return addr < f->blocks[lo].end ? (uint32_t)lo : CFG_NONE;
}

static void set_why(cfg_proc *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(cfg_proc *f, const char *fmt, ...)
{
    f->flags |= CFG_PF_MISSING;
    if (f->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->why, sizeof f->why, fmt, ap);
    va_end(ap);
}

/* GP of a procedure: what its entry (or any) GPDISP pair computes. */
static void find_gp(const cfg_program *p, cfg_proc *f)
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

/* Is the JMP at addr a tail call (through pv, as gcc emits sibling calls)? */
static bool is_tail_jump(const cfg_program *p, const alpha_insn *in, uint64_t addr)
{
    return in->rb == REG_PV || cfg_reloc_find(&p->relocs, addr, R_ALPHA_HINT) != NULL ||
           cfg_reloc_find(&p->relocs, addr, R_ALPHA_LITUSE) != NULL;
}

static bool build_proc(cfg_program *p, cfg_proc *f, const cfg_ref *refs, size_t nrefs)
{
    size_t n = (f->end - f->start) / 4;
    alpha_insn *ins = calloc(n ? n : 1, sizeof *ins);
    uint8_t *lead = calloc(n + 1, 1);
    ebuild eb = { 0, 0, NULL };
    size_t ncallcap = 0;
    if (!ins || !lead)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        uint32_t w = 0;
        cfg_word(p, f->start + 4 * i, &w);
        alpha_decode(w, &ins[i]);
    }
    /* Leaders. 1 = leader, 2 = also an alternate entry candidate. */
    lead[0] = 1;
    for (size_t i = 0; i < n; i++) {
        const alpha_insn *in = &ins[i];
        uint64_t a = f->start + 4 * i;
        if (!in->op) {
            f->flags |= CFG_PF_BADCODE;
            set_why(f, "0x%llx: word %08x is no instruction", (unsigned long long)a, in->word);
        }
        if (cfg_ends_flow(in) || alpha_flow_of(in) == FLOW_CBRANCH)
            lead[i + 1] = 1;
        if (alpha_is_pcrel_branch(in)) {
            uint64_t t = alpha_branch_target(in, a);
            if (t >= f->start && t < f->end)
                lead[(t - f->start) / 4] = 1;
        }
    }
    for (size_t k = 0; k < nrefs; k++) {
        const cfg_ref *r = &refs[k];
        if ((r->target & 3) || r->target < f->start || r->target >= f->end)
            continue;
        size_t i = (r->target - f->start) / 4;
        bool inside = r->source >= f->start && r->source < f->end;
        lead[i] |= 1;
        if (i && (r->kind == REF_DATA || r->kind == REF_ADDR || r->kind == REF_SYM ||
                  r->kind == REF_ENTRY || r->kind == REF_CALL ||
                  (r->kind == REF_BRANCH && !inside)))
            lead[i] |= 2;
    }

    /* Blocks. */
    size_t nb = 0;
    for (size_t i = 0; i < n; i++)
        nb += lead[i] != 0;
    f->blocks = calloc(nb ? nb : 1, sizeof *f->blocks);
    if (!f->blocks)
        goto oom;
    f->nblocks = nb;
    for (size_t i = 0, b = (size_t)-1; i < n; i++) {
        if (lead[i]) {
            b++;
            f->blocks[b] = (cfg_block){ .start = f->start + 4 * i, .eqclass = CFG_NONE,
                                        .loop = CFG_NONE };
            if (lead[i] & 2)
                f->blocks[b].flags |= CFG_BF_ALTENTRY;
        }
        f->blocks[b].end = f->start + 4 * (i + 1);
        if (!ins[i].op)
            f->blocks[b].flags |= CFG_BF_BADCODE;
        if (alpha_flow_of(&ins[i]) == FLOW_CALL) {
            f->blocks[b].flags |= CFG_BF_CALLS;
            if (f->ncalls == ncallcap) {
                ncallcap = ncallcap ? 2 * ncallcap : 8;
                cfg_call *c = realloc(f->calls, ncallcap * sizeof *c);
                if (!c)
                    goto oom;
                f->calls = c;
            }
            uint64_t t = 0, a = f->start + 4 * i;
            if (alpha_is_pcrel_branch(&ins[i]))
                t = alpha_branch_target(&ins[i], a);
            else {
                const cfg_rel *h = cfg_reloc_find(&p->relocs, a, R_ALPHA_HINT);
                if (h && h->target && cfg_is_code(p, h->target))
                    t = h->target;
            }
            f->calls[f->ncalls++] = (cfg_call){ a, t, (uint32_t)b };
        }
    }
    if (nb)
        f->blocks[0].flags |= CFG_BF_ENTRY;

    /* Edges, except jump tables. */
    for (size_t b = 0; b < nb; b++) {
        cfg_block *bl = &f->blocks[b];
        size_t li = (bl->end - f->start) / 4 - 1;
        const alpha_insn *in = &ins[li];
        uint64_t la = bl->end - 4;
        uint32_t next = b + 1 < nb ? (uint32_t)(b + 1) : CFG_NONE;
        alpha_flow fl = alpha_flow_of(in);
        bool ok = true;
        if (bl->flags & CFG_BF_ENTRY)
            ok = edge_add(&eb, CFG_ENTRY, (uint32_t)b, CFG_EDGE_ENTRY, bl->start);
        else if (bl->flags & CFG_BF_ALTENTRY)
            ok = edge_add(&eb, CFG_ENTRY, (uint32_t)b, CFG_EDGE_ENTRY, bl->start);
        if (!ok)
            goto oom;
        if (!in->op)
            continue;
        if ((fl == FLOW_CALL || fl == FLOW_COROUTINE ||
             ((fl == FLOW_BRANCH || fl == FLOW_JUMP) && in->ra != REG_ZERO)))
            bl->flags |= CFG_BF_LINKS;
        if (fl == FLOW_CBRANCH || fl == FLOW_BRANCH) {
            uint64_t t = alpha_branch_target(in, la);
            uint32_t tb = cfg_block_at(f, t);
            ok = tb != CFG_NONE && f->blocks[tb].start == t
                 ? edge_add(&eb, (uint32_t)b, tb, CFG_EDGE_TAKEN, t)
                 : edge_add(&eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_OUT, t);
            if (!ok)
                goto oom;
            if (fl == FLOW_BRANCH)
                continue;
        } else if (fl == FLOW_RETURN) {
            if (!edge_add(&eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_RETURN, 0))
                goto oom;
            continue;
        } else if (fl == FLOW_JUMP) {
            if (is_tail_jump(p, in, la)) {
                const cfg_rel *h = cfg_reloc_find(&p->relocs, la, R_ALPHA_HINT);
                if (!edge_add(&eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_OUT, h ? h->target : 0))
                    goto oom;
            } else {
                bl->flags |= CFG_BF_TABLE;   /* resolved below */
            }
            continue;
        } else if (fl == FLOW_COROUTINE) {
            f->flags |= CFG_PF_COROUTINE;
            set_why(f, "0x%llx: jsr_coroutine", (unsigned long long)la);
            continue;
        }
        if (next != CFG_NONE) {
            if (!edge_add(&eb, (uint32_t)b, next, CFG_EDGE_FALL, f->blocks[next].start))
                goto oom;
        } else if (!edge_add(&eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_OUT, cfg_past_padding(p, bl->end))) {
            goto oom;
        }
    }
    f->edges = eb.e;
    f->nedges = eb.n;

    /* Jump tables: the slice walks predecessors, so index the edges first. */
    {
        bool any = false;
        for (size_t b = 0; b < nb; b++)
            any |= (f->blocks[b].flags & CFG_BF_TABLE) != 0;
        if (any) {
            /* Temporary predecessor lists for the slicer. */
            uint32_t *cnt = calloc(nb + 1, sizeof *cnt);
            uint32_t *idx = malloc((eb.n ? eb.n : 1) * sizeof *idx);
            if (!cnt || !idx) {
                free(cnt);
                free(idx);
                goto oom;
            }
            for (size_t e = 0; e < eb.n; e++)
                if (eb.e[e].to < nb)
                    cnt[eb.e[e].to + 1]++;
            for (size_t b = 0; b < nb; b++)
                cnt[b + 1] += cnt[b];
            for (size_t b = 0; b < nb; b++) {
                f->blocks[b].first_in = cnt[b];
                f->blocks[b].nin = 0;
            }
            for (size_t e = 0; e < eb.n; e++)
                if (eb.e[e].to < nb) {
                    cfg_block *t = &f->blocks[eb.e[e].to];
                    idx[t->first_in + t->nin++] = (uint32_t)e;
                }
            f->in_edges = idx;
            free(cnt);

            cfg_slice_ctx cx = { p, f, ins };
            uint64_t found[64][8];
            size_t nfound[64];
            uint32_t tblk[64];
            size_t nj = 0;
            uint64_t all[512];
            size_t nall = 0;
            for (size_t b = 0; b < nb; b++) {
                if (!(f->blocks[b].flags & CFG_BF_TABLE))
                    continue;
                uint64_t t[8];
                size_t k = cfg_find_tables(&cx, (uint32_t)b, t, 8);
                if (!k || nj == 64) {
                    f->blocks[b].flags = (f->blocks[b].flags & ~CFG_BF_TABLE) | CFG_BF_INDIRECT;
                    set_why(f, "0x%llx: indirect jump with no table found",
                            (unsigned long long)(f->blocks[b].end - 4));
                    continue;
                }
                tblk[nj] = (uint32_t)b;
                nfound[nj] = k;
                memcpy(found[nj], t, k * sizeof *t);
                for (size_t j = 0; j < k && nall < 512; j++)
                    all[nall++] = t[j];
                nj++;
            }
            f->in_edges = NULL;
            free(idx);
            for (size_t j = 0; j < nj; j++) {
                uint32_t b = tblk[j];
                size_t added = 0;
                for (size_t q = 0; q < nfound[j]; q++) {
                    uint64_t stop = UINT64_MAX;
                    for (size_t z = 0; z < nall; z++)
                        if (all[z] > found[j][q] && all[z] < stop)
                            stop = all[z];
                    uint32_t es;
                    uint32_t cnt2 = cfg_table_extent(p, f, found[j][q], stop, &es);
                    if (!cnt2)
                        continue;
                    cfg_table *tt = realloc(f->tables, (f->ntables + 1) * sizeof *tt);
                    if (!tt)
                        goto oom;
                    f->tables = tt;
                    f->tables[f->ntables++] = (cfg_table){ f->blocks[b].end - 4, found[j][q], es, cnt2 };
                    for (uint32_t e = 0; e < cnt2; e++) {
                        uint64_t t = cfg_table_entry(p, f, found[j][q], es, e);
                        uint32_t tb = cfg_block_at(f, t);
                        if (tb == CFG_NONE || f->blocks[tb].start != t)
                            continue;
                        if (!edge_add(&eb, b, tb, CFG_EDGE_TABLE, t))
                            goto oom;
                        added++;
                    }
                }
                if (!added) {
                    f->blocks[b].flags = (f->blocks[b].flags & ~CFG_BF_TABLE) | CFG_BF_INDIRECT;
                    set_why(f, "0x%llx: jump table has no entries in the procedure",
                            (unsigned long long)(f->blocks[b].end - 4));
                }
            }
            f->edges = eb.e;
            f->nedges = eb.n;
        }
    }

    /* Table targets are not entries: only refs from outside were marked,
     * but a GPREL32 or REFQUAD table of this procedure's own jump must not
     * make its cases alternate entries.  Clear entries that are table
     * targets of resolved tables. */
    for (size_t e = 0; e < f->nedges; e++)
        if (f->edges[e].kind == CFG_EDGE_TABLE) {
            cfg_block *t = &f->blocks[f->edges[e].to];
            if (!(t->flags & CFG_BF_ENTRY) && (t->flags & CFG_BF_ALTENTRY)) {
                /* Still an entry if some non-table reference points here. */
                bool other = false;
                size_t lo = 0, hi = nrefs;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (refs[mid].target < t->start)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                for (size_t k = lo; k < nrefs && refs[k].target == t->start; k++) {
                    uint8_t kd = refs[k].kind;
                    bool inside = refs[k].source >= f->start && refs[k].source < f->end;
                    if (kd == REF_DATA) {
                        bool intable = false;
                        for (size_t z = 0; z < f->ntables; z++)
                            if (refs[k].source >= f->tables[z].table &&
                                refs[k].source < f->tables[z].table +
                                    (uint64_t)f->tables[z].count * f->tables[z].entsize)
                                intable = true;
                        other |= !intable;
                    } else if (kd == REF_ADDR || kd == REF_SYM || kd == REF_ENTRY ||
                               ((kd == REF_CALL || kd == REF_BRANCH) && !inside)) {
                        other = true;
                    }
                }
                if (!other) {
                    t->flags &= ~CFG_BF_ALTENTRY;
                    for (size_t z = 0; z < f->nedges; z++)
                        if (f->edges[z].from == CFG_ENTRY && f->edges[z].to == f->edges[e].to)
                            f->edges[z].kind = 0xff;   /* deleted below */
                }
            }
        }
    {
        size_t w = 0;
        for (size_t e = 0; e < f->nedges; e++)
            if (f->edges[e].kind != 0xff)
                f->edges[w++] = f->edges[e];
        f->nedges = w;
    }

    /* Adjacency. */
    f->out_edges = malloc((f->nedges ? f->nedges : 1) * sizeof *f->out_edges);
    f->in_edges = malloc((f->nedges ? f->nedges : 1) * sizeof *f->in_edges);
    if (!f->out_edges || !f->in_edges)
        goto oom;
    {
        uint32_t *oc = calloc(nb + 1, sizeof *oc), *ic = calloc(nb + 1, sizeof *ic);
        if (!oc || !ic) {
            free(oc);
            free(ic);
            goto oom;
        }
        for (size_t e = 0; e < f->nedges; e++) {
            if (f->edges[e].from < nb)
                oc[f->edges[e].from + 1]++;
            if (f->edges[e].to < nb)
                ic[f->edges[e].to + 1]++;
        }
        for (size_t b = 0; b < nb; b++) {
            oc[b + 1] += oc[b];
            ic[b + 1] += ic[b];
            f->blocks[b].first_out = oc[b];
            f->blocks[b].first_in = ic[b];
            f->blocks[b].nout = f->blocks[b].nin = 0;
        }
        for (size_t e = 0; e < f->nedges; e++) {
            if (f->edges[e].from < nb) {
                cfg_block *s = &f->blocks[f->edges[e].from];
                f->out_edges[s->first_out + s->nout++] = (uint32_t)e;
            }
            if (f->edges[e].to < nb) {
                cfg_block *t = &f->blocks[f->edges[e].to];
                f->in_edges[t->first_in + t->nin++] = (uint32_t)e;
            }
        }
        free(oc);
        free(ic);
    }
    free(ins);
    free(lead);
    cfg_loops(f);
    cfg_equiv(f);
    return true;
oom:
    free(ins);
    free(lead);
    if (eb.e != f->edges)
        free(eb.e);
    return false;
}

/* ---- the whole program ------------------------------------------------ */

static void free_proc(cfg_proc *f)
{
    free(f->name);
    free(f->blocks);
    free(f->edges);
    free(f->out_edges);
    free(f->in_edges);
    free(f->calls);
    free(f->loops);
    free(f->tables);
}

void cfg_free(cfg_program *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nprocs; i++)
        free_proc(&p->procs[i]);
    free(p->procs);
    free(p->code);
    cfg_relocs_free(&p->relocs);
    free(p);
}

cfg_program *cfg_build(const image *img, char *err, size_t errlen)
{
    cfg_program *p = calloc(1, sizeof *p);
    refvec rs = { 0, 0, NULL };
    if (!p)
        goto oom;
    p->img = img;
    p->code = malloc((img->nsections ? img->nsections : 1) * sizeof *p->code);
    if (!p->code)
        goto oom;
    for (size_t i = 0; i < img->nsections; i++)
        if (is_code_section(&img->sections[i]))
            p->code[p->ncode++] = &img->sections[i];
    if (!p->ncode) {
        snprintf(err, errlen, "%s: no code sections", img->path);
        cfg_free(p);
        return NULL;
    }
    if (!cfg_relocs_build(img, &p->relocs) || !find_procs(p, &rs))
        goto oom;
    for (size_t i = 0; i < p->nprocs; i++)
        find_gp(p, &p->procs[i]);
    cfg_resolve_targets(p);
    if (!collect_refs(p, &rs))
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        cfg_proc *f = &p->procs[i];
        while (k < rs.n && rs.r[k].target < f->start)
            k++;
        size_t e = k;
        while (e < rs.n && rs.r[e].target < f->end)
            e++;
        if (!build_proc(p, f, rs.r + k, e - k))
            goto oom;
        k = e;
    }
    free(rs.r);
    return p;
oom:
    free(rs.r);
    snprintf(err, errlen, "%s: out of memory building the CFG", img->path);
    cfg_free(p);
    return NULL;
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
