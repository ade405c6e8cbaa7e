/*
 * collector/producer.h: the producer side of the sampling driver, as a
 * sampling source uses it (what DCPI's kernel did at counter interrupts).
 *
 * A source opens one of three regions, hands it samples and notices, lets
 * it run at safe points, and finishes it:
 *
 *   cpod      the region a profile database's cpod daemon gives the source
 *             (cpod_attach): the daemon drains it and stores profiles;
 *   path      a region at a path, for some other consumer;
 *   private   a region in an unlinked temporary, drained by this process
 *             at every safe point and to the last entry at the end, so the
 *             source can always report what the driver did with its samples.
 *
 * axp's machine is one such source (tools/axp/collect.c wires its hooks to
 * this); a native perf_event_open source would be another.  Calls for one
 * CPU come from one thread at a time, as the driver requires.
 */
#ifndef COLLECTOR_PRODUCER_H
#define COLLECTOR_PRODUCER_H

#include <stdbool.h>
#include <stdint.h>

#include "collector/cpod.h"
#include "collector/driver.h"
#include "collector/driver_stacks.h"

typedef enum { DRV_PROD_PRIVATE, DRV_PROD_PATH, DRV_PROD_CPOD } drv_prod_mode;
extern const char *const drv_prod_mode_names[3];   /* "private", "driver", "cpod" */

typedef struct drv_producer_options {
    drv_prod_mode mode;
    unsigned ncpus;
    drv_policy policy;
    const char *path;              /* PATH: the region's file */
    const char *db_dir;            /* CPOD: the database */
    const cpod_event *events;      /* CPOD: the events, for the daemon */
    size_t nevents;
    const char *name;              /* CPOD: the source, for the daemon's log */
    unsigned value_entries;        /* value rings of this many records per CPU; 0: none */
    bool stacks;                   /* also stack rings (collector/driver_stacks.h) */
} drv_producer_options;

typedef struct drv_producer drv_producer;

/* NULL with a message naming the file or database at fault. */
drv_producer *drv_producer_open(const drv_producer_options *o, char *err, size_t errsz);
drv *drv_producer_driver(drv_producer *p);
/* The region's path ("" for a private one). */
const char *drv_producer_region(const drv_producer *p);

/* A sample: DRV_OK, DRV_DROPPED, or a refusal (DRV_FULL, DRV_EINVAL) the
 * caller counts as rejected.  A private region that is full is drained
 * here and the sample tried again: it stalls rather than drops. */
int drv_producer_sample(drv_producer *p, unsigned cpu, uint32_t pid, uint64_t pc, unsigned event);
/* A sample's stack (after its drv_producer_sample): DRV_OK, or DRV_FULL
 * when the ring had no room even after draining a private one: the stack
 * is counted lost.  DRV_EINVAL without stacks or out of range. */
int drv_producer_stack(drv_producer *p, unsigned cpu, uint32_t pid, unsigned event, unsigned end,
                       const uint64_t *pc, unsigned n);
/* A ProfileMe record (collector/driver_stacks.h), in the stack rings
 * (which the producer needs stacks for).  Records are not aggregated on
 * the way, so a full ring is not dropped from at once: a private region
 * is drained, and a daemon's region waits up to DRV_PM_WAIT_MS for its
 * consumer (once a wait has run out, no more waits until a record fits
 * again: no consumer is coming).  DRV_FULL: the record is counted lost. */
#define DRV_PM_WAIT_MS 2000
int drv_producer_pm(drv_producer *p, unsigned cpu, uint32_t pid, const drv_pm *r);
/* The rings' counters, and what a private region's consumer took. */
void drv_producer_stacks(const drv_producer *p, drv_stacks_counters *c, uint64_t *taken,
                         uint64_t *frames);

/* A safe point of one CPU: hand buffers over, and drain a private region. */
void drv_producer_poll(drv_producer *p, unsigned cpu);
/* The end: a private region is flushed and drained to the last entry.
 * 0, or -1 with a message. */
int drv_producer_finish(drv_producer *p, char *err, size_t errsz);
/* What a private region's consumer took. */
void drv_producer_drained(const drv_producer *p, uint64_t *entries, uint64_t *samples,
                          uint64_t *notices);
/* A value-sampling record: DRV_OK, DRV_DROPPED (ring full; a private
 * region is drained first), or DRV_EINVAL.  What a private region's
 * consumer took of them. */
int drv_producer_value(drv_producer *p, unsigned cpu, const drv_value *v);
uint64_t drv_producer_drained_values(const drv_producer *p);

/* Detach: what a cpod or path region holds stays there for its consumer. */
void drv_producer_close(drv_producer *p);

#endif
