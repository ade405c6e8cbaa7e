/*
 * rewriter/carry.h: a rewritten image's estimates carried back onto its
 * original through the address map (docs/estimator.md, "Rewritten
 * images").  The estimator does the carrying (est_freq_carry); the map
 * is the rewriter's, so the lookups it needs are made here, for every
 * program that reads profiles of deployed copies (optimize-image --db,
 * cpo calc --original).
 */
#ifndef REWRITER_CARRY_H
#define REWRITER_CARRY_H

#include "estimator/freq.h"
#include "rewriter/addrmap.h"

/* Samples at a copy's addresses, n of them, moved to the original's
 * addresses, sorted and merged into out (whose arrays the caller frees).
 * False when memory runs out. */
bool rw_carry_samples(const addrmap *m, const uint64_t *addr, const double *samples, size_t n,
                      est_sample_col *out);

/* The copy's estimates (copy_freq, on its own CFG) on orig's CFG.  The
 * copy's samples at the original's addresses (rw_carry_samples) give the
 * estimates of procedures the copy's CFG could not follow, and the
 * original's schedules with those samples in *sched when sched is not
 * NULL.  NULL with err on failure. */
est_freq *rw_carry_estimates(const cfg_program *orig, const est_freq *copy_freq, const addrmap *m,
                             const est_sample_col *orig_samples, double period, est_sched **sched,
                             char *err, size_t errlen);

#endif
