/*
 * rewriter/layout.c: the plan against the image, and the new layout.
 *
 * Each procedure's block order comes from the plan (or the original order),
 * checked against the CFG; every block's end is then made to agree with
 * what now follows it (branches added, dropped or inverted), and addresses
 * are assigned: all hot parts in procedure order, then the cold area.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"

uint32_t rw_default_align(uint64_t start)
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
    /* A split after the last listed block still sends the blocks the plan
     * left out to the cold part (docs/layout-plan.md). */
    bool has_split = pp && pp->split != PLAN_NOSPLIT;
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

bool rw_check_plan(rw_ctx *cx)
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
        const cfg_proc *f = rw_proc_of(cx, pl->procs[i].addr);
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
        const cfg_proc *f = rw_proc_of(cx, pl->pins[i].addr);
        if (!f || f->start != pl->pins[i].addr)
            return rw_fail(cx, "%s:%u: pin 0x%llx is not the start of a procedure", pl->name,
                           pl->pins[i].line, (unsigned long long)pl->pins[i].addr);
        rw_pin(cx, f, RW_PIN_PLAN, "plan line %u", pl->pins[i].line);
    }
    for (size_t i = 0; i < pl->ninverts; i++) {
        uint64_t a = pl->inverts[i].addr;
        const cfg_proc *f = rw_proc_of(cx, a);
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
        const cfg_proc *f = rw_proc_of(cx, pl->procs[i].addr);
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
    it->ins = rw_block_ins_bytes(cx, b);
    it->size = (uint32_t)(b->end - b->start) + it->ins;
    if (!in.op || fl == FLOW_JUMP || fl == FLOW_RETURN || fl == FLOW_COROUTINE)
        return;
    size_t nsn;
    if (fl == FLOW_BRANCH) {
        it->drop = !it->rigid && in.ra == REG_ZERO && next && alpha_branch_target(&in, la) == na &&
                   !rw_snips_at(cx, la, &nsn);
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
    /* Control falling into an entry of its own procedure must not run
     * the entry's head (instrument.c): it branches past it. */
    bool head = fall < f->end && rw_head_bytes(cx, fall);
    if (!next || na != fall || head) {
        it->addbr = true;
        it->brto = fall;
        it->size += 4;
    }
}

/* Bytes of code inserted into block b. */
uint32_t rw_block_ins_bytes(const rw_ctx *cx, const cfg_block *b)
{
    uint32_t n = 0;
    if (!cx->ins)
        return 0;
    for (uint64_t o = b->start; o < b->end; o += 4) {
        size_t k;
        const struct rw_snip *s = rw_snips_at(cx, o, &k);
        for (size_t j = 0; j < k; j++)
            n += rw_snip_bytes(&s[j]);
    }
    return n;
}

/* A block with inserted code: an instruction's new address is where the
 * code inserted before it starts (its head's, for an entry). */
static void map_with_ins(rw_ctx *cx, const rw_item *it, const cfg_block *b)
{
    uint64_t pos = it->addr;
    for (uint64_t o = b->start; o < b->end; o += 4) {
        size_t k;
        const struct rw_snip *s = rw_snips_at(cx, o, &k);
        cx->map[(o - cx->code_lo) / 4] = pos;
        for (size_t j = 0; j < k; j++)
            if (!rw_snip_is_after(&s[j]))
                pos += rw_snip_bytes(&s[j]);
        pos += 4;
        for (size_t j = 0; j < k; j++)
            if (rw_snip_is_after(&s[j]))
                pos += rw_snip_bytes(&s[j]);
    }
}

bool rw_layout(rw_ctx *cx)
{
    const cfg_program *prog = cx->prog;
    bool ok = false;
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
        uint32_t k = (uint32_t)(rw_proc_of(cx, cx->pl->procs[i].addr) - prog->procs);
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
                uint32_t al = aligns[firsts[i] + k], gap = 0;
                if (k == lo && !part && rp->align > al)
                    al = rp->align;
                if (k == lo && !part && rp->pp)
                    gap = rp->pp->gap;
                cx->items[n++] = (rw_item){ .proc = porder[i], .block = order[firsts[i] + k],
                                            .align = al, .gap = gap, .cold = part == 1,
                                            .rigid = rp->rigid != 0 };
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
    uint64_t a = cx->text_addr + rw_instr_blob_size(cx);
    bool first_cold = true;
    for (size_t i = 0; i < n; i++) {
        rw_item *it = &cx->items[i];
        uint32_t al = it->align ? it->align : 4;
        uint64_t from = a + it->gap;
        if (it->cold && first_cold) {
            /* The cold area: the first address at cold_offset past a
             * multiple of cold_align, then the block's own alignment. */
            first_cold = false;
            uint64_t ca = cx->pl->cold_align, co = cx->pl->cold_offset;
            from = (a & ~(ca - 1)) + co;
            if (from < a)
                from += ca;
        }
        uint64_t na = (from + al - 1) & ~(uint64_t)(al - 1);
        it->pad = (uint32_t)(na - a);
        it->addr = na;
        a = na + it->size;
        const cfg_proc *f = &prog->procs[it->proc];
        const cfg_block *b = &f->blocks[it->block];
        if (!it->ins)
            for (uint64_t o = b->start; o < b->end; o += 4)
                cx->map[(o - cx->code_lo) / 4] = na + (o - b->start);
        else
            map_with_ins(cx, it, b);
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
    ok = true;
fail:
    free(porder);
    free(listed);
    free(order);
    free(aligns);
    free(splits);
    free(firsts);
    return ok;
oom:
    rw_fail(cx, "out of memory");
    goto fail;
}
