/*
 * cfg/build.c: basic blocks and edges, and the whole program's build.
 *
 * Blocks start at every address something refers to (cfg/refs.c) and after
 * every instruction that ends straight-line flow.  Calls do not end blocks:
 * a call returns, and the instruction after it must stay after it (its
 * return address, and the GP reload that follows, depend on that).
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"

bool cfg_edge_add(cfg_ebuild *eb, uint32_t from, uint32_t to, unsigned kind, uint64_t target)
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

void cfg_set_why(cfg_proc *f, const char *fmt, ...)
{
    f->flags |= CFG_PF_MISSING;
    if (f->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->why, sizeof f->why, fmt, ap);
    va_end(ap);
}

/* Is the JMP at addr a tail call (through pv, as gcc emits sibling calls)? */
static bool is_tail_jump(const cfg_program *p, const alpha_insn *in, uint64_t addr)
{
    return in->rb == REG_PV || cfg_reloc_find(&p->relocs, addr, R_ALPHA_HINT) != NULL ||
           cfg_reloc_find(&p->relocs, addr, R_ALPHA_LITUSE) != NULL;
}

/* Leaders: 1 = starts a block, 2 = also an alternate entry candidate. */
static void find_leaders(cfg_proc *f, const alpha_insn *ins, size_t n, const cfg_ref *refs,
                         size_t nrefs, uint8_t *lead)
{
    lead[0] = 1;
    for (size_t i = 0; i < n; i++) {
        const alpha_insn *in = &ins[i];
        uint64_t a = f->start + 4 * i;
        if (!in->op) {
            f->flags |= CFG_PF_BADCODE;
            cfg_set_why(f, "0x%llx: word %08x is no instruction", (unsigned long long)a, in->word);
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
}

/* A call at instruction i of block b, with its target when known. */
static bool add_call(cfg_program *p, cfg_proc *f, const alpha_insn *in, size_t i, size_t b,
                     size_t *cap)
{
    if (f->ncalls == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        cfg_call *c = realloc(f->calls, *cap * sizeof *c);
        if (!c)
            return false;
        f->calls = c;
    }
    uint64_t t = 0, a = f->start + 4 * i;
    if (alpha_is_pcrel_branch(in)) {
        t = alpha_branch_target(in, a);
    } else {
        const cfg_rel *h = cfg_reloc_find(&p->relocs, a, R_ALPHA_HINT);
        if (h && h->target && cfg_is_code(p, h->target))
            t = h->target;
    }
    f->calls[f->ncalls++] = (cfg_call){ a, t, (uint32_t)b };
    return true;
}

/* The blocks the leaders start, and the calls in them. */
static bool make_blocks(cfg_program *p, cfg_proc *f, const alpha_insn *ins, size_t n,
                        const uint8_t *lead)
{
    size_t nb = 0, ncallcap = 0;
    for (size_t i = 0; i < n; i++)
        nb += lead[i] != 0;
    f->blocks = calloc(nb ? nb : 1, sizeof *f->blocks);
    if (!f->blocks)
        return false;
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
            if (!add_call(p, f, &ins[i], i, b, &ncallcap))
                return false;
        }
    }
    if (nb)
        f->blocks[0].flags |= CFG_BF_ENTRY;
    return true;
}

/* The edges out of block b (and into it from the entry), jump tables
 * aside: those are resolved later. */
static bool block_edges(cfg_program *p, cfg_proc *f, const alpha_insn *ins, size_t b,
                        cfg_ebuild *eb)
{
    cfg_block *bl = &f->blocks[b];
    const alpha_insn *in = &ins[(bl->end - f->start) / 4 - 1];
    uint64_t la = bl->end - 4;
    uint32_t next = b + 1 < f->nblocks ? (uint32_t)(b + 1) : CFG_NONE;
    alpha_flow fl = alpha_flow_of(in);
    if (bl->flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY) &&
        !cfg_edge_add(eb, CFG_ENTRY, (uint32_t)b, CFG_EDGE_ENTRY, bl->start))
        return false;
    if (!in->op)
        return true;
    if ((fl == FLOW_CALL || fl == FLOW_COROUTINE ||
         ((fl == FLOW_BRANCH || fl == FLOW_JUMP) && in->ra != REG_ZERO)))
        bl->flags |= CFG_BF_LINKS;
    if (fl == FLOW_CBRANCH || fl == FLOW_BRANCH) {
        uint64_t t = alpha_branch_target(in, la);
        uint32_t tb = cfg_block_at(f, t);
        bool ok = tb != CFG_NONE && f->blocks[tb].start == t
                  ? cfg_edge_add(eb, (uint32_t)b, tb, CFG_EDGE_TAKEN, t)
                  : cfg_edge_add(eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_OUT, t);
        if (!ok || fl == FLOW_BRANCH)
            return ok;
    } else if (fl == FLOW_RETURN) {
        return cfg_edge_add(eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_RETURN, 0);
    } else if (fl == FLOW_JUMP) {
        if (is_tail_jump(p, in, la)) {
            const cfg_rel *h = cfg_reloc_find(&p->relocs, la, R_ALPHA_HINT);
            return cfg_edge_add(eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_OUT, h ? h->target : 0);
        }
        bl->flags |= CFG_BF_TABLE;   /* resolved later */
        return true;
    } else if (fl == FLOW_COROUTINE) {
        f->flags |= CFG_PF_COROUTINE;
        cfg_set_why(f, "0x%llx: jsr_coroutine", (unsigned long long)la);
        return true;
    }
    if (next != CFG_NONE)
        return cfg_edge_add(eb, (uint32_t)b, next, CFG_EDGE_FALL, f->blocks[next].start);
    return cfg_edge_add(eb, (uint32_t)b, CFG_EXIT, CFG_EDGE_OUT, cfg_past_padding(p, bl->end));
}

/* Each block's in- and out-edges, as runs of the index arrays. */
static bool adjacency(cfg_proc *f)
{
    size_t nb = f->nblocks;
    f->out_edges = malloc((f->nedges ? f->nedges : 1) * sizeof *f->out_edges);
    f->in_edges = malloc((f->nedges ? f->nedges : 1) * sizeof *f->in_edges);
    uint32_t *oc = calloc(nb + 1, sizeof *oc), *ic = calloc(nb + 1, sizeof *ic);
    bool ok = f->out_edges && f->in_edges && oc && ic;
    for (size_t e = 0; ok && e < f->nedges; e++) {
        if (f->edges[e].from < nb)
            oc[f->edges[e].from + 1]++;
        if (f->edges[e].to < nb)
            ic[f->edges[e].to + 1]++;
    }
    for (size_t b = 0; ok && b < nb; b++) {
        oc[b + 1] += oc[b];
        ic[b + 1] += ic[b];
        f->blocks[b].first_out = oc[b];
        f->blocks[b].first_in = ic[b];
        f->blocks[b].nout = f->blocks[b].nin = 0;
    }
    for (size_t e = 0; ok && e < f->nedges; e++) {
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
    return ok;
}

static bool build_proc(cfg_program *p, cfg_proc *f, const cfg_ref *refs, size_t nrefs)
{
    size_t n = (f->end - f->start) / 4;
    alpha_insn *ins = calloc(n ? n : 1, sizeof *ins);
    uint8_t *lead = calloc(n + 1, 1);
    cfg_ebuild eb = { 0, 0, NULL };
    if (!ins || !lead)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        uint32_t w = 0;
        cfg_word(p, f->start + 4 * i, &w);
        alpha_decode(w, &ins[i]);
    }
    find_leaders(f, ins, n, refs, nrefs, lead);
    if (!make_blocks(p, f, ins, n, lead))
        goto oom;
    for (size_t b = 0; b < f->nblocks; b++)
        if (!block_edges(p, f, ins, b, &eb))
            goto oom;
    f->edges = eb.e;
    f->nedges = eb.n;
    if (!cfg_table_edges(p, f, ins, &eb))
        goto oom;
    cfg_table_entries(f, refs, nrefs);
    if (!adjacency(f))
        goto oom;
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
    cfg_refvec rs = { 0, 0, NULL };
    if (!p)
        goto oom;
    p->img = img;
    p->code = malloc((img->nsections ? img->nsections : 1) * sizeof *p->code);
    if (!p->code)
        goto oom;
    for (size_t i = 0; i < img->nsections; i++)
        if (cfg_is_code_section(&img->sections[i]))
            p->code[p->ncode++] = &img->sections[i];
    if (!p->ncode) {
        snprintf(err, errlen, "%s: no code sections", img->path);
        cfg_free(p);
        return NULL;
    }
    if (!cfg_relocs_build(img, &p->relocs) || !cfg_find_procs(p, &rs))
        goto oom;
    for (size_t i = 0; i < p->nprocs; i++)
        cfg_find_gp(p, &p->procs[i]);
    cfg_resolve_targets(p);
    if (!cfg_collect_refs(p, &rs))
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        cfg_proc *f = &p->procs[i];
        while (k < rs.n && rs.r[k].target < f->start)
            k++;
        size_t e = k;
        while (e < rs.n && rs.r[e].target < f->end)
            e++;
        if (!build_proc(p, f, rs.r ? rs.r + k : NULL, e - k))
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
