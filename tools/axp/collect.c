/*
 * tools/axp/collect.c: the machine's hooks feeding the sampling driver.
 *
 * The machine runs every simulated CPU on one host thread, so the hooks
 * below are never called concurrently and each CPU's driver structures
 * have the one writer the driver requires.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/cpod.h"
#include "common/json.h"
#include "tools/axp/collect.h"
#include "tools/axp/sample_log.h"

typedef enum { MODE_PRIVATE, MODE_DRIVER, MODE_CPOD } mode;
static const char *const mode_names[] = { "private", "driver", "cpod" };

#define MAX_EVENTS 32

/* An image's host path as the machine opened it (possibly relative to
 * axp's working directory) and the absolute path the notices carry: cpod
 * reads the image's program headers from it, and only trusts an absolute
 * one.  Images are few, so a list searched linearly will do. */
typedef struct abs_path {
    char *host, *abs;
} abs_path;

struct collect {
    axp_machine *m;
    mode mode;
    drv *d;
    drvc *c;                    /* private: this process's own consumer */
    unsigned ncpus;
    drv_policy policy;
    char region[CPOD_PATH_MAX + 128];   /* the region's path (cpod, driver) */
    const char *db_dir;
    FILE *log;
    const char *log_path;
    axp_pmu_event ev[MAX_EVENTS];
    size_t nev;
    uint64_t rejected;          /* samples the driver refused as out of range */
    uint64_t drained_entries, drained_samples, drained_notices;
    bool drain_failed;
    char drain_msg[600];
    abs_path *paths;
    size_t npaths, cpaths;
};

/* ---- the in-process consumer (private mode) --------------------------------- */

static int count_entries(void *ctx, const drv_batch *b)
{
    collect *c = ctx;
    c->drained_entries += b->n;
    for (size_t i = 0; i < b->n; i++)
        c->drained_samples += b->e[i].count;
    return 0;
}

static int count_notice(void *ctx, const drv_notice *n)
{
    collect *c = ctx;
    c->drained_notices++;
    return 0;
}

/* Take every full overflow buffer (and the notices) now.  A failure is
 * kept for collect_finish to report; draining stops, and what the region
 * then holds is still counted in its counters. */
static void drain(collect *c)
{
    if (!c->c || c->drain_failed)
        return;
    drvc_sink s = { count_entries, count_notice, c };
    drv_error e;
    if (drvc_collect(c->c, 0, &s, &e) < 0) {
        c->drain_failed = true;
        snprintf(c->drain_msg, sizeof c->drain_msg, "%s", e.msg);
    }
}

/* ---- the machine's hooks ------------------------------------------------------ */

static void on_sample(void *ctx, int cpu, int pid, uint64_t pc, unsigned event)
{
    collect *c = ctx;
    if (c->log)
        sample_log_put(c->log, cpu, pid, pc, event);
    int rc = drv_sample(c->d, (unsigned)cpu, (uint32_t)pid, pc, event);
    /* Private regions stall rather than drop: both overflow buffers are
     * full only if one CPU evicted more than two buffers' worth within a
     * quantum (tiny sampling periods); emptying them here loses nothing. */
    for (int tries = 0; rc == DRV_FULL && tries < 3 && !c->drain_failed; tries++) {
        drain(c);
        rc = drv_sample(c->d, (unsigned)cpu, (uint32_t)pid, pc, event);
    }
    if (rc < 0 || rc == DRV_FULL)
        c->rejected++;
}

static void on_poll(void *ctx, int cpu)
{
    collect *c = ctx;
    drv_poll(c->d, (unsigned)cpu);
    drain(c);
}

static const char *absolute(collect *c, const char *host)
{
    for (size_t i = 0; i < c->npaths; i++)
        if (!strcmp(c->paths[i].host, host))
            return c->paths[i].abs;
    char *abs = realpath(host, NULL);
    if (!abs && host[0] != '/') {
        /* gone already: still say where it was, from axp's directory, which
         * is what a relative host path means (the machine never changes
         * axp's own working directory) */
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) && asprintf(&abs, "%s/%s", cwd, host) < 0)
            abs = NULL;
    }
    if (!abs)
        abs = strdup(host);
    char *h = strdup(host);
    if (!abs || !h)
        goto oom;
    if (c->npaths == c->cpaths) {
        size_t n = c->cpaths ? 2 * c->cpaths : 16;
        abs_path *p = realloc(c->paths, n * sizeof *p);
        if (!p)
            goto oom;
        c->paths = p;
        c->cpaths = n;
    }
    c->paths[c->npaths++] = (abs_path){ h, abs };
    return abs;
oom:
    free(abs);
    free(h);
    return host;
}

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    for (; s && s[0] && s[1] && n < max; s += 2) {
        unsigned v;
        if (sscanf(s, "%2x", &v) != 1)
            break;
        out[n++] = (uint8_t)v;
    }
    return n;
}

static void on_image(void *ctx, const axp_image_event *e)
{
    collect *c = ctx;
    if (e->pid < 0 || (uint32_t)e->pid > DRV_MAX_PID)
        return;
    if (e->kind == AXP_IMAGE_LOAD) {
        const char *host = e->host_path ? e->host_path : e->path;
        uint8_t bid[DRV_MAX_BUILD_ID];
        size_t nb = unhex(e->build_id, bid, sizeof bid);
        /* a full ring is counted by the driver (notices_lost), nothing to add */
        drv_notice_load(c->d, (uint32_t)e->pid, e->base, e->size, e->offset,
                        host ? absolute(c, host) : "", bid, nb);
    } else {
        drv_notice_exit(c->d, (uint32_t)e->pid, e->wstatus);
    }
}

/* ---- --stats ------------------------------------------------------------------- */


static void write_stats(void *ctx, FILE *f)
{
    collect *c = ctx;
    drv_counters t;
    drv_counters_get(c->d, -1, &t);
    fprintf(f, "  \"driver\": {\"mode\": \"%s\", \"policy\": \"%s\"", mode_names[c->mode],
            c->policy == DRV_POLICY_RR ? "rr" : "front");
    if (c->mode != MODE_PRIVATE) {
        fprintf(f, ", \"region\": ");
        json_string(f, c->region);
    }
    if (c->mode == MODE_CPOD) {
        fprintf(f, ", \"database\": ");
        json_string(f, c->db_dir);
    }
    /* the numbers given to drv_sample: a consumer of a --driver region
     * has no other way to know which event is which */
    fprintf(f, ",\n             \"event_ids\": {");
    for (size_t i = 0; i < c->nev; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_string(f, c->ev[i].name);
        fprintf(f, ": %u", c->ev[i].id);
    }
    fprintf(f, "}");
    for (size_t i = 0; i < DRV_NCOUNTERS; i++)
        fprintf(f, ",%s\"%s\": %" PRIu64, i % 4 ? " " : "\n             ", drv_counter_names[i],
                drv_counter_at(&t, i));
    fprintf(f, ",\n             \"rejected\": %" PRIu64, c->rejected);
    /* samples per entry written to the overflow buffers; in the private
     * mode the final flush has moved the tables there too, so this is
     * samples per entry reaching a consumer */
    if (t.overflow_entries)
        fprintf(f, ", \"aggregation\": %.3f", (double)t.samples / (double)t.overflow_entries);
    else
        fprintf(f, ", \"aggregation\": null");
    if (c->mode == MODE_PRIVATE)
        fprintf(f, ", \"drained_entries\": %" PRIu64 ", \"drained_samples\": %" PRIu64
                   ", \"drained_notices\": %" PRIu64,
                c->drained_entries, c->drained_samples, c->drained_notices);
    fprintf(f, "},\n");
}

/* ---- opening and closing -------------------------------------------------------- */

/* Give the region its memory now: on a tmpfs a sparse file that cannot
 * grow later would kill the machine with SIGBUS at some sample.  File
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
static int open_private(collect *c, char *err, size_t errsz)
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
        drv_params p = { .ncpus = c->ncpus, .policy = c->policy, .full_mode = DRV_FULL_STALL };
        drv_error e;
        c->d = drv_open(path, &p, &e);
        if (!c->d)
            snprintf(err, errsz, "%s", e.msg);
        else if (reserve(path, err, errsz) == 0 && !(c->c = drvc_open(path, 0, &e)))
            snprintf(err, errsz, "%s", e.msg);
        unlink(path);
        rmdir(dir);
        if (c->c)
            return 0;
        drv_close(c->d);
        c->d = NULL;
    }
    return -1;
}

static int open_driver(collect *c, const char *path, char *err, size_t errsz)
{
    drv_params p = { .ncpus = c->ncpus, .policy = c->policy, .full_mode = DRV_FULL_DROP };
    drv_error e;
    if (!(c->d = drv_open(path, &p, &e))) {
        snprintf(err, errsz, "--driver %s", e.msg);
        return -1;
    }
    snprintf(c->region, sizeof c->region, "%s", path);
    return reserve(path, err, errsz);
}

static int open_cpod(collect *c, const collect_options *o, char *err, size_t errsz)
{
    cpod_event ev[MAX_EVENTS];
    for (size_t i = 0; i < c->nev; i++)
        ev[i] = (cpod_event){ c->ev[i].id, c->ev[i].name, c->ev[i].mean_period };
    const char *prog = o->program ? strrchr(o->program, '/') : NULL;
    prog = prog ? prog + 1 : o->program ? o->program : "?";
    char name[160];
    snprintf(name, sizeof name, "axp pid %d (%.100s)", (int)getpid(), prog);
    cpod_machine cm = { .ncpus = c->ncpus, .events = ev, .nevents = c->nev, .name = name,
                        .drv = { .policy = c->policy, .full_mode = DRV_FULL_DROP } };
    drv_error e;
    if (!(c->d = cpod_attach(o->db_dir, &cm, c->region, sizeof c->region, &e))) {
        snprintf(err, errsz, "--collector %s: %s", o->db_dir, e.msg);
        return -1;
    }
    /* not an error: a daemon started later takes the region over, but
     * until then samples that do not fit in it are dropped */
    if (!cpod_running(o->db_dir, NULL))
        fprintf(stderr, "axp: --collector %s: no cpod serves it yet; samples wait in %s\n",
                o->db_dir, c->region);
    return reserve(c->region, err, errsz);
}

collect *collect_start(axp_machine *m, const collect_options *o, char *err, size_t errsz)
{
    collect *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    c->m = m;
    c->policy = o->policy;
    c->db_dir = o->db_dir;
    c->mode = o->db_dir ? MODE_CPOD : o->driver_path ? MODE_DRIVER : MODE_PRIVATE;
    c->nev = axp_pmu_events(m, c->ev, MAX_EVENTS);
    if (c->nev > MAX_EVENTS)
        c->nev = MAX_EVENTS;
    if (!c->nev) {
        snprintf(err, errsz, "%s needs --pmu (which events to sample)",
                 o->db_dir ? "--collector" : o->driver_path ? "--driver" : "sampling");
        free(c);
        return NULL;
    }
    c->ncpus = o->ncpus;
    int rc = c->mode == MODE_CPOD     ? open_cpod(c, o, err, errsz)
             : c->mode == MODE_DRIVER ? open_driver(c, o->driver_path, err, errsz)
                                      : open_private(c, err, errsz);
    if (rc == 0 && o->sample_log && !(c->log = sample_log_open(o->sample_log))) {
        snprintf(err, errsz, "--sample-log %s: %s", o->sample_log, strerror(errno));
        rc = -1;
    }
    if (rc) {
        collect_close(c);
        return NULL;
    }
    c->log_path = o->sample_log;
    axp_set_sample_hook(m, on_sample, c);
    axp_set_poll_hook(m, on_poll, c);
    axp_set_image_hook(m, on_image, c);
    axp_set_stats_extra(m, write_stats, c);
    return c;
}

int collect_finish(collect *c, char *err, size_t errsz)
{
    int rc = 0;
    err[0] = '\0';
    if (c->c && !c->drain_failed) {
        /* The last flush, answered by this same thread: request it (the
         * request stays pending when nobody answers within the 0 ms
         * given), answer it on every CPU, taking buffers as the tables
         * fill them, until every CPU has moved its whole table out. */
        drvc_sink s = { count_entries, count_notice, c };
        drv_error e;
        int f = drvc_flush(c->c, 0, &s, &e);
        if (f != DRV_OK && f != DRV_ETIMEDOUT) {
            c->drain_failed = true;
            snprintf(c->drain_msg, sizeof c->drain_msg, "%s", e.msg);
        }
        /* each pass frees both buffers of every CPU, so a table of T
         * entries needs at most T / (2 * buffer) + 1 passes; the bound
         * only guards against a driver that stops making progress */
        for (int pass = 0, busy = 1; busy && !c->drain_failed; pass++) {
            if (pass == 1 << 20) {
                c->drain_failed = true;
                snprintf(c->drain_msg, sizeof c->drain_msg, "the final flush makes no progress");
                break;
            }
            busy = 0;
            for (unsigned cpu = 0; cpu < c->ncpus; cpu++)
                if (drv_poll(c->d, cpu) == DRV_FULL)
                    busy = 1;
            drain(c);
        }
    }
    if (c->drain_failed) {
        snprintf(err, errsz, "driver region: %s", c->drain_msg);
        rc = -1;
    }
    if (c->log) {
        FILE *f = c->log;
        c->log = NULL;
        if (sample_log_close(f) && !rc) {
            snprintf(err, errsz, "--sample-log %s: %s", c->log_path, strerror(errno));
            rc = -1;
        }
    }
    return rc;
}

void collect_close(collect *c)
{
    if (!c)
        return;
    if (c->m) {
        axp_set_sample_hook(c->m, NULL, NULL);
        axp_set_poll_hook(c->m, NULL, NULL);
        axp_set_image_hook(c->m, NULL, NULL);
        axp_set_stats_extra(c->m, NULL, NULL);
    }
    if (c->log)
        fclose(c->log);
    drvc_close(c->c);
    drv_close(c->d);
    for (size_t i = 0; i < c->npaths; i++) {
        free(c->paths[i].host);
        free(c->paths[i].abs);
    }
    free(c->paths);
    free(c);
}
