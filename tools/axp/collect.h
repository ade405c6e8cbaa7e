/*
 * tools/axp/collect.h: where axp's performance-counter samples go.
 *
 * The machine reports samples, safe points and image loads through hooks
 * (machine/machine.h); this glue hands them to the sampling driver
 * through its producer side (collector/producer.h), which is what the DCPI
 * kernel did with counter interrupts.  Three destinations:
 *
 *   cpod      the region the cpod daemon of a profile database gives this
 *             machine (--collector DIR): the daemon drains it and stores
 *             profiles;
 *   driver    a region at a path (--driver PATH) for some other consumer;
 *   private   a region in an unlinked temporary file, drained by this
 *             process at every safe point (the default with --pmu), so that
 *             --stats always reports what the driver did with the samples.
 *
 * With the values event, every value-sampling record goes the same way
 * through the region's value rings (collector/driver.h), one per value
 * it carries: result, address, latency, target.
 *
 * docs/machine.md, "Sampling into the driver and cpod", is the user's view.
 */
#ifndef TOOLS_AXP_COLLECT_H
#define TOOLS_AXP_COLLECT_H

#include <stddef.h>

#include "collector/driver.h"
#include "machine/machine.h"

typedef struct collect_options {
    unsigned ncpus;            /* the machine's simulated CPUs */
    const char *db_dir;        /* --collector DIR, or NULL */
    const char *driver_path;   /* --driver PATH, or NULL */
    drv_policy policy;         /* --driver-policy */
    const char *sample_log;    /* --sample-log FILE, or NULL */
    const char *values_log;    /* --values-log FILE, or NULL */
    bool stacks;               /* --stacks: carry every sample's stack */
    const char *program;       /* the guest program, for the daemon's log */
} collect_options;

typedef struct collect collect;

/* Open the destination and set the machine's sample, poll, image and
 * stats hooks.  Call after axp_set_pmu and before axp_spawn (the program's
 * own image loads are notices too).  NULL with a message naming the file
 * or option at fault. */
collect *collect_start(axp_machine *m, const collect_options *o, char *err, size_t errsz);

/* After axp_run, before axp_write_stats: the private region is flushed and
 * drained to the last entry, and the sample and values logs, written whole,
 * renamed into place (common/outfile.h).  0, or -1 with a message (nothing
 * is lost on the way: the counters in --stats still say where every sample
 * is). */
int collect_finish(collect *c, char *err, size_t errsz);

/* Detach.  Whatever a cpod or driver region still holds stays there for
 * its consumer (the daemon salvages a gone machine's region).  Logs that
 * collect_finish has not renamed into place are removed, leaving any
 * earlier file of their names as it was. */
void collect_close(collect *c);

#endif
