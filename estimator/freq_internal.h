/*
 * estimator/freq_internal.h: the frequency estimator's own steps.
 */
#ifndef ESTIMATOR_FREQ_INTERNAL_H
#define ESTIMATOR_FREQ_INTERNAL_H

#include "estimator/freq.h"

/* Local propagation (seed 000, §6.1.4): flow constraints fill blocks and
 * edges with no estimate from their neighbours', shared at once within
 * each frequency class, never below zero. */
void est_propagate(const cfg_proc *f, est_proc_freq *q);
/* The global step: block and edge counts that conserve flow at every block
 * and depart least from the sample-based estimates, each departure costing
 * by its confidence.  False when memory runs out. */
bool est_flow_solve(const cfg_proc *f, est_proc_freq *q);

#endif
