/*
 * rewriter/lsda.h: language-specific data areas (.gcc_except_table), the
 * exception tables an FDE may point to.
 *
 * An LSDA's call-site table gives, for ranges of a procedure's code (as
 * offsets from the FDE's start), a landing pad and an action.  When blocks
 * move, the ranges break up: we read the table into absolute addresses and
 * write a new table per piece of new code, with absolute landing pads (an
 * explicit LPStart of 0) and the original action table copied.  Only LSDAs
 * without a type table are rewritten (what C code compiled with
 * -fexceptions has: cleanups); others make their procedure move whole.
 */
#ifndef REWRITER_LSDA_H
#define REWRITER_LSDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "rewriter/cfi.h"

typedef struct lsda_site {
    uint64_t start, end;         /* absolute, [start, end) */
    uint64_t lp;                 /* landing pad, absolute; 0 = none */
    uint64_t action;             /* 0, or 1 + offset into the action table */
} lsda_site;

typedef struct lsda {
    size_t nsites;
    lsda_site *sites;            /* by start */
    const uint8_t *actions;      /* the action table */
    size_t actions_len;
} lsda;

/* Read the LSDA at addr for an FDE starting at func.  False with a reason
 * when it is malformed or has a type table. */
bool lsda_read(const image *img, uint64_t addr, uint64_t func, lsda *out, char *err, size_t errlen);
void lsda_free(lsda *l);
/* The call site covering addr, or NULL. */
const lsda_site *lsda_at(const lsda *l, uint64_t addr);

/* Append to o an LSDA for a piece of new code starting at `start`, whose
 * call sites are given in order as (new start, new end, landing pad new
 * address or 0, action). */
void lsda_write(cfi_out *o, uint64_t start, const lsda_site *sites, size_t n,
                const uint8_t *actions, size_t actions_len);

#endif
