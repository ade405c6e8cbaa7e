/*
 * Unit tests for the axp interpreter: every integer operate instruction
 * against the Alpha Architecture Handbook's definition (restated here
 * independently of machine/exec.c), memory access, locks, branches.
 */
#include <criterion/criterion.h>

#include "tests/unit/test_machine_harness.h"

static const uint64_t vals[] = {
    0, 1, 2, 7, 0x80, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
    0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x8000000000000000ULL,
    0x7fffffffffffffffULL, 0xffffffffffffffffULL, 0x00ff00ff00ff00ffULL, 63, 64, 65,
};
#define NV (sizeof vals / sizeof vals[0])

static uint64_t sx32(uint64_t v) { return (uint64_t)(int64_t)(int32_t)v; }

/* AAH BYTE_ZAP: clear byte i where mask bit i is set. */
static uint64_t byte_zap(uint64_t v, unsigned mask)
{
    for (int i = 0; i < 8; i++)
        if (mask & (1u << i))
            v &= ~(0xffULL << (8 * i));
    return v;
}

static uint64_t ref(const char *op, uint64_t a, uint64_t b)
{
    unsigned k = (unsigned)(b & 7);
    unsigned w = 0;
    if (op[3] == 'b') w = 0x01;
    if (op[3] == 'w') w = 0x03;
    if (op[3] == 'l') w = 0x0f;
    if (op[3] == 'q') w = 0xff;
    unsigned bm = w << k;
    if (!strcmp(op, "addl")) return sx32(a + b);
    if (!strcmp(op, "s4addl")) return sx32(4 * a + b);
    if (!strcmp(op, "s8addl")) return sx32(8 * a + b);
    if (!strcmp(op, "subl")) return sx32(a - b);
    if (!strcmp(op, "s4subl")) return sx32(4 * a - b);
    if (!strcmp(op, "s8subl")) return sx32(8 * a - b);
    if (!strcmp(op, "addq")) return a + b;
    if (!strcmp(op, "s4addq")) return 4 * a + b;
    if (!strcmp(op, "s8addq")) return 8 * a + b;
    if (!strcmp(op, "subq")) return a - b;
    if (!strcmp(op, "s4subq")) return 4 * a - b;
    if (!strcmp(op, "s8subq")) return 8 * a - b;
    if (!strcmp(op, "cmpeq")) return a == b;
    if (!strcmp(op, "cmplt")) return (int64_t)a < (int64_t)b;
    if (!strcmp(op, "cmple")) return (int64_t)a <= (int64_t)b;
    if (!strcmp(op, "cmpult")) return a < b;
    if (!strcmp(op, "cmpule")) return a <= b;
    if (!strcmp(op, "cmpbge")) {
        uint64_t r = 0;
        for (int i = 0; i < 8; i++)
            if ((uint8_t)(a >> (8 * i)) >= (uint8_t)(b >> (8 * i)))
                r |= 1u << i;
        return r;
    }
    if (!strcmp(op, "and")) return a & b;
    if (!strcmp(op, "bic")) return a & ~b;
    if (!strcmp(op, "bis")) return a | b;
    if (!strcmp(op, "ornot")) return a | ~b;
    if (!strcmp(op, "xor")) return a ^ b;
    if (!strcmp(op, "eqv")) return a ^ ~b;
    if (!strcmp(op, "sll")) return a << (b & 63);
    if (!strcmp(op, "srl")) return a >> (b & 63);
    if (!strcmp(op, "sra")) return (uint64_t)((int64_t)a >> (b & 63));
    if (!strcmp(op, "zap")) return byte_zap(a, (unsigned)b & 0xff);
    if (!strcmp(op, "zapnot")) return byte_zap(a, ~(unsigned)b & 0xff);
    if (!strcmp(op, "mull")) return sx32((uint64_t)((uint32_t)a * (uint32_t)b));
    if (!strcmp(op, "mulq")) return a * b;
    if (!strcmp(op, "umulh")) return (uint64_t)(((unsigned __int128)a * b) >> 64);
    if (!strncmp(op, "ext", 3) && op[4] == 'l') return byte_zap(a >> (8 * k), ~w & 0xff);
    if (!strncmp(op, "ext", 3) && op[4] == 'h') return byte_zap(a << ((64 - 8 * k) & 63), ~w & 0xff);
    if (!strncmp(op, "ins", 3) && op[4] == 'l') return byte_zap(a << (8 * k), ~bm & 0xff);
    if (!strncmp(op, "ins", 3) && op[4] == 'h') return byte_zap(a >> ((64 - 8 * k) & 63), ~(bm >> 8) & 0xff);
    if (!strncmp(op, "msk", 3) && op[4] == 'l') return byte_zap(a, bm & 0xff);
    if (!strncmp(op, "msk", 3) && op[4] == 'h') return byte_zap(a, (bm >> 8) & 0xff);
    if (!strcmp(op, "sextb")) return (uint64_t)(int64_t)(int8_t)b;
    if (!strcmp(op, "sextw")) return (uint64_t)(int64_t)(int16_t)b;
    if (!strcmp(op, "ctpop")) return (uint64_t)__builtin_popcountll(b);
    if (!strcmp(op, "ctlz")) return b ? (uint64_t)__builtin_clzll(b) : 64;
    if (!strcmp(op, "cttz")) return b ? (uint64_t)__builtin_ctzll(b) : 64;
    cr_assert(false, "no reference for %s", op);
    return 0;
}

static const char *const ops[] = {
    "addl", "s4addl", "s8addl", "subl", "s4subl", "s8subl", "addq", "s4addq", "s8addq",
    "subq", "s4subq", "s8subq", "cmpeq", "cmplt", "cmple", "cmpult", "cmpule", "cmpbge",
    "and", "bic", "bis", "ornot", "xor", "eqv", "sll", "srl", "sra", "zap", "zapnot",
    "mull", "mulq", "umulh",
    "extbl", "extwl", "extll", "extql", "extwh", "extlh", "extqh",
    "insbl", "inswl", "insll", "insql", "inswh", "inslh", "insqh",
    "mskbl", "mskwl", "mskll", "mskql", "mskwh", "msklh", "mskqh",
    "sextb", "sextw", "ctpop", "ctlz", "cttz",
};

Test(machine_insn, integer_operate_matches_the_handbook)
{
    bare b;
    bare_init(&b, false);
    /* every op on r1, r2 into r3.., one instruction each, results checked
     * per op over every pair of test values */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (size_t i = 0; i < NV; i++)
            for (size_t j = 0; j < NV; j++) {
                b.n = 0;
                emit(&b, OPR(ops[o], 1, 2, 3));
                if (strncmp(ops[o], "sext", 4) && strncmp(ops[o], "ct", 2))
                    emit(&b, OPI(ops[o], 1, (unsigned)(vals[j] & 0xff), 4));
                b.t->r[1] = vals[i];
                b.t->r[2] = vals[j];
                bare_run(&b);
                cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP, "%s stopped early", ops[o]);
                uint64_t want = ref(ops[o], vals[i], vals[j]);
                cr_assert_eq(b.t->r[3], want, "%s %#lx, %#lx: got %#lx want %#lx", ops[o],
                             (unsigned long)vals[i], (unsigned long)vals[j],
                             (unsigned long)b.t->r[3], (unsigned long)want);
                if (strncmp(ops[o], "sext", 4) && strncmp(ops[o], "ct", 2)) {
                    uint64_t wl = ref(ops[o], vals[i], vals[j] & 0xff);
                    cr_assert_eq(b.t->r[4], wl, "%s %#lx, #%lu (literal)", ops[o],
                                 (unsigned long)vals[i], (unsigned long)(vals[j] & 0xff));
                }
            }
    }
}

Test(machine_insn, r31_reads_zero_and_ignores_writes)
{
    bare b;
    bare_init(&b, false);
    emit(&b, OPI("bis", 31, 5, 31));        /* write to r31: nothing */
    emit(&b, OPR("addq", 31, 31, 1));       /* r1 = 0 */
    emit(&b, MEM("lda", 2, 42, 31));        /* r2 = 42 */
    emit(&b, MEM("ldq", 31, 0, 31));        /* load into r31 from 0: a prefetch, no fault */
    b.t->r[1] = 99;
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP);
    cr_assert_eq(b.t->r[1], 0);
    cr_assert_eq(b.t->r[2], 42);
    cr_assert_eq(b.t->r[31], 0);
}

Test(machine_insn, cmov_and_overflow_traps)
{
    bare b;
    bare_init(&b, false);
    emit(&b, OPR("cmoveq", 1, 2, 3));       /* r1 == 0: r3 = r2 */
    emit(&b, OPR("cmovne", 1, 2, 4));       /* not taken: r4 stays */
    emit(&b, OPR("cmovlbs", 5, 2, 6));
    b.t->r[1] = 0;
    b.t->r[2] = 77;
    b.t->r[4] = 5;
    b.t->r[5] = 3;
    bare_run(&b);
    cr_assert_eq(b.t->r[3], 77);
    cr_assert_eq(b.t->r[4], 5);
    cr_assert_eq(b.t->r[6], 77);

    b.n = 0;
    emit(&b, OPR("addq/v", 1, 1, 2));
    b.t->r[1] = 0x7fffffffffffffffULL;
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGFPE, "addq/v overflow traps");
    cr_assert_eq(b.t->pc, CODE + 4, "arithmetic traps report the next pc");
}

Test(machine_insn, loads_and_stores)
{
    bare b;
    bare_init(&b, false);
    b.t->r[10] = DATA;
    b.t->r[1] = 0x1122334455667788ULL;
    emit(&b, MEM("stq", 1, 0, 10));
    emit(&b, MEM("ldbu", 2, 3, 10));        /* 0x55 */
    emit(&b, MEM("ldwu", 3, 6, 10));        /* 0x1122 */
    emit(&b, MEM("ldl", 4, 4, 10));         /* 0x11223344, sign-extended: positive */
    emit(&b, MEM("stb", 31, 0, 10));        /* low byte 0 */
    emit(&b, MEM("ldq", 5, 0, 10));
    emit(&b, MEM("ldq_u", 6, 13, 10));      /* the quadword at DATA+8 */
    emit(&b, MEM("stl", 1, 12, 10));
    emit(&b, MEM("ldl", 7, 12, 10));        /* 0x55667788 */
    emit(&b, MEM("ldah", 8, -1, 31));       /* -65536 */
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP);
    cr_assert_eq(b.t->r[2], 0x55);
    cr_assert_eq(b.t->r[3], 0x1122);
    cr_assert_eq(b.t->r[4], 0x11223344);
    cr_assert_eq(b.t->r[5], 0x1122334455667700ULL);
    cr_assert_eq(b.t->r[6], 0);
    cr_assert_eq(b.t->r[7], 0x55667788);
    cr_assert_eq(b.t->r[8], (uint64_t)-65536);
}

Test(machine_insn, unaligned_access_is_fixed_up_or_sigbus)
{
    bare b;
    bare_init(&b, false);
    uint8_t bytes[16];
    for (int i = 0; i < 16; i++)
        bytes[i] = (uint8_t)(0x10 + i);
    mem_write(b.p->mm, DATA, bytes, 16);
    b.t->r[10] = DATA;
    emit(&b, MEM("ldq", 1, 3, 10));
    emit(&b, MEM("ldl", 2, 1, 10));
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP);
    cr_assert_eq(b.t->r[1], 0x1a19181716151413ULL);
    cr_assert_eq(b.t->r[2], 0x14131211);
    cr_assert_eq(b.m->unaligned, 2);

    b.n = 0;
    b.t->uac = A_UAC_SIGBUS;
    emit(&b, MEM("ldq", 1, 3, 10));
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGBUS);
    b.t->uac = 0;

    b.n = 0;
    emit(&b, MEM("ldq_l", 1, 4, 10));       /* locked loads never get fixed up */
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGBUS);
}

Test(machine_insn, load_locked_store_conditional)
{
    bare b;
    bare_init(&b, false);
    b.t->r[10] = DATA;
    b.t->r[3] = 5;
    emit(&b, MEM("ldq_l", 1, 0, 10));
    emit(&b, OPI("addq", 1, 1, 2));
    emit(&b, MEM("stq_c", 2, 0, 10));       /* succeeds: r2 = 1 */
    emit(&b, MEM("stq_c", 3, 0, 10));       /* no reservation: r3 = 0 */
    emit(&b, MEM("ldq", 4, 0, 10));
    bare_run(&b);
    cr_assert_eq(b.t->r[2], 1);
    cr_assert_eq(b.t->r[3], 0);
    cr_assert_eq(b.t->r[4], 1);
}

Test(machine_insn, branches_calls_and_counts)
{
    bare b;
    bare_init(&b, false);
    /* r1 = 10; loop: r2 += r1; r1 -= 1; bne r1, loop; bsr ra, f; ...; f: r3 = 7; ret */
    emit(&b, MEM("lda", 1, 10, 31));
    emit(&b, OPR("addq", 2, 1, 2));         /* loop, at +4 */
    emit(&b, OPI("subq", 1, 1, 1));
    emit(&b, BRA("bne", 1, -3));
    emit(&b, BRA("bsr", 26, 1));            /* to +24 */
    emit(&b, BRA("br", 31, 2));             /* after return: to +28+... the bpt */
    emit(&b, MEM("lda", 3, 7, 31));         /* f, at +24 */
    emit(&b, enc("ret", 31, 26, 0, false, 1, 0));
    /* the br at +20 lands at +32: the bpt appended by bare_run */
    uint64_t n = bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP);
    cr_assert_eq(b.t->r[2], 55);
    cr_assert_eq(b.t->r[3], 7);
    cr_assert_eq(b.t->r[26], CODE + 20);
    cr_assert_eq(n, 1 + 3 * 10 + 1 + 2 + 1, "retired %lu", (unsigned long)n);
}

Test(machine_insn, jump_to_unmapped_code_faults_at_the_target)
{
    bare b;
    bare_init(&b, false);
    b.t->r[1] = 0x300000000ULL;
    emit(&b, enc("jmp", 31, 1, 0, false, 0, 0));
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGSEGV);
    cr_assert_eq(b.t->pc, 0x300000000ULL);
}

Test(machine_insn, illegal_and_privileged_instructions)
{
    bare b;
    bare_init(&b, false);
    emit(&b, 0x64000000);                   /* PAL-reserved opcode 0x19 */
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGILL);
    cr_assert_eq(b.t->pc, CODE);
    b.n = 0;
    emit(&b, PAL(0));                       /* halt */
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGILL);
}

static void count_hook(void *ctx, const axp_retire *r);

/* Whether alpha/'s table says the word is no instruction a user program
 * may run: unassigned (no row), a PAL-reserved opcode, VAX floating point
 * (not executed, see docs/machine.md), or a CALL_PAL function other than
 * the unprivileged ones Linux gives user code. */
static bool must_trap(uint32_t w)
{
    alpha_insn in;
    alpha_decode(w, &in);
    if (!in.op || in.op->format == AF_RESERVED || in.op->iset == ISET_VAX)
        return true;
    if (in.op->format == AF_PAL)
        return !strcmp(in.op->name, "halt") || !strcmp(in.op->name, "draina") ||
               !strcmp(in.op->name, "call_pal");
    return false;
}

/* Run the one word w at CODE (then bpt) in the functional or the timed
 * executor; the signal it stopped with. */
static int run_word(bare *b, uint32_t w, bool timed)
{
    b->code[0] = w;
    b->code[1] = PAL(PAL_BPT);
    mem_write_force(b->p->mm, CODE, b->code, 8);
    code_flush(b->p->mm);
    memset(b->t->r, 0, 32 * sizeof b->t->r[0]);
    b->t->pc = CODE;
    b->t->sigpend = 0;
    if (timed)
        exec_timed(b->t, 1 << 10);
    else
        exec_functional(b->t, 1 << 10);
    code_reap(b->m, b->p->mm);
    return bare_stop_signal(b);
}

static void try_word(bare *f, bare *t, uint32_t w, unsigned *n)
{
    if (!must_trap(w))
        return;
    (*n)++;
    int sf = run_word(f, w, false);
    cr_assert(sf == A_SIGILL && f->t->pc == CODE, "%#010x: functional executor gave signal %d at pc %#lx, not SIGILL at the word",
              (unsigned)w, sf, (unsigned long)f->t->pc);
    int st = run_word(t, w, true);
    cr_assert(st == A_SIGILL && t->t->pc == CODE, "%#010x: timed executor gave signal %d at pc %#lx, not SIGILL at the word",
              (unsigned)w, st, (unsigned long)t->t->pc);
}

/* Every hole of the encoding space raises SIGILL in both executors: each
 * opcode, every function of the operate opcodes (register and literal
 * forms), of the FP operate opcodes and of opcode 0x18, and the low CALL_PAL
 * functions. */
Test(machine_insn, every_undefined_encoding_raises_sigill)
{
    bare f, t;
    bare_init(&f, false);
    bare_init(&t, false);
    axp_set_retire_hook(t.m, count_hook, NULL);
    unsigned n = 0;
    for (uint32_t opc = 0; opc < 64; opc++) {
        uint32_t base = opc << 26;
        switch (opc) {
        case 0x00:
            for (uint32_t fn = 0; fn < 0x100; fn++)
                try_word(&f, &t, base | fn, &n);
            try_word(&f, &t, base | 0x3ffffff, &n);
            break;
        case 0x10: case 0x11: case 0x12: case 0x13: case 0x1c:
            for (uint32_t fn = 0; fn < 128; fn++) {
                try_word(&f, &t, base | 1u << 21 | 2u << 16 | fn << 5 | 3, &n);
                try_word(&f, &t, base | 1u << 21 | 0x2au << 13 | 1u << 12 | fn << 5 | 3, &n);
            }
            break;
        case 0x14: case 0x15: case 0x16: case 0x17:
            for (uint32_t fn = 0; fn < 2048; fn++)
                try_word(&f, &t, base | 1u << 21 | 2u << 16 | fn << 5 | 3, &n);
            break;
        case 0x18:
            for (uint32_t fn = 0; fn < 0x10000; fn++)
                try_word(&f, &t, base | fn, &n);
            break;
        default:
            try_word(&f, &t, base, &n);
            try_word(&f, &t, base | 0x3ffffff, &n);
            break;
        }
    }
    /* opcodes 0x01-0x07 alone are 14 words; the function spaces many more */
    cr_assert_gt(n, 60000, "only %u undefined words tried", n);
}

Test(machine_insn, store_into_code_is_seen_by_later_fetches)
{
    bare b;
    bare_init(&b, false);
    /* the code page must be writable for this */
    mm_protect(b.m, b.p->mm, CODE, PG_SIZE, GP_R | GP_W | GP_X);
    uint32_t newinsn = MEM("lda", 5, 99, 31);
    b.t->r[10] = CODE;
    b.t->r[11] = newinsn;
    emit(&b, MEM("lda", 5, 1, 31));         /* runs once first */
    emit(&b, MEM("stl", 11, 0, 10));        /* overwrite instruction 0 */
    emit(&b, OPI("addq", 6, 1, 6));
    emit(&b, OPI("cmpeq", 6, 2, 7));
    emit(&b, BRA("beq", 7, 1));             /* first time: jump to the br */
    emit(&b, BRA("br", 31, 1));             /* second time: leave */
    emit(&b, BRA("br", 31, -7));            /* back to instruction 0 */
    /* falls to the bpt */
    bare_run(&b);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP);
    cr_assert_eq(b.t->r[5], 99, "the rewritten instruction ran: r5 = %lu", (unsigned long)b.t->r[5]);
}

static uint64_t retired;
static void count_hook(void *ctx, const axp_retire *r)
{
    (void)ctx;
    (void)r;
    retired++;
}

Test(machine_insn, timed_executor_reports_every_instruction)
{
    bare b;
    bare_init(&b, false);
    axp_set_retire_hook(b.m, count_hook, NULL);
    emit(&b, MEM("lda", 1, 100, 31));
    emit(&b, OPI("subq", 1, 1, 1));
    emit(&b, BRA("bne", 1, -2));
    emit(&b, PAL(PAL_BPT));
    mem_write_force(b.p->mm, CODE, b.code, (size_t)b.n * 4);
    b.t->pc = CODE;
    retired = 0;
    uint64_t n = exec_timed(b.t, 1 << 20);
    cr_assert_eq(n, 1 + 2 * 100);
    cr_assert_eq(retired, n, "hook calls %lu, retired %lu", (unsigned long)retired, (unsigned long)n);
}

static uint64_t seen_ea[8];
static void ea_hook(void *ctx, const axp_retire *r)
{
    (void)ctx;
    if (r->pc >= CODE && r->pc < CODE + 8 * 4)
        seen_ea[(r->pc - CODE) / 4] = r->ea;
}

/* What the cycle model is told of memory: loads and stores give their
 * address, so does a load into r31 (a prefetch, executed as a no-op);
 * UNOP (ldq_u into r31) and operates give none. */
Test(machine_insn, timed_executor_reports_addresses)
{
    bare b;
    bare_init(&b, false);
    axp_set_retire_hook(b.m, ea_hook, NULL);
    b.t->r[1] = DATA;
    emit(&b, MEM("ldq", 2, 8, 1));
    emit(&b, MEM("ldl", 31, 24, 1));        /* prefetch */
    emit(&b, MEM("ldq_u", 31, 0, 1));       /* UNOP */
    emit(&b, MEM("stq", 2, 16, 1));
    emit(&b, OPI("addq", 2, 1, 3));
    emit(&b, PAL(PAL_BPT));
    mem_write_force(b.p->mm, CODE, b.code, (size_t)b.n * 4);
    b.t->pc = CODE;
    memset(seen_ea, 0xff, sizeof seen_ea);
    exec_timed(b.t, 1 << 20);
    const uint64_t want[5] = { DATA + 8, DATA + 24, 0, DATA + 16, 0 };
    for (int i = 0; i < 5; i++)
        cr_assert_eq(seen_ea[i], want[i], "instruction %d: ea %#lx, expected %#lx", i,
                     (unsigned long)seen_ea[i], (unsigned long)want[i]);
}

/* Random code must never hurt axp itself: every word runs or faults.  PAL
 * calls are left out (a random system call could touch the host's files). */
Test(machine_insn, random_code_runs_or_faults)
{
    bare b;
    bare_init(&b, false);
    uint64_t s = 0x2545f4914f6cdd1dULL;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
    for (int round = 0; round < 3000; round++) {
        b.n = 0;
        for (int i = 0; i < 48; i++) {
            uint32_t w = (uint32_t)RND();
            if ((w >> 26) == 0)
                w |= 1u << 26;
            emit(&b, w);
        }
        for (int r = 0; r < 31; r++) {
            uint64_t v = RND();
            /* some registers point at mapped memory */
            b.t->r[r] = (r & 1) ? DATA + (v & (2 * PG_SIZE - 1)) : v;
            b.t->f[r] = RND();
        }
        b.t->fpcr = FPCR_INITIAL;
        b.t->swcr = 0;
        emit(&b, PAL(PAL_BPT));
        mem_write_force(b.p->mm, CODE, b.code, (size_t)b.n * 4);
        code_flush(b.p->mm);
        b.t->pc = CODE;
        b.t->sigpend = 0;
        exec_functional(b.t, 10000);
        code_reap(b.m, b.p->mm);
    }
#undef RND
    cr_assert(b.t->state == T_RUNNABLE);
}
