/*
 * The optimizer's passes on hand-made CFGs and frequencies: chains turn the
 * hot edges into fall-throughs, glue holds, the split sends what never ran
 * by the estimate (whatever its confidence) to the cold area and nothing
 * that ran, hot loop heads and jump-table targets are aligned only where no
 * path runs the padding, the cost model counts bubbles, and a lukewarm
 * procedure joins only a call-affinity group that fits the I-cache.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/internal.h"

#define NB 6
#define NE 16

/* A procedure of NB blocks of 4 instructions at 0x1000 + 16*b; edges added
 * with edge(); finish() fills the per-block edge lists. */
typedef struct fixture {
    cfg_proc p;
    cfg_block b[NB];
    cfg_edge e[NE];
    uint32_t out[NE], in[NE];
    cfg_loop loop;
    double bf[NB], ef[NE];
    uint8_t bc[NB], ec[NE];
    est_proc_freq fp;
} fixture;

static void init(fixture *f, size_t nb)
{
    memset(f, 0, sizeof *f);
    f->p.nblocks = nb;
    f->p.blocks = f->b;
    f->p.edges = f->e;
    f->p.out_edges = f->out;
    f->p.in_edges = f->in;
    f->p.start = 0x1000;
    for (size_t i = 0; i < nb; i++) {
        f->b[i].start = 0x1000 + 16 * i;
        f->b[i].end = f->b[i].start + 16;
        f->b[i].loop = CFG_NONE;
        f->bc[i] = EST_CONF_EXACT;
    }
    f->b[0].flags = CFG_BF_ENTRY;
    for (size_t i = 0; i < NE; i++)
        f->ec[i] = EST_CONF_EXACT;
    f->fp = (est_proc_freq){ .block = f->bf, .block_conf = f->bc, .edge = f->ef, .edge_conf = f->ec };
}

static void edge(fixture *f, uint32_t from, uint32_t to, cfg_edge_kind k, double w)
{
    size_t i = f->p.nedges++;
    f->e[i] = (cfg_edge){ .from = from, .to = to, .kind = (uint8_t)k };
    f->ef[i] = w;
}

static void finish(fixture *f)
{
    uint32_t no = 0, ni = 0;
    for (uint32_t b = 0; b < f->p.nblocks; b++) {
        f->b[b].first_out = no;
        f->b[b].first_in = ni;
        for (uint32_t i = 0; i < f->p.nedges; i++) {
            if (f->e[i].from == b)
                f->out[no++] = i, f->b[b].nout++;
            if (f->e[i].to == b)
                f->in[ni++] = i, f->b[b].nin++;
        }
    }
}

static size_t pos(const opt_proc_layout *L, uint32_t b)
{
    for (size_t i = 0; i < L->n; i++)
        if (L->order[i] == b)
            return i;
    cr_assert_fail("block %u not laid out", b);
    return 0;
}

static void layout_free(opt_proc_layout *L)
{
    free(L->order);
    free(L->align);
}

/* 0: cond, taken to 2 (990 times), falls to 1 (10); 1 -> 3; 2 -> 3;
 * 3 returns; 4 never runs (reached from 1 on an error path). */
static void diamond(fixture *f)
{
    init(f, 5);
    f->bf[0] = 1000, f->bf[1] = 10, f->bf[2] = 990, f->bf[3] = 1000, f->bf[4] = 0;
    edge(f, 0, 2, CFG_EDGE_TAKEN, 990);
    edge(f, 0, 1, CFG_EDGE_FALL, 10);
    edge(f, 1, 3, CFG_EDGE_TAKEN, 10);
    edge(f, 1, 4, CFG_EDGE_FALL, 0);
    edge(f, 2, 3, CFG_EDGE_FALL, 990);
    edge(f, 3, CFG_EXIT, CFG_EDGE_RETURN, 1000);
    edge(f, 4, 3, CFG_EDGE_FALL, 0);
    finish(f);
}

/* 0 calls (links) and returns to 1; 1 is rarely taken to 2, the hot path
 * goes 0 -> 1 -> 3; a chain must never separate 0 and 1. */
static void glued(fixture *f)
{
    init(f, 4);
    f->b[0].flags |= CFG_BF_LINKS;
    f->bf[0] = 100, f->bf[1] = 100, f->bf[2] = 100, f->bf[3] = 100;
    edge(f, 0, 1, CFG_EDGE_FALL, 100);
    edge(f, 1, 2, CFG_EDGE_FALL, 0);
    edge(f, 1, 3, CFG_EDGE_TAKEN, 100);
    edge(f, 3, 2, CFG_EDGE_TAKEN, 100);
    edge(f, 2, CFG_EXIT, CFG_EDGE_RETURN, 100);
    finish(f);
}

static void diamond_layout(bool exttsp);

/* Pettis-Hansen's chains and ext-TSP's agree on the diamond. */
Test(optimizer, hot_edges_fall_through_and_never_run_code_goes_cold)
{
    for (int exttsp = 0; exttsp < 2; exttsp++)
        diamond_layout(exttsp);
}

static void diamond_layout(bool exttsp)
{
    fixture f;
    diamond(&f);
    opt_options o = { .exttsp = exttsp };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.n, 5);
    cr_assert_eq(L.order[0], 0, "entry first");
    cr_assert_eq(pos(&L, 2), 1, "the 990-times successor falls through");
    cr_assert_eq(pos(&L, 3), 2);
    cr_assert_eq(L.split, 4, "only block 4 is cold");
    cr_assert_eq(L.order[4], 4);
    ev5_params ev5;
    ev5_defaults(&ev5);
    uint32_t orig[] = { 0, 1, 2, 3, 4 };
    double before = opt_fetch_cost(&f.p, &f.fp, orig, 5, &ev5);
    double after = opt_fetch_cost(&f.p, &f.fp, L.order, L.split, &ev5) +
                   opt_fetch_cost(&f.p, &f.fp, L.order + L.split, L.n - L.split, &ev5);
    /* Before: 990 taken at 0, 10 taken at 1, 990 fall 2->3 is next: 1000.
     * After: 0 falls to 2, 2 to 3; 1 is reached taken (10) and branches
     * to 3 (10): 20. */
    cr_assert_float_eq(before, 1000 * ev5.taken_bubble, 1e-9, "%f", before);
    cr_assert_float_eq(after, 20 * ev5.taken_bubble, 1e-9, "%f", after);
    layout_free(&L);
}

Test(optimizer, unsampled_code_is_cold_and_no_split_keeps_it_hot)
{
    fixture f;
    diamond(&f);
    f.bc[4] = EST_CONF_LOW;          /* a zero from samples: never sampled */
    opt_options o = { 0 };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, 4, "a zero of low confidence goes to the cold area too");
    cr_assert_eq(L.order[4], 4);
    cr_assert_eq(L.n, 5);
    layout_free(&L);
    f.bf[4] = 1e-3;                  /* ran, however rarely: stays hot */
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, PLAN_NOSPLIT);
    layout_free(&L);
    f.bf[4] = 0;
    o.no_split = true;
    f.bc[4] = EST_CONF_EXACT;
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, PLAN_NOSPLIT);
    layout_free(&L);
}

Test(optimizer, warm_code_follows_the_hot_and_splits_only_when_asked)
{
    fixture f;
    diamond(&f);
    f.bf[1] = 1, f.ef[1] = 1, f.ef[2] = 1;      /* block 1: warm (1 in 1000) */
    f.bf[2] = 999, f.ef[0] = 999, f.ef[4] = 999;
    opt_options o = { 0 };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert(pos(&L, 1) > pos(&L, 3), "warm block after the hot ones");
    cr_assert_eq(L.split, 4);
    layout_free(&L);
    o.split_warm = true;
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, 3, "warm block 1 and cold block 4 both cold");
    cr_assert(pos(&L, 1) >= L.split);
    layout_free(&L);
}

Test(optimizer, glue_after_a_call_holds)
{
    fixture f;
    glued(&f);
    opt_options o = { 0 };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(pos(&L, 1), pos(&L, 0) + 1);
    cr_assert_eq(pos(&L, 3), 2, "1's hot successor 3 falls through");
    cr_assert_eq(pos(&L, 2), 3);
    layout_free(&L);
}

Test(optimizer, loop_heads_aligned_only_where_no_path_runs_the_padding)
{
    /* 0 -> 1 (loop head) -> 2 -> back to 1 (taken), exit from 2 to 3. */
    fixture f;
    init(&f, 4);
    f.p.nloops = 1;
    f.p.loops = &f.loop;
    f.loop = (cfg_loop){ .header = 1, .parent = CFG_NONE, .depth = 1, .nblocks = 2 };
    f.b[1].loop = f.b[2].loop = 0;
    f.bf[0] = 10, f.bf[1] = 100000, f.bf[2] = 100000, f.bf[3] = 10;
    edge(&f, 0, 1, CFG_EDGE_FALL, 10);
    edge(&f, 1, 2, CFG_EDGE_FALL, 100000);
    edge(&f, 2, 1, CFG_EDGE_TAKEN, 99990);
    edge(&f, 2, 3, CFG_EDGE_FALL, 10);
    edge(&f, 3, CFG_EXIT, CFG_EDGE_RETURN, 10);
    finish(&f);
    ev5_params ev5;
    ev5_defaults(&ev5);
    opt_options o = { 0 };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    opt_align_proc(&f.p, &f.fp, &ev5, &L, 100000);
    /* 0 falls into 1: padding there would run every time 0 does. */
    cr_assert_eq(L.align[pos(&L, 1)], 0);
    layout_free(&L);
    /* If 0 instead ends in a branch elsewhere and 1 is reached only by jumps,
     * the padding costs nothing on the way in. */
    f.e[0] = (cfg_edge){ .from = 0, .to = 3, .kind = CFG_EDGE_TAKEN };
    f.p.edges[0].to = 3;
    finish(&f);
    L = (opt_proc_layout){ 0 };
    uint32_t order[] = { 0, 1, 2, 3 };
    L.order = malloc(sizeof order);
    L.align = calloc(4, sizeof *L.align);
    memcpy(L.order, order, sizeof order);
    L.n = 4;
    L.split = PLAN_NOSPLIT;
    opt_align_proc(&f.p, &f.fp, &ev5, &L, 100000);
    cr_assert_eq(L.align[1], ev5.fetch_block);
    layout_free(&L);
}

Test(optimizer, hot_jump_table_targets_aligned)
{
    /* 0 dispatches through a table to 1, 2 and 3, each of which jumps back:
     * an interpreter's loop.  1 and 2 run often, 3 under 1/64 as often as
     * the dispatch. */
    fixture f;
    init(&f, 4);
    f.b[0].flags |= CFG_BF_TABLE;
    f.bf[0] = 100000, f.bf[1] = 60000, f.bf[2] = 39000, f.bf[3] = 1000;
    edge(&f, 0, 1, CFG_EDGE_TABLE, 60000);
    edge(&f, 0, 2, CFG_EDGE_TABLE, 39000);
    edge(&f, 0, 3, CFG_EDGE_TABLE, 1000);
    edge(&f, 1, 0, CFG_EDGE_TAKEN, 60000);
    edge(&f, 2, 0, CFG_EDGE_TAKEN, 39000);
    edge(&f, 3, 0, CFG_EDGE_TAKEN, 1000);
    finish(&f);
    ev5_params ev5;
    ev5_defaults(&ev5);
    uint32_t order[] = { 0, 3, 1, 2 };
    opt_proc_layout L = { .n = 4, .split = PLAN_NOSPLIT };
    L.order = malloc(sizeof order);
    L.align = calloc(4, sizeof *L.align);
    memcpy(L.order, order, sizeof order);
    opt_align_proc(&f.p, &f.fp, &ev5, &L, 100000);
    cr_assert_eq(L.align[1], 0, "3 runs too rarely to pay for padding");
    cr_assert_eq(L.align[2], ev5.fetch_block, "1 is entered by the jump alone");
    cr_assert_eq(L.align[3], ev5.fetch_block);
    /* Laid out right after the dispatch, a target is not aligned: the rule
     * stays the loop heads' (no edge from the block before). */
    uint32_t order2[] = { 0, 1, 2, 3 };
    memcpy(L.order, order2, sizeof order2);
    memset(L.align, 0, 4 * sizeof *L.align);
    opt_align_proc(&f.p, &f.fp, &ev5, &L, 100000);
    cr_assert_eq(L.align[1], 0);
    cr_assert_eq(L.align[2], ev5.fetch_block);
    layout_free(&L);
}

Test(optimizer, unsampled_handlers_of_a_hot_dispatch_stay_hot)
{
    /* 0 dispatches to handlers 1 and 2 (2 falls into 3 on its way back,
     * 3 into 4 on an error path); from samples, 2, 3 and 4 were never hit. */
    fixture f;
    init(&f, 5);
    f.b[0].flags |= CFG_BF_TABLE;
    f.bf[0] = 100000, f.bf[1] = 100000;
    edge(&f, 0, 1, CFG_EDGE_TABLE, 100000);
    edge(&f, 0, 2, CFG_EDGE_TABLE, 0);
    edge(&f, 1, 0, CFG_EDGE_TAKEN, 100000);
    edge(&f, 2, 3, CFG_EDGE_FALL, 0);
    edge(&f, 3, 0, CFG_EDGE_TAKEN, 0);
    edge(&f, 3, 4, CFG_EDGE_FALL, 0);
    finish(&f);
    for (uint32_t b = 2; b < 5; b++)
        f.bc[b] = EST_CONF_LOW;
    opt_options o = { 0 };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, PLAN_NOSPLIT, "the handler and what it reaches stay hot");
    cr_assert(pos(&L, 2) > pos(&L, 1) && pos(&L, 3) > pos(&L, 1), "after the code that ran");
    cr_assert_eq(L.kept, 3);
    cr_assert_eq(L.kept_bytes, 48);
    layout_free(&L);
    /* Asked, or with exact counts (the training never ran it), to the cold area. */
    o.cold_handlers = true;
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, 2);
    cr_assert_eq(L.kept, 0);
    layout_free(&L);
    o.cold_handlers = false;
    f.bc[2] = EST_CONF_EXACT;
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, 2);
    layout_free(&L);
    /* A dispatch that is itself warm marks nothing. */
    f.bc[2] = EST_CONF_LOW;
    f.bf[0] = 100, f.ef[0] = 100;
    f.bf[1] = 100000;                       /* 1 loops on itself, say */
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.split, 2);
    layout_free(&L);
}

Test(optimizer, exttsp_keeps_the_glue)
{
    fixture f;
    opt_options o = { .exttsp = true };
    opt_proc_layout L = { 0 };
    glued(&f);
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(pos(&L, 1), pos(&L, 0) + 1, "glue holds");
    cr_assert_eq(pos(&L, 3), 2);
    cr_assert_eq(pos(&L, 2), 3);
    layout_free(&L);
}

Test(optimizer, exttsp_cuts_a_chain_where_two_fall_throughs_beat_one)
{
    /* 0 branches to 1 (100 times) or 2 (80); 2 goes on to 1 (80); 1
     * returns.  Pettis-Hansen makes 0 -> 1 fall through first and 2 cannot
     * get in; ext-TSP cuts [0 1] for 2: two fall-throughs (160) and a short
     * jump (about 9.8) against one (100). */
    fixture f;
    init(&f, 3);
    f.bf[0] = 180, f.bf[1] = 180, f.bf[2] = 80;
    edge(&f, 0, 1, CFG_EDGE_TAKEN, 100);
    edge(&f, 0, 2, CFG_EDGE_FALL, 80);
    edge(&f, 2, 1, CFG_EDGE_TAKEN, 80);
    edge(&f, 1, CFG_EXIT, CFG_EDGE_RETURN, 180);
    finish(&f);
    opt_options o = { 0 };
    opt_proc_layout L = { 0 };
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.order[1], 1, "Pettis-Hansen: 0 then 1");
    layout_free(&L);
    o.exttsp = true;
    cr_assert(opt_chain_proc(&f.p, &f.fp, &o, &L));
    cr_assert_eq(L.n, 3);
    cr_assert_eq(L.order[0], 0);
    cr_assert_eq(L.order[1], 2, "ext-TSP: 0, 2, 1");
    cr_assert_eq(L.order[2], 1);
    layout_free(&L);
}

/* The I-cache model: a loop 0 -> 1 <-> 2 (1000 turns), 2 -> 3 returns.
 * Blocks 1 and 2 each on a line of their own: 8 KB apart they take a
 * set in turn and miss on every visit; side by side they never miss once
 * the cache is warm. */
static void model_loop(fixture *f)
{
    init(f, 4);
    f->bf[0] = 1, f->bf[1] = 1000, f->bf[2] = 1000, f->bf[3] = 1;
    edge(f, 0, 1, CFG_EDGE_FALL, 1);
    edge(f, 1, 2, CFG_EDGE_FALL, 1000);
    edge(f, 2, 1, CFG_EDGE_TAKEN, 999);
    edge(f, 2, 3, CFG_EDGE_FALL, 1);
    edge(f, 3, CFG_EXIT, CFG_EDGE_RETURN, 1);
    finish(f);
}

Test(optimizer, icache_model_sees_two_lines_of_a_loop_on_one_set)
{
    fixture f;
    model_loop(&f);
    cfg_program prog = { .nprocs = 1, .procs = &f.p };
    est_freq ef = { .cfg = &prog, .procs = &f.fp };
    opt_options o = { 0 };
    opt_trace t;
    cr_assert(opt_trace_make(&prog, &ef, &o, 32, 256, 100000, &t));
    cr_assert_eq(t.nblocks, 4);
    uint64_t addr[4] = { 0x1000, 0x1020, 0x1040, 0x1060 };
    uint32_t size[4] = { 16, 16, 16, 16 };
    double apart = opt_trace_misses(&t, addr, size, 32, 256);
    addr[2] = 0x3020;                 /* 8 KB after block 1: the same set */
    double clash = opt_trace_misses(&t, addr, size, 32, 256);
    /* scaled to the profile: 2002 line executions in all, nearly every
     * one of blocks 1 and 2 a miss when they share the set */
    cr_assert(apart >= 0 && apart < 20, "apart: %f", apart);
    cr_assert(clash > 1800 && clash < 2100, "clash: %f", clash);
    /* the same profile draws the same walk */
    opt_trace t2;
    cr_assert(opt_trace_make(&prog, &ef, &o, 32, 256, 100000, &t2));
    cr_assert_eq(t.n, t2.n);
    cr_assert(!memcmp(t.v, t2.v, t.n * sizeof *t.v));
    opt_trace_free(&t);
    opt_trace_free(&t2);
}

/* Runs apart: a loop head 0 goes to 1 and back in run A, to 2 and back in
 * run B (999 turns each), and 1 and 2 share a set.  Walked as one sum the
 * two take turns at random and miss on about half the turns; walked run
 * by run each keeps its line. */
static void model_runs(fixture *f, double to1, double to2)
{
    init(f, 4);
    f->bf[0] = 1000, f->bf[1] = to1, f->bf[2] = to2, f->bf[3] = 1;
    edge(f, 0, 1, CFG_EDGE_TABLE, to1);
    edge(f, 0, 2, CFG_EDGE_TABLE, to2);
    edge(f, 0, 3, CFG_EDGE_TABLE, 1);
    edge(f, 1, 0, CFG_EDGE_TAKEN, to1);
    edge(f, 2, 0, CFG_EDGE_TAKEN, to2);
    edge(f, 3, CFG_EXIT, CFG_EDGE_RETURN, 1);
    finish(f);
}

Test(optimizer, icache_model_walks_runs_apart)
{
    fixture a, b, sum;
    model_runs(&a, 999, 0);
    model_runs(&b, 0, 999);
    model_runs(&sum, 999, 999);
    sum.bf[0] = 2000, sum.bf[3] = 2, sum.ef[2] = 2, sum.ef[5] = 2;
    cfg_program prog = { .nprocs = 1, .procs = &a.p };
    est_freq fa = { .cfg = &prog, .procs = &a.fp }, fb = { .cfg = &prog, .procs = &b.fp },
             fs = { .cfg = &prog, .procs = &sum.fp };
    const est_freq *runs[2] = { &fa, &fb };
    uint64_t addr[4] = { 0x1000, 0x1020, 0x3020, 0x1060 };
    uint32_t size[4] = { 16, 16, 16, 16 };
    opt_options one = { 0 }, apart = { .runs = runs, .nruns = 2 };
    opt_trace t1, t2;
    cr_assert(opt_trace_make(&prog, &fs, &one, 32, 256, 100000, &t1));
    cr_assert(opt_trace_make(&prog, &fs, &apart, 32, 256, 100000, &t2));
    double m1 = opt_trace_misses(&t1, addr, size, 32, 256), m2 = opt_trace_misses(&t2, addr, size, 32, 256);
    cr_assert(m1 > 800 && m1 < 1200, "one walk: %f", m1);
    cr_assert(m2 < 20, "runs apart: %f", m2);
    opt_trace_free(&t1);
    opt_trace_free(&t2);
}

/* Procedure k of the group tests: one block of four instructions at
 * 0x10000 * (k + 1) that ran n times; or, as a caller, an entry block that
 * calls B from its second block n times and returns from a third, and with
 * big a fourth block of 8 KB that ran once (hot, so the caller's hot part
 * outgrows the I-cache). */
static void proc_at(fixture *f, uint32_t k, double n, bool caller, bool big)
{
    init(f, caller ? (big ? 4 : 3) : 1);
    uint64_t base = 0x10000 * (uint64_t)(k + 1);
    f->p.start = base;
    for (size_t i = 0; i < f->p.nblocks; i++) {
        f->b[i].start = base + 16 * i;
        f->b[i].end = f->b[i].start + (i == 3 ? 8192 : 16);
    }
    f->p.end = f->b[f->p.nblocks - 1].end;
    if (caller) {
        f->bf[0] = 1000000, f->bf[1] = n, f->bf[2] = 1000000;
        edge(f, 0, 1, CFG_EDGE_FALL, n);
        edge(f, 0, 2, CFG_EDGE_TAKEN, 1000000 - n - big);
        edge(f, 1, 2, CFG_EDGE_FALL, n);
        edge(f, 2, CFG_EXIT, CFG_EDGE_RETURN, 1000000);
        if (big) {
            f->bf[3] = 1;
            edge(f, 0, 3, CFG_EDGE_TAKEN, 1);
            edge(f, 3, 2, CFG_EDGE_TAKEN, 1);
        }
        f->b[1].flags |= CFG_BF_CALLS;
    } else {
        f->bf[0] = n;
        edge(f, 0, CFG_EXIT, CFG_EDGE_RETURN, n);
    }
    finish(f);
}

/* opt_plan, default options, on the n procedures of f[] as one program. */
static void plan_of(const fixture *f, size_t n, plan *pl, opt_result *res)
{
    cfg_proc procs[3];
    est_proc_freq fps[3];
    cr_assert_leq(n, 3);
    for (size_t k = 0; k < n; k++)
        procs[k] = f[k].p, fps[k] = f[k].fp;
    cfg_program prog = { .nprocs = n, .procs = procs };
    est_freq ef = { .cfg = &prog, .procs = fps };
    opt_options o = { 0 };
    char err[128];
    cr_assert(opt_plan(&prog, &ef, &o, pl, res, err, sizeof err), "%s", err);
}

/* The order opt_plan gives A (the hottest, calling B), B (1.5/10,000 of
 * the instructions: hot, but lukewarm) and D (as lukewarm, denser than B,
 * called by nobody), as indices 0, 1, 2. */
static void group_order(bool big, uint32_t order[3])
{
    fixture f[3];
    proc_at(&f[0], 0, 300, true, big);  /* A */
    proc_at(&f[1], 1, 300, false, false);
    proc_at(&f[2], 2, 400, false, false);
    cfg_call call = { .site = f[0].b[1].start + 12, .target = f[1].p.start, .block = 1 };
    f[0].p.calls = &call, f[0].p.ncalls = 1;
    plan pl;
    opt_result res;
    plan_of(f, 3, &pl, &res);
    cr_assert_eq(pl.nprocs, 3);
    for (size_t k = 0; k < 3; k++)
        order[k] = (uint32_t)(pl.procs[k].addr / 0x10000 - 1);
    plan_free(&pl);
    opt_result_free(&res);
}

/* A lukewarm callee joins its caller's group while the two fit the
 * I-cache, and follows the groups by density (after D) when the caller's
 * hot part alone outgrows it. */
Test(optimizer, lukewarm_callees_join_only_groups_that_fit_the_cache)
{
    uint32_t small[3], big[3];
    group_order(false, small);
    group_order(true, big);
    cr_assert(small[0] == 0 && small[1] == 1 && small[2] == 2, "fits: %u %u %u", small[0],
              small[1], small[2]);
    cr_assert(big[0] == 0 && big[1] == 2 && big[2] == 1, "outgrown: %u %u %u", big[0], big[1],
              big[2]);
}

/* The dispatch of unsampled_handlers_of_a_hot_dispatch_stay_hot as a second
 * procedure, run n times, beside a hot one of 4,000,000 instructions: the
 * handlers no sample hit stay hot while the procedure holds at least
 * OPT_GROUP_SHARE of the instructions, and go cold below it. */
static double kept_beside(double n)
{
    fixture f[2];
    init(&f[0], 1);
    f[0].p.start = 0x10000;
    f[0].b[0].start = 0x10000, f[0].b[0].end = 0x10010;
    f[0].p.end = 0x10010;
    f[0].bf[0] = 1000000;
    edge(&f[0], 0, CFG_EXIT, CFG_EDGE_RETURN, 1000000);
    finish(&f[0]);
    init(&f[1], 5);
    f[1].p.start = 0x20000;
    for (size_t i = 0; i < 5; i++) {
        f[1].b[i].start = 0x20000 + 16 * i;
        f[1].b[i].end = f[1].b[i].start + 16;
    }
    f[1].p.end = f[1].b[4].end;
    f[1].b[0].flags |= CFG_BF_TABLE;
    f[1].bf[0] = n, f[1].bf[1] = n;
    edge(&f[1], 0, 1, CFG_EDGE_TABLE, n);
    edge(&f[1], 0, 2, CFG_EDGE_TABLE, 0);
    edge(&f[1], 1, 0, CFG_EDGE_TAKEN, n);
    edge(&f[1], 2, 3, CFG_EDGE_FALL, 0);
    edge(&f[1], 3, 0, CFG_EDGE_TAKEN, 0);
    edge(&f[1], 3, 4, CFG_EDGE_FALL, 0);
    finish(&f[1]);
    for (uint32_t b = 2; b < 5; b++)
        f[1].bc[b] = EST_CONF_LOW;
    plan pl;
    opt_result res;
    plan_of(f, 2, &pl, &res);
    double kept = res.kept_bytes;
    plan_free(&pl);
    opt_result_free(&res);
    return kept;
}

Test(optimizer, a_rarely_run_dispatch_keeps_no_unsampled_handlers)
{
    cr_assert_eq(kept_beside(100000), 48, "8/48 of the instructions: its handlers stay hot");
    cr_assert_eq(kept_beside(100), 0, "2/10,000 of them: lukewarm, its handlers go cold");
}
