/*
 * rewriter/rewrite.c: from a plan to new code and patched references.
 *
 * The rewriter never edits what it does not understand: every field it
 * changes is found either by decoding an instruction (branch displacements,
 * jump hints) or by a relocation (GP displacements, GP-relative addresses,
 * GOT slots, code pointers in data, jump-table entries).  A procedure whose
 * code or references it cannot account for stays where it is.  Deciding that
 * can depend on the layout (a branch that no longer reaches), so layout,
 * emission and patching run in rounds until no new procedure is pinned.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/internal.h"
#include "rewriter/internal.h"

static const char *const reason_names[RW_NREASONS] = {
    [RW_MOVED] = "moved",
    [RW_PIN_PLAN] = "pinned by the plan",
    [RW_PIN_INDIRECT] = "indirect jump with unknown targets",
    [RW_PIN_BADCODE] = "words that are not instructions",
    [RW_PIN_COROUTINE] = "jsr_coroutine",
    [RW_PIN_LSDA] = "exception tables (LSDA) tied to its addresses",
    [RW_PIN_CFI] = "call-frame information we cannot regenerate",
    [RW_PIN_RANGE] = "a branch to or from it would not reach",
    [RW_PIN_GPREL16] = "address taken with a 16-bit GP offset",
    [RW_PIN_RELOC] = "referred to by a relocation we cannot update",
    [RW_PIN_GPDISP] = "GP displacement out of range",
};

const char *rw_reason_name(unsigned r)
{
    return r < RW_NREASONS ? reason_names[r] : "?";
}

bool rw_fail(rw_ctx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cx->err, cx->errlen, fmt, ap);
    va_end(ap);
    return false;
}

void rw_pin(rw_ctx *cx, const cfg_proc *f, rw_reason why, const char *fmt, ...)
{
    rw_proc *p = &cx->procs[f - cx->prog->procs];
    if (p->reason != RW_MOVED)
        return;
    p->reason = (uint8_t)why;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    cx->repin = true;
}

void rw_rigid(rw_ctx *cx, const cfg_proc *f, rw_reason why, const char *fmt, ...)
{
    rw_proc *p = &cx->procs[f - cx->prog->procs];
    if (p->reason != RW_MOVED || p->rigid)
        return;
    p->rigid = (uint8_t)why;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
}

static inline uint64_t *map_slot(const rw_ctx *cx, uint64_t a)
{
    return a >= cx->code_lo && a < cx->code_hi && !(a & 3) ? &cx->map[(a - cx->code_lo) / 4] : NULL;
}

bool rw_moved(const rw_ctx *cx, uint64_t old)
{
    uint64_t *s = map_slot(cx, old);
    return s && *s;
}

uint64_t rw_map(const rw_ctx *cx, uint64_t old)
{
    uint64_t *s = map_slot(cx, old);
    return s && *s ? *s : old;
}

uint8_t *rw_out_at(rw_ctx *cx, uint64_t addr, size_t len)
{
    if (addr >= cx->text_addr && addr + len <= cx->text_addr + cx->text_size)
        return cx->text + (addr - cx->text_addr);
    const image_section *s = image_section_at(cx->img, addr);
    if (!s || s->type == SHT_NOBITS || addr + len > s->addr + s->size ||
        s->offset + s->size > cx->out_size)
        return NULL;
    return cx->out + s->offset + (addr - s->addr);
}

static const cfg_proc *proc_of(const rw_ctx *cx, uint64_t addr)
{
    return cfg_proc_at(cx->prog, addr);
}

static bool is_moved_proc(const rw_ctx *cx, const cfg_proc *f)
{
    return cx->procs[f - cx->prog->procs].reason == RW_MOVED;
}

/* ---- the plan against the image -------------------------------------- */

static uint32_t default_align(uint64_t start)
{
    uint32_t a = 16;
    while (a > 4 && (start & (a - 1)))
        a >>= 1;
    return a;
}

static bool is_invert(const rw_ctx *cx, uint64_t addr)
{
    size_t lo = 0, hi = cx->ninverts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cx->inverts[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cx->ninverts && cx->inverts[lo] == addr;
}

/* The full block order of f: the plan's blocks, then the ones it left out
 * (into the cold part when there is one, else the hot part), in address
 * order.  Returns the split index in *split and, when al is not NULL, the
 * alignment the plan asks for at each position. */
static bool proc_order(rw_ctx *cx, const cfg_proc *f, const plan_proc *pp,
                       uint32_t *order, size_t *split, uint32_t *al)
{
    size_t nb = f->nblocks, n = 0;
    uint32_t *pidx = malloc((nb ? nb : 1) * sizeof *pidx);    /* block -> plan index */
    if (!pidx)
        return rw_fail(cx, "out of memory");
    for (size_t b = 0; b < nb; b++)
        pidx[b] = UINT32_MAX;
    size_t cold = pp ? plan_cold_start(pp) : nb;
    bool ok = true;
    for (size_t i = 0; pp && i < pp->nblocks && ok; i++) {
        uint32_t b = cfg_block_at(f, pp->blocks[i].addr);
        if (b == CFG_NONE || f->blocks[b].start != pp->blocks[i].addr)
            ok = rw_fail(cx, "%s:%u: 0x%llx is not the start of a block of %s", cx->pl->name,
                         pp->blocks[i].line, (unsigned long long)pp->blocks[i].addr, f->name);
        else if (i == 0 && b != 0)
            ok = rw_fail(cx, "%s:%u: the first block of %s must be its entry 0x%llx",
                         cx->pl->name, pp->blocks[i].line, f->name, (unsigned long long)f->start);
        else {
            pidx[b] = (uint32_t)i;
            order[n++] = b;
        }
    }
    bool has_split = pp && cold < pp->nblocks;
    *split = has_split ? cold : nb;
    for (size_t b = 0; ok && b < nb; b++)
        if (pidx[b] == UINT32_MAX)
            order[n++] = (uint32_t)b;
    if (ok && al)
        for (size_t i = 0; i < nb; i++)
            al[i] = pidx[order[i]] == UINT32_MAX ? 0 : pp->blocks[pidx[order[i]]].align;
    /* Blocks ending in a call (or a linking branch) leave a return address:
     * the block after them must come right after, in the same part, with
     * no padding in between. */
    for (size_t i = 0; ok && i < nb; i++) {
        uint32_t b = order[i];
        if (!(f->blocks[b].flags & CFG_BF_LINKS) || b + 1 >= nb)
            continue;
        bool adj = i + 1 < nb && order[i + 1] == b + 1 && (i + 1 < *split || i >= *split);
        unsigned line = pidx[b] != UINT32_MAX ? pp->blocks[pidx[b]].line : pp ? pp->line : 0;
        if (adj && pidx[b + 1] != UINT32_MAX && pp->blocks[pidx[b + 1]].align)
            ok = rw_fail(cx, "%s:%u: block 0x%llx cannot be aligned: it must start right "
                         "after the call or linking branch that ends block 0x%llx",
                         cx->pl->name, pp->blocks[pidx[b + 1]].line,
                         (unsigned long long)f->blocks[b + 1].start,
                         (unsigned long long)f->blocks[b].start);
        else if (!adj)
            ok = rw_fail(cx, "%s:%u: block 0x%llx of %s ends with a call or linking branch: "
                         "block 0x%llx must follow it in the same part", cx->pl->name, line,
                         (unsigned long long)f->blocks[b].start, f->name,
                         (unsigned long long)f->blocks[b + 1].start);
    }
    free(pidx);
    return ok;
}

static bool check_plan(rw_ctx *cx)
{
    const plan *pl = cx->pl;
    const cfg_program *prog = cx->prog;
    if (pl->build_id[0]) {
        char hex[129];
        image_build_id_hex(cx->img, hex, sizeof hex);
        if (strcmp(hex, pl->build_id))
            return rw_fail(cx, "%s: plan is for build-id %s, image %s has %s", pl->name,
                           pl->build_id, cx->img->path, hex[0] ? hex : "none");
    }
    for (size_t i = 0; i < pl->nprocs; i++) {
        const cfg_proc *f = proc_of(cx, pl->procs[i].addr);
        if (!f || f->start != pl->procs[i].addr)
            return rw_fail(cx, "%s:%u: 0x%llx is not the start of a procedure", pl->name,
                           pl->procs[i].line, (unsigned long long)pl->procs[i].addr);
        rw_proc *p = &cx->procs[f - prog->procs];
        if (p->pp)
            return rw_fail(cx, "%s:%u: procedure %s listed twice", pl->name, pl->procs[i].line, f->name);
        p->pp = &pl->procs[i];
        if (pl->procs[i].align)
            p->align = pl->procs[i].align;
    }
    for (size_t i = 0; i < pl->npins; i++) {
        const cfg_proc *f = proc_of(cx, pl->pins[i].addr);
        if (!f || f->start != pl->pins[i].addr)
            return rw_fail(cx, "%s:%u: pin 0x%llx is not the start of a procedure", pl->name,
                           pl->pins[i].line, (unsigned long long)pl->pins[i].addr);
        rw_pin(cx, f, RW_PIN_PLAN, "plan line %u", pl->pins[i].line);
    }
    for (size_t i = 0; i < pl->ninverts; i++) {
        uint64_t a = pl->inverts[i].addr;
        const cfg_proc *f = proc_of(cx, a);
        uint32_t b = f ? cfg_block_at(f, a) : CFG_NONE;
        uint32_t w = 0;
        alpha_insn in;
        if (b != CFG_NONE)
            cfg_word(prog, a, &w);
        alpha_decode(w, &in);
        if (b == CFG_NONE || f->blocks[b].end - 4 != a || alpha_flow_of(&in) != FLOW_CBRANCH)
            return rw_fail(cx, "%s:%u: invert 0x%llx: not a conditional branch ending a block",
                           pl->name, pl->inverts[i].line, (unsigned long long)a);
        cx->inverts[i] = a;
    }
    cx->ninverts = pl->ninverts;
    for (size_t i = 1; i < cx->ninverts; i++)     /* insertion sort: usually sorted */
        for (size_t k = i; k > 0 && cx->inverts[k - 1] > cx->inverts[k]; k--) {
            uint64_t t = cx->inverts[k];
            cx->inverts[k] = cx->inverts[k - 1];
            cx->inverts[k - 1] = t;
        }
    for (size_t i = 0; i < pl->nhints; i++) {
        uint32_t w = 0;
        alpha_insn in;
        bool code = cfg_word(prog, pl->hints[i].jump, &w);
        alpha_decode(w, &in);
        if (!code || !in.op || in.op->format != AF_JMP || in.func > 1)
            return rw_fail(cx, "%s:%u: hint 0x%llx: not a jmp or jsr", pl->name,
                           pl->hints[i].line, (unsigned long long)pl->hints[i].jump);
        if (!cfg_is_code(prog, pl->hints[i].target))
            return rw_fail(cx, "%s:%u: hint target 0x%llx is not code", pl->name,
                           pl->hints[i].line, (unsigned long long)pl->hints[i].target);
    }
    /* Block orders (and glue) of every listed procedure. */
    uint32_t *order = NULL;
    size_t cap = 0, split;
    for (size_t i = 0; i < pl->nprocs; i++) {
        const cfg_proc *f = proc_of(cx, pl->procs[i].addr);
        if (f->nblocks > cap) {
            free(order);
            cap = f->nblocks;
            order = malloc(cap * sizeof *order);
            if (!order)
                return rw_fail(cx, "out of memory");
        }
        if (!proc_order(cx, f, &pl->procs[i], order, &split, NULL)) {
            free(order);
            return false;
        }
    }
    free(order);
    return true;
}

/* ---- layout ----------------------------------------------------------- */

static const plan_hint *find_hint(const rw_ctx *cx, uint64_t jump)
{
    for (size_t i = 0; i < cx->pl->nhints; i++)
        if (cx->pl->hints[i].jump == jump)
            return &cx->pl->hints[i];
    return NULL;
}

/* Decide the end of each block from what follows it in the new order. */
static void terminate(rw_ctx *cx, rw_item *it, const rw_item *next)
{
    const cfg_proc *f = &cx->prog->procs[it->proc];
    const cfg_block *b = &f->blocks[it->block];
    uint64_t la = b->end - 4;
    uint64_t na = next ? cx->prog->procs[next->proc].blocks[next->block].start : 0;
    uint32_t w;
    alpha_insn in;
    cfg_word(cx->prog, la, &w);
    alpha_decode(w, &in);
    alpha_flow fl = alpha_flow_of(&in);
    it->invert = it->drop = it->addbr = false;
    it->size = (uint32_t)(b->end - b->start);
    if (!in.op || fl == FLOW_JUMP || fl == FLOW_RETURN || fl == FLOW_COROUTINE)
        return;
    if (fl == FLOW_BRANCH) {
        it->drop = !it->rigid && in.ra == REG_ZERO && next && alpha_branch_target(&in, la) == na;
        it->size -= it->drop ? 4 : 0;
        return;
    }
    /* Running off the end of the procedure lands past the padding. */
    uint64_t fall = b->end == f->end ? cfg_past_padding(cx->prog, b->end) : b->end;
    if (fl == FLOW_CBRANCH) {
        uint64_t t = alpha_branch_target(&in, la);
        if (it->rigid)
            it->invert = false;     /* distances inside must not change */
        else if (is_invert(cx, la))
            it->invert = true;
        else
            it->invert = next && na == t && t != fall;
        if (it->invert)
            fall = t;
    }
    if (!next || na != fall) {
        it->addbr = true;
        it->brto = fall;
        it->size += 4;
    }
}

static bool layout(rw_ctx *cx)
{
    const cfg_program *prog = cx->prog;
    size_t total = 0;
    for (size_t i = 0; i < prog->nprocs; i++)
        if (cx->procs[i].reason == RW_MOVED)
            total += prog->procs[i].nblocks;
    for (size_t i = 0; i < prog->nprocs; i++) {
        rw_proc *rp = &cx->procs[i];
        rp->hot_start = rp->hot_end = rp->cold_start = rp->cold_end = 0;
        rp->hot_first = rp->hot_n = rp->cold_first = rp->cold_n = 0;
    }
    free(cx->items);
    cx->items = malloc((total ? total : 1) * sizeof *cx->items);
    uint32_t *porder = malloc((prog->nprocs ? prog->nprocs : 1) * sizeof *porder);
    uint8_t *listed = calloc(prog->nprocs ? prog->nprocs : 1, 1);
    uint32_t *order = NULL, *aligns = NULL;
    size_t *splits = malloc((prog->nprocs ? prog->nprocs : 1) * sizeof *splits);
    size_t *firsts = malloc((prog->nprocs ? prog->nprocs : 1) * sizeof *firsts);
    if (!cx->items || !porder || !listed || !splits || !firsts)
        goto oom;
    /* Procedure order: the plan's, then the rest in address order. */
    size_t np = 0;
    for (size_t i = 0; i < cx->pl->nprocs; i++) {
        uint32_t k = (uint32_t)(proc_of(cx, cx->pl->procs[i].addr) - prog->procs);
        listed[k] = 1;
        if (cx->procs[k].reason == RW_MOVED)
            porder[np++] = k;
    }
    for (size_t k = 0; k < prog->nprocs; k++)
        if (!listed[k] && cx->procs[k].reason == RW_MOVED)
            porder[np++] = (uint32_t)k;

    /* Items: all hot parts, then all cold parts. */
    order = malloc((total ? total : 1) * sizeof *order);
    aligns = malloc((total ? total : 1) * sizeof *aligns);
    if (!order || !aligns)
        goto oom;
    size_t no = 0;
    for (size_t i = 0; i < np; i++) {
        const cfg_proc *f = &prog->procs[porder[i]];
        firsts[i] = no;
        const rw_proc *rp = &cx->procs[porder[i]];
        if (!proc_order(cx, f, rp->rigid ? NULL : rp->pp, order + no, &splits[i], aligns + no))
            goto fail;
        no += f->nblocks;
    }
    size_t n = 0;
    for (int part = 0; part < 2; part++)
        for (size_t i = 0; i < np; i++) {
            const cfg_proc *f = &prog->procs[porder[i]];
            rw_proc *rp = &cx->procs[porder[i]];
            size_t lo = part ? splits[i] : 0, hi = part ? f->nblocks : splits[i];
            if (part) {
                rp->cold_first = (uint32_t)n;
                rp->cold_n = (uint32_t)(hi - lo);
            } else {
                rp->hot_first = (uint32_t)n;
                rp->hot_n = (uint32_t)(hi - lo);
            }
            for (size_t k = lo; k < hi; k++) {
                uint32_t al = aligns[firsts[i] + k];
                if (k == lo && !part && rp->align > al)
                    al = rp->align;
                cx->items[n++] = (rw_item){ .proc = porder[i], .block = order[firsts[i] + k],
                                            .align = al, .cold = part == 1, .rigid = rp->rigid != 0 };
            }
        }
    cx->nitems = n;
    /* What follows a block: the next item of the same part, or the entry
     * of the next procedure (control may run off the end into it). */
    for (size_t i = 0; i < n; i++) {
        const rw_item *it = &cx->items[i], *nx = i + 1 < n ? &cx->items[i + 1] : NULL;
        if (nx && !(nx->proc == it->proc && nx->cold == it->cold) &&
            !(nx->proc != it->proc && nx->block == 0 && !nx->cold))
            nx = NULL;
        terminate(cx, &cx->items[i], nx);
    }
    /* Addresses. */
    memset(cx->map, 0, (cx->code_hi - cx->code_lo) / 4 * sizeof *cx->map);
    uint64_t a = cx->text_addr;
    bool first_cold = true;
    for (size_t i = 0; i < n; i++) {
        rw_item *it = &cx->items[i];
        uint32_t al = it->align ? it->align : 4;
        if (it->cold && first_cold) {
            first_cold = false;
            if (cx->pl->cold_align > al)
                al = cx->pl->cold_align;
        }
        uint64_t na = (a + al - 1) & ~(uint64_t)(al - 1);
        it->pad = (uint32_t)(na - a);
        it->addr = na;
        a = na + it->size;
        const cfg_proc *f = &prog->procs[it->proc];
        const cfg_block *b = &f->blocks[it->block];
        for (uint64_t o = b->start; o < b->end; o += 4)
            cx->map[(o - cx->code_lo) / 4] = na + (o - b->start);
        rw_proc *p = &cx->procs[it->proc];
        if (!it->cold) {
            if (it->block == 0 || !p->hot_start)
                p->hot_start = na;
            p->hot_end = a;
        } else {
            if (!p->cold_start || (i && cx->items[i - 1].proc != it->proc))
                p->cold_start = na;
            p->cold_end = a;
        }
    }
    /* A dropped BR continues where its target now is: the next block. */
    for (size_t i = 0; i + 1 < n; i++)
        if (cx->items[i].drop) {
            const cfg_block *b = &prog->procs[cx->items[i].proc].blocks[cx->items[i].block];
            cx->map[(b->end - 4 - cx->code_lo) / 4] = cx->items[i + 1].addr;
        }
    cx->text_size = (size_t)(a - cx->text_addr);
    free(porder);
    free(listed);
    free(order);
    free(aligns);
    free(splits);
    free(firsts);
    return true;
oom:
    rw_fail(cx, "out of memory");
fail:
    free(porder);
    free(listed);
    free(order);
    free(aligns);
    free(splits);
    free(firsts);
    return false;
}

/* ---- emission ------------------------------------------------------------ */

/* New hint for the JMP/JSR at old address `la`, now at `na`. */
static void fix_hint(rw_ctx *cx, uint32_t *word, uint64_t la, uint64_t na)
{
    alpha_insn in;
    alpha_decode(*word, &in);
    if (!in.op || in.op->format != AF_JMP || in.func > 1)
        return;
    const plan_hint *h = find_hint(cx, la);
    uint64_t t;
    if (h) {
        t = rw_map(cx, h->target);
    } else {
        const cfg_rel *r = cfg_reloc_find(&cx->prog->relocs, la, R_ALPHA_HINT);
        uint64_t pred = alpha_hint_target(&in, la);
        if (r && !r->secsym && r->target && cfg_is_code(cx->prog, r->target))
            pred = r->target;
        if (rw_moved(cx, pred))
            t = rw_map(cx, pred);
        else if (na == la)
            return;
        else
            t = pred;   /* keep the predicted low 16 bits, all that counts */
    }
    bool exact;
    alpha_set_hint_target(word, na, t, &exact);
}

/* Retarget the PC-relative branch at new address pc to old target t. */
static bool fix_branch(rw_ctx *cx, uint32_t *word, uint64_t pc, uint64_t t, const cfg_proc *f)
{
    uint64_t nt = rw_map(cx, t);
    if (alpha_set_branch_target(word, pc, nt))
        return true;
    /* Out of reach: keep the farther side in place. */
    const cfg_proc *tf = proc_of(cx, t);
    if (f && is_moved_proc(cx, f))
        rw_pin(cx, f, RW_PIN_RANGE, "branch at 0x%llx to 0x%llx", (unsigned long long)pc,
               (unsigned long long)t);
    else if (tf && is_moved_proc(cx, tf))
        rw_pin(cx, tf, RW_PIN_RANGE, "branch to 0x%llx from 0x%llx", (unsigned long long)t,
               (unsigned long long)pc);
    else if (cx->repin)
        return true;    /* the layout is stale anyway: next round */
    else
        return rw_fail(cx, "%s: branch at 0x%llx cannot reach 0x%llx", cx->img->path,
                       (unsigned long long)pc, (unsigned long long)nt);
    return true;
}

static bool emit(rw_ctx *cx)
{
    free(cx->text);
    cx->text = calloc(1, cx->text_size ? cx->text_size : 4);
    if (!cx->text)
        return rw_fail(cx, "out of memory");
    for (size_t i = 0; i < cx->nitems; i++) {
        const rw_item *it = &cx->items[i];
        const cfg_proc *f = &cx->prog->procs[it->proc];
        const cfg_block *b = &f->blocks[it->block];
        uint8_t *p = cx->text + (it->addr - cx->text_addr);
        for (uint32_t k = 0; k < it->pad; k += 4)
            rw_put32(p - it->pad + k, ALPHA_NOP_WORD);
        uint64_t end = it->drop ? b->end - 4 : b->end;
        for (uint64_t o = b->start; o < end; o += 4, p += 4) {
            uint32_t w;
            cfg_word(cx->prog, o, &w);
            uint64_t pc = it->addr + (o - b->start);
            alpha_insn in;
            alpha_decode(w, &in);
            if (alpha_is_pcrel_branch(&in)) {
                uint64_t t = alpha_branch_target(&in, o);
                if (o == b->end - 4 && it->invert) {
                    alpha_invert_branch(&w);
                    t = b->end;
                }
                if (!fix_branch(cx, &w, pc, t, f))
                    return false;
            } else if (in.op && in.op->format == AF_JMP) {
                fix_hint(cx, &w, o, pc);
            }
            rw_put32(p, w);
        }
        if (it->addbr) {
            uint32_t w = ALPHA_BR_WORD;
            if (!fix_branch(cx, &w, it->addr + it->size - 4, it->brto, f))
                return false;
            rw_put32(p, w);
        }
    }
    return true;
}

/* Procedures left in place still branch and hint into moved code. */
static bool patch_pinned(rw_ctx *cx)
{
    for (size_t i = 0; i < cx->prog->nprocs; i++) {
        if (cx->procs[i].reason == RW_MOVED)
            continue;
        const cfg_proc *f = &cx->prog->procs[i];
        for (uint64_t o = f->start; o < f->end; o += 4) {
            uint8_t *p = rw_out_at(cx, o, 4);
            if (!p)
                continue;
            uint32_t w = rw_le32(p);
            alpha_insn in;
            alpha_decode(w, &in);
            if (alpha_is_pcrel_branch(&in)) {
                uint64_t t = alpha_branch_target(&in, o);
                if (rw_moved(cx, t) && !fix_branch(cx, &w, o, t, NULL))
                    return false;
            } else if (in.op && in.op->format == AF_JMP) {
                fix_hint(cx, &w, o, o);
            }
            rw_put32(p, w);
        }
    }
    return true;
}

/* ---- references found by relocations ---------------------------------- */

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
    const cfg_proc *f = proc_of(cx, where);
    return f ? f->gp : cx->img->gp;
}

static bool patch_gpdisp(rw_ctx *cx, const cfg_rel *r)
{
    uint64_t hi_old = r->where, lo_old = r->where + (uint64_t)r->addend;
    uint64_t hi_new = rw_map(cx, hi_old), lo_new = rw_map(cx, lo_old);
    if (hi_new == hi_old && lo_new == lo_old)
        return true;
    uint32_t hw, lw;
    if (!cfg_word(cx->prog, hi_old, &hw) || !cfg_word(cx->prog, lo_old, &lw))
        return rw_fail(cx, "%s: GPDISP at 0x%llx: pair outside the code", cx->img->path,
                       (unsigned long long)hi_old);
    int64_t v = (int64_t)(int16_t)(hw & 0xffff) * 65536 + (int16_t)(lw & 0xffff);
    uint64_t gp = hi_old + (uint64_t)v;
    int64_t nv = (int64_t)(gp - hi_new);
    int64_t hi = (nv + 0x8000) >> 16, lo = nv - hi * 65536;
    if (hi < -32768 || hi > 32767) {
        const cfg_proc *f = proc_of(cx, hi_old);
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
        const cfg_proc *tf = proc_of(cx, r->target);
        if (tf)
            rw_pin(cx, tf, RW_PIN_GPREL16, "GP-relative reference at 0x%llx",
                   (unsigned long long)r->where);
        return true;
    }
    alpha_set_mem_disp(&w, d);
    return put_word(cx, at, w);
}

static bool patch_relocs(rw_ctx *cx)
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
                const cfg_proc *tf = proc_of(cx, r->target);
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
                const cfg_proc *tf = proc_of(cx, r->target);
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

/* ---- the rest of the image --------------------------------------------- */

static bool patch_symbols(rw_ctx *cx, uint16_t text_shndx)
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
            const cfg_proc *f = proc_of(cx, sym.st_value);
            if (f && f->start == sym.st_value && sym.st_size) {
                const rw_proc *p = &cx->procs[f - cx->prog->procs];
                sym.st_size = p->hot_end - p->hot_start;
            }
            sym.st_value = rw_map(cx, sym.st_value);
            if (sec->type == SHT_SYMTAB)
                sym.st_shndx = text_shndx;
            memcpy(cx->out + sec->offset + o, &sym, sizeof sym);
        }
    }
    return true;
}

static bool patch_dynamic(rw_ctx *cx)
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

static bool build_addrmap(rw_ctx *cx)
{
    addrmap *m = &cx->am;
    m->build_id_len = cx->img->build_id_len;
    memcpy(m->build_id, cx->img->build_id, cx->img->build_id_len);
    for (size_t i = 0; i < cx->nitems; i++) {
        const rw_item *it = &cx->items[i];
        const cfg_block *b = &cx->prog->procs[it->proc].blocks[it->block];
        uint32_t body = (uint32_t)(b->end - b->start) - (it->drop ? 4 : 0);
        if (!addrmap_add(m, it->addr - it->pad, b->start, it->pad, AM_PAD) ||
            !addrmap_add(m, it->addr, b->start, body, AM_CODE) ||
            (it->addbr && !addrmap_add(m, it->addr + body, b->end - 4, 4, AM_BRANCH)))
            return rw_fail(cx, "out of memory");
    }
    return true;
}

static void trap_old_code(rw_ctx *cx)
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

/* ---- driver ---------------------------------------------------------------- */

static void analyse(rw_ctx *cx)
{
    for (size_t i = 0; i < cx->prog->nprocs; i++) {
        const cfg_proc *f = &cx->prog->procs[i];
        cx->procs[i].align = default_align(f->start);
        if (f->flags & CFG_PF_BADCODE)
            rw_pin(cx, f, RW_PIN_BADCODE, "%s", f->why);
        else if (f->flags & CFG_PF_COROUTINE)
            rw_pin(cx, f, RW_PIN_COROUTINE, "%s", f->why);
        else if (f->flags & CFG_PF_MISSING)
            rw_rigid(cx, f, RW_PIN_INDIRECT, "%s", f->why);
    }
}

static void ctx_free(rw_ctx *cx)
{
    rw_eh_free(cx);
    free(cx->procs);
    free(cx->items);
    free(cx->inverts);
    free(cx->map);
    free(cx->text);
    free(cx->eh);
    free(cx->ehhdr);
    free(cx->out);
    addrmap_free(&cx->am);
}

bool rw_rewrite(const image *img, const cfg_program *prog, const plan *pl,
                const rw_options *opt, const char *outpath, rw_stats *st,
                char *err, size_t errlen)
{
    rw_ctx c = { .img = img, .prog = prog, .pl = pl, .opt = opt, .st = st,
                 .err = err, .errlen = errlen };
    rw_ctx *cx = &c;
    memset(st, 0, sizeof *st);
    image_error ie;
    if (img->type != ET_EXEC) {
        snprintf(err, errlen, "%s: not an executable (ET_EXEC): shared objects and PIE are not supported",
                 img->path);
        return false;
    }
    if (!image_require_relocs(img, &ie)) {
        snprintf(err, errlen, "%s", ie.msg);
        return false;
    }
    if (image_section_by_name(img, ADDRMAP_SECTION)) {
        snprintf(err, errlen, "%s: already rewritten (it has %s): rewrite the original image",
                 img->path, ADDRMAP_SECTION);
        return false;
    }
    if (!img->has_gp) {
        snprintf(err, errlen, "%s: no GP value found", img->path);
        return false;
    }
    if (image_gp_count(img) > 1) {
        snprintf(err, errlen, "%s: the linker made %zu GOTs (several GP values): not supported",
                 img->path, image_gp_count(img));
        return false;
    }
    cx->procs = calloc(prog->nprocs ? prog->nprocs : 1, sizeof *cx->procs);
    cx->inverts = malloc((pl->ninverts ? pl->ninverts : 1) * sizeof *cx->inverts);
    cx->code_lo = UINT64_MAX;
    for (size_t i = 0; i < prog->ncode; i++) {
        if (prog->code[i]->addr < cx->code_lo)
            cx->code_lo = prog->code[i]->addr;
        if (prog->code[i]->addr + prog->code[i]->size > cx->code_hi)
            cx->code_hi = prog->code[i]->addr + prog->code[i]->size;
    }
    cx->code_lo &= ~(uint64_t)3;
    cx->code_hi = (cx->code_hi + 3) & ~(uint64_t)3;
    cx->map = calloc((cx->code_hi - cx->code_lo) / 4 + 1, sizeof *cx->map);
    if (!cx->procs || !cx->inverts || !cx->map) {
        ctx_free(cx);
        return rw_fail(cx, "out of memory");
    }
    cx->old_eh = image_section_by_name(img, ".eh_frame");
    cx->old_ehhdr = image_section_by_name(img, ".eh_frame_hdr");
    analyse(cx);
    bool ok = check_plan(cx) && rw_eh_analyse(cx) && rw_elf_plan(cx);
    size_t rounds = 0;
    while (ok) {
        rounds++;
        cx->repin = false;
        free(cx->out);
        cx->out_size = img->file_size;
        cx->out = malloc(cx->out_size ? cx->out_size : 1);
        if (!cx->out) {
            ok = rw_fail(cx, "out of memory");
            break;
        }
        memcpy(cx->out, img->file, img->file_size);
        ok = layout(cx) && emit(cx) && patch_pinned(cx) && patch_relocs(cx);
        if (!ok || !cx->repin)
            break;
        if (rounds > prog->nprocs + 1) {
            ok = rw_fail(cx, "internal error: pinning does not converge");
            break;
        }
    }
    ok = ok && rw_eh_build(cx) && patch_dynamic(cx) &&
         patch_symbols(cx, (uint16_t)img->nsections) && build_addrmap(cx);
    if (ok) {
        if (rw_moved(cx, img->entry)) {
            Elf64_Ehdr eh;
            memcpy(&eh, cx->out, sizeof eh);
            eh.e_entry = rw_map(cx, img->entry);
            memcpy(cx->out, &eh, sizeof eh);
        }
        if (opt->check)
            trap_old_code(cx);
        ok = rw_elf_write(cx, outpath);
    }
    if (ok) {
        st->procs = prog->nprocs;
        st->rounds = rounds;
        for (size_t i = 0; i < prog->nprocs; i++) {
            const rw_proc *p = &cx->procs[i];
            const cfg_proc *f = &prog->procs[i];
            if (p->reason == RW_MOVED) {
                st->moved++;
                if (p->rigid) {
                    st->rigid[p->rigid]++;
                    if (opt->log)
                        fprintf(opt->log, "moved whole: %s 0x%llx: %s (%s)\n", f->name,
                                (unsigned long long)f->start, rw_reason_name(p->rigid), p->detail);
                }
                st->old_text += f->end - f->start;
                st->blocks_moved += f->nblocks;
            } else {
                st->pinned[p->reason]++;
                if (opt->log)
                    fprintf(opt->log, "left in place: %s 0x%llx: %s (%s)\n", f->name,
                            (unsigned long long)f->start, rw_reason_name(p->reason), p->detail);
            }
        }
        for (size_t i = 0; i < cx->nitems; i++) {
            st->branches_added += cx->items[i].addbr;
            st->branches_removed += cx->items[i].drop;
            st->branches_inverted += cx->items[i].invert;
        }
        st->new_text = cx->text_size;
        st->seg_addr = cx->seg_addr;
    }
    ctx_free(cx);
    return ok;
}
