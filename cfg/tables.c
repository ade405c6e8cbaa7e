/*
 * cfg/tables.c: the targets of indirect jumps, from the dispatch sequence
 * and the relocations of its table.
 *
 * gcc dispatches a switch as: table address from a GPRELHIGH/GPRELLOW pair
 * (or GPREL16, or a LITERAL load), s4addq of the index, ldl of the entry,
 * addq gp, jmp.  A computed goto loads 8-byte code pointers instead.  The
 * address computation may sit blocks away from the jump (hoisted out of a
 * loop), so we slice backwards over the CFG from the jump's register,
 * following every register that feeds it, until a relocated table address
 * turns up.  The table's extent is the run of GPREL32 (or REFQUAD) entries
 * that point into the same procedure; their relocations say exactly where
 * each entry goes.
 */
#include <stdlib.h>

#include "cfg/internal.h"

/* Registers a call may change (the Linux/Alpha calling convention):
 * v0, t0-t7, a0-a5, t8-t11, ra, pv, at. */
#define CALL_CLOBBERS 0x1fff01ffu

#define SLICE_STEPS 20000

#define MAXSLOTS 4

typedef struct item {
    uint32_t block;
    uint64_t end;            /* scan [block start, end) backwards */
    uint32_t want;           /* integer registers still to explain */
    uint8_t nslots;          /* stack slots (offsets from sp) likewise: */
    int16_t slots[MAXSLOTS]; /* a table address spilled and reloaded */
} item;

static bool same_item(const item *a, const item *b)
{
    if (a->block != b->block || a->want != b->want || a->nslots != b->nslots)
        return false;
    for (unsigned i = 0; i < a->nslots; i++)
        if (a->slots[i] != b->slots[i])
            return false;
    return true;
}

static int slot_index(const item *it, int16_t off)
{
    for (unsigned i = 0; i < it->nslots; i++)
        if (it->slots[i] == off)
            return (int)i;
    return -1;
}

static bool table_start(const cfg_program *prog, const cfg_proc *f, uint64_t addr)
{
    if (cfg_is_code(prog, addr))
        return false;
    uint32_t es = cfg_reloc_find(&prog->relocs, addr, R_ALPHA_GPREL32) ? 4 : 8;
    uint64_t t = cfg_table_entry(prog, f, addr, es, 0);
    return t >= f->start && t < f->end;
}

size_t cfg_find_tables(const cfg_slice_ctx *cx, uint32_t block, uint64_t *tables, size_t max)
{
    const cfg_proc *f = cx->f;
    const cfg_program *prog = cx->prog;
    size_t cap = 64, n = 0, nseen = 0, seencap = 64, nt = 0;
    item *work = malloc(cap * sizeof *work);
    item *seen = malloc(seencap * sizeof *seen);
    if (!work || !seen)
        goto out;
    const alpha_insn *jmp = &cx->insns[(f->blocks[block].end - 4 - f->start) / 4];
    if (jmp->rb == REG_ZERO)
        goto out;
    work[n++] = (item){ block, f->blocks[block].end - 4, 1u << jmp->rb, 0, { 0 } };
    unsigned steps = 0;
    while (n && steps < SLICE_STEPS) {
        item it = work[--n];
        const cfg_block *b = &f->blocks[it.block];
        uint32_t want = it.want;
        for (uint64_t a = it.end; a > b->start && (want || it.nslots) && steps < SLICE_STEPS; steps++) {
            a -= 4;
            const alpha_insn *in = &cx->insns[(a - f->start) / 4];
            if (!in->op)
                goto next;      /* undecodable: the path explains nothing */
            if (alpha_flow_of(in) == FLOW_CALL) {
                want &= ~CALL_CLOBBERS;
                continue;
            }
            alpha_regset uses, defs;
            alpha_regs(in, &uses, &defs);
            if (it.nslots && (defs & (1u << REG_SP)))
                it.nslots = 0;      /* the frame moved: give the slots up */
            if (it.nslots && (in->op->flags & OPF_STORE) && in->rb == REG_SP && in->op->size == 8) {
                int k = slot_index(&it, (int16_t)in->disp);
                if (k >= 0) {
                    it.slots[k] = it.slots[--it.nslots];
                    if (in->ra != REG_ZERO)
                        want |= 1u << in->ra;
                }
                continue;
            }
            uint32_t d = (uint32_t)defs & want;
            if (!d)
                continue;
            want &= ~d;
            const cfg_rel *r = cfg_reloc_find(&prog->relocs, a, R_ALPHA_GPRELLOW);
            if (!r)
                r = cfg_reloc_find(&prog->relocs, a, R_ALPHA_GPREL16);
            if (!r)
                r = cfg_reloc_find(&prog->relocs, a, R_ALPHA_LITERAL);
            if (r) {
                if (table_start(prog, f, r->target)) {
                    size_t k = 0;
                    while (k < nt && tables[k] != r->target)
                        k++;
                    if (k == nt && nt < max)
                        tables[nt++] = r->target;
                }
                continue;
            }
            unsigned fmt = in->op->format;
            bool passes = fmt == AF_OPR ||
                          (fmt == AF_MEM && (in->op->flags & (OPF_ADDR | OPF_LOAD)) &&
                           !(in->op->flags & OPF_FPMEM));
            if (passes && (in->op->flags & OPF_LOAD) && in->rb == REG_SP && in->op->size == 8) {
                /* A reload: follow the stack slot back to its store. */
                if (slot_index(&it, (int16_t)in->disp) < 0 && it.nslots < MAXSLOTS)
                    it.slots[it.nslots++] = (int16_t)in->disp;
            } else if (passes) {
                want |= (uint32_t)uses & ~((1u << REG_GP) | (1u << REG_SP) | (1u << REG_ZERO));
            }
        }
        if (!want && !it.nslots)
            continue;
        /* Keep the slot list in a canonical order for the dedup below. */
        for (unsigned i = 1; i < it.nslots; i++)
            for (unsigned k = i; k > 0 && it.slots[k - 1] > it.slots[k]; k--) {
                int16_t t = it.slots[k];
                it.slots[k] = it.slots[k - 1];
                it.slots[k - 1] = t;
            }
        /* Reached the block's start: carry on into every predecessor. */
        for (uint32_t k = 0; k < b->nin; k++) {
            const cfg_edge *e = &f->edges[f->in_edges[b->first_in + k]];
            if (e->from >= f->nblocks)
                continue;
            item nx = it;
            nx.block = e->from;
            nx.end = f->blocks[e->from].end;
            nx.want = want;
            bool dup = false;
            for (size_t s = 0; s < nseen && !dup; s++)
                dup = same_item(&seen[s], &nx);
            if (dup)
                continue;
            if (nseen == seencap) {
                item *t = realloc(seen, 2 * seencap * sizeof *t);
                if (!t)
                    goto out;
                seen = t;
                seencap *= 2;
            }
            seen[nseen++] = nx;
            if (n == cap) {
                item *t = realloc(work, 2 * cap * sizeof *t);
                if (!t)
                    goto out;
                work = t;
                cap *= 2;
            }
            work[n++] = nx;
        }
    next:;
    }
out:
    free(work);
    free(seen);
    return nt;
}

uint32_t cfg_table_extent(const cfg_program *prog, const cfg_proc *f, uint64_t addr,
                          uint64_t stop, uint32_t *entsize)
{
    *entsize = cfg_reloc_find(&prog->relocs, addr, R_ALPHA_GPREL32) ? 4 : 8;
    uint32_t n = 0;
    for (uint64_t a = addr; a < stop; a += *entsize, n++) {
        uint64_t t = cfg_table_entry(prog, f, addr, *entsize, n);
        if (t < f->start || t >= f->end)
            break;
    }
    return n;
}

uint64_t cfg_table_entry(const cfg_program *prog, const cfg_proc *f, uint64_t addr,
                         uint32_t entsize, uint32_t k)
{
    const cfg_rel *r = cfg_reloc_find(&prog->relocs, addr + (uint64_t)k * entsize,
                                      entsize == 4 ? R_ALPHA_GPREL32 : R_ALPHA_REFQUAD);
    if (!r)
        return 0;
    /* GPREL32 targets were computed with the image's GP; an entry is
     * relative to the GP of the procedure that reads it. */
    return entsize == 4 ? r->target - prog->img->gp + f->gp : r->target;
}
