/*
 * Static block schedules (machine/cycles_sched.c) against the model they
 * stand in for: random blocks of random instructions, run in a random walk
 * with addresses that hit, miss, cross pages and fill the write buffer,
 * fed to two cores, one using the schedules and one modelling every
 * instruction.  Clock, counts, stalls and every counter sample must agree
 * exactly, under several parameter sets and sampling configurations.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "alpha/ev5.h"
#include "alpha/sched.h"
#include "machine/cycles.h"
#include "machine/pmu.h"
#include "test_machine_harness.h"

#define NBLOCKS 96
#define MAXN 40

typedef struct tblock {
    uint64_t pc;
    uint32_t n;
    uint32_t w[MAXN];
    cycles_insn ti[MAXN];
    cycles_sched **s;
    int bias;                   /* percent taken, for a conditional branch at the end */
} tblock;

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)((rng >> 11) % n);
}

static unsigned ireg(void) { return rnd(10) == 0 ? 31 : 1 + rnd(8); }

/* One instruction that is not a control transfer. */
static uint32_t body_word(void)
{
    static const char *const alu[] = { "addq", "subq", "cmpeq", "cmplt", "and", "bis", "s4addq", "sll",
                                       "extbl", "cmoveq", "addl", "xor" };
    static const char *const fp[] = { "addt", "mult", "subt" };
    static const char *const ld[] = { "ldq", "ldl", "ldt", "ldbu", "ldq_u" };
    static const char *const st[] = { "stq", "stl", "stt" };
    uint32_t r = rnd(100);
    if (r < 40) {
        const char *op = alu[rnd(sizeof alu / sizeof alu[0])];
        return rnd(3) ? OPR(op, ireg(), ireg(), ireg()) : OPI(op, ireg(), rnd(256), ireg());
    }
    if (r < 44)
        return OPR(rnd(2) ? "mulq" : "umulh", ireg(), ireg(), ireg());
    if (r < 52)
        return FOP(fp[rnd(3)], 1 + rnd(6), 1 + rnd(6), 1 + rnd(6), 0);
    if (r < 53)
        return FOP("divt", 1 + rnd(6), 1 + rnd(6), 1 + rnd(6), 0);
    if (r < 75) {
        const char *op = ld[rnd(sizeof ld / sizeof ld[0])];
        unsigned ra = rnd(12) == 0 ? 31 : (op[2] == 't' ? 1 + rnd(6) : ireg());   /* r31: prefetch or UNOP */
        return MEM(op, ra, 8 * (int)rnd(16), 1 + rnd(8));
    }
    if (r < 95) {
        const char *op = st[rnd(3)];
        return MEM(op, op[2] == 't' ? 1 + rnd(6) : ireg(), 8 * (int)rnd(16), 1 + rnd(8));
    }
    if (r < 96)
        return enc("mb", 0, 0, 0, false, 0, 0);
    return OPR("bis", 31, 31, 31);
}

/* The last instruction: a control transfer of some kind, or none (a block
 * cut at the translator's limit, whose successor follows it). */
static uint32_t last_word(void)
{
    switch (rnd(10)) {
    case 0: case 1: case 2: case 3: return BRA(rnd(2) ? "bne" : "beq", ireg(), (int)rnd(64) - 32);
    case 4: return BRA("br", 31, (int)rnd(64));
    case 5: return BRA("bsr", 26, (int)rnd(64));
    case 6: return enc("jsr", 26, 1 + rnd(8), 0, false, (int)rnd(0x4000), 0);
    case 7: return enc("ret", 31, 26, 0, false, 1, 0);
    case 8: return rnd(4) ? enc("jmp", 31, 1 + rnd(8), 0, false, (int)rnd(0x4000), 0) : PAL(0x83);
    default: return body_word();
    }
}

/* Blocks in runs laid end to end (so that falling through into the next
 * block happens, mid fetch block too), runs spread over more code than
 * the I-cache holds. */
static void make_blocks(tblock *b)
{
    uint64_t pc = CODE;
    for (int i = 0; i < NBLOCKS; i++) {
        if (rnd(3) == 0)
            pc = CODE + 0x2000ULL * rnd(24) + 4 * rnd(256);
        b[i].pc = pc;
        b[i].n = 1 + rnd(rnd(4) ? 12 : MAXN);
        for (uint32_t k = 0; k < b[i].n; k++) {
            b[i].w[k] = k + 1 < b[i].n ? body_word() : last_word();
            alpha_insn in;
            alpha_decode(b[i].w[k], &in);
            cycles_decode(b[i].w[k], in.id, &b[i].ti[k]);
        }
        b[i].bias = (int)rnd(101);
        b[i].s = calloc(1, cycles_sched_size(b[i].n));
        cr_assert(b[i].s);
        pc += 4ULL * b[i].n;
    }
}

/* An effective address: a few hot lines, a stream, far pages. */
static uint64_t pick_ea(long step)
{
    uint32_t r = rnd(100);
    if (r < 70)
        return DATA + 8ULL * rnd(64);
    if (r < 90)
        return DATA + 0x100000 + 32ULL * (uint64_t)(step % 100000);
    return DATA + 0x2000ULL * rnd(4096) + 8 * rnd(1024);
}

typedef struct log {
    uint64_t n;
    uint64_t sum;               /* of (pc, ev, order) */
} log;

static void sink(void *ctx, int cpuno, uint64_t pc, int ev)
{
    log *l = ctx;
    (void)cpuno;
    l->n++;
    l->sum = l->sum * 1000003 + pc * 31 + (uint64_t)ev;
}

/* ProfileMe on the fast core only (run's pm_fast): what it delivered. */
static uint64_t pm_records, pm_insns, pm_truth_execs;
static void pm_sink(void *ctx, int cpuno, const cycles_pm *r, int n)
{
    (void)ctx;
    (void)cpuno;
    (void)r;
    pm_records += (uint64_t)n;
}
static void pm_truth(void *ctx, uint64_t pc, uint64_t slots, uint64_t used)
{
    (void)ctx;
    (void)pc;
    (void)slots;
    (void)used;
    pm_truth_execs++;
}
/* The true paths: one per record, the first run ending right after the
 * tagged instruction, every run well formed and runs maximal (no run
 * ends where the next newer one starts). */
static uint64_t pm_paths_seen, pm_paths_bad;
static void pm_path(void *ctx, const cycles_pm *r, const cycles_run *run, uint32_t n)
{
    (void)ctx;
    pm_paths_seen++;
    bool ok = n >= 1 && n <= CYCLES_RUNS + 1 && run[0].end == r->pc + 4 && run[0].start <= r->pc;
    for (uint32_t k = 0; k < n; k++)
        ok = ok && run[k].start < run[k].end && !((run[k].start | run[k].end) & 3) &&
             (!k || run[k].end != run[k - 1].start);
    pm_paths_bad += !ok;
}
static bool pm_fast;

static void run(const char *const *set, const char *pmuspec, bool trace, long steps, uint64_t seed)
{
    char err[256];
    ev5_params p;
    ev5_defaults(&p);
    for (; set && *set; set++)
        cr_assert(ev5_set(&p, *set, err, sizeof err), "%s", err);
    cr_assert(ev5_validate(&p, err, sizeof err), "%s", err);
    cycles_core *fast = cycles_new(&p), *slow = cycles_new(&p);
    cr_assert(fast && slow);
    cycles_set_schedules(slow, false);
    log lf = { 0 }, ls = { 0 };
    pmu *uf = NULL, *us = NULL;
    if (pmuspec) {
        pmu_config cfg;
        cr_assert(pmu_parse(pmuspec, &cfg, err, sizeof err), "%s", err);
        cfg.skid = p.pmu_skid;
        cfg.mux_cycles = 20000;
        uf = pmu_new(&cfg, 0, fast, sink, &lf);
        cfg.profileme = false;      /* (only the fast core, when asked for) */
        us = pmu_new(&cfg, 0, slow, sink, &ls);
        cr_assert(uf && us);
        pmu_set_pm_sink(uf, pm_sink);
    }
    if (pm_fast) {
        cycles_set_pm_truth(fast, pm_truth, NULL);
        cycles_set_pm_paths(fast, pm_path, NULL);
    }
    cycles_set_trace(fast, trace);
    cycles_set_trace(slow, trace);
    cycles_set_asn(fast, 1);
    cycles_set_asn(slow, 1);

    rng = seed;
    static tblock b[NBLOCKS];
    make_blocks(b);
    uint64_t ea[MAXN];
    int i = 0;
    for (long step = 0; step < steps; step++) {
        const tblock *x = &b[i];
        for (uint32_t k = 0; k < x->n; k++)
            ea[k] = pick_ea(step);
        /* where control goes: the next block if it follows on, else anywhere */
        int j = i + 1 < NBLOCKS && b[i + 1].pc == x->pc + 4ULL * x->n ? i + 1 : -1;
        if (j < 0 || (int)rnd(100) < x->bias)
            j = (int)rnd(NBLOCKS);
        uint32_t n = x->n;
        cycles_sched **s = x->s;
        if (rnd(200) == 0) {    /* a fault cut it short */
            n = 1 + rnd(x->n);
            s = NULL;
        }
        uint64_t next = n < x->n ? x->pc + 4ULL * n : b[j].pc;
        cycles_block(fast, x->ti, x->pc, n, ea, next, s);
        cycles_block(slow, x->ti, x->pc, n, ea, next, s);
        pm_insns += n;
        cr_assert_eq(cycles_now(fast), cycles_now(slow), "step %ld: block %d at %#lx: %lu against %lu cycles",
                     step, i, (unsigned long)x->pc, (unsigned long)cycles_now(fast),
                     (unsigned long)cycles_now(slow));
        if (rnd(500) == 0) {    /* another process for a while */
            uint32_t asn = 1 + rnd(3);
            cycles_set_asn(fast, asn);
            cycles_set_asn(slow, asn);
        }
        i = j;
    }
    cycles_stats a = *cycles_get_stats(fast), c = *cycles_get_stats(slow);
    a.group_size[0] = c.group_size[0] = 0;      /* scratch */
    const uint64_t *x = (const uint64_t *)&a, *y = (const uint64_t *)&c;
    for (size_t k = 0; k < sizeof a / sizeof *x; k++)
        cr_assert_eq(x[k], y[k], "stats word %zu: %lu against %lu", k, (unsigned long)x[k], (unsigned long)y[k]);
    cr_assert_eq(lf.n, ls.n);
    cr_assert_eq(lf.sum, ls.sum);
    if (pmuspec)
        cr_assert_gt(lf.n, 0);
    pmu_free(uf);
    pmu_free(us);
    cycles_free(fast);
    cycles_free(slow);
    for (int k = 0; k < NBLOCKS; k++) {
        cycles_sched_free(b[k].s, b[k].n);
        free(b[k].s);
    }
}

Test(sched, same_as_model)
{
    for (uint64_t seed = 1; seed <= 4; seed++)
        run(NULL, NULL, false, 250000, seed * 0x9e3779b97f4a7c15ULL);
}

Test(sched, same_samples)
{
    run(NULL, "cycles:1000,dmiss:64,imiss:64,branchmp:64,smiss:64", false, 40000, 77);
    run(NULL, "cycles:2000,issues:300", false, 20000, 78);
    run(NULL, "cycles:1000", true, 10000, 79);
}

/* ProfileMe's tagging and its truths (issue slots, paths) change no
 * cycle, count and sample: the fast core with schedules, ProfileMe pairs
 * and the truths against the slow one without any. */
Test(sched, profileme_changes_nothing)
{
    pm_fast = true;
    pm_records = pm_insns = pm_truth_execs = pm_paths_seen = pm_paths_bad = 0;
    run(NULL, "cycles:1000,dmiss:64,profileme:200", false, 40000, 91);
    cr_assert(pm_truth_execs <= pm_insns && pm_truth_execs + 1000 >= pm_insns, "truth of %lu of %lu",
              (unsigned long)pm_truth_execs, (unsigned long)pm_insns);
    cr_assert_gt(pm_records, pm_insns / 400, "%lu records for %lu instructions", (unsigned long)pm_records,
                 (unsigned long)pm_insns);
    cr_assert_lt(pm_records, pm_insns / 100);
    cr_assert_eq(pm_paths_seen, pm_records, "%lu paths for %lu records", (unsigned long)pm_paths_seen,
                 (unsigned long)pm_records);
    cr_assert_eq(pm_paths_bad, 0, "%lu malformed paths", (unsigned long)pm_paths_bad);
    pm_fast = false;
}

Test(sched, same_with_other_parameters)
{
    const char *const narrow[] = { "issue_width=2", "write_buffer_entries=2", "icache.line=64", NULL };
    const char *const ways[] = { "dcache.ways=2", "icache.ways=2", "dtb_entries=8", "bcache.size=0", NULL };
    run(narrow, NULL, false, 40000, 5);
    run(ways, "cycles:1500,dtbmiss:64", false, 40000, 6);
}

/* alpha/'s static scheduler against the model itself: a random block
 * (no control transfer, no barrier) run after a stretch of no-ops long
 * enough for every value, the multiplier and the divider to be ready, its
 * loads hitting and its stores merging in the write buffer, is what the
 * scheduler assumes; then the cycles each instruction after the first
 * spends at the head of the issue queue must be the scheduler's M_i, and
 * its stall cycles and their cause the scheduler's. */
typedef struct hoq {
    cycles_core *c;
    uint64_t pc0;
    uint32_t n;
    uint32_t m[MAXN], stall[MAXN];
    int cause[MAXN];
    uint64_t last[ST_COUNT];    /* the model's stalls at the last advance */
} hoq;

/* With tracing, what the stalls grew by since the last advance is the
 * stall of the instruction at pc (cycles.h). */
static void hoq_advance(void *ctx, uint64_t from, uint64_t to, uint64_t pc)
{
    hoq *h = ctx;
    const cycles_stats *st = cycles_get_stats(h->c);
    bool mine = pc >= h->pc0 && pc < h->pc0 + 4ULL * h->n;
    uint32_t k = mine ? (uint32_t)(pc - h->pc0) / 4 : 0;
    for (int s = 0; s < ST_COUNT; s++) {
        if (mine && st->stalls[s] != h->last[s]) {
            h->stall[k] += (uint32_t)(st->stalls[s] - h->last[s]);
            h->cause[k] = s;
        }
        h->last[s] = st->stalls[s];
    }
    if (mine)
        h->m[k] += (uint32_t)(to - from);
}

/* Few registers, so that most instructions wait on one another, and the
 * operations whose rules differ: compares and CMOV, busy units, FP. */
static uint32_t dense_word(void)
{
    static const char *const alu[] = { "cmpeq", "cmplt", "and", "bis", "xor", "addq", "sll", "s4addq",
                                       "extbl", "cmoveq", "cmovne", "mulq", "mull", "umulh" };
    static const char *const fp[] = { "addt", "mult", "divt", "divs", "cpys" };
    unsigned r = rnd(100), a = 1 + rnd(4), b = 1 + rnd(4), c = 1 + rnd(4);
    if (r < 55)
        return OPR(alu[rnd(sizeof alu / sizeof alu[0])], a, b, c);
    if (r < 70)
        return FOP(fp[rnd(sizeof fp / sizeof fp[0])], a, b, c, 0);
    if (r < 85)
        return MEM(rnd(3) ? "ldq" : "ldt", a, 8 * (int)rnd(4), 30);
    if (r < 95)
        return MEM(rnd(2) ? "stq" : "stt", a, 8 * (int)rnd(4), 30);
    return MEM("ldq_u", 31, 0, b);      /* UNOP */
}

Test(sched, alpha_scheduler_is_the_model_without_dynamic_stalls)
{
    char err[256];
    ev5_params p;
    ev5_defaults(&p);
    alpha_sched *as = alpha_sched_new(&p, err, sizeof err);
    cr_assert(as, "%s", err);
    const uint32_t nop = OPR("bis", 31, 31, 31);
    int nop_id = alpha_lookup("bis");
    rng = 0x5eed;
    int checked = 0, stalls = 0;
    int reasons[ASR_COUNT] = { 0 };
    for (int trial = 0; trial < 400; trial++) {
        uint32_t n = 2 + rnd(MAXN - 1), w[MAXN];
        uint64_t pc0 = CODE + 0x400 + 4 * rnd(4);
        for (uint32_t k = 0; k < n; k++)
            w[k] = dense_word();
        if (rnd(2))             /* a branch may end it */
            w[n - 1] = BRA(rnd(2) ? "bne" : "blbs", 1 + rnd(4), 4);
        cycles_core *c = cycles_new(&p);
        cr_assert(c);
        hoq h = { .c = c, .pc0 = pc0, .n = n };
        cycles_set_asn(c, 1);
        for (int round = 0; round < 4; round++) {
            if (round == 3) {
                cycles_observer o = { hoq_advance, NULL, &h };
                memcpy(h.last, cycles_get_stats(c)->stalls, sizeof h.last);
                cycles_set_observer(c, &o);
                cycles_set_trace(c, true);
            }
            for (int k = 0; k < 64; k++)
                cycles_step(c, CODE + 4 * k, nop, (unsigned)nop_id, 0, CODE + 4 * k + 4);
            for (uint32_t k = 0; k < n; k++) {
                alpha_insn in;
                ev5_issue is;
                alpha_decode(w[k], &in);
                ev5_issue_insn(&p, &in, &is);
                /* loads from one line each, stores all to one line */
                uint64_t ea = is.mem == EV5_MEM_STORE ? DATA : DATA + 0x1000 + 32 * k;
                cycles_step(c, pc0 + 4 * k, w[k], in.id, ea, pc0 + 4 * k + 4);
            }
        }
        alpha_sched_slot sl[MAXN];
        alpha_sched_words(as, w, n, pc0, sl);
        for (uint32_t k = 1; k < n; k++) {
            cr_assert_eq(h.m[k], sl[k].m, "trial %d, insn %u of %u: model %u cycles, scheduler %u", trial, k, n,
                         h.m[k], sl[k].m);
            cr_assert_eq(h.stall[k], sl[k].stall, "trial %d, insn %u: stall", trial, k);
            if (sl[k].stall) {
                int want = sl[k].reason == ASR_MULTIPLIER ? ST_MULTIPLIER
                           : sl[k].reason == ASR_DIVIDER  ? ST_DIVIDER
                                                          : ST_DEPENDENCY;
                cr_assert_eq(h.cause[k], want, "trial %d, insn %u: cause %s, scheduler %s", trial, k,
                             cycles_stall_names[h.cause[k]], alpha_sched_reason_names[sl[k].reason]);
                stalls++;
            }
            reasons[sl[k].reason]++;
            checked++;
        }
        cycles_free(c);
    }
    /* every reason came up, stalls of each kind many times */
    for (int r = ASR_DUAL; r < ASR_COUNT; r++)
        if (r != ASR_FIRST)
            cr_expect_gt(reasons[r], 20, "reason %s only %d times", alpha_sched_reason_names[r], reasons[r]);
    cr_expect_gt(stalls, 1000, "only %d stalls checked", stalls);
    cr_log_info("%d instructions, %d static stalls checked", checked, stalls);
    alpha_sched_free(as);
}
