/*
 * rewriter/instrument.c: the inserted path-counting code, run on a bare
 * axp machine against a data region laid out as rewriter/runtime/rt.h
 * says: pushes, chords, path ends, back edges, the bound check on path
 * sums, and the drop of slots a longjmp left.
 */
#include <criterion/criterion.h>

#include <elf.h>
#include <unistd.h>

#include "rewriter/internal.h"
#include "rewriter/verify.h"
#include "rewriter/runtime/rt.h"
#include "test_machine_harness.h"

#define SLOTS  (DATA + 0x1000)          /* the first slot: below every frame */
#define COUNTS 0x4000                   /* counters' offset in the region */
#define NPATHS 16
#define SP0    0x7000

typedef struct rig {
    bare b;
    rw_instr in;
    rw_iproc ip;
} rig;

static void rig_init(rig *g)
{
    bare_init(&g->b, false);
    memset(&g->in, 0, sizeof g->in);
    g->ip = (rw_iproc){ .proc = 0, .npaths = NPATHS, .counts = COUNTS };
    g->in.ip = &g->ip;
    g->in.nip = 1;
    g->in.blob_addr = CODE;
    /* The blob's words: code starts past them; RT_B_REGABS holds DATA. */
    emit(&g->b, BRA("br", 31, RT_B_SIZE / 4 - 1));
    while (g->b.n < RT_B_SIZE / 4)
        emit(&g->b, 0);
    g->b.code[RT_B_REGABS / 4] = (uint32_t)DATA;
    g->b.code[RT_B_REGABS / 4 + 1] = (uint32_t)(DATA >> 32);
    uint64_t ssp = SLOTS, top = ~0ull >> 1;
    mem_write_force(g->b.p->mm, DATA + RT_SSP, &ssp, 8);
    uint64_t tb = DATA;             /* one thread: the region is its block */
    mem_write_force(g->b.p->mm, DATA + RT_TB, &tb, 8);
    mem_write_force(g->b.p->mm, SLOTS + 16, &top, 8);
    g->b.t->r[30] = SP0;
}

static void op(rig *g, uint8_t kind, int64_t k, int64_t k2)
{
    static const uint8_t reg[3] = { 1, 2, 3 };
    rw_op o = { kind, k, k2, 0 };
    uint64_t pc = CODE + 4ull * (uint64_t)g->b.n;
    uint32_t n = rw_instr_ops_words(&g->in, &o, 1, reg, pc, g->b.code + g->b.n);
    cr_assert_eq(n, rw_instr_ops_words(&g->in, &o, 1, reg, 0, NULL), "size depends on the address");
    g->b.n += (int)n;
}

static uint64_t q(rig *g, uint64_t a)
{
    uint64_t v = 0;
    mem_read(g->b.p->mm, a, &v, 8);
    return v;
}

static void run(rig *g)
{
    bare_run(&g->b);
    cr_assert_eq(bare_stop_signal(&g->b), A_SIGTRAP, "the inserted code faulted");
}

Test(instrument, push_add_end_counts_the_path_and_pops)
{
    rig g;
    rig_init(&g);
    op(&g, RW_OP_PUSH, 5, 0);
    op(&g, RW_OP_ADD, 3, 0);
    op(&g, RW_OP_ADD, -1, 0);
    op(&g, RW_OP_END, 3, 0);
    run(&g);
    for (uint64_t p = 0; p < NPATHS; p++)
        cr_assert_eq(q(&g, DATA + COUNTS + 16 * p), p == 10, "path %llu", (unsigned long long)p);
    cr_assert_eq(q(&g, DATA + RT_SSP), SLOTS, "not popped");
    cr_assert_eq(q(&g, SLOTS + RT_SLOT + 16), SP0, "the slot keeps the entry's sp");
}

Test(instrument, back_edge_counts_and_restarts)
{
    rig g;
    rig_init(&g);
    op(&g, RW_OP_PUSH, 2, 0);
    op(&g, RW_OP_BACK, 1, 4);       /* path 3 ends; the next starts at 4 */
    op(&g, RW_OP_BACK, 1, 4);       /* path 5 */
    op(&g, RW_OP_ADD, 6, 0);
    op(&g, RW_OP_END, 0, 0);        /* path 10 */
    run(&g);
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 3), 1);
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 5), 1);
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 10), 1);
    cr_assert_eq(q(&g, DATA + RT_SSP), SLOTS);
}

Test(instrument, sums_out_of_range_touch_no_counter)
{
    rig g;
    rig_init(&g);
    op(&g, RW_OP_PUSH, NPATHS, 0);
    op(&g, RW_OP_END, 0, 0);
    op(&g, RW_OP_PUSH, 0, 0);
    op(&g, RW_OP_END, -1, 0);       /* a negative sum is a huge unsigned one */
    run(&g);
    for (uint64_t a = COUNTS - 64; a < COUNTS + 16 * NPATHS + 64; a += 8)
        cr_assert_eq(q(&g, DATA + a), 0, "wrote at region + 0x%llx", (unsigned long long)a);
    cr_assert_eq(q(&g, DATA + RT_SSP), SLOTS);
}

Test(instrument, slots_a_longjmp_left_are_dropped)
{
    rig g;
    rig_init(&g);
    op(&g, RW_OP_PUSH, 1, 0);                   /* the caller, at SP0 */
    emit(&g.b, MEM("lda", 30, -64, 30));
    op(&g, RW_OP_PUSH, 7, 0);                   /* a callee, lower */
    emit(&g.b, MEM("lda", 30, -64, 30));
    op(&g, RW_OP_PUSH, 9, 0);                   /* and its callee */
    emit(&g.b, MEM("lda", 30, 128, 30));        /* longjmp back to the caller */
    op(&g, RW_OP_END, 2, 0);                    /* the caller's path 3 */
    run(&g);
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 3), 1, "the caller's path");
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 9), 0);
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 11), 0);
    cr_assert_eq(q(&g, DATA + RT_SSP), SLOTS);
}

/* The calling context tree's entries on their fast path: the first
 * record at the caller's call site is the callee's node (calls grow), or
 * a back edge to it (the back edge counted too); an exit pops. */
Test(instrument, cct_entry_finds_the_child_and_the_back_edge)
{
    rig g;
    rig_init(&g);
    g.in.cct = true;
    g.in.nopaths = true;
    const uint64_t root = DATA + 0x6000, node = DATA + 0x6100, back = DATA + 0x6200;
    uint64_t v;
#define PUTQ(a, x) (v = (x), mem_write_force(g.b.p->mm, (a), &v, 8))
    PUTQ(root + RT_N_NSL, 4);
    PUTQ(root + RT_N_CHILD + 8 * 2, node);
    PUTQ(root + RT_N_CHILD + 8 * 3, back);
    PUTQ(node + RT_N_ID, 1);            /* instrumented procedure 0 */
    PUTQ(node + RT_N_PARENT, root);
    PUTQ(node + RT_N_NSL, 2);
    PUTQ(back + RT_N_ID, 1ull << 63 | 1);
    PUTQ(back + RT_BK_TO, node);
    PUTQ(SLOTS + RT_S_NODE, root);
    PUTQ(SLOTS + RT_S_SITE, 2);
#undef PUTQ
    op(&g, RW_OP_PUSH, 0, 0);
    op(&g, RW_OP_END, 0, 1);
    op(&g, RW_OP_SITE, 3, 0);
    op(&g, RW_OP_PUSH, 0, 0);
    run(&g);
    cr_assert_eq(q(&g, DATA + RT_SSP), SLOTS + RT_CSLOT, "one activation open");
    cr_assert_eq(q(&g, SLOTS + RT_CSLOT + RT_S_NODE), node, "its context");
    cr_assert_eq(q(&g, SLOTS + RT_CSLOT + RT_S_SP), SP0, "the slot keeps the entry's sp");
    cr_assert_eq(q(&g, node + RT_N_CALLS), 2);
    cr_assert_eq(q(&g, back + RT_BK_COUNT), 1);
    cr_assert_eq(q(&g, SLOTS + RT_S_SITE), 3);
}

/* The whole instrumenter on a static program: most procedures counted,
 * every system call hooked, the result verifies against the original, the
 * new segment writable with zero pages after the file's bytes. */
Test(instrument, static_program_verifies)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char in[512], err[512];
    snprintf(in, sizeof in, "%s/programs/bytecode-static", build);
    if (access(in, R_OK))
        cr_skip_test("%s missing: run `make programs`", in);
    image_error ie;
    image *img = image_open(in, &ie);
    cr_assert_not_null(img, "%s", ie.msg);
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    plan pl;
    cr_assert(plan_identity(p, &pl));
    char out[] = "/tmp/cpo-instr-test-XXXXXX";
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    close(fd);
    rw_options o = { .instrument = RW_INSTRUMENT_PATHS };
    rw_stats st;
    cr_assert(rw_rewrite(img, p, &pl, &o, out, &st, err, sizeof err), "%s", err);
    cr_assert_gt(st.ins_procs, st.procs / 2, "%zu of %zu counted", st.ins_procs, st.procs);
    cr_assert_gt(st.hooks, 50);
    cr_assert_eq(st.unhooked, 0);
    image *neu = image_open(out, &ie);
    cr_assert_not_null(neu, "%s", ie.msg);
    rw_verify_stats vs;
    cr_assert(rw_verify(img, neu, stderr, &vs, err, sizeof err), "%s", err);
    cr_assert_eq(rw_verify_failures(&vs), 0);
    cr_assert_gt(vs.inserted, 1000);
    const image_segment *last = NULL;
    for (size_t i = 0; i < neu->nsegments; i++)
        if (neu->segments[i].type == PT_LOAD)
            last = &neu->segments[i];
    cr_assert_not_null(last);
    cr_assert(last->flags & PF_W, "the counters' segment is not writable");
    cr_assert_gt(last->memsz, last->filesz);
    cr_assert_eq((last->vaddr + last->memsz) % 65536, 0);
    image_close(neu);
    unlink(out);
    plan_free(&pl);
    cfg_free(p);
    image_close(img);
}

/* No free registers: the snippet saves three below sp and puts them back;
 * the slot still records the program's sp, not the lowered one. */
Test(instrument, a_spill_keeps_every_register)
{
    rig g;
    rig_init(&g);
    uint64_t sp = DATA + 0x3800;
    g.b.t->r[30] = sp;
    rw_op ops[2] = { { RW_OP_PUSH, 5, 0, 0 }, { RW_OP_END, 5, 0, 0 } };
    g.in.ops = ops;
    g.in.nops = 2;
    rw_snip sn = { .where = RW_SN_BEFORE, .reg = { 1, 2, 3 }, .spill = true, .first = 0, .nt = 1 };
    g.b.n += (int)rw_snip_words(&g.in, &sn, 0, CODE + 4ull * (uint64_t)g.b.n, g.b.code + g.b.n);
    sn.first = 1;
    g.b.n += (int)rw_snip_words(&g.in, &sn, 0, CODE + 4ull * (uint64_t)g.b.n, g.b.code + g.b.n);
    g.b.t->r[1] = 111;
    g.b.t->r[2] = 222;
    g.b.t->r[3] = 333;
    run(&g);
    cr_assert_eq(g.b.t->r[1], 111);
    cr_assert_eq(g.b.t->r[2], 222);
    cr_assert_eq(g.b.t->r[3], 333);
    cr_assert_eq(g.b.t->r[30], sp, "sp not restored");
    cr_assert_eq(q(&g, DATA + COUNTS + 16 * 10), 1);
    cr_assert_eq(q(&g, SLOTS + RT_SLOT + 16), sp, "the slot has the lowered sp");
    cr_assert_eq(q(&g, DATA + RT_SSP), SLOTS);
}
