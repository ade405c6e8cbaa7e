/*
 * profdb/truth.h: reading axp's --truth files (docs/machine.md,
 * "Performance counters"): per instruction, the cycles it spent at the
 * head of the issue queue and its stall cycles by cause, summed over
 * processes.  The estimator's culprits are checked against them.
 */
#ifndef PROFDB_TRUTH_H
#define PROFDB_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include "profdb/profdb.h"

typedef struct profdb_truth {
    size_t ncauses;
    char **causes;       /* "icache", ... (the header's stall.CAUSE columns) */
    size_t n;
    uint64_t *pc;        /* ascending, distinct */
    double *head;        /* [n] head-of-queue cycles */
    double *stall;       /* [n * ncauses] */
} profdb_truth;

/* NULL with "FILE:LINE: what is wrong" in err. */
profdb_truth *profdb_truth_read(const char *path, profdb_error *err);
void profdb_truth_free(profdb_truth *t);
/* The row of pc, or -1. */
long profdb_truth_find(const profdb_truth *t, uint64_t pc);
/* The column of a cause, or -1. */
int profdb_truth_cause(const profdb_truth *t, const char *name);

#endif
