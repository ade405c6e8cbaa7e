/*
 * collector/producer.c: opening a driver region for a sampling source,
 * draining a private one, and the final flush (collector/producer.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/driver_shm.h"
#include "collector/driver_stacks.h"
#include "collector/producer.h"

const char *const drv_prod_mode_names[3] = { "private", "driver", "cpod" };

struct drv_producer {
    drv_prod_mode mode;
    drv *d;
    drvc *c;                       /* private: this process's own consumer */
    unsigned ncpus;
    char region[CPOD_PATH_MAX + 128];
    uint64_t entries, samples, notices;   /* drained (private) */
    uint64_t values;
    bool want_stacks;
    drv_stacks *stk;               /* the stack rings, with stacks on */
    uint64_t stk_taken, stk_frames;       /* drained (private) */
    bool drain_failed;
    bool pm_gave_up;               /* a wait for a full ring ran out */
    char drain_msg[600];
};

static int count_entries(void *ctx, const drv_batch *b)
{
    drv_producer *p = ctx;
    p->entries += b->n;
    for (size_t i = 0; i < b->n; i++)
        p->samples += b->e[i].count;
    return 0;
}

static int count_notice(void *ctx, const drv_notice *n)
{
    drv_producer *p = ctx;
    (void)n;
    p->notices++;
    return 0;
}

static int count_values(void *ctx, const drv_value_batch *b)
{
    drv_producer *p = ctx;
    p->values += b->n;
    return 0;
}

/* Take every full overflow buffer (and the notices) now.  A failure is
 * kept for drv_producer_finish to report; draining stops, and what the
 * region then holds is still counted in its counters. */
static int count_stack(void *ctx, unsigned cpu, const drv_stack_rec *r)
{
    drv_producer *p = ctx;
    (void)cpu;
    p->stk_taken++;
    p->stk_frames += r->n;
    return 0;
}

static void drain(drv_producer *p)
{
    if (!p->c || p->drain_failed)
        return;
    drvc_sink s = { count_entries, count_notice, p };
    drv_error e;
    if (p->stk && drv_stacks_take(p->stk, count_stack, p, &e) < 0) {
        p->drain_failed = true;
        snprintf(p->drain_msg, sizeof p->drain_msg, "%s", e.msg);
        return;
    }
    if (drvc_collect(p->c, 0, &s, &e) < 0) {
        p->drain_failed = true;
        snprintf(p->drain_msg, sizeof p->drain_msg, "%s", e.msg);
    }
}

/* Give the region its memory now: on a tmpfs a sparse file that cannot
 * grow later would kill the source with SIGBUS at some sample.  File
 * systems without fallocate keep the sparse file. */
static int reserve(const char *path, char *err, size_t errsz)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = posix_fallocate(fd, 0, st.st_size);
    close(fd);
    if (rc && rc != EOPNOTSUPP && rc != EINVAL) {
        snprintf(err, errsz, "%s: cannot reserve %lld bytes for the driver region: %s", path,
                 (long long)st.st_size, strerror(rc));
        return -1;
    }
    return 0;
}

/* A region nobody else can see: created in a fresh directory, opened by
 * both sides, then unlinked, so it vanishes with the process however the
 * process ends. */
static int open_private(drv_producer *p, drv_policy policy, unsigned values, char *err, size_t errsz)
{
    const char *tmp = getenv("TMPDIR");
    const char *dirs[] = { "/dev/shm", tmp && *tmp ? tmp : "/tmp", "/tmp" };
    err[0] = '\0';
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        char dir[PATH_MAX], path[PATH_MAX + 16];
        if (snprintf(dir, sizeof dir, "%s/axp-driver.XXXXXX", dirs[k]) >= (int)sizeof dir ||
            !mkdtemp(dir)) {
            if (!err[0])
                snprintf(err, errsz, "%s: cannot create a directory for the driver region: %s",
                         dirs[k], strerror(errno));
            continue;
        }
        snprintf(path, sizeof path, "%s/region", dir);
        drv_params dp = { .ncpus = p->ncpus, .policy = policy, .full_mode = DRV_FULL_STALL,
                          .value_entries = values };
        drv_error e;
        p->d = drv_open(path, &dp, &e);
        if (!p->d)
            snprintf(err, errsz, "%s", e.msg);
        else if (reserve(path, err, errsz) == 0 && !(p->c = drvc_open(path, 0, &e)))
            snprintf(err, errsz, "%s", e.msg);
        else if (p->want_stacks && !(p->stk = drv_stacks_create(path, p->ncpus, 0, &e))) {
            snprintf(err, errsz, "%s", e.msg);
            drvc_close(p->c);
            p->c = NULL;
        }
        drv_stacks_unlink(path);
        unlink(path);
        rmdir(dir);
        if (p->c) {
            drvc_set_value_sink(p->c, count_values, p);
            return 0;
        }
        drv_close(p->d);
        p->d = NULL;
    }
    return -1;
}

static int open_path(drv_producer *p, const drv_producer_options *o, char *err, size_t errsz)
{
    drv_params dp = { .ncpus = p->ncpus, .policy = o->policy, .full_mode = DRV_FULL_DROP,
                      .value_entries = o->value_entries };
    drv_error e;
    if (!(p->d = drv_open(o->path, &dp, &e))) {
        snprintf(err, errsz, "--driver %s", e.msg);
        return -1;
    }
    snprintf(p->region, sizeof p->region, "%s", o->path);
    return reserve(o->path, err, errsz);
}

static int open_cpod(drv_producer *p, const drv_producer_options *o, char *err, size_t errsz)
{
    cpod_machine cm = { .ncpus = p->ncpus, .events = o->events, .nevents = o->nevents,
                        .name = o->name, .drv = { .policy = o->policy, .full_mode = DRV_FULL_DROP,
                                                  .value_entries = o->value_entries } };
    drv_error e;
    if (!(p->d = cpod_attach(o->db_dir, &cm, p->region, sizeof p->region, &e))) {
        snprintf(err, errsz, "--collector %s: %s", o->db_dir, e.msg);
        return -1;
    }
    /* not an error: a daemon started later takes the region over, but
     * until then samples that do not fit in it are dropped */
    if (!cpod_running(o->db_dir, NULL))
        fprintf(stderr, "axp: --collector %s: no cpod serves it yet; samples wait in %s\n",
                o->db_dir, p->region);
    return reserve(p->region, err, errsz);
}

drv_producer *drv_producer_open(const drv_producer_options *o, char *err, size_t errsz)
{
    drv_producer *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    p->mode = o->mode;
    p->ncpus = o->ncpus;
    p->want_stacks = o->stacks;
    int rc = o->mode == DRV_PROD_CPOD   ? open_cpod(p, o, err, errsz)
             : o->mode == DRV_PROD_PATH ? open_path(p, o, err, errsz)
                                        : open_private(p, o->policy, o->value_entries, err, errsz);
    if (rc == 0 && o->stacks && o->mode != DRV_PROD_PRIVATE) {
        drv_error e;
        if (!(p->stk = drv_stacks_create(p->region, p->ncpus, 0, &e))) {
            snprintf(err, errsz, "%s", e.msg);
            rc = -1;
        }
    }
    if (rc) {
        drv_producer_close(p);
        return NULL;
    }
    return p;
}

drv *drv_producer_driver(drv_producer *p)
{
    return p->d;
}

const char *drv_producer_region(const drv_producer *p)
{
    return p->region;
}

int drv_producer_sample(drv_producer *p, unsigned cpu, uint32_t pid, uint64_t pc, unsigned event)
{
    int rc = drv_sample(p->d, cpu, pid, pc, event);
    /* Private regions stall rather than drop: both overflow buffers are
     * full only if one CPU evicted more than two buffers' worth within a
     * quantum (tiny sampling periods); emptying them here loses nothing. */
    for (int tries = 0; rc == DRV_FULL && tries < 3 && !p->drain_failed; tries++) {
        drain(p);
        rc = drv_sample(p->d, cpu, pid, pc, event);
    }
    return rc;
}

int drv_producer_value(drv_producer *p, unsigned cpu, const drv_value *v)
{
    int rc = drv_value_post(p->d, cpu, v);
    if (rc == DRV_DROPPED && p->c && !p->drain_failed) {   /* private: stall, never drop */
        drain(p);
        rc = drv_value_post(p->d, cpu, v);
    }
    return rc;
}

uint64_t drv_producer_drained_values(const drv_producer *p)
{
    return p->values;
}

int drv_producer_stack(drv_producer *p, unsigned cpu, uint32_t pid, unsigned event, unsigned end,
                       const uint64_t *pc, unsigned n)
{
    if (!p->stk)
        return DRV_EINVAL;
    int rc = drv_stack_put(p->stk, cpu, pid, event, end, pc, n);
    /* a private ring stalls and drains, as the sample path does */
    if (rc == DRV_FULL && p->c && !p->drain_failed) {
        drain(p);
        rc = drv_stack_put(p->stk, cpu, pid, event, end, pc, n);
    }
    if (rc == DRV_FULL)
        drv_stacks_lost(p->stk, cpu);
    return rc;
}

int drv_producer_pm(drv_producer *p, unsigned cpu, uint32_t pid, const drv_pm *r)
{
    if (!p->stk)
        return DRV_EINVAL;
    uint64_t w[DRV_PM_WORDS];
    drv_pm_encode(r, w);
    int rc = drv_stack_put(p->stk, cpu, pid, DRV_PM_EVENT, DRV_PM_VERSION, w, DRV_PM_WORDS);
    uint64_t end = 0;
    unsigned us = 0;
    for (int tries = 0; rc == DRV_FULL; tries++) {
        if (p->c) {             /* private: drain (twice at most: the ring empties) */
            if (p->drain_failed || tries == 2)
                break;
            drain(p);
        } else {
            uint64_t now = drv_now_ns();
            if (p->pm_gave_up || (end && now >= end)) {
                p->pm_gave_up = true;
                break;
            }
            if (!end)
                end = now + (uint64_t)DRV_PM_WAIT_MS * 1000000u;
            drv_nap(&us);
        }
        rc = drv_stack_put(p->stk, cpu, pid, DRV_PM_EVENT, DRV_PM_VERSION, w, DRV_PM_WORDS);
    }
    if (rc == DRV_FULL)
        drv_stacks_lost(p->stk, cpu);
    else if (rc == DRV_OK)
        p->pm_gave_up = false;
    return rc;
}

void drv_producer_stacks(const drv_producer *p, drv_stacks_counters *c, uint64_t *taken,
                         uint64_t *frames)
{
    memset(c, 0, sizeof *c);
    if (p->stk)
        drv_stacks_counters_get(p->stk, c);
    *taken = p->stk_taken;
    *frames = p->stk_frames;
}

void drv_producer_poll(drv_producer *p, unsigned cpu)
{
    drv_poll(p->d, cpu);
    drain(p);
}

int drv_producer_finish(drv_producer *p, char *err, size_t errsz)
{
    err[0] = '\0';
    if (p->c && !p->drain_failed) {
        /* The last flush, answered by this same thread: request it (the
         * request stays pending when nobody answers within the 0 ms
         * given), answer it on every CPU, taking buffers as the tables
         * fill them, until every CPU has moved its whole table out. */
        drvc_sink s = { count_entries, count_notice, p };
        drv_error e;
        int f = drvc_flush(p->c, 0, &s, &e);
        if (f != DRV_OK && f != DRV_ETIMEDOUT) {
            p->drain_failed = true;
            snprintf(p->drain_msg, sizeof p->drain_msg, "%s", e.msg);
        }
        /* each pass frees both buffers of every CPU, so a table of T
         * entries needs at most T / (2 * buffer) + 1 passes; the bound
         * only guards against a driver that stops making progress */
        for (int pass = 0, busy = 1; busy && !p->drain_failed; pass++) {
            if (pass == 1 << 20) {
                p->drain_failed = true;
                snprintf(p->drain_msg, sizeof p->drain_msg, "the final flush makes no progress");
                break;
            }
            busy = 0;
            for (unsigned cpu = 0; cpu < p->ncpus; cpu++)
                if (drv_poll(p->d, cpu) == DRV_FULL)
                    busy = 1;
            drain(p);
        }
    }
    if (p->drain_failed) {
        snprintf(err, errsz, "driver region: %s", p->drain_msg);
        return -1;
    }
    return 0;
}

void drv_producer_drained(const drv_producer *p, uint64_t *entries, uint64_t *samples,
                          uint64_t *notices)
{
    *entries = p->entries;
    *samples = p->samples;
    *notices = p->notices;
}

void drv_producer_close(drv_producer *p)
{
    if (!p)
        return;
    drv_stacks_close(p->stk);
    drvc_close(p->c);
    drv_close(p->d);
    free(p);
}
