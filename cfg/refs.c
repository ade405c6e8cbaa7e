/*
 * cfg/refs.c: every address in code that something refers to, and how:
 * branches, calls, code pointers and jump-table entries in data, addresses
 * built in code, the entry point and DT_INIT/DT_FINI.  Blocks start at
 * these addresses; the ones referred to from outside a procedure are its
 * alternate entries.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"

bool cfg_ref_add(cfg_refvec *rs, uint64_t target, uint64_t source, unsigned kind)
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

bool cfg_collect_refs(cfg_program *p, cfg_refvec *rs)
{
    const image *img = p->img;
    if (cfg_is_code(p, img->entry) && !cfg_ref_add(rs, img->entry, 0, REF_ENTRY))
        return false;
    for (size_t i = 0; i < img->ndyn; i++)
        if ((img->dyn[i].tag == DT_INIT || img->dyn[i].tag == DT_FINI) &&
            cfg_is_code(p, img->dyn[i].val) && !cfg_ref_add(rs, img->dyn[i].val, 0, REF_ENTRY))
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
        if (!cfg_ref_add(rs, r->target, r->where, kind))
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
                !cfg_ref_add(rs, t, a, alpha_flow_of(&in) == FLOW_CALL ? REF_CALL : REF_BRANCH))
                return false;
        }
    }
    if (rs->n)
        qsort(rs->r, rs->n, sizeof *rs->r, ref_cmp);
    return true;
}
