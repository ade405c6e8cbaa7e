/*
 * machine/cycles_loads.c: what value sampling asks of the cycle model:
 * each load's latency and the level that answered it while a run is
 * recorded, and the interpreter's cycles charged to the core.
 */
#include "machine/cycles_int.h"

void cycles_loads_log(cycles_core *c, cycles_load *log)
{
    c->loadlog = log;
    c->nloadlog = 0;
    c->noting = log || c->load_fn;
}

void cycles_set_load_hook(cycles_core *c, void (*fn)(void *ctx, uint64_t pc, uint32_t latency, int level),
                          void *ctx)
{
    c->load_fn = fn;
    c->load_ctx = ctx;
    c->noting = c->loadlog || fn;
}

uint32_t cycles_loads_take(cycles_core *c)
{
    uint32_t n = c->nloadlog;
    c->nloadlog = 0;
    return n;
}

void load_note(cycles_core *c, uint64_t pc, uint64_t latency)
{
    uint32_t lat = latency > UINT32_MAX ? UINT32_MAX : (uint32_t)latency;
    if (c->load_fn)
        c->load_fn(c->load_ctx, pc, lat, c->load_level);
    if (!c->loadlog || c->nloadlog >= CYCLES_BLOCK_MAX)
        return;
    cycles_load *l = &c->loadlog[c->nloadlog++];
    l->pc = pc;
    l->latency = lat;
    l->level = c->load_level;
}

void cycles_charge(cycles_core *c, uint64_t n)
{
    c->charge += n;
}

/* The handler ran between the last instruction and the next: like a PAL
 * call, its cycles hold up the next fetch, which starts a fetch block of
 * its own. */
void charge_now(cycles_core *c)
{
    uint64_t base = c->fetch_ready > c->st.cycles ? c->fetch_ready : c->st.cycles;
    c->fetch_ready = base + c->charge;
    c->fetch_cause = ST_SYSCALL;
    c->seq_pc = ~0ULL;
    c->charge = 0;
}
