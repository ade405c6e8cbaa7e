/*
 * machine/unwind.c: the interrupted thread's calling context at a PMU
 * sample (--stacks), as DCPI's value-sampling work logged return
 * addresses at interrupts.
 *
 * The cycle model runs inline while stacks are on, so a sample is
 * delivered right after the executor retired the block holding the
 * sampled pc, with the thread's registers as that block left them.  The
 * first frame is therefore unwound from the block's end, not from the
 * sampled pc: the CFA is the same anywhere in one frame, and the row in
 * force where the registers stand says where to find it.  When control
 * stayed in the procedure that is the row at the next pc; when it left
 * (call, return, jump) the row at the block's last instruction, whose
 * only effect on the registers that matter is a call's link register.
 *
 * Caller frames use the row at the call instruction.  Frames come from
 * the images' .eh_frame (image/ehframe.h, parsed once per image and kept;
 * rows computed once per FDE); code an image has no FDE for is unwound by
 * scanning its procedure's prologue for the frame allocation and the
 * return address's slot (counted as fallback frames).  Every guest read
 * goes through mem_peek, which cannot fault or change the guest; every
 * value read is checked (the CFA must grow, return addresses must land in
 * executable code), and a walk that cannot go on stops with its reason.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "image/ehframe.h"
#include "image/image.h"
#include "machine/unwind.h"

#define RA 26
#define SP 30
#define FP 15
#define SCAN_MAX 64             /* prologue instructions the fallback reads */

const char *const axp_stack_end_names[AXP_STK_NEND] = {
    "complete", "depth", "outside_image", "no_unwind_info", "unreadable", "corrupt",
    "signal_frame", "no_state"
};

typedef struct fde_span {
    uint64_t lo, hi;
    uint32_t fde;
} fde_span;

/* One machine image as the walker sees it. */
typedef struct uimage {
    bool tried;
    image *im;                  /* NULL: could not be read */
    eh_frame *eh;               /* NULL: no usable .eh_frame */
    fde_span *span;             /* sorted by lo */
    size_t nspan;
    cfi_rows *rows;             /* per FDE, computed on first use */
    uint8_t *rstate;            /* per FDE: 0 not yet, 1 rows, 2 not understood */
} uimage;

struct unwinder {
    unsigned depth;
    uimage *img;
    int nimg;
    uint64_t *buf;
    axp_stack st;
    uint64_t samples, frames, fallback_frames, end[AXP_STK_NEND];
};

int axp_set_stacks(axp_machine *m, unsigned depth, char *err, size_t errsz)
{
    if (depth < 1 || depth > AXP_STACK_DEPTH_MAX) {
        snprintf(err, errsz, "--stacks: depth %u out of range (1 to %d)", depth, AXP_STACK_DEPTH_MAX);
        return -1;
    }
    unwinder *u = m->uw ? m->uw : calloc(1, sizeof *u);
    uint64_t *b = u ? realloc(u->buf, depth * sizeof *b) : NULL;
    if (!b) {
        free(u);
        m->uw = NULL;
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    u->buf = b;
    u->depth = depth;
    m->uw = u;
    return 0;
}

const axp_stack *axp_sample_stack(const axp_machine *m)
{
    return m->sample_stack;
}

/* ---- images --------------------------------------------------------------- */

static int by_lo(const void *a, const void *b)
{
    const fde_span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void load_eh(uimage *ui)
{
    const image_section *s = image_section_by_name(ui->im, ".eh_frame");
    if (!s || !s->data || !s->size)
        return;
    eh_frame *e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->d = s->data;
    e->addr = s->addr;
    e->size = (size_t)s->size;
    char err[200];
    if (!eh_frame_parse(e, err, sizeof err) || !e->nfde ||
        !(ui->span = malloc(e->nfde * sizeof *ui->span)) ||
        !(ui->rows = calloc(e->nfde, sizeof *ui->rows)) || !(ui->rstate = calloc(e->nfde, 1))) {
        /* a damaged table: that image's code is unwound by the fallback */
        free(ui->span);
        free(ui->rows);
        ui->span = NULL;
        ui->rows = NULL;
        eh_frame_release(e);
        return;
    }
    for (size_t i = 0; i < e->nfde; i++)
        if (e->fde[i].range && e->fde[i].begin + e->fde[i].range > e->fde[i].begin)
            ui->span[ui->nspan++] = (fde_span){ e->fde[i].begin, e->fde[i].begin + e->fde[i].range,
                                                (uint32_t)i };
    qsort(ui->span, ui->nspan, sizeof *ui->span, by_lo);
    ui->eh = e;
}

static uimage *get_image(machine *m, unwinder *u, int i)
{
    if (i < 0 || i >= m->nimg)
        return NULL;
    if (i >= u->nimg) {
        uimage *n = realloc(u->img, (size_t)m->nimg * sizeof *n);
        if (!n)
            return NULL;
        memset(n + u->nimg, 0, (size_t)(m->nimg - u->nimg) * sizeof *n);
        u->img = n;
        u->nimg = m->nimg;
    }
    uimage *ui = &u->img[i];
    if (!ui->tried) {
        ui->tried = true;
        image_error ie;
        if ((ui->im = image_open_for_running(m->img[i].path, &ie)))
            load_eh(ui);
    }
    return ui->im ? ui : NULL;
}

/* The row in force at link-time address a, NULL when no FDE covers it
 * (*cie gets the FDE's CIE); *bad when one does but is not understood. */
static const cfi_row *row_at(uimage *ui, uint64_t a, const eh_cie **cie, bool *bad, uint32_t *fde)
{
    *bad = false;
    if (!ui->eh || !ui->nspan)
        return NULL;
    size_t lo = 0, hi = ui->nspan;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ui->span[mid].lo <= a)
            lo = mid;
        else
            hi = mid;
    }
    const fde_span *s = &ui->span[lo];
    if (a < s->lo || a >= s->hi)
        return NULL;
    uint32_t f = s->fde;
    *fde = f;
    if (!ui->rstate[f]) {
        char err[160];
        ui->rstate[f] = eh_frame_rows(ui->eh, f, &ui->rows[f], err, sizeof err) && ui->rows[f].n ? 1 : 2;
    }
    if (ui->rstate[f] != 1) {
        *bad = true;
        return NULL;
    }
    *cie = &ui->eh->cie[ui->eh->fde[f].cie];
    return cfi_at(&ui->rows[f], a);
}

/* ---- one frame -------------------------------------------------------------- */

typedef struct walk {
    const mm *x;
    uint64_t r[32];
    uint32_t known;             /* bit i: r[i] holds the frame's value */
} walk;

static bool peek64(const walk *w, uint64_t a, uint64_t *v)
{
    uint8_t b[8];
    if (a & 7 || !mem_peek(w->x, a, b, 8))
        return false;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = *v << 8 | b[i];
    return true;
}

/* Unwind w by one frame with row r; *ret gets the caller's return
 * address (0 at the outermost frame).  Returns an AXP_STK_* reason to
 * stop, or -1 to go on. */
static int step_cfi(walk *w, const cfi_row *r, uint32_t ra_reg, bool leaf, bool ra_clobbered,
                    uint64_t *ret)
{
    if (r->cfa_reg >= 32 || !(w->known & 1u << r->cfa_reg))
        return AXP_STK_NOUNWIND;
    if (!w->r[r->cfa_reg] && !r->cfa_off) {
        /* the start code's mark of the outermost frame: a CFA of zero
         * (glibc's _start clears the frame pointer and names it) */
        *ret = 0;
        return AXP_STK_COMPLETE;
    }
    uint64_t cfa = w->r[r->cfa_reg] + (uint64_t)r->cfa_off;
    /* the CFA grows frame by frame; only a frame that made no call of its
     * own may have none: the leaf, or a caller of millicode (__remlu and
     * the like return through $23 and keep every other register, so gcc
     * calls them from procedures without a frame) */
    if (cfa < w->r[SP] || (cfa == w->r[SP] && !leaf) || cfa & 7)
        return AXP_STK_CORRUPT;
    walk n = *w;
    for (int i = 0; i < 32; i++) {
        const cfi_rule *q = &r->r[i];
        uint64_t v;
        switch (q->kind) {
        case CFI_OFFSET:
            if (!peek64(w, cfa + (uint64_t)q->val, &v))
                return AXP_STK_UNREADABLE;
            n.r[i] = v;
            n.known |= 1u << i;
            break;
        case CFI_VALOFF:
            n.r[i] = cfa + (uint64_t)q->val;
            n.known |= 1u << i;
            break;
        case CFI_REG:
            if (q->val < 0 || q->val >= 32 || !(w->known & 1u << q->val))
                n.known &= ~(1u << i);
            else
                n.r[i] = w->r[q->val];
            break;
        case CFI_UNDEF:
            n.known &= ~(1u << i);
            break;
        default:
            break;              /* same value */
        }
    }
    if (ra_reg >= 32)
        return AXP_STK_NOUNWIND;    /* a return address in no integer register */
    if (r->r[ra_reg].kind == CFI_UNDEF) {
        *ret = 0;               /* the outermost frame says so */
        return AXP_STK_COMPLETE;
    }
    if (ra_clobbered && r->r[ra_reg].kind != CFI_OFFSET && r->r[ra_reg].kind != CFI_VALOFF)
        return AXP_STK_STATE;   /* the call just overwrote the only copy */
    if (!(n.known & 1u << ra_reg))
        return AXP_STK_NOUNWIND;
    *ret = n.r[ra_reg];
    n.r[SP] = cfa;
    n.known |= 1u << SP;
    *w = n;
    return -1;
}

/* The fallback for code without an FDE: the procedure's prologue, read
 * from the image, says how big its frame is and where it saved the
 * return address and the frame pointer (lda $30,-N($30); stq $26,X($30);
 * stq $15,Y($30); mov $30,$15).  Instructions at or after `at` have not
 * run in this frame.  last: the word the leaf frame's block ended with (0
 * for a caller), whose registers the frame's are. */
static int step_scan(walk *w, const image *im, uint64_t at, uint32_t last, uint64_t *ret)
{
    bool leaf = last != 0;
    if (leaf && last >> 26 == 0x1a && (last >> 14 & 3) == 2) {
        /* stopped at a return: the epilogue has run, the frame is gone */
        if (!(w->known & 1u << RA))
            return AXP_STK_NOUNWIND;
        *ret = w->r[RA];
        return -1;
    }
    const image_symbol *fn = image_function_at(im, at);
    if (!fn || at < fn->value)
        return AXP_STK_NOUNWIND;
    int64_t fsize = 0, ra_off = -1, fp_off = -1;
    bool fp_frame = false;
    for (uint64_t a = fn->value; a < at && a < fn->value + 4 * SCAN_MAX; a += 4) {
        const uint8_t *p = image_bytes_at(im, a, 4);
        if (!p)
            return AXP_STK_NOUNWIND;
        uint32_t word = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        unsigned op = word >> 26, ra = word >> 21 & 31, rb = word >> 16 & 31;
        int64_t disp = (int16_t)(word & 0xffff);
        if (op == 0x08 && ra == SP && rb == SP && disp < 0 && !fsize)
            fsize = -disp;
        else if (op == 0x2d && rb == SP && ra == RA)
            ra_off = disp;
        else if (op == 0x2d && rb == SP && ra == FP)
            fp_off = disp;
        else if (word == 0x47de040f || word == 0x47fe040f)      /* mov $30,$15 */
            fp_frame = true;
    }
    uint64_t base = fp_frame ? w->r[FP] : w->r[SP];
    if (fp_frame && !(w->known & 1u << FP))
        return AXP_STK_NOUNWIND;
    walk n = *w;
    if (ra_off >= 0) {
        if (!peek64(w, base + (uint64_t)ra_off, &n.r[RA]))
            return AXP_STK_UNREADABLE;
        n.known |= 1u << RA;
    } else if (!leaf || fsize) {
        return AXP_STK_NOUNWIND;    /* the return address is in no place we know */
    }
    if (fp_off >= 0) {
        if (!peek64(w, base + (uint64_t)fp_off, &n.r[FP]))
            return AXP_STK_UNREADABLE;
    }
    if (!(n.known & 1u << RA))
        return AXP_STK_NOUNWIND;
    uint64_t cfa = base + (uint64_t)fsize;
    if ((fsize && cfa <= w->r[SP]) || cfa & 7)
        return AXP_STK_CORRUPT;
    *ret = n.r[RA];
    n.r[SP] = cfa;
    *w = n;
    return -1;
}

/* The signal return stub, on the stack or glibc's: mov $30,$16; ldi $0,
 * sigreturn or rt_sigreturn.  A handler's caller is no procedure. */
static bool signal_stub(const walk *w, uint64_t a)
{
    uint8_t b[8];
    if (!mem_peek(w->x, a, b, 8))
        return false;
    uint32_t w0 = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    uint32_t w1 = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
    return w0 == 0x47fe0410 && (w1 == 0x201f0067 || w1 == 0x201f015f);
}

/* ---- the walk ------------------------------------------------------------------ */

/* Does word write register r?  Only calls matter here: jsr, bsr. */
static bool links_ra(uint32_t word)
{
    unsigned op = word >> 26;
    return (op == 0x1a || op == 0x34) && (word >> 21 & 31) == RA;
}

static unsigned walk_frames(machine *m, unwinder *u, const cpu *c, uint64_t pc, unsigned *fallback)
{
    thread *t = c->st_t;
    /* the block's thread still on this CPU (a thread that has gone may
     * have been freed), and the pc in that block */
    if (!t || t != c->cur || pc < c->st_first || pc > c->st_last || !t->mm)
        return AXP_STK_STATE;       /* no registers that go with this pc */
    walk w = { .x = t->mm, .known = 0x7fffffffu };
    memcpy(w.r, t->r, sizeof w.r);
    /* where the registers stand: see the top of the file */
    const vma *v = mm_vma_at(t->mm, pc);
    const vma *nv = mm_vma_at(t->mm, c->st_next);
    uint64_t at = c->st_last;
    bool clobbered = links_ra(c->st_word);
    uint32_t came_by = RA;      /* the register the frame below returned through */
    for (unsigned n = 1;; n++) {
        if (!v || !(v->prot & GP_X) || v->img < 0)
            return v && (v->prot & GP_X) ? AXP_STK_NOIMAGE : AXP_STK_CORRUPT;
        uimage *ui = get_image(m, u, v->img);
        if (!ui)
            return AXP_STK_NOUNWIND;
        uint64_t la = at + (uint64_t)v->link;
        const eh_cie *cie = NULL;
        bool bad;
        uint32_t f1 = UINT32_MAX, f2 = UINT32_MAX;
        const cfi_row *r = row_at(ui, la, &cie, &bad, &f1);
        if (n == 1 && nv == v && !clobbered && r) {
            /* control stayed in the procedure: the next pc's row */
            const eh_cie *c2;
            bool b2;
            const cfi_row *r2 = row_at(ui, c->st_next + (uint64_t)v->link, &c2, &b2, &f2);
            if (r2 && f2 == f1)
                r = r2;
        }
        uint64_t ret = 0;
        int why;
        if (r) {
            why = step_cfi(&w, r, cie->ra_reg, n == 1 || came_by != cie->ra_reg, n == 1 && clobbered, &ret);
            came_by = cie->ra_reg;
        } else if (bad) {
            why = AXP_STK_NOUNWIND;
        } else {
            why = step_scan(&w, ui->im, la, n == 1 ? c->st_word : 0, &ret);
            came_by = RA;
            if (why < 0)
                (*fallback)++;
        }
        if (why >= 0)
            return (unsigned)why;
        if (!ret)
            return AXP_STK_COMPLETE;
        if (ret & 3)
            return AXP_STK_CORRUPT;
        if (signal_stub(&w, ret))
            return AXP_STK_SIGNAL;
        if (n >= u->depth)
            return AXP_STK_DEPTH;
        u->buf[n] = ret - 4;
        u->st.n = n + 1;
        at = ret - 4;
        clobbered = false;
        v = mm_vma_at(t->mm, at);
    }
}

const axp_stack *unwind_sample(machine *m, int cpuno, uint64_t pc)
{
    unwinder *u = m->uw;
    u->buf[0] = pc;
    u->st = (axp_stack){ .n = 1, .pc = u->buf };
    u->st.end = walk_frames(m, u, &m->cpus[cpuno], pc, &u->st.fallback);
    u->samples++;
    u->frames += u->st.n;
    u->fallback_frames += u->st.fallback;
    u->end[u->st.end]++;
    return &u->st;
}

void unwind_write_stats(machine *m, FILE *f)
{
    unwinder *u = m->uw;
    if (!u)
        return;
    fprintf(f, "  \"stacks\": {\"depth\": %u, \"samples\": %" PRIu64 ", \"frames\": %" PRIu64
               ", \"fallback_frames\": %" PRIu64 ", \"ends\": {",
            u->depth, u->samples, u->frames, u->fallback_frames);
    for (int i = 0; i < AXP_STK_NEND; i++)
        fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", axp_stack_end_names[i], u->end[i]);
    fprintf(f, "}},\n");
}

void unwind_free(machine *m)
{
    unwinder *u = m->uw;
    if (!u)
        return;
    for (int i = 0; i < u->nimg; i++) {
        uimage *ui = &u->img[i];
        for (size_t k = 0; ui->eh && k < ui->eh->nfde; k++)
            free(ui->rows[k].row);
        free(ui->rows);
        free(ui->rstate);
        free(ui->span);
        eh_frame_release(ui->eh);
        image_close(ui->im);
    }
    free(u->img);
    free(u->buf);
    free(u);
    m->uw = NULL;
}
