/*
 * Unit tests for axp's IEEE floating point: qualifiers, rounding modes,
 * traps and status, conversions, the S format in registers.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "tests/unit/test_machine_harness.h"

/* FP function codes with qualifiers: the row's base code (normal rounding)
 * with the trap and rounding bits of the AAH encoding. */
#define Q_C   0x000     /* rounding chopped: clears the 0x080 of "normal" */
#define Q_D   0x040     /* dynamic: with normal's 0x080 gives 0x0c0 */
#define Q_M   0x040     /* minus: after clearing normal */
#define Q_U   0x100
#define Q_I   0x200
#define Q_S   0x400

static uint32_t fn(const char *name, uint32_t quals, bool chopped)
{
    uint32_t f = alpha_optable[alpha_lookup(name)].func;
    if (chopped)
        f &= ~0x0c0u;
    return f | quals;
}

static uint64_t bits(double d) { uint64_t v; memcpy(&v, &d, 8); return v; }
static double dbl(uint64_t v) { double d; memcpy(&d, &v, 8); return d; }

static bare b;

static void fp1(const char *name, uint32_t func, double x, double y)
{
    b.n = 0;
    emit(&b, FOP(name, 1, 2, 3, func));
    b.t->f[1] = bits(x);
    b.t->f[2] = bits(y);
    b.t->f[3] = 0;
    bare_run(&b);
}

Test(machine_fp, arithmetic_and_comparisons)
{
    bare_init(&b, false);
    fp1("addt", fn("addt", Q_S | Q_U, false), 1.5, 2.25);
    cr_assert_eq(dbl(b.t->f[3]), 3.75);
    fp1("mult", fn("mult", 0, false), -3.0, 0.5);
    cr_assert_eq(dbl(b.t->f[3]), -1.5);
    fp1("divt", fn("divt", Q_S | Q_U | Q_I, false), 1.0, 4.0);
    cr_assert_eq(dbl(b.t->f[3]), 0.25);
    fp1("cmptlt", fn("cmptlt", 0, false), 1.0, 2.0);
    cr_assert_eq(b.t->f[3], 0x4000000000000000ULL, "true is 2.0");
    fp1("cmptle", fn("cmptle", 0, false), 3.0, 2.0);
    cr_assert_eq(b.t->f[3], 0);
    fp1("sqrtt", fn("sqrtt", Q_S | Q_U, false), 0, 2.0);
    cr_assert_eq(dbl(b.t->f[3]), sqrt(2.0));
}

Test(machine_fp, exceptions_trap_without_software_completion)
{
    bare_init(&b, false);
    fp1("divt", fn("divt", 0, false), 1.0, 0.0);
    cr_assert_eq(bare_stop_signal(&b), A_SIGFPE, "divide by zero traps without /s");
    cr_assert(b.t->fpcr & FPCR_DZE);

    b.t->fpcr = FPCR_INITIAL;
    fp1("divt", fn("divt", Q_S | Q_U, false), 1.0, 0.0);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP, "with /su: the IEEE result, no signal");
    cr_assert(isinf(dbl(b.t->f[3])) && dbl(b.t->f[3]) > 0);
    cr_assert(b.t->fpcr & FPCR_DZE, "status recorded");
    cr_assert(b.t->swcr & (SWCR_STATUS_INV << 1), "software status recorded");

    /* enabled in the software control word: now it signals */
    b.t->swcr = SWCR_TRAP_DZE;
    fp1("divt", fn("divt", Q_S | Q_U, false), 1.0, 0.0);
    cr_assert_eq(bare_stop_signal(&b), A_SIGFPE);
    b.t->swcr = 0;

    /* an infinite operand traps without /s ... */
    fp1("addt", fn("addt", 0, false), INFINITY, 1.0);
    cr_assert_eq(bare_stop_signal(&b), A_SIGFPE);
    /* ... and is fine with it */
    fp1("addt", fn("addt", Q_S | Q_U | Q_I, false), INFINITY, 1.0);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP);
    cr_assert(isinf(dbl(b.t->f[3])));
    /* a NaN compare under /su gives false and sets invalid */
    b.t->fpcr = FPCR_INITIAL;
    fp1("cmptlt", fn("cmptlt", Q_S | Q_U, false), NAN, 1.0);
    cr_assert_eq(b.t->f[3], 0);
    cr_assert(b.t->fpcr & FPCR_INV);
    /* inexact is reported only with /i */
    b.t->fpcr = FPCR_INITIAL;
    fp1("divt", fn("divt", Q_S | Q_U, false), 1.0, 3.0);
    cr_assert_eq(b.t->fpcr & FPCR_INE, 0);
    fp1("divt", fn("divt", Q_S | Q_U | Q_I, false), 1.0, 3.0);
    cr_assert(b.t->fpcr & FPCR_INE);
}

Test(machine_fp, underflow_flushes_to_zero_without_u)
{
    bare_init(&b, false);
    fp1("mult", fn("mult", 0, false), 1e-200, 1e-200);
    cr_assert_eq(bare_stop_signal(&b), A_SIGTRAP, "underflow without /u is silent");
    cr_assert_eq(b.t->f[3], 0);
    fp1("mult", fn("mult", Q_S | Q_U, false), 1e-160, 1e-160);
    cr_assert(b.t->f[3] != 0, "with /su a denormal result is delivered");
    cr_assert(b.t->fpcr & FPCR_UNF);
}

Test(machine_fp, rounding_modes_static_and_dynamic)
{
    bare_init(&b, false);
    fp1("divt", fn("divt", Q_S | Q_U, true), 1.0, 10.0);       /* chopped */
    uint64_t chop = b.t->f[3];
    fp1("divt", fn("divt", Q_S | Q_U, false), 1.0, 10.0);       /* nearest */
    uint64_t near = b.t->f[3];
    cr_assert_eq(near - chop, 1, "1/10 rounds up to nearest, down when chopped");
    /* /d follows the FPCR: plus infinity */
    b.t->fpcr = FPCR_INITIAL & ~FPCR_DYN_MASK;
    b.t->fpcr |= 3ULL << FPCR_DYN_SHIFT;
    fp1("divt", fn("divt", Q_S | Q_U | Q_D, false), -1.0, 10.0);
    uint64_t up = b.t->f[3];
    fp1("divt", fn("divt", Q_S | Q_U, false), -1.0, 10.0);
    cr_assert_eq(b.t->f[3] - up, 1, "-1/10 toward +inf has the smaller magnitude");
}

Test(machine_fp, conversions)
{
    bare_init(&b, false);
    /* cvttq/c truncates; the normal rounding rounds to even */
    fp1("cvttq", fn("cvttq", 0, true), 0, -2.7);
    cr_assert_eq((int64_t)b.t->f[3], -2);
    fp1("cvttq", fn("cvttq", 0, false), 0, 2.5);
    cr_assert_eq((int64_t)b.t->f[3], 2);
    fp1("cvttq", fn("cvttq", 0, false), 0, 3.5);
    cr_assert_eq((int64_t)b.t->f[3], 4);
    /* overflow keeps the low 64 bits (unsigned conversions rely on it) */
    fp1("cvttq", fn("cvttq", 0, true), 0, 18446744073709549568.0);
    cr_assert_eq(b.t->f[3], 18446744073709549568ULL);
    /* cvtqt */
    b.n = 0;
    emit(&b, FOP("cvtqt", 31, 2, 3, fn("cvtqt", 0, false)));
    b.t->f[2] = (uint64_t)-12345;
    bare_run(&b);
    cr_assert_eq(dbl(b.t->f[3]), -12345.0);
    /* S format: lds/sts and adds */
    float two = 2.0f, half = 0.5f;
    uint32_t s2, sh;
    memcpy(&s2, &two, 4);
    memcpy(&sh, &half, 4);
    mem_write(b.p->mm, DATA, &s2, 4);
    mem_write(b.p->mm, DATA + 4, &sh, 4);
    b.n = 0;
    b.t->r[10] = DATA;
    emit(&b, MEM("lds", 1, 0, 10));
    emit(&b, MEM("lds", 2, 4, 10));
    emit(&b, FOP("adds", 1, 2, 3, fn("adds", 0, false)));
    emit(&b, MEM("sts", 3, 8, 10));
    emit(&b, FOP("cvtst", 31, 3, 4, fn("cvtst", 0, false)));
    bare_run(&b);
    cr_assert_eq(b.t->f[1], bits(2.0), "an S value in a register has the T layout");
    float got;
    uint32_t gs;
    mem_read(b.p->mm, DATA + 8, &gs, 4);
    memcpy(&got, &gs, 4);
    cr_assert_eq(got, 2.5f);
    cr_assert_eq(dbl(b.t->f[4]), 2.5);
    /* cvtql / cvtlq round trip a longword through the FP format */
    b.n = 0;
    emit(&b, FOP("cvtql", 31, 1, 2, fn("cvtql", 0, false)));
    emit(&b, FOP("cvtlq", 31, 2, 3, fn("cvtlq", 0, false)));
    b.t->f[1] = (uint64_t)-7;
    bare_run(&b);
    cr_assert_eq((int64_t)b.t->f[3], -7);
}

Test(machine_fp, fpcr_moves_and_fp_branches)
{
    bare_init(&b, false);
    b.n = 0;
    emit(&b, FOP("mf_fpcr", 5, 5, 5, 0));
    emit(&b, FOP("mt_fpcr", 6, 6, 6, 0));
    emit(&b, FOP("mf_fpcr", 7, 7, 7, 0));
    b.t->f[6] = 3ULL << FPCR_DYN_SHIFT;
    bare_run(&b);
    cr_assert_eq(b.t->f[5], FPCR_INITIAL);
    cr_assert_eq(b.t->f[7], 3ULL << FPCR_DYN_SHIFT);
    /* fbeq treats -0 as zero; fblt does not see -0 as negative */
    b.n = 0;
    emit(&b, BRA("fbeq", 1, 1));
    emit(&b, MEM("lda", 1, 1, 31));          /* skipped when -0 == 0 */
    emit(&b, BRA("fblt", 2, 1));
    emit(&b, MEM("lda", 2, 1, 31));          /* runs: -0 is not < 0 */
    b.t->f[1] = b.t->f[2] = 0x8000000000000000ULL;
    b.t->r[1] = b.t->r[2] = 0;
    bare_run(&b);
    cr_assert_eq(b.t->r[1], 0);
    cr_assert_eq(b.t->r[2], 1);
}

/* NaN results are Alpha's, never the host's: the default NaN is positive
 * with every fraction bit set; with NaN operands the result is the one in
 * Fb, else the one in Fa, made quiet (alpha-facts; AAH 4.7.10.4). */
Test(machine_fp, nan_results_are_alphas)
{
    bare_init(&b, false);
    uint32_t su = Q_S | Q_U;
    fp1("divt", fn("divt", su, false), 0.0, 0.0);
    cr_assert_eq(b.t->f[3], 0x7fffffffffffffffULL, "0/0 gave %llx", (unsigned long long)b.t->f[3]);
    fp1("subt", fn("subt", su, false), INFINITY, INFINITY);
    cr_assert_eq(b.t->f[3], 0x7fffffffffffffffULL);
    fp1("sqrtt", fn("sqrtt", su, false), 0, -1.0);
    cr_assert_eq(b.t->f[3], 0x7fffffffffffffffULL);
    double qa = dbl(0x7ff8000000000001ULL), qb = dbl(0x7ff8000000000002ULL);
    double sa = dbl(0x7ff0000000000003ULL);   /* signalling */
    fp1("addt", fn("addt", su, false), qb, qa);
    cr_assert_eq(b.t->f[3], 0x7ff8000000000001ULL, "Fb first: %llx", (unsigned long long)b.t->f[3]);
    fp1("addt", fn("addt", su, false), qa, qb);
    cr_assert_eq(b.t->f[3], 0x7ff8000000000002ULL);
    fp1("mult", fn("mult", su, false), qa, 1.0);
    cr_assert_eq(b.t->f[3], 0x7ff8000000000001ULL, "then Fa");
    fp1("mult", fn("mult", su, false), 1.0, sa);
    cr_assert_eq(b.t->f[3], 0x7ff8000000000003ULL, "quieted");
    /* S format: the default NaN in register form keeps 23 fraction bits. */
    fp1("divs", fn("divs", su, false), 0.0, 0.0);
    cr_assert_eq(b.t->f[3], 0x7fffffffe0000000ULL, "S 0/0 gave %llx", (unsigned long long)b.t->f[3]);
}
