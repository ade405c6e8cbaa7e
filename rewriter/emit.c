/*
 * rewriter/emit.c: the new code, word by word.
 *
 * Moved blocks are copied with every PC-relative branch retargeted through
 * the old-to-new map, the final branch inverted or a `br` appended as the
 * layout decided, jump hints recomputed, and padding filled with nops.
 * Procedures left in place get their branches and hints into moved code
 * retargeted where they are.  A branch that no longer reaches pins the
 * moved side, for the next round.
 */
#include <elf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"

static const plan_hint *find_hint(const rw_ctx *cx, uint64_t jump)
{
    for (size_t i = 0; i < cx->pl->nhints; i++)
        if (cx->pl->hints[i].jump == jump)
            return &cx->pl->hints[i];
    return NULL;
}

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
    /* A branch of a procedure to one of its own entries skips the entry's
     * head: only calls start an activation (instrument.c). */
    alpha_insn bi;
    alpha_decode(*word, &bi);
    if (f && cx->ins && t >= f->start && t < f->end && alpha_flow_of(&bi) != FLOW_CALL)
        nt += rw_head_bytes(cx, t);
    if (alpha_set_branch_target(word, pc, nt))
        return true;
    /* Out of reach: keep the farther side in place. */
    const cfg_proc *tf = rw_proc_of(cx, t);
    if (f && rw_is_moved(cx, f))
        rw_pin(cx, f, RW_PIN_RANGE, "branch at 0x%llx to 0x%llx", (unsigned long long)pc,
               (unsigned long long)t);
    else if (tf && rw_is_moved(cx, tf))
        rw_pin(cx, tf, RW_PIN_RANGE, "branch to 0x%llx from 0x%llx", (unsigned long long)t,
               (unsigned long long)pc);
    else if (cx->repin)
        return true;    /* the rw_layout is stale anyway: next round */
    else
        return rw_fail(cx, "%s: branch at 0x%llx cannot reach 0x%llx", cx->img->path,
                       (unsigned long long)pc, (unsigned long long)nt);
    return true;
}

bool rw_emit(rw_ctx *cx)
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
        uint64_t pc = it->addr;
        for (uint64_t o = b->start; o < end; o += 4, p += 4, pc += 4) {
            uint32_t w;
            size_t nsn = 0;
            const struct rw_snip *sn = it->ins ? rw_snips_at(cx, o, &nsn) : NULL;
            for (size_t k = 0; k < nsn; k++)
                if (!rw_snip_is_after(&sn[k])) {
                    if (!rw_instr_emit(cx, &sn[k], pc, p))
                        return false;
                    pc += rw_snip_bytes(&sn[k]);
                    p += rw_snip_bytes(&sn[k]);
                }
            cfg_word(cx->prog, o, &w);
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
            for (size_t k = 0; k < nsn; k++)
                if (rw_snip_is_after(&sn[k])) {
                    if (!rw_instr_emit(cx, &sn[k], pc + 4, p + 4))
                        return false;
                    /* A stub's last word goes on to its target, past
                     * the target's head as the procedure's branches. */
                    if (rw_snip_stub(&sn[k])) {
                        uint32_t bw = ALPHA_BR_WORD;
                        if (!fix_branch(cx, &bw, pc + rw_snip_bytes(&sn[k]), rw_snip_stub(&sn[k]), f))
                            return false;
                        rw_put32(p + rw_snip_bytes(&sn[k]), bw);
                    }
                    pc += rw_snip_bytes(&sn[k]);
                    p += rw_snip_bytes(&sn[k]);
                }
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
bool rw_patch_pinned(rw_ctx *cx)
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
