/*
 * The EV5 cycle model, fed instruction streams directly: each test builds
 * a small loop, replays it as the executor would retire it, and checks the
 * cycles and counts the rules of docs/machine.md ("The cycle model") give.
 */
#include <criterion/criterion.h>

#include "alpha/ev5.h"
#include "machine/cycles.h"
#include "machine/pmu.h"
#include "test_machine_harness.h"

#define BASE 0x120000000ULL

typedef struct stream {
    cycles_core *c;
    ev5_params p;
} stream;

static void start(stream *s, const char *const *set)
{
    char err[256];
    ev5_defaults(&s->p);
    for (; set && *set; set++)
        cr_assert(ev5_set(&s->p, *set, err, sizeof err), "%s", err);
    cr_assert(ev5_validate(&s->p, err, sizeof err), "%s", err);
    s->c = cycles_new(&s->p);
    cr_assert(s->c);
    cycles_set_asn(s->c, 1);
}

static void step(stream *s, uint64_t pc, uint32_t w, uint64_t ea, uint64_t next)
{
    alpha_insn in;
    alpha_decode(w, &in);
    cycles_step(s->c, pc, w, in.id, ea, next);
}

/* Run `body` (n words at BASE) as a loop `iters` times: the last word is
 * the loop branch, taken back to BASE except on the last iteration.  eas
 * gives each word's effective address as a function of the iteration. */
typedef uint64_t (*ea_fn)(int word, long iter);

static void loop(stream *s, const uint32_t *body, int n, long iters, ea_fn ea)
{
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < n; i++) {
            uint64_t pc = BASE + 4ULL * (uint64_t)i;
            uint64_t next = pc + 4;
            if (i == n - 1 && it + 1 < iters)
                next = BASE;
            step(s, pc, body[i], ea ? ea(i, it) : 0, next);
        }
}

static const cycles_stats *st(stream *s) { return cycles_get_stats(s->c); }

static double cpi(stream *s)
{
    return (double)st(s)->cycles / (double)st(s)->instructions;
}

/* 16 independent integer operations then the loop branch: two integer
 * pipes, so two a cycle at best. */
Test(cycles, alu_dual_issue)
{
    stream s;
    start(&s, NULL);
    uint32_t body[32];
    int n = 0;
    for (int i = 0; i < 30; i++)
        body[n++] = OPR(i % 2 ? "xor" : "addq", 1 + i % 8, 9, 1 + i % 8);
    body[n++] = OPI("subq", 10, 1, 10);
    body[n] = BRA("bne", 10, -(n + 1));
    n++;
    loop(&s, body, n, 10000, NULL);
    cr_assert_leq(cpi(&s), 0.6, "CPI %.3f", cpi(&s));
    cr_assert_geq(cpi(&s), 0.5, "CPI %.3f below two a cycle", cpi(&s));
    cr_assert_eq(st(&s)->branch_mispredicts, 1);    /* only the loop exit */
}

/* A dependent chain issues one a cycle whatever the width. */
Test(cycles, dependent_chain)
{
    stream s;
    start(&s, NULL);
    uint32_t body[16];
    int n = 0;
    for (int i = 0; i < 15; i++)
        body[n++] = OPR("addq", 1, 2, 1);
    body[n] = BRA("bne", 3, -(n + 1));
    n++;
    loop(&s, body, n, 1000, NULL);
    cr_assert_geq(cpi(&s), 0.95, "CPI %.3f", cpi(&s));
    cr_assert_gt(st(&s)->stalls[ST_DEPENDENCY] + st(&s)->issue_cycles, 14000);
}

/* Loads hitting the D-cache feed a consumer two cycles later; a load and
 * a store never issue together. */
static uint64_t same_line(int word, long iter) { (void)word; (void)iter; return 0x140000000ULL; }

Test(cycles, load_use_latency)
{
    stream s;
    start(&s, NULL);
    uint32_t body[] = { MEM("ldq", 1, 0, 2), OPR("addq", 1, 1, 3), OPR("addq", 3, 3, 4),
                        BRA("bne", 5, -4) };
    loop(&s, body, 4, 1000, same_line);
    /* ldq at T, addq at T+2, addq at T+3, bne with it, next block */
    double c = (double)st(&s)->cycles / 1000;
    cr_assert(c >= 4.0 && c <= 5.5, "%.2f cycles per iteration", c);
    cr_assert_eq(st(&s)->dcache_misses, 1);
}

/* Two multiplies in a row wait for the unpipelined multiplier. */
Test(cycles, multiplier_busy)
{
    stream s;
    start(&s, NULL);
    uint32_t body[] = { OPR("mulq", 1, 2, 3), OPR("mulq", 4, 5, 6), OPR("mulq", 7, 8, 9),
                        BRA("bne", 10, -4) };
    loop(&s, body, 4, 100, NULL);
    cr_assert_geq(st(&s)->cycles, 100 * 3 * 12 - 12);
    cr_assert_gt(st(&s)->stalls[ST_MULTIPLIER], 100 * 2 * 10);
}

/* A branch alternating taken / not taken: a 2-bit counter is wrong half
 * the time. */
Test(cycles, alternating_branch)
{
    stream s;
    start(&s, NULL);
    uint32_t br = BRA("blbc", 1, 1);            /* forward over one word */
    uint32_t add = OPR("addq", 2, 2, 2);
    for (long i = 0; i < 10000; i++) {
        bool taken = i & 1;
        step(&s, BASE, add, 0, BASE + 4);
        step(&s, BASE + 4, br, 0, taken ? BASE + 12 : BASE + 8);
        if (!taken)
            step(&s, BASE + 8, add, 0, BASE + 12);
        step(&s, BASE + 12, BRA("br", 31, -4), 0, BASE);
    }
    /* forward branch: starts weakly not taken; not taken first, so the
     * counter swings between 0 and 1 and every taken one is missed */
    cr_assert_eq(st(&s)->branch_mispredicts, 5000);
    cr_assert_eq(st(&s)->stalls[ST_BRANCH], 5000ULL * s.p.mispredict_penalty);
}

/* A JMP whose hint names its target costs a taken-branch bubble; a wrong
 * hint costs a mispredict. */
static uint64_t run_jump(int hint, uint64_t *mispredicts)
{
    stream s;
    start(&s, NULL);
    uint32_t jmp = enc("jmp", 31, 1, 0, false, hint, 0);
    for (int i = 0; i < 1000; i++) {
        step(&s, BASE, OPR("addq", 2, 2, 2), 0, BASE + 4);
        step(&s, BASE + 4, jmp, 0, BASE + 0x100);
        step(&s, BASE + 0x100, OPR("addq", 3, 3, 3), 0, BASE + 0x104);
        step(&s, BASE + 0x104, BRA("br", 31, -(0x108 / 4)), 0, BASE);
    }
    *mispredicts = st(&s)->jump_mispredicts;
    uint64_t c = st(&s)->cycles;
    cycles_free(s.c);
    return c;
}

Test(cycles, jump_hint)
{
    uint64_t right_mp, wrong_mp;
    uint64_t right = run_jump((0x100 - 8) / 4, &right_mp);
    uint64_t wrong = run_jump(0, &wrong_mp);
    cr_assert_eq(right_mp, 0);
    cr_assert_eq(wrong_mp, 1000);
    cr_assert_lt(right, wrong, "right hint %lu cycles, wrong %lu", (unsigned long)right,
                 (unsigned long)wrong);
}

/* Thirteen nested calls overflow the 12-entry return stack: only the
 * outermost return is mispredicted. */
Test(cycles, return_stack)
{
    stream s;
    start(&s, NULL);
    uint32_t jsr = enc("jsr", 26, 27, 0, false, 0, 0), ret = enc("ret", 31, 26, 0, false, 1, 0);
    for (int d = 0; d < 13; d++)
        step(&s, BASE + 0x1000ULL * (uint64_t)d, jsr, 0, BASE + 0x1000ULL * (uint64_t)(d + 1));
    for (int d = 12; d >= 0; d--)
        step(&s, BASE + 0x1000ULL * (uint64_t)(d + 1) + 8, ret, 0, BASE + 0x1000ULL * (uint64_t)d + 4);
    cr_assert_eq(st(&s)->returns, 13);
    cr_assert_eq(st(&s)->return_mispredicts, 1);
}

/* Straight-line code of 12 KB (384 lines) in the direct-mapped 8 KB
 * I-cache: its last 4 KB and its first 4 KB evict each other on every
 * pass, 256 misses a pass after the first; with a 16 KB I-cache only the
 * first pass misses. */
static uint64_t big_loop_misses(const char *const *set)
{
    stream s;
    start(&s, set);
    static uint32_t body[3072];
    for (int i = 0; i < 3071; i++)
        body[i] = OPR("addq", 1 + i % 8, 9, 1 + i % 8);
    body[3071] = BRA("bne", 10, -3072);
    loop(&s, body, 3072, 10, NULL);
    uint64_t m = st(&s)->icache_misses;
    cycles_free(s.c);
    return m;
}

Test(cycles, icache_capacity)
{
    static const char *const big[] = { "icache.size=16384", NULL };
    uint64_t small = big_loop_misses(NULL), fits = big_loop_misses(big);
    cr_assert_eq(small, 384 + 9 * 256, "%lu misses", (unsigned long)small);
    cr_assert_eq(fits, 3072 / 8, "%lu misses", (unsigned long)fits);
}

/* A copy loop over arrays far larger than the S-cache: loads miss to
 * memory, stores fill the write buffer; CPI several times its best. */
static uint64_t copy_ea(int word, long iter)
{
    if (word == 0)
        return 0x140000000ULL + 8ULL * (uint64_t)iter;
    if (word == 1)
        return 0x150000000ULL + 8ULL * (uint64_t)iter;
    return 0;
}

Test(cycles, copy_loop_memory_bound)
{
    stream s;
    start(&s, NULL);
    uint32_t body[] = { MEM("ldt", 1, 0, 16), MEM("stt", 1, 0, 17), OPI("addq", 16, 8, 16),
                        OPI("addq", 17, 8, 17), OPI("subq", 18, 1, 18), BRA("bne", 18, -6) };
    loop(&s, body, 6, 1 << 16, copy_ea);
    const cycles_stats *x = st(&s);
    cr_assert_gt(cpi(&s), 3.0, "CPI %.2f", cpi(&s));
    uint64_t mem = x->stalls[ST_DCACHE] + x->stalls[ST_WRITE_BUFFER];
    for (int i = 0; i < ST_COUNT; i++)
        cr_assert_geq(mem, x->stalls[i], "stall %s %lu beats memory %lu", cycles_stall_names[i],
                      (unsigned long)x->stalls[i], (unsigned long)mem);
    cr_assert_eq(x->dcache_misses, (1 << 16) / 4);    /* one per 32-byte line */
}

/* A system call's cost lands before the next instruction. */
Test(cycles, syscall_cost)
{
    stream s;
    start(&s, NULL);
    step(&s, BASE, PAL(0x83), 0, BASE + 4);
    step(&s, BASE + 4, OPR("addq", 1, 1, 1), 0, BASE + 8);
    cr_assert_eq(st(&s)->stalls[ST_SYSCALL], s.p.syscall_cycles);
}

/* Every cycle is an issue cycle or one stall. */
Test(cycles, cycles_add_up)
{
    stream s;
    start(&s, NULL);
    uint32_t body[] = { MEM("ldt", 1, 0, 16), MEM("stt", 1, 0, 17), OPR("mulq", 1, 2, 3),
                        OPI("addq", 16, 8, 16), OPI("addq", 17, 8, 17), BRA("bne", 18, -6) };
    loop(&s, body, 6, 5000, copy_ea);
    const cycles_stats *x = st(&s);
    uint64_t sum = x->issue_cycles;
    for (int i = 0; i < ST_COUNT; i++)
        sum += x->stalls[i];
    cr_assert_eq(sum, x->cycles);
}

/* ---- the PMU over the model ------------------------------------------- */

typedef struct sink_log {
    uint64_t n[CEV_COUNT];
    uint64_t at_pc[4];
} sink_log;

static void sink(void *ctx, int cpuno, uint64_t pc, int ev)
{
    sink_log *l = ctx;
    (void)cpuno;
    l->n[ev]++;
    if (ev == CEV_CYCLES && pc >= BASE && pc < BASE + 16)
        l->at_pc[(pc - BASE) / 4]++;
}

/* Cycle samples land where the cycles are: a load missing to memory
 * stalls its consumer, which heads the issue queue meanwhile. */
static uint64_t far_ea(int word, long iter) { (void)word; return 0x140000000ULL + 64ULL * (uint64_t)iter; }

Test(pmu, samples_where_cycles_go)
{
    stream s;
    start(&s, NULL);
    pmu_config cfg;
    char err[256];
    cr_assert(pmu_parse("cycles:1000", &cfg, err, sizeof err), "%s", err);
    cfg.skid = s.p.pmu_skid;
    sink_log log = { 0 };
    pmu *u = pmu_new(&cfg, 0, s.c, sink, &log);
    uint32_t body[] = { MEM("ldq", 1, 0, 2), OPR("addq", 1, 1, 3), OPI("addq", 2, 8, 2),
                        BRA("bne", 5, -4) };
    loop(&s, body, 4, 20000, far_ea);
    pmu_stats ps;
    pmu_get_stats(u, &ps);
    double est = (double)ps.samples[CEV_CYCLES] * (double)ps.period_sum[CEV_CYCLES] /
                 (double)ps.overflows[CEV_CYCLES];
    cr_assert(est > 0.98 * (double)st(&s)->cycles && est < 1.02 * (double)st(&s)->cycles,
              "samples x period %.0f, cycles %lu", est, (unsigned long)st(&s)->cycles);
    /* the consumer of the load (word 1) waits on memory */
    cr_assert_gt(log.at_pc[1], 8 * (log.at_pc[0] + log.at_pc[2] + log.at_pc[3]), "%lu %lu %lu %lu",
                 (unsigned long)log.at_pc[0], (unsigned long)log.at_pc[1],
                 (unsigned long)log.at_pc[2], (unsigned long)log.at_pc[3]);
    pmu_free(u);
}

Test(pmu, parse_errors)
{
    pmu_config cfg;
    char err[256];
    cr_assert_not(pmu_parse("cycles,bogus", &cfg, err, sizeof err));
    cr_assert(strstr(err, "bogus"));
    cr_assert_not(pmu_parse("cycles:10", &cfg, err, sizeof err));
    cr_assert_not(pmu_parse("cycles,cycles", &cfg, err, sizeof err));
    cr_assert_not(pmu_parse("", &cfg, err, sizeof err));
    cr_assert_not(pmu_parse("cycles,", &cfg, err, sizeof err));
    cr_assert(pmu_parse("cycles,imiss:500,dmiss,branchmp,jsrmp", &cfg, err, sizeof err), "%s", err);
    cr_assert_eq(cfg.n, 5);
    cr_assert_eq(cfg.lo[CEV_CYCLES], 60000);
    cr_assert_eq(cfg.hi[CEV_CYCLES], 64000);
}

/* More events than counters: they take turns, and each one's samples
 * scaled by its share of the time still estimate its total. */
Test(pmu, multiplexing)
{
    stream s;
    start(&s, NULL);
    pmu_config cfg;
    char err[256];
    cr_assert(pmu_parse("cycles:2000,dmiss:64,branchmp:64,issues:256", &cfg, err, sizeof err), "%s", err);
    cfg.skid = 6;
    cfg.mux_cycles = 10000;
    sink_log log = { 0 };
    pmu *u = pmu_new(&cfg, 0, s.c, sink, &log);
    uint32_t body[] = { MEM("ldq", 1, 0, 2), OPR("addq", 1, 1, 3), OPI("addq", 2, 8, 2),
                        BRA("bne", 5, -4) };
    loop(&s, body, 4, 50000, far_ea);
    pmu_stats ps;
    pmu_get_stats(u, &ps);
    cr_assert_gt(ps.samples[CEV_DMISS], 0);
    cr_assert_lt(ps.active_cycles[CEV_DMISS], ps.cycles);
    double share = (double)ps.active_cycles[CEV_DMISS] / (double)ps.cycles;
    double est = (double)ps.samples[CEV_DMISS] * 64 / share;
    double truth = (double)st(&s)->dcache_misses;
    cr_assert(est > 0.8 * truth && est < 1.2 * truth, "estimate %.0f, misses %.0f", est, truth);
    pmu_free(u);
}

/* ---- value sampling's part: the values interrupt, load latencies, cost -- */

Test(values, parse)
{
    pmu_config cfg;
    char err[256];
    cr_assert(pmu_parse("cycles,values:5000", &cfg, err, sizeof err), "%s", err);
    cr_assert_eq(cfg.n, 1);
    cr_assert(cfg.values);
    cr_assert_eq(cfg.vlo, 5000 - 5000 / 32);
    cr_assert_eq(cfg.vhi, 5000 + 5000 / 32);
    cr_assert(pmu_parse("values", &cfg, err, sizeof err), "%s", err);
    cr_assert_eq(cfg.n, 0);
    cr_assert_eq(cfg.vlo, 60000);
    cr_assert_not(pmu_parse("values,values", &cfg, err, sizeof err));
    cr_assert_not(pmu_parse("values:10", &cfg, err, sizeof err));
    cr_assert(pmu_parse("cycles", &cfg, err, sizeof err), "%s", err);
    cr_assert_not(cfg.values);
}

typedef struct vsink_log {
    sink_log s;
    uint64_t values;
} vsink_log;

static void vsink(void *ctx, int cpuno, uint64_t pc)
{
    vsink_log *l = ctx;
    (void)cpuno;
    (void)pc;
    l->values++;
}

static void both(void *ctx, int cpuno, uint64_t pc, int ev)
{
    sink(&((vsink_log *)ctx)->s, cpuno, pc, ev);
}

/* The values clock runs beside the cycle counter without moving its
 * samples, and interrupts once per period. */
Test(values, own_clock)
{
    uint32_t body[] = { MEM("ldq", 1, 0, 2), OPR("addq", 1, 1, 3), OPI("addq", 2, 8, 2), BRA("bne", 5, -4) };
    vsink_log a = { 0 }, b = { 0 };
    char err[256];
    pmu_config cfg;
    stream s1, s2;
    start(&s1, NULL);
    cr_assert(pmu_parse("cycles:1000", &cfg, err, sizeof err), "%s", err);
    cfg.skid = 6;
    pmu *u1 = pmu_new(&cfg, 0, s1.c, both, &a);
    loop(&s1, body, 4, 20000, far_ea);
    start(&s2, NULL);
    cr_assert(pmu_parse("cycles:1000,values:3000", &cfg, err, sizeof err), "%s", err);
    cfg.skid = 6;
    pmu *u2 = pmu_new(&cfg, 0, s2.c, both, &b);
    pmu_set_values_sink(u2, vsink);
    loop(&s2, body, 4, 20000, far_ea);
    cr_assert_eq(a.s.n[CEV_CYCLES], b.s.n[CEV_CYCLES]);
    cr_assert_eq(memcmp(a.s.at_pc, b.s.at_pc, sizeof a.s.at_pc), 0);
    double want = (double)st(&s2)->cycles / 3000;
    cr_assert(b.values > 0.97 * want && b.values < 1.03 * want, "%lu interrupts, %.0f expected",
              (unsigned long)b.values, want);
    pmu_stats ps;
    pmu_get_stats(u2, &ps);
    cr_assert_eq(ps.values, b.values);
    pmu_free(u1);
    pmu_free(u2);
    cycles_free(s1.c);
    cycles_free(s2.c);
}

static uint64_t same_ea(int word, long iter) { (void)word; (void)iter; return 0x140000000ULL; }

/* Loads note their latency and level: one line again and again hits the
 * D-cache after the first miss; a new line each time goes to memory. */
Test(values, load_latencies)
{
    uint32_t body[] = { MEM("ldq", 1, 0, 2), OPR("addq", 1, 1, 3), OPI("addq", 2, 8, 2), BRA("bne", 5, -4) };
    cycles_load log[CYCLES_BLOCK_MAX];
    stream s;
    start(&s, NULL);
    cycles_loads_log(s.c, log);
    loop(&s, body, 4, 1, same_ea);
    cr_assert_eq(cycles_loads_take(s.c), 1);
    cr_assert_eq(log[0].pc, BASE);
    cr_assert_eq(log[0].level, CLVL_MEMORY);
    cr_assert_geq(log[0].latency, s.p.scache.latency + s.p.mem_latency);
    loop(&s, body, 4, 3, same_ea);
    cr_assert_eq(cycles_loads_take(s.c), 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(log[i].level, CLVL_DCACHE);
        cr_assert_eq(log[i].latency, s.p.dcache.latency);
    }
    loop(&s, body, 4, 3, far_ea);
    cr_assert_eq(cycles_loads_take(s.c), 3);
    cr_assert_eq(log[2].level, CLVL_MEMORY);
    cycles_loads_log(s.c, NULL);
    loop(&s, body, 4, 3, far_ea);
    cr_assert_eq(cycles_loads_take(s.c), 0);
    cycles_free(s.c);
}

/* Charged cycles delay what comes next by as much. */
Test(values, charge)
{
    uint32_t body[] = { OPR("addq", 1, 1, 3), OPI("addq", 2, 8, 2), BRA("bne", 5, -3) };
    stream a, b;
    start(&a, NULL);
    start(&b, NULL);
    loop(&a, body, 3, 100, NULL);
    loop(&b, body, 3, 100, NULL);
    cycles_charge(b.c, 5000);
    loop(&a, body, 3, 100, NULL);
    loop(&b, body, 3, 100, NULL);
    uint64_t d = st(&b)->cycles - st(&a)->cycles;
    cr_assert(d >= 5000 && d <= 5000 + 2 * (uint64_t)a.p.taken_bubble + 2, "%lu more cycles", (unsigned long)d);
    /* (as a stall of the handler's: the taken-branch bubble it covers is not one) */
    uint64_t sys = st(&b)->stalls[ST_SYSCALL] - st(&a)->stalls[ST_SYSCALL];
    cr_assert(sys >= 5000 && sys <= d + 16, "%lu syscall stall, %lu more cycles", (unsigned long)sys,
              (unsigned long)d);
    cycles_free(a.c);
    cycles_free(b.c);
}
