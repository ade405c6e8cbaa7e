/*
 * rewriter/carry.h: the address map of a rewritten image as the
 * estimator's lookups (est_addr_map), so a deployed copy's estimates can
 * be carried back onto its original (docs/estimator.md, "Rewritten
 * images") by every program that reads such profiles: optimize-image --db
 * and cpo calc --original.
 */
#ifndef REWRITER_CARRY_H
#define REWRITER_CARRY_H

#include "estimator/freq.h"
#include "rewriter/addrmap.h"

/* New to original by the map's own search, original to new through a
 * copy of its moved-code entries sorted by original address. */
typedef struct rw_est_map {
    const addrmap *m;
    addrmap_entry *by_orig;
    size_t n;
} rw_est_map;

/* The lookups over m into *out (valid while fm and m are); false when
 * memory runs out.  rw_est_map_free releases fm. */
bool rw_est_map_init(rw_est_map *fm, const addrmap *m, est_addr_map *out);
void rw_est_map_free(rw_est_map *fm);

#endif
