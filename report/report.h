/*
 * report/report.h: before-and-after reports of two builds of a program
 * (docs/reports.md).
 *
 * A report lines up the profiles of two executables in one database, by
 * procedure name (names survive rewriting): per side the cycles per unit
 * of work (runs, from cpod's exits profile), and per hot procedure its
 * samples, estimated executions and CPI (the estimator's), stall cycles by
 * cause, I-cache miss samples when the profile has them, and where the
 * procedure sits in the I-cache.  rpt_text and rpt_html write the same
 * numbers; the page draws them as inline SVG and needs no network.
 */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "alpha/sched.h"

/* Stall causes: alpha/'s static reasons that stall, then what the samples
 * show beyond the static schedule. */
enum { RPT_DYNAMIC = ASR_COUNT, RPT_NCAUSES };
const char *rpt_cause_name(unsigned cause);   /* NULL for a cause that never stalls */

typedef struct rpt_side {
    char *path;
    char build_id[129];
    bool analysed;           /* the estimator ran on it */
    char why[512];           /* when not: the reason */
    double samples;          /* cycle samples of the image */
    double period;           /* mean cycles per sample */
    double imiss;            /* imiss samples, when the profile has them */
    uint64_t exits[3];       /* by PROFDB_EXIT_* */
    double cycles_per_run;   /* 0 when no run was counted */
} rpt_side;

typedef struct rpt_proc {
    char *name;
    double samples[2];       /* cycle samples, before and after */
    double imiss[2];
    double execs[2];         /* estimated entries */
    double insns[2];         /* estimated instructions executed */
    double cpi[2];           /* cycles per instruction executed; 0 unknown */
    double stall[2][RPT_NCAUSES];   /* estimated stall cycles by cause */
    uint64_t start[2], size[2];     /* where it lies (0, 0: not in that image) */
} rpt_proc;

typedef struct rpt {
    char *db;
    rpt_side side[2];
    bool has_imiss;
    size_t nprocs;
    rpt_proc *procs;         /* by samples before + after, most first */
    uint32_t icache_size, icache_line;
} rpt;

/* Build the report of before and after from the database's every epoch
 * (epoch: one of them).  False with "what is wrong" in err. */
bool rpt_build(const char *db, const char *epoch, const char *before, const char *after, rpt *out,
               char *err, size_t errlen);
void rpt_free(rpt *r);

/* What to multiply side k's stall cycles by to compare the sides: 1/runs
 * when both sides counted runs, else 1 (totals). */
double rpt_stall_scale(const rpt *r, int k);

/* The procedures worth showing: the first n covering most samples. */
size_t rpt_hot(const rpt *r, size_t max);

void rpt_text(const rpt *r, FILE *f, size_t max);
void rpt_html(const rpt *r, FILE *f, size_t max);

#endif
