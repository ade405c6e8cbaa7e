/*
 * alpha/ev5.h: the Alpha 21164 (EV5) described as data.
 *
 * One description serves both the machine's cycle model and the
 * estimator's static scheduler, so the two can never disagree about issue
 * rules or latencies.  Every number is a named parameter with its source
 * (a fact from shared alpha-facts.md, or "assumption"), listed by
 * ev5_param_table and settable by name, which is how `axp --ev5 key=value`
 * overrides it.
 */
#ifndef ALPHA_EV5_H
#define ALPHA_EV5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alpha/insn.h"

typedef struct ev5_cache {
    uint32_t size;        /* bytes; 0 = absent */
    uint32_t line;        /* bytes */
    uint32_t ways;
    uint32_t latency;     /* cycles to the next level's consumer on a hit */
} ev5_cache;

typedef struct ev5_params {
    /* issue */
    uint32_t issue_width;         /* instructions per cycle */
    uint32_t fetch_block;         /* bytes per aligned fetch block */
    uint32_t lat[LAT_COUNT];      /* result latency by alpha_latclass */
    uint32_t imul_busy[3];        /* multiplier occupancy: MULL, MULQ, UMULH */
    uint32_t fdiv_busy_s, fdiv_busy_t;
    /* memory hierarchy */
    ev5_cache icache, dcache, scache, bcache;
    uint32_t mem_latency;         /* cycles from a B-cache (or S-cache) miss */
    uint32_t bcache_fill_busy;    /* cycles the B-cache port is busy per line */
    uint32_t mem_fill_busy;       /* cycles the memory bus is busy per line */
    uint32_t itb_entries, dtb_entries;
    uint32_t page_size;
    uint32_t itb_miss_cycles, dtb_miss_cycles;
    uint32_t write_buffer_entries;
    uint32_t write_buffer_drain;  /* cycles to retire one entry to the S-cache */
    /* control flow */
    uint32_t bp_entries;          /* 2-bit counters */
    uint32_t mispredict_penalty;
    uint32_t jump_mispredict_penalty;
    uint32_t return_stack;
    uint32_t taken_bubble;        /* fetch bubble after a correctly predicted taken branch */
    /* system */
    uint32_t syscall_cycles;
    uint32_t pmu_skid;            /* cycles from counter overflow to interrupt */
} ev5_params;

/* The 21164's performance counters: three, whatever else is tuned (the
 * machine keeps the cycle counter on one, the estimator undoes the
 * multiplexing of the others). */
#define EV5_PMU_COUNTERS 3

/* The parameters of a stock 21164 as documented in docs/alpha.md. */
void ev5_defaults(ev5_params *p);

typedef struct ev5_param_desc {
    const char *name;     /* "dcache.size", "lat.imulq", ... */
    size_t offset;        /* of a uint32_t inside ev5_params */
    const char *source;   /* "fact: ..." or "assumption: ..." */
} ev5_param_desc;

extern const ev5_param_desc ev5_param_table[];
extern const size_t ev5_param_count;

/* Set one parameter from "key=value".  Returns false and fills err (which
 * names the key) when the key is unknown or the value is not a number. */
bool ev5_set(ev5_params *p, const char *assignment, char *err, size_t errsize);
/* Can a machine be built with these?  Cache and line sizes, the fetch
 * block, page size and predictor table must be powers of two, and so on;
 * false with a message naming the parameter otherwise. */
bool ev5_validate(const ev5_params *p, char *err, size_t errsize);
/* Value of a parameter by name; false if unknown. */
bool ev5_get(const ev5_params *p, const char *name, uint32_t *value);

/* Pipes an instruction may issue to, as a bit mask of EV5_E0.. for the
 * slotting rules (alpha/insn.h gives each row one alpha_pipe class). */
enum { EV5_E0 = 1, EV5_E1 = 2, EV5_FA = 4, EV5_FM = 8 };
unsigned ev5_pipe_mask(alpha_pipe pipe);

/* Result latency of an instruction, in cycles (0 for no result). */
uint32_t ev5_latency(const ev5_params *p, const alpha_insn *i);

/* ---- issue rules, as data --------------------------------------------- */

/* Pipe classes (the columns of the group table, with the memory kind). */
enum { EV5_PC_E0, EV5_PC_E1, EV5_PC_E01, EV5_PC_FA, EV5_PC_FM, EV5_PC_FAM, EV5_PC_COUNT };
/* A load (prefetches too) may not share an issue group with a store. */
enum { EV5_MEM_NONE, EV5_MEM_LOAD, EV5_MEM_STORE };
/* The unpipelined units: an instruction using one waits until it is free. */
enum { EV5_UNIT_NONE, EV5_UNIT_MUL, EV5_UNIT_DIV };

/* How one instruction issues.  All of it comes from the instruction's
 * alpha_optable row (pipe, latency class, flags) and the parameters. */
typedef struct ev5_issue {
    uint8_t pipe;       /* EV5_PC_* */
    uint8_t mem;        /* EV5_MEM_*: goes to the D-cache or write buffer */
    uint8_t cls;        /* pipe + EV5_PC_COUNT * mem: column of ev5_groups.next */
    uint8_t unit;       /* EV5_UNIT_* it keeps busy for `busy` cycles */
    bool fast;          /* compare or logical: the result reaches a branch or
                           CMOV issuing in the same cycle (0 cycles) */
    bool early;         /* integer branch or CMOV: Ra may be such a result */
    bool barrier;       /* MB/WMB: issues once the write buffer is empty */
    uint32_t lat;       /* result latency */
    uint32_t busy;      /* unit occupancy, cycles */
} ev5_issue;

/* d: the row (NULL for a word not in the table, which the machine models as
 * a one-cycle integer operation); unop: the word is UNOP (alpha_is_unop),
 * which takes the issue slot of the load it is spelled as but is no load.
 * p may be NULL when only the classes are wanted: lat and busy are then 0. */
void ev5_issue_of(const ev5_params *p, const alpha_opdef *d, bool unop, ev5_issue *out);
void ev5_issue_insn(const ev5_params *p, const alpha_insn *i, ev5_issue *out);

/* The slotting rules as a table.  An issue group is described by how many
 * of its instructions need E0, E1, either integer pipe, FA, FM or either FP
 * pipe, and whether it holds a load or a store.  next[g][cls] is the group
 * with one more instruction of that class, EV5_NO_ROOM when it does not fit:
 * more than issue_width instructions, no pipe left (the 21164 slots a
 * whole fetch block at once, so a group fits when some assignment of pipes
 * exists), or a load joining a store or the reverse.  Row 0 is the empty
 * group; size[g] counts its instructions.  Whether an instruction may join
 * at all (same fetch block, operands ready) is the scheduler's business. */
#define EV5_GROUP_STATES 192
#define EV5_GROUP_CLASSES (3 * EV5_PC_COUNT)
#define EV5_NO_ROOM 0xff
typedef struct ev5_groups {
    uint8_t next[EV5_GROUP_STATES][EV5_GROUP_CLASSES];
    uint8_t size[EV5_GROUP_STATES];
    uint32_t count;     /* rows in use */
} ev5_groups;
/* False only if the parameters need more rows than EV5_GROUP_STATES
 * (never for an issue width ev5_validate accepts). */
bool ev5_groups_build(const ev5_params *p, ev5_groups *g);

/* Do a and b lie in the same aligned fetch block (a group never spans two)? */
static inline bool ev5_same_fetch_block(const ev5_params *p, uint64_t a, uint64_t b)
{
    return ((a ^ b) & ~(uint64_t)(p->fetch_block - 1)) == 0;
}

#endif
