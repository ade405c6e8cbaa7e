/*
 * tools/axp/collect.c: the machine's hooks wired to the driver's producer
 * side (collector/producer.h), and what axp says of it in --stats.
 *
 * The machine runs every simulated CPU on one host thread, so the hooks
 * below are never called concurrently and each CPU's driver structures
 * have the one writer the driver requires.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/producer.h"
#include "common/json.h"
#include "tools/axp/collect.h"
#include "tools/axp/sample_log.h"
#include "tools/axp/values_log.h"

#define MAX_EVENTS 32
#define COLLECT_VALUE_ENTRIES 65536u   /* per CPU: 2 MB, a few quanta of runs */

/* An image's host path as the machine opened it (possibly relative to
 * axp's working directory) and the absolute path the notices carry: cpod
 * reads the image's program headers from it, and only trusts an absolute
 * one.  Images are few, so a list searched linearly will do. */
typedef struct abs_path {
    char *host, *abs;
} abs_path;

struct collect {
    axp_machine *m;
    drv_prod_mode mode;
    drv_producer *p;
    drv *d;                     /* the producer's driver */
    drv_policy policy;
    const char *db_dir;
    outfile log_of;             /* --sample-log: a temporary until the run ends */
    FILE *log;                  /* its stream, NULL without one */
    axp_pmu_event ev[MAX_EVENTS];
    size_t nev;
    uint64_t rejected;          /* samples the driver refused as out of range */
    outfile vlog_of;            /* --values-log, the same way */
    FILE *vlog;
    uint64_t values_rejected;   /* value records the driver refused */
    bool stacks;
    uint64_t stacks_rejected;   /* stacks refused as out of range */
    bool pm;                    /* ProfileMe records go in the stack rings */
    uint64_t pm_records, pm_lost, pm_rejected;
    abs_path *paths;
    size_t npaths, cpaths;
};

/* ---- the machine's hooks ------------------------------------------------------ */

static void on_sample(void *ctx, int cpu, int pid, uint64_t pc, unsigned event)
{
    collect *c = ctx;
    if (c->log)
        sample_log_put(c->log, cpu, pid, pc, event, axp_sample_stack(c->m));
    int rc = drv_producer_sample(c->p, (unsigned)cpu, (uint32_t)pid, pc, event);
    if (rc < 0 || rc == DRV_FULL)
        c->rejected++;
    const axp_stack *st = c->stacks ? axp_sample_stack(c->m) : NULL;
    /* a full ring counts the stack lost; a refusal is a rejected stack */
    if (st && drv_producer_stack(c->p, (unsigned)cpu, (uint32_t)pid, event, st->end, st->pc, st->n) < 0)
        c->stacks_rejected++;
}

static void put_value(collect *c, const axp_value *v, int kind, uint64_t value)
{
    drv_value r = { .pc = v->pc, .value = value, .pid = (uint32_t)v->pid, .kind = (uint8_t)kind,
                    .level = kind == DRV_VALUE_LATENCY ? v->level : 0, .run = v->run };
    int rc = drv_producer_value(c->p, (unsigned)v->cpu, &r);
    if (rc < 0)
        c->values_rejected++;
}

/* One record of a run: each value it carries is one record in the ring
 * (a dropped one is counted by the driver). */
static void on_value(void *ctx, const axp_value *v)
{
    collect *c = ctx;
    if (c->vlog)
        values_log_put(c->vlog, v);
    if (v->pid < 0 || (uint32_t)v->pid > DRV_MAX_PID) {
        c->values_rejected++;
        return;
    }
    if (v->has & AXP_V_RESULT)
        put_value(c, v, DRV_VALUE_RESULT, v->result);
    if (v->has & AXP_V_EA)
        put_value(c, v, DRV_VALUE_ADDRESS, v->ea);
    if (v->has & AXP_V_LATENCY)
        put_value(c, v, DRV_VALUE_LATENCY, v->latency);
    if (v->has & AXP_V_TARGET)
        put_value(c, v, DRV_VALUE_TARGET, v->target);
}

static uint16_t sat16(uint32_t v)
{
    return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

/* ProfileMe records (one, or a pair) into the CPU's stack ring. */
static void on_pm(void *ctx, const axp_pm *r, int n)
{
    collect *c = ctx;
    for (int i = 0; i < n; i++) {
        const axp_pm *a = &r[i];
        drv_pm d = { .pc = a->pc, .ea = a->ea, .flags = a->flags, .hist = a->hist, .hist_len = a->hist_len,
                     .level = a->level, .fetch_issue = sat16(a->fetch_issue), .head = sat16(a->head),
                     .issue_ready = sat16(a->issue_ready), .issue_width = (uint8_t)a->issue_width,
                     .window = (uint16_t)a->window, .distance = (uint16_t)a->distance, .period = a->period };
        c->pm_records++;
        int rc = a->pid < 0 || (uint32_t)a->pid > DRV_MAX_PID
                     ? DRV_EINVAL
                     : drv_producer_pm(c->p, (unsigned)a->cpu, (uint32_t)a->pid, &d);
        if (rc == DRV_FULL)
            c->pm_lost++;
        else if (rc < 0)
            c->pm_rejected++;
    }
}

static void on_poll(void *ctx, int cpu)
{
    collect *c = ctx;
    drv_producer_poll(c->p, (unsigned)cpu);
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
    } else if (e->kind == AXP_PROCESS_EXIT) {
        drv_notice_exit(c->d, (uint32_t)e->pid, e->wstatus);
    }
}

/* ---- --stats ------------------------------------------------------------------- */


static void write_stats(void *ctx, FILE *f)
{
    collect *c = ctx;
    drv_counters t;
    drv_counters_get(c->d, -1, &t);
    fprintf(f, "  \"driver\": {\"mode\": \"%s\", \"policy\": \"%s\"",
            drv_prod_mode_names[c->mode], c->policy == DRV_POLICY_RR ? "rr" : "front");
    if (c->mode != DRV_PROD_PRIVATE) {
        fprintf(f, ", \"region\": ");
        json_string(f, drv_producer_region(c->p));
    }
    if (c->mode == DRV_PROD_CPOD) {
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
    if (c->stacks) {
        drv_stacks_counters sc;
        uint64_t taken, frames;
        drv_producer_stacks(c->p, &sc, &taken, &frames);
        fprintf(f, ",\n             \"stacks_put\": %" PRIu64 ", \"stacks_lost\": %" PRIu64
                   ", \"stacks_rejected\": %" PRIu64 ", \"stacks_taken\": %" PRIu64,
                sc.put, sc.lost, c->stacks_rejected, sc.taken);
        if (c->mode == DRV_PROD_PRIVATE)
            fprintf(f, ", \"drained_stacks\": %" PRIu64 ", \"drained_frames\": %" PRIu64, taken, frames);
    }
    if (c->pm)
        fprintf(f, ",\n             \"profileme_records\": %" PRIu64 ", \"profileme_lost\": %" PRIu64
                   ", \"profileme_rejected\": %" PRIu64,
                c->pm_records, c->pm_lost, c->pm_rejected);
    if (c->mode == DRV_PROD_PRIVATE) {
        uint64_t en, sa, no;
        drv_producer_drained(c->p, &en, &sa, &no);
        fprintf(f, ", \"drained_entries\": %" PRIu64 ", \"drained_samples\": %" PRIu64
                   ", \"drained_notices\": %" PRIu64, en, sa, no);
        if (drv_value_entries(c->d))
            fprintf(f, ", \"drained_values\": %" PRIu64, drv_producer_drained_values(c->p));
    }
    if (drv_value_entries(c->d))
        fprintf(f, ", \"values_rejected\": %" PRIu64, c->values_rejected);
    fprintf(f, "},\n");
}

/* ---- opening and closing -------------------------------------------------------- */

static drv_producer *open_producer(collect *c, const collect_options *o, char *err, size_t errsz)
{
    cpod_event ev[MAX_EVENTS];
    for (size_t i = 0; i < c->nev; i++)
        ev[i] = (cpod_event){ c->ev[i].id, c->ev[i].name, c->ev[i].mean_period };
    const char *prog = o->program ? strrchr(o->program, '/') : NULL;
    prog = prog ? prog + 1 : o->program ? o->program : "?";
    char name[160];
    snprintf(name, sizeof name, "axp pid %d (%.100s)", (int)getpid(), prog);
    drv_producer_options po = { .mode = c->mode, .ncpus = o->ncpus, .policy = o->policy,
                                .path = o->driver_path, .db_dir = o->db_dir, .events = ev,
                                .nevents = c->nev, .name = name, .stacks = o->stacks || c->pm,
                                .value_entries = axp_pmu_values(c->m) ? COLLECT_VALUE_ENTRIES : 0 };
    return drv_producer_open(&po, err, errsz);
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
    c->stacks = o->stacks;
    c->pm = axp_pmu_profileme(m);
    c->mode = o->db_dir ? DRV_PROD_CPOD : o->driver_path ? DRV_PROD_PATH : DRV_PROD_PRIVATE;
    c->nev = axp_pmu_events(m, c->ev, MAX_EVENTS);
    if (c->nev > MAX_EVENTS)
        c->nev = MAX_EVENTS;
    if (!c->nev && !c->pm && !axp_pmu_values(m)) {
        snprintf(err, errsz, "%s needs --pmu (which events to sample)",
                 o->db_dir ? "--collector" : o->driver_path ? "--driver" : "sampling");
        free(c);
        return NULL;
    }
    /* The logs go to temporaries (common/outfile.h) that collect_finish
     * renames into place once the run has ended; a run stopped before
     * then leaves an earlier file of either name as it was. */
    char e[512];
    int rc = (c->p = open_producer(c, o, err, errsz)) ? 0 : -1;
    if (c->p)
        c->d = drv_producer_driver(c->p);
    if (rc == 0 && o->sample_log && !(c->log = sample_log_open(&c->log_of, o->sample_log, e, sizeof e))) {
        snprintf(err, errsz, "--sample-log %s", e);
        rc = -1;
    }
    if (rc == 0 && o->values_log && !(c->vlog = values_log_open(&c->vlog_of, o->values_log, e, sizeof e))) {
        snprintf(err, errsz, "--values-log %s", e);
        rc = -1;
    }
    if (rc) {
        collect_close(c);
        return NULL;
    }
    if (axp_pmu_values(m))
        axp_set_value_hook(m, on_value, c);
    if (c->pm)
        axp_set_pm_hook(m, on_pm, c);
    axp_set_sample_hook(m, on_sample, c);
    axp_set_poll_hook(m, on_poll, c);
    axp_set_image_hook(m, on_image, c);
    axp_set_stats_extra(m, write_stats, c);
    return c;
}

int collect_finish(collect *c, char *err, size_t errsz)
{
    int rc = drv_producer_finish(c->p, err, errsz);
    /* The logs hold every sample and record the machine took, whatever
     * became of them in the driver: each is renamed into place when
     * written whole, its temporary removed when not. */
    char e[512];
    if (c->log) {
        c->log = NULL;
        if (!outfile_commit(&c->log_of, e, sizeof e) && !rc) {
            snprintf(err, errsz, "--sample-log %s", e);
            rc = -1;
        }
    }
    if (c->vlog) {
        c->vlog = NULL;
        if (!outfile_commit(&c->vlog_of, e, sizeof e) && !rc) {
            snprintf(err, errsz, "--values-log %s", e);
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
        axp_set_value_hook(c->m, NULL, NULL);
        axp_set_pm_hook(c->m, NULL, NULL);
    }
    /* logs still open: the run did not end, so neither replaces anything */
    if (c->log)
        outfile_abort(&c->log_of);
    if (c->vlog)
        outfile_abort(&c->vlog_of);
    drv_producer_close(c->p);
    for (size_t i = 0; i < c->npaths; i++) {
        free(c->paths[i].host);
        free(c->paths[i].abs);
    }
    free(c->paths);
    free(c);
}
