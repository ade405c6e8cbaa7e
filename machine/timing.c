/*
 * machine/timing.c: the cycle model and the PMU attached to the machine:
 * one cycles_core and one pmu per CPU, fed by the timed executor (directly
 * or through the model's own thread, timing_thread.c), their samples
 * handed to the sample hook, and their figures in --stats.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/cycles.h"
#include "machine/pmu.h"
#include "machine/unwind.h"

typedef struct truth_ent {
    uint64_t key;            /* pid << 44 | pc >> 2, 0 = empty */
    uint64_t hoq;
    uint64_t samples[CEV_COUNT];
    uint64_t stalls[ST_COUNT];  /* of hoq, the stall cycles by cause */
    uint64_t levels[CLVL_COUNT]; /* loads: who answered, each time */
    uint64_t execs, slots, used; /* issue slots in its times in progress, and used by others */
} truth_ent;

struct timing {
    ev5_params p;
    bool pmu_on;
    pmu_config pc;
    cycles_core **core;
    pmu **pmu;
    int ncpu;
    bool truth;
    truth_ent *tt;
    size_t tcap, tn;
    bool oom;
    struct truth_fwd *fwd;       /* per CPU, with truth on */
    uint32_t *pid;               /* per CPU: the process its model works for */
    bool values_insns;           /* axp_set_values_clock */
    uint32_t pm_window;          /* axp_set_profileme_window */
    struct pm_path_fwd { machine *m; int cpuno; } *pathfwd;  /* per CPU, with the path hook */
};

_Static_assert((int)AXP_PM_IMISS == (int)CPM_IMISS && (int)AXP_PM_ITBMISS == (int)CPM_ITBMISS && (int)AXP_PM_DMISS == (int)CPM_DMISS &&
               (int)AXP_PM_DTBMISS == (int)CPM_DTBMISS && (int)AXP_PM_LOAD == (int)CPM_LOAD && (int)AXP_PM_STORE == (int)CPM_STORE &&
               (int)AXP_PM_CBRANCH == (int)CPM_CBRANCH && (int)AXP_PM_TAKEN == (int)CPM_TAKEN && (int)AXP_PM_JUMP == (int)CPM_JUMP &&
               (int)AXP_PM_MISPREDICT == (int)CPM_MISPREDICT && (int)AXP_PM_PAIRED == (int)CPM_PAIRED && (int)AXP_PM_USEFUL == (int)CPM_USEFUL,
               "axp_pm.flags are the model's");

const ev5_params *timing_params(const machine *m)
{
    return m->tm ? &m->tm->p : NULL;
}

static struct timing *tm_get(machine *m)
{
    if (!m->tm) {
        m->tm = calloc(1, sizeof *m->tm);
        if (m->tm) {
            ev5_defaults(&m->tm->p);
            m->tm->values_insns = true;
        }
    }
    return m->tm;
}

int axp_set_timing(axp_machine *m, const char *const *assign, size_t n, char *err, size_t errsz)
{
    struct timing *t = tm_get(m);
    if (!t) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!ev5_set(&t->p, assign[i], err, errsz))
            return -1;
    if (!ev5_validate(&t->p, err, errsz))
        return -1;
    return 0;
}

int axp_set_pmu(axp_machine *m, const char *spec, uint64_t seed, char *err, size_t errsz)
{
    struct timing *t = tm_get(m);
    if (!t) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    if (!pmu_parse(spec, &t->pc, err, errsz))
        return -1;
    t->pc.seed = seed;
    t->pmu_on = true;
    return 0;
}

void axp_set_sample_hook(axp_machine *m, axp_sample_hook fn, void *ctx)
{
    m->shook = fn;
    m->shook_ctx = ctx;
}

void axp_set_pm_hook(axp_machine *m, axp_pm_hook fn, void *ctx)
{
    m->pmhook = fn;
    m->pmhook_ctx = ctx;
}

void axp_set_pm_path_hook(axp_machine *m, axp_pm_path_hook fn, void *ctx)
{
    m->pathhook = fn;
    m->pathhook_ctx = ctx;
}

int axp_set_profileme_window(axp_machine *m, uint64_t window, char *err, size_t errsz)
{
    struct timing *t = tm_get(m);
    if (!t) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    if (window > AXP_PM_WINDOW_MAX) {
        snprintf(err, errsz, "--profileme-window: expected a number from 0 to %d, got %" PRIu64,
                 AXP_PM_WINDOW_MAX, window);
        return -1;
    }
    t->pm_window = (uint32_t)window;
    return 0;
}

bool axp_pmu_profileme(const axp_machine *m)
{
    return m->tm && m->tm->pmu_on && m->tm->pc.profileme;
}

void axp_set_poll_hook(axp_machine *m, axp_poll_hook fn, void *ctx)
{
    m->phook = fn;
    m->phook_ctx = ctx;
}

void axp_set_stats_extra(axp_machine *m, void (*fn)(void *ctx, FILE *f), void *ctx)
{
    m->stats_extra = fn;
    m->stats_extra_ctx = ctx;
}

void axp_record_truth(axp_machine *m)
{
    struct timing *t = tm_get(m);
    if (t)
        t->truth = true;
}

size_t axp_pmu_events(const axp_machine *m, axp_pmu_event *out, size_t max)
{
    const struct timing *t = m->tm;
    if (!t || !t->pmu_on)
        return 0;
    size_t n = 0;
    for (int i = 0; i < t->pc.n; i++) {
        int ev = t->pc.ev[i];
        if (n < max)
            out[n] = (axp_pmu_event){ (unsigned)ev, pmu_event_name(ev),
                                      ((double)t->pc.lo[ev] + t->pc.hi[ev]) / 2 };
        n++;
    }
    return n;
}

int axp_set_values_clock(axp_machine *m, bool instructions)
{
    struct timing *t = tm_get(m);
    if (!t)
        return -1;
    t->values_insns = instructions;
    return 0;
}

bool axp_pmu_values(const axp_machine *m)
{
    return m->tm && m->tm->pmu_on && m->tm->pc.values;
}

/* ---- truth: head-of-queue cycles and samples per instruction ---------- */

static truth_ent *truth_slot(struct timing *t, uint64_t key)
{
    if (t->tn * 2 >= t->tcap) {
        size_t ncap = t->tcap ? t->tcap * 2 : 4096;
        truth_ent *nt = calloc(ncap, sizeof *nt);
        if (!nt) {
            t->oom = true;
            return NULL;
        }
        for (size_t i = 0; i < t->tcap; i++) {
            if (!t->tt[i].key)
                continue;
            size_t h = (t->tt[i].key * 0x9e3779b97f4a7c15ULL) >> 20 & (ncap - 1);
            while (nt[h].key)
                h = (h + 1) & (ncap - 1);
            nt[h] = t->tt[i];
        }
        free(t->tt);
        t->tt = nt;
        t->tcap = ncap;
    }
    size_t h = (key * 0x9e3779b97f4a7c15ULL) >> 20 & (t->tcap - 1);
    while (t->tt[h].key && t->tt[h].key != key)
        h = (h + 1) & (t->tcap - 1);
    if (!t->tt[h].key) {
        t->tt[h].key = key;
        t->tn++;
    }
    return &t->tt[h];
}

void timing_asn(machine *m, int cpuno, uint32_t pid)
{
    m->tm->pid[cpuno] = pid;
    cycles_back_asn(m->tm->core[cpuno], pid);
}

/* With truth recording on, the model reports to this observer, which
 * forwards to the PMU's.  The per-CPU context is the machine. */
typedef struct truth_fwd {
    machine *m;
    int cpuno;
    cycles_observer inner;
    uint64_t stalls[ST_COUNT];  /* the model's stalls at the last advance */
} truth_fwd;

static void truth_advance(void *ctx, uint64_t from, uint64_t to, uint64_t pc)
{
    truth_fwd *f = ctx;
    truth_ent *e = truth_slot(f->m->tm, (uint64_t)f->m->tm->pid[f->cpuno] << 44 | pc >> 2);
    /* the model has counted this wait's stall: what grew since the last
     * advance is the instruction's, by cause (cycles.h) */
    const cycles_stats *st = cycles_get_stats(f->m->tm->core[f->cpuno]);
    for (int k = 0; k < ST_COUNT; k++) {
        if (e)
            e->stalls[k] += st->stalls[k] - f->stalls[k];
        f->stalls[k] = st->stalls[k];
    }
    if (e)
        e->hoq += to - from;
    if (f->inner.advance)
        f->inner.advance(f->inner.ctx, from, to, pc);
}

/* Each load's level, for --truth's load.* columns. */
static void truth_load(void *ctx, uint64_t pc, uint32_t latency, int level)
{
    truth_fwd *f = ctx;
    (void)latency;
    truth_ent *e = truth_slot(f->m->tm, (uint64_t)f->m->tm->pid[f->cpuno] << 44 | pc >> 2);
    if (e)
        e->levels[level & 3]++;
}

/* Each instruction's issue slots in progress, for --truth's issue.* columns. */
static void truth_slots(void *ctx, uint64_t pc, uint64_t slots, uint64_t used)
{
    truth_fwd *f = ctx;
    truth_ent *e = truth_slot(f->m->tm, (uint64_t)f->m->tm->pid[f->cpuno] << 44 | pc >> 2);
    if (e) {
        e->execs++;
        e->slots += slots;
        e->used += used;
    }
}

static void truth_event(void *ctx, int ev, uint64_t cycle, uint64_t pc)
{
    truth_fwd *f = ctx;
    if (f->inner.event)
        f->inner.event(f->inner.ctx, ev, cycle, pc);
}

/* ---- the retire hook and the sample sink ------------------------------- */

static void sample_sink(void *ctx, int cpuno, uint64_t pc, int ev)
{
    machine *m = ctx;
    uint64_t pid = m->tm->pid[cpuno];
    if (m->tm->truth) {
        truth_ent *e = truth_slot(m->tm, pid << 44 | pc >> 2);
        if (e)
            e->samples[ev]++;
    }
    if (m->uw)
        m->sample_stack = unwind_sample(m, cpuno, pc);
    if (m->shook)
        m->shook(m->shook_ctx, cpuno, (int)pid, pc, (unsigned)ev);
    m->sample_stack = NULL;
}

static uint32_t clamp32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* ProfileMe records of CPU cpuno, to the hook with their process. */
static void pm_sink(void *ctx, int cpuno, const cycles_pm *r, int n)
{
    machine *m = ctx;
    if (!m->pmhook)
        return;
    axp_pm out[2];
    for (int i = 0; i < n && i < 2; i++)
        out[i] = (axp_pm){ .cpu = cpuno, .pid = (int)m->tm->pid[cpuno], .pc = r[i].pc, .ea = r[i].ea,
                           .flags = r[i].flags, .hist = r[i].hist, .hist_len = r[i].hist_len,
                           .level = r[i].level, .fetch_issue = clamp32(r[i].issue - r[i].fetch),
                           .head = clamp32(r[i].head), .issue_ready = clamp32(r[i].ready - r[i].issue),
                           .window = r[i].window, .distance = r[i].distance,
                           .issue_width = m->tm->p.issue_width,
                           .period = ((double)m->tm->pc.pmlo + m->tm->pc.pmhi) / 2 };
    m->pmhook(m->pmhook_ctx, out, n);
}

/* A ProfileMe record's true path, to the hook with its process. */
static void pm_path_sink(void *ctx, const cycles_pm *r, const cycles_run *run, uint32_t n)
{
    struct pm_path_fwd *f = ctx;
    _Static_assert(CYCLES_RUNS == AXP_PM_RUNS, "the machine passes the model's runs");
    axp_pm_run out[CYCLES_RUNS + 1];    /* (n is at most that: the ring and the tagged one's own) */
    for (uint32_t i = 0; i < n; i++)
        out[i] = (axp_pm_run){ run[i].start, run[i].end };
    f->m->pathhook(f->m->pathhook_ctx, (int)f->m->tm->pid[f->cpuno], r->pc, r->hist, r->hist_len, out, n);
}

int timing_start(machine *m, char *err, size_t errsz)
{
    struct timing *t = m->tm;
    if (!t)
        return 0;
    t->ncpu = m->ncpu;
    t->core = calloc((size_t)m->ncpu, sizeof *t->core);
    t->pmu = calloc((size_t)m->ncpu, sizeof *t->pmu);
    t->pid = calloc((size_t)m->ncpu, sizeof *t->pid);
    if (t->truth)
        t->fwd = calloc((size_t)m->ncpu, sizeof *t->fwd);
    if (!t->core || !t->pmu || !t->pid || (t->truth && !t->fwd))
        goto oom;
    /* AXP_SCHEDULES=0: model every instruction, for checking that the
     * blocks' static schedules change nothing */
    const char *sc = getenv("AXP_SCHEDULES");
    for (int i = 0; i < m->ncpu; i++) {
        if (!(t->core[i] = cycles_new(&t->p)))
            goto oom;
        if (sc && !strcmp(sc, "0"))
            cycles_set_schedules(t->core[i], false);
        if (t->pmu_on) {
            t->pc.skid = t->p.pmu_skid;
            t->pc.pm_window = t->pm_window;
            if (t->pc.profileme && t->pm_window >= t->pc.pmlo) {
                snprintf(err, errsz, "--profileme-window %u: must be below the shortest ProfileMe interval (%u)",
                         t->pm_window, t->pc.pmlo);
                return -1;
            }
            t->pc.values_insns = t->values_insns;
            if (!(t->pmu[i] = pmu_new(&t->pc, i, t->core[i], sample_sink, m)))
                goto oom;
            if (t->pc.values)
                pmu_set_values_sink(t->pmu[i], values_interrupt);
            if (t->pc.profileme)
                pmu_set_pm_sink(t->pmu[i], pm_sink);
            if (t->pc.profileme && m->pathhook) {
                if (!t->pathfwd && !(t->pathfwd = calloc((size_t)m->ncpu, sizeof *t->pathfwd)))
                    goto oom;
                t->pathfwd[i] = (struct pm_path_fwd){ m, i };
                cycles_set_pm_paths(t->core[i], pm_path_sink, &t->pathfwd[i]);
            }
        }
        if (t->truth) {
            t->fwd[i].m = m;
            t->fwd[i].cpuno = i;
            t->fwd[i].inner = cycles_get_observer(t->core[i]);
            cycles_observer o = { truth_advance, truth_event, &t->fwd[i] };
            cycles_set_observer(t->core[i], &o);
            cycles_set_trace(t->core[i], true);
            /* every load timed by itself, so each one's level is seen
             * (static schedules skip loads that hit; same cycles) */
            cycles_set_schedules(t->core[i], false);
            cycles_set_load_hook(t->core[i], truth_load, &t->fwd[i]);
            cycles_set_pm_truth(t->core[i], truth_slots, &t->fwd[i]);
        }
    }
    for (int i = 0; i < m->ncpu; i++) {
        m->cpus[i].core = t->core[i];
        m->cpus[i].front = cycles_front_of(t->core[i]);
    }
    if (costs_start(m))
        goto oom;
    /* A values interrupt starts a run in the thread it interrupted, which
     * must still be on the CPU: the model stays on the executor's thread. */
    if (t->pmu_on && t->pc.values)
        return values_start(m, err, errsz);
    /* the hook wants costs in step with the instructions, and a stack
     * walk needs the registers of the block sampled: model inline */
    m->tt = m->want_costs || m->uw ? NULL : tthread_start(m);
    return 0;
oom:
    snprintf(err, errsz, "out of memory setting up the cycle model");
    return -1;
}

void timing_free(machine *m)
{
    struct timing *t = m->tm;
    if (!t)
        return;
    tthread_stop(m->tt);
    m->tt = NULL;
    for (int i = 0; t->core && i < t->ncpu; i++) {
        if (t->pmu)
            pmu_free(t->pmu[i]);
        cycles_free(t->core[i]);
    }
    costs_free(m);
    free(t->core);
    free(t->pmu);
    free(t->tt);
    free(t->fwd);
    free(t->pathfwd);
    free(t->pid);
    free(t);
    m->tm = NULL;
}

uint64_t axp_cycles(const axp_machine *m)
{
    const struct timing *t = m->tm;
    uint64_t n = 0;
    for (int i = 0; t && t->core && i < t->ncpu; i++)
        n += cycles_now(t->core[i]);
    return n;
}

/* ---- --stats ------------------------------------------------------------ */

#define SUM(field) ({                                                          \
        uint64_t s_ = 0;                                                      \
        for (int i_ = 0; i_ < t->ncpu; i_++)                                  \
            s_ += cycles_get_stats(t->core[i_])->field;                       \
        s_;                                                                   \
    })

void timing_write_stats(machine *m, FILE *f)
{
    struct timing *t = m->tm;
    if (!t || !t->core)
        return;
    uint64_t cyc = axp_cycles(m), ins = SUM(instructions);
    fprintf(f, "  \"cycles\": %" PRIu64 ",\n  \"cpi\": %.4f,\n", cyc, ins ? (double)cyc / (double)ins : 0.0);
    fprintf(f, "  \"issue_cycles\": %" PRIu64 ",\n", SUM(issue_cycles));
#define F(name) fprintf(f, "  \"" #name "\": %" PRIu64 ",\n", SUM(name));
    F(icache_misses) F(dcache_misses) F(scache_misses) F(bcache_misses)
    F(itb_misses) F(dtb_misses) F(branches) F(branch_mispredicts)
    F(jumps) F(jump_mispredicts) F(returns) F(return_mispredicts)
    F(loads) F(stores) F(write_buffer_merges)
#undef F
    fprintf(f, "  \"stalls\": {");
    for (int s = 0; s < ST_COUNT; s++)
        fprintf(f, "%s\"%s\": %" PRIu64, s ? ", " : "", cycles_stall_names[s], SUM(stalls[s]));
    fprintf(f, "},\n  \"issue_groups\": {");
    for (int g = 1; g <= 4; g++)
        fprintf(f, "%s\"%d\": %" PRIu64, g > 1 ? ", " : "", g, SUM(group_size[g]));
    fprintf(f, "},\n  \"cycles_per_cpu\": [");
    for (int i = 0; i < t->ncpu; i++)
        fprintf(f, "%s%" PRIu64, i ? ", " : "", cycles_now(t->core[i]));
    fprintf(f, "],\n");
    fprintf(f, "  \"ev5\": {");
    for (size_t i = 0; i < ev5_param_count; i++) {
        uint32_t v = 0;
        ev5_get(&t->p, ev5_param_table[i].name, &v);
        fprintf(f, "%s\"%s\": %u", i ? ", " : "", ev5_param_table[i].name, v);
    }
    fprintf(f, "},\n");
    if (!t->pmu_on)
        return;
    pmu_stats tot = { 0 };
    for (int i = 0; i < t->ncpu; i++) {
        pmu_stats s;
        pmu_get_stats(t->pmu[i], &s);
        for (int e = 0; e < CEV_COUNT; e++) {
            tot.samples[e] += s.samples[e];
            tot.overflows[e] += s.overflows[e];
            tot.period_sum[e] += s.period_sum[e];
            tot.active_cycles[e] += s.active_cycles[e];
        }
        tot.cycles += s.cycles;
    }
    fprintf(f, "  \"samples\": {");
    for (int i = 0; i < t->pc.n; i++) {
        int e = t->pc.ev[i];
        fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", pmu_event_name(e), tot.samples[e]);
    }
    /* events per sample: the mean period drawn, scaled up by the share of
     * time the event had a counter when it was multiplexed */
    fprintf(f, "},\n  \"mean_period\": {");
    for (int i = 0; i < t->pc.n; i++) {
        int e = t->pc.ev[i];
        double mp = tot.overflows[e] ? (double)tot.period_sum[e] / (double)tot.overflows[e]
                                     : ((double)t->pc.lo[e] + t->pc.hi[e]) / 2;
        if (tot.active_cycles[e] && tot.active_cycles[e] < tot.cycles)
            mp *= (double)tot.cycles / (double)tot.active_cycles[e];
        fprintf(f, "%s\"%s\": %.3f", i ? ", " : "", pmu_event_name(e), mp);
    }
    fprintf(f, "},\n  \"pmu_multiplexed\": %s,\n",
            t->pc.n > PMU_COUNTERS ? "true" : "false");
    if (t->pc.profileme) {
        cycles_pm_stats ps = { 0 }, one;
        for (int i = 0; i < t->ncpu; i++) {
            cycles_pm_get_stats(t->core[i], &one);
            ps.tagged += one.tagged;
            ps.records += one.records;
            ps.pairs += one.pairs;
        }
        fprintf(f, "  \"profileme\": {\"period\": %.1f, \"window\": %u, \"tagged\": %" PRIu64
                   ", \"records\": %" PRIu64 ", \"pairs\": %" PRIu64 "},\n",
                ((double)t->pc.pmlo + t->pc.pmhi) / 2, t->pc.pm_window, ps.tagged, ps.records, ps.pairs);
    }
    values_write_stats(m, f);
}

int axp_write_truth(axp_machine *m, FILE *f)
{
    struct timing *t = m->tm;
    if (!t || !t->truth)
        return 0;
    fprintf(f, "# pid pc head_of_queue_cycles");
    for (int i = 0; t->pmu_on && i < t->pc.n; i++)
        fprintf(f, " %s", pmu_event_name(t->pc.ev[i]));
    for (int s = 0; s < ST_COUNT; s++)
        fprintf(f, " stall.%s", cycles_stall_names[s]);
    fprintf(f, " load.dcache load.scache load.bcache load.memory issue.executions issue.slots issue.used\n");
    for (int i = 0; i < t->ncpu; i++)
        cycles_pm_truth_flush(t->core[i]);
    for (size_t i = 0; i < t->tcap; i++) {
        const truth_ent *e = &t->tt[i];
        if (!e->key)
            continue;
        fprintf(f, "%" PRIu64 " 0x%" PRIx64 " %" PRIu64, e->key >> 44, (uint64_t)((e->key & ((1ULL << 44) - 1)) << 2),
                e->hoq);
        for (int j = 0; t->pmu_on && j < t->pc.n; j++)
            fprintf(f, " %" PRIu64, e->samples[t->pc.ev[j]]);
        for (int s = 0; s < ST_COUNT; s++)
            fprintf(f, " %" PRIu64, e->stalls[s]);
        for (int l = 0; l < CLVL_COUNT; l++)
            fprintf(f, " %" PRIu64, e->levels[l]);
        fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", e->execs, e->slots, e->used);
    }
    if (t->oom) {
        errno = ENOMEM;
        return -1;
    }
    return ferror(f) ? -1 : 0;
}
