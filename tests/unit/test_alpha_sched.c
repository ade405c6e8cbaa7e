/*
 * The EV5 static scheduler (alpha/sched.c) on hand-written blocks whose
 * schedules are worked out by hand from the 21164's rules (docs/alpha.md,
 * "The static scheduler"), and alpha/ev5.c's issue rules per row.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "alpha/ev5.h"
#include "alpha/insn.h"
#include "alpha/sched.h"

static uint32_t enc(const char *name, unsigned ra, unsigned rb, unsigned rc, bool lit, int disp)
{
    int id = alpha_lookup(name);
    cr_assert_geq(id, 0, "no row %s", name);
    alpha_insn in;
    memset(&in, 0, sizeof in);
    in.op = &alpha_optable[id];
    in.id = (uint16_t)id;
    in.ra = (uint8_t)ra;
    in.rb = (uint8_t)rb;
    in.rc = (uint8_t)rc;
    in.islit = lit;
    in.lit = (uint8_t)rb;
    in.disp = disp;
    in.func = in.op->func;
    return alpha_encode(&in);
}
#define OPR(name, ra, rb, rc) enc(name, ra, rb, rc, false, 0)
#define OPI(name, ra, lit, rc) enc(name, ra, lit, rc, true, 0)
#define MEM(name, ra, disp, rb) enc(name, ra, rb, 0, false, disp)
#define BRA(name, ra, disp) enc(name, ra, 0, 0, false, disp)
#define FOP(name, fa, fb, fc) enc(name, fa, fb, fc, false, 0)

enum { V0 = 0, T0 = 1, T1, T2, T3, T4, T5, T6, A0 = 16, SP = 30 };

static alpha_sched *new_sched(const char *assignment)
{
    ev5_params p;
    char err[128];
    ev5_defaults(&p);
    if (assignment)
        cr_assert(ev5_set(&p, assignment, err, sizeof err), "%s", err);
    alpha_sched *s = alpha_sched_new(&p, err, sizeof err);
    cr_assert(s, "%s", err);
    return s;
}

/* Expected: issue, M, reason, culprit (stall follows from M). */
typedef struct want {
    uint32_t issue, m;
    int reason, culprit;
} want;

static void check(const alpha_sched *s, const uint32_t *w, uint32_t n, uint64_t pc, const want *x,
                  uint32_t cycles)
{
    alpha_sched_slot out[32];
    cr_assert_leq(n, 32);
    cr_expect_eq(alpha_sched_words(s, w, n, pc, out), cycles, "block's cycles");
    uint32_t sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        cr_expect_eq(out[k].issue, x[k].issue, "insn %u issue %u, want %u", k, out[k].issue, x[k].issue);
        cr_expect_eq(out[k].m, x[k].m, "insn %u M %u, want %u", k, out[k].m, x[k].m);
        cr_expect_eq(out[k].stall, x[k].m > 1 ? x[k].m - 1 : 0, "insn %u stall", k);
        cr_expect_eq(out[k].reason, x[k].reason, "insn %u reason %s, want %s", k,
                     alpha_sched_reason_names[out[k].reason], alpha_sched_reason_names[x[k].reason]);
        cr_expect_eq(out[k].culprit, x[k].culprit, "insn %u culprit %d, want %d", k, out[k].culprit,
                     x[k].culprit);
        sum += out[k].m;
    }
    cr_expect_eq(sum, cycles, "the M_i add up to the block's cycles");
}

/* The copy loop of the DCPI paper's Figures 2 and 7, at the same address:
 * eight cycles for thirteen instructions (its "best case 8/13"), and the
 * paper's M_i column. */
Test(alpha_sched, dcpi_copy_loop)
{
    alpha_sched *s = new_sched(NULL);
    const uint32_t w[] = {
        MEM("ldq", T4, 0, T1),        /* 9810 */
        OPI("addq", T0, 4, T0),       /* 9814 */
        MEM("ldq", T5, 8, T1),        /* 9818: three integer operations */
        MEM("ldq", T6, 16, T1),       /* 981c */
        MEM("ldq", A0, 24, T1),       /* 9820: next fetch block */
        MEM("lda", T1, 32, T1),       /* 9824 */
        MEM("stq", T4, 0, T2),        /* 9828: both integer pipes taken */
        OPR("cmpult", T0, V0, T4),    /* 982c */
        MEM("stq", T5, 8, T2),        /* 9830: next fetch block */
        MEM("stq", T6, 16, T2),       /* 9834: stores need E0: one a cycle */
        MEM("stq", A0, 24, T2),       /* 9838 */
        MEM("lda", T2, 32, T2),       /* 983c */
        BRA("bne", T4, -13),          /* 9840: next fetch block */
    };
    const want x[] = {
        { 0, 1, ASR_FIRST, -1 },       { 0, 0, ASR_DUAL, -1 },        { 1, 1, ASR_SLOTTING, -1 },
        { 1, 0, ASR_DUAL, -1 },        { 2, 1, ASR_FETCH_BLOCK, -1 }, { 2, 0, ASR_DUAL, -1 },
        { 3, 1, ASR_SLOTTING, -1 },    { 3, 0, ASR_DUAL, -1 },        { 4, 1, ASR_FETCH_BLOCK, -1 },
        { 5, 1, ASR_SLOTTING, -1 },    { 6, 1, ASR_SLOTTING, -1 },    { 6, 0, ASR_DUAL, -1 },
        { 7, 1, ASR_FETCH_BLOCK, -1 },
    };
    check(s, w, 13, 0x9810, x, 8);
    alpha_sched_free(s);
}

/* A load's two cycles, then a one-cycle add: the stall is charged to the
 * operand and its writer; an operand ready the next cycle still keeps an
 * instruction out of the group, without a stall. */
Test(alpha_sched, dependencies_and_culprits)
{
    alpha_sched *s = new_sched(NULL);
    const uint32_t w[] = {
        MEM("ldq", T0, 0, SP),
        OPI("addq", T0, 1, T1),       /* T0 ready in cycle 2 */
        OPR("addq", T1, T1, T2),      /* T1 ready in cycle 3: Ra first */
        OPR("bis", T3, T3, T4),       /* free: joins */
    };
    const want x[] = {
        { 0, 1, ASR_FIRST, -1 }, { 2, 2, ASR_DEPENDENCY, 0 }, { 3, 1, ASR_DEPENDENCY, 1 }, { 3, 0, ASR_DUAL, -1 },
    };
    check(s, w, 4, 0x1000, x, 4);
    alpha_sched_slot out[4];
    alpha_sched_words(s, w, 4, 0x1000, out);
    cr_expect_eq(out[1].operand, ASF_RA);
    cr_expect_eq(out[2].operand, ASF_RA);
    cr_expect_eq(out[0].livein, ASF_RB, "ldq reads sp from before");
    cr_expect_eq(out[3].livein, ASF_RA | ASF_RB);
    cr_expect_eq(out[1].livein, 0);

    /* Rb waits when Ra is ready */
    const uint32_t w2[] = { MEM("ldq", T0, 0, SP), OPR("addq", T3, T0, T1) };
    alpha_sched_words(s, w2, 2, 0x1000, out);
    cr_expect_eq(out[1].issue, 2);
    cr_expect_eq(out[1].operand, ASF_RB);
    cr_expect_eq(out[1].culprit, 0);
    alpha_sched_free(s);
}

/* A compare's result reaches a branch or CMOV in its own cycle; an add's
 * does not, nor does anything reach an FP branch early. */
Test(alpha_sched, same_cycle_compare_to_branch)
{
    alpha_sched *s = new_sched(NULL);
    const uint32_t cmp_br[] = { OPR("cmpeq", T0, T1, T2), BRA("bne", T2, 4) };
    const want x1[] = { { 0, 1, ASR_FIRST, -1 }, { 0, 0, ASR_DUAL, -1 } };
    check(s, cmp_br, 2, 0x2000, x1, 1);

    const uint32_t cmp_cmov[] = { OPR("cmplt", T0, T1, T2), OPR("cmovne", T2, T3, T4) };
    check(s, cmp_cmov, 2, 0x2000, x1, 1);

    const uint32_t add_br[] = { OPR("addq", T0, T1, T2), BRA("bne", T2, 4) };
    const want x2[] = { { 0, 1, ASR_FIRST, -1 }, { 1, 1, ASR_DEPENDENCY, 0 } };
    check(s, add_br, 2, 0x2000, x2, 2);

    /* the compare's late copy (1 cycle) for an ordinary reader */
    const uint32_t cmp_add[] = { OPR("cmpeq", T0, T1, T2), OPR("addq", T2, T1, T3) };
    check(s, cmp_add, 2, 0x2000, x2, 2);

    /* FP: add 4 cycles, branch waits all of them */
    const uint32_t fadd_fbr[] = { FOP("addt", 1, 2, 3), BRA("fbne", 3, 4) };
    const want x3[] = { { 0, 1, ASR_FIRST, -1 }, { 4, 4, ASR_DEPENDENCY, 0 } };
    check(s, fadd_fbr, 2, 0x2000, x3, 5);
    alpha_sched_free(s);
}

/* The multiplier and divider are not pipelined: the second waits for the
 * first to leave the unit, not for its result. */
Test(alpha_sched, busy_units)
{
    alpha_sched *s = new_sched(NULL);
    const uint32_t mul[] = { OPR("mulq", T0, T1, T2), OPR("mulq", T3, T4, T5), OPR("addq", T3, T4, T6) };
    const want x1[] = { { 0, 1, ASR_FIRST, -1 }, { 12, 12, ASR_MULTIPLIER, 0 }, { 12, 0, ASR_DUAL, -1 } };
    check(s, mul, 3, 0x3000, x1, 13);
    alpha_sched_slot out[3];
    alpha_sched_words(s, mul, 3, 0x3000, out);
    cr_expect(out[0].unit_livein);
    cr_expect_not(out[1].unit_livein);

    const uint32_t div[] = { FOP("divt", 1, 2, 3), FOP("divs", 4, 5, 6) };
    const want x2[] = { { 0, 1, ASR_FIRST, -1 }, { 22, 22, ASR_DIVIDER, 0 } };
    check(s, div, 2, 0x3000, x2, 23);

    /* a later operand wins over the unit only if strictly later: UMULH's
     * 14-cycle result against the multiplier it kept busy 14 cycles */
    const uint32_t mul2[] = { OPR("umulh", T0, T1, T2), OPR("mulq", T2, T4, T5) };
    const want x3[] = { { 0, 1, ASR_FIRST, -1 }, { 14, 14, ASR_DEPENDENCY, 0 } };
    check(s, mul2, 2, 0x3000, x3, 15);
    alpha_sched_free(s);
}

/* A load may not join a store's group nor the reverse; UNOP is no load. */
Test(alpha_sched, load_store_clash)
{
    alpha_sched *s = new_sched(NULL);
    const uint32_t ld_st[] = { MEM("ldq", T0, 0, SP), MEM("stq", T1, 8, SP) };
    const want x1[] = { { 0, 1, ASR_FIRST, -1 }, { 1, 1, ASR_LOAD_STORE, 0 } };
    check(s, ld_st, 2, 0x4000, x1, 2);

    /* (an integer operation here would fill both integer pipes: slotting) */
    const uint32_t st_ld[] = { MEM("stq", T1, 8, SP), FOP("addt", 1, 2, 3), MEM("ldl", T0, 0, SP) };
    const want x2[] = { { 0, 1, ASR_FIRST, -1 }, { 0, 0, ASR_DUAL, -1 }, { 1, 1, ASR_LOAD_STORE, 0 } };
    check(s, st_ld, 3, 0x4000, x2, 2);

    const uint32_t unop_st[] = { MEM("ldq_u", 31, 0, SP), MEM("stq", T1, 8, SP) };
    const want x3[] = { { 0, 1, ASR_FIRST, -1 }, { 0, 0, ASR_DUAL, -1 } };
    check(s, unop_st, 2, 0x4000, x3, 1);

    /* a prefetch (load into R31) is a load */
    const uint32_t pf_st[] = { MEM("ldl", 31, 0, SP), MEM("stq", T1, 8, SP) };
    check(s, pf_st, 2, 0x4000, x1, 2);
    alpha_sched_free(s);
}

/* Four pipes, four wide; narrower with issue_width, and fetch blocks
 * counted from the address, not from the run's start. */
Test(alpha_sched, issue_width_and_fetch_blocks)
{
    const uint32_t w[] = { OPR("addq", T0, T1, T2), FOP("addt", 1, 2, 3), FOP("mult", 4, 5, 6),
                           OPR("subq", T3, T4, T5) };
    alpha_sched *s = new_sched(NULL);
    const want x4[] = { { 0, 1, ASR_FIRST, -1 }, { 0, 0, ASR_DUAL, -1 }, { 0, 0, ASR_DUAL, -1 },
                        { 0, 0, ASR_DUAL, -1 } };
    check(s, w, 4, 0x5000, x4, 1);
    /* at 0x5008 the third instruction opens the next fetch block */
    const want xs[] = { { 0, 1, ASR_FIRST, -1 }, { 0, 0, ASR_DUAL, -1 }, { 1, 1, ASR_FETCH_BLOCK, -1 },
                        { 1, 0, ASR_DUAL, -1 } };
    check(s, w, 4, 0x5008, xs, 2);
    alpha_sched_free(s);

    s = new_sched("issue_width=2");
    const want x2[] = { { 0, 1, ASR_FIRST, -1 }, { 0, 0, ASR_DUAL, -1 }, { 1, 1, ASR_SLOTTING, -1 },
                        { 1, 0, ASR_DUAL, -1 } };
    check(s, w, 4, 0x5000, x2, 2);
    alpha_sched_free(s);

    /* E1 only takes one branch-pipe instruction; an E0 shift and an E0 store do not pair */
    s = new_sched(NULL);
    const uint32_t e0[] = { OPR("sll", T0, T1, T2), MEM("stq", T3, 0, SP) };
    const want xe[] = { { 0, 1, ASR_FIRST, -1 }, { 1, 1, ASR_SLOTTING, -1 } };
    check(s, e0, 2, 0x5000, xe, 2);
    alpha_sched_free(s);
}

/* The three entry points agree, an empty run takes no cycles, and R31
 * neither makes nor waits for anything. */
Test(alpha_sched, entry_points)
{
    alpha_sched *s = new_sched(NULL);
    const uint32_t w[] = { MEM("ldq", 31, 0, SP), OPR("addq", 31, 31, T0), MEM("ldq", T1, 0, SP),
                           OPR("addq", T1, 31, T2) };
    alpha_insn ins[4];
    alpha_sched_slot a[4], b[4];
    for (int k = 0; k < 4; k++)
        alpha_decode(w[k], &ins[k]);
    uint32_t ca = alpha_sched_words(s, w, 4, 0x6000, a), cb = alpha_sched_block(s, ins, 4, 0x6000, b);
    cr_expect_eq(ca, cb);
    cr_expect(!memcmp(a, b, sizeof a));
    cr_expect_eq(a[1].issue, 0, "addq r31, r31 waits for nothing");
    cr_expect_eq(a[1].livein, 0);
    cr_expect_eq(a[3].issue, 3, "the load's two cycles");
    cr_expect_eq(alpha_sched_words(s, w, 0, 0x6000, a), 0);
    cr_expect_str_eq(alpha_sched_reason_names[ASR_DEPENDENCY], "dependency");
    cr_expect_str_eq(alpha_sched_reason_names[ASR_MULTIPLIER], "multiplier");
    cr_expect_str_eq(alpha_sched_reason_names[ASR_DIVIDER], "divider");

    alpha_sched_op op;
    alpha_sched_op_of(&ins[0], &op);
    cr_expect_eq(op.dst, ALPHA_SCHED_NOREG);
    alpha_insn u;
    alpha_decode(MEM("ldq_u", 31, 0, SP), &u);
    alpha_sched_op_of(&u, &op);
    cr_expect_eq(op.row, alpha_sched_unop());
    alpha_decode(0x1c000000 | (0x7fu << 5), &u);    /* an opcode 0x1c function with no row */
    if (!u.op) {
        alpha_sched_op_of(&u, &op);
        cr_expect_eq(op.row, alpha_sched_unknown());
    }

    ev5_params p;
    char err[128];
    ev5_defaults(&p);
    p.issue_width = 9;
    cr_expect_null(alpha_sched_new(&p, err, sizeof err));
    cr_expect(strstr(err, "issue_width"), "%s", err);
    alpha_sched_free(s);
}

/* The issue rules of table rows, from their flags and classes. */
Test(alpha_sched, issue_rules_from_the_table)
{
    ev5_params p;
    ev5_defaults(&p);
    ev5_issue is;
    alpha_insn in;
#define ISSUE(w) (alpha_decode(w, &in), ev5_issue_insn(&p, &in, &is), &is)
    cr_expect(ISSUE(enc("mb", 0, 0, 0, false, 0))->barrier);
    cr_expect(ISSUE(enc("wmb", 0, 0, 0, false, 0))->barrier);
    cr_expect_not(ISSUE(enc("trapb", 0, 0, 0, false, 0))->barrier);
    cr_expect_eq(ISSUE(MEM("ldq_u", 31, 0, SP))->mem, EV5_MEM_NONE);
    cr_expect_eq(ISSUE(MEM("ldq_u", T0, 0, SP))->mem, EV5_MEM_LOAD);
    cr_expect_eq(ISSUE(MEM("stq", T0, 0, SP))->mem, EV5_MEM_STORE);
    cr_expect_eq(is.cls, EV5_PC_E0 + EV5_PC_COUNT * EV5_MEM_STORE);
    cr_expect_eq(ISSUE(MEM("lda", T0, 0, SP))->mem, EV5_MEM_NONE);
    cr_expect_eq(ISSUE(enc("fetch", 0, SP, 0, false, 0))->mem, EV5_MEM_LOAD);
    cr_expect(ISSUE(OPR("cmpeq", T0, T1, T2))->fast);
    cr_expect(ISSUE(OPR("and", T0, T1, T2))->fast);
    cr_expect_not(ISSUE(OPR("addq", T0, T1, T2))->fast);
    cr_expect(ISSUE(BRA("beq", T0, 0))->early);
    cr_expect_eq(is.pipe, EV5_PC_E1);
    cr_expect_not(ISSUE(BRA("fbeq", 1, 0))->early);
    cr_expect(ISSUE(OPR("cmoveq", T0, T1, T2))->early);
    cr_expect_eq(ISSUE(OPR("mull", T0, T1, T2))->unit, EV5_UNIT_MUL);
    cr_expect_eq(is.busy, p.imul_busy[0]);
    cr_expect_eq(ISSUE(FOP("divs", 1, 2, 3))->unit, EV5_UNIT_DIV);
    cr_expect_eq(is.busy, p.fdiv_busy_s);
    cr_expect_eq(is.pipe, EV5_PC_FA);
    cr_expect_eq(ISSUE(FOP("cpys", 1, 2, 3))->pipe, EV5_PC_FAM);
#undef ISSUE
    ev5_issue_of(&p, NULL, false, &is);
    cr_expect_eq(is.pipe, EV5_PC_E01);
    cr_expect_eq(is.lat, 1);

    ev5_groups g;
    cr_assert(ev5_groups_build(&p, &g));
    cr_expect_eq(g.size[0], 0);
    uint8_t two = g.next[g.next[0][EV5_PC_E01]][EV5_PC_E01];
    cr_expect_neq(two, EV5_NO_ROOM);
    cr_expect_eq(g.size[two], 2);
    cr_expect_eq(g.next[two][EV5_PC_E0], EV5_NO_ROOM, "both integer pipes in use");
    cr_expect_neq(g.next[two][EV5_PC_FAM], EV5_NO_ROOM);
    cr_expect_eq(g.next[g.next[0][EV5_PC_E0]][EV5_PC_E0], EV5_NO_ROOM);
    cr_expect_eq(g.next[g.next[0][EV5_PC_E01 + EV5_PC_COUNT]][EV5_PC_E0 + 2 * EV5_PC_COUNT], EV5_NO_ROOM,
                 "a store after a load");
}
