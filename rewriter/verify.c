/*
 * rewriter/verify.c: checking a rewritten image against its original
 * without running it.
 *
 * Through the address map, every word of the new code must be its original
 * instruction (only displacement, hint and GP fields may differ), an added
 * `br`, or padding; every branch must land on the new copy of its original
 * target; every GP pair must compute the original GP; every code pointer the
 * original's relocations describe (data words, jump tables, GOT slots, the
 * entry point) must point at the new copy; and every moved instruction must
 * unwind with the rules its original had, from the FDE the unwinder reaches
 * through PT_GNU_EH_FRAME (none where the original's unwinder found none).  Static images, which qemu cannot run, are
 * tested this way.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "image/ehframe.h"
#include "rewriter/internal.h"
#include "rewriter/lsda.h"
#include "rewriter/verify.h"

#define REPORT_MAX 20

typedef struct vctx {
    const image *orig, *neu;
    cfg_program *prog;
    addrmap am;
    uint64_t lo, hi;             /* original code span */
    uint64_t *fwd;               /* original address -> new, 0 */
    uint8_t *emitted;            /* original instruction was emitted */
    FILE *rep;
    size_t reported;
    rw_verify_stats *st;
} vctx;

static void bad(vctx *v, size_t *counter, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(vctx *v, size_t *counter, const char *fmt, ...)
{
    (*counter)++;
    if (!v->rep || v->reported++ >= REPORT_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(v->rep, fmt, ap);
    va_end(ap);
    fputc('\n', v->rep);
}

static uint64_t fwd(const vctx *v, uint64_t a)
{
    return a >= v->lo && a < v->hi && !(a & 3) ? v->fwd[(a - v->lo) / 4] : 0;
}

/* Where code an instrumenter inserted before the new copy n of orig o
 * starts (n when there is none): references to o go there. */
static uint64_t ins_start(const vctx *v, uint64_t n, uint64_t o)
{
    int kind;
    while (n >= 4 && addrmap_lookup(&v->am, n - 4, &kind) == o && kind == AM_INSTR)
        n -= 4;
    return n;
}

/* Does a reference to orig t that now holds got point at its copy, or
 * at the start of code inserted elsewhere that stands for t (a jump
 * table's stub, which goes on to t)? */
static bool lands(const vctx *v, uint64_t got, uint64_t t)
{
    uint64_t nt = fwd(v, t);
    int kind;
    return got == nt || got == ins_start(v, nt, t) ||
           (addrmap_lookup(&v->am, got, &kind) == t && kind == AM_INSTR && ins_start(v, got, t) == got);
}

static bool word_at(const image *img, uint64_t a, uint32_t *w)
{
    const uint8_t *p = image_bytes_at(img, a, 4);
    if (!p)
        return false;
    *w = rw_le32(p);
    return true;
}

/* Where control that went to original address a now goes, seen from the
 * original: a dropped `br` forwards to its target. */
static uint64_t resolve(const vctx *v, uint64_t a)
{
    for (int hops = 0; hops < 8; hops++) {
        uint32_t w;
        alpha_insn in;
        if (!fwd(v, a) || (v->emitted[(a - v->lo) / 4]) || !word_at(v->orig, a, &w))
            return a;
        alpha_decode(w, &in);
        if (alpha_flow_of(&in) != FLOW_BRANCH || in.ra != REG_ZERO)
            return a;
        a = alpha_branch_target(&in, a);
    }
    return a;
}

/* The original address new address n stands for (n itself when unmoved). */
static uint64_t back(const vctx *v, uint64_t n)
{
    return addrmap_lookup(&v->am, n, NULL);
}

static bool same_target(const vctx *v, uint64_t newt, uint64_t oldt)
{
    uint64_t b = back(v, newt);
    return b == oldt || b == resolve(v, oldt);
}

static bool has_rel(const vctx *v, uint64_t a, uint32_t type)
{
    return cfg_reloc_find(&v->prog->relocs, a, type) != NULL;
}

static void check_code(vctx *v, uint64_t n, uint32_t nw, uint64_t o)
{
    rw_verify_stats *st = v->st;
    uint32_t ow;
    if (!word_at(v->orig, o, &ow)) {
        bad(v, &st->bad_words, "0x%llx: maps to 0x%llx, which is not code in the original",
            (unsigned long long)n, (unsigned long long)o);
        return;
    }
    alpha_insn oi, ni;
    alpha_decode(ow, &oi);
    alpha_decode(nw, &ni);
    if (alpha_is_pcrel_branch(&oi)) {
        bool inv = (nw >> 26) != (ow >> 26);
        if (!alpha_is_pcrel_branch(&ni) || ni.ra != oi.ra ||
            (inv && (alpha_flow_of(&oi) != FLOW_CBRANCH || ((nw ^ ow) >> 26) != 0x04))) {
            bad(v, &st->bad_words, "0x%llx: %08x is not the branch %08x at 0x%llx",
                (unsigned long long)n, nw, ow, (unsigned long long)o);
            return;
        }
        uint64_t want = inv ? o + 4 : alpha_branch_target(&oi, o);
        if (!same_target(v, alpha_branch_target(&ni, n), want))
            bad(v, &st->bad_targets, "0x%llx: branch goes to 0x%llx (original 0x%llx), not to the copy of 0x%llx",
                (unsigned long long)n, (unsigned long long)alpha_branch_target(&ni, n),
                (unsigned long long)back(v, alpha_branch_target(&ni, n)), (unsigned long long)want);
        st->branches++;
        return;
    }
    uint32_t mask = 0xffffffffu;
    if (oi.op && oi.op->format == AF_JMP && oi.func <= 1)
        mask = ~0x3fffu;
    else if (oi.op && oi.op->format == AF_MEM &&
             (has_rel(v, o, R_ALPHA_GPDISP) || has_rel(v, o, R_ALPHA_GPRELHIGH) ||
              has_rel(v, o, R_ALPHA_GPRELLOW) || has_rel(v, o, R_ALPHA_GPREL16)))
        mask = ~0xffffu;
    else {
        /* The lda of a GPDISP pair has no relocation of its own. */
        for (size_t i = cfg_relocs_from(&v->prog->relocs, o > 0x8000 ? o - 0x8000 : 0);
             i < v->prog->relocs.n && v->prog->relocs.r[i].where <= o; i++) {
            const cfg_rel *r = &v->prog->relocs.r[i];
            if (r->type == R_ALPHA_GPDISP && r->where + (uint64_t)r->addend == o)
                mask = ~0xffffu;
        }
    }
    if ((nw & mask) != (ow & mask))
        bad(v, &st->bad_words, "0x%llx: %08x differs from %08x at 0x%llx", (unsigned long long)n,
            nw, ow, (unsigned long long)o);
}

static void check_gpdisp(vctx *v)
{
    const cfg_relocs *rs = &v->prog->relocs;
    for (size_t i = 0; i < rs->n; i++) {
        const cfg_rel *r = &rs->r[i];
        if (r->type != R_ALPHA_GPDISP || !fwd(v, r->where))
            continue;
        uint32_t oh, ol, nh, nl;
        uint64_t nha = fwd(v, r->where), nla = fwd(v, r->where + (uint64_t)r->addend);
        if (!word_at(v->orig, r->where, &oh) || !word_at(v->orig, r->where + (uint64_t)r->addend, &ol) ||
            !nla || !word_at(v->neu, nha, &nh) || !word_at(v->neu, nla, &nl)) {
            bad(v, &v->st->bad_words, "GPDISP at 0x%llx: pair not found", (unsigned long long)r->where);
            continue;
        }
        int64_t ov = (int64_t)(int16_t)oh * 65536 + (int16_t)ol;
        int64_t nv = (int64_t)(int16_t)nh * 65536 + (int16_t)nl;
        /* The pair adds to its base register: pv holds where callers enter
         * (before any inserted code), ra where the call returns to. */
        uint64_t base = ins_start(v, nha, r->where);
        alpha_insn hi, pc;
        uint32_t pw;
        alpha_decode(oh, &hi);
        if (hi.rb == REG_RA && word_at(v->orig, r->where - 4, &pw) && fwd(v, r->where - 4)) {
            alpha_decode(pw, &pc);
            if (alpha_flow_of(&pc) == FLOW_CALL && pc.ra == REG_RA)
                base = fwd(v, r->where - 4) + 4;
        }
        if (r->where + (uint64_t)ov != base + (uint64_t)nv)
            bad(v, &v->st->bad_words, "GPDISP at 0x%llx (now 0x%llx): GP 0x%llx, was 0x%llx",
                (unsigned long long)r->where, (unsigned long long)nha,
                (unsigned long long)(base + (uint64_t)nv), (unsigned long long)(r->where + (uint64_t)ov));
        v->st->gp_pairs++;
    }
}

static void check_pointers(vctx *v)
{
    const cfg_relocs *rs = &v->prog->relocs;
    const image_section *oeh = image_section_by_name(v->orig, ".eh_frame");
    for (size_t i = 0; i < rs->n; i++) {
        const cfg_rel *r = &rs->r[i];
        uint64_t nt = fwd(v, r->target);
        if (!nt || cfg_is_code(v->prog, r->where))
            continue;
        if (oeh && r->where >= oeh->addr && r->where < oeh->addr + oeh->size)
            continue;
        const uint8_t *p;
        uint64_t got = 0;
        switch (r->type) {
        case R_ALPHA_REFQUAD:
            if (!(p = image_bytes_at(v->neu, r->where, 8)))
                continue;
            got = rw_le64(p);
            break;
        case R_ALPHA_GPREL32:
            if (!(p = image_bytes_at(v->neu, r->where, 4)))
                continue;
            got = v->orig->gp + (uint64_t)(int64_t)(int32_t)rw_le32(p);
            break;
        default:
            continue;
        }
        v->st->pointers++;
        if (!lands(v, got, r->target))
            bad(v, &v->st->bad_pointers, "%s at 0x%llx holds 0x%llx, not the new copy 0x%llx of 0x%llx",
                image_reloc_name(r->type), (unsigned long long)r->where, (unsigned long long)got,
                (unsigned long long)nt, (unsigned long long)r->target);
    }
    /* GOT slots named by LITERAL relocations. */
    for (size_t i = 0; i < rs->n; i++) {
        const cfg_rel *r = &rs->r[i];
        uint64_t nt = fwd(v, r->target);
        uint32_t w;
        if (r->type != R_ALPHA_LITERAL || !nt || !word_at(v->orig, r->where, &w))
            continue;
        const cfg_proc *f = cfg_proc_at(v->prog, r->where);
        uint64_t slot = (f ? f->gp : v->orig->gp) + (uint64_t)(int64_t)(int16_t)w;
        const uint8_t *p = image_bytes_at(v->neu, slot, 8);
        v->st->pointers++;
        if (!p || !lands(v, rw_le64(p), r->target))
            bad(v, &v->st->bad_pointers, "GOT slot 0x%llx (LITERAL at 0x%llx) does not hold 0x%llx",
                (unsigned long long)slot, (unsigned long long)r->where, (unsigned long long)nt);
    }
    int ek;
    bool runtime = addrmap_lookup(&v->am, v->neu->entry, &ek) == v->orig->entry && ek == AM_INSTR;
    if (fwd(v, v->orig->entry) && !runtime && !lands(v, v->neu->entry, v->orig->entry))
        bad(v, &v->st->bad_pointers, "entry point 0x%llx, not the copy 0x%llx of 0x%llx",
            (unsigned long long)v->neu->entry, (unsigned long long)fwd(v, v->orig->entry),
            (unsigned long long)v->orig->entry);
}

/* ---- unwind rows ---------------------------------------------------------- */

typedef struct fdeidx {
    const image *img;
    eh_frame *e;
    size_t n;
    uint64_t *lo, *hi;
    size_t *fde;
    cfi_rows *rows;              /* computed on demand */
    bool *done, *bad;
    lsda *lsdas;                 /* read on demand */
    uint8_t *lsda_state;         /* 0 unread, 1 read, 2 none or unreadable */
} fdeidx;

static void idx_free(fdeidx *x)
{
    for (size_t i = 0; x->rows && i < x->n; i++)
        free(x->rows[i].row);
    for (size_t i = 0; x->lsdas && i < x->n; i++)
        lsda_free(&x->lsdas[i]);
    free(x->lsdas);
    free(x->lsda_state);
    free(x->lo);
    free(x->hi);
    free(x->fde);
    free(x->rows);
    free(x->done);
    free(x->bad);
    eh_frame_release(x->e);
    memset(x, 0, sizeof *x);
}

static bool idx_build(fdeidx *x, const image *img, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->img = img;
    const image_section *s = image_section_by_name(img, ".eh_frame");
    if (!s || !s->data)
        return true;
    x->e = calloc(1, sizeof *x->e);
    if (!x->e)
        return false;
    x->e->d = s->data;
    x->e->addr = s->addr;
    x->e->size = s->size;
    if (!eh_frame_parse(x->e, err, errlen))
        return false;
    size_t n = x->e->nfde;
    x->lo = malloc((n + 1) * sizeof *x->lo);
    x->hi = malloc((n + 1) * sizeof *x->hi);
    x->fde = malloc((n + 1) * sizeof *x->fde);
    x->rows = calloc(n + 1, sizeof *x->rows);
    x->done = calloc(n + 1, 1);
    x->bad = calloc(n + 1, 1);
    x->lsdas = calloc(n + 1, sizeof *x->lsdas);
    x->lsda_state = calloc(n + 1, 1);
    if (!x->lo || !x->hi || !x->fde || !x->rows || !x->done || !x->bad || !x->lsdas || !x->lsda_state)
        return false;
    for (size_t i = 0; i < n; i++) {
        const eh_fde *f = &x->e->fde[i];
        if (!f->range || !f->begin)
            continue;
        /* insertion by begin: FDEs come mostly sorted */
        size_t k = x->n++;
        while (k > 0 && x->lo[k - 1] > f->begin) {
            x->lo[k] = x->lo[k - 1];
            x->hi[k] = x->hi[k - 1];
            x->fde[k] = x->fde[k - 1];
            k--;
        }
        x->lo[k] = f->begin;
        x->hi[k] = f->begin + f->range;
        x->fde[k] = i;
    }
    return true;
}

/* The FDE covering a, by its position in the index, or SIZE_MAX. */
static size_t idx_find(const fdeidx *x, uint64_t a)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x->lo[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return !lo || a >= x->hi[lo - 1] ? SIZE_MAX : lo - 1;
}

/* The call-site table of the FDE covering a (NULL when it has none). */
static const lsda *idx_lsda(fdeidx *x, uint64_t a)
{
    size_t k = idx_find(x, a);
    if (k == SIZE_MAX)
        return NULL;
    if (!x->lsda_state[k]) {
        const eh_fde *f = &x->e->fde[x->fde[k]];
        char e[160];
        x->lsda_state[k] = f->lsda && lsda_read(x->img, f->lsda, f->begin, &x->lsdas[k], e, sizeof e) ? 1 : 2;
    }
    return x->lsda_state[k] == 1 ? &x->lsdas[k] : NULL;
}

static const cfi_row *idx_row(fdeidx *x, uint64_t a)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x->lo[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || a >= x->hi[lo - 1])
        return NULL;
    size_t k = lo - 1;
    if (!x->done[k]) {
        char e[160];
        x->done[k] = 1;
        x->bad[k] = !eh_frame_rows(x->e, x->fde[k], &x->rows[k], e, sizeof e) || !x->rows[k].n;
    }
    return x->bad[k] ? NULL : cfi_at(&x->rows[k], a);
}

/* The unwinder does not look for sections: libgcc finds a PC's FDE through
 * dl_iterate_phdr, PT_GNU_EH_FRAME and a binary search of the table in
 * .eh_frame_hdr (a static image's crtbeginT registers only the original
 * .eh_frame).  The table as the rewriter writes it: version 1, sorted
 * (start, FDE) pairs, both relative to the header. */
typedef struct hdrtab {
    uint64_t addr;
    const uint8_t *t;
    size_t n;
} hdrtab;

static bool hdr_open(const image *img, hdrtab *h)
{
    memset(h, 0, sizeof *h);
    for (size_t i = 0; i < img->nsegments; i++) {
        const image_segment *s = &img->segments[i];
        const uint8_t *p = s->type == PT_GNU_EH_FRAME ? image_bytes_at(img, s->vaddr, 12) : NULL;
        if (!p || p[0] != 1 || p[2] != PE_U4 || p[3] != (PE_DATAREL | PE_S4))
            continue;
        h->addr = s->vaddr;
        h->n = rw_le32(p + 8);
        h->t = image_bytes_at(img, s->vaddr + 12, h->n * 8);
        return h->t != NULL;
    }
    return false;
}

/* The FDE the unwinder would take for a (its address), 0 for none. */
static uint64_t hdr_find(const hdrtab *h, uint64_t a)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->addr + (uint64_t)(int64_t)(int32_t)rw_le32(h->t + 8 * mid) <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? h->addr + (uint64_t)(int64_t)(int32_t)rw_le32(h->t + 8 * (lo - 1) + 4) : 0;
}

static void check_unwind(vctx *v, const image_section *text, char *err, size_t errlen)
{
    fdeidx on, nn;
    if (!idx_build(&on, v->orig, err, errlen) || !idx_build(&nn, v->neu, err, errlen)) {
        bad(v, &v->st->bad_rows, "unwind tables: %s", err);
        idx_free(&on);
        idx_free(&nn);
        return;
    }
    hdrtab hdr;
    bool have_hdr = hdr_open(v->neu, &hdr), said = false;
    uint64_t visible = rw_eh_first_visible(v->orig);
    for (uint64_t n = text->addr; n + 4 <= text->addr + text->size; n += 4) {
        int kind;
        uint64_t o = addrmap_lookup(&v->am, n, &kind);
        if (kind != AM_CODE)
            continue;
        /* Exception call sites: same site, landing pad and action. */
        const lsda *ol = idx_lsda(&on, o), *nl = idx_lsda(&nn, n);
        const lsda_site *os = ol ? lsda_at(ol, o) : NULL, *ns = nl ? lsda_at(nl, n) : NULL;
        if (os || ns) {
            v->st->sites++;
            if (!os || !ns || ns->action != os->action ||
                (os->lp ? back(v, ns->lp) != os->lp : ns->lp != 0))
                bad(v, &v->st->bad_sites, "0x%llx: exception call site differs from that of 0x%llx",
                    (unsigned long long)n, (unsigned long long)o);
        }
        const cfi_row *orow = idx_row(&on, o), *nrow = idx_row(&nn, n);
        if (!orow)
            continue;
        v->st->rows++;
        if (!nrow || !cfi_same(orow, nrow))
            bad(v, &v->st->bad_rows, "0x%llx: unwind rules differ from those of 0x%llx%s",
                (unsigned long long)n, (unsigned long long)o, nrow ? "" : " (no FDE)");
        else if (!have_hdr && !said) {
            said = true;
            bad(v, &v->st->bad_rows, "no PT_GNU_EH_FRAME with a table the rewriter writes: "
                "the unwinder finds no FDE for moved code such as 0x%llx", (unsigned long long)n);
        } else if (have_hdr) {
            /* Seen by the original's unwinder, it must be by the new one, and
             * not otherwise (rw_eh_first_visible). */
            bool was = on.e->fde[on.fde[idx_find(&on, o)]].off >= visible;
            bool is = hdr_find(&hdr, n) == nn.e->addr + nn.e->fde[nn.fde[idx_find(&nn, n)]].off;
            if (was != is)
                bad(v, &v->st->bad_rows, "0x%llx: .eh_frame_hdr %s its FDE, the original's "
                    "unwinder %s", (unsigned long long)n, is ? "leads to" : "does not lead to",
                    was ? "found one" : "did not");
        }
    }
    idx_free(&on);
    idx_free(&nn);
}

bool rw_verify(const image *orig, const image *neu, FILE *report, rw_verify_stats *st,
               char *err, size_t errlen)
{
    vctx v = { .orig = orig, .neu = neu, .rep = report, .st = st };
    memset(st, 0, sizeof *st);
    if (!addrmap_read(neu, &v.am, err, errlen))
        return false;
    if (orig->build_id_len && (v.am.build_id_len != orig->build_id_len ||
                               memcmp(v.am.build_id, orig->build_id, orig->build_id_len))) {
        snprintf(err, errlen, "%s was not rewritten from %s (build-ids differ)", neu->path, orig->path);
        addrmap_free(&v.am);
        return false;
    }
    const image_section *text = image_section_by_name(neu, ".cpo.text");
    if (!text || !text->data) {
        snprintf(err, errlen, "%s: no .cpo.text section", neu->path);
        addrmap_free(&v.am);
        return false;
    }
    v.prog = cfg_build(orig, err, errlen);
    if (!v.prog) {
        addrmap_free(&v.am);
        return false;
    }
    v.lo = UINT64_MAX;
    for (size_t i = 0; i < v.prog->ncode; i++) {
        if (v.prog->code[i]->addr < v.lo)
            v.lo = v.prog->code[i]->addr;
        if (v.prog->code[i]->addr + v.prog->code[i]->size > v.hi)
            v.hi = v.prog->code[i]->addr + v.prog->code[i]->size;
    }
    v.lo &= ~(uint64_t)3;
    v.fwd = calloc((v.hi - v.lo) / 4 + 1, sizeof *v.fwd);
    v.emitted = calloc((v.hi - v.lo) / 4 + 1, 1);
    bool ok = v.fwd && v.emitted;
    if (!ok)
        snprintf(err, errlen, "out of memory");
    /* Forward map from the code entries; a dropped br maps to what follows. */
    for (size_t i = 0; ok && i < v.am.n; i++) {
        const addrmap_entry *e = &v.am.e[i];
        if (e->kind != AM_CODE || e->orig < v.lo || e->orig + e->len > v.hi)
            continue;
        for (uint32_t k = 0; k < e->len; k += 4) {
            v.fwd[(e->orig + k - v.lo) / 4] = e->new_addr + k;
            v.emitted[(e->orig + k - v.lo) / 4] = 1;
        }
    }
    for (size_t p = 0; ok && p < v.prog->nprocs; p++) {
        const cfg_proc *f = &v.prog->procs[p];
        if (!fwd(&v, f->start))
            continue;
        st->procs_moved++;
        for (uint64_t a = f->start; a < f->end; a += 4)
            if (!fwd(&v, a)) {
                /* Dropped: the next emitted address of this procedure's layout
                 * is unknown here; resolve() handles branches to it. */
                v.fwd[(a - v.lo) / 4] = 1;
            }
    }
    for (uint64_t n = text->addr; ok && n + 4 <= text->addr + text->size; n += 4) {
        uint32_t w = rw_le32(text->data + (n - text->addr));
        int kind;
        uint64_t o = addrmap_lookup(&v.am, n, &kind);
        st->words++;
        switch (kind) {
        case AM_CODE:
            st->code++;
            check_code(&v, n, w, o);
            break;
        case AM_INSTR:
            st->inserted++;     /* an instrumenter's: not the original's */
            break;
        case AM_PAD:
            st->pads++;
            if (w != ALPHA_NOP_WORD)
                bad(&v, &st->bad_words, "0x%llx: padding word %08x is not a nop", (unsigned long long)n, w);
            break;
        case AM_BRANCH: {
            st->added++;
            alpha_insn in, oi;
            uint32_t ow = 0;
            alpha_decode(w, &in);
            word_at(orig, o, &ow);
            alpha_decode(ow, &oi);
            uint64_t t = back(&v, alpha_branch_target(&in, n));
            bool okt = alpha_flow_of(&in) == FLOW_BRANCH && in.ra == REG_ZERO &&
                       (same_target(&v, alpha_branch_target(&in, n), o + 4) ||
                        same_target(&v, alpha_branch_target(&in, n), cfg_past_padding(v.prog, o + 4)) ||
                        (alpha_flow_of(&oi) == FLOW_CBRANCH &&
                         same_target(&v, alpha_branch_target(&in, n), alpha_branch_target(&oi, o))));
            if (!okt)
                bad(&v, &st->bad_targets, "0x%llx: added branch goes to the copy of 0x%llx, "
                    "not to a successor of 0x%llx", (unsigned long long)n, (unsigned long long)t,
                    (unsigned long long)o);
            break;
        }
        default:
            bad(&v, &st->unmapped, "0x%llx: new code the address map does not cover", (unsigned long long)n);
            break;
        }
    }
    /* The placeholder 1s above only mark "moved"; clear them for pointers. */
    for (size_t i = 0; ok && i < (v.hi - v.lo) / 4; i++)
        if (v.fwd[i] == 1)
            v.fwd[i] = 0;
    if (ok) {
        check_gpdisp(&v);
        check_pointers(&v);
        check_unwind(&v, text, err, errlen);
    }
    free(v.fwd);
    free(v.emitted);
    cfg_free(v.prog);
    addrmap_free(&v.am);
    return ok;
}
