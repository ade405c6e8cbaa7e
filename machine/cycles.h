/*
 * machine/cycles.h: the EV5 cycle model, one per simulated CPU.
 *
 * The machine executes functionally and hands every retired instruction to
 * cycles_step() in program order.  The model replays it through an in-order
 * 21164: it decides in which cycle each instruction issues (slotting,
 * operand latencies, busy units, the fetch block rule) and what the memory
 * hierarchy and the predictors make it wait for.  Nothing it decides feeds
 * back into execution, so a timed run computes exactly what a functional
 * run computes, and the same run always gives the same cycles.
 *
 * All numbers come from alpha/ev5.h's parameters; see docs/machine.md
 * ("The cycle model") for the rules and what they simplify.
 */
#ifndef MACHINE_CYCLES_H
#define MACHINE_CYCLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alpha/ev5.h"

/* Why no instruction issued in a cycle.  Every cycle of a run is either an
 * issue cycle or a stall charged to exactly one of these. */
enum {
    ST_ICACHE,        /* fetch waiting for an I-cache fill */
    ST_ITB,           /* ITB miss refill */
    ST_DCACHE,        /* an operand comes from a load that missed the D-cache */
    ST_DTB,           /* DTB miss refill */
    ST_WRITE_BUFFER,  /* a store or MB waiting for the write buffer */
    ST_BRANCH,        /* conditional-branch mispredict */
    ST_JUMP,          /* JMP/JSR hint or RET stack mispredict */
    ST_TAKEN,         /* fetch bubble after a taken branch */
    ST_DEPENDENCY,    /* an operand's pipeline latency (ALU, load hit, FP) */
    ST_MULTIPLIER,    /* the integer multiplier is busy */
    ST_DIVIDER,       /* the FP divider is busy */
    ST_SYSCALL,       /* a system call or other PAL call */
    ST_COUNT
};
extern const char *const cycles_stall_names[ST_COUNT];

/* Events the model counts; the PMU samples them. */
enum {
    CEV_CYCLES,
    CEV_IMISS,        /* I-cache misses */
    CEV_DMISS,        /* D-cache misses (loads) */
    CEV_BRANCHMP,     /* conditional-branch mispredicts */
    CEV_DTBMISS,
    CEV_ITBMISS,
    CEV_JSRMP,        /* JMP/JSR/RET mispredicts */
    CEV_SMISS,        /* S-cache misses */
    CEV_ISSUES,       /* instructions issued */
    CEV_COUNT
};

typedef struct cycles_stats {
    uint64_t cycles;              /* the cycle the latest group issued in: the core's clock */
    uint64_t instructions;
    uint64_t issue_cycles;        /* cycles in which something issued */
    uint64_t icache_misses, dcache_misses, scache_misses, bcache_misses;
    uint64_t itb_misses, dtb_misses;
    uint64_t branches, branch_mispredicts;
    uint64_t jumps, jump_mispredicts;      /* JMP, JSR, RET, coroutine */
    uint64_t returns, return_mispredicts;  /* RET, included in jumps */
    uint64_t loads, stores, write_buffer_merges;
    uint64_t stalls[ST_COUNT];
    uint64_t group_size[5];       /* issue groups by size (index 1..4; 0 is scratch) */
} cycles_stats;

typedef struct cycles_core cycles_core;

/* What the PMU sees of the model: the head of the issue queue changes
 * (cycle_to is when the instruction at pc issues, cycle_from when the one
 * before it did) and events happen.  Both may be NULL.  When advance is
 * called, the stall cycles of the wait it reports (all but one cycle of
 * it) are already in cycles_get_stats' stalls: with tracing on
 * (cycles_set_trace), the growth of stalls[] from one call to the next is
 * the stall of the instruction at pc, by cause. */
typedef struct cycles_observer {
    void (*advance)(void *ctx, uint64_t cycle_from, uint64_t cycle_to, uint64_t pc);
    void (*event)(void *ctx, int ev, uint64_t cycle, uint64_t pc);
    void *ctx;
} cycles_observer;

/* A core with params p (validated by ev5_validate); NULL on allocation
 * failure.  The parameters are copied. */
cycles_core *cycles_new(const ev5_params *p);
void cycles_free(cycles_core *c);
void cycles_set_observer(cycles_core *c, const cycles_observer *o);

/* obs.advance is called only once the issue cycle reaches wake (the PMU
 * sets it to its next interrupt), and obs.event only for events in mask. */
void cycles_set_wake(cycles_core *c, uint64_t cycle);
/* trace: call obs.advance on every issue group, whatever the wake cycle. */
void cycles_set_trace(cycles_core *c, bool trace);
cycles_observer cycles_get_observer(const cycles_core *c);
void cycles_set_event_mask(cycles_core *c, uint32_t mask);

/* An instruction as the model reads it: its alpha_optable row and its
 * register fields resolved to the model's register numbering.  The machine
 * decodes each instruction of a translated block once (cycles_decode), so
 * that feeding the model is table lookups, not field extraction.  The
 * contents depend on the word alone, not on a core's parameters. */
typedef struct cycles_insn {
    uint16_t op;       /* alpha_optable row; alpha_optable_len: unknown, + 1: UNOP */
    uint16_t ra;       /* where Ra's ready time is read (the early copy for a branch or CMOV) */
    uint8_t rb, rc;    /* registers read through Rb and Rc */
    uint8_t dst;       /* register written */
    uint8_t back : 1;  /* a conditional branch with a negative displacement */
    uint8_t mem : 1;   /* a load or store: the model reads its effective address */
    int16_t hint;      /* JMP/JSR: the hint field, in instructions */
} cycles_insn;

void cycles_decode(uint32_t word, unsigned id, cycles_insn *out);

/* One retired instruction: its address, word and alpha_optable row
 * (0xffff: unknown), the effective address of a load or store, and the
 * address of the next instruction executed. */
void cycles_step(cycles_core *c, uint64_t pc, uint32_t word, unsigned id, uint64_t ea, uint64_t next_pc);

/* Static schedules: where each instruction of a block's rest, from a
 * given instruction on, issues relative to that one when nothing outside
 * holds it up, with what has to be checked to know that nothing does (see
 * cycles_sched.c).  The machine reserves cycles_sched_size(n) zeroed bytes
 * (pointer-aligned) per translated block of n instructions, where the
 * model keeps the schedules it builds, and frees them with
 * cycles_sched_free when it drops the block. */
typedef struct cycles_sched cycles_sched;
size_t cycles_sched_size(uint32_t n);
void cycles_sched_free(cycles_sched **ts, uint32_t n);

/* The first n (at most CYCLES_BLOCK_MAX) instructions of a straight-line
 * run at pc, decoded into ins, retired in order: ea[i] is instruction i's
 * effective address (every ea[i] is read, its value used only for loads
 * and stores), next_pc where control went after the last one.
 * The same as n calls of cycles_step, in a fraction of the time: the
 * machine calls this once per executed block.  ts is the block's
 * schedules, or NULL (always NULL when n is not the whole block); cores
 * that share them must have the same parameters. */
void cycles_block(cycles_core *c, const cycles_insn *ins, uint64_t pc, uint32_t n, const uint64_t *ea,
                  uint64_t next_pc, cycles_sched **ts);

/* The model in two parts, for running them on two threads.  The front
 * end (cycles_front.c) holds what depends only on the order of
 * instructions and addresses, not on time: the I-cache's, ITB's and
 * DTB's contents.  cycles_front_block takes a block's first n (at most
 * CYCLES_BLOCK_MAX) instructions through it and writes what it found to
 * out[] (at most n entries; returns how many); cycles_back_block does the rest of
 * cycles_block with those findings.  cycles_block is the one followed
 * by the other.  Each part must see every block, in the same order, and
 * the address-space switches at the same points: cycles_front_asn and
 * cycles_back_asn (cycles_set_asn is both). */
#define CYCLES_BLOCK_MAX 256
typedef struct cycles_front cycles_front;
cycles_front *cycles_front_of(cycles_core *c);
uint32_t cycles_front_block(cycles_front *f, const cycles_insn *ins, uint64_t pc, uint32_t n, const uint64_t *ea,
                            uint16_t *out);
void cycles_back_block(cycles_core *c, const cycles_insn *ins, uint64_t pc, uint32_t n, const uint64_t *ea,
                       uint64_t next_pc, cycles_sched **ts, const uint16_t *found, uint32_t nfound);
void cycles_front_asn(cycles_front *f, uint32_t asn);
void cycles_back_asn(cycles_core *c, uint32_t asn);

/* Whether cycles_block uses static schedules (on by default).  The
 * results are the same either way; this is for checking that they are. */
void cycles_set_schedules(cycles_core *c, bool on);

/* The address-space number that tags cache and TLB entries from now on
 * (the machine uses the process id). */
void cycles_set_asn(cycles_core *c, uint32_t asn);

/* Value sampling: with a log set, every load the model retires notes its
 * latency (issue to data ready, as the model timed it) and the level of
 * the hierarchy that answered, in retirement order, at most
 * CYCLES_BLOCK_MAX of them; cycles_loads_take returns how many since the
 * last take.  Blocks fed while a log is set must come without static
 * schedules (ts NULL), which give the same cycles but skip loads that
 * hit.  cycles_charge adds n cycles the core spends elsewhere (the
 * interrupt handler's interpreter): they delay the next block fed,
 * as a stall of cause ST_SYSCALL. */
enum { CLVL_DCACHE, CLVL_SCACHE, CLVL_BCACHE, CLVL_MEMORY, CLVL_COUNT };
typedef struct cycles_load {
    uint64_t pc;
    uint32_t latency;
    uint8_t level;          /* CLVL_* */
} cycles_load;
void cycles_loads_log(cycles_core *c, cycles_load *log);
/* Every load the model times, to fn as well (the truth of --truth); the
 * same caveat about static schedules holds. */
void cycles_set_load_hook(cycles_core *c, void (*fn)(void *ctx, uint64_t pc, uint32_t latency, int level),
                          void *ctx);
uint32_t cycles_loads_take(cycles_core *c);
void cycles_charge(cycles_core *c, uint64_t n);


/* ProfileMe (after Dean et al.; cycles_pm.c): every so many fetched
 * instructions one is tagged, and once the model has timed it, its record
 * goes to fn.  The model fetches no wrong path and traps cut a block
 * before the faulting instruction, so every tagged instruction retires.
 * With window > 0 each tagged instruction is paired with a second one
 * tagged a uniformly drawn 1..window fetched instructions later, and the
 * two records go out together, the first with pair_first set.  The
 * intervals between first instructions are drawn uniformly from [lo, hi]
 * with the generator seeded by seed.  Tagging and recording change no
 * cycle: a block holding a tagged instruction is modelled without its
 * static schedule, which gives the same cycles. */
enum {
    CPM_IMISS = 1, CPM_ITBMISS = 2, CPM_DMISS = 4, CPM_DTBMISS = 8,
    CPM_LOAD = 16, CPM_STORE = 32, CPM_CBRANCH = 64, CPM_TAKEN = 128,
    CPM_JUMP = 256, CPM_MISPREDICT = 512,
    CPM_PAIRED = 1024,          /* one of a pair */
    CPM_USEFUL = 2048,          /* its partner issued (and retired) while it was in progress */
};
typedef struct cycles_pm {
    uint64_t pc, ea;            /* ea: a load's or store's address, a jump's target */
    uint32_t flags;             /* CPM_* */
    uint16_t hist;              /* outcomes of the last conditional branches before it, newest in bit 0 */
    uint8_t hist_len;           /* how many of hist's bits are real (at most 16) */
    uint8_t level;              /* a load's: CLVL_* */
    uint64_t fetch, issue, ready;   /* cycles: its fetch block ready to issue, issued, result ready */
    uint64_t head;              /* cycles it spent at the head of the issue queue */
    uint32_t window;            /* the pair window (0: unpaired) */
    uint32_t distance;          /* second of a pair: fetched instructions after the first */
} cycles_pm;
typedef struct cycles_pm_config {
    uint32_t lo, hi;            /* interval between first tagged instructions */
    uint32_t window;            /* 0: single instructions */
    uint64_t seed;
} cycles_pm_config;
/* fn gets one record (n 1) or a pair (n 2, first then second). */
void cycles_set_profileme(cycles_core *c, const cycles_pm_config *cfg,
                          void (*fn)(void *ctx, const cycles_pm *r, int n), void *ctx);
/* The truth behind ProfileMe's wasted issue slots: with fn set, every
 * instruction goes through the model one at a time (the same cycles) and,
 * once no later instruction can issue in its time in progress (from its
 * fetch block's readiness up to its result), fn gets its issue slots in
 * that time (width x cycles) and how many other instructions issued then.
 * cycles_pm_truth_flush hands over those still open (at the end). */
void cycles_set_pm_truth(cycles_core *c, void (*fn)(void *ctx, uint64_t pc, uint64_t slots, uint64_t used),
                         void *ctx);
void cycles_pm_truth_flush(cycles_core *c);
/* The true paths behind the branch histories, for measuring path
 * reconstruction (docs/machine.md "ProfileMe"): with fn set, the model
 * keeps the last CYCLES_RUNS runs of consecutive addresses it was fed
 * (a run ends where control went elsewhere), and for each tagged
 * instruction fn gets its record (pc and history) and the runs that led
 * to it, newest first: the first from where its run began up to it (end
 * is pc + 4), then older ones until they hold as many conditional
 * branches as the history (fewer when the ring is used up).  Changes no
 * cycle and no sample. */
#define CYCLES_RUNS 64
typedef struct cycles_run {
    uint64_t start, end;        /* [start, end) */
    uint32_t cbr;               /* conditional branches that ended blocks in it */
} cycles_run;
void cycles_set_pm_paths(cycles_core *c, void (*fn)(void *ctx, const cycles_pm *r, const cycles_run *run, uint32_t n),
                         void *ctx);
typedef struct cycles_pm_stats {
    uint64_t tagged, records, pairs;
} cycles_pm_stats;
void cycles_pm_get_stats(const cycles_core *c, cycles_pm_stats *out);

/* The cycle in which the last instruction issued. */
uint64_t cycles_now(const cycles_core *c);
const cycles_stats *cycles_get_stats(cycles_core *c);

#endif
