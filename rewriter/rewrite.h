/*
 * rewriter/rewrite.h: applying a layout plan to an image.
 *
 * rw_rewrite() moves the code of every procedure it can into a new segment,
 * laid out as the plan says, updates everything that refers to code (from
 * the relocations --emit-relocs kept), and writes a new executable with an
 * address map.  Procedures it cannot move safely stay where they are, each
 * with its reason.  The input image is only read.  docs/rewriter.md tells
 * the whole story.
 */
#ifndef REWRITER_REWRITE_H
#define REWRITER_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "image/image.h"
#include "optimizer/plan.h"

/* Why a procedure was left in place, or moved only as a whole (its blocks
 * keep their order and distances: RW_PIN_INDIRECT, RW_PIN_LSDA, RW_PIN_CFI
 * when its unwind entry covers it alone). */
typedef enum {
    RW_MOVED = 0,
    RW_PIN_PLAN,        /* the plan says so */
    RW_PIN_INDIRECT,    /* an indirect jump whose targets are unknown */
    RW_PIN_BADCODE,     /* words that are no instructions (data in text?) */
    RW_PIN_COROUTINE,   /* JSR_COROUTINE */
    RW_PIN_LSDA,        /* has exception tables tied to its addresses */
    RW_PIN_CFI,         /* call-frame information we cannot regenerate */
    RW_PIN_RANGE,       /* a branch to or from it would not reach */
    RW_PIN_GPREL16,     /* its address is built with a 16-bit GP offset */
    RW_PIN_RELOC,       /* referred to by a relocation we cannot update */
    RW_PIN_GPDISP,      /* a GP-displacement pair would not fit */
    RW_NREASONS
} rw_reason;

const char *rw_reason_name(unsigned r);

typedef struct rw_options {
    bool check;             /* overwrite moved code with traps */
    FILE *log;              /* per-procedure reasons (NULL: quiet) */
    int instrument;         /* RW_INSTRUMENT_*: insert counting code */
} rw_options;

/* Bits: what an instrumented binary keeps. */
enum { RW_INSTRUMENT_NONE, RW_INSTRUMENT_PATHS = 1, RW_INSTRUMENT_CCT = 2 };

typedef struct rw_stats {
    size_t procs, moved;
    size_t pinned[RW_NREASONS];     /* left in place, by reason */
    size_t rigid[RW_NREASONS];      /* moved whole, without reordering */
    size_t blocks_moved;
    size_t branches_added, branches_removed, branches_inverted;
    uint64_t old_text, new_text;    /* bytes of code moved, and emitted */
    uint64_t seg_addr, seg_size;    /* the new segment */
    size_t fdes_new, fdes_copied;
    size_t rounds;                  /* layout passes until no new pins */
    /* Instrumentation (docs/instrument.md): procedures whose paths are
     * counted, those not and why (rw_noins_name), system calls hooked and
     * those in code that did not move (the profile is not written when
     * the program exits through one of those). */
    size_t ins_procs, noins[8], hooks, unhooked, spills, hashed;
    uint64_t ins_bytes, counter_bytes;
} rw_stats;

const char *rw_noins_name(unsigned r);

/* Rewrite img (whose CFG is prog) by pl into the file outpath.  Returns
 * false with a message naming the file, line or address at fault. */
bool rw_rewrite(const image *img, const cfg_program *prog, const plan *pl,
                const rw_options *opt, const char *outpath, rw_stats *st,
                char *err, size_t errlen);

/* Whether img can be rewritten into outpath at all, before any plan is
 * made: an executable with its relocations, not already rewritten, and an
 * output that is not the input, not a device or directory, in a directory
 * that can be written.  False with the reason in err. */
bool rw_can_rewrite(const image *img, const char *outpath, char *err, size_t errlen);

/* Where the moved code starts, as an offset from the new segment's start
 * (which is aligned to at least a page): after the program headers, on a
 * 32-byte boundary.  The optimizer colours I-cache sets from it. */
uint64_t rw_code_offset(const image *img);

/* Would rw_rewrite accept pl for img?  The checks against the CFG only, no
 * layout and no output: for optimizers and their tests. */
bool rw_plan_check(const image *img, const cfg_program *prog, const plan *pl,
                   char *err, size_t errlen);

#endif
