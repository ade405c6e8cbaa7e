/*
 * alpha/fields.c: what an instruction reads, writes and points at, and the
 * field setters the rewriter uses to retarget code.
 */
#include "alpha/insn.h"

static void add_reg(alpha_regset *set, unsigned role, unsigned r, bool want_read)
{
    bool fp = role == RR_FR || role == RR_FW || role == RR_FRW;
    bool reads = role == RR_IR || role == RR_IRW || role == RR_FR || role == RR_FRW;
    bool writes = role == RR_IW || role == RR_IRW || role == RR_FW || role == RR_FRW;
    if (r == 31 || (want_read ? !reads : !writes))
        return;
    *set |= 1ull << (fp ? ALPHA_FREG(r) : r);
}

/* Registers the PAL calls touch implicitly (the Linux/Alpha ABI). */
static void pal_regs(const alpha_insn *i, alpha_regset *uses, alpha_regset *defs)
{
    switch (i->func) {
    case PAL_CALLSYS:
        /* v0 = number, a0-a5 = arguments; v0 = result, a3 = error flag,
         * and a4 for the calls that return a second value (pipe, getxpid). */
        *uses |= (1ull << REG_V0) | (0x3full << REG_A0);
        *defs |= (1ull << REG_V0) | (1ull << REG_A3) | (1ull << REG_A4);
        break;
    case PAL_RDUNIQ:
        *defs |= 1ull << REG_V0;
        break;
    case PAL_WRUNIQ:
        *uses |= 1ull << REG_A0;
        break;
    case PAL_GENTRAP:
        *uses |= 1ull << REG_A0;
        break;
    default:
        break;
    }
}

void alpha_regs(const alpha_insn *i, alpha_regset *uses, alpha_regset *defs)
{
    *uses = *defs = 0;
    const alpha_opdef *d = i->op;
    if (!d)
        return;
    if (d->format == AF_PAL) {
        pal_regs(i, uses, defs);
        return;
    }
    add_reg(uses, d->ra, i->ra, true);
    add_reg(defs, d->ra, i->ra, false);
    if (!(d->format == AF_OPR && i->islit) && d->format != AF_BRA) {
        add_reg(uses, d->rb, i->rb, true);
        add_reg(defs, d->rb, i->rb, false);
    }
    if (d->format == AF_OPR || d->format == AF_FPOPR) {
        add_reg(uses, d->rc, i->rc, true);
        add_reg(defs, d->rc, i->rc, false);
    }
}

bool alpha_is_pcrel_branch(const alpha_insn *i)
{
    return i->op && i->op->format == AF_BRA;
}

uint64_t alpha_branch_target(const alpha_insn *i, uint64_t pc)
{
    return pc + 4 + (uint64_t)((int64_t)i->disp * 4);
}

uint64_t alpha_hint_target(const alpha_insn *i, uint64_t pc)
{
    return pc + 4 + (uint64_t)((int64_t)i->disp * 4);
}

bool alpha_set_branch_target(uint32_t *word, uint64_t pc, uint64_t target)
{
    alpha_insn in;
    alpha_decode(*word, &in);
    if (!alpha_is_pcrel_branch(&in) || ((target - pc) & 3))
        return false;
    int64_t disp = ((int64_t)(target - pc - 4)) / 4;
    if (disp < -(1 << 20) || disp >= (1 << 20))
        return false;
    *word = (*word & ~0x1fffffu) | ((uint32_t)disp & 0x1fffff);
    return true;
}

bool alpha_set_hint_target(uint32_t *word, uint64_t pc, uint64_t target, bool *exact)
{
    alpha_insn in;
    alpha_decode(*word, &in);
    if (!in.op || in.op->format != AF_JMP || in.func > 1 || ((target - pc) & 3))
        return false;
    int64_t disp = ((int64_t)(target - pc - 4)) / 4;
    if (exact)
        *exact = disp >= -(1 << 13) && disp < (1 << 13);
    *word = (*word & ~0x3fffu) | ((uint32_t)disp & 0x3fff);
    return true;
}

bool alpha_set_mem_disp(uint32_t *word, int64_t disp)
{
    alpha_insn in;
    alpha_decode(*word, &in);
    if (!in.op || in.op->format != AF_MEM || disp < -32768 || disp > 32767)
        return false;
    *word = (*word & ~0xffffu) | ((uint32_t)disp & 0xffff);
    return true;
}

bool alpha_invert_branch(uint32_t *word)
{
    alpha_insn in;
    alpha_decode(*word, &in);
    if (!in.op || in.op->flow != FLOW_CBRANCH)
        return false;
    /* The conditional branch opcodes pair up by flipping bit 2 (BEQ 0x39 /
     * BNE 0x3D, BLT/BGE, BLE/BGT, BLBC/BLBS, and the FP ones likewise). */
    *word ^= 0x04u << 26;
    return true;
}

