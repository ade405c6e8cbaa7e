/*
 * fpnan: IEEE results that must be Alpha's, not the host's.  0.0/0.0 and
 * the other invalid operations give Alpha's default NaN, which is positive
 * (x86's is negative, so printf would say "-nan"); with two NaN operands the
 * result is the one in Fb (the second source), else the one in Fa (only
 * cases where qemu-alpha agrees: with two NaNs it keeps the one with the
 * larger payload, tests/unit/test_machine_fp.c checks the rule); NaN and
 * out-of-range values convert to integers as the Alpha does.  Compared with
 * qemu-alpha, not with a native build: the point is where x86 differs.
 * Built with -mieee so invalid operations complete in software instead of
 * trapping.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static double of_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static void show(const char *what, double d)
{
    printf("%-12s %g sign %d\n", what, d, signbit(d) ? 1 : 0);
}

int main(void)
{
    volatile double zero = 0.0, one = 1.0, inf = INFINITY, big = 1e30;
    volatile float fzero = 0.0f;
    show("0/0", zero / zero);
    show("inf-inf", inf - inf);
    show("0*inf", zero * inf);
    show("sqrt(-1)", sqrt(-one));
    show("float 0/0", (double)(fzero / fzero));
    show("-(0/0)", -(zero / zero));
    volatile double qa = of_bits(0x7ff8000000000001ull), qb = of_bits(0x7ff8000000000002ull);
    printf("qa+qb payload %llx\n", (unsigned long long)(bits(qa + qb) & 0xfffffffffffffull));
    printf("qa*1 payload %llx\n", (unsigned long long)(bits(qa * one) & 0xfffffffffffffull));
    printf("1*qb payload %llx\n", (unsigned long long)(bits(one * qb) & 0xfffffffffffffull));
    printf("qa/qb payload %llx\n", (unsigned long long)(bits(qa / qb) & 0xfffffffffffffull));
    printf("(long)nan %ld\n", (long)(zero / zero));
    printf("(long)1e30 %ld\n", (long)big);
    printf("(long)-1e30 %ld\n", (long)-big);
    printf("(int)nan %d\n", (int)(zero / zero));
    printf("isnan %d %d\n", isnan(zero / zero) ? 1 : 0, isnan(one) ? 1 : 0);
    printf("nan==nan %d nan<1 %d\n", (zero / zero) == (zero / zero), (zero / zero) < one);
    return 0;
}
