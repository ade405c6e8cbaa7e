/*
 * estimator/freq_quiet.c: the instructions of a block that no dynamic
 * event can hold at the head of the issue queue.
 *
 * DCPI's culprit analysis (seed 000, §6.3) finds a stall's possible causes
 * by ruling the others out with the code alone; the same reasoning, run the
 * other way, names the instructions for which every cause is ruled out.
 * Their samples measure the frequency with no stall on top: S_i ~ F M_i / P.
 * On the EV5:
 *
 *   - an I-cache or ITB miss, a taken branch's fetch bubble and a branch or
 *     jump mispredict hold the first instruction fetched after them: a
 *     block's first instruction (it follows a branch or is a branch's
 *     target), the first of each I-cache line, the one after a call (the
 *     return comes back to it) or after CALL_PAL (PALcode runs before it);
 *   - a D-cache or DTB miss holds the first user of the loaded value: an
 *     instruction reading a register last written by a load, or written
 *     before the block (a load there may have missed; so may a multiply
 *     still in flight);
 *   - a DTB miss holds the load or store itself, a full write buffer the
 *     store, and a barrier waits for the write buffer;
 *   - a multiplier or divider still busy from before the block holds the
 *     next multiply or divide.
 *
 * Everything else about an instruction's issue is static, and so in M_i.
 * estimator/culprits.c names the same causes forwards (which ones may have
 * held an instruction); a change to the rules there belongs here too.
 */
#include "estimator/freq_internal.h"

/* Does the instruction read a register written before the block, or last
 * written by a load?  writer[] holds, per register (integer 0-31, then FP),
 * the index of its last writer in the block, -1 for none. */
static bool reads_live_or_load(const alpha_insn *in, const int8_t *writer, const alpha_insn *ins)
{
    const alpha_opdef *op = in->op;
    const uint8_t roles[3] = { op->ra, op->rb, op->rc }, regs[3] = { in->ra, in->rb, in->rc };
    for (int f = 0; f < 3; f++) {
        int base;
        switch (roles[f]) {
        case RR_IR: case RR_IRW: base = 0; break;
        case RR_FR: case RR_FRW: base = 32; break;
        default: continue;
        }
        if (f == 1 && in->islit)
            continue;
        if (regs[f] == 31)
            continue;                           /* R31 and F31 read as zero */
        int w = writer[base + regs[f]];
        if (w < 0)
            return true;                        /* from before the block */
        const alpha_opdef *wo = ins[w].op;
        if (wo && wo->flags & OPF_LOAD && !(wo->flags & (OPF_ADDR | OPF_PREFETCH)))
            return true;
    }
    return false;
}

static void note_writes(const alpha_insn *in, int8_t *writer, int idx)
{
    const alpha_opdef *op = in->op;
    const uint8_t roles[3] = { op->ra, op->rb, op->rc }, regs[3] = { in->ra, in->rb, in->rc };
    for (int f = 0; f < 3; f++) {
        if (regs[f] == 31)
            continue;
        if (roles[f] == RR_IW || roles[f] == RR_IRW)
            writer[regs[f]] = (int8_t)idx;
        else if (roles[f] == RR_FW || roles[f] == RR_FRW)
            writer[32 + regs[f]] = (int8_t)idx;
    }
}

static bool uses_busy_unit(const alpha_opdef *op)
{
    switch (op->lat) {
    case LAT_IMULL: case LAT_IMULQ: case LAT_UMULH:
    case LAT_FDIVS: case LAT_FDIVT: case LAT_FSQRTS: case LAT_FSQRTT:
        return true;
    default:
        return false;
    }
}

void est_quiet(const uint32_t *words, uint32_t n, uint64_t pc, uint32_t line,
               const alpha_sched_slot *slots, uint8_t *quiet)
{
    /* Writers are tracked over the first 128 instructions; past that
     * (rare: a long straight run) nothing more is called quiet. */
    int8_t writer[64];
    alpha_insn ins[128];
    for (int r = 0; r < 64; r++)
        writer[r] = -1;
    for (uint32_t i = 0; i < n; i++) {
        quiet[i] = 0;
        if (i >= 128)
            continue;
        alpha_decode(words[i], &ins[i]);
        const alpha_insn *in = &ins[i];
        const alpha_opdef *op = in->op;
        if (!op) {
            for (int r = 0; r < 64; r++)
                writer[r] = -1;                 /* anything may have happened */
            continue;
        }
        uint64_t a = pc + 4 * (uint64_t)i;
        bool q = i > 0 && (line == 0 || a % line != 0);
        if (q) {
            const alpha_opdef *prev = ins[i - 1].op;
            q = prev && prev->flow == FLOW_NONE;
        }
        q = q && op->flow == FLOW_NONE &&
            !(op->flags & (OPF_LOAD | OPF_STORE | OPF_BARRIER | OPF_LOCKED | OPF_PREFETCH)) &&
            op->lat != LAT_MISC && op->lat != LAT_PAL;
        q = q && !(uses_busy_unit(op) && slots[i].unit_livein);
        q = q && !reads_live_or_load(in, writer, ins);
        quiet[i] = q;
        note_writes(in, writer, (int)i);
    }
}
