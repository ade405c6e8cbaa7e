/*
 * estimator/culprits.c: dynamic stalls and their possible causes (seed 000,
 * §6.2), per instruction.
 *
 * An instruction's candidate causes follow from where it is and what it
 * reads, as DCPI's rules have it:
 *
 * - icache: it starts an I-cache line, or its block is entered other than
 *   by falling into it (a branch, call or return fetches a new line);
 *   itb: the same, when it starts a page or its block is entered that way;
 * - dcache, dtb: it reads a register a load wrote, earlier in its block or
 *   at the end of a block that falls or branches into it;
 * - dtb: it is a load or store (a DTB miss holds the access itself, before
 *   any user of its value);
 * - write_buffer: it is a store or a memory barrier;
 * - branch_mispredict: it starts a block that follows a conditional branch;
 * - jump_mispredict: it starts a procedure entered by a call, a return
 *   point, or a jump-table target;
 * - taken_branch: it starts a block reached by a taken branch, or is in
 *   the same aligned fetch block as that start;
 * - syscall: it follows a CALL_PAL;
 * - multiplier, divider: it is the block's first user of the unit, which
 *   the schedule takes to be free at block start (alpha/sched.h): a
 *   multiply or divide still running from before finds it busy.
 *
 * Then the event samples, where the profile has them, rule causes out: a
 * cause whose events were too few to pay for the stall did not cause it
 * (est_culprits_bound).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/ev5.h"
#include "alpha/insn.h"
#include "alpha/sched.h"
#include "estimator/culprits.h"
#include "profdb/truth.h"

const char *const est_dyn_names[EST_DYN_COUNT] = {
    "icache", "itb", "dcache", "dtb", "write_buffer", "branch_mispredict", "jump_mispredict",
    "taken_branch", "syscall", "multiplier", "divider",
};
const char *const est_event_names[EST_EV_COUNT] = {
    "imiss", "itbmiss", "dmiss", "dtbmiss", "branchmp", "jsrmp",
};

#define BIT(c) ((uint16_t)(1u << (c)))
enum { LINE = 32, PAGE = 8192 };

const char *est_causes_text(uint16_t causes, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (int c = 0; c < EST_DYN_COUNT; c++)
        if (causes & BIT(c) && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", est_dyn_names[c]);
    return buf;
}

static alpha_insn insn_at(const cfg_program *p, uint64_t a)
{
    uint32_t w = 0;
    alpha_insn in;
    cfg_word(p, a, &w);
    alpha_decode(w, &in);
    return in;
}

/* The load among [lo, hi) that last wrote one of regs, or 0; *cleared gets
 * the registers some instruction there wrote. */
static uint64_t last_load(const cfg_program *p, uint64_t lo, uint64_t hi, alpha_regset regs,
                          alpha_regset *cleared)
{
    *cleared = 0;
    for (uint64_t a = hi; a > lo && regs;) {
        a -= 4;
        alpha_insn in = insn_at(p, a);
        alpha_regset uses, defs;
        alpha_regs(&in, &uses, &defs);
        if (defs & regs) {
            if (in.op && in.op->flags & OPF_LOAD && !(in.op->flags & OPF_ADDR))
                return a;
            *cleared |= defs & regs;
            regs &= ~defs;
        }
    }
    return 0;
}

/* How the block is entered: bits of the causes its first instruction may
 * suffer from the way control arrives. */
static uint16_t entry_causes(const cfg_program *p, const cfg_proc *f, size_t b)
{
    const cfg_block *bl = &f->blocks[b];
    uint16_t c = 0;
    if (bl->flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY))
        c |= BIT(EST_DYN_JUMP_MISPREDICT) | BIT(EST_DYN_ICACHE) | BIT(EST_DYN_ITB);
    for (uint32_t k = 0; k < bl->nin; k++) {
        const cfg_edge *e = &f->edges[f->in_edges[bl->first_in + k]];
        if (e->kind == CFG_EDGE_ENTRY || e->from == CFG_ENTRY)
            continue;
        const cfg_block *from = &f->blocks[e->from];
        alpha_insn last = insn_at(p, from->end - 4);
        alpha_flow fl = alpha_flow_of(&last);
        if (fl == FLOW_CBRANCH)
            c |= BIT(EST_DYN_BRANCH_MISPREDICT);
        if (e->kind == CFG_EDGE_TAKEN)
            c |= BIT(EST_DYN_TAKEN_BRANCH) | BIT(EST_DYN_ICACHE) | BIT(EST_DYN_ITB);
        if (e->kind == CFG_EDGE_TABLE)
            c |= BIT(EST_DYN_JUMP_MISPREDICT) | BIT(EST_DYN_ICACHE) | BIT(EST_DYN_ITB);
        if (fl == FLOW_CALL || fl == FLOW_COROUTINE)   /* a return point */
            c |= BIT(EST_DYN_JUMP_MISPREDICT) | BIT(EST_DYN_ICACHE) | BIT(EST_DYN_ITB);
        if (fl == FLOW_PAL)
            c |= BIT(EST_DYN_SYSCALL);
    }
    return c;
}

/* The load a register read at a of block b waits for, looking back into
 * the block and then into the blocks that lead into it. */
static uint64_t load_read(const cfg_program *p, const cfg_proc *f, size_t b, uint64_t a,
                          alpha_regset regs)
{
    const cfg_block *bl = &f->blocks[b];
    alpha_regset cleared;
    uint64_t l = last_load(p, bl->start, a, regs, &cleared);
    if (l)
        return l;
    regs &= ~cleared;
    for (uint32_t k = 0; regs && k < bl->nin; k++) {
        const cfg_edge *e = &f->edges[f->in_edges[bl->first_in + k]];
        if (e->from == CFG_ENTRY)
            continue;
        const cfg_block *from = &f->blocks[e->from];
        alpha_regset c2;
        if ((l = last_load(p, from->start, from->end, regs, &c2)))
            return l;
    }
    return 0;
}

double est_stall_noise(double s, double period)
{
    return 2 * sqrt(s > 1 ? s : 1) * period;
}

static void block_culprits(const cfg_program *p, const cfg_proc *f, size_t b, double F,
                           const est_block_sched *bs, double period, const ev5_params *ev5,
                           est_culprit *out)
{
    const cfg_block *bl = &f->blocks[b];
    uint16_t entry = entry_causes(p, f, b);
    for (uint32_t i = 0; i < bs->n; i++) {
        uint64_t a = bl->start + 4ull * i;
        est_culprit *c = &out[i];
        double s = bs->samples ? bs->samples[i] : 0;
        c->cycles = s * period;
        double excess = c->cycles - (double)bs->slots[i].m * F;
        c->stall = excess > est_stall_noise(s, period) ? excess : 0;
        alpha_insn in = insn_at(p, a);
        alpha_regset uses, defs;
        alpha_regs(&in, &uses, &defs);
        if (i == 0)
            c->causes |= entry;
        else if ((a & ~(uint64_t)15) == (bl->start & ~(uint64_t)15))
            /* the rest of the target's fetch block waits out the same bubble */
            c->causes |= entry & BIT(EST_DYN_TAKEN_BRANCH);
        if (a % LINE == 0)
            c->causes |= BIT(EST_DYN_ICACHE);
        if (a % PAGE == 0)
            c->causes |= BIT(EST_DYN_ITB);
        if (in.op && (in.op->flags & (OPF_STORE | OPF_BARRIER)))
            c->causes |= BIT(EST_DYN_WRITE_BUFFER);
        if (in.op && (in.op->flags & (OPF_LOAD | OPF_STORE)) && !alpha_is_unop(&in) &&
            !(in.op->flags & OPF_PREFETCH))
            c->causes |= BIT(EST_DYN_DTB);
        if (i > 0) {
            alpha_insn prev = insn_at(p, a - 4);
            if (alpha_flow_of(&prev) == FLOW_PAL)
                c->causes |= BIT(EST_DYN_SYSCALL);
        }
        if ((c->load = load_read(p, f, b, a, uses)))
            c->causes |= BIT(EST_DYN_DCACHE) | BIT(EST_DYN_DTB);
        if (bs->slots[i].unit_livein) {
            ev5_issue iss;
            ev5_issue_insn(ev5, &in, &iss);
            if (iss.unit == EV5_UNIT_MUL)
                c->causes |= BIT(EST_DYN_MULTIPLIER);
            else if (iss.unit == EV5_UNIT_DIV)
                c->causes |= BIT(EST_DYN_DIVIDER);
        }
    }
}

est_culprits *est_culprits_find(const cfg_program *cfg, const est_freq *freq,
                                const est_sched *sched, double period)
{
    est_culprits *c = calloc(1, sizeof *c);
    if (!c || !(c->blocks = calloc(cfg->nprocs ? cfg->nprocs : 1, sizeof *c->blocks)) ||
        !(c->nblocks = calloc(cfg->nprocs ? cfg->nprocs : 1, sizeof *c->nblocks))) {
        if (c)
            free(c->blocks);
        free(c);
        return NULL;
    }
    c->nprocs = cfg->nprocs;
    ev5_params ev5;
    ev5_defaults(&ev5);     /* est_freq_from_samples scheduled for a stock 21164 */
    for (size_t p = 0; p < cfg->nprocs && p < sched->nprocs; p++) {
        const cfg_proc *f = &cfg->procs[p];
        const est_proc_sched *ps = &sched->procs[p];
        if (f->flags & CFG_PF_MISSING || !ps->nblocks || freq->procs[p].samples <= 0)
            continue;
        if (!(c->blocks[p] = calloc(f->nblocks, sizeof *c->blocks[p])))
            goto oom;
        c->nblocks[p] = f->nblocks;
        for (size_t b = 0; b < f->nblocks && b < ps->nblocks; b++) {
            const est_block_sched *bs = &ps->blocks[b];
            if (!bs->n)
                continue;
            if (!(c->blocks[p][b] = calloc(bs->n, sizeof *c->blocks[p][b])))
                goto oom;
            block_culprits(cfg, f, b, freq->procs[p].block[b], bs, period, &ev5, c->blocks[p][b]);
        }
    }
    return c;
oom:
    est_culprits_free(c);
    return NULL;
}

void est_culprits_free(est_culprits *c)
{
    if (!c)
        return;
    for (size_t p = 0; p < c->nprocs; p++) {
        for (size_t b = 0; c->blocks[p] && b < c->nblocks[p]; b++)
            free(c->blocks[p][b]);
        free(c->blocks[p]);
    }
    free(c->blocks);
    free(c->nblocks);
    free(c);
}

void est_events_free(est_events *e)
{
    if (!e)
        return;
    free(e->addr);
    free(e->count);
    free(e);
}

/* The most cycles one event can cost the instruction that waits on it, as
 * the machine charges them (machine/cycles.c): a fill from memory queued
 * behind one line already on the bus, a TB miss's PALcode, a mispredict's
 * refetch; each with the cycle a new issue group costs. */
static double event_cost(const ev5_params *p, int e)
{
    uint32_t fill = (p->bcache.size ? p->bcache.latency : p->scache.latency) + p->mem_latency +
                    p->mem_fill_busy;
    switch (e) {
    case EST_EV_IMISS:
    case EST_EV_DMISS: return fill + 1.0;
    case EST_EV_ITBMISS: return p->itb_miss_cycles + 1.0;
    case EST_EV_DTBMISS: return p->dtb_miss_cycles + 1.0;
    case EST_EV_BRANCHMP: return p->mispredict_penalty + 1.0;
    default: return p->jump_mispredict_penalty + 1.0;
    }
}

static const int event_cause[EST_EV_COUNT] = {
    EST_DYN_ICACHE, EST_DYN_ITB, EST_DYN_DCACHE, EST_DYN_DTB, EST_DYN_BRANCH_MISPREDICT,
    EST_DYN_JUMP_MISPREDICT,
};

/* Samples of event k at addresses [lo, hi]. */
static double samples_in(const est_events *ev, int k, uint64_t lo, uint64_t hi)
{
    size_t l = 0, h = ev->n;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (ev->addr[m] < lo)
            l = m + 1;
        else
            h = m;
    }
    double n = 0;
    for (; l < ev->n && ev->addr[l] <= hi; l++)
        n += ev->count[l * EST_EV_COUNT + (size_t)k];
    return n;
}

/* A sample of an I-cache miss goes to the missing instruction; the others
 * go to the head of the queue pmu_skid cycles after the event: for a stall
 * at a, a itself or one of the instructions just before it (the target of
 * a mispredict, the access a TB miss holds), and for a load's miss any
 * instruction from the load to a, which may be a dozen further on
 * (docs/estimator.md has the measurements). */
static void culprit_bound(est_culprit *c, uint64_t a, const est_events *ev, const ev5_params *p,
                          size_t *removed)
{
    for (int k = 0; k < EST_EV_COUNT; k++) {
        int cause = event_cause[k];
        if (!(c->causes & BIT(cause)) || !(ev->period[k] > 0))
            continue;
        uint64_t back = k == EST_EV_IMISS ? 0 : 4ull * p->pmu_skid;
        uint64_t lo = a > back ? a - back : 0;
        if ((k == EST_EV_DMISS || k == EST_EV_DTBMISS) && c->load && c->load < lo)
            lo = c->load;
        double n = samples_in(ev, k, lo, a);
        /* two standard deviations of Poisson noise above n (3 when n = 0) */
        double bound = (n + 2 * sqrt(n + 1) + 1) * ev->period[k] * event_cost(p, k);
        if (bound < c->stall) {
            c->causes &= (uint16_t)~BIT(cause);
            ++*removed;
        }
    }
}

size_t est_culprits_bound(est_culprits *c, const cfg_program *cfg, const est_sched *sched,
                          const est_events *ev, const ev5_params *ev5)
{
    ev5_params stock;
    if (!ev5) {
        ev5_defaults(&stock);
        ev5 = &stock;
    }
    size_t removed = 0;
    for (size_t p = 0; ev && p < c->nprocs; p++)
        for (size_t b = 0; c->blocks[p] && b < c->nblocks[p]; b++) {
            est_culprit *row = c->blocks[p][b];
            const est_block_sched *bs = &sched->procs[p].blocks[b];
            for (uint32_t i = 0; row && i < bs->n; i++)
                if (row[i].stall > 0)
                    culprit_bound(&row[i], cfg->procs[p].blocks[b].start + 4ull * i, ev, ev5,
                                  &removed);
        }
    return removed;
}

est_culprits *est_culprits_of(const est_analysis *a)
{
    est_culprits *c = est_culprits_find(a->cfg, a->freq, a->sched, a->period);
    if (c)
        est_culprits_bound(c, a->cfg, a->sched, a->events, NULL);
    return c;
}

/* The true dynamic stall of cause k at instruction i of block b: for the
 * units, what the static schedule does not already predict. */
static double true_dynamic(const profdb_truth *truth, long t, int col, int k, const est_freq *exact,
                           size_t p, size_t b, const alpha_sched_slot *sl)
{
    double v = col < 0 ? 0 : truth->stall[(size_t)t * truth->ncauses + (size_t)col];
    int reason = k == EST_DYN_MULTIPLIER ? ASR_MULTIPLIER : k == EST_DYN_DIVIDER ? ASR_DIVIDER : -1;
    if (reason < 0 || !exact || sl->reason != reason)
        return v;
    v -= exact->procs[p].block[b] * sl->stall;
    return v > 0 ? v : 0;
}

void est_culprits_accuracy(const cfg_program *cfg, const est_culprits *c, const est_sched *sched,
                           const profdb_truth *truth, const est_freq *exact,
                           est_culprit_accuracy *out)
{
    memset(out, 0, sizeof *out);
    int col[EST_DYN_COUNT];
    for (int k = 0; k < EST_DYN_COUNT; k++)
        col[k] = profdb_truth_cause(truth, est_dyn_names[k]);
    for (size_t p = 0; p < c->nprocs; p++)
        for (size_t b = 0; c->blocks[p] && b < c->nblocks[p]; b++) {
            const est_culprit *row = c->blocks[p][b];
            const est_block_sched *bs = &sched->procs[p].blocks[b];
            for (uint32_t i = 0; row && i < bs->n; i++) {
                double s = bs->samples ? bs->samples[i] : 0;
                out->samples += s;
                if (row[i].stall > 0 && !row[i].causes)
                    out->unexplained += s;
                long t = profdb_truth_find(truth, cfg->procs[p].blocks[b].start + 4ull * i);
                if (t < 0)
                    continue;
                int ncul = __builtin_popcount(row[i].causes);
                for (int k = 0; k < EST_DYN_COUNT; k++) {
                    double v = true_dynamic(truth, t, col[k], k, exact, p, b, &bs->slots[i]);
                    out->stall += v;
                    out->by_cause[k] += v;
                    out->culprits += v * ncul;
                    if (row[i].causes & BIT(k)) {
                        out->covered += v;
                        out->covered_by_cause[k] += v;
                    }
                }
            }
        }
}
