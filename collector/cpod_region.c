/*
 * collector/cpod_region.c: one attached machine, from the daemon's side.
 *
 * Everything the driver hands over is journalled first, then applied: a
 * notice to the process maps, an entry batch through the maps into the
 * live profiles.  Only then does the sink return, and the driver free the
 * buffer for the machine.  A restarted daemon replays the journal, and
 * recognises what the driver offers again (a buffer taken but not yet
 * freed when the daemon died) by its sequence number.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/cpod_internal.h"
#include "collector/driver_shm.h"

#define SYNTHETIC UINT64_MAX   /* seq of notices a snapshot made up */
#define SHORT_TIMEOUT_MS 100

static uint64_t hash_entries(const drv_entry *e, size_t n)
{
    uint64_t h = 0x9AE16A3B2F90404Full ^ n;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ e[i].pc) * 0x9E3779B97F4A7C15ull;
        h = (h ^ ((uint64_t)e[i].pid_event << 32 | e[i].count)) * 0xC2B2AE3D27D4EB4Full;
    }
    return h ^ (h >> 31);
}

static const cpod_evdef *event_of(cpod_region *r, unsigned ev)
{
    cpod_evdef *d = &r->ev[ev & 255];
    if (!d->name)
        cpod_meta_event(r->meta, ev, d);
    return d;
}

/* Entries through the maps into the live profiles. */
static void feed(cpod_region *r, const drv_entry *e, size_t n)
{
    cpod *d = r->d;
    cpod_profset *s = &d->live;
    for (size_t i = 0; i < n; i++) {
        uint32_t pid = drv_entry_pid(&e[i]), count = e[i].count;
        uint64_t pc = e[i].pc;
        if (!count)
            continue;
        const cpod_evdef *ev = event_of(r, drv_entry_event(&e[i]));
        const cpod_map *m = r->lmap;
        if (!m || r->lpid != pid || pc < m->lo || pc >= m->hi) {
            m = cpod_procs_lookup(&r->procs, pid, pc);
            r->lmap = m;
            r->lpid = pid;
        }
        cpod_prof *p = cpod_prof_get(s, m ? m->img : NULL, ev->name, 0, NULL);
        bool ok = p && cpod_prof_add(p, m ? pc + m->adj : pc, count, ev->period);
        if (ok && m && m->img->per_process) {
            p = cpod_prof_get(s, m->img, ev->name, pid, r->name);
            ok = p && cpod_prof_add(p, pc + m->adj, count, ev->period);
        }
        if (!ok) {
            cpod_log("%s: out of memory; %zu entries dropped", r->name, n - i);
            return;
        }
        s->samples += count;
        r->samples += count;
        d->samples += count;
        if (!m) {
            s->unknown += count;
            r->unknown += count;
            d->unknown += count;
        }
    }
}

static void journal(cpod_region *r, const cpod_jrec *jr)
{
    uint64_t before = r->j.size;
    if (cpod_journal_append(&r->j, jr))
        r->d->journal_bytes += r->j.size - before;
}

/* A process ended: one count in its program's exits profile, at the offset
 * saying how.  Only live notices count; a daemon that dies before merging
 * loses these counts (the journal replays maps, not counts). */
static void count_exit(cpod_region *r, const drv_notice *n)
{
    static const char exits[] = PROFDB_EXITS_EVENT;
    cpod_image *img = cpod_procs_exe(&r->procs, n->pid);
    if (!img)
        return;
    uint64_t how = (n->status & 0x7f) ? PROFDB_EXIT_SIGNAL
                   : (n->status >> 8) & 0xff ? PROFDB_EXIT_FAILED : PROFDB_EXIT_OK;
    cpod_prof *p = cpod_prof_get(&r->d->live, img, exits, 0, NULL);
    if (!p || !cpod_prof_add(p, how, 1, 1))
        cpod_log("%s: out of memory counting the exit of pid %u", r->name, n->pid);
}

static int on_notice(void *ctx, const drv_notice *n)
{
    cpod_region *r = ctx;
    if (n->seq < r->notice_next)
        return 0;   /* applied already: replayed from the journal */
    cpod_jrec jr = { .type = CPOD_J_NOTICE, .notice = n };
    journal(r, &jr);
    r->lmap = NULL;
    if (n->type == DRV_NOTICE_EXIT)
        count_exit(r, n);
    if (!cpod_procs_notice(&r->procs, n, r->flush_gen))
        cpod_log("%s: out of memory applying a notice for pid %u", r->name, n->pid);
    r->notice_next = n->seq + 1;
    return 0;
}

/* Was this batch delivered before (and journalled), by a daemon that died
 * before the driver could take it back?  Updates the record if not. */
static bool seen(cpod_region *r, const drv_batch *b, bool update)
{
    if (b->cpu >= r->ncpus)
        return false;
    cpod_cpustate *cs = &r->cs[b->cpu];
    switch (b->source) {
    case DRV_SRC_BUFFER:
        if (b->seq < cs->buf_next)
            return true;
        if (update)
            cs->buf_next = b->seq + 1;
        return false;
    case DRV_SRC_ACTIVE:
        if (b->seq < cs->active_next)
            return true;
        if (update)
            cs->active_next = b->seq + 1;
        return false;
    case DRV_SRC_TABLE: {
        uint64_t h = hash_entries(b->e, b->n);
        if (b->n && h == cs->table_hash)
            return true;
        if (update && b->n)
            cs->table_hash = h;
        return false;
    }
    }
    return false;
}

static int on_entries(void *ctx, const drv_batch *b)
{
    cpod_region *r = ctx;
    if (seen(r, b, true))
        return 0;
    cpod_jrec jr = { .type = CPOD_J_BATCH, .batch = b };
    journal(r, &jr);
    feed(r, b->e, b->n);
    return 0;
}

/* Value records: like entry batches, journalled, then applied; what a
 * dead daemon already journalled comes again with the same places in the
 * CPU's stream and is skipped. */
static int on_values(void *ctx, const drv_value_batch *b)
{
    cpod_region *r = ctx;
    if (b->cpu >= r->ncpus)
        return 0;
    cpod_cpustate *cs = &r->cs[b->cpu];
    drv_value_batch nb = *b;
    if (nb.first < cs->values_next) {
        uint64_t skip = cs->values_next - nb.first;
        if (skip >= nb.n)
            return 0;
        nb.v += skip;
        nb.n -= skip;
        nb.first += skip;
    }
    cpod_jrec jr = { .type = CPOD_J_VALUES, .values = &nb };
    journal(r, &jr);
    cs->values_next = nb.first + nb.n;
    cpod_values_feed(r, nb.v, nb.n);
    return 0;
}

/* A record of the stack rings, a stack or a ProfileMe record, into the
 * daemon's live sets. */
static void ring_record(cpod_region *r, const drv_stack_rec *rec)
{
    if (rec->event == DRV_PM_EVENT) {
        cpod_pm_add(&r->d->pmlive, &r->procs, rec);
        return;
    }
    if (cpod_stacks_add(&r->d->stk, &r->procs, event_of(r, rec->event)->name, rec))
        r->d->stacks++;
    else
        r->d->stacks_lost++;
}

/* A stack from the region's rings: journalled, then mapped now, while the
 * process's map holds (before the flush that lets a dead process be
 * reaped).  What a dead daemon journalled and did not get to release from
 * the ring comes again at the same place in the CPU's ring and is skipped. */
static int on_stack(void *ctx, unsigned cpu, const drv_stack_rec *rec)
{
    cpod_region *r = ctx;
    if (cpu >= r->ncpus || rec->at < r->cs[cpu].stacks_next)
        return 0;
    cpod_jrec jr = { .type = CPOD_J_STACK, .cpu = cpu, .stack = rec };
    journal(r, &jr);
    r->cs[cpu].stacks_next = rec->next;
    ring_record(r, rec);
    return 0;
}

/* The stacks now in the rings; how many were taken. */
static int take_stacks(cpod_region *r)
{
    drv_error err;
    if (!r->stk && !(r->stk = drv_stacks_open(r->path, &err)))
        return 0;   /* a machine without stacks, or not made yet */
    int n = drv_stacks_take(r->stk, on_stack, r, &err);
    if (n < 0)
        cpod_log("%s: %s", r->name, err.msg);
    return n > 0 ? n : 0;
}

static drvc_sink sink_of(cpod_region *r)
{
    return (drvc_sink){ on_entries, on_notice, r };
}

/* ---- replaying the journal -------------------------------------------------- */

static bool on_replay(void *ctx, const cpod_jrec *jr)
{
    cpod_region *r = ctx;
    switch (jr->type) {
    case CPOD_J_SNAP:
        r->replay_gen = jr->gen + 1;
        r->notice_next = jr->seq;
        if (jr->gen > r->d->gen)
            r->d->gen = jr->gen;
        return true;
    case CPOD_J_MARK:
        r->replay_gen = jr->gen + 1;
        if (jr->gen > r->d->gen)
            r->d->gen = jr->gen;
        return true;
    case CPOD_J_NOTICE:
        r->lmap = NULL;
        if (jr->notice->seq != SYNTHETIC && jr->notice->seq + 1 > r->notice_next)
            r->notice_next = jr->notice->seq + 1;
        return cpod_procs_notice(&r->procs, jr->notice, 0);
    case CPOD_J_VALUES:
        if (jr->values->cpu < r->ncpus && jr->values->first + jr->values->n > r->cs[jr->values->cpu].values_next)
            r->cs[jr->values->cpu].values_next = jr->values->first + jr->values->n;
        if (r->replay_gen > r->d->covered_gen)
            cpod_values_feed(r, jr->values->v, jr->values->n);
        return true;
    case CPOD_J_STACK:
        if (jr->cpu < r->ncpus && jr->stack->next > r->cs[jr->cpu].stacks_next)
            r->cs[jr->cpu].stacks_next = jr->stack->next;
        if (jr->stack->n && r->replay_gen > r->d->covered_gen)
            ring_record(r, jr->stack);
        return true;
    case CPOD_J_BATCH:
        seen(r, jr->batch, true);
        /* Generations up to covered_gen are in the database, or in a
         * pending merge that will be finished: not again. */
        if (r->replay_gen > r->d->covered_gen)
            feed(r, jr->batch->e, jr->batch->n);
        return true;
    }
    return true;
}

/* ---- snapshots -------------------------------------------------------------- */

typedef struct snapctx {
    cpod_buf *b;
} snapctx;

static bool snap_notice(void *ctx, const drv_notice *n)
{
    drv_notice m = *n;
    m.seq = SYNTHETIC;
    cpod_jrec jr = { .type = CPOD_J_NOTICE, .notice = &m };
    return cpod_jrec_encode(((snapctx *)ctx)->b, &jr);
}

/* The region's state as records: where its maps and delivery counts
 * stand, as of generation gen. */
static bool snapshot(cpod_region *r, uint64_t gen, cpod_buf *b)
{
    b->n = 0;
    cpod_jrec s = { .type = CPOD_J_SNAP, .gen = gen, .seq = r->notice_next };
    snapctx sc = { b };
    if (!cpod_jrec_encode(b, &s) || !cpod_procs_snapshot(&r->procs, snap_notice, &sc))
        return false;
    for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
        const cpod_cpustate *cs = &r->cs[cpu];
        drv_batch bb = { .cpu = cpu, .source = DRV_SRC_BUFFER, .seq = cs->buf_next - 1, .n = 0 };
        drv_batch ba = { .cpu = cpu, .source = DRV_SRC_ACTIVE, .seq = cs->active_next - 1, .n = 0 };
        cpod_jrec j1 = { .type = CPOD_J_BATCH, .batch = &bb }, j2 = { .type = CPOD_J_BATCH, .batch = &ba };
        if ((cs->buf_next && !cpod_jrec_encode(b, &j1)) || (cs->active_next && !cpod_jrec_encode(b, &j2)))
            return false;
        drv_value_batch vb = { .cpu = cpu, .first = cs->values_next, .n = 0 };
        cpod_jrec j3 = { .type = CPOD_J_VALUES, .values = &vb };
        if (cs->values_next && !cpod_jrec_encode(b, &j3))
            return false;
        drv_stack_rec sr = { .at = cs->stacks_next, .next = cs->stacks_next };
        cpod_jrec j4 = { .type = CPOD_J_STACK, .cpu = cpu, .stack = &sr };
        if (cs->stacks_next && !cpod_jrec_encode(b, &j4))
            return false;
    }
    return true;
}

/* ---- lifecycle ---------------------------------------------------------------- */

static char *join(const char *dir, const char *name, const char *ext)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, name, ext);
    return p;
}

void cpod_region_free(cpod_region *r)
{
    if (!r)
        return;
    if (r->c)
        drvc_close(r->c);
    drv_stacks_close(r->stk);
    cpod_journal_close(&r->j);
    cpod_procs_free(&r->procs);
    cpod_buf_free(&r->snap);
    free(r->cs);
    free(r->meta);
    free(r->name);
    free(r->path);
    free(r->meta_path);
    free(r->jpath);
    free(r);
}

/* A machine links its region into place and only then takes the producer
 * lock: a region never attached and younger than this is being born, not
 * abandoned. */
#define BIRTH_MS 30000

static bool producer_gone(const cpod_region *r)
{
    if (drvc_producer_alive(r->c))
        return false;
    uint64_t attaches = __atomic_load_n(&r->c->r.h->attaches, __ATOMIC_RELAXED);
    return attaches > 0 || cpod_now_ms() - r->attached_ms > BIRTH_MS;
}

cpod_region *cpod_region_attach(cpod *d, const char *name, bool *busy, char *msg, size_t msg_size)
{
    *busy = false;
    cpod_region *r = calloc(1, sizeof *r);
    if (!r) {
        cpod_msg(msg, msg_size, "%s: out of memory", name);
        return NULL;
    }
    r->d = d;
    r->j.fd = -1;
    cpod_procs_init(&r->procs, &d->images);
    r->name = strdup(name);
    r->path = join(d->regions_dir, name, ".drv");
    r->meta_path = join(d->regions_dir, name, ".meta");
    r->jpath = join(d->regions_dir, name, ".journal");
    if (!r->name || !r->path || !r->meta_path || !r->jpath) {
        cpod_msg(msg, msg_size, "%s: out of memory", name);
        goto fail;
    }
    drv_error err;
    if (!(r->c = drvc_open(r->path, 0, &err))) {
        *busy = err.code == DRV_EBUSY;
        cpod_msg(msg, msg_size, "%s", err.msg);
        goto fail;
    }
    r->ncpus = drvc_ncpus(r->c);
    drvc_set_value_sink(r->c, on_values, r);
    r->attached_ms = cpod_now_ms();
    if (!(r->cs = calloc(r->ncpus, sizeof *r->cs))) {
        cpod_msg(msg, msg_size, "%s: out of memory", r->path);
        goto fail;
    }
    char mmsg[512];
    if ((r->meta = malloc(sizeof *r->meta)) && !cpod_meta_read(r->meta_path, r->meta, mmsg, sizeof mmsg)) {
        cpod_log("%s; using the standard event names", mmsg);
        free(r->meta);
        r->meta = NULL;
    }
    if (r->meta && r->meta->name[0])
        snprintf(r->label, sizeof r->label, "%s (%s)", name, r->meta->name);
    else
        snprintf(r->label, sizeof r->label, "%s", name);

    uint64_t samples0 = d->live.samples;
    r->replay_gen = 0;
    if (!cpod_journal_open(&r->j, r->jpath, on_replay, r, msg, msg_size))
        goto fail;
    uint64_t replayed = d->live.samples - samples0;
    if (r->j.size <= 16) {
        /* A new journal says which generation its records belong to. */
        cpod_jrec s = { .type = CPOD_J_SNAP, .gen = d->gen, .seq = r->notice_next };
        cpod_journal_append(&r->j, &s);
    }
    r->samples = r->unknown = 0;
    drv_counters c;
    drvc_counters(r->c, -1, &c);
    cpod_log("machine %s attached: %u CPUs, region %s%s", r->label, r->ncpus, r->path,
             !producer_gone(r) ? "" : " (its machine is gone: salvaging)");
    if (replayed || r->procs.n)
        cpod_log("%s: journal replayed: %zu processes, %llu samples not yet in the database",
                 r->name, r->procs.n, (unsigned long long)replayed);
    return r;
fail:
    cpod_region_free(r);
    return NULL;
}

static void gone(cpod_region *r)
{
    r->gone = true;
    drvc_counters(r->c, -1, &r->final);
    const drv_counters *c = &r->final;
    cpod_log("machine %s gone: %llu samples taken, %llu entries, %llu dropped in the driver, "
             "%llu notices lost, %llu unknown since attach", r->label,
             (unsigned long long)c->samples, (unsigned long long)c->entries_taken +
             (unsigned long long)c->salvaged_entries, (unsigned long long)c->dropped,
             (unsigned long long)c->notices_lost, (unsigned long long)r->unknown);
}

static void failed(cpod_region *r, int rc, const drv_error *err)
{
    if (rc == DRV_ECORRUPT || rc == DRV_EFORMAT || rc == DRV_EVERSION || rc == DRV_ERETIRED ||
        rc == DRV_EIO) {
        cpod_log("%s; leaving this region alone (its file stays for inspection)", err->msg);
        r->broken = true;
    } else {
        cpod_log("%s", err->msg);
    }
}

int cpod_region_collect(cpod_region *r)
{
    if (r->gone || r->broken)
        return 0;
    drvc_sink s = sink_of(r);
    drv_error err;
    int rc = drvc_collect(r->c, 0, &s, &err);
    if (rc < 0) {
        failed(r, rc, &err);
        return 0;
    }
    /* stacks are not aggregated in the machine: while they flow, the
     * daemon keeps polling at its fastest, or the rings fill */
    rc += take_stacks(r);
    if (producer_gone(r)) {
        int k = drvc_salvage(r->c, &s, &err);
        if (k == DRV_OK) {
            take_stacks(r);
            cpod_procs_free(&r->procs);
            r->lmap = NULL;
            gone(r);
        } else if (k != DRV_EBUSY) {
            failed(r, k, &err);
        }
    }
    return rc;
}

void cpod_region_flush(cpod_region *r)
{
    if (r->gone || r->broken)
        return;
    drvc_sink s = sink_of(r);
    drv_error err;
    r->flush_gen++;
    /* A machine that did not answer last time (stopped, or stuck) gets a
     * short wait, so it cannot hold up every other machine's draining at
     * each flush.  Its request stays pending and is answered later. */
    int timeout = r->timed_out ? SHORT_TIMEOUT_MS : r->d->o.flush_timeout_ms;
    int rc = drvc_flush(r->c, timeout, &s, &err);
    if (rc == DRV_OK) {
        r->done_gen = r->flush_gen;
        take_stacks(r);
        cpod_procs_reap(&r->procs, r->done_gen);
        r->lmap = NULL;
        if (r->timed_out)
            cpod_log("machine %s answers flushes again", r->label);
        r->timed_out = false;
        if (producer_gone(r))
            cpod_region_collect(r);   /* the flush salvaged it all; mark it gone */
    } else if (rc == DRV_ETIMEDOUT) {
        if (!r->timed_out)
            cpod_log("%s", err.msg);
        r->timed_out = true;
    } else {
        failed(r, rc, &err);
    }
}

void cpod_region_mark(cpod_region *r, uint64_t gen)
{
    cpod_jrec m = { .type = CPOD_J_MARK, .gen = gen };
    journal(r, &m);
    r->mark_off = r->j.size;
    r->snap_gen = snapshot(r, gen, &r->snap) ? gen : 0;
    if (r->gone && !r->gone_gen)
        r->gone_gen = gen;
}

void cpod_region_compact(cpod_region *r, uint64_t gen)
{
    if (r->gone)
        return;
    if (r->j.failed) {
        /* Records are missing since the failure: start again from the
         * maps as they are now.  The samples taken meanwhile stay
         * unprotected until the next merge. */
        cpod_buf b = { 0 };
        if (snapshot(r, gen, &b))
            cpod_journal_compact(&r->j, &b, r->j.size);
        cpod_buf_free(&b);
    } else if (r->snap_gen == gen) {
        cpod_journal_compact(&r->j, &r->snap, r->mark_off);
    }
    cpod_buf_free(&r->snap);
    r->snap_gen = 0;
}

void cpod_region_remove(cpod_region *r)
{
    /* The region first, so no scan can attach it again; the journal is
     * merged; the description last. */
    if (unlink(r->path) != 0 && errno != ENOENT)
        cpod_log("%s: cannot remove: %s", r->path, strerror(errno));
    drv_stacks_unlink(r->path);
    unlink(r->jpath);
    size_t n = strlen(r->jpath) + 8;
    char *tmp = malloc(n);
    if (tmp) {   /* a rewrite cut short by a kill */
        snprintf(tmp, n, "%s.new", r->jpath);
        unlink(tmp);
        free(tmp);
    }
    unlink(r->meta_path);
    cpod_region_free(r);
}

void cpod_region_counters(const cpod_region *r, drv_counters *out)
{
    if (r->gone)
        *out = r->final;
    else
        drvc_counters(r->c, -1, out);
}
