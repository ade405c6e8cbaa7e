/*
 * profdb/profileme.h: ProfileMe profiles, kept beside the PC profiles
 * (docs/profile-format.md "ProfileMe profiles").
 *
 *   DB/<epoch>/<host>/<key>.pm     one per image per host per epoch
 *
 * Per instruction (image offset) that was sampled: how many ProfileMe
 * records, the executions they stand for, how many had each event, the
 * sums and histograms of their latencies, the issue slots of paired
 * samples, and a hot list (profdb/hotlist.h) of the branch histories
 * that led to it.  Everything but the hot list adds when profiles merge,
 * so a merge over epochs and hosts is a sum.  Like the value profiles,
 * each host writes its own file, updates are whole-file rewrites renamed
 * into place, and readers merge.
 */
#ifndef PROFDB_PROFILEME_H
#define PROFDB_PROFILEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profdb/hotlist.h"
#include "profdb/profdb.h"

#define PROFDB_PM_VERSION 1
#define PROFDB_PM_SUFFIX ".pm"
#define PROFDB_PM_MAX (1u << 22)    /* instructions per file */

/* The counters, in their stored order. */
enum {
    PDPM_SAMPLES,       /* records */
    PDPM_WEIGHT2,       /* twice the executions they stand for (sum of 2 x period, a pair's members 1 x) */
    PDPM_IMISS, PDPM_ITBMISS, PDPM_DMISS, PDPM_DTBMISS,
    PDPM_LOADS, PDPM_STORES,
    PDPM_CBRANCH, PDPM_TAKEN, PDPM_JUMPS, PDPM_MISPREDICT,
    PDPM_LEVEL_D, PDPM_LEVEL_S, PDPM_LEVEL_B, PDPM_LEVEL_M,   /* loads by who answered */
    PDPM_LAT_FETCH, PDPM_LAT_HEAD, PDPM_LAT_ISSUE, PDPM_LAT_LOAD,   /* latency sums, cycles */
    PDPM_PAIRED,        /* records that were one of a pair */
    PDPM_USEFUL,        /* ... whose partner issued while it was in progress */
    PDPM_SLOTS,         /* estimated issue slots over its executions, from fetch to result (paired) */
    PDPM_SLOTS_USED,    /* ... of which used by other instructions (paired) */
    PDPM_NCOUNTERS
};
/* The four latencies, in the order of the PDPM_LAT_* counters. */
enum { PDPM_L_FETCH, PDPM_L_HEAD, PDPM_L_ISSUE, PDPM_L_LOAD, PDPM_NLAT };
/* Histogram bins: 0, then [2^(k-1), 2^k) for k = 1..PDPM_NBINS-2, then the rest. */
#define PDPM_NBINS 12
int profdb_pm_bin(uint64_t cycles);
const char *profdb_pm_counter_name(int k);   /* "samples", ...; NULL out of range */
const char *profdb_pm_latency_name(int k);   /* "fetch_issue", ... */

typedef struct profdb_pm {
    uint64_t offset;
    uint64_t c[PDPM_NCOUNTERS];
    uint64_t hist[PDPM_NLAT][PDPM_NBINS];
    hotlist paths;      /* branch histories before it: length << 16 | bits, newest branch in bit 0 */
} profdb_pm;

/* Add b's counts to a (same offset; the hot lists merge). */
void profdb_pm_add(profdb_pm *a, const profdb_pm *b);

/* One file's bytes: entries sorted by offset, each once. */
bool profdb_pm_encode(const profdb_pm *v, size_t n, uint8_t **data, size_t *size, profdb_error *err);
bool profdb_pm_decode(const void *data, size_t size, const char *name, profdb_pm **v, size_t *n,
                      profdb_error *err);

/* Merge entries (any order, repeats allowed) into key's ProfileMe profile
 * of this host (NULL: this machine's name) in the current epoch. */
bool profdb_pm_merge(profdb *db, const char *host, const char *key, const profdb_pm *v, size_t n,
                     profdb_error *err);

/* key's ProfileMe profiles summed over the named epoch (NULL: all) and
 * host (NULL: all), sorted by offset.  None at all is PROFDB_ENOENT. */
bool profdb_pm_sum(profdb *db, const char *epoch, const char *host, const char *key, profdb_pm **v,
                   size_t *n, profdb_error *err);

#endif
