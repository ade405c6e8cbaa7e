/*
 * estimator/summary.h: where a procedure's cycles went (DCPI's Figure 4,
 * seed 000 §6.3), from its frequencies, schedules and culprits.
 *
 * The cycles are the procedure's samples times the mean period.  Each
 * instruction's F x M_i splits into execution and static stalls by the
 * scheduler's reasons (a slotting hazard costs the half cycle it would
 * have shared); its dynamic stall goes to its candidate causes as a
 * range: at least the stall where the cause is the only candidate, at
 * most where it is one of several.  Instructions whose samples fall
 * clearly below F x M_i are the unexplained gain; what is left over, the
 * noise the rules let through, is the net sampling error.
 */
#ifndef ESTIMATOR_SUMMARY_H
#define ESTIMATOR_SUMMARY_H

#include "alpha/sched.h"
#include "estimator/culprits.h"

typedef struct est_summary {
    double samples, cycles;           /* the procedure's, cycles = samples x period */
    double instructions;              /* executed: sum of F over instructions */
    double best;                      /* sum of F x M_i: the best case */
    double execution;
    double stat[ASR_COUNT];           /* static stall by the scheduler's reason */
    double operand[3];                /* the dependency stall by Ra, Rb, Rc */
    double dyn_min[EST_DYN_COUNT], dyn_max[EST_DYN_COUNT];
    double dynamic;                   /* sum of the dynamic stalls */
    double unexplained;               /* dynamic stall with no candidate */
    double gain;                      /* unexplained gain, <= 0 */
    double error;                     /* net sampling error */
} est_summary;

/* Procedure p of a (its culprits in cu, which may be NULL: then every
 * dynamic stall is unexplained). */
void est_summary_of(const est_analysis *a, const est_culprits *cu, size_t p, est_summary *out);

#endif
