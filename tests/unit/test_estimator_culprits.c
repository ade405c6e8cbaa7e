/*
 * Unit tests of the stall culprits (estimator/culprits.h) on hand-made
 * blocks: the multiplier and divider as dynamic causes, and event samples
 * ruling causes out.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/ev5.h"
#include "alpha/sched.h"
#include "cfg/cfg.h"
#include "estimator/culprits.h"
#include "estimator/freq.h"

enum { BASE = 0x120001000, MAXN = 8 };

/* One procedure of one block holding words, run F times, with samples
 * per instruction at period P. */
typedef struct world {
    uint8_t bytes[4 * MAXN];
    image_section sec;
    const image_section *code[1];
    cfg_block block;
    cfg_proc proc;
    cfg_program cfg;
    alpha_sched_slot slots[MAXN];
    double samples[MAXN];
    est_block_sched bs;
    est_proc_sched ps;
    est_sched sched;
    est_freq *freq;
} world;

static void build(world *w, const uint32_t *words, uint32_t n, double F, const double *samples)
{
    memset(w, 0, sizeof *w);
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            w->bytes[4 * i + k] = (uint8_t)(words[i] >> (8 * k));
    w->sec = (image_section){ .name = ".text", .addr = BASE, .size = 4 * n, .data = w->bytes };
    w->code[0] = &w->sec;
    w->block = (cfg_block){ .start = BASE, .end = BASE + 4 * n };
    w->proc = (cfg_proc){ .name = "f", .start = BASE, .end = BASE + 4 * n, .nblocks = 1, .blocks = &w->block };
    w->cfg = (cfg_program){ .nprocs = 1, .procs = &w->proc, .ncode = 1, .code = w->code };
    ev5_params p;
    ev5_defaults(&p);
    char err[256];
    alpha_sched *s = alpha_sched_new(&p, err, sizeof err);
    cr_assert(s, "%s", err);
    cr_assert(alpha_sched_words(s, words, n, BASE, w->slots));
    alpha_sched_free(s);
    memcpy(w->samples, samples, n * sizeof *samples);
    w->bs = (est_block_sched){ .n = n, .slots = w->slots, .samples = w->samples };
    w->ps = (est_proc_sched){ .nblocks = 1, .blocks = &w->bs };
    w->sched = (est_sched){ .nprocs = 1, .procs = &w->ps };
    cr_assert((w->freq = est_freq_new(&w->cfg)));
    w->freq->procs[0].block[0] = F;
    for (uint32_t i = 0; i < n; i++)
        w->freq->procs[0].samples += samples[i];
}

#define HAS(c, k) (((c).causes >> (k)) & 1)

Test(estimator_culprits, first_multiply_may_find_the_multiplier_busy)
{
    /* mulq $1,$2,$3; mulq $4,$5,$6; addq $7,$8,$9; divt $f1,$f2,$f3 */
    static const uint32_t words[] = { 0x4c220403, 0x4c850406, 0x40e80409, 0x5822b463 };
    static const double samples[] = { 50, 50, 1, 50 };
    world w;
    build(&w, words, 4, 1000, samples);
    est_culprits *c = est_culprits_find(&w.cfg, w.freq, &w.sched, 1000);
    cr_assert(c);
    const est_culprit *r = c->blocks[0][0];
    cr_expect(w.slots[0].unit_livein && !w.slots[1].unit_livein);
    cr_expect(r[0].stall > 0 && r[1].stall > 0);
    cr_expect(HAS(r[0], EST_DYN_MULTIPLIER), "the first multiply: %x", r[0].causes);
    cr_expect(!HAS(r[1], EST_DYN_MULTIPLIER), "the second waits on the first, statically: %x", r[1].causes);
    cr_expect(!HAS(r[2], EST_DYN_MULTIPLIER));
    cr_expect(HAS(r[3], EST_DYN_DIVIDER) && !HAS(r[3], EST_DYN_MULTIPLIER), "%x", r[3].causes);
    char buf[128];
    cr_expect(strstr(est_causes_text(r[0].causes, buf, sizeof buf), "multiplier"), "%s", buf);
    est_culprits_free(c);
    est_freq_free(w.freq);
}

/* A block entered by a jump whose first instruction stalled 10M cycles:
 * icache, itb and jump_mispredict are its candidates. */
static est_culprits *stalled(world *w)
{
    static const uint32_t words[] = { 0x40e80409, 0x40e80409 };
    static const double samples[] = { 5000, 1 };
    build(w, words, 2, 1000, samples);
    w->block.flags = CFG_BF_ENTRY;
    est_culprits *c = est_culprits_find(&w->cfg, w->freq, &w->sched, 2000);
    cr_assert(c);
    const est_culprit *r = c->blocks[0][0];
    cr_assert(r[0].stall > 9e6);
    cr_assert(HAS(r[0], EST_DYN_ICACHE) && HAS(r[0], EST_DYN_ITB) && HAS(r[0], EST_DYN_JUMP_MISPREDICT));
    return c;
}

Test(estimator_culprits, event_samples_rule_causes_out)
{
    world w;
    est_culprits *c = stalled(&w);
    uint64_t addr[1] = { BASE };
    double count[EST_EV_COUNT] = { 0 };
    est_events ev = { .n = 1, .addr = addr, .count = count };
    /* no event sampled: nothing changes */
    cr_expect_eq(est_culprits_bound(c, &w.cfg, &w.sched, &ev, NULL), 0);
    cr_expect_eq(est_culprits_bound(c, &w.cfg, &w.sched, NULL, NULL), 0);
    /* imiss and jsrmp sampled, none here: at most 3 samples' worth of
     * misses (about 1.9M cycles at 4096 a sample), too few for 10M */
    ev.period[EST_EV_IMISS] = ev.period[EST_EV_JSRMP] = 4096;
    cr_expect_eq(est_culprits_bound(c, &w.cfg, &w.sched, &ev, NULL), 2);
    const est_culprit *r = c->blocks[0][0];
    cr_expect(!HAS(r[0], EST_DYN_ICACHE) && !HAS(r[0], EST_DYN_JUMP_MISPREDICT), "%x", r[0].causes);
    cr_expect(HAS(r[0], EST_DYN_ITB), "itbmiss was not sampled: %x", r[0].causes);
    est_culprits_free(c);
    est_freq_free(w.freq);
}

Test(estimator_culprits, enough_samples_keep_the_cause)
{
    world w;
    est_culprits *c = stalled(&w);
    /* 20 imiss samples stand for some 82,000 misses, enough for 10M
     * cycles; the jsrmp samples sit on another procedure */
    uint64_t addr[2] = { BASE, BASE + 0x1000 };
    double count[2 * EST_EV_COUNT] = { 0 };
    count[EST_EV_IMISS] = 20;
    count[EST_EV_COUNT + EST_EV_JSRMP] = 1000;
    est_events ev = { .n = 2, .addr = addr, .count = count };
    ev.period[EST_EV_IMISS] = ev.period[EST_EV_JSRMP] = 4096;
    cr_expect_eq(est_culprits_bound(c, &w.cfg, &w.sched, &ev, NULL), 1);
    const est_culprit *r = c->blocks[0][0];
    cr_expect(HAS(r[0], EST_DYN_ICACHE), "%x", r[0].causes);
    cr_expect(!HAS(r[0], EST_DYN_JUMP_MISPREDICT), "%x", r[0].causes);
    est_culprits_free(c);
    est_freq_free(w.freq);
}

/* A mispredict's sample lands up to pmu_skid instructions before the stall
 * it caused (the skid), and still counts for it. */
Test(estimator_culprits, skid_window_looks_back)
{
    static const uint32_t words[] = { 0x40e80409, 0x40e80409, 0x40e80409, 0x40e80409 };
    static const double samples[] = { 1, 1, 1, 500 };
    world w;
    build(&w, words, 4, 1000, samples);
    est_culprits *c = est_culprits_find(&w.cfg, w.freq, &w.sched, 2000);
    cr_assert(c);
    est_culprit *r = c->blocks[0][0];
    r[3].causes = 1u << EST_DYN_BRANCH_MISPREDICT;   /* as if it followed a branch */
    uint64_t addr[1] = { BASE };
    double count[EST_EV_COUNT] = { 0 };
    count[EST_EV_BRANCHMP] = 100;
    est_events ev = { .n = 1, .addr = addr, .count = count };
    ev.period[EST_EV_BRANCHMP] = 4096;
    cr_expect_eq(est_culprits_bound(c, &w.cfg, &w.sched, &ev, NULL), 0);
    cr_expect(HAS(r[3], EST_DYN_BRANCH_MISPREDICT));
    addr[0] = BASE + 0x100;      /* far away: not its samples */
    cr_expect_eq(est_culprits_bound(c, &w.cfg, &w.sched, &ev, NULL), 1);
    est_culprits_free(c);
    est_freq_free(w.freq);
}
