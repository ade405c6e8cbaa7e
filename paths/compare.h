/*
 * paths/compare.h: two calling context trees of the same program side by
 * side: a sampled one against axp's exact one, say.  Contexts are the same
 * when their chains of (image, procedure, call site) from the root are.
 */
#ifndef PATHS_COMPARE_H
#define PATHS_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "paths/cct.h"

typedef struct cct_pair {
    uint32_t a, b;            /* the context in each tree; CCT_NONE when a lacks it */
    double share_a, share_b;  /* of each tree's metric total, exclusive */
} cct_pair;

/* The `top` contexts of b with the most of metric mb (exclusive), each
 * with its share there and the share of metric ma at the same context in
 * a, into out (room for top); returns how many.  Images are matched by
 * build-id when both trees have one, else by path. */
size_t cct_compare(const cct *a, int ma, const cct *b, int mb, size_t top, cct_pair *out);

/* Tree b as a sees it: a context of code a has no node for anywhere (a
 * procedure of an image a does not have, or one a did not count: a
 * dynamic program's libraries and the procedures an instrumenter left
 * alone, to an instrumented binary's tree) is folded into its nearest
 * kept caller, its own metrics but `calls` added there, and its callees
 * hang from that caller at the call site by which the chain left it, as
 * an instrumented binary sees them.  Contexts that fold onto the same
 * chain merge.  The number of b's contexts folded away goes to *folded.
 * NULL when out of memory. */
cct *cct_fold_to(const cct *a, const cct *b, size_t *folded);

#endif
