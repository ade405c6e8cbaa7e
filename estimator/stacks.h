/*
 * estimator/stacks.h: the calling contexts of a profile selection, named
 * (estimator/stacks.c): the stack profiles of the selection's epochs
 * (profdb/stacks.h) with every frame's procedure, and the views the
 * profile tools print: callers and callees of a procedure, and folded
 * stacks for flame-graph tools (docs/profile-tools.md "Stacks").
 */
#ifndef ESTIMATOR_STACKS_H
#define ESTIMATOR_STACKS_H

#include <stdio.h>

#include "estimator/diff.h"
#include "estimator/samples.h"
#include "paths/cct.h"
#include "profdb/stacks.h"

typedef struct est_stacks {
    profdb_stacks st;          /* the selection's stacks, added up */
    char **file;               /* per image of st.img: the file read for it
                                  (of that build), NULL when none was found */
    char **name;               /* per frame of st.frames: its procedure */
    uint64_t samples;          /* stacks' total */
} est_stacks;

/* The stacks of sel's epoch (or all epochs) for one event (NULL: the
 * selection's first, or every event when it names none). */
bool est_stacks_load(const est_selection *sel, est_stacks *out, est_error *err);
/* The same, with every frame in a rewritten image carried back to its
 * original through the image's address map (origin, as cpo diff's: the
 * rewriter's map is read by the tools), so stacks taken on an optimized
 * binary line up, and add up, with the original's. */
bool est_stacks_load_mapped(const est_selection *sel, est_origin_fn origin, void *ctx, est_stacks *out,
                            est_error *err);
void est_stacks_free(est_stacks *s);

/* How a stack's walk ended, by number (axp's AXP_STK_*). */
const char *est_stack_end_name(unsigned end);

/* Folded stacks: "outermost;...;leaf COUNT" per line, a truncated stack
 * rooted at "[truncated:REASON]". */
void est_stacks_folded(FILE *f, const est_stacks *s);

/* Who calls proc (callers) or whom it calls (callees), with counts: a
 * stack counts once for each distinct caller (callee) of any of proc's
 * frames in it, so a recursive procedure shows itself and its outside
 * callers; "[self]" for samples in proc itself (callees), "[top]" for proc
 * as the outermost frame, "[truncated]" for a stack cut above proc. */
typedef struct est_edge {
    const char *name;
    uint64_t count;
} est_edge;
bool est_stacks_edges(const est_stacks *s, const char *proc, bool callers, est_edge **out, size_t *n,
                      uint64_t *with_proc, est_error *err);

/* The calling context tree of the stacks (paths/cct.h), one metric,
 * "samples", each stack's count at its leaf's context; a stack whose walk
 * stopped early hangs under a node "[truncated:REASON]".  NULL when out of
 * memory. */
cct *est_stacks_cct(const est_stacks *s, est_error *err);

#endif
