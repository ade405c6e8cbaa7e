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
 * constraint that held the instruction longest.
 */
#include <stdlib.h>
#include <string.h>

#include "machine/cycles.h"
#include "machine/cycles_mem.h"

const char *const cycles_stall_names[ST_COUNT] = {
    [ST_ICACHE] = "icache", [ST_ITB] = "itb", [ST_DCACHE] = "dcache", [ST_DTB] = "dtb",
    [ST_WRITE_BUFFER] = "write_buffer", [ST_BRANCH] = "branch_mispredict",
    [ST_JUMP] = "jump_mispredict", [ST_TAKEN] = "taken_branch", [ST_DEPENDENCY] = "dependency",
    [ST_MULTIPLIER] = "multiplier", [ST_DIVIDER] = "divider", [ST_SYSCALL] = "syscall",
};

/* Slotting state: counts of E0-only, E1-only, either-integer, FA-only,
 * FM-only and either-FP instructions in the group (2*2*3*2*2*3 states). */
#define SLOT_STATES 144
#define RAS_RING 1024           /* >= ev5_validate's limit on return_stack */

/* What the model needs of an instruction, from its alpha_optable row. */
enum { K_ALU, K_LOAD, K_STORE, K_CBR, K_BR, K_BSR, K_JMP, K_JSR, K_RET, K_COR, K_CALLSYS, K_PAL, K_MB };
enum { U_NONE, U_MUL, U_DIV };
enum { P_E0, P_E1, P_E01, P_FA, P_FM, P_FAM };

/* Register indices: 0-31 integer, 32-63 FP; 64-127 always ready (an
 * unused field or a literal reads there); 128 takes writes to R31/F31. */
#define REG_NONE 64
#define REG_SINK 128

typedef struct cop {
    uint8_t kind, unit, pipe;
    uint8_t lat;
    uint8_t busy;               /* unit occupancy */
    uint8_t bank_a, bank_b, bank_c;   /* 0 int, 32 FP, REG_NONE: not read */
    uint8_t lit_b;              /* operate format: bit 12 (a literal) moves Rb to REG_NONE */
    uint8_t dst_shift;          /* 21 (Ra) or 0 (Rc) */
    uint8_t dst_bank;           /* 0, 32, or REG_SINK: no result */
    uint8_t fast;               /* compare/logical: 0 cycles to a same-cycle branch or CMOV */
    uint8_t early;              /* branch/CMOV: Ra may use a fast result */
    uint8_t mem;                /* load or store */
} cop;

struct cycles_core {
    ev5_params p;
    cop *ops;
    uint32_t nops;              /* ops[nops] describes unknown words, ops[nops + 1] UNOP */
    uint32_t ldq_u;             /* UNOP is LDQ_U R31: no memory access */

    uint32_t asn;
    uint64_t seq_pc;            /* the address that continues the group's block */
    uint32_t gn;                /* instructions in the group */
    uint8_t slots;              /* pipes taken, as a slot_next state */
    uint8_t gld, gst;
    uint64_t fb_mask;           /* fetch_block - 1 */

    uint64_t fetch_ready;       /* earliest issue of the next fetched block */
    int fetch_cause;
    uint64_t iline;             /* the I-cache line being fetched from (key) */
    uint64_t ipage;             /* the ITB page of it (key) */

    uint64_t ready[REG_SINK + 1], fastr[REG_SINK + 1];
    uint8_t rcause[REG_SINK + 1];
    uint64_t mul_free, div_free;
    uint64_t bus_free;          /* when the B-cache port / memory bus takes the next line */

    ccache ic, dc, sc, bc;
    ctlb itb, dtb;
    cwbuf wb;
    uint32_t page_shift;

    uint8_t *bp;                /* 2-bit counters; 0xff: not yet set since the line's fill */
    uint32_t bp_mask;
    uint64_t ras[RAS_RING];     /* return-address stack: the last ras_n <= return_stack pushes */
    uint32_t ras_top, ras_n;

    cycles_observer obs;
    uint64_t wake;              /* obs.advance is called once the clock reaches this */
    uint32_t evmask;            /* events obs.event wants */
    bool trace;                 /* obs.advance on every group */

    uint8_t slot_next[SLOT_STATES][6];   /* state after adding a pipe class, 0xff: no room */

    cycles_stats st;
};

static int lat_of(const ev5_params *p, int cls)
{
    uint32_t v = p->lat[cls];
    return v > 255 ? 255 : (int)v;
}

static bool build_ops(cycles_core *c)
{
    c->nops = (uint32_t)alpha_optable_len;
    c->ops = calloc(c->nops + 2, sizeof *c->ops);
    if (!c->ops)
        return false;
    for (uint32_t i = 0; i < c->nops; i++) {
        const alpha_opdef *d = &alpha_optable[i];
        cop *o = &c->ops[i];
        o->lat = (uint8_t)lat_of(&c->p, d->lat);
        switch (d->pipe) {
        case PIPE_E0: o->pipe = P_E0; break;
        case PIPE_E1: o->pipe = P_E1; break;
        case PIPE_FA: o->pipe = P_FA; break;
        case PIPE_FM: o->pipe = P_FM; break;
        case PIPE_FAM: o->pipe = P_FAM; break;
        default: o->pipe = P_E01; break;
        }
        const uint8_t roles[3] = { d->ra, d->rb, d->rc };
        uint8_t *bank[3] = { &o->bank_a, &o->bank_b, &o->bank_c };
        o->dst_bank = REG_SINK;
        for (int f = 0; f < 3; f++) {
            switch (roles[f]) {
            case RR_IR: case RR_IRW: *bank[f] = 0; break;
            case RR_FR: case RR_FRW: *bank[f] = 32; break;
            default: *bank[f] = REG_NONE; break;
            }
            if (roles[f] == RR_IW || roles[f] == RR_IRW || roles[f] == RR_FW || roles[f] == RR_FRW) {
                o->dst_shift = (uint8_t)(f == 0 ? 21 : 0);
                o->dst_bank = (roles[f] == RR_FW || roles[f] == RR_FRW) ? 32 : 0;
            }
        }
        o->lit_b = d->format == AF_OPR ? REG_NONE : 0;
        o->fast = d->lat == LAT_ICMP || d->lat == LAT_ILOGIC;
        o->early = d->lat == LAT_CMOV || (d->flow == FLOW_CBRANCH && !(d->pipe == PIPE_FA));
        o->kind = K_ALU;
        if ((d->flags & (OPF_LOAD | OPF_PREFETCH)) && !(d->flags & OPF_ADDR))
            o->kind = K_LOAD;
        if (d->flags & OPF_STORE)
            o->kind = K_STORE;
        switch (d->flow) {
        case FLOW_CBRANCH: o->kind = K_CBR; break;
        case FLOW_BRANCH: o->kind = K_BR; break;
        case FLOW_CALL: o->kind = d->format == AF_BRA ? K_BSR : K_JSR; break;
        case FLOW_JUMP: o->kind = K_JMP; break;
        case FLOW_RETURN: o->kind = K_RET; break;
        case FLOW_COROUTINE: o->kind = K_COR; break;
        case FLOW_PAL: o->kind = d->func == 0x83 ? K_CALLSYS : K_PAL; break;
        default: break;
        }
        if (d->format == AF_MFC && (!strcmp(d->name, "mb") || !strcmp(d->name, "wmb")))
            o->kind = K_MB;
        switch (d->lat) {
        case LAT_IMULL: o->unit = U_MUL; o->busy = (uint8_t)(c->p.imul_busy[0] > 255 ? 255 : c->p.imul_busy[0]); break;
        case LAT_IMULQ: o->unit = U_MUL; o->busy = (uint8_t)(c->p.imul_busy[1] > 255 ? 255 : c->p.imul_busy[1]); break;
        case LAT_UMULH: o->unit = U_MUL; o->busy = (uint8_t)(c->p.imul_busy[2] > 255 ? 255 : c->p.imul_busy[2]); break;
        case LAT_FDIVS: case LAT_FSQRTS: o->unit = U_DIV; o->busy = (uint8_t)(c->p.fdiv_busy_s > 255 ? 255 : c->p.fdiv_busy_s); break;
        case LAT_FDIVT: case LAT_FSQRTT: o->unit = U_DIV; o->busy = (uint8_t)(c->p.fdiv_busy_t > 255 ? 255 : c->p.fdiv_busy_t); break;
        default: break;
        }
    }
    /* An unknown word (it traps; the machine retires it only if a handler
     * resumes after it) is modelled as a one-cycle ALU operation. */
    c->ops[c->nops] = (cop){ .kind = K_ALU, .pipe = P_E01, .lat = 1, .bank_a = REG_NONE,
                             .bank_b = REG_NONE, .bank_c = REG_NONE, .dst_bank = REG_SINK };
    c->ldq_u = c->nops;
    for (uint32_t i = 0; i < c->nops; i++)
        if (!strcmp(alpha_optable[i].name, "ldq_u"))
            c->ldq_u = i;
    /* UNOP takes its issue slot like the load it is spelled as, no more. */
    c->ops[c->nops + 1] = c->ops[c->ldq_u < c->nops ? c->ldq_u : c->nops];
    c->ops[c->nops + 1].kind = K_ALU;
    c->ops[c->nops + 1].dst_bank = REG_SINK;
    for (uint32_t i = 0; i <= c->nops + 1; i++)
        c->ops[i].mem = c->ops[i].kind == K_LOAD || c->ops[i].kind == K_STORE;
    return true;
}

static void build_slots(cycles_core *c);

cycles_core *cycles_new(const ev5_params *p)
{
    cycles_core *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->p = *p;
    c->fb_mask = p->fetch_block - 1;
    c->page_shift = clog2(p->page_size);
    c->seq_pc = ~0ULL;
    c->fetch_cause = ST_DEPENDENCY;
    c->wb.cap = p->write_buffer_entries;
    c->bp_mask = p->bp_entries - 1;
    bool ok = build_ops(c) &&
              ccache_init(&c->ic, p->icache.size, p->icache.line, p->icache.ways, false) &&
              ccache_init(&c->dc, p->dcache.size, p->dcache.line, p->dcache.ways, true) &&
              ccache_init(&c->sc, p->scache.size, p->scache.line, p->scache.ways, false) &&
              ccache_init(&c->bc, p->bcache.size, p->bcache.line, p->bcache.ways, false) &&
              ctlb_init(&c->itb, p->itb_entries) && ctlb_init(&c->dtb, p->dtb_entries) &&
              (c->bp = malloc(p->bp_entries)) != NULL;
    if (!ok) {
        cycles_free(c);
        return NULL;
    }
    memset(c->bp, 0xff, p->bp_entries);
    build_slots(c);
    c->wake = ~0ULL;
    return c;
}

void cycles_free(cycles_core *c)
{
    if (!c)
        return;
    free(c->ops);
    ccache_free(&c->ic);
    ccache_free(&c->dc);
    ccache_free(&c->sc);
    ccache_free(&c->bc);
    ctlb_free(&c->itb);
    ctlb_free(&c->dtb);
    free(c->bp);
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

const cycles_stats *cycles_get_stats(const cycles_core *c) { return &c->st; }

static inline void event(cycles_core *c, int ev, uint64_t cycle, uint64_t pc)
{
    if (c->evmask & (1u << ev))
        c->obs.event(c->obs.ctx, ev, cycle, pc);
}

/* Latency of a fill from below the first-level caches, for the line
 * holding addr: S-cache, then B-cache (if fitted), then memory.  The
 * S-cache is unified and allocates on every miss. */
static uint32_t fill_latency(cycles_core *c, uint64_t addr, uint32_t asn, uint64_t cycle, uint64_t pc)
{
    bool hit;
    uint64_t sl = addr >> c->sc.line_shift;
    ccache_access(&c->sc, sl, CKEY(asn, sl), &hit);
    if (hit)
        return c->p.scache.latency;
    c->st.scache_misses++;
    event(c, CEV_SMISS, cycle, pc);
    /* Beyond the chip, lines queue for the B-cache port or the memory bus:
     * a stream of misses is limited by bandwidth, not only latency. */
    uint32_t lat, busy;
    if (c->bc.tag) {
        uint64_t bl = addr >> c->bc.line_shift;
        ccache_access(&c->bc, bl, CKEY(asn, bl), &hit);
        if (hit) {
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

/* A new fetch block at pc: the ITB and the I-cache are consulted when the
 * page or the line changes.  after is the cycle the previous group issued. */
static void fetch(cycles_core *c, uint64_t pc, uint32_t asn, uint64_t after)
{
    uint64_t pg = CKEY(asn, pc >> c->page_shift);
    if (pg != c->ipage) {
        c->ipage = pg;
        if (!ctlb_access(&c->itb, pg)) {
            c->st.itb_misses++;
            event(c, CEV_ITBMISS, after, pc);
            uint64_t r = (c->fetch_ready > after ? c->fetch_ready : after) + c->p.itb_miss_cycles;
            c->fetch_ready = r;
            c->fetch_cause = ST_ITB;
        }
    }
    uint64_t line = pc >> c->ic.line_shift;
    uint64_t key = CKEY(asn, line);
    if (key == c->iline)
        return;
    c->iline = key;
    bool hit;
    ccache_access(&c->ic, line, key, &hit);
    if (hit)
        return;
    c->st.icache_misses++;
    /* IMISS samples land on the missing instruction itself. */
    event(c, CEV_IMISS, after, pc);
    uint64_t base = c->fetch_ready > after ? c->fetch_ready : after;
    c->fetch_ready = base + fill_latency(c, pc, asn, after, pc);
    c->fetch_cause = ST_ICACHE;
    /* The line's branch-prediction counters start afresh with the fill. */
    uint32_t slots = c->p.icache.line / 4;
    uint32_t first = (uint32_t)((pc >> 2) & c->bp_mask & ~(slots - 1));
    for (uint32_t i = 0; i < slots && first + i <= c->bp_mask; i++)
        c->bp[first + i] = 0xff;
}

/* The slotting table: for each group state and pipe class, the state with
 * that instruction added, or 0xff when no pipe is left for it.  Two integer
 * and two FP pipes; the 21164 slots a whole fetch block at once, so an
 * instruction that fits either pipe leaves the one a later instruction
 * needs: a group fits when the counts allow some assignment. */
static void build_slots(cycles_core *c)
{
    for (int st = 0; st < SLOT_STATES; st++) {
        int v = st, cnt[6];
        const int radix[6] = { 2, 2, 3, 2, 2, 3 };
        for (int k = 0; k < 6; k++) {
            cnt[k] = v % radix[k];
            v /= radix[k];
        }
        for (int pipe = 0; pipe < 6; pipe++) {
            int n[6];
            memcpy(n, cnt, sizeof n);
            n[pipe]++;
            bool ok = n[P_E0] <= 1 && n[P_E1] <= 1 && n[P_E0] + n[P_E1] + n[P_E01] <= 2 &&
                      n[P_FA] <= 1 && n[P_FM] <= 1 && n[P_FA] + n[P_FM] + n[P_FAM] <= 2;
            int code = 0;
            for (int k = 5; k >= 0; k--)
                code = code * radix[k] + n[k];
            c->slot_next[st][pipe] = ok ? (uint8_t)code : 0xff;
        }
    }
}

/* Earliest cycle register r allows, and why. */
#define NEED(arr, r) do {                                                     \
        unsigned r_ = (r);                                                    \
        uint64_t t_ = (arr)[r_];                                              \
        bool later_ = t_ > earliest;                                          \
        earliest = later_ ? t_ : earliest;                                    \
        cause = later_ ? c->rcause[r_] : cause;                               \
    } while (0)

void cycles_set_asn(cycles_core *c, uint32_t asn) { c->asn = asn; }

void cycles_step(cycles_core *c, uint64_t pc, uint32_t w, unsigned id, uint64_t ea, uint64_t next_pc)
{
    const cop *o = &c->ops[id < c->nops ? id : c->nops];
    if (id == c->ldq_u && ((w >> 21) & 31) == 31)
        o = &c->ops[c->nops + 1];
    const uint64_t t = c->st.cycles;
    const uint32_t asn = c->asn;
    uint64_t earliest = 0;
    int cause = ST_DEPENDENCY;
    bool join = c->gn > 0;

    if (pc != c->seq_pc || !(pc & c->fb_mask)) {
        join = false;
        fetch(c, pc, asn, t);
        earliest = c->fetch_ready;
        cause = c->fetch_cause;
    }
    /* A branch or CMOV tests Ra: it may use a same-cycle compare result. */
    NEED(o->early ? c->fastr : c->ready, ((w >> 21) & 31) | o->bank_a);
    NEED(c->ready, ((w >> 16) & 31) | o->bank_b | ((w >> 6) & o->lit_b));
    NEED(c->ready, (w & 31) | o->bank_c);

    if (o->unit == U_MUL && c->mul_free > earliest) {
        earliest = c->mul_free;
        cause = ST_MULTIPLIER;
    } else if (o->unit == U_DIV && c->div_free > earliest) {
        earliest = c->div_free;
        cause = ST_DIVIDER;
    }

    bool dtb_miss = false;
    if (o->mem) {
        uint64_t pg = CKEY(asn, ea >> c->page_shift);
        if (!ctlb_access(&c->dtb, pg)) {
            dtb_miss = true;
            c->st.dtb_misses++;
            event(c, CEV_DTBMISS, t, pc);
            uint64_t base = earliest > t + 1 ? earliest : t + 1;
            earliest = base + c->p.dtb_miss_cycles;
            cause = ST_DTB;
        }
        if (o->kind == K_STORE) {
            cwbuf_retire(&c->wb, earliest > t ? earliest : t);
            uint64_t wl = ea >> c->dc.line_shift;
            if (c->wb.n == c->wb.cap && cwbuf_find(&c->wb, wl) < 0 && c->wb.done[c->wb.head] > earliest) {
                earliest = c->wb.done[c->wb.head];
                cause = ST_WRITE_BUFFER;
            }
        }
    } else if (o->kind == K_MB && c->wb.n) {
        uint32_t last = WB_AT(c->wb.head + c->wb.n - 1);
        if (c->wb.done[last] > earliest) {
            earliest = c->wb.done[last];
            cause = ST_WRITE_BUFFER;
        }
    }

    uint8_t slots = c->slot_next[c->slots][o->pipe];
    join = join & (earliest <= t) & (c->gn < c->p.issue_width) & (slots != 0xff) & !dtb_miss &
           !((o->kind == K_LOAD) & c->gst) & !((o->kind == K_STORE) & c->gld);

    uint64_t issue = t;
    if (!join) {
        issue = earliest > t + 1 ? earliest : t + 1;
        if (issue > t + 1)
            c->st.stalls[cause] += issue - t - 1;
        if (c->gn)
            c->st.group_size[c->gn < 4 ? c->gn : 4]++;
        c->st.issue_cycles++;
        c->st.cycles = issue;
        c->gn = 0;
        c->gld = c->gst = 0;
        slots = c->slot_next[0][o->pipe];
        if (issue >= c->wake)
            c->obs.advance(c->obs.ctx, t, issue, pc);
    }
    c->gn++;
    c->slots = slots;
    c->st.instructions++;
    event(c, CEV_ISSUES, issue, pc);
    c->seq_pc = pc + 4;

    /* The result. */
    unsigned d = (w >> o->dst_shift) & 31;
    d = (d == 31) | (o->dst_bank == REG_SINK) ? REG_SINK : d | o->dst_bank;
    uint64_t r = issue + o->lat;
    int rc = ST_DEPENDENCY;
    if (o->kind == K_LOAD) {
        /* every load (a prefetch to R31 too) brings its line in */
        bool hit;
        uint64_t dl = ea >> c->dc.line_shift;
        uint32_t way = ccache_access(&c->dc, dl, CKEY(asn, dl), &hit);
        if (hit) {
            if (c->dc.ready[way] > r) {     /* merged with a fill under way */
                r = c->dc.ready[way];
                rc = ST_DCACHE;
            }
        } else {
            c->st.dcache_misses++;
            event(c, CEV_DMISS, issue, pc);
            r = issue + fill_latency(c, ea, asn, issue, pc);
            c->dc.ready[way] = r;
            rc = ST_DCACHE;
        }
    }
    c->ready[d] = r;
    c->fastr[d] = o->fast ? issue : r;
    c->rcause[d] = (uint8_t)rc;

    if (o->kind == K_ALU)
        goto done;
    switch (o->kind) {
    case K_LOAD:
        c->st.loads++;
        c->gld = 1;
        break;
    case K_STORE: {
        c->st.stores++;
        c->gst = 1;
        uint64_t wl = ea >> c->dc.line_shift;
        cwbuf_retire(&c->wb, issue);
        if (cwbuf_find(&c->wb, wl) >= 0) {
            c->st.write_buffer_merges++;
        } else {
            /* The write goes to the S-cache (write-back, allocating); a
             * line that is not there costs a fill first. */
            uint64_t sl = ea >> c->sc.line_shift;
            uint32_t cost = ccache_probe(&c->sc, sl, CKEY(asn, sl))
                                ? c->p.write_buffer_drain
                                : fill_latency(c, ea, asn, issue, pc);
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
            ctr = (w & 0x100000) ? 2 : 1;
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
        } else if (taken) {
            c->fetch_ready = issue + 1 + c->p.taken_bubble;
            c->fetch_cause = ST_TAKEN;
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
            int64_t hint = (int32_t)((w & 0x3fff) << 18) >> 18;
            uint64_t predicted = pc + 4 + (uint64_t)(hint * 4);
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
done:
    if (o->unit) {
        if (o->unit == U_MUL)
            c->mul_free = issue + o->busy;
        else
            c->div_free = issue + o->busy;
    }
}
