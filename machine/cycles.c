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

/* What the model needs of an instruction, from its alpha_optable row. */
enum { K_ALU, K_LOAD, K_STORE, K_CBR, K_BR, K_BSR, K_JMP, K_JSR, K_RET, K_COR, K_CALLSYS, K_PAL, K_MB };
enum { U_NONE, U_MUL, U_DIV };
enum { P_E0, P_E1, P_E01, P_FA, P_FM, P_FAM };

typedef struct cop {
    uint8_t kind, unit, pipe;
    uint8_t lat;
    uint8_t busy;               /* unit occupancy */
    uint8_t src_a, src_b, src_c; /* 0: not read, else register bank offset + 1 (1: int, 33: FP) */
    uint8_t dst_field;          /* 0 none, 1 ra, 3 rc */
    uint8_t dst_bank;           /* 0 int, 32 FP */
    uint8_t fast;               /* compare/logical: 0 cycles to a same-cycle branch or CMOV */
    uint8_t early;              /* branch/CMOV: may use a fast result */
    uint8_t opr;                /* operate format: bit 12 selects a literal */
} cop;

struct cycles_core {
    ev5_params p;
    cop *ops;
    uint32_t nops;              /* ops[nops] describes unknown words */

    uint64_t now;               /* the current group's issue cycle */
    uint64_t seq_pc;            /* the address that continues the group's block */
    uint32_t gn;                /* instructions in the group */
    uint8_t e0, e1, e01, fa, fm, fam, gld, gst;
    uint64_t fb_mask;           /* fetch_block - 1 */

    uint64_t fetch_ready;       /* earliest issue of the next fetched block */
    int fetch_cause;
    uint64_t iline;             /* the I-cache line being fetched from (key) */
    uint64_t ipage;             /* the ITB page of it (key) */

    uint64_t ready[64], fastr[64];
    uint8_t rcause[64];
    uint64_t mul_free, div_free;

    ccache ic, dc, sc, bc;
    ctlb itb, dtb;
    cwbuf wb;
    uint32_t page_shift;

    uint8_t *bp;                /* 2-bit counters; 0xff: not yet set since the line's fill */
    uint32_t bp_mask;
    uint64_t *ras;              /* return-address stack (circular) */
    uint32_t ras_top, ras_n;

    cycles_observer obs;
    uint64_t wake;              /* obs.advance is called once now reaches this */
    uint32_t evmask;            /* events obs.event wants */
    bool trace;                 /* obs.advance on every group */

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
    c->ops = calloc(c->nops + 1, sizeof *c->ops);
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
        uint8_t *src[3] = { &o->src_a, &o->src_b, &o->src_c };
        for (int f = 0; f < 3; f++) {
            switch (roles[f]) {
            case RR_IR: case RR_IRW: *src[f] = 1; break;
            case RR_FR: case RR_FRW: *src[f] = 33; break;
            default: break;
            }
            if (roles[f] == RR_IW || roles[f] == RR_IRW || roles[f] == RR_FW || roles[f] == RR_FRW) {
                o->dst_field = (uint8_t)(f == 0 ? 1 : 3);
                o->dst_bank = (roles[f] == RR_FW || roles[f] == RR_FRW) ? 32 : 0;
            }
        }
        o->opr = d->format == AF_OPR;
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
    c->ops[c->nops] = (cop){ .kind = K_ALU, .pipe = P_E01, .lat = 1 };
    return true;
}

static uint32_t log2u(uint32_t v)
{
    uint32_t s = 0;
    while ((1u << s) < v)
        s++;
    return s;
}

cycles_core *cycles_new(const ev5_params *p)
{
    cycles_core *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->p = *p;
    c->fb_mask = p->fetch_block - 1;
    c->page_shift = log2u(p->page_size);
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
              (c->bp = malloc(p->bp_entries)) != NULL &&
              (c->ras = calloc(p->return_stack ? p->return_stack : 1, sizeof *c->ras)) != NULL;
    if (!ok) {
        cycles_free(c);
        return NULL;
    }
    memset(c->bp, 0xff, p->bp_entries);
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
    free(c->ras);
    free(c);
}

void cycles_set_observer(cycles_core *c, const cycles_observer *o)
{
    c->obs = *o;
    c->wake = o->advance && c->trace ? 0 : o->advance ? 0 : ~0ULL;
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

uint64_t cycles_now(const cycles_core *c) { return c->now; }

const cycles_stats *cycles_get_stats(const cycles_core *c) { return &c->st; }

void cycles_break(cycles_core *c)
{
    c->seq_pc = ~0ULL;
}

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
    if (c->bc.tag) {
        uint64_t bl = addr >> c->bc.line_shift;
        ccache_access(&c->bc, bl, CKEY(asn, bl), &hit);
        if (hit)
            return c->p.bcache.latency;
        c->st.bcache_misses++;
        return c->p.bcache.latency + c->p.mem_latency;
    }
    return c->p.scache.latency + c->p.mem_latency;
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

static inline bool slot_ok(const cycles_core *c, int pipe)
{
    uint32_t e0 = c->e0, e1 = c->e1, e01 = c->e01, fa = c->fa, fm = c->fm, fam = c->fam;
    switch (pipe) {
    case P_E0: e0++; break;
    case P_E1: e1++; break;
    case P_E01: e01++; break;
    case P_FA: fa++; break;
    case P_FM: fm++; break;
    default: fam++; break;
    }
    /* Two integer and two FP pipes; the 21164 slots a whole fetch block at
     * once, so an instruction that fits either pipe leaves the one a later
     * instruction needs. */
    return e0 <= 1 && e1 <= 1 && e0 + e1 + e01 <= 2 && fa <= 1 && fm <= 1 && fa + fm + fam <= 2;
}

static inline void slot_take(cycles_core *c, int pipe)
{
    switch (pipe) {
    case P_E0: c->e0++; break;
    case P_E1: c->e1++; break;
    case P_E01: c->e01++; break;
    case P_FA: c->fa++; break;
    case P_FM: c->fm++; break;
    default: c->fam++; break;
    }
}

#define NEED(reg, early) do {                                                 \
        unsigned r_ = (reg);                                                  \
        uint64_t t_ = (early) ? c->fastr[r_] : c->ready[r_];                  \
        if (t_ > earliest) {                                                  \
            earliest = t_;                                                    \
            cause = c->rcause[r_];                                            \
        }                                                                     \
    } while (0)

void cycles_step(cycles_core *c, const cycles_insn *in)
{
    const cop *o = &c->ops[in->id < c->nops ? in->id : c->nops];
    const uint64_t pc = in->pc, t = c->now;
    const uint32_t w = in->word;
    uint64_t earliest = 0;
    int cause = ST_DEPENDENCY;
    bool join = c->gn > 0;

    if (pc != c->seq_pc || !(pc & c->fb_mask)) {
        join = false;
        fetch(c, pc, in->asn, t);
        earliest = c->fetch_ready;
        cause = c->fetch_cause;
    }
    if (o->src_a)       /* a branch or CMOV tests Ra: it may use a fast result */
        NEED(((w >> 21) & 31) + o->src_a - 1, o->early);
    if (o->src_b && !(o->opr && (w & 0x1000)))
        NEED(((w >> 16) & 31) + o->src_b - 1, 0);
    if (o->src_c)
        NEED((w & 31) + o->src_c - 1, 0);

    if (o->unit == U_MUL && c->mul_free > earliest) {
        earliest = c->mul_free;
        cause = ST_MULTIPLIER;
    } else if (o->unit == U_DIV && c->div_free > earliest) {
        earliest = c->div_free;
        cause = ST_DIVIDER;
    }

    bool dtb_miss = false;
    if (o->kind == K_LOAD || o->kind == K_STORE) {
        uint64_t pg = CKEY(in->asn, in->ea >> c->page_shift);
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
            uint64_t wl = in->ea >> c->dc.line_shift;
            if (c->wb.n == c->wb.cap && cwbuf_find(&c->wb, wl) < 0 && c->wb.done[c->wb.head] > earliest) {
                earliest = c->wb.done[c->wb.head];
                cause = ST_WRITE_BUFFER;
            }
        }
    } else if (o->kind == K_MB && c->wb.n) {
        uint32_t last = (c->wb.head + c->wb.n - 1) % c->wb.cap;
        if (c->wb.done[last] > earliest) {
            earliest = c->wb.done[last];
            cause = ST_WRITE_BUFFER;
        }
    }

    if (join && (earliest > t || c->gn >= c->p.issue_width || !slot_ok(c, o->pipe) || dtb_miss ||
                 (o->kind == K_LOAD && c->gst) || (o->kind == K_STORE && c->gld)))
        join = false;

    uint64_t issue = t;
    if (!join) {
        issue = earliest > t + 1 ? earliest : t + 1;
        if (issue > t + 1)
            c->st.stalls[cause] += issue - t - 1;
        if (c->gn)
            c->st.group_size[c->gn < 4 ? c->gn : 4]++;
        c->st.issue_cycles++;
        c->now = issue;
        c->gn = 0;
        c->e0 = c->e1 = c->e01 = c->fa = c->fm = c->fam = c->gld = c->gst = 0;
        if (issue >= c->wake)
            c->obs.advance(c->obs.ctx, t, issue, pc);
    }
    c->gn++;
    slot_take(c, o->pipe);
    c->st.instructions++;
    c->seq_pc = pc + 4;

    /* The result. */
    if (o->dst_field) {
        unsigned d = (o->dst_field == 1 ? (w >> 21) & 31 : w & 31);
        if (d != 31) {
            d += o->dst_bank;
            uint64_t r = issue + o->lat;
            int rc = ST_DEPENDENCY;
            if (o->kind == K_LOAD) {
                bool hit;
                uint64_t dl = in->ea >> c->dc.line_shift;
                uint32_t way = ccache_access(&c->dc, dl, CKEY(in->asn, dl), &hit);
                if (hit) {
                    if (c->dc.ready[way] > r) {     /* merged with a fill under way */
                        r = c->dc.ready[way];
                        rc = ST_DCACHE;
                    }
                } else {
                    c->st.dcache_misses++;
                    event(c, CEV_DMISS, issue, pc);
                    r = issue + fill_latency(c, in->ea, in->asn, issue, pc);
                    c->dc.ready[way] = r;
                    rc = ST_DCACHE;
                }
            }
            c->ready[d] = r;
            c->fastr[d] = o->fast ? issue : r;
            c->rcause[d] = (uint8_t)rc;
        }
    }

    switch (o->kind) {
    case K_LOAD:
        c->st.loads++;
        c->gld = 1;
        if (!o->dst_field || ((o->dst_field == 1 ? (w >> 21) & 31 : w & 31) == 31)) {
            /* a prefetch (load to r31/f31) still brings the line in */
            bool hit;
            uint64_t dl = in->ea >> c->dc.line_shift;
            uint32_t way = ccache_access(&c->dc, dl, CKEY(in->asn, dl), &hit);
            if (!hit) {
                c->st.dcache_misses++;
                event(c, CEV_DMISS, issue, pc);
                c->dc.ready[way] = issue + fill_latency(c, in->ea, in->asn, issue, pc);
            }
        }
        break;
    case K_STORE: {
        c->st.stores++;
        c->gst = 1;
        uint64_t wl = in->ea >> c->dc.line_shift;
        cwbuf_retire(&c->wb, issue);
        if (cwbuf_find(&c->wb, wl) >= 0) {
            c->st.write_buffer_merges++;
        } else {
            /* The write goes to the S-cache (write-back, allocating); a
             * line that is not there costs a fill first. */
            uint64_t sl = in->ea >> c->sc.line_shift;
            uint32_t cost = ccache_probe(&c->sc, sl, CKEY(in->asn, sl))
                                ? c->p.write_buffer_drain
                                : fill_latency(c, in->ea, in->asn, issue, pc);
            uint64_t start = issue;
            if (c->wb.n) {
                uint64_t prev = c->wb.done[(c->wb.head + c->wb.n - 1) % c->wb.cap];
                if (prev > start)
                    start = prev;
            }
            uint32_t slot = (c->wb.head + c->wb.n) % c->wb.cap;
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
        bool taken = in->next_pc != pc + 4;
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
            c->ras_top = (c->ras_top + 1) % c->p.return_stack;
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
            right = c->ras_n && c->ras[c->ras_top] == in->next_pc;
            if (c->ras_n) {
                c->ras_top = (c->ras_top + c->p.return_stack - 1) % c->p.return_stack;
                c->ras_n--;
            }
            if (!right && o->kind == K_RET)
                c->st.return_mispredicts++;
        } else {
            /* Only the low 16 bits of the hinted target mean anything. */
            int64_t hint = (int32_t)((w & 0x3fff) << 18) >> 18;
            uint64_t predicted = pc + 4 + (uint64_t)(hint * 4);
            right = ((predicted ^ in->next_pc) & 0xffff) == 0;
        }
        if ((o->kind == K_JSR || o->kind == K_COR) && c->p.return_stack) {
            c->ras_top = (c->ras_top + 1) % c->p.return_stack;
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
    if (o->unit == U_MUL)
        c->mul_free = issue + o->busy;
    else if (o->unit == U_DIV)
        c->div_free = issue + o->busy;
    c->st.cycles = c->now;
}
