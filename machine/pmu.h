/*
 * machine/pmu.h: the performance counters of one simulated CPU.
 *
 * Counters count the cycle model's events; when one overflows, an interrupt
 * is raised pmu_skid cycles later and the sample goes to the instruction at
 * the head of the issue queue at that moment (DCPI paper §4.1.2), except
 * I-cache misses, which are charged to the missing instruction.  Periods
 * are drawn from a seeded generator, so runs repeat exactly.  Three
 * counters: the cycle counter stays on, the other events share the rest,
 * taking turns when there are more of them than counters.
 */
#ifndef MACHINE_PMU_H
#define MACHINE_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alpha/ev5.h"
#include "machine/cycles.h"

#define PMU_COUNTERS EV5_PMU_COUNTERS
#define PMU_DEFAULT_MUX 1000000u   /* cycles each set of multiplexed events runs */

typedef struct pmu_config {
    int n;                         /* events enabled */
    int ev[CEV_COUNT];             /* CEV_* in the order given */
    uint32_t lo[CEV_COUNT], hi[CEV_COUNT];   /* period drawn uniformly from [lo, hi] */
    uint64_t seed;
    uint32_t mux_cycles;
    uint32_t skid;
    bool values;                   /* "values": interrupts that start value-sampling runs */
    uint32_t vlo, vhi;             /* their period, uniform in [vlo, vhi] */
    bool values_insns;             /* ... counted in instructions issued, not cycles */
    bool profileme;                /* "profileme": instruction samples (cycles.h, ProfileMe) */
    uint32_t pmlo, pmhi;           /* fetched instructions between them, uniform in [pmlo, pmhi] */
    uint32_t pm_window;            /* paired samples within this many (0: none) */
} pmu_config;

/* ProfileMe's mean interval when no PERIOD is given. */
#define PMU_PROFILEME_DEFAULT 16384u

/* Parse "cycles,imiss:4096,values,..." (names as pmu_event_name; a period P gives
 * periods uniform in [P - P/32, P + P/32]; no period: cycles [60000, 64000],
 * others around 4096; "profileme:P" draws from [P - P/2, P + P/2], no
 * period: PMU_PROFILEME_DEFAULT).  false with a message naming the bad item. */
bool pmu_parse(const char *spec, pmu_config *out, char *err, size_t errsize);

const char *pmu_event_name(int ev);   /* "cycles", "imiss", ... or NULL */
int pmu_event_by_name(const char *name, size_t len);   /* -1 if unknown */

typedef void (*pmu_sink)(void *ctx, int cpu, uint64_t pc, int ev);

/* The values event is not a counter of the model's: it is a second cycle
 * clock with its own period and its own random stream (so the cycle
 * counter's periods are the same with or without it), whose interrupts
 * go to vsink with the instruction at the head of the issue queue.  With
 * values_insns it counts instructions issued instead, and interrupts
 * pmu_skid cycles after the one that overflowed it. */
typedef void (*pmu_values_sink)(void *ctx, int cpu, uint64_t pc);

/* ProfileMe records (one, or a pair) of CPU cpu. */
typedef void (*pmu_pm_sink)(void *ctx, int cpu, const cycles_pm *r, int n);

typedef struct pmu pmu;

/* The counters of CPU cpu, observing core; samples go to sink. */
pmu *pmu_new(const pmu_config *cfg, int cpu, cycles_core *core, pmu_sink sink, void *ctx);
void pmu_free(pmu *u);
void pmu_set_values_sink(pmu *u, pmu_values_sink vsink);
void pmu_set_pm_sink(pmu *u, pmu_pm_sink sink);

typedef struct pmu_stats {
    uint64_t samples[CEV_COUNT];
    uint64_t overflows[CEV_COUNT];
    uint64_t period_sum[CEV_COUNT];     /* of the periods that overflowed */
    uint64_t active_cycles[CEV_COUNT];  /* cycles the event had a counter */
    uint64_t cycles;                    /* cycles observed */
    uint64_t values;                    /* values interrupts */
} pmu_stats;

/* Statistics up to the core's current cycle. */
void pmu_get_stats(pmu *u, pmu_stats *out);

#endif
