/*
 * machine/cycles_sched.c: static block schedules, the cycle model's fast
 * path (see cycles.h and docs/machine.md, "Speed").
 *
 * Inside a block, where each instruction issues relative to the first
 * depends only on the instructions themselves, unless something from
 * outside holds one up: a register value from before the block arriving
 * late, a busy multiplier or divider, an I-cache or TLB miss, a D-cache
 * miss or a load meeting a line still being filled, a full write buffer,
 * a performance-counter interrupt due inside the block.  So the schedule
 * is worked out once per block by alpha/'s static scheduler (alpha/sched.h,
 * on the issue rules the model reads too), together with a list of what
 * to check: for each register read before it is written, the latest
 * cycle it may become ready without changing the schedule; which
 * instructions load or store.  I-cache and TLB misses
 * need no check here: the model's front end (cycles_front.c) has listed
 * them already, and a schedule stops at the first.
 *
 * Once an instruction, modelled as usual, has started an issue group, the
 * schedule of the block's rest from there (built the first time it is
 * wanted, kept per starting instruction) takes over, as far as its checks
 * allow.  Up to there the instructions cost a few tests per load and
 * store instead of the model's work per instruction; from the first
 * instruction a check fails for, the model goes on with exactly the state
 * it would have had, until an instruction starts a group again.
 * What the schedule cannot know (branch prediction, the write buffer's
 * contents, the busy units' next free cycle) is still done by the model's
 * own code (cycles_after), at the cycles the schedule gives.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "machine/cycles_int.h"

/* What an instruction needs checked or done at run time. */
enum { EV_LOAD = 1, EV_STORE = 2, EV_AFTER = 4 };

#define NEWGROUP 0x80           /* info[k]: k started an issue group (low bits: the stall's cause) */
#define SLOTS 128               /* times[] slots a block can read before writing: 64 registers, early and late */
#define MAX_SPAN 60000          /* offsets are 16-bit */

/* A register read before the block writes it: its ready time (times[idx])
 * must be at most issue0 + bound, or the schedule is good only up to
 * instruction k, the first to read it. */
typedef struct schk {
    uint16_t idx, bound, k;
} schk;

/* Instruction k's run-time work (EV_*): it issues at issue0 + off, the
 * one before it at issue0 + prev; lat is its result latency. */
typedef struct sev {
    uint8_t k, what, lat, pad;
    uint16_t off, prev;
} sev;

/* A register's last value from the block, ready at issue0 + rel (early:
 * for a same-cycle branch or CMOV). */
typedef struct sout {
    uint16_t reg, rel, early;
} sout;

/* A count the schedule adds to: cycles_stats as an array of words. */
typedef struct sinc {
    uint16_t word, amount;
} sinc;
#define STAT_WORD(field) ((uint16_t)(offsetof(cycles_stats, field) / sizeof(uint64_t)))
_Static_assert(sizeof(cycles_stats) % sizeof(uint64_t) == 0, "cycles_stats is counters only");

/* Followed by chk[nchk], ev[nev], out[nout], inc[ninc], then per
 * instruction off[n] (issue offset), grp[n] (issue-group state after it)
 * and info[n]: what the model needs when it takes over mid-block. */
struct cycles_sched {
    uint8_t group;              /* the issue-group state after the last instruction */
    uint8_t ctrl, lat0;         /* ctrl: the last instruction transfers control */
    uint16_t d0;                /* instruction 0's load target, checked (REG_SINK: none) */
    uint16_t span;              /* offset of the last instruction */
    uint16_t nchk, nev, nout, ninc;
    uint16_t mul_k, mul_bound;  /* first multiply relying on the multiplier's state at entry (0: none) */
    uint16_t div_k, div_bound;
};

/* A start that has no schedule (a block too short, or not one to
 * schedule, or no memory for it). */
static cycles_sched none;

size_t cycles_sched_size(uint32_t n) { return n * sizeof(cycles_sched *); }

void cycles_sched_free(cycles_sched **ts, uint32_t n)
{
    for (uint32_t i = 0; ts && i < n; i++)
        if (ts[i] != &none)
            free(ts[i]);
}

/* The stall cause the model charges for a scheduler's reason. */
static int cause_of(uint8_t reason)
{
    return reason == ASR_MULTIPLIER ? ST_MULTIPLIER : reason == ASR_DIVIDER ? ST_DIVIDER : ST_DEPENDENCY;
}

/* The n instructions at pc as alpha/'s scheduler sees them: the same rows
 * and registers (the model's early copies and R31 read as ready). */
static void to_ops(const cycles_insn *ins, uint32_t n, alpha_sched_op *ops)
{
    for (uint32_t k = 0; k < n; k++) {
        const cycles_insn *in = &ins[k];
        const unsigned src[3] = { in->ra & (EARLY - 1), in->rb, in->rc };
        ops[k].row = in->op;
        for (int f = 0; f < 3; f++)
            ops[k].src[f] = (uint8_t)(src[f] >= 64 || (src[f] & 31) == 31 ? ALPHA_SCHED_NOREG : src[f]);
        ops[k].dst = (uint8_t)(in->dst < 64 ? in->dst : ALPHA_SCHED_NOREG);
    }
}

/* Work out the schedule of the n instructions at pc with alpha/'s
 * scheduler (the model's own rules: anything from before taken as ready
 * in time, times relative to the first instruction's issue), and what
 * must be checked at run time for it to hold; &none if they are not ones
 * to schedule (a barrier or a control transfer before the end, too long). */
static cycles_sched *build(const cycles_core *c, const cycles_insn *ins, uint64_t pc, uint32_t n)
{
    if (n < 2 || n > 256)
        return &none;
    for (uint32_t k = 0; k < n; k++) {
        const unsigned fl = c->ops[ins[k].op].flags;
        if ((fl & F_MB) || ((fl & F_CTRL) && (k == 0 || k + 1 < n)))
            return &none;
    }
    alpha_sched_op ops[256];
    alpha_sched_slot sl[256];
    to_ops(ins, n, ops);
    alpha_sched_ops(c->sched, ops, n, pc, sl);
    if (sl[n - 1].issue > MAX_SPAN)
        return &none;

    cycles_sched h = { 0 }, *s = &h;      /* the header, copied out at the end */
    int16_t lastw[64];                      /* last instruction writing each register */
    int16_t slot[SLOTS];                    /* chk entry of each times[] slot read before written */
    schk chk[SLOTS];
    sev ev[256];
    uint16_t off[256];
    uint8_t grp[256], info[256];
    uint32_t stall[ST_COUNT] = { 0 };
    uint16_t groups[5] = { 0 };
    uint32_t nchk = 0, nev = 0;
    memset(lastw, -1, sizeof lastw);
    memset(slot, -1, sizeof slot);

    const cop *o = &c->ops[ins[0].op];
    s->d0 = (o->flags & F_LOAD) ? ins[0].dst : REG_SINK;
    s->lat0 = o->lat;
    off[0] = 0;
    grp[0] = sl[0].group;
    info[0] = NEWGROUP;

    for (uint32_t k = 1; k < n; k++) {
        const cycles_insn *in = &ins[k];
        const alpha_sched_slot *x = &sl[k];
        o = &c->ops[in->op];
        const unsigned fl = o->flags;
        const uint32_t issue = x->issue, t = sl[k - 1].issue;
        if (x->m) {
            stall[cause_of(x->reason)] += x->stall;
            groups[c->gsize[sl[k - 1].group]]++;
            info[k] = (uint8_t)(NEWGROUP | cause_of(x->reason));
        } else {
            info[k] = 0;
        }

        /* A value from outside may arrive as late as the instruction
         * issues; if it stalls, one cycle less, or it could become the
         * stall's cause (a register read first wins a tie). */
        const uint32_t bound = x->stall ? issue - 1 : issue;
        const unsigned rd[3] = { in->ra, in->rb, in->rc };
        for (int f = 0; f < 3; f++) {
            if (!(x->livein & (1u << f)))
                continue;
            unsigned r = rd[f], si = r < EARLY ? r : 64 + (r - EARLY);
            if (slot[si] < 0) {
                slot[si] = (int16_t)nchk;
                chk[nchk++] = (schk){ .idx = (uint16_t)r, .bound = (uint16_t)bound, .k = (uint16_t)k };
            } else if (chk[slot[si]].bound > bound) {
                chk[slot[si]].bound = (uint16_t)bound;
            }
        }
        /* (a busy unit is tested after the registers: a tie changes nothing) */
        if (x->unit_livein && o->unit == U_MUL) {
            s->mul_k = (uint16_t)k;
            s->mul_bound = (uint16_t)issue;
        } else if (x->unit_livein) {
            s->div_k = (uint16_t)k;
            s->div_bound = (uint16_t)issue;
        }

        unsigned what = 0;
        if (fl & F_LOAD)
            what |= EV_LOAD;
        if (fl & F_STORE)
            what |= EV_STORE;
        if (fl & (F_STORE | F_CTRL | F_UNIT))
            what |= EV_AFTER;
        if (what)
            ev[nev++] = (sev){ .k = (uint8_t)k, .what = (uint8_t)what, .lat = o->lat,
                               .off = (uint16_t)issue, .prev = (uint16_t)t };
        if (in->dst < 64)
            lastw[in->dst] = (int16_t)k;
        off[k] = (uint16_t)issue;
        grp[k] = x->group;
    }

    /* Lay it out after the header, in the order run() reads it. */
    uint32_t nout = 0, ninc = 0;
    for (unsigned reg = 0; reg < 64; reg++)
        nout += lastw[reg] > 0;
    for (int k = 0; k < ST_COUNT; k++)
        ninc += stall[k] != 0;
    for (int g = 1; g <= 4; g++)
        ninc += groups[g] != 0;
    cycles_sched *m = malloc(sizeof *m + nchk * sizeof(schk) + nev * sizeof(sev) + nout * sizeof(sout) +
                             ninc * sizeof(sinc) + 4 * (size_t)n);
    if (!m)
        return &none;
    char *p = (char *)(m + 1);
    memcpy(p, chk, nchk * sizeof *chk);
    p += nchk * sizeof *chk;
    memcpy(p, ev, nev * sizeof *ev);
    p += nev * sizeof *ev;
    for (unsigned reg = 0; reg < 64; reg++)
        if (lastw[reg] > 0) {
            const cop *w = &c->ops[ins[lastw[reg]].op];
            uint32_t is = off[lastw[reg]];
            sout x = { .reg = (uint16_t)reg, .rel = (uint16_t)(is + w->lat),
                       .early = (uint16_t)(w->flags & F_FAST ? is : is + w->lat) };
            memcpy(p, &x, sizeof x);
            p += sizeof x;
        }
    for (int k = 0; k < ST_COUNT; k++)
        if (stall[k]) {
            sinc x = { .word = (uint16_t)(STAT_WORD(stalls) + k), .amount = (uint16_t)stall[k] };
            memcpy(p, &x, sizeof x);
            p += sizeof x;
        }
    for (int g = 1; g <= 4; g++)
        if (groups[g]) {
            sinc x = { .word = (uint16_t)(STAT_WORD(group_size) + g), .amount = groups[g] };
            memcpy(p, &x, sizeof x);
            p += sizeof x;
        }
    memcpy(p, off, n * sizeof *off);
    p += n * sizeof *off;
    memcpy(p, grp, n);
    memcpy(p + n, info, n);

    s->group = sl[n - 1].group;
    s->ctrl = (c->ops[ins[n - 1].op].flags & F_CTRL) != 0;
    s->span = off[n - 1];
    s->nchk = (uint16_t)nchk;
    s->nev = (uint16_t)nev;
    s->nout = (uint16_t)nout;
    s->ninc = (uint16_t)ninc;
    *m = *s;
    return m;
}

/* The n instructions at pc (a block's rest) by schedule s, the first
 * having issued in issue0; returns how many were done. */
static uint32_t run(cycles_core *c, const cycles_sched *s, const cycles_insn *ins, uint64_t pc, uint32_t n,
                    const uint64_t *ea, uint64_t next_pc, uint64_t issue0, uint32_t nextf)
{
    /* Whole-block conditions: the fetch stream is not behind (it cannot
     * be, after a first instruction that started a group; checked all the
     * same), no counter interrupt is due and no event is counted per
     * instruction, instruction 0's load (if any) hit. */
    const uint64_t end = issue0 + s->span;
    if (c->fetch_ready > issue0 || end >= c->wake || (c->evmask & (1u << CEV_ISSUES)) ||
        (s->d0 != REG_SINK && c->times[s->d0] != issue0 + s->lat0))
        return 1;

    /* the first instruction the schedule may be wrong for: at the latest,
     * the next one the front end found a miss at */
    uint32_t stop = nextf < n ? nextf : n;
    const schk *chk = (const schk *)(s + 1);
    for (uint32_t i = 0; i < s->nchk && chk[i].k < stop; i++)
        if (c->times[chk[i].idx] > issue0 + chk[i].bound) {
            stop = chk[i].k;    /* (in order of first reader) */
            break;
        }
    if (s->mul_k && s->mul_k < stop && c->mul_free > issue0 + s->mul_bound)
        stop = s->mul_k;
    if (s->div_k && s->div_k < stop && c->div_free > issue0 + s->div_bound)
        stop = s->div_k;

    const sev *ev = (const sev *)(chk + s->nchk);
    for (uint32_t i = 0; i < s->nev && ev[i].k < stop; i++) {
        const sev *e = &ev[i];
        const uint32_t k = e->k;
        const uint64_t a = pc + 4 * k, issue = issue0 + e->off;
        if (e->what & EV_STORE) {
            /* hold() would retire up to a cycle no earlier than this one;
             * a buffer still full without this store's line might stall */
            cwbuf_retire(&c->wb, issue0 + e->prev);
            if (c->wb.n == c->wb.cap && cwbuf_find(&c->wb, ea[k] >> c->dc.line_shift) < 0) {
                stop = k;
                break;
            }
        }
        if (e->what & EV_LOAD) {
            if (!dline_recent(c, ea[k], issue + e->lat)) {
                stop = k;
                break;
            }
            c->st.loads++;
        }
        if (e->what & EV_AFTER) {
            c->st.cycles = issue;
            if (k + 1 == n)
                c->seq_pc = a + 4;
            cycles_after(c, &c->ops[ins[k].op], &ins[k], a, ea[k], k + 1 == n ? next_pc : a + 4, issue);
            /* an event may have brought a counter interrupt into the block */
            if (c->wake <= end && k + 1 < n) {
                stop = k + 1;
                break;
            }
        }
    }

    const sout *out = (const sout *)(ev + s->nev);
    const sinc *inc = (const sinc *)(out + s->nout);
    if (likely(stop == n)) {
        for (uint32_t i = 0; i < s->nout; i++)
            put_result(c, out[i].reg, issue0 + out[i].rel, issue0 + out[i].early, ST_DEPENDENCY);
        uint64_t *st = (uint64_t *)&c->st;
        for (uint32_t i = 0; i < s->ninc; i++)
            st[inc[i].word] += inc[i].amount;
        c->st.cycles = end;
        c->group = s->group;
        if (!s->ctrl)
            c->seq_pc = pc + 4 * n;
        return n;
    }

    /* The model takes over at stop: leave what it would have left. */
    const uint16_t *off = (const uint16_t *)(inc + s->ninc);
    const uint8_t *grp = (const uint8_t *)(off + n), *info = grp + n;
    for (uint32_t j = 1; j < stop; j++) {
        if (info[j] & NEWGROUP) {
            c->st.stalls[info[j] & ~NEWGROUP] += (uint64_t)(off[j] - off[j - 1] - 1);
            c->st.group_size[c->gsize[grp[j - 1]]]++;
        }
        const cycles_insn *in = &ins[j];
        const cop *o = &c->ops[in->op];
        uint64_t is = issue0 + off[j], r = is + o->lat;
        put_result(c, in->dst, r, o->flags & F_FAST ? is : r, ST_DEPENDENCY);
    }
    c->st.cycles = issue0 + off[stop - 1];
    c->group = grp[stop - 1];
    c->seq_pc = pc + 4 * stop;
    return stop;
}

uint32_t sched_run(cycles_core *c, cycles_sched **ts, uint32_t j, const cycles_insn *ins, uint64_t pc, uint32_t n,
                   const uint64_t *ea, uint64_t next_pc, uint64_t issue, uint32_t nextf)
{
    cycles_sched *s = ts[j];
    if (unlikely(!s))
        s = ts[j] = build(c, ins + j, pc + 4 * j, n - j);
    if (s == &none)
        return j + 1;
    return j + run(c, s, ins + j, pc + 4 * j, n - j, ea + j, next_pc, issue, nextf - j);
}
