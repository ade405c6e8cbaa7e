/*
 * machine/cycles.c: the EV5 cycle model (see cycles.h and docs/machine.md).
 *
 * The model keeps, per CPU, the cycle in which the current issue group
 * issues and what is in it, when every register's value becomes
 * available, when the busy units free up, the fetch stream, the caches,
 * TLBs, write buffer and predictors.  Each retired instruction either joins
 * the current group (same fetch block, a pipe left, operands ready, no
 * load/store clash) or starts the next one in the first cycle every
 * constraint allows; the cycles in between are stalls, charged to the
 * constraint that held the instruction longest.  What each instruction
 * needs and the slotting rules are alpha/'s (ev5_issue_of, ev5_groups),
 * copied into the core's tables.
 */
#include <stdlib.h>
#include <string.h>

#include "machine/cycles_int.h"

const char *const cycles_stall_names[ST_COUNT] = {
    [ST_ICACHE] = "icache", [ST_ITB] = "itb", [ST_DCACHE] = "dcache", [ST_DTB] = "dtb",
    [ST_WRITE_BUFFER] = "write_buffer", [ST_BRANCH] = "branch_mispredict",
    [ST_JUMP] = "jump_mispredict", [ST_TAKEN] = "taken_branch", [ST_DEPENDENCY] = "dependency",
    [ST_MULTIPLIER] = "multiplier", [ST_DIVIDER] = "divider", [ST_SYSCALL] = "syscall",
};

/* What the model makes of a row and its issue rules (K_*). */
static int kind_of(const alpha_opdef *d, const ev5_issue *is)
{
    switch (d ? d->flow : FLOW_NONE) {
    case FLOW_CBRANCH: return K_CBR;
    case FLOW_BRANCH: return K_BR;
    case FLOW_CALL: return d->format == AF_BRA ? K_BSR : K_JSR;
    case FLOW_JUMP: return K_JMP;
    case FLOW_RETURN: return K_RET;
    case FLOW_COROUTINE: return K_COR;
    case FLOW_PAL: return d->func == PAL_CALLSYS ? K_CALLSYS : K_PAL;
    default: break;
    }
    if (is->barrier)
        return K_MB;
    return is->mem == EV5_MEM_STORE ? K_STORE : is->mem == EV5_MEM_LOAD ? K_LOAD : K_ALU;
}

/* The model's compact copy of alpha/'s issue rules, one per row, then
 * unknown words and UNOP (the scheduler's numbering). */
static bool build_ops(cycles_core *c)
{
    c->nops = (uint32_t)alpha_optable_len;
    c->ops = calloc(c->nops + 2, sizeof *c->ops);
    if (!c->ops)
        return false;
    for (uint32_t i = 0; i <= c->nops + 1; i++) {
        const ev5_issue *is = alpha_sched_issue(c->sched, (uint16_t)i);
        cop *o = &c->ops[i];
        int k = kind_of(i < c->nops ? &alpha_optable[i] : NULL, is);
        o->kind = (uint8_t)k;
        o->pipe = is->pipe;
        o->cls = is->cls;
        o->lat = (uint8_t)(is->lat > 255 ? 255 : is->lat);      /* (ev5_validate allows no more) */
        o->unit = is->unit == EV5_UNIT_MUL ? U_MUL : is->unit == EV5_UNIT_DIV ? U_DIV : U_NONE;
        o->busy = (uint8_t)(is->busy > 255 ? 255 : is->busy);
        o->flags = (uint8_t)((k == K_LOAD ? F_LOAD : 0) | (k == K_STORE ? F_STORE : 0) |
                             (o->unit ? F_UNIT : 0) | (k == K_MB ? F_MB : 0) | (is->fast ? F_FAST : 0) |
                             (k != K_ALU && k != K_LOAD && k != K_STORE && k != K_MB ? F_CTRL : 0));
    }
    return true;
}

void cycles_decode(uint32_t w, unsigned id, cycles_insn *out)
{
    *out = (cycles_insn){ .op = (uint16_t)alpha_optable_len, .ra = REG_NONE, .rb = REG_NONE,
                          .rc = REG_NONE, .dst = REG_SINK };
    if (id >= alpha_optable_len)
        return;
    alpha_insn in;
    alpha_decode(w, &in);
    if (in.id != id)            /* (the caller decoded the same word: cannot happen) */
        return;
    alpha_sched_op so;
    alpha_sched_op_of(&in, &so);
    ev5_issue is;                       /* (its classes: no parameters needed) */
    ev5_issue_of(NULL, in.op, so.row == alpha_sched_unop(), &is);
    /* Registers keep the scheduler's numbers (ALPHA_SCHED_NOREG is
     * REG_NONE); a branch or CMOV reads Ra's early copy. */
    out->op = so.row;
    out->ra = (uint16_t)(so.src[0] | (is.early ? EARLY : 0));
    out->rb = so.src[1];
    out->rc = so.src[2];
    out->dst = so.dst == ALPHA_SCHED_NOREG ? REG_SINK : so.dst;
    out->back = in.op->flow == FLOW_CBRANCH && (w & 0x100000);
    out->mem = is.mem != EV5_MEM_NONE;
    out->hint = (int16_t)((int32_t)((w & 0x3fff) << 18) >> 18);
}

cycles_core *cycles_new(const ev5_params *p)
{
    cycles_core *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->p = *p;
    c->fb_mask = p->fetch_block - 1;
    c->seq_pc = ~0ULL;
    c->akey = CKEY(0, 0);
    c->fetch_cause = ST_DEPENDENCY;
    c->wb.cap = p->write_buffer_entries;
    c->bp_mask = p->bp_entries - 1;
    c->front = aligned_alloc(64, (sizeof *c->front + 63) & ~(size_t)63);
    if (!c->front) {
        free(c);
        return NULL;
    }
    memset(c->front, 0, sizeof *c->front);      /* (freeable if what follows fails) */
    char err[128];
    c->sched = alpha_sched_new(p, err, sizeof err);
    bool ok = c->sched && build_ops(c) && front_init(c->front, p) &&
              ccache_init(&c->dc, p->dcache.size, p->dcache.line, p->dcache.ways, true) &&
              ccache_init(&c->sc, p->scache.size, p->scache.line, p->scache.ways, false) &&
              ccache_init(&c->bc, p->bcache.size, p->bcache.line, p->bcache.ways, false) &&
              (c->bp = malloc(p->bp_entries)) != NULL;
    if (!ok) {
        cycles_free(c);
        return NULL;
    }
    memset(c->bp, 0xff, p->bp_entries);
    /* the slotting rules: alpha/'s table, copied next to the rest of the state */
    const ev5_groups *g = alpha_sched_groups(c->sched);
    memcpy(c->gnext, g->next, sizeof c->gnext);
    memcpy(c->gsize, g->size, sizeof c->gsize);
    c->wake = ~0ULL;
    c->schedules = true;
    return c;
}

void cycles_free(cycles_core *c)
{
    if (!c)
        return;
    free(c->ops);
    alpha_sched_free(c->sched);
    front_free(c->front);
    free(c->front);
    ccache_free(&c->dc);
    ccache_free(&c->sc);
    ccache_free(&c->bc);
    free(c->bp);
    free(c->pm.open);
    free(c);
}

void cycles_set_observer(cycles_core *c, const cycles_observer *o)
{
    c->obs = *o;
    c->wake = o->advance ? 0 : ~0ULL;
    c->evmask = o->event ? ~0u : 0;
}

void cycles_set_wake(cycles_core *c, uint64_t cycle) { c->wake = c->trace ? 0 : cycle; }

void cycles_set_trace(cycles_core *c, bool trace)
{
    c->trace = trace;
    if (trace)
        c->wake = 0;
}

cycles_observer cycles_get_observer(const cycles_core *c) { return c->obs; }
void cycles_set_event_mask(cycles_core *c, uint32_t mask) { c->evmask = c->obs.event ? mask : 0; }

uint64_t cycles_now(const cycles_core *c) { return c->st.cycles; }

const cycles_stats *cycles_get_stats(cycles_core *c)
{
    /* Every group but the open one was counted by size as it closed. */
    uint64_t groups = c->group != 0;
    for (int k = 1; k <= 4; k++)
        groups += c->st.group_size[k];
    c->st.issue_cycles = groups;
    return &c->st;
}

/* Latency of a fill from below the first-level caches, for the line
 * holding addr: S-cache, then B-cache (if fitted), then memory.  The
 * S-cache is unified and allocates on every miss. */
static uint32_t fill_latency(cycles_core *c, uint64_t addr, uint64_t cycle, uint64_t pc)
{
    bool hit;
    uint64_t sl = addr >> c->sc.line_shift;
    ccache_access(&c->sc, sl, c->akey | sl, &hit);
    if (hit) {
        c->fill_level = CLVL_SCACHE;
        return c->p.scache.latency;
    }
    c->fill_level = CLVL_MEMORY;
    c->st.scache_misses++;
    event(c, CEV_SMISS, cycle, pc);
    /* Beyond the chip, lines queue for the B-cache port or the memory bus:
     * a stream of misses is limited by bandwidth, not only latency. */
    uint32_t lat, busy;
    if (c->bc.tag) {
        uint64_t bl = addr >> c->bc.line_shift;
        ccache_access(&c->bc, bl, c->akey | bl, &hit);
        if (hit) {
            c->fill_level = CLVL_BCACHE;
            lat = c->p.bcache.latency;
            busy = c->p.bcache_fill_busy;
        } else {
            c->st.bcache_misses++;
            lat = c->p.bcache.latency + c->p.mem_latency;
            busy = c->p.mem_fill_busy;
        }
    } else {
        lat = c->p.scache.latency + c->p.mem_latency;
        busy = c->p.mem_fill_busy;
    }
    uint64_t start = c->bus_free > cycle ? c->bus_free : cycle;
    c->bus_free = start + busy;
    return (uint32_t)(start - cycle) + lat;
}

/* The front end found, at pc, an ITB miss or an I-cache miss or both
 * (FB_* bits).  after is the cycle the previous group issued. */
static __attribute__((noinline)) void fetch_miss(cycles_core *c, uint64_t pc, uint64_t after, unsigned bits)
{
    if (bits & FB_ITB) {
        c->st.itb_misses++;
        event(c, CEV_ITBMISS, after, pc);
        uint64_t r = (c->fetch_ready > after ? c->fetch_ready : after) + c->p.itb_miss_cycles;
        c->fetch_ready = r;
        c->fetch_cause = ST_ITB;
    }
    if (!(bits & FB_IMISS))
        return;
    c->st.icache_misses++;
    /* IMISS samples land on the missing instruction itself. */
    event(c, CEV_IMISS, after, pc);
    uint64_t base = c->fetch_ready > after ? c->fetch_ready : after;
    c->fetch_ready = base + fill_latency(c, pc, after, pc);
    c->fetch_cause = ST_ICACHE;
    /* The line's branch-prediction counters start afresh with the fill. */
    uint32_t slots = c->p.icache.line / 4;
    uint32_t first = (uint32_t)((pc >> 2) & c->bp_mask & ~(slots - 1));
    memset(&c->bp[first], 0xff, first + slots <= c->bp_mask + 1 ? slots : c->bp_mask + 1 - first);
}

/* Earliest cycle register r allows, and why: selects, not branches. */
#define NEED(r) do {                                                          \
        unsigned r_ = (r);                                                    \
        uint64_t t_ = c->times[r_];                                           \
        int rc_ = c->rcause[r_ & (EARLY - 1)];                                \
        bool later_ = t_ > earliest;                                          \
        earliest = later_ ? t_ : earliest;                                    \
        cause = later_ ? rc_ : cause;                                         \
    } while (0)

void cycles_back_asn(cycles_core *c, uint32_t asn)
{
    /* Another process continues through the kernel: a new fetch stream. */
    if (CKEY(asn, 0) != c->akey)
        c->seq_pc = ~0ULL;
    c->akey = CKEY(asn, 0);
}

void cycles_set_asn(cycles_core *c, uint32_t asn)
{
    cycles_front_asn(c->front, asn);
    cycles_back_asn(c, asn);
}

/* What holds a load, store, MB or a multiply/divide before it issues,
 * beyond its operands: a busy unit, a DTB miss (dtb_miss: the front end
 * found one), a full write buffer. */
static __attribute__((noinline)) void hold(cycles_core *c, const cop *o, uint64_t pc, uint64_t ea, uint64_t t,
                                           bool dtb_miss, uint64_t *earliest_io, int *cause_io)
{
    uint64_t earliest = *earliest_io;
    int cause = *cause_io;
    if (o->unit == U_MUL && c->mul_free > earliest) {
        earliest = c->mul_free;
        cause = ST_MULTIPLIER;
    } else if (o->unit == U_DIV && c->div_free > earliest) {
        earliest = c->div_free;
        cause = ST_DIVIDER;
    }
    if (o->flags & F_MEM) {
        if (dtb_miss) {
            c->st.dtb_misses++;
            event(c, CEV_DTBMISS, t, pc);
            uint64_t base = earliest > t + 1 ? earliest : t + 1;
            earliest = base + c->p.dtb_miss_cycles;
            cause = ST_DTB;
        }
        if (o->flags & F_STORE) {
            cwbuf_retire(&c->wb, earliest > t ? earliest : t);
            uint64_t wl = ea >> c->dc.line_shift;
            if (c->wb.n == c->wb.cap && cwbuf_find(&c->wb, wl) < 0 && c->wb.done[c->wb.head] > earliest) {
                earliest = c->wb.done[c->wb.head];
                cause = ST_WRITE_BUFFER;
            }
        }
    } else if ((o->flags & F_MB) && c->wb.n) {
        uint32_t last = WB_AT(c->wb.head + c->wb.n - 1);
        if (c->wb.done[last] > earliest) {
            earliest = c->wb.done[last];
            cause = ST_WRITE_BUFFER;
        }
    }
    *earliest_io = earliest;
    *cause_io = cause;
}

/* A load issued at `issue`: when its value is ready, and why then
 * (*rc).  Every load, a prefetch too, brings its line in. */
static __attribute__((noinline)) uint64_t load_ready(cycles_core *c, uint64_t pc, uint64_t ea, uint64_t issue,
                                                     uint64_t r, int *rc)
{
    c->st.loads++;
    bool hit;
    uint64_t dl = ea >> c->dc.line_shift;
    uint32_t way = ccache_access(&c->dc, dl, c->akey | dl, &hit);
    if (hit) {
        if (c->dc.ready[way] > r) {     /* merged with a fill under way */
            r = c->dc.ready[way];
            *rc = ST_DCACHE;
        }
    } else {
        c->st.dcache_misses++;
        event(c, CEV_DMISS, issue, pc);
        r = issue + fill_latency(c, ea, issue, pc);
        c->dc.ready[way] = r;
        *rc = ST_DCACHE;
    }
    c->load_level = hit ? CLVL_DCACHE : c->fill_level;
    return r;
}

__attribute__((noinline)) void cycles_after(cycles_core *c, const cop *o, const cycles_insn *in, uint64_t pc,
                                            uint64_t ea, uint64_t next_pc, uint64_t issue)
{
    if (o->unit == U_MUL)
        c->mul_free = issue + o->busy;
    else if (o->unit == U_DIV)
        c->div_free = issue + o->busy;
    switch (o->kind) {
    case K_STORE: {
        c->st.stores++;
        uint64_t wl = ea >> c->dc.line_shift;
        cwbuf_retire(&c->wb, issue);
        if (cwbuf_find(&c->wb, wl) >= 0) {
            c->st.write_buffer_merges++;
        } else {
            /* The write goes to the S-cache (write-back, allocating); a
             * line that is not there costs a fill first. */
            uint64_t sl = ea >> c->sc.line_shift;
            uint32_t cost = ccache_probe(&c->sc, sl, c->akey | sl)
                                ? c->p.write_buffer_drain
                                : fill_latency(c, ea, issue, pc);
            uint64_t start = issue;
            if (c->wb.n) {
                uint64_t prev = c->wb.done[WB_AT(c->wb.head + c->wb.n - 1)];
                if (prev > start)
                    start = prev;
            }
            uint32_t slot = WB_AT(c->wb.head + c->wb.n);
            c->wb.line[slot] = wl;
            c->wb.done[slot] = start + cost;
            c->wb.n++;
        }
        break;
    }
    case K_CBR: {
        c->st.branches++;
        uint32_t i = (uint32_t)(pc >> 2) & c->bp_mask;
        uint8_t ctr = c->bp[i];
        if (ctr == 0xff)            /* backward taken, forward not taken */
            ctr = in->back ? 2 : 1;
        bool taken = next_pc != pc + 4;
        bool pred = ctr >= 2;
        if (taken && ctr < 3)
            ctr++;
        else if (!taken && ctr > 0)
            ctr--;
        c->bp[i] = ctr;
        if (pred != taken) {
            c->st.branch_mispredicts++;
            event(c, CEV_BRANCHMP, issue, pc);
            c->fetch_ready = issue + 1 + c->p.mispredict_penalty;
            c->fetch_cause = ST_BRANCH;
            c->seq_pc = ~0ULL;
        } else if (taken) {
            c->fetch_ready = issue + 1 + c->p.taken_bubble;
            c->fetch_cause = ST_TAKEN;
            c->seq_pc = ~0ULL;
        }
        break;
    }
    case K_BSR:
    case K_BR:
        if (o->kind == K_BSR && c->p.return_stack) {
            c->ras_top = (c->ras_top + 1) & (RAS_RING - 1);
            c->ras[c->ras_top] = pc + 4;
            if (c->ras_n < c->p.return_stack)
                c->ras_n++;
        }
        c->fetch_ready = issue + 1 + c->p.taken_bubble;
        c->fetch_cause = ST_TAKEN;
        c->seq_pc = ~0ULL;
        break;
    case K_JMP:
    case K_JSR:
    case K_RET:
    case K_COR: {
        c->st.jumps++;
        bool right;
        if (o->kind == K_RET || o->kind == K_COR) {
            if (o->kind == K_RET)
                c->st.returns++;
            right = c->ras_n && c->ras[c->ras_top] == next_pc;
            if (c->ras_n) {
                c->ras_top = (c->ras_top - 1) & (RAS_RING - 1);
                c->ras_n--;
            }
            if (!right && o->kind == K_RET)
                c->st.return_mispredicts++;
        } else {
            /* Only the low 16 bits of the hinted target mean anything. */
            uint64_t predicted = pc + 4 + (uint64_t)((int64_t)in->hint * 4);
            right = ((predicted ^ next_pc) & 0xffff) == 0;
        }
        if ((o->kind == K_JSR || o->kind == K_COR) && c->p.return_stack) {
            c->ras_top = (c->ras_top + 1) & (RAS_RING - 1);
            c->ras[c->ras_top] = pc + 4;
            if (c->ras_n < c->p.return_stack)
                c->ras_n++;
        }
        if (!right) {
            c->st.jump_mispredicts++;
            event(c, CEV_JSRMP, issue, pc);
            c->fetch_ready = issue + 1 + c->p.jump_mispredict_penalty;
            c->fetch_cause = ST_JUMP;
        } else {
            c->fetch_ready = issue + 1 + c->p.taken_bubble;
            c->fetch_cause = ST_TAKEN;
        }
        c->seq_pc = ~0ULL;
        break;
    }
    case K_CALLSYS:
    case K_PAL:
        /* PALcode runs between this instruction and the next, which is
         * where the cycles (and any sample taken meanwhile) land. */
        c->fetch_ready = issue + 1 + (o->kind == K_CALLSYS ? c->p.syscall_cycles : c->p.lat[LAT_PAL]);
        c->fetch_cause = ST_SYSCALL;
        c->seq_pc = ~0ULL;
        break;
    default:
        break;
    }
}

/* One instruction (inlined into both callers).  Which way a test goes
 * here depends on the guest's data, which the host's branch predictor
 * guesses poorly: what runs for every instruction decides by selects,
 * and all that an ALU operation does not need is out of line, behind one
 * test of its flags. */
static inline __attribute__((always_inline)) void step(cycles_core *c, const cycles_insn *in, uint64_t pc,
                                                       uint64_t ea, uint64_t next_pc, unsigned fb)
{
    const cop *o = &c->ops[in->op];
    const unsigned fl = o->flags;
    const uint64_t t = c->st.cycles;

    /* (a missing line can only start a new fetch block) */
    if (unlikely(fb & (FB_ITB | FB_IMISS)))
        fetch_miss(c, pc, t, fb);
    bool newfb = (pc != c->seq_pc) | !(pc & c->fb_mask);
    uint64_t earliest = newfb ? c->fetch_ready : 0;
    int cause = newfb ? c->fetch_cause : ST_DEPENDENCY;
    NEED(in->ra);
    NEED(in->rb);
    NEED(in->rc);
    const bool dtb_miss = fb & FB_DTB;
    if ((fl & (F_UNIT | F_STORE | F_MB)) | dtb_miss)
        hold(c, o, pc, ea, t, dtb_miss, &earliest, &cause);

    /* Joining the group issues in cycle t; otherwise the next group
     * starts at the first cycle every constraint allows, and the cycles
     * in between are stalls.  group_size[0] takes the non-events. */
    uint8_t g = c->gnext[c->group][o->cls];
    bool join = !newfb & (c->group != 0) & (earliest <= t) & (g != 0xff) & !dtb_miss;
    uint64_t jm = -(uint64_t)join;              /* all ones when joining */
    uint64_t next = earliest > t + 1 ? earliest : t + 1;
    uint64_t issue = (t & jm) | (next & ~jm);
    c->st.stalls[cause] += (next - t - 1) & ~jm;
    c->st.group_size[c->gsize[c->group] & ~jm]++;
    c->st.cycles = issue;
    c->group = (uint8_t)((g & jm) | (c->gnext[0][o->cls] & ~jm));
    if (unlikely(!join && issue >= c->wake))
        c->obs.advance(c->obs.ctx, t, issue, pc);
    event(c, CEV_ISSUES, issue, pc);
    c->seq_pc = pc + 4;

    /* The result. */
    unsigned d = in->dst;
    uint64_t r = issue + o->lat;
    int rc = ST_DEPENDENCY;
    if (fl & F_LOAD) {
        if (likely(dline_recent(c, ea, r))) {    /* (the common case inline) */
            c->st.loads++;
            c->load_level = CLVL_DCACHE;
        } else {
            r = load_ready(c, pc, ea, issue, r, &rc);
        }
        if (unlikely(c->noting))
            load_note(c, pc, r - issue);
    }
    put_result(c, d, r, fl & F_FAST ? issue : r, rc);
    if (fl & (F_STORE | F_CTRL | F_UNIT))
        cycles_after(c, o, in, pc, ea, next_pc, issue);
}

void cycles_step(cycles_core *c, uint64_t pc, uint32_t w, unsigned id, uint64_t ea, uint64_t next_pc)
{
    cycles_insn in;
    cycles_decode(w, id, &in);
    if (unlikely(c->charge))
        charge_now(c);
    uint16_t f;
    unsigned fb = cycles_front_block(c->front, &in, pc, 1, &ea, &f) ? f & FB_BITS : 0;
    step(c, &in, pc, ea, next_pc, fb);
    c->st.instructions++;
}

/* ProfileMe: a block holding a tagged instruction, one instruction at a
 * time (the same cycles as with its schedule), the tagged ones' records
 * taken around their steps (cycles_pm.c).  The front end's fetch misses
 * are applied before the step rather than in it (the same call, in the
 * same state), so that when the instruction's fetch block could issue is
 * known: for a fetch block begun in an earlier block, no later than when
 * this block started. */
static __attribute__((noinline)) void pm_block(cycles_core *c, const cycles_insn *ins, uint64_t pc, uint32_t n,
                                               const uint64_t *ea, uint64_t next_pc, const uint16_t *fl,
                                               const uint16_t *fend)
{
    pm_state *s = &c->pm;
    uint32_t nextf = fl < fend ? *fl >> FB_SHIFT : FB_NONE;
    uint64_t fb_at = c->st.cycles;
    for (uint32_t i = 0; i < n; i++) {
        unsigned fb = 0;
        if (i == nextf) {
            fb = *fl++ & FB_BITS;
            nextf = fl < fend ? *fl >> FB_SHIFT : FB_NONE;
        }
        uint64_t ipc = pc + 4 * (uint64_t)i, npc = i + 1 == n ? next_pc : ipc + 4;
        uint64_t t = c->st.cycles;
        if (fb & (FB_ITB | FB_IMISS))
            fetch_miss(c, ipc, t, fb);
        if ((ipc != c->seq_pc) | !(ipc & c->fb_mask))
            fb_at = c->fetch_ready > t ? c->fetch_ready : t;
        bool first = s->sampling && --s->left == 0;
        bool second = s->left2 && --s->left2 == 0;
        if (likely(!first && !second)) {
            step(c, &ins[i], ipc, ea[i], npc, fb & FB_DTB);
            if (s->truth)
                pm_truth_step(c, ipc, fb_at, c->st.cycles, c->times[ins[i].dst]);
            continue;
        }
        uint64_t dmiss = c->st.dcache_misses, mp = c->st.branch_mispredicts + c->st.jump_mispredicts;
        step(c, &ins[i], ipc, ea[i], npc, fb & FB_DTB);
        const cop *o = &c->ops[ins[i].op];
        cycles_pm r = { .pc = ipc, .fetch = fb_at, .issue = c->st.cycles, .head = c->st.cycles - t,
                        .ready = c->times[ins[i].dst] };
        r.flags = (fb & FB_IMISS ? CPM_IMISS : 0) | (fb & FB_ITB ? CPM_ITBMISS : 0) |
                  (fb & FB_DTB && (o->flags & F_MEM) ? CPM_DTBMISS : 0) |
                  (c->st.dcache_misses != dmiss ? CPM_DMISS : 0) |
                  (c->st.branch_mispredicts + c->st.jump_mispredicts != mp ? CPM_MISPREDICT : 0);
        if (o->flags & F_MEM) {
            r.flags |= o->flags & F_LOAD ? CPM_LOAD : CPM_STORE;
            r.ea = ea[i];
            r.level = o->flags & F_LOAD ? c->load_level : 0;
        } else if (o->kind == K_CBR) {
            r.flags |= CPM_CBRANCH | (npc != ipc + 4 ? CPM_TAKEN : 0);
        } else if (o->kind == K_JMP || o->kind == K_JSR || o->kind == K_RET || o->kind == K_COR) {
            r.flags |= CPM_JUMP;
            r.ea = npc;
        }
        if (s->truth)
            pm_truth_step(c, ipc, fb_at, r.issue, r.ready);
        pm_tagged(c, &r, first, second);
    }
}

void cycles_back_block(cycles_core *c, const cycles_insn *ins, uint64_t pc, uint32_t n, const uint64_t *ea,
                       uint64_t next_pc, cycles_sched **ts, const uint16_t *fl, uint32_t nf)
{
    if (!n)
        return;
    if (unlikely(c->charge))
        charge_now(c);
    c->st.instructions += n;
    if (unlikely(c->pm.on)) {
        /* the countdowns pass over a block with nothing tagged inline */
        pm_state *s = &c->pm;
        bool due = !s->sampling || s->truth || s->left <= n || (s->left2 && s->left2 <= n);
        if (unlikely(due) && pm_due(c, n)) {
            s->block_start = pc;
            pm_block(c, ins, pc, n, ea, next_pc, fl, fl + nf);
        } else if (!due) {
            s->left -= n;
            s->left2 -= s->left2 ? n : 0;
        }
        if (c->ops[ins[n - 1].op].kind == K_CBR)
            pm_history(c, &ins[n - 1], pc + 4 * (uint64_t)(n - 1), next_pc);
        if (unlikely(s->paths != NULL))
            pm_run(c, pc, n, c->ops[ins[n - 1].op].kind == K_CBR);
        if (due)
            return;
    }
    if (!c->schedules)
        ts = NULL;
    const uint16_t *fend = fl + nf;
    uint32_t nextf = fl < fend ? *fl >> FB_SHIFT : FB_NONE;    /* the next instruction with findings */
    uint32_t i = 0;
    while (i < n) {
        unsigned fb = 0;
        if (unlikely(i == nextf)) {
            fb = *fl++ & FB_BITS;
            nextf = fl < fend ? *fl >> FB_SHIFT : FB_NONE;
        }
        if (i + 1 == n) {
            step(c, &ins[i], pc + 4 * i, ea[i], next_pc, fb);
            break;
        }
        /* Once an instruction has started an issue group, the static
         * schedule of the rest (cycles_sched.c) goes as far as it can. */
        uint64_t t = c->st.cycles;
        if (ts)                 /* (the schedule is wanted right after, if at all) */
            __builtin_prefetch(ts[i]);
        step(c, &ins[i], pc + 4 * i, ea[i], pc + 4 * i + 4, fb);
        i++;
        if (ts && c->st.cycles != t)
            i = sched_run(c, ts, i - 1, ins, pc, n, ea, next_pc, c->st.cycles, nextf);
    }
}

void cycles_block(cycles_core *c, const cycles_insn *ins, uint64_t pc, uint32_t n, const uint64_t *ea,
                  uint64_t next_pc, cycles_sched **ts)
{
    uint16_t fl[CYCLES_BLOCK_MAX];
    uint32_t nf = cycles_front_block(c->front, ins, pc, n, ea, fl);
    cycles_back_block(c, ins, pc, n, ea, next_pc, ts, fl, nf);
}

void cycles_set_schedules(cycles_core *c, bool on) { c->schedules = on; }
