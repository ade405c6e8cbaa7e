/*
 * A bare machine for unit tests: one process with a code page and a data
 * page, no ELF, no kernel start-up.  Code is assembled with the alpha/
 * encoder, ends with `bpt`, and runs in the executor directly; registers
 * are set before and inspected after in the thread itself.
 */
#ifndef TEST_MACHINE_HARNESS_H
#define TEST_MACHINE_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "machine/axp.h"
#include "machine/linux.h"

#define CODE 0x120000000ULL
#define DATA 0x140000000ULL

typedef struct bare {
    machine *m;
    proc *p;
    thread *t;
    uint32_t code[2048];
    int n;
} bare;

static inline void bare_init(bare *b, bool exact)
{
    char err[256];
    axp_config cfg = { .ncpus = 1, .exact = exact, .root = "" };
    memset(b, 0, sizeof *b);
    b->m = axp_new(&cfg, err, sizeof err);
    b->p = proc_new(b->m);
    b->p->mm = mm_new();
    b->p->fd = fdt_new();
    b->p->sh = calloc(1, sizeof *b->p->sh);
    b->p->sh->refs = 1;
    b->t = thread_new(b->m, b->p);
    mm_map(b->m, b->p->mm, CODE, 4 * PG_SIZE, GP_R | GP_X, VMA_ANON, NULL, 0, -1, 0);
    mm_map(b->m, b->p->mm, DATA, 4 * PG_SIZE, GP_R | GP_W, VMA_ANON, NULL, 0, -1, 0);
    b->t->state = T_RUNNABLE;
}

/* One instruction from its table row by name. */
static inline uint32_t enc(const char *name, unsigned ra, unsigned rb, unsigned rc,
                           bool lit, int disp, uint32_t func)
{
    int id = alpha_lookup(name);
    if (id < 0)
        return 0;
    alpha_insn in;
    memset(&in, 0, sizeof in);
    in.op = &alpha_optable[id];
    in.id = (uint16_t)id;
    in.ra = (uint8_t)ra;
    in.rb = (uint8_t)rb;
    in.rc = (uint8_t)rc;
    in.islit = lit;
    in.lit = (uint8_t)rb;
    in.disp = disp;
    in.func = func ? func : in.op->func;
    return alpha_encode(&in);
}
/* Operate: rc = ra OP rb, or rc = ra OP #lit. */
#define OPR(name, ra, rb, rc) enc(name, ra, rb, rc, false, 0, 0)
#define OPI(name, ra, lit, rc) enc(name, ra, lit, rc, true, 0, 0)
#define MEM(name, ra, disp, rb) enc(name, ra, rb, 0, false, disp, 0)
#define BRA(name, ra, disp) enc(name, ra, 0, 0, false, disp, 0)
#define FOP(name, fa, fb, fc, fn) enc(name, fa, fb, fc, false, 0, fn)
#define PAL(func) enc("call_pal", 0, 0, 0, false, 0, func)

static inline void emit(bare *b, uint32_t w) { b->code[b->n++] = w; }

/* Write the code (plus a final bpt), run from CODE until the bpt or a fault,
 * return the instructions retired. */
static inline uint64_t bare_run(bare *b)
{
    emit(b, PAL(PAL_BPT));
    mem_write_force(b->p->mm, CODE, b->code, (size_t)b->n * 4);
    code_flush(b->p->mm);
    b->t->pc = CODE;
    b->t->sigpend = 0;
    uint64_t n = exec_functional(b->t, 1 << 30);
    code_reap(b->m, b->p->mm);
    return n;
}

/* The signal the run stopped with (SIGTRAP means it reached the bpt). */
static inline int bare_stop_signal(const bare *b)
{
    for (int s = 1; s <= 64; s++)
        if (b->t->sigpend & SIGBIT(s))
            return s;
    return 0;
}

#endif
