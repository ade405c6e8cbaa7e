/*
 * profdb/pm_truth.h: reading axp's --profileme-truth files (docs/machine.md
 * "ProfileMe"): per distinct ProfileMe record, how many there were, the
 * record's process, pc and branch history, and the true path behind it
 * as runs of consecutive addresses, newest first.  Path reconstruction
 * (estimator/profileme.h) is measured against them.
 */
#ifndef PROFDB_PM_TRUTH_H
#define PROFDB_PM_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include "profdb/profdb.h"

#define PROFDB_PMT_RUNS 65      /* runs per record at most (axp's ring and the record's own) */

typedef struct profdb_pmt_run {
    uint64_t start, end;        /* [start, end), 4-aligned, start < end */
} profdb_pmt_run;

typedef struct profdb_pmt {
    uint64_t count, pc;         /* count >= 1 */
    int pid;
    uint16_t hist;              /* newest branch in bit 0; no bit at or above len */
    uint8_t len;                /* <= 16 */
    uint32_t nruns;             /* >= 1; run[0] holds pc and ends right after it */
    const profdb_pmt_run *run;  /* into the file's pool */
} profdb_pmt;

typedef struct profdb_pm_truth {
    size_t n;
    profdb_pmt *e;              /* sorted by pc, then history, then the rest */
    profdb_pmt_run *pool;
} profdb_pm_truth;

/* NULL with "FILE:LINE: what is wrong" in err. */
profdb_pm_truth *profdb_pm_truth_read(const char *path, profdb_error *err);
void profdb_pm_truth_free(profdb_pm_truth *t);

#endif
