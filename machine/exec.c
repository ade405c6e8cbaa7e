/*
 * machine/exec.c: the block executors.
 *
 * exec_body.h is compiled three times: as the functional executor, as the
 * timed one that reports every retired instruction to a hook (the EV5
 * timing model and the PMU attach there), and as the values executor, the
 * timed one that also keeps what each instruction wrote, for the length of
 * a value-sampling run (values.c).  The functional one therefore carries
 * no per-instruction test for any of it, nor the timed one for values.
 * All dispatch through a table of label addresses indexed by the handler
 * translate.c chose for each instruction from its alpha/ table row.
 */
#include <setjmp.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/cycles.h"
#include "machine/exact.h"
#include "machine/linux.h"
#include "machine/ops.h"
#include "machine/unwind.h"

static inline uint64_t sext32(uint64_t v) { return (uint64_t)(int64_t)(int32_t)v; }
static inline uint64_t sext16(uint64_t v) { return (uint64_t)(int64_t)(int16_t)v; }
static inline uint64_t sext8(uint64_t v) { return (uint64_t)(int64_t)(int8_t)v; }

static inline uint64_t bytemask(unsigned m)
{
    uint64_t r = 0;
    for (int i = 0; i < 8; i++)
        if (m & (1u << i))
            r |= 0xffULL << (8 * i);
    return r;
}

static uint64_t zapmask[256];

static void init_tables(void)
{
    if (zapmask[1])
        return;
    for (int i = 0; i < 256; i++)
        zapmask[i] = bytemask((unsigned)i);
}

static inline uint64_t zapnot(uint64_t v, unsigned m) { return v & zapmask[m & 0xff]; }

/* The byte-manipulation group (AAH 4.6).  m is the width's byte mask. */
static inline uint64_t ext_l(uint64_t a, uint64_t b, unsigned m) { return zapnot(a >> ((b & 7) * 8), m); }
static inline uint64_t ext_h(uint64_t a, uint64_t b, unsigned m) { return zapnot(a << ((64 - (b & 7) * 8) & 63), m); }
static inline uint64_t ins_l(uint64_t a, uint64_t b, unsigned m)
{
    return zapnot(a << ((b & 7) * 8), (m << (b & 7)) & 0xff);
}
static inline uint64_t ins_h(uint64_t a, uint64_t b, unsigned m)
{
    unsigned bm = (m << (b & 7)) >> 8;
    if (!bm)
        return 0;
    return zapnot(a >> ((64 - (b & 7) * 8) & 63), bm);
}
static inline uint64_t msk_l(uint64_t a, uint64_t b, unsigned m) { return zapnot(a, ~(m << (b & 7)) & 0xff); }
static inline uint64_t msk_h(uint64_t a, uint64_t b, unsigned m) { return zapnot(a, ~((m << (b & 7)) >> 8) & 0xff); }

static inline uint64_t cmpbge(uint64_t a, uint64_t b)
{
    uint64_t r = 0;
    for (int i = 0; i < 8; i++)
        if (((a >> (8 * i)) & 0xff) >= ((b >> (8 * i)) & 0xff))
            r |= 1u << i;
    return r;
}

static inline uint64_t umulh(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* MVI */
static uint64_t perr(uint64_t a, uint64_t b)
{
    uint64_t s = 0;
    for (int i = 0; i < 64; i += 8) {
        int x = (int)((a >> i) & 0xff), y = (int)((b >> i) & 0xff);
        s += (uint64_t)(x > y ? x - y : y - x);
    }
    return s;
}
static uint64_t unpkbw(uint64_t b)
{
    return (b & 0xff) | ((b >> 8) & 0xff) << 16 | ((b >> 16) & 0xff) << 32 | ((b >> 24) & 0xff) << 48;
}
static uint64_t unpkbl(uint64_t b) { return (b & 0xff) | ((b >> 8) & 0xff) << 32; }
static uint64_t pkwb(uint64_t b)
{
    return (b & 0xff) | ((b >> 16) & 0xff) << 8 | ((b >> 32) & 0xff) << 16 | ((b >> 48) & 0xff) << 24;
}
static uint64_t pklb(uint64_t b) { return (b & 0xff) | ((b >> 32) & 0xff) << 8; }

/* Per-lane min/max: w is the lane width in bits, sgn signed, mx max. */
static uint64_t minmax(uint64_t a, uint64_t b, int w, bool sgn, bool mx)
{
    uint64_t r = 0, mask = (1ULL << w) - 1;
    for (int i = 0; i < 64; i += w) {
        uint64_t x = (a >> i) & mask, y = (b >> i) & mask;
        bool lt;
        if (sgn) {
            int64_t sx = (int64_t)(x << (64 - w)) >> (64 - w);
            int64_t sy = (int64_t)(y << (64 - w)) >> (64 - w);
            lt = sx < sy;
        } else
            lt = x < y;
        r |= ((lt != mx) ? x : y) << i;
    }
    return r;
}

static inline uint64_t ld8(intptr_t p) { return *(const uint8_t *)p; }
static inline uint64_t ld16(intptr_t p) { uint16_t v; memcpy(&v, (const void *)p, 2); return v; }
static inline uint64_t ld32(intptr_t p) { uint32_t v; memcpy(&v, (const void *)p, 4); return v; }
static inline uint64_t ld64(intptr_t p) { uint64_t v; memcpy(&v, (const void *)p, 8); return v; }
static inline void st8(intptr_t p, uint64_t v) { *(uint8_t *)p = (uint8_t)v; }
static inline void st16(intptr_t p, uint64_t v) { uint16_t x = (uint16_t)v; memcpy((void *)p, &x, 2); }
static inline void st32(intptr_t p, uint64_t v) { uint32_t x = (uint32_t)v; memcpy((void *)p, &x, 4); }
static inline void st64(intptr_t p, uint64_t v) { memcpy((void *)p, &v, 8); }

static int gentrap_sig(int64_t code, int *si)
{
    switch (code) {
    case GEN_INTOVF: *si = A_FPE_INTOVF; return A_SIGFPE;
    case GEN_INTDIV: *si = A_FPE_INTDIV; return A_SIGFPE;
    case GEN_FLTOVF: *si = A_FPE_FLTOVF; return A_SIGFPE;
    case GEN_FLTDIV: *si = A_FPE_FLTDIV; return A_SIGFPE;
    case GEN_FLTUND: *si = A_FPE_FLTUND; return A_SIGFPE;
    case GEN_FLTINV: *si = A_FPE_FLTINV; return A_SIGFPE;
    case GEN_FLTINE: *si = A_FPE_FLTRES; return A_SIGFPE;
    case GEN_ROPRAND: *si = A_FPE_FLTUNK; return A_SIGFPE;
    default: *si = 0; return A_SIGTRAP;
    }
}

/* The retire hook's view of a block: one call per instruction, with the
 * effective address of loads and stores (0 for the rest: the executor
 * clears eas[] at block entry when a hook is set). */
static __attribute__((noinline)) void retire_hook(thread *t, const block *b, uint32_t n, uint64_t next_pc)
{
    machine *m = t->m;
    bool costs = m->costs && m->curcpu && m->curcpu->core && b->ti;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t pc = b->pc + 4 * (uint64_t)i;
        int cpuno = m->curcpu ? m->curcpu->id : 0;
        axp_retire r = { .cpu = cpuno, .pid = t->p->pid, .tid = t->tid,
                         .pc = pc, .word = b->ins[i].word, .id = b->ins[i].id, .ea = t->ea[i],
                         .next_pc = i + 1 < n ? pc + 4 : next_pc, .sp = t->r[30],
                         .cost = costs ? costs_of(m, cpuno, i) : NULL };
        m->hook(m->hook_ctx, &r);
    }
}

/* The timed executor reports a block once its first n instructions have
 * retired (all of them, unless a fault cut it short) and control went to
 * next_pc: to this CPU's cycle model and to the retire hook. */
static inline void retire_block(thread *t, const block *b, uint32_t n, uint64_t next_pc)
{
    machine *m = t->m;
    cycles_core *core = m->curcpu ? m->curcpu->core : NULL;
    if (core && b->ti && n) {
        if (unlikely(m->costs))
            costs_block(m, m->curcpu->id, b->pc, n);
        if (unlikely(m->uw))
            unwind_block(m, m->curcpu->id, t, b->pc, b->pc + 4 * (uint64_t)(n - 1), b->ins[n - 1].word,
                         next_pc);
        if (m->tt)
            tthread_block(m->tt, m->curcpu->id, m->curcpu->front, b, n, t->ea, next_pc);
        else
            cycles_block(core, b->ti, b->pc, n, t->ea, next_pc, block_scheds(b, n));
    }
    if (unlikely(m->hook))
        retire_hook(t, b, n, next_pc);
}

/* The values executor's retire_block: the model without static
 * schedules, so that every load is timed by itself and its latency
 * noted, then the retire hook, then the run's records. */
static void retire_block_values(thread *t, const block *b, uint32_t n, uint64_t next_pc)
{
    machine *m = t->m;
    cycles_core *core = m->curcpu->core;
    cycles_load *log = values_log(m, m->curcpu->id);
    uint32_t nlog = 0;
    if (core && b->ti && n) {
        cycles_loads_log(core, log);
        cycles_block(core, b->ti, b->pc, n, t->ea, next_pc, NULL);
        nlog = cycles_loads_take(core);
        cycles_loads_log(core, NULL);
    }
    if (unlikely(m->hook))
        retire_hook(t, b, n, next_pc);
    if (t->vleft)
        values_record(t, b, n, next_pc, log, nlog);
}

_Noreturn void guest_fault(thread *t, block *b, const dinsn *d, int sig,
                           int code, uint64_t addr, bool after)
{
    uint64_t pc;
    if (b) {
        uint64_t idx = (uint64_t)(d - b->ins);
        uint64_t retired = idx + (after ? 1 : 0);
        pc = b->pc + idx * 4;
        t->icount -= b->n - retired;
        if (t->m->x)
            exact_fault(t, b, (uint32_t)retired);
        t->pc = after ? pc + 4 : pc;
        retire_block(t, b, (uint32_t)retired, b->pc + retired * 4);
        t->fault_word = d->word;
        t->fault_word_ok = true;
    } else {
        pc = addr;
        t->pc = addr;
        t->fault_word_ok = false;
        if (t->m->x)
            exact_break(t);
    }
    t->fault_pc = pc;
    t->fault_addr = addr;
    ksiginfo si = { .signo = sig, .code = code, .addr = addr };
    sig_force(t, &si);
    longjmp(*t->trap, 1);
}

int32_t exec_handler_offsets[H_COUNT];

/* Per-block work that only some runs want: exact counts, block tracing. */
static void block_enter_slow(thread *t, block *b)
{
    if (t->m->x)
        exact_enter(t, b);
    if (t->m->trace > 1)
        mlog(t->m, "%d: block 0x%lx-0x%lx", t->tid, (unsigned long)b->pc, (unsigned long)b->end);
    if (t->m->trace > 2)
        for (int i = 0; i < 32; i += 4)
            mlog(t->m, "   r%-2d %016lx %016lx %016lx %016lx", i, (unsigned long)t->r[i],
                 (unsigned long)t->r[i + 1], (unsigned long)t->r[i + 2], (unsigned long)t->r[i + 3]);
}

#define EXEC_NAME exec_functional
#define EXEC_INNER run_functional
#define EXEC_TIMED 0
#define EXEC_VALUES 0
#include "machine/exec_body.h"
#undef EXEC_NAME
#undef EXEC_INNER
#undef EXEC_TIMED

static uint64_t timed_part(thread *t, int64_t budget);
#define EXEC_NAME timed_part
#define EXEC_INNER run_timed
#define EXEC_TIMED 1
#include "machine/exec_body.h"
#undef EXEC_NAME
#undef EXEC_INNER
#undef EXEC_VALUES

/* The same, recording a value-sampling run (values.c). */
static uint64_t values_part(thread *t, int64_t budget);
#define EXEC_NAME values_part
#define EXEC_INNER run_values
#define EXEC_VALUES 1
#include "machine/exec_body.h"
#undef EXEC_NAME
#undef EXEC_INNER
#undef EXEC_TIMED
#undef EXEC_VALUES

/* The timed executor, which hands over to the values executor for the
 * length of a run and takes over again after it. */
uint64_t exec_timed(thread *t, int64_t budget)
{
    uint64_t n = 0;
    do {
        t->vswitch = false;
        n += t->vleft ? values_part(t, budget - (int64_t)n) : timed_part(t, budget - (int64_t)n);
    } while (t->vswitch && (int64_t)n < budget);
    return n;
}

void exec_init(void)
{
    init_tables();
    code_init_handlers();
    run_functional(NULL, 0);
}
