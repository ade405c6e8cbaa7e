/*
 * rewriter/verify.h: checking a rewritten image against its original
 * (rewriter/verify.c).  `cpo addrmap NEW --verify ORIG` and the tests use it.
 */
#ifndef REWRITER_VERIFY_H
#define REWRITER_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "image/image.h"

typedef struct rw_verify_stats {
    size_t words, code, added, pads, inserted;  /* new code words by kind */
    size_t branches, gp_pairs, pointers, rows, sites, procs_moved;   /* checked */
    size_t unmapped;                    /* new code the map does not cover */
    size_t bad_words;                   /* not the original instruction */
    size_t bad_targets;                 /* branch to the wrong place */
    size_t bad_pointers;                /* a code pointer left stale */
    size_t bad_rows;                    /* unwind rules differ */
    size_t bad_sites;                   /* exception call sites differ */
} rw_verify_stats;

/* Check neu (rewritten) against orig.  Mismatches are counted in *st and the
 * first ones described on report (may be NULL).  Returns false only when
 * the check cannot run (no map, wrong original, out of memory). */
bool rw_verify(const image *orig, const image *neu, FILE *report, rw_verify_stats *st,
               char *err, size_t errlen);

static inline size_t rw_verify_failures(const rw_verify_stats *st)
{
    return st->unmapped + st->bad_words + st->bad_targets + st->bad_pointers + st->bad_rows +
           st->bad_sites;
}

#endif
