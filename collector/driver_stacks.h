/*
 * collector/driver_stacks.h: the calling contexts of samples on their way
 * from the machine to a consumer (collector/driver_stacks.c; layout in
 * docs/driver-shm.md "Stack rings").
 *
 * A stack is too big and too varied for the driver's hash table, so each
 * CPU has a ring of stack records in a file beside the driver region,
 * REGION.stacks: one writer (the CPU's producer thread) and one reader
 * (the region's consumer) meet through two counters per ring, head and
 * tail, with release and acquire ordering; no lock, no system call on the
 * sample path.  A full ring refuses the record (DRV_FULL): the caller
 * drains (a private region) or counts the stack lost.  The consumer
 * aggregates: equal stacks become one with a count (cpod).
 */
#ifndef COLLECTOR_DRIVER_STACKS_H
#define COLLECTOR_DRIVER_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "collector/driver.h"

#define DRV_STACKS_SUFFIX    ".stacks"
#define DRV_STACKS_DEF_RING  (4u << 20)     /* bytes per CPU */
#define DRV_STACKS_MAX_RING  (1u << 28)
#define DRV_STACKS_MAX_FRAMES 1024u

typedef struct drv_stacks drv_stacks;

typedef struct drv_stack_rec {
    uint32_t pid;
    unsigned event;
    unsigned end;              /* how the walk ended (axp's AXP_STK_*) */
    unsigned n;                /* frames, 1..DRV_STACKS_MAX_FRAMES */
    const uint64_t *pc;        /* leaf first; valid only during the callback */
    uint64_t at, next;         /* where the record starts and ends in its CPU's
                                  stream (bytes ever written): a consumer that
                                  journals records knows by them what it took */
} drv_stack_rec;

typedef struct drv_stacks_counters {
    uint64_t put;              /* records written */
    uint64_t lost;             /* refused: the ring was full (counted by the producer) */
    uint64_t taken;            /* records the consumer took */
} drv_stacks_counters;

/* Producer: create REGION.stacks (ring_bytes per CPU, a power of two;
 * 0: the default) or resume the one there if it has the same shape. */
drv_stacks *drv_stacks_create(const char *region, unsigned ncpus, uint32_t ring_bytes,
                              drv_error *err);
/* One stack: DRV_OK, DRV_FULL (no room: nothing written), DRV_EINVAL. */
int drv_stack_put(drv_stacks *s, unsigned cpu, uint32_t pid, unsigned event, unsigned end,
                  const uint64_t *pc, unsigned n);
/* The producer counts a stack it gave up on. */
void drv_stacks_lost(drv_stacks *s, unsigned cpu);

/* Consumer: open REGION.stacks; NULL with DRV_EIO and errno ENOENT in
 * err->msg's cause when there is none (a producer without stacks). */
drv_stacks *drv_stacks_open(const char *region, drv_error *err);
/* Hand every record now in the rings to fn, oldest first per CPU; a
 * nonzero return from fn stops there, leaving that record in the ring
 * (DRV_ESINK).  Returns the records taken or a negative error. */
int drv_stacks_take(drv_stacks *s, int (*fn)(void *ctx, unsigned cpu, const drv_stack_rec *r),
                    void *ctx, drv_error *err);

void drv_stacks_counters_get(const drv_stacks *s, drv_stacks_counters *out);

/* ProfileMe records (docs/driver-shm.md "ProfileMe records") travel in
 * the same rings, as records of event DRV_PM_EVENT (no PMU event has that
 * number) whose `end` is the record's version and whose DRV_PM_WORDS
 * "frames" are its fields; the consumer tells them apart by the event. */
#define DRV_PM_EVENT 255u
#define DRV_PM_VERSION 1u
#define DRV_PM_WORDS 6u
enum {
    DRV_PM_IMISS = 1, DRV_PM_ITBMISS = 2, DRV_PM_DMISS = 4, DRV_PM_DTBMISS = 8,
    DRV_PM_LOAD = 16, DRV_PM_STORE = 32, DRV_PM_CBRANCH = 64, DRV_PM_TAKEN = 128,
    DRV_PM_JUMP = 256, DRV_PM_MISPREDICT = 512, DRV_PM_PAIRED = 1024, DRV_PM_USEFUL = 2048,
    DRV_PM_FLAGS = 4095
};
typedef struct drv_pm {
    uint64_t pc, ea;
    uint32_t flags;            /* DRV_PM_* */
    uint16_t hist;             /* conditional branches before it, newest in bit 0 */
    uint8_t hist_len, level;   /* level: a load's, 0 D-cache .. 3 memory */
    uint16_t fetch_issue, head, issue_ready;   /* cycles, saturating */
    uint8_t issue_width;
    uint16_t window, distance; /* a pair's window; the second's distance */
    double period;             /* mean fetched instructions between first tagged ones */
} drv_pm;
void drv_pm_encode(const drv_pm *r, uint64_t w[DRV_PM_WORDS]);
/* A ring record as a ProfileMe record: false when it is not a whole,
 * sensible one of this version. */
bool drv_pm_decode(const drv_stack_rec *r, drv_pm *out);
void drv_stacks_close(drv_stacks *s);
/* Remove REGION.stacks (with the region, once everything is taken). */
void drv_stacks_unlink(const char *region);

#endif
