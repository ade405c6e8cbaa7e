/*
 * image/gp.c: the image's GP value.
 *
 * Current GNU ld defines no `_gp` symbol in Alpha executables, so the value
 * is recovered from the code that computes it.  Every procedure sets GP with
 * an `ldah gp,hi(rb); lda gp,lo(gp)` pair (a GPDISP relocation on the ldah,
 * its addend the distance to the lda) where rb holds the ldah's own address:
 * pv at a procedure's first instruction, ra right after a call, gp right
 * after `br gp,.+4` in _start.  So GP = address of the ldah + hi*65536 + lo.
 * In order of trust:
 *   1. the `_gp` symbol, when a linker defined one;
 *   2. the GPDISP pair at the entry point (or, failing that, the first
 *      GPDISP pair whose base register value is known), from the static
 *      relocations;
 *   3. the same pair found by pattern at the entry point, for images
 *      without relocations;
 *   4. _GLOBAL_OFFSET_TABLE_ + 0x8000, else .got + 0x8000: ld points GP
 *      0x8000 into the GOT so that 16-bit displacements reach all of it.
 *      True of every image we build, but a convention, not a fact of the
 *      code: dynamic programs keep 16 bytes of .got before the symbol.
 * Large programs may have several GOTs and so several GP values; all
 * GPDISP pairs are evaluated and the number of distinct values is kept.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "image/internal.h"

/* The instruction at addr, decoded by alpha/'s table. */
static bool insn_at(const image *img, uint64_t addr, alpha_insn *in)
{
    const uint8_t *p = image_bytes_at(img, addr, 4);
    if (!p)
        return false;
    alpha_decode(img_le32(p), in);
    return in->op != NULL;
}

static bool is_ldah(const alpha_insn *i) { return i->op->flags & OPF_LDAH; }
static bool is_lda(const alpha_insn *i) { return (i->op->flags & (OPF_ADDR | OPF_LDAH)) == OPF_ADDR; }

/* GP from `ldah gp,hi(base)` at p and `lda gp,lo(gp)` at q, given that
 * base held `base`. */
static bool pair_gp(const image *img, uint64_t p, uint64_t q, uint64_t base, uint64_t *gp)
{
    alpha_insn hi, lo;
    if (!insn_at(img, p, &hi) || !insn_at(img, q, &lo))
        return false;
    if (!is_ldah(&hi) || hi.ra != REG_GP || !is_lda(&lo) || lo.ra != REG_GP || lo.rb != REG_GP)
        return false;
    *gp = base + (uint64_t)((int64_t)hi.disp * 65536) + (uint64_t)(int64_t)lo.disp;
    return true;
}

/* The ldah's base register value, when the code shape tells it. */
static bool gpdisp_gp(const image *img, uint64_t p, int64_t addend, uint64_t *gp)
{
    alpha_insn hi;
    if (!insn_at(img, p, &hi) || !is_ldah(&hi))
        return false;
    if (hi.rb == REG_PV) {
        const image_symbol *f = image_function_at(img, p);
        if (!f || f->value != p)
            return false;
    } else if (hi.rb != REG_RA && hi.rb != REG_GP) {
        return false;
    }
    return pair_gp(img, p, p + (uint64_t)addend, p, gp);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static bool from_relocs(image *img)
{
    struct image_private *pv = img->priv;
    size_t n = 0, cap = 0;
    uint64_t *vals = NULL, first = 0, at_entry = 0;
    bool have_first = false, have_entry = false;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *r = &img->relsecs[i];
        if (r->dynamic || r->target >= img->nsections || !(img->sections[r->target].flags & SHF_EXECINSTR))
            continue;
        for (size_t k = 0; k < r->count; k++) {
            const image_reloc *x = &r->relocs[k];
            uint64_t g;
            if (x->type != R_ALPHA_GPDISP || !gpdisp_gp(img, x->offset, x->addend, &g))
                continue;
            if (!have_first)
                first = g, have_first = true;
            if (!have_entry && (x->offset == img->entry || x->offset == img->entry + 4))
                at_entry = g, have_entry = true;
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 64;
                uint64_t *nv = realloc(vals, nc * sizeof *nv);
                if (!nv)
                    break;
                vals = nv, cap = nc;
            }
            vals[n++] = g;
        }
    }
    if (n) {
        qsort(vals, n, sizeof *vals, cmp_u64);
        size_t d = 1;
        for (size_t i = 1; i < n; i++)
            d += vals[i] != vals[i - 1];
        pv->gp_distinct = d;
    }
    free(vals);
    if (!have_first)
        return false;
    img->gp = have_entry ? at_entry : first;
    pv->gp_source = have_entry ? "GPDISP pair at the entry point" : "first GPDISP pair";
    return true;
}

static bool from_entry_code(image *img)
{
    uint64_t e = img->entry, g;
    alpha_insn w0, hi;
    if (!insn_at(img, e, &w0))
        return false;
    if (alpha_flow_of(&w0) == FLOW_BRANCH && w0.ra == REG_GP && w0.disp == 0) {
        /* br gp,.+4 leaves its own address + 4 in gp */
        if (!insn_at(img, e + 4, &hi) || !is_ldah(&hi) || hi.rb != REG_GP ||
            !pair_gp(img, e + 4, e + 8, e + 4, &g))
            return false;
    } else if (is_ldah(&w0) && w0.rb == REG_PV) {
        if (!pair_gp(img, e, e + 4, e, &g))
            return false;
    } else {
        return false;
    }
    img->gp = g;
    img->priv->gp_source = "GP set-up code at the entry point";
    return true;
}

void img_find_gp(image *img)
{
    struct image_private *pv = img->priv;
    const image_symbol *s = image_symbol_by_name(img, "_gp");
    bool rel = from_relocs(img);        /* always: it counts distinct GPs */
    img->has_gp = true;
    if (s) {
        img->gp = s->value;
        pv->gp_source = "_gp symbol";
    } else if (rel || from_entry_code(img)) {
        /* set by the helper */
    } else if ((s = image_symbol_by_name(img, "_GLOBAL_OFFSET_TABLE_"))) {
        img->gp = s->value + 0x8000;
        pv->gp_source = "_GLOBAL_OFFSET_TABLE_+0x8000 (guess)";
    } else {
        const image_section *got = image_section_by_name(img, ".got");
        img->has_gp = got != NULL;
        img->gp = got ? got->addr + 0x8000 : 0;
        pv->gp_source = got ? ".got+0x8000 (guess)" : NULL;
    }
}

const char *image_gp_source(const image *img)
{
    return img->has_gp ? img->priv->gp_source : NULL;
}

size_t image_gp_count(const image *img)
{
    return img->priv->gp_distinct;
}
