/*
 * machine/cycles_int.h: the cycle model's state, shared by the model
 * (cycles.c) and its block schedules (cycles_sched.c).  Nothing else
 * includes this.
 */
#ifndef MACHINE_CYCLES_INT_H
#define MACHINE_CYCLES_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "alpha/sched.h"
#include "machine/cycles.h"
#include "machine/cycles_mem.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)


/* Issue groups: alpha/'s table (ev5_groups), rows and columns. */
#define GROUP_STATES EV5_GROUP_STATES
#define GROUP_CLASSES EV5_GROUP_CLASSES
#define RAS_RING 1024           /* >= ev5_validate's limit on return_stack */

/* What the model needs of an instruction, from alpha/'s issue rules for
 * its row (ev5_issue) and the row's kind of control flow. */
enum { K_ALU, K_LOAD, K_STORE, K_CBR, K_BR, K_BSR, K_JMP, K_JSR, K_RET, K_COR, K_CALLSYS, K_PAL, K_MB };
enum { U_NONE, U_MUL, U_DIV };

/* Register indices: 0-31 integer, 32-63 FP; 64-127 always ready (an
 * unused field or a literal reads there); 128 takes writes to R31/F31.
 * times[] holds when each register's value is ready, and from EARLY on
 * when a same-cycle branch or CMOV may use it, so that cycles_insn.ra
 * picks the right one without a test. */
#define REG_NONE 64
#define REG_SINK 128
#define EARLY 256

/* What the per-instruction path tests, as bits, so that the common
 * case (an ALU operation) costs one test. */
enum {
    F_LOAD = 1, F_STORE = 2, F_UNIT = 4, F_MB = 8,
    F_FAST = 16,                /* compare/logical: 0 cycles to a same-cycle branch or CMOV */
    F_CTRL = 32,                /* a branch, jump or PAL call */
    F_MEM = F_LOAD | F_STORE
};

/* What the front end (cycles_front.c) found at an instruction: its
 * fetch missed the ITB or the I-cache, its load or store missed the
 * DTB.  A block's findings go to the rest of the model as a list of
 * (index << FB_SHIFT | bits), in order. */
enum { FB_ITB = 1, FB_IMISS = 2, FB_DTB = 4 };
#define FB_SHIFT 3
#define FB_BITS ((1u << FB_SHIFT) - 1)
#define FB_NONE 0xffffu         /* "no further finding" as an index */

typedef struct cop {
    uint8_t kind, unit, pipe;   /* pipe: EV5_PC_* */
    uint8_t lat;
    uint8_t busy;               /* unit occupancy */
    uint8_t cls;                /* column of gnext */
    uint8_t flags;              /* F_* */
} cop;

/* The part of the model that depends only on the order of instructions
 * and addresses, never on time: the I-cache's and the TLBs' contents
 * (cycles_front.c).  It can run ahead of the rest, on another thread. */
struct cycles_front {
    uint64_t akey;              /* CKEY(asn, 0) */
    uint64_t iline;             /* the I-cache line being fetched from (key) */
    uint64_t ipage;             /* the ITB page of it (key) */
    uint32_t page_shift;
    ccache ic;
    ctlb itb, dtb;
};

/* ProfileMe's state (cycles_pm.c): countdowns in fetched instructions
 * to the next tagged instruction, and the global branch history. */
#define PMT_RECENT 1024         /* issue cycles of the last instructions, for the truth */
typedef struct pm_open {
    uint64_t pc, fetch, ready, used;
} pm_open;
typedef struct pm_state {
    bool on;
    bool sampling;              /* ProfileMe tags instructions (else only the truth) */
    void (*truth)(void *ctx, uint64_t pc, uint64_t slots, uint64_t used);
    void *truth_ctx;
    uint64_t recent[PMT_RECENT];
    uint32_t nrecent;           /* written so far (the ring holds the last PMT_RECENT) */
    pm_open *open;              /* instructions whose time in progress is not over */
    size_t nopen, copen;
    cycles_pm_config cfg;
    void (*fn)(void *ctx, const cycles_pm *r, int n);
    void *ctx;
    uint64_t rng;
    uint64_t left;              /* the left-th instruction from here is tagged */
    uint64_t left2;             /* ... the second of the pair (0: none pending) */
    uint32_t distance;          /* of the pending second from its first */
    cycles_pm first;            /* the first of the pair under way */
    uint16_t hist;
    uint8_t hist_len;
    cycles_pm_stats st;
    /* the true paths (cycles_set_pm_paths): a ring of the last runs, and
     * where the block being modelled began */
    void (*paths)(void *ctx, const cycles_pm *r, const cycles_run *run, uint32_t n);
    void *paths_ctx;
    cycles_run runs[CYCLES_RUNS];
    uint64_t nruns;             /* written so far */
    uint64_t block_start;
} pm_state;

struct cycles_core {
    ev5_params p;
    cop *ops;
    uint32_t nops;              /* ops[nops] describes unknown words, ops[nops + 1] UNOP */
    alpha_sched *sched;         /* the issue rules and the static scheduler */
    cycles_front *front;        /* (its own allocation: another thread may drive it) */

    uint64_t akey;              /* CKEY(asn, 0) of the current address space: keys are akey | unit */
    uint64_t seq_pc;            /* the address that continues the group's block */
    uint8_t group;              /* the issue group so far: a row of gnext, 0 = empty */
    uint64_t fb_mask;           /* fetch_block - 1 */

    uint64_t fetch_ready;       /* earliest issue of the next fetched block */
    int fetch_cause;

    uint64_t times[EARLY + REG_SINK + 1];
    uint8_t rcause[EARLY];
    uint64_t mul_free, div_free;
    uint64_t bus_free;          /* when the B-cache port / memory bus takes the next line */

    ccache dc, sc, bc;
    cwbuf wb;

    uint8_t *bp;                /* 2-bit counters; 0xff: not yet set since the line's fill */
    uint32_t bp_mask;
    uint64_t ras[RAS_RING];     /* return-address stack: the last ras_n <= return_stack pushes */
    uint32_t ras_top, ras_n;

    cycles_observer obs;
    uint64_t wake;              /* obs.advance is called once the clock reaches this */
    uint32_t evmask;            /* events obs.event wants */
    bool trace;                 /* obs.advance on every group */
    bool schedules;             /* use blocks' static schedules (cycles_sched.c) */

    uint8_t gnext[GROUP_STATES][GROUP_CLASSES];  /* ev5_groups.next: the group with one more, 0xff: no room */
    uint8_t gsize[GROUP_STATES];                 /* ev5_groups.size: instructions in it */

    cycles_stats st;

    /* value sampling (cycles_loads.c): where loads' latencies go while a
     * run is recorded (NULL: nowhere), and cycles owed to the interpreter */
    cycles_load *loadlog;
    uint32_t nloadlog;
    bool noting;                /* loadlog or load_fn set */
    void (*load_fn)(void *ctx, uint64_t pc, uint32_t latency, int level);
    void *load_ctx;
    uint8_t fill_level, load_level;
    uint64_t charge;

    pm_state pm;                /* ProfileMe (cycles_pm.c) */
};

/* ProfileMe's share of the model (cycles_pm.c): whether a block of n
 * holds a tagged instruction (if not, the countdowns pass over it),
 * one tagged instruction's record (first, second: which countdowns
 * reached it), and the history after a block. */
bool pm_due(cycles_core *c, uint32_t n);
void pm_tagged(cycles_core *c, cycles_pm *r, bool first, bool second);
void pm_history(cycles_core *c, const cycles_insn *last, uint64_t last_pc, uint64_t next_pc);
void pm_run(cycles_core *c, uint64_t pc, uint32_t n, bool cbr);
/* Every instruction of a block going through pm_block, for the truth. */
void pm_truth_step(cycles_core *c, uint64_t pc, uint64_t fetch, uint64_t issue, uint64_t ready);

/* Value sampling's share of the model (cycles_loads.c). */
void load_note(cycles_core *c, uint64_t pc, uint64_t latency);
void charge_now(cycles_core *c);

static inline void event(cycles_core *c, int ev, uint64_t cycle, uint64_t pc)
{
    if (c->evmask & (1u << ev))
        c->obs.event(c->obs.ctx, ev, cycle, pc);
}

/* The test the model makes inline, which a static schedule must make
 * the same way (cycles_sched.c): the load at ea hits its set's most
 * recent D-cache line, filled by cycle r.  It changes no state. */
static inline bool dline_recent(const cycles_core *c, uint64_t ea, uint64_t r)
{
    uint64_t dl = ea >> c->dc.line_shift;
    uint32_t w0 = (uint32_t)(dl & (c->dc.sets - 1)) * c->dc.ways;
    return c->dc.tag[w0] == (c->akey | dl) && c->dc.ready[w0] <= r;
}

/* Register d's value is ready in cycle r (early: for a same-cycle branch
 * or CMOV), late for reason rc. */
static inline void put_result(cycles_core *c, unsigned d, uint64_t r, uint64_t early, int rc)
{
    c->times[d] = r;
    c->times[EARLY + d] = early;
    c->rcause[d] = (uint8_t)rc;
}

/* After a store, a multiply/divide or a control transfer issued in cycle
 * issue: the write buffer, the busy unit, the predictors and the fetch
 * stream (cycles.c). */
void cycles_after(cycles_core *c, const cop *o, const cycles_insn *in, uint64_t pc, uint64_t ea, uint64_t next_pc,
                  uint64_t issue);

/* The rest of a block from instruction j on, by its static schedule
 * (ts[j], built if not yet), once instruction j has started an issue
 * group in cycle issue: returns the first instruction left to the model
 * (n when none), at the latest nextf, the next one the front end found
 * a miss at. */
uint32_t sched_run(cycles_core *c, cycles_sched **ts, uint32_t j, const cycles_insn *ins, uint64_t pc, uint32_t n,
                   const uint64_t *ea, uint64_t next_pc, uint64_t issue, uint32_t nextf);

/* A core's front end (cycles_front.c), set up and freed with the core. */
bool front_init(cycles_front *f, const ev5_params *p);
void front_free(cycles_front *f);

#endif
