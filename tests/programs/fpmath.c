/* fpmath: IEEE double arithmetic and libm.
 *
 * sqrt, sin, cos, atan2, exp, log, pow, fmod, division, a short series,
 * conversions between integers and doubles (both ways, signed and unsigned,
 * values that must round), infinities and NaN, and the four rounding modes
 * set with fesetround (division, int->double conversion, rint, lrint,
 * nearbyint under each).  Every result is printed with %.17g, which is enough
 * digits to identify a double exactly, and as raw bits where that helps.
 *
 * The operands are volatile so that the compiler cannot fold anything at
 * compile time.  The Makefile builds this with -frounding-math, and for Alpha
 * with -mfp-rounding-mode=d (Alpha instructions carry their rounding mode;
 * only the /d forms follow the mode set by fesetround).
 * The libm inputs are chosen so that glibc gives the same bits on Alpha and
 * on x86-64.  Exit status 0.
 */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static volatile double v_one = 1.0, v_three = 3.0, v_two = 2.0, v_ten = 10.0;
static volatile double v_zero = 0.0;
static volatile long v_big = (1L << 53) + 1;
static volatile unsigned long v_ubig = 18000000000000000000UL;

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void show(const char *what, double d)
{
    printf("%-22s %.17g  [%016llx]\n", what, d, (unsigned long long)bits(d));
}

static void basics(void)
{
    show("1/3", v_one / v_three);
    show("2/3", v_two / v_three);
    show("sqrt(2)", sqrt(v_two));
    show("sqrt(10)", sqrt(v_ten));
    show("sqrt(1e-300)", sqrt(v_one * 1e-300));
    show("sin(1)", sin(v_one));
    show("cos(1)", cos(v_one));
    show("sin(10)", sin(v_ten));
    show("atan2(1,3)", atan2(v_one, v_three));
    show("exp(1)", exp(v_one));
    show("exp(-10)", exp(-v_ten));
    show("log(10)", log(v_ten));
    show("log(3)", log(v_three));
    show("pow(2,0.5)", pow(v_two, 0.5 * v_one));
    show("pow(10,-3)", pow(v_ten, -v_three));
    show("pow(3,40)", pow(v_three, 40 * v_one));
    show("fmod(10,3)", fmod(v_ten, v_three));
    show("floor(-2.5)", floor(-2.5 * v_one));
    show("ceil(-2.5)", ceil(-2.5 * v_one));
    show("round(2.5)", round(2.5 * v_one));
    show("trunc(-2.7)", trunc(-2.7 * v_one));
    show("fabs(-3)", fabs(-v_three));
}

static void series(void)
{
    /* Leibniz series for pi/4, 2000 terms, and a product that underflows
       gently through normal numbers only. */
    double s = 0.0, p = v_one;
    for (int k = 0; k < 2000; k++) {
        double term = v_one / (2.0 * k + 1.0);
        s += (k & 1) ? -term : term;
        p *= 0.75;
    }
    show("4*leibniz(2000)", 4.0 * s);
    show("0.75^2000", p);
}

static void conversions(void)
{
    volatile double d;
    d = -2.7;  printf("(long)-2.7             %ld\n", (long)d);
    d = 2.7;   printf("(long)2.7              %ld\n", (long)d);
    d = 1e15 + 0.5; printf("(long)(1e15+0.5)       %ld\n", (long)d);
    d = 1.8e19; printf("(unsigned long)1.8e19  %lu\n", (unsigned long)d);
    d = -1.0e9; printf("(int)-1e9              %d\n", (int)d);
    show("(double)(2^53+1)", (double)v_big);
    show("(double)-(2^53+1)", (double)-v_big);
    show("(double)1.8e19u", (double)v_ubig);
    show("(double)(int)-7", (double)(int)(-7 * (int)v_one));
    show("(float)(1/3)", (float)(v_one / v_three));
}

static void specials(void)
{
    double inf = v_one / v_zero;
    double nan = v_zero / v_zero;
    show("1/0", inf);
    show("-1/0", -v_one / v_zero);
    printf("isinf(1/0)             %d\n", isinf(inf) != 0);
    printf("isnan(0/0)             %d\n", isnan(nan) != 0);
    printf("0/0 == 0/0             %d\n", nan == nan);
    show("exp(1000)", exp(1000 * v_one));
    show("1/inf", v_one / inf);
}

static void rounding(void)
{
    static const struct { int mode; const char *name; } modes[] = {
        { FE_TONEAREST, "nearest" },
        { FE_UPWARD, "upward" },
        { FE_DOWNWARD, "downward" },
        { FE_TOWARDZERO, "towardzero" },
    };
    for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        int rc = fesetround(modes[i].mode);
        int back = fegetround() == modes[i].mode;
        double q = v_one / v_three, nq = -v_one / v_three;
        double c = (double)v_big;
        double r = rint(2.5 * v_one), nr = nearbyint(-2.5 * v_one);
        long lr = lrint(-3.5 * v_one);
        double sq = sqrt(v_two);
        fesetround(FE_TONEAREST);   /* print in the default mode */
        printf("mode %-10s set=%d get=%d\n", modes[i].name, rc, back);
        show("  1/3", q);
        show("  -1/3", nq);
        show("  (double)(2^53+1)", c);
        show("  rint(2.5)", r);
        show("  nearbyint(-2.5)", nr);
        printf("  lrint(-3.5)          %ld\n", lr);
        show("  sqrt(2)", sq);
    }
}

int main(void)
{
    basics();
    series();
    conversions();
    specials();
    rounding();
    return 0;
}
