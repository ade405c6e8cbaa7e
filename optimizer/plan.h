/*
 * optimizer/plan.h: the layout plan, the optimizer's output and the
 * rewriter's input.  The text format is in docs/layout-plan.md; this file
 * and optimizer/plan.c are its only reader and writer.
 *
 * Everything is named by original addresses: procedures by their first
 * instruction, blocks by theirs, branches and jumps by their own address.
 * Each entry remembers the line it came from so later checks against the
 * image can name it.
 */
#ifndef OPTIMIZER_PLAN_H
#define OPTIMIZER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PLAN_VERSION 1
#define PLAN_NOSPLIT SIZE_MAX
#define PLAN_MAX_GAP 65536

typedef struct plan_block {
    uint64_t addr;
    uint32_t align;          /* 0: none; else 4, 8, 16 or 32 */
    uint32_t line;
} plan_block;

typedef struct plan_proc {
    uint64_t addr;
    uint32_t align;          /* 0: the rewriter's default */
    uint32_t gap;            /* bytes of nops before its hot part */
    uint32_t line;
    size_t nblocks;          /* 0: original block order */
    plan_block *blocks;
    size_t split;            /* blocks[split..] go to the cold area;
                                PLAN_NOSPLIT when nothing is cold */
} plan_proc;

typedef struct plan_addr {   /* invert, pin */
    uint64_t addr;
    uint32_t line;
} plan_addr;

typedef struct plan_hint {
    uint64_t jump;           /* the JMP/JSR */
    uint64_t target;         /* its predicted target */
    uint32_t line;
} plan_hint;

typedef struct plan {
    char build_id[129];      /* lowercase hex, "" when not given */
    uint32_t cold_align;     /* alignment of the cold area (default 16) */
    uint32_t cold_offset;    /* the cold area starts this far past a multiple
                                of cold_align (below it; default 0) */
    size_t nprocs;   plan_proc *procs;     /* output order */
    size_t ninverts; plan_addr *inverts;
    size_t npins;    plan_addr *pins;      /* procedures to leave in place */
    size_t nhints;   plan_hint *hints;
    const char *name;        /* file name, for messages */
} plan;

/* Parse text.  On error returns false with "NAME:LINE: message" in err;
 * the plan is then empty (plan_free is still safe). */
bool plan_parse(const char *text, size_t len, const char *name, plan *out,
                char *err, size_t errlen);
bool plan_read_file(const char *path, plan *out, char *err, size_t errlen);
/* Write in the canonical form plan_parse reads back. */
bool plan_write(FILE *f, const plan *pl);
void plan_free(plan *pl);

/* Building a plan in code (the optimizer, the generators). */
void plan_init(plan *pl);
plan_proc *plan_add_proc(plan *pl, uint64_t addr, uint32_t align);
bool plan_add_block(plan_proc *pp, uint64_t addr, uint32_t align);
/* Blocks added after this call are cold. */
void plan_set_split(plan_proc *pp);
/* Index of the first cold block (nblocks when none). */
size_t plan_cold_start(const plan_proc *pp);
bool plan_add_invert(plan *pl, uint64_t addr);
bool plan_add_pin(plan *pl, uint64_t addr);
bool plan_add_hint(plan *pl, uint64_t jump, uint64_t target);

/* Plans made without a profile (optimizer/plangen.c), to test the rewriter:
 * the original order (all code moved), and random valid plans. */
struct cfg_program;
bool plan_identity(const struct cfg_program *prog, plan *pl);
bool plan_random(const struct cfg_program *prog, uint64_t seed, plan *pl);

#endif
