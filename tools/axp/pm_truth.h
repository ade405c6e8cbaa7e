/*
 * tools/axp/pm_truth.h: --profileme-truth, the true paths behind the
 * ProfileMe records' branch histories (docs/machine.md "ProfileMe"), for
 * measuring path reconstruction (`cpo accuracy --pm-paths`).
 *
 * The records are counted by what they say (process, pc, history) and
 * the true path (the runs of consecutive addresses that led to the
 * instruction), so a hot loop's thousands of samples are one line.
 * Format (profdb/pm_truth.h reads it): a header line, then per distinct
 * record "COUNT PID PC LEN HIST START-END..." with PC, HIST and the runs
 * in hex, the runs newest first, the first ending after PC.
 */
#ifndef TOOLS_AXP_PM_TRUTH_H
#define TOOLS_AXP_PM_TRUTH_H

#include <stdio.h>

#include "machine/machine.h"

typedef struct pm_truth pm_truth;

/* Counting from now on (NULL when out of memory). */
pm_truth *pm_truth_start(axp_machine *m);
/* 0, or -1 with errno set when f could not be written (or memory ran
 * out while counting: ENOMEM). */
int pm_truth_write(const pm_truth *t, FILE *f);
void pm_truth_free(pm_truth *t);

#endif
