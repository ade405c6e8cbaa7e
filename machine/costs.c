/*
 * machine/costs.c: what the cycle model charged each retired instruction,
 * for the retire hook (axp_want_costs).
 *
 * A profiler that attaches cycles and misses to paths or calling contexts
 * needs them per dynamic instruction, in step with the instruction stream
 * it follows.  The model reports to its observer when an issue group
 * starts (the cycles since the previous group, charged to the group's
 * first instruction) and when an event happens (at the instruction it
 * happened at).  Here an observer in front of the PMU's (and the truth
 * recorder's) files both under the instruction's place in the block being
 * modelled; the executor then hands them to the hook with the block.  So
 * that the two run in step, the model runs inline, not on its own thread.
 */
#include <stdlib.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/cycles.h"
#include "machine/pmu.h"

_Static_assert(AXP_STALL_KINDS == ST_COUNT, "axp_cost.stall mirrors the model's stall causes");
_Static_assert(AXP_EVENT_KINDS == CEV_COUNT, "axp_cost.events mirrors the model's events");

struct costs {
    machine *m;
    int cpuno;
    cycles_observer inner;
    uint64_t stalls[ST_COUNT];  /* the model's stalls at the last advance */
    uint64_t base;              /* the block being modelled */
    uint32_t n;
    axp_cost cost[CYCLES_BLOCK_MAX];
};

const char *axp_stall_name(int kind)
{
    return kind >= 0 && kind < ST_COUNT ? cycles_stall_names[kind] : NULL;
}

const char *axp_event_name(int kind)
{
    return kind >= 0 && kind < CEV_COUNT ? pmu_event_name(kind) : NULL;
}

/* Where the model's report about pc goes: its instruction in the block,
 * or the block's first for anything about an instruction before it (a
 * report can only come late, never early). */
static axp_cost *slot(struct costs *c, uint64_t pc)
{
    uint64_t i = (pc - c->base) / 4;
    return &c->cost[i < c->n ? i : 0];
}

static void cost_advance(void *ctx, uint64_t from, uint64_t to, uint64_t pc)
{
    struct costs *c = ctx;
    const cycles_stats *st = cycles_get_stats(c->m->cpus[c->cpuno].core);
    axp_cost *k = slot(c, pc);
    k->cycles += to - from;
    for (int s = 0; s < ST_COUNT; s++) {
        uint64_t d = st->stalls[s] - c->stalls[s];
        k->stall[s] += d;
        k->any_stall |= d != 0;
        c->stalls[s] = st->stalls[s];
    }
    if (c->inner.advance)
        c->inner.advance(c->inner.ctx, from, to, pc);
}

static void cost_event(void *ctx, int ev, uint64_t cycle, uint64_t pc)
{
    struct costs *c = ctx;
    if (ev != CEV_CYCLES && ev != CEV_ISSUES) {
        axp_cost *k = slot(c, pc);
        if (k->events[ev] < UINT8_MAX)
            k->events[ev]++;
        k->any_event = 1;
    }
    if (c->inner.event)
        c->inner.event(c->inner.ctx, ev, cycle, pc);
}

int costs_start(machine *m)
{
    if (!m->want_costs)
        return 0;
    m->costs = calloc((size_t)m->ncpu, sizeof *m->costs);
    if (!m->costs)
        return -1;
    for (int i = 0; i < m->ncpu; i++) {
        struct costs *c = &m->costs[i];
        cycles_core *core = m->cpus[i].core;
        c->m = m;
        c->cpuno = i;
        c->inner = cycles_get_observer(core);
        cycles_observer o = { cost_advance, cost_event, c };
        cycles_set_observer(core, &o);
        cycles_set_trace(core, true);
    }
    return 0;
}

void costs_block(machine *m, int cpuno, uint64_t pc, uint32_t n)
{
    struct costs *c = &m->costs[cpuno];
    c->base = pc;
    c->n = n;
    memset(c->cost, 0, n * sizeof c->cost[0]);
}

const axp_cost *costs_of(machine *m, int cpuno, uint32_t i)
{
    return &m->costs[cpuno].cost[i];
}

void costs_free(machine *m)
{
    free(m->costs);
    m->costs = NULL;
}
