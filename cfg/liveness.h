/*
 * cfg/liveness.h: which registers hold a value some later instruction of
 * the procedure may read, at every point of it.  What code inserted into
 * a procedure (an instrumenter's counters) may use as scratch without
 * saving: a register not live at a point is free there.
 *
 * The analysis is backward over the blocks, with the calling convention
 * standing in for what callers and callees do:
 *
 * - A call (JSR or BSR linking through ra) reads the argument registers,
 *   pv, gp and sp, and clobbers every caller-saved register: the callee
 *   may overwrite them, so nothing the caller needs can be in them.
 * - A RET through ra leaves live what a caller may still read: the
 *   results (v0, f0, f1), the callee-saved registers, ra, gp and sp.  A
 *   jump through a register to another procedure leaves live also the
 *   arguments and pv; a branch into another procedure, all that and what
 *   the code there reads (its own liveness, one level deep).
 * - Anything else is taken as reading every register: a RET or a linking
 *   branch through another register (glibc's division routines are called
 *   that way and keep the caller's temporaries), JSR_COROUTINE, a block
 *   with no successor the CFG knows, and a system call (its arguments are
 *   not only a0-a5: sigreturn reads the whole context).
 */
#ifndef CFG_LIVENESS_H
#define CFG_LIVENESS_H

#include "alpha/insn.h"
#include "cfg/cfg.h"

#define CFG_LIVE_ALL (~0ull & ~(1ull << REG_ZERO) & ~(1ull << ALPHA_FREG(31)))

typedef struct cfg_live {
    size_t nblocks;
    alpha_regset *in;       /* live at each block's first instruction */
    alpha_regset *out;      /* live after each block's last instruction */
} cfg_live;

/* Liveness of f.  False with a message when its CFG misses edges (nothing
 * can be said about code with unknown successors) or out of memory. */
bool cfg_live_build(const cfg_program *p, const cfg_proc *f, cfg_live *out, char *err,
                    size_t errlen);
void cfg_live_free(cfg_live *lv);

/* Live just before the instruction at addr (inside block b of f). */
alpha_regset cfg_live_before(const cfg_program *p, const cfg_proc *f, const cfg_live *lv,
                             uint32_t b, uint64_t addr);

/* What one instruction reads and writes, the calling convention included
 * (the rules above). */
void cfg_live_effect(const alpha_insn *in, alpha_regset *uses, alpha_regset *defs);

#endif
