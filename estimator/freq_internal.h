/*
 * estimator/freq_internal.h: the frequency estimator's own steps.
 */
#ifndef ESTIMATOR_FREQ_INTERNAL_H
#define ESTIMATOR_FREQ_INTERNAL_H

#include "alpha/sched.h"
#include "estimator/freq.h"

/* quiet[i] for the n instructions at pc (I-cache lines of `line` bytes,
 * slots from alpha/sched): 1 when no dynamic event can hold instruction i
 * at the head of the issue queue, so its samples measure its frequency
 * alone (freq_quiet.c says why each cause is ruled out). */
void est_quiet(const uint32_t *words, uint32_t n, uint64_t pc, uint32_t line,
               const alpha_sched_slot *slots, uint8_t *quiet);

/* Local propagation (seed 000, §6.1.4): flow constraints fill blocks and
 * edges with no estimate from their neighbours', shared at once within
 * each frequency class, never below zero. */
void est_propagate(const cfg_proc *f, est_proc_freq *q);
/* The global step: block and edge counts that conserve flow at every block
 * and depart least from the sample-based estimates, each departure costing
 * by its confidence.  False when memory runs out. */
bool est_flow_solve(const cfg_proc *f, est_proc_freq *q);

/* The selection's samples of img alone (of the events given, or of all
 * of them when nevents is 0) into *s, img's own among them in *im (NULL
 * when the selection has none of it, by build-id); false with a message
 * when loading fails (freq_load.c). */
struct est_selection;
struct est_set;
struct est_image;
bool est_load_image(const struct est_selection *selp, const image *img,
                    const char *const *events, size_t nevents, struct est_set *s,
                    const struct est_image **im, char *err, size_t errlen);

#endif
