/*
 * machine/pmu.c: performance counters and their interrupts (see pmu.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/pmu.h"

static const char *const names[CEV_COUNT] = {
    [CEV_CYCLES] = "cycles", [CEV_IMISS] = "imiss", [CEV_DMISS] = "dmiss",
    [CEV_BRANCHMP] = "branchmp", [CEV_DTBMISS] = "dtbmiss", [CEV_ITBMISS] = "itbmiss",
    [CEV_JSRMP] = "jsrmp", [CEV_SMISS] = "smiss", [CEV_ISSUES] = "issues",
};

const char *pmu_event_name(int ev)
{
    return ev >= 0 && ev < CEV_COUNT ? names[ev] : NULL;
}

int pmu_event_by_name(const char *name, size_t len)
{
    for (int i = 0; i < CEV_COUNT; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len))
            return i;
    return -1;
}

bool pmu_parse(const char *spec, pmu_config *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof *out);
    out->mux_cycles = PMU_DEFAULT_MUX;
    out->skid = 6;
    const char *s = spec;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *colon = memchr(s, ':', len);
        size_t nlen = colon ? (size_t)(colon - s) : len;
        int ev = pmu_event_by_name(s, nlen);
        bool values = nlen == 6 && !strncmp(s, "values", 6);
        bool pm = nlen == 9 && !strncmp(s, "profileme", 9);
        if (ev < 0 && !values && !pm) {
            snprintf(err, errsize, "--pmu: unknown event '%.*s' (events: cycles, imiss, dmiss, "
                     "branchmp, dtbmiss, itbmiss, jsrmp, smiss, issues, values, profileme)", (int)nlen, s);
            return false;
        }
        if (pm && out->profileme) {
            snprintf(err, errsize, "--pmu: event 'profileme' given twice");
            return false;
        }
        for (int i = 0; i < out->n; i++)
            if (out->ev[i] == ev) {
                snprintf(err, errsize, "--pmu: event '%s' given twice", names[ev]);
                return false;
            }
        if (values && out->values) {
            snprintf(err, errsize, "--pmu: event 'values' given twice");
            return false;
        }
        uint32_t lo, hi;
        if (colon) {
            char num[32];
            size_t plen = len - nlen - 1;
            char *e;
            if (plen == 0 || plen >= sizeof num) {
                snprintf(err, errsize, "--pmu: bad period in '%.*s'", (int)len, s);
                return false;
            }
            memcpy(num, colon + 1, plen);
            num[plen] = 0;
            unsigned long long p = strtoull(num, &e, 10);
            /* ProfileMe costs the guest no interrupt: it may be denser */
            unsigned long long min = pm ? 8 : 64;
            if (*e || num[0] == '-' || p < min || p > 0x7fffffffULL) {
                snprintf(err, errsize, "--pmu: period in '%.*s' must be a number from %llu to 2147483647",
                         (int)len, s, min);
                return false;
            }
            lo = (uint32_t)(p - p / 32);
            hi = (uint32_t)(p + p / 32);
            if (pm) {
                /* counted in instructions, a narrow spread would let the
                 * samples lock onto loops of up to P/16 instructions */
                lo = (uint32_t)(p - p / 2);
                hi = (uint32_t)(p + p / 2);
            }
        } else if (pm) {
            lo = PMU_PROFILEME_DEFAULT / 2;
            hi = PMU_PROFILEME_DEFAULT + PMU_PROFILEME_DEFAULT / 2;
        } else if (ev == CEV_CYCLES || values) {
            lo = 60000;     /* DCPI's randomised cycle period */
            hi = 64000;
        } else {
            lo = 4096 - 128;
            hi = 4096 + 128;
        }
        if (pm) {
            out->profileme = true;
            out->pmlo = lo;
            out->pmhi = hi;
        } else if (values) {
            out->values = true;
            out->vlo = lo;
            out->vhi = hi;
        } else {
            out->ev[out->n] = ev;
            out->lo[ev] = lo;
            out->hi[ev] = hi;
            out->n++;
        }
        if (!end)
            break;
        s = end + 1;
        if (!*s) {
            snprintf(err, errsize, "--pmu: empty event name after ','");
            return false;
        }
    }
    if (!out->n && !out->values && !out->profileme) {
        snprintf(err, errsize, "--pmu: no events given");
        return false;
    }
    return true;
}

#define MAXPEND 16

struct pmu {
    pmu_config cfg;
    int cpu;
    cycles_core *core;
    pmu_sink sink;
    void *ctx;
    uint64_t rng;

    bool cycles_on;
    uint64_t cyc_ovf;               /* cycle at which the cycle counter overflows */
    uint32_t cyc_period;

    int other[CEV_COUNT];           /* the other events, in the order given */
    int nother, slots, first;       /* multiplexing: other[first .. first+slots) run */
    uint32_t active;                /* bit per CEV_* with a counter now */
    uint64_t active_since;
    uint64_t next_rotate;
    int64_t left[CEV_COUNT];        /* events until the counter overflows */
    uint32_t period[CEV_COUNT];     /* the period being counted */

    pmu_values_sink vsink;
    pmu_pm_sink pmsink;
    uint64_t vrng;
    uint64_t val_ovf;               /* cycle of the next values interrupt, ~0: none */
    int64_t vcount;                 /* values_insns: instructions until it overflows */

    struct { uint64_t at; int ev; } pend[MAXPEND];
    int npend;
    pmu_stats st;
};

static uint32_t between(uint64_t *rng, uint32_t lo, uint32_t hi)
{
    /* xorshift64*: small, fast and the same everywhere */
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    uint64_t r = *rng * 0x2545f4914f6cdd1dULL;
    return lo + (uint32_t)((r >> 32) % ((uint64_t)hi - lo + 1));
}

static uint32_t draw(pmu *u, int ev)
{
    return between(&u->rng, u->cfg.lo[ev], u->cfg.hi[ev]);
}

static void rewake(pmu *u)
{
    uint64_t w = ~0ULL;
    if (u->cycles_on)
        w = u->cyc_ovf + u->cfg.skid;
    if (u->val_ovf + u->cfg.skid < w)
        w = u->val_ovf + u->cfg.skid;
    for (int i = 0; i < u->npend; i++)
        if (u->pend[i].at < w)
            w = u->pend[i].at;
    if (u->next_rotate < w)
        w = u->next_rotate;
    cycles_set_wake(u->core, w);
}

static void set_active(pmu *u)
{
    u->active = u->cycles_on ? 1u << CEV_CYCLES : 0;
    for (int i = 0; i < u->slots && i < u->nother; i++)
        u->active |= 1u << u->other[(u->first + i) % u->nother];
    cycles_set_event_mask(u->core, (u->active & ~(1u << CEV_CYCLES)) |
                                   (u->cfg.values && u->cfg.values_insns ? 1u << CEV_ISSUES : 0));
}

static void account(pmu *u, uint64_t now)
{
    for (int ev = 0; ev < CEV_COUNT; ev++)
        if (u->active & (1u << ev))
            u->st.active_cycles[ev] += now - u->active_since;
    u->active_since = now;
}

static void deliver(pmu *u, uint64_t pc, int ev)
{
    if (ev < 0) {           /* a values interrupt counted in instructions */
        u->st.values++;
        if (u->vsink)
            u->vsink(u->ctx, u->cpu, pc);
        return;
    }
    u->st.samples[ev]++;
    u->sink(u->ctx, u->cpu, pc, ev);
}

static void advance(void *ctx, uint64_t from, uint64_t to, uint64_t pc)
{
    pmu *u = ctx;
    (void)from;
    /* The instruction at pc heads the issue queue from `from` to `to`:
     * every interrupt arriving in that window samples it. */
    while (u->cycles_on && u->cyc_ovf + u->cfg.skid <= to) {
        u->st.overflows[CEV_CYCLES]++;
        u->st.period_sum[CEV_CYCLES] += u->cyc_period;
        deliver(u, pc, CEV_CYCLES);
        u->cyc_period = draw(u, CEV_CYCLES);
        u->cyc_ovf += u->cyc_period;
    }
    while (u->val_ovf + u->cfg.skid <= to) {
        u->st.values++;
        if (u->vsink)
            u->vsink(u->ctx, u->cpu, pc);
        u->val_ovf += between(&u->vrng, u->cfg.vlo, u->cfg.vhi);
    }
    for (int i = 0; i < u->npend;) {
        if (u->pend[i].at <= to) {
            deliver(u, pc, u->pend[i].ev);
            u->pend[i] = u->pend[--u->npend];
        } else {
            i++;
        }
    }
    while (to >= u->next_rotate) {
        account(u, u->next_rotate);
        u->first = (u->first + u->slots) % u->nother;
        set_active(u);
        u->next_rotate += u->cfg.mux_cycles;
    }
    rewake(u);
}

static void pend(pmu *u, uint64_t at, int ev)
{
    u->pend[u->npend].at = at;
    u->pend[u->npend].ev = ev;
    u->npend++;
    rewake(u);
}

static void event(void *ctx, int ev, uint64_t cycle, uint64_t pc)
{
    pmu *u = ctx;
    if (ev == CEV_ISSUES && u->cfg.values_insns && u->cfg.values && --u->vcount <= 0) {
        u->vcount = between(&u->vrng, u->cfg.vlo, u->cfg.vhi);
        if (u->npend < MAXPEND)
            pend(u, cycle + u->cfg.skid, -1);
        else
            deliver(u, pc, -1);
    }
    if (!(u->active & (1u << ev)) || --u->left[ev] > 0)
        return;
    u->st.overflows[ev]++;
    u->st.period_sum[ev] += u->period[ev];
    u->period[ev] = draw(u, ev);
    u->left[ev] = u->period[ev];
    if (ev == CEV_IMISS) {
        deliver(u, pc, ev);
        return;
    }
    if (u->npend == MAXPEND) {     /* cannot happen with periods >= 64; keep the oldest */
        deliver(u, pc, ev);
        return;
    }
    pend(u, cycle + u->cfg.skid, ev);
}

static void pm_deliver(void *ctx, const cycles_pm *r, int n)
{
    pmu *u = ctx;
    if (u->pmsink)
        u->pmsink(u->ctx, u->cpu, r, n);
}

pmu *pmu_new(const pmu_config *cfg, int cpu, cycles_core *core, pmu_sink sink, void *ctx)
{
    pmu *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->cfg = *cfg;
    u->cpu = cpu;
    u->core = core;
    u->sink = sink;
    u->ctx = ctx;
    u->rng = (cfg->seed + 1) * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)cpu + 1) * 0xbf58476d1ce4e5b9ULL;
    if (!u->rng)
        u->rng = 1;
    for (int i = 0; i < cfg->n; i++) {
        int ev = cfg->ev[i];
        if (ev == CEV_CYCLES)
            u->cycles_on = true;
        else
            u->other[u->nother++] = ev;
    }
    u->slots = PMU_COUNTERS - (u->cycles_on ? 1 : 0);
    uint64_t now = cycles_now(core);
    u->val_ovf = ~0ULL - cfg->skid;     /* never, unless values was asked for */
    if (cfg->values) {
        u->vrng = (cfg->seed + 7) * 0xd1b54a32d192ed03ULL ^ ((uint64_t)cpu + 1) * 0x94d049bb133111ebULL;
        if (!u->vrng)
            u->vrng = 1;
        if (cfg->values_insns)
            u->vcount = between(&u->vrng, cfg->vlo, cfg->vhi);
        else
            u->val_ovf = now + between(&u->vrng, cfg->vlo, cfg->vhi);
    }
    if (u->cycles_on) {
        u->cyc_period = draw(u, CEV_CYCLES);
        u->cyc_ovf = now + u->cyc_period;
    }
    for (int i = 0; i < u->nother; i++) {
        int ev = u->other[i];
        u->period[ev] = draw(u, ev);
        u->left[ev] = u->period[ev];
    }
    u->next_rotate = u->nother > u->slots ? now + cfg->mux_cycles : ~0ULL;
    u->active_since = now;
    if (cfg->profileme) {
        /* a stream of its own per CPU, as the other periods */
        cycles_pm_config pc = { cfg->pmlo, cfg->pmhi, cfg->pm_window,
                                cfg->seed * 0x94d049bb133111ebULL + (uint64_t)cpu };
        cycles_set_profileme(core, &pc, pm_deliver, u);
    }
    cycles_observer o = { advance, event, u };
    cycles_set_observer(core, &o);
    set_active(u);
    rewake(u);
    return u;
}

void pmu_set_values_sink(pmu *u, pmu_values_sink vsink)
{
    u->vsink = vsink;
}

void pmu_set_pm_sink(pmu *u, pmu_pm_sink sink)
{
    u->pmsink = sink;
}

void pmu_free(pmu *u)
{
    free(u);
}

void pmu_get_stats(pmu *u, pmu_stats *out)
{
    account(u, cycles_now(u->core));
    u->st.cycles = cycles_now(u->core);
    *out = u->st;
}
