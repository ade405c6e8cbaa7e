/*
 * rewriter/ehframe.c: the unwind tables (.eh_frame, .eh_frame_hdr) of the
 * new image.
 *
 * The old .eh_frame sits in the read-only text segment and cannot grow, so
 * a complete new one goes into the new segment with a new .eh_frame_hdr,
 * and PT_GNU_EH_FRAME points there (added if the image had none, as static
 * ones do: elfout.c); the old tables stay, renamed.  A static image's
 * crtbeginT still registers the old .eh_frame, which is right for the code
 * left in place and names no new address, so the unwinder goes on to ours.
 * It registers the table from __EH_FRAME_BEGIN__ on, so the original's
 * unwinder never saw the FDEs before it (crt1's, for _start: a walk ends
 * there); ours leaves them out of the search table too.
 * Every CIE is copied.  An FDE for code that did not move is copied with its
 * PC-relative fields recomputed for its new place.  An FDE for moved code is
 * run into rows and written again for each contiguous piece of the new code
 * (the hot part, the cold part), so that every moved instruction unwinds with
 * the rules it had, and the branches and padding the rewriter added unwind
 * like the code they lead to.  Procedures whose FDE uses expressions, or has
 * an LSDA (exception tables point into the code by offset), stay in place.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/ehframe.h"
#include "rewriter/cfi.h"
#include "rewriter/internal.h"
#include "rewriter/lsda.h"

static bool put_ptr(uint8_t *p, uint8_t enc, uint64_t value, uint64_t field_addr)
{
    size_t n = eh_enc_size(enc);
    if ((enc & 0x70) == PE_PCREL && value)
        value -= field_addr;
    if ((enc & 0x0f) == PE_S4 && (int64_t)value != (int32_t)value)
        return false;
    if ((enc & 0x0f) == PE_U4 && value > UINT32_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(value >> (8 * i));
    return true;
}

/* ---- analysis: what cannot move --------------------------------------- */

/* An FDE we cannot rewrite row by row: when it covers one procedure alone,
 * that procedure moves whole and the FDE is copied with a new start (its
 * program and any LSDA are relative to that start); otherwise every
 * procedure it touches stays in place. */
static void keep_shape(rw_ctx *cx, uint64_t lo, uint64_t hi, rw_reason why, const char *what)
{
    const cfg_proc *one = NULL;
    size_t n = 0;
    for (size_t i = 0; i < cx->prog->nprocs; i++) {
        const cfg_proc *f = &cx->prog->procs[i];
        if (f->start < hi && lo < f->end) {
            one = f;
            n++;
        }
    }
    if (n == 1 && lo >= one->start && hi <= one->end) {
        rw_rigid(cx, one, why, "%s", what);
        return;
    }
    for (size_t i = 0; i < cx->prog->nprocs; i++) {
        const cfg_proc *f = &cx->prog->procs[i];
        if (f->start < hi && lo < f->end)
            rw_pin(cx, f, why, "%s", what);
    }
}

bool rw_eh_analyse(rw_ctx *cx)
{
    const image_section *s = cx->old_eh;
    if (!s || !s->data || !s->size)
        return true;
    eh_frame *e = calloc(1, sizeof *e);
    if (!e)
        return rw_fail(cx, "out of memory");
    cx->ehs = e;
    e->d = s->data;
    e->addr = s->addr;
    e->size = s->size;
    char perr[200];
    if (!eh_frame_parse(e, perr, sizeof perr))
        return rw_fail(cx, "%s: %s", cx->img->path, perr);
    cfi_rows rows = { 0 };
    for (size_t i = 0; i < e->nfde; i++) {
        eh_fde *f = &e->fde[i];
        const eh_cie *c = &e->cie[f->cie];
        char err[160], what[200];
        if (!f->range)
            continue;
        if (f->lsda) {
            /* Rewritable when it covers one procedure and we can read it. */
            const cfg_proc *p = cfg_proc_at(cx->prog, f->begin);
            char lerr[160];
            if (!cx->lsdas && !(cx->lsdas = calloc(e->nfde, sizeof *cx->lsdas)))
                return rw_fail(cx, "out of memory");
            if (!p || f->begin + f->range > p->end) {
                snprintf(what, sizeof what, "FDE at 0x%llx with an LSDA spans procedures",
                         (unsigned long long)(e->addr + f->off));
                keep_shape(cx, f->begin, f->begin + f->range, RW_PIN_LSDA, what);
            } else if (!lsda_read(cx->img, f->lsda, f->begin, &cx->lsdas[i], lerr, sizeof lerr)) {
                snprintf(what, sizeof what, "%s", lerr);
                keep_shape(cx, f->begin, f->begin + f->range, RW_PIN_LSDA, what);
            }
        }
        cfi_row cur = c->init;
        rows.n = 0;
        if (!cfi_run(e->d + f->prog_off, f->prog_len, &c->ci, &c->init, f->begin, 0, &cur, &rows,
                     err, sizeof err)) {
            f->bad = true;
            snprintf(what, sizeof what, "FDE at 0x%llx: %s", (unsigned long long)(e->addr + f->off), err);
            keep_shape(cx, f->begin, f->begin + f->range, RW_PIN_CFI, what);
        }
    }
    free(rows.row);
    return true;
}

void rw_eh_free(rw_ctx *cx)
{
    if (!cx->ehs)
        return;
    for (size_t i = 0; cx->lsdas && i < cx->ehs->nfde; i++)
        lsda_free(&cx->lsdas[i]);
    free(cx->lsdas);
    cx->lsdas = NULL;
    eh_frame_release(cx->ehs);
    cx->ehs = NULL;
}

/* ---- building ------------------------------------------------------------ */

typedef struct hdr_ent {
    uint64_t loc, fde;
} hdr_ent;

typedef struct fixup {
    size_t field;                /* LSDA pointer's offset in the new .eh_frame */
    size_t target;               /* the new LSDA's offset in gxt */
    uint8_t enc;
} fixup;

typedef struct builder {
    rw_ctx *cx;
    eh_frame *e;
    bool hidden;                 /* this FDE: written, but not in the table */
    cfi_out o;                   /* the new .eh_frame */
    hdr_ent *tab;
    size_t ntab, captab;
    cfi_out gxt;                 /* new LSDAs */
    fixup *fix;
    size_t nfix, capfix;
    lsda_site *sites;            /* scratch */
    size_t capsites;
} builder;

static bool tab_add(builder *b, uint64_t loc, uint64_t fde)
{
    if (b->hidden)
        return true;
    if (b->ntab == b->captab) {
        b->captab = b->captab ? 2 * b->captab : 256;
        hdr_ent *t = realloc(b->tab, b->captab * sizeof *t);
        if (!t)
            return false;
        b->tab = t;
    }
    b->tab[b->ntab++] = (hdr_ent){ loc, fde };
    return true;
}

static void pad4(cfi_out *o, size_t start)
{
    static const uint8_t z[4];
    size_t n = (4 - (o->n - start) % 4) % 4;
    cfi_put(o, z, n);        /* DW_CFA_nop */
}

static bool emit_cies(builder *b)
{
    rw_ctx *cx = b->cx;
    for (size_t i = 0; i < b->e->ncie; i++) {
        eh_cie *c = &b->e->cie[i];
        size_t at = b->o.n;
        c->new_addr = cx->eh_addr + at;
        cfi_put(&b->o, b->e->d + c->off, c->size);
        if (b->o.oom)
            return rw_fail(cx, "out of memory");
        if (c->pers_enc != PE_OMIT && (c->pers_enc & 0x70) == PE_PCREL) {
            uint64_t v;
            if (!eh_read_ptr(b->e, c->pers_off, c->pers_enc, true, &v))
                return rw_fail(cx, "%s: .eh_frame: personality encoding 0x%x not handled",
                               cx->img->path, c->pers_enc);
            size_t po = at + (c->pers_off - c->off);
            if (!put_ptr(b->o.b + po, c->pers_enc, v, cx->eh_addr + po))
                return rw_fail(cx, "%s: .eh_frame: personality pointer out of range", cx->img->path);
        }
    }
    return true;
}

/* Header of an FDE: length (patched later), CIE pointer, range, aug data. */
static size_t fde_head(builder *b, const eh_fde *f, uint64_t begin, uint64_t range, size_t *lenpos,
                       size_t *augpos)
{
    const eh_cie *c = &b->e->cie[f->cie];
    uint8_t z[8] = { 0 };
    size_t at = b->o.n;
    *lenpos = at;
    cfi_put(&b->o, z, 4);
    uint8_t idb[4];
    rw_put32(idb, (uint32_t)(at + 4 - (c->new_addr - b->cx->eh_addr)));
    cfi_put(&b->o, idb, 4);
    size_t n = eh_enc_size(c->ci.fde_enc);
    size_t bp = b->o.n;
    cfi_put(&b->o, z, n);
    cfi_put(&b->o, z, n);
    if (b->o.oom)
        return SIZE_MAX;
    if (!put_ptr(b->o.b + bp, c->ci.fde_enc, begin, b->cx->eh_addr + bp) ||
        !put_ptr(b->o.b + bp + n, c->ci.fde_enc & 0x0f, range, 0))
        return SIZE_MAX;
    *augpos = SIZE_MAX;
    if (c->z) {
        cfi_uleb(&b->o, f->aug_len);
        size_t ap = b->o.n;
        *augpos = ap;
        cfi_put(&b->o, b->e->d + f->aug_off, f->aug_len);
        if (f->lsda_off && !b->o.oom) {
            /* Moved code has no LSDA (it would have been pinned); a copied
             * FDE keeps its LSDA, re-encoded for its new place. */
            if (!put_ptr(b->o.b + ap, c->lsda_enc, f->lsda, b->cx->eh_addr + ap))
                return SIZE_MAX;
        }
    }
    return at;
}

static bool fde_done(builder *b, size_t lenpos)
{
    pad4(&b->o, lenpos);
    if (b->o.oom)
        return rw_fail(b->cx, "out of memory");
    rw_put32(b->o.b + lenpos, (uint32_t)(b->o.n - lenpos - 4));
    return true;
}

static bool copy_fde(builder *b, const eh_fde *f, uint64_t begin)
{
    size_t lenpos, augpos;
    size_t at = fde_head(b, f, begin, f->range, &lenpos, &augpos);
    if (at == SIZE_MAX)
        return rw_fail(b->cx, "%s: .eh_frame: FDE at 0x%zx cannot be placed", b->cx->img->path, f->off);
    cfi_put(&b->o, b->e->d + f->prog_off, f->prog_len);
    b->cx->st->fdes_copied++;
    return fde_done(b, lenpos) && tab_add(b, begin, b->cx->eh_addr + at);
}

/* One unit of new code: its new address and the old address whose row it
 * must have. */
typedef struct unit {
    uint64_t addr, old;
    bool code;                   /* an original instruction (not padding, not an added br) */
    int bias;                    /* inserted code with sp this much lower (a spill) */
} unit;

/* A new LSDA for the piece u[0..n), written to b->gxt; its place is
 * patched into the FDE's augmentation at augpos once gxt has an address. */
static bool piece_lsda(builder *b, const eh_fde *f, const lsda *l, const unit *u, size_t n,
                       size_t augpos)
{
    rw_ctx *cx = b->cx;
    const eh_cie *c = &b->e->cie[f->cie];
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        const lsda_site *s = u[i].code ? lsda_at(l, u[i].old) : NULL;
        if (!s)
            continue;
        uint64_t lp = s->lp ? rw_map(cx, s->lp) : 0;
        if (ns && b->sites[ns - 1].end == u[i].addr && b->sites[ns - 1].lp == lp &&
            b->sites[ns - 1].action == s->action) {
            b->sites[ns - 1].end += 4;
            continue;
        }
        if (ns == b->capsites) {
            b->capsites = b->capsites ? 2 * b->capsites : 64;
            lsda_site *t = realloc(b->sites, b->capsites * sizeof *t);
            if (!t)
                return rw_fail(cx, "out of memory");
            b->sites = t;
        }
        b->sites[ns++] = (lsda_site){ u[i].addr, u[i].addr + 4, lp, s->action };
    }
    if (augpos == SIZE_MAX || !eh_enc_size(c->lsda_enc))
        return rw_fail(cx, "%s: .eh_frame: FDE at 0x%zx: no room for its LSDA pointer",
                       cx->img->path, f->off);
    if (b->nfix == b->capfix) {
        b->capfix = b->capfix ? 2 * b->capfix : 64;
        fixup *t = realloc(b->fix, b->capfix * sizeof *t);
        if (!t)
            return rw_fail(cx, "out of memory");
        b->fix = t;
    }
    while (b->gxt.n % 4)
        cfi_put(&b->gxt, "", 1);
    b->fix[b->nfix++] = (fixup){ augpos, b->gxt.n, c->lsda_enc };
    lsda_write(&b->gxt, u[0].addr, b->sites, ns, l->actions, l->actions_len);
    return !b->gxt.oom || rw_fail(cx, "out of memory");
}

static bool emit_piece(builder *b, const eh_fde *f, const cfi_rows *rows, const unit *u, size_t n,
                       uint64_t end)
{
    const eh_cie *c = &b->e->cie[f->cie];
    size_t lenpos, augpos;
    size_t at = fde_head(b, f, u[0].addr, end - u[0].addr, &lenpos, &augpos);
    if (at == SIZE_MAX)
        return rw_fail(b->cx, "%s: .eh_frame: new FDE for 0x%llx cannot be placed",
                       b->cx->img->path, (unsigned long long)u[0].addr);
    cfi_row cur = c->init;
    uint64_t loc = u[0].addr;
    for (size_t i = 0; i < n; i++) {
        const cfi_row *want = cfi_at(rows, u[i].old);
        cfi_row moved;
        if (u[i].bias && want->cfa_reg == REG_SP) {
            moved = *want;
            moved.cfa_off += u[i].bias;
            want = &moved;
        }
        if (cfi_same(&cur, want))
            continue;
        if (!cfi_emit_advance(&b->o, &c->ci, u[i].addr - loc))
            return rw_fail(b->cx, "%s: .eh_frame: moved code at 0x%llx is not a whole number of "
                           "the CIE's code alignment (%llu) away from its FDE's start",
                           b->cx->img->path, (unsigned long long)u[i].addr,
                           (unsigned long long)c->ci.code_align);
        loc = u[i].addr;
        if (!cfi_emit_delta(&b->o, &c->ci, &c->init, &cur, want))
            return rw_fail(b->cx, "%s: .eh_frame: cannot express the unwind rules at 0x%llx",
                           b->cx->img->path, (unsigned long long)u[i].old);
        cur = *want;
        cur.loc = loc;
    }
    b->cx->st->fdes_new++;
    const lsda *l = b->cx->lsdas ? &b->cx->lsdas[f - b->e->fde] : NULL;
    if (f->lsda && l && l->nsites && !piece_lsda(b, f, l, u, n, augpos))
        return false;
    return fde_done(b, lenpos) && tab_add(b, u[0].addr, b->cx->eh_addr + at);
}

/* Index of the first procedure that ends above lo. */
static size_t first_proc(const cfg_program *p, uint64_t lo)
{
    size_t l = 0, h = p->nprocs;
    while (l < h) {
        size_t m = (l + h) / 2;
        if (p->procs[m].end <= lo)
            l = m + 1;
        else
            h = m;
    }
    return l;
}

/* The units of a block with inserted code: code inserted before an
 * instruction unwinds as that instruction, code after it (after a call,
 * or a block's last instruction falling through) as the next one, a
 * table jump's stub as the jump (it changed nothing but the pc). */
static size_t ins_units(const rw_ctx *cx, const rw_item *it, const cfg_block *bl, uint64_t lo,
                        uint64_t hi, unit *u, size_t n)
{
    uint64_t pc = it->addr, end = bl->end - (it->drop ? 4 : 0);
    for (uint64_t o = bl->start; o < end; o += 4) {
        size_t k;
        const struct rw_snip *s = rw_snips_at(cx, o, &k);
        uint64_t next = o + 4 < hi && o + 4 >= lo ? o + 4 : o;
        for (size_t j = 0; j < k; j++)
            if (!rw_snip_is_after(&s[j]))
                for (uint32_t b = 0; b < rw_snip_bytes(&s[j]); b += 4, pc += 4)
                    u[n++] = (unit){ pc, o, false, rw_snip_bias(&s[j], b) };
        u[n++] = (unit){ pc, o, true, 0 };
        pc += 4;
        for (size_t j = 0; j < k; j++)
            if (rw_snip_is_after(&s[j]))
                for (uint32_t b = 0; b < rw_snip_bytes(&s[j]); b += 4, pc += 4)
                    u[n++] = (unit){ pc, rw_snip_stub(&s[j]) ? o : next, false, rw_snip_bias(&s[j], b) };
    }
    return n;
}

static bool grow_units(rw_ctx *cx, unit **ubuf, size_t *ucap, size_t need)
{
    if (need <= *ucap)
        return true;
    size_t cap = need * 2;
    unit *nu = realloc(*ubuf, cap * sizeof *nu);
    if (!nu)
        return rw_fail(cx, "out of memory");
    *ubuf = nu;
    *ucap = cap;
    return true;
}

/* Regenerate FDE f, which covers moved code, as one FDE per piece. */
static bool rebuild_fde(builder *b, const eh_fde *f, unit **ubuf, size_t *ucap)
{
    rw_ctx *cx = b->cx;
    cfi_rows rows = { 0 };
    char err[160];
    if (!eh_frame_rows(b->e, (size_t)(f - b->e->fde), &rows, err, sizeof err)) {
        free(rows.row);
        return rw_fail(cx, "%s: .eh_frame: FDE at 0x%zx: %s", cx->img->path, f->off, err);
    }
    uint64_t lo = f->begin, hi = f->begin + f->range;
    bool ok = true;
    for (size_t i = first_proc(cx->prog, lo); ok && i < cx->prog->nprocs; i++) {
        const cfg_proc *p = &cx->prog->procs[i];
        const rw_proc *rp = &cx->procs[i];
        if (p->start >= hi)
            break;
        if (rp->reason != RW_MOVED) {
            /* Pinned code keeps its addresses: rows at the same places. */
            uint64_t s = p->start > lo ? p->start : lo, e = p->end < hi ? p->end : hi;
            size_t n = (size_t)((e - s) / 4);
            if (!n || !(ok = grow_units(cx, ubuf, ucap, n)))
                continue;
            for (size_t k = 0; k < n; k++)
                (*ubuf)[k] = (unit){ s + 4 * k, s + 4 * k, true, 0 };
            ok = emit_piece(b, f, &rows, *ubuf, n, e);
            continue;
        }
        /* Moved: its hot items, then its cold ones, cut into pieces where
         * the new addresses stop being contiguous or leave this FDE. */
        for (int part = 0; ok && part < 2; part++) {
            size_t first = part ? rp->cold_first : rp->hot_first;
            size_t cnt = part ? rp->cold_n : rp->hot_n;
            size_t n = 0;
            uint64_t next = 0;
            for (size_t j = first; ok && j <= first + cnt; j++) {
                const rw_item *it = j < first + cnt ? &cx->items[j] : NULL;
                const cfg_block *bl = it ? &p->blocks[it->block] : NULL;
                bool in = it && bl->start >= lo && bl->start < hi;
                if (n && (!in || it->addr - it->pad != next)) {
                    ok = emit_piece(b, f, &rows, *ubuf, n, next);
                    n = 0;
                }
                if (!in || !ok)
                    continue;
                if (!(ok = grow_units(cx, ubuf, ucap, n + it->pad / 4 + it->size / 4 + 1)))
                    break;
                unit *u = *ubuf;
                /* Padding before a piece belongs to nothing that runs. */
                for (uint32_t k = 0; n && k < it->pad; k += 4)
                    u[n++] = (unit){ it->addr - it->pad + k, bl->start, false, 0 };
                uint32_t body = (uint32_t)(bl->end - bl->start) - (it->drop ? 4 : 0);
                if (it->ins)
                    n = ins_units(cx, it, bl, lo, hi, u, n);
                else
                    for (uint32_t k = 0; k < body; k += 4)
                        u[n++] = (unit){ it->addr + k, bl->start + k, true, 0 };
                if (it->addbr) {
                    uint64_t o = it->brto >= lo && it->brto < hi ? it->brto : bl->end - 4;
                    u[n++] = (unit){ it->addr + it->size - 4, o, false, 0 };
                }
                next = it->addr + it->size;
            }
        }
    }
    free(rows.row);
    return ok;
}

static int by_loc(const void *a, const void *b)
{
    const hdr_ent *x = a, *y = b;
    return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static bool touches_moved(const rw_ctx *cx, uint64_t lo, uint64_t hi)
{
    for (size_t i = first_proc(cx->prog, lo); i < cx->prog->nprocs; i++) {
        if (cx->prog->procs[i].start >= hi)
            break;
        if (cx->procs[i].reason == RW_MOVED)
            return true;
    }
    return false;
}

uint64_t rw_eh_first_visible(const image *img)
{
    for (size_t i = 0; i < img->nsegments; i++)
        if (img->segments[i].type == PT_GNU_EH_FRAME)
            return 0;
    const image_section *s = image_section_by_name(img, ".eh_frame");
    const image_symbol *b = image_symbol_by_name(img, "__EH_FRAME_BEGIN__");
    return s && b && b->value >= s->addr && b->value < s->addr + s->size ? b->value - s->addr : 0;
}

bool rw_eh_build(rw_ctx *cx)
{
    eh_frame *e = cx->ehs;
    if (!e)
        return true;
    builder b = { .cx = cx, .e = e };
    unit *ubuf = NULL;
    size_t ucap = 0;
    cx->eh_addr = (cx->text_addr + cx->text_size + 7) & ~(uint64_t)7;
    bool ok = emit_cies(&b);
    uint64_t visible = rw_eh_first_visible(cx->img);
    for (size_t i = 0; ok && i < e->nfde; i++) {
        const eh_fde *f = &e->fde[i];
        if (!f->range || !f->begin)
            continue;       /* left over from discarded sections */
        b.hidden = f->off < visible;
        const cfg_proc *p = cfg_proc_at(cx->prog, f->begin);
        const rw_proc *rp = p ? &cx->procs[p - cx->prog->procs] : NULL;
        if (rp && rp->reason == RW_MOVED && rp->rigid && f->begin + f->range <= p->end)
            ok = copy_fde(&b, f, rw_map(cx, f->begin));     /* moved whole */
        else if (touches_moved(cx, f->begin, f->begin + f->range))
            ok = rebuild_fde(&b, f, &ubuf, &ucap);
        else
            ok = copy_fde(&b, f, f->begin);
    }
    free(ubuf);
    static const uint8_t term[4];
    cfi_put(&b.o, term, 4);
    if (ok && b.o.oom)
        ok = rw_fail(cx, "out of memory");
    if (ok && b.gxt.oom)
        ok = rw_fail(cx, "out of memory");
    free(b.sites);
    if (!ok) {
        free(b.o.b);
        free(b.tab);
        free(b.gxt.b);
        free(b.fix);
        return false;
    }
    cx->eh = b.o.b;
    cx->eh_size = b.o.n;
    /* .eh_frame_hdr: version, encodings, pointer to .eh_frame, count, and
     * the sorted (start, FDE) table the unwinder searches. */
    if (b.ntab > 1)
        qsort(b.tab, b.ntab, sizeof *b.tab, by_loc);
    cx->ehhdr_addr = (cx->eh_addr + cx->eh_size + 3) & ~(uint64_t)3;
    cx->ehhdr_size = 12 + 8 * b.ntab;
    cx->ehhdr = malloc(cx->ehhdr_size);
    if (!cx->ehhdr) {
        free(b.tab);
        return rw_fail(cx, "out of memory");
    }
    uint8_t *h = cx->ehhdr;
    h[0] = 1;
    h[1] = PE_PCREL | PE_S4;
    h[2] = PE_U4;
    h[3] = PE_DATAREL | PE_S4;
    rw_put32(h + 4, (uint32_t)(cx->eh_addr - (cx->ehhdr_addr + 4)));
    rw_put32(h + 8, (uint32_t)b.ntab);
    for (size_t i = 0; i < b.ntab; i++) {
        rw_put32(h + 12 + 8 * i, (uint32_t)(b.tab[i].loc - cx->ehhdr_addr));
        rw_put32(h + 16 + 8 * i, (uint32_t)(b.tab[i].fde - cx->ehhdr_addr));
    }
    free(b.tab);
    /* The new call-site tables follow, and the FDEs learn where they are. */
    cx->gxt = b.gxt.b;
    cx->gxt_size = b.gxt.n;
    cx->gxt_addr = (cx->ehhdr_addr + cx->ehhdr_size + 7) & ~(uint64_t)7;
    for (size_t i = 0; i < b.nfix; i++)
        if (!put_ptr(cx->eh + b.fix[i].field, b.fix[i].enc, cx->gxt_addr + b.fix[i].target,
                     cx->eh_addr + b.fix[i].field)) {
            free(b.fix);
            return rw_fail(cx, "%s: .eh_frame: new LSDA out of reach", cx->img->path);
        }
    free(b.fix);
    return true;
}
