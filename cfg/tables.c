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
#include <string.h>

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
/* Resolve every table jump of f (blocks flagged CFG_BF_TABLE by the
 * builder) and add its table edges to eb; a jump with no table becomes
 * CFG_BF_INDIRECT and the CFG is missing edges.  False when out of memory. */
bool cfg_table_edges(const cfg_program *p, cfg_proc *f, const alpha_insn *ins, cfg_ebuild *eb)
{
    size_t nb = f->nblocks;
    bool any = false;
    for (size_t b = 0; b < nb; b++)
        any |= (f->blocks[b].flags & CFG_BF_TABLE) != 0;
    if (any) {
        /* Temporary predecessor lists for the slicer. */
        uint32_t *cnt = calloc(nb + 1, sizeof *cnt);
        uint32_t *idx = malloc((eb->n ? eb->n : 1) * sizeof *idx);
        if (!cnt || !idx) {
            free(cnt);
            free(idx);
            return false;
        }
        for (size_t e = 0; e < eb->n; e++)
            if (eb->e[e].to < nb)
                cnt[eb->e[e].to + 1]++;
        for (size_t b = 0; b < nb; b++)
            cnt[b + 1] += cnt[b];
        for (size_t b = 0; b < nb; b++) {
            f->blocks[b].first_in = cnt[b];
            f->blocks[b].nin = 0;
        }
        for (size_t e = 0; e < eb->n; e++)
            if (eb->e[e].to < nb) {
                cfg_block *t = &f->blocks[eb->e[e].to];
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
                cfg_set_why(f, "0x%llx: indirect jump with no table found",
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
                    return false;
                f->tables = tt;
                f->tables[f->ntables++] = (cfg_table){ f->blocks[b].end - 4, found[j][q], es, cnt2 };
                for (uint32_t e = 0; e < cnt2; e++) {
                    uint64_t t = cfg_table_entry(p, f, found[j][q], es, e);
                    uint32_t tb = cfg_block_at(f, t);
                    if (tb == CFG_NONE || f->blocks[tb].start != t)
                        continue;
                    if (!cfg_edge_add(eb, b, tb, CFG_EDGE_TABLE, t))
                        return false;
                    added++;
                }
            }
            if (!added) {
                f->blocks[b].flags = (f->blocks[b].flags & ~CFG_BF_TABLE) | CFG_BF_INDIRECT;
                cfg_set_why(f, "0x%llx: jump table has no entries in the procedure",
                        (unsigned long long)(f->blocks[b].end - 4));
            }
        }
        f->edges = eb->e;
        f->nedges = eb->n;
    }
    return true;
}

/* Table targets are not entries: the builder marked every address data
 * refers to, but a GPREL32 or REFQUAD table read by this procedure's own
 * jump must not make its cases alternate entries.  Clear the entries that
 * only tables of resolved jumps point at. */
void cfg_table_entries(cfg_proc *f, const cfg_ref *refs, size_t nrefs)
{
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

}
