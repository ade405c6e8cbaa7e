/*
 * cfg/liveness.c: live registers of a procedure, with calls, returns and
 * system calls modelled by the calling convention (cfg/liveness.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cfg/liveness.h"

#define R(n) (1ull << (n))
#define F(n) (1ull << ALPHA_FREG(n))
#define RANGE(lo, hi) ((((hi) >= 63 ? ~0ull : (1ull << ((hi) + 1)) - 1)) & ~((1ull << (lo)) - 1))

/* Caller-saved: v0, t0-t7, a0-a5, t8-t11, ra, pv, at; f0, f1, f10-f30. */
#define CALLER_SAVED (RANGE(0, 8) | RANGE(16, 28) | F(0) | F(1) | \
                      RANGE(ALPHA_FREG(10), ALPHA_FREG(30)))
#define ARGS (RANGE(16, 21) | RANGE(ALPHA_FREG(16), ALPHA_FREG(21)))
#define CALLEE_SAVED (RANGE(9, 15) | RANGE(ALPHA_FREG(2), ALPHA_FREG(9)))
#define FRAME (R(REG_GP) | R(REG_SP))

/* What a caller may still read when a procedure returns through ra. */
#define LIVE_RET (R(REG_V0) | F(0) | F(1) | CALLEE_SAVED | R(REG_RA) | FRAME)
/* ... and when it branches to another procedure instead of returning. */
#define LIVE_TAIL (LIVE_RET | ARGS | R(REG_PV))

void cfg_live_effect(const alpha_insn *in, alpha_regset *uses, alpha_regset *defs)
{
    alpha_regs(in, uses, defs);
    if (!in->op)
        return;
    alpha_flow fl = alpha_flow_of(in);
    if (in->op->format == AF_PAL) {
        if (in->func == PAL_CALLSYS)
            *uses = CFG_LIVE_ALL;
        return;
    }
    if (fl == FLOW_COROUTINE) {
        *uses = CFG_LIVE_ALL;
        return;
    }
    bool links = (fl == FLOW_CALL || fl == FLOW_BRANCH || fl == FLOW_JUMP) && in->ra != REG_ZERO;
    if (links) {
        if (fl == FLOW_CALL && in->ra == REG_RA) {
            *uses |= ARGS | R(REG_PV) | FRAME;
            *defs |= CALLER_SAVED;
        } else {
            *uses = CFG_LIVE_ALL;
        }
    }
}

static bool solve(const cfg_program *p, const cfg_proc *f, cfg_live *out, bool deep);

/* What is live where control goes when it leaves f for target t without a
 * call: the code there, as far as its own procedure tells (assembly code
 * such as glibc's memset branches to a loop that is a procedure of its
 * own, and that loop reads temporaries). */
static alpha_regset live_at_target(const cfg_program *p, const cfg_proc *f, uint64_t t)
{
    const cfg_proc *g = t ? cfg_proc_at(p, t) : NULL;
    if (!g || g == f || (g->flags & CFG_PF_MISSING))
        return CFG_LIVE_ALL;
    uint32_t b = cfg_block_at(g, t);
    cfg_live lv = { 0 };
    alpha_regset s = CFG_LIVE_ALL;
    if (b != CFG_NONE && solve(p, g, &lv, false))
        s = cfg_live_before(p, g, &lv, b, t);
    cfg_live_free(&lv);
    return s;
}

/* Live after the last instruction of block b, from its successors.  deep:
 * follow tail branches into the procedures they go to (one level; from
 * there on, everything is live). */
static alpha_regset live_out(const cfg_program *p, const cfg_proc *f, const cfg_live *lv,
                             uint32_t b, bool abi, bool deep)
{
    const cfg_block *bl = &f->blocks[b];
    if (!bl->nout)
        return CFG_LIVE_ALL;
    alpha_regset s = 0;
    for (uint32_t k = 0; k < bl->nout; k++) {
        const cfg_edge *e = &f->edges[f->out_edges[bl->first_out + k]];
        if (e->to < f->nblocks) {
            s |= lv->in[e->to];
            continue;
        }
        uint32_t w = 0;
        alpha_insn in;
        cfg_word(p, bl->end - 4, &w);
        alpha_decode(w, &in);
        if (e->kind == CFG_EDGE_RETURN && alpha_flow_of(&in) == FLOW_RETURN && in.rb == REG_RA)
            s |= LIVE_RET;
        else if (e->kind == CFG_EDGE_OUT && abi && !e->target)
            s |= LIVE_TAIL;     /* through a register: a call's convention */
        else if (e->kind == CFG_EDGE_OUT && abi && deep)
            s |= LIVE_TAIL | live_at_target(p, f, e->target);
        else
            s = CFG_LIVE_ALL;
    }
    return s;
}

static alpha_regset through(const cfg_program *p, uint64_t lo, uint64_t hi, alpha_regset live)
{
    for (uint64_t a = hi; a > lo; a -= 4) {
        uint32_t w = 0;
        alpha_insn in;
        alpha_regset u, d;
        cfg_word(p, a - 4, &w);
        alpha_decode(w, &in);
        cfg_live_effect(&in, &u, &d);
        live = (live & ~d) | u;
    }
    return live & CFG_LIVE_ALL;
}

/* A procedure that returns through some other register than ra keeps a
 * convention of its own: its tail branches are not taken as ABI ones. */
static bool follows_abi(const cfg_program *p, const cfg_proc *f)
{
    for (size_t b = 0; b < f->nblocks; b++) {
        uint32_t w = 0;
        alpha_insn in;
        cfg_word(p, f->blocks[b].end - 4, &w);
        alpha_decode(w, &in);
        if (alpha_flow_of(&in) == FLOW_RETURN && in.rb != REG_RA)
            return false;
    }
    return true;
}

static bool solve(const cfg_program *p, const cfg_proc *f, cfg_live *out, bool deep)
{
    out->nblocks = f->nblocks;
    out->in = calloc(f->nblocks ? f->nblocks : 1, sizeof *out->in);
    out->out = calloc(f->nblocks ? f->nblocks : 1, sizeof *out->out);
    if (!out->in || !out->out) {
        cfg_live_free(out);
        return false;
    }
    bool abi = follows_abi(p, f), changed = true;
    while (changed) {
        changed = false;
        for (size_t b = f->nblocks; b-- > 0;) {
            alpha_regset o = live_out(p, f, out, (uint32_t)b, abi, deep);
            alpha_regset i = through(p, f->blocks[b].start, f->blocks[b].end, o);
            if (o != out->out[b] || i != out->in[b]) {
                out->out[b] = o;
                out->in[b] = i;
                changed = true;
            }
        }
    }
    return true;
}

bool cfg_live_build(const cfg_program *p, const cfg_proc *f, cfg_live *out, char *err,
                    size_t errlen)
{
    out->nblocks = f->nblocks;
    out->in = out->out = NULL;
    if (f->flags & CFG_PF_MISSING) {
        snprintf(err, errlen, "%s: its CFG misses edges (%s): no liveness", f->name, f->why);
        return false;
    }
    if (!solve(p, f, out, true)) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    return true;
}

void cfg_live_free(cfg_live *lv)
{
    free(lv->in);
    free(lv->out);
    lv->in = lv->out = NULL;
}

alpha_regset cfg_live_before(const cfg_program *p, const cfg_proc *f, const cfg_live *lv,
                             uint32_t b, uint64_t addr)
{
    return through(p, addr, f->blocks[b].end, lv->out[b]);
}
