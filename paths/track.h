/*
 * paths/track.h: exact path profiles and calling context trees from the
 * stream of retired instructions (axp's retire hook, with each
 * instruction's cost from the cycle model).
 *
 * Each guest thread has a stack of frames, one per procedure activation
 * the stream has shown: a call pushes one, a return to a frame's return
 * address pops down to it.  Each frame follows its procedure's Ball-Larus
 * path (cfg/paths.h) block by block and adds every instruction's cost to
 * it; at a return, a tail branch or a back edge the path is counted with
 * what it cost.  Transfers the CFG does not explain (a longjmp, a signal
 * handler and its return, a thread starting inside a procedure, the end
 * of a run) end or start partial paths (paths/pathprof.h).  The frames'
 * calls also build the calling context tree, each instruction's cost going
 * to the context it ran in.  docs/paths.md says what each case does.
 */
#ifndef PATHS_TRACK_H
#define PATHS_TRACK_H

#include <stdbool.h>

#include "machine/machine.h"
#include "paths/cct.h"
#include "paths/pathprof.h"

typedef struct track track;

/* A tracker building a path profile, a calling context tree, or both;
 * NULL when out of memory. */
track *track_new(bool paths, bool cct);
void track_free(track *t);

/* The machine's hooks (axp_set_image_hook, axp_set_retire_hook). */
void track_image(void *t, const axp_image_event *e);
void track_retire(void *t, const axp_retire *r);

/* Ends every thread's frames (their paths as partial paths) and fills in
 * what is owed; call once after the run.  False with a message when the
 * tracker ran out of memory at some point (its results are then
 * incomplete and must not be written). */
bool track_finish(track *t, char *err, size_t errlen);

/* Contexts only for the procedures that have a node in `only` (an
 * instrumented binary's tree): any other procedure's cost goes to its
 * caller's context and what it calls hangs from there, at the call site by
 * which the chain left that context, and recursion is folded after that,
 * as the binary sees it (docs/paths.md).  Call before the run; false when
 * out of memory. */
bool track_cct_only(track *t, const cct *only);

const pathprof *track_paths(const track *t);
const cct *track_cct(const track *t);

/* What could not be numbered or followed, for the front end's report. */
typedef struct track_stats {
    uint64_t instructions;       /* all retired instructions seen */
    uint64_t unnumbered_procs;   /* procedures run whose paths could not be numbered */
    uint64_t partial_paths;      /* path pieces counted (not from entry to exit) */
    uint64_t resyncs;            /* transfers the CFG and the frames did not explain */
} track_stats;
track_stats track_get_stats(const track *t);

#endif
