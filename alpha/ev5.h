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

#endif
