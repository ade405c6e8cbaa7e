/*
 * rewriter/patch.c: everything outside the moved code that refers to code.
 *
 * Relocations say where: GP-displacement pairs, code addresses built from
 * GP, GOT slots, code pointers and jump-table entries in data.  Then the
 * dynamic section, the symbol tables, the address map and, in check mode,
 * the traps over the old copy.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "rewriter/internal.h"

static bool put_word(rw_ctx *cx, uint64_t addr, uint32_t w)
{
    uint8_t *p = rw_out_at(cx, addr, 4);
    if (!p)
        return rw_fail(cx, "%s: cannot write the instruction at 0x%llx", cx->img->path,
                       (unsigned long long)addr);
    rw_put32(p, w);
    return true;
}

static bool get_word(rw_ctx *cx, uint64_t addr, uint32_t *w)
{
    uint8_t *p = rw_out_at(cx, addr, 4);
    if (!p)
        return rw_fail(cx, "%s: cannot read the instruction at 0x%llx", cx->img->path,
                       (unsigned long long)addr);
    *w = rw_le32(p);
    return true;
}

static uint64_t gp_at(const rw_ctx *cx, uint64_t where)
{
    const cfg_proc *f = rw_proc_of(cx, where);
    return f ? f->gp : cx->img->gp;
}

static bool patch_gpdisp(rw_ctx *cx, const cfg_rel *r)
{
    uint64_t hi_old = r->where, lo_old = r->where + (uint64_t)r->addend;
    uint64_t hi_new = rw_insn_addr(cx, hi_old), lo_new = rw_insn_addr(cx, lo_old);
    if (hi_new == hi_old && lo_new == lo_old)
        return true;
    /* The pair adds to what its base register holds: the ldah's own
     * address, unless inserted code sits between (instrument.c). */
    uint64_t base = rw_gpdisp_base(cx, hi_old);
    uint32_t hw, lw;
    if (!cfg_word(cx->prog, hi_old, &hw) || !cfg_word(cx->prog, lo_old, &lw))
        return rw_fail(cx, "%s: GPDISP at 0x%llx: pair outside the code", cx->img->path,
                       (unsigned long long)hi_old);
    int64_t v = (int64_t)(int16_t)(hw & 0xffff) * 65536 + (int16_t)(lw & 0xffff);
    uint64_t gp = hi_old + (uint64_t)v;
    int64_t nv = (int64_t)(gp - base);
    int64_t hi = (nv + 0x8000) >> 16, lo = nv - hi * 65536;
    if (hi < -32768 || hi > 32767) {
        const cfg_proc *f = rw_proc_of(cx, hi_old);
        if (f)
            rw_pin(cx, f, RW_PIN_GPDISP, "GPDISP at 0x%llx", (unsigned long long)hi_old);
        return true;
    }
    if (!get_word(cx, hi_new, &hw) || !get_word(cx, lo_new, &lw))
        return false;
    alpha_set_mem_disp(&hw, hi);
    alpha_set_mem_disp(&lw, lo);
    return put_word(cx, hi_new, hw) && put_word(cx, lo_new, lw);
}

/* GPRELHIGH/GPRELLOW/GPREL16 that build a code address. */
static bool patch_gprel(rw_ctx *cx, const cfg_rel *r)
{
    int64_t v = (int64_t)(rw_map(cx, r->target) - gp_at(cx, r->where));
    int64_t hi = (v + 0x8000) >> 16;
    int64_t d = r->type == R_ALPHA_GPRELHIGH ? hi : r->type == R_ALPHA_GPRELLOW ? v - hi * 65536 : v;
    uint64_t at = rw_map(cx, r->where);
    uint32_t w;
    if (!get_word(cx, at, &w))
        return false;
    if (d < -32768 || d > 32767) {
        const cfg_proc *tf = rw_proc_of(cx, r->target);
        if (tf)
            rw_pin(cx, tf, RW_PIN_GPREL16, "GP-relative reference at 0x%llx",
                   (unsigned long long)r->where);
        return true;
    }
    alpha_set_mem_disp(&w, d);
    return put_word(cx, at, w);
}

bool rw_patch_relocs(rw_ctx *cx)
{
    const cfg_relocs *rs = &cx->prog->relocs;
    for (size_t i = 0; i < rs->n; i++) {
        const cfg_rel *r = &rs->r[i];
        bool code = cfg_is_code(cx->prog, r->where);
        if (r->type == R_ALPHA_GPDISP) {
            if (code && !patch_gpdisp(cx, r))
                return false;
            continue;
        }
        if (!rw_moved(cx, r->target))
            continue;
        uint64_t nt = rw_map(cx, r->target);
        /* A jump table's entry may now go to its edge's stub. */
        if (!code && (r->type == R_ALPHA_GPREL32 || r->type == R_ALPHA_REFQUAD)) {
            uint64_t s = rw_table_stub(cx, r->where, r->target);
            nt = s ? s : nt;
        }
        int64_t delta = (int64_t)(nt - r->target);
        uint8_t *p;
        switch (r->type) {
        case R_ALPHA_BRADDR: case R_ALPHA_BRSGP: case R_ALPHA_HINT: case R_ALPHA_LITUSE:
        case R_ALPHA_NONE:
            break;      /* branches and hints are decoded, not relocated */
        case R_ALPHA_GPRELHIGH: case R_ALPHA_GPRELLOW: case R_ALPHA_GPREL16:
            if (code && !patch_gprel(cx, r))
                return false;
            break;
        case R_ALPHA_LITERAL: {
            if (!code)
                break;
            uint32_t w;
            cfg_word(cx->prog, r->where, &w);
            uint64_t slot = gp_at(cx, r->where) + (uint64_t)(int64_t)(int16_t)(w & 0xffff);
            if (!(p = rw_out_at(cx, slot, 8)))
                return rw_fail(cx, "%s: GOT slot 0x%llx of the LITERAL at 0x%llx is not in the file",
                               cx->img->path, (unsigned long long)slot, (unsigned long long)r->where);
            rw_put64(p, nt);
            break;
        }
        case R_ALPHA_REFQUAD:
            if (code)
                break;
            if (!(p = rw_out_at(cx, r->where, 8)))
                break;      /* in .bss: nothing stored */
            rw_put64(p, rw_le64(p) + (uint64_t)delta);
            break;
        case R_ALPHA_GPREL32: case R_ALPHA_SREL32: {
            if (code || (cx->old_eh && r->where >= cx->old_eh->addr &&
                         r->where < cx->old_eh->addr + cx->old_eh->size))
                break;      /* .eh_frame is rebuilt whole */
            if (!(p = rw_out_at(cx, r->where, 4)))
                break;
            int64_t nv = (int64_t)(int32_t)rw_le32(p) + delta;
            if (nv < INT32_MIN || nv > INT32_MAX) {
                const cfg_proc *tf = rw_proc_of(cx, r->target);
                if (tf)
                    rw_pin(cx, tf, RW_PIN_RELOC, "32-bit offset at 0x%llx would overflow",
                           (unsigned long long)r->where);
                break;
            }
            rw_put32(p, (uint32_t)nv);
            break;
        }
        case R_ALPHA_SREL64:
            if (!code && (p = rw_out_at(cx, r->where, 8)))
                rw_put64(p, rw_le64(p) + (uint64_t)delta);
            break;
        default:
            if (r->secsym)
                break;      /* its S + A means nothing: not a code reference we know */
            {
                const cfg_proc *tf = rw_proc_of(cx, r->target);
                if (tf)
                    rw_pin(cx, tf, RW_PIN_RELOC, "%s at 0x%llx",
                           image_reloc_name(r->type) ? image_reloc_name(r->type) : "relocation",
                           (unsigned long long)r->where);
            }
            break;
        }
    }
    return true;
}

bool rw_patch_symbols(rw_ctx *cx, uint16_t text_shndx)
{
    const image *img = cx->img;
    for (size_t s = 0; s < img->nsections; s++) {
        const image_section *sec = &img->sections[s];
        if ((sec->type != SHT_SYMTAB && sec->type != SHT_DYNSYM) || sec->offset + sec->size > cx->out_size)
            continue;
        for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sec->size; o += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            memcpy(&sym, cx->out + sec->offset + o, sizeof sym);
            if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
                ELF64_ST_TYPE(sym.st_info) == STT_SECTION || !rw_moved(cx, sym.st_value))
                continue;
            const cfg_proc *f = rw_proc_of(cx, sym.st_value);
            if (f && f->start == sym.st_value && sym.st_size) {
                const rw_proc *p = &cx->procs[f - cx->prog->procs];
                /* The entry's part: a procedure may lie wholly in the cold area. */
                sym.st_size = p->hot_n ? p->hot_end - p->hot_start : p->cold_end - p->cold_start;
            }
            sym.st_value = rw_map(cx, sym.st_value);
            if (sec->type == SHT_SYMTAB)
                sym.st_shndx = text_shndx;
            memcpy(cx->out + sec->offset + o, &sym, sizeof sym);
        }
    }
    return true;
}

bool rw_patch_dynamic(rw_ctx *cx)
{
    const image_section *d = NULL;
    for (size_t s = 0; s < cx->img->nsections; s++)
        if (cx->img->sections[s].type == SHT_DYNAMIC)
            d = &cx->img->sections[s];
    if (d && d->offset + d->size <= cx->out_size) {
        for (uint64_t o = 0; o + 16 <= d->size; o += 16) {
            uint8_t *p = cx->out + d->offset + o;
            int64_t tag = (int64_t)rw_le64(p);
            if (tag == DT_NULL)
                break;
            if ((tag == DT_INIT || tag == DT_FINI) && rw_moved(cx, rw_le64(p + 8)))
                rw_put64(p + 8, rw_map(cx, rw_le64(p + 8)));
        }
    }
    /* Dynamic relocations with the code address in the addend. */
    for (size_t i = 0; i < cx->img->nrelsecs; i++) {
        const image_relsec *rs = &cx->img->relsecs[i];
        if (!rs->dynamic)
            continue;
        const image_section *sec = &cx->img->sections[rs->index];
        if (sec->type != SHT_RELA || sec->offset + sec->size > cx->out_size)
            continue;
        for (size_t k = 0; k < rs->count; k++) {
            const image_reloc *r = &rs->relocs[k];
            if (r->type != R_ALPHA_RELATIVE || !rw_moved(cx, (uint64_t)r->addend))
                continue;
            uint8_t *p = cx->out + sec->offset + k * sizeof(Elf64_Rela);
            rw_put64(p + 16, rw_map(cx, (uint64_t)r->addend));
            uint8_t *v = rw_out_at(cx, r->offset, 8);
            if (v && rw_le64(v) == (uint64_t)r->addend)
                rw_put64(v, rw_map(cx, (uint64_t)r->addend));
        }
    }
    return true;
}

/* A block with inserted code: each instruction, and the code inserted at
 * it (which maps to it; a stub, to its target). */
static bool ins_entries(rw_ctx *cx, const rw_item *it, const cfg_block *b)
{
    uint64_t pc = it->addr, end = b->end - (it->drop ? 4 : 0);
    for (uint64_t o = b->start; o < end; o += 4) {
        size_t k;
        const struct rw_snip *s = rw_snips_at(cx, o, &k);
        for (size_t j = 0; j < k; j++)
            if (!rw_snip_is_after(&s[j])) {
                if (!addrmap_add(&cx->am, pc, o, rw_snip_bytes(&s[j]), AM_INSTR))
                    return false;
                pc += rw_snip_bytes(&s[j]);
            }
        if (!addrmap_add(&cx->am, pc, o, 4, AM_CODE))
            return false;
        pc += 4;
        for (size_t j = 0; j < k; j++)
            if (rw_snip_is_after(&s[j])) {
                /* A stub stands for its target: only the way there runs it. */
                uint64_t so = rw_snip_stub(&s[j]) ? rw_snip_stub(&s[j]) : o;
                if (!addrmap_add(&cx->am, pc, so, rw_snip_bytes(&s[j]), AM_INSTR))
                    return false;
                pc += rw_snip_bytes(&s[j]);
            }
    }
    return true;
}

bool rw_build_addrmap(rw_ctx *cx)
{
    addrmap *m = &cx->am;
    m->build_id_len = cx->img->build_id_len;
    memcpy(m->build_id, cx->img->build_id, cx->img->build_id_len);
    if (cx->ins && !addrmap_add(m, cx->text_addr, cx->img->entry, (uint32_t)rw_instr_blob_size(cx), AM_INSTR))
        return rw_fail(cx, "out of memory");
    for (size_t i = 0; i < cx->nitems; i++) {
        const rw_item *it = &cx->items[i];
        const cfg_block *b = &cx->prog->procs[it->proc].blocks[it->block];
        uint32_t body = (uint32_t)(b->end - b->start) - (it->drop ? 4 : 0);
        if (!addrmap_add(m, it->addr - it->pad, b->start, it->pad, AM_PAD) ||
            (it->ins ? !ins_entries(cx, it, b) : !addrmap_add(m, it->addr, b->start, body, AM_CODE)) ||
            (it->addbr && !addrmap_add(m, it->addr + it->size - 4, b->end - 4, 4, AM_BRANCH)))
            return rw_fail(cx, "out of memory");
    }
    return true;
}

void rw_trap_old_code(rw_ctx *cx)
{
    for (size_t i = 0; i < cx->prog->nprocs; i++) {
        if (cx->procs[i].reason != RW_MOVED)
            continue;
        const cfg_proc *f = &cx->prog->procs[i];
        for (uint64_t o = f->start; o < f->end; o += 4) {
            uint8_t *p = rw_out_at(cx, o, 4);
            if (p)
                rw_put32(p, ALPHA_TRAP_WORD);
        }
    }
}

/* The new image is another build: profiles are keyed by build-id, and
 * samples of the new code must not be merged with the original's.  The new
 * id (same length) is derived from the original's, the new code and the
 * mode; the address map keeps the original's. */
bool rw_new_build_id(rw_ctx *cx)
{
    const image *img = cx->img;
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if (s->type != SHT_NOTE || !s->data || s->offset + s->size > cx->out_size)
            continue;
        uint64_t al = s->align == 8 ? 8 : 4, off = 0;
        while (s->size - off >= 12) {
            uint8_t *p = cx->out + s->offset + off;
            uint64_t nsz = rw_le32(p), dsz = rw_le32(p + 4);
            uint64_t nal = (nsz + al - 1) & ~(al - 1), dal = (dsz + al - 1) & ~(al - 1);
            if (nal > s->size - off - 12 || dsz > s->size - off - 12 - nal)
                break;
            if (rw_le32(p + 8) == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + 12, "GNU", 4)) {
                uint8_t *id = p + 12 + nal, mode = cx->opt->check;
                for (uint64_t k = 0; k < dsz; k += 8) {
                    /* FNV-1a from a seed per word: a build-id nobody else has. */
                    uint64_t h = fnv1a(FNV1A_INIT ^ (k * 0x9e3779b97f4a7c15ull), id, dsz);
                    h = fnv1a(h, cx->text, cx->text_size);
                    h = fnv1a(h, cx->eh, cx->eh_size);
                    h = fnv1a(h, &mode, 1);
                    for (uint64_t b = 0; b < 8 && k + b < dsz; b++)
                        id[k + b] = (uint8_t)(h >> (8 * b));
                }
                return true;
            }
            if (dal > s->size - off - 12 - nal)
                break;
            off += 12 + nal + dal;
        }
    }
    return true;
}
