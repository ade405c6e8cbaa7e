/*
 * machine/fp.c: IEEE floating point the way Linux/Alpha user code sees it.
 *
 * Results come from the host's IEEE arithmetic in the rounding mode the
 * instruction names (or the FPCR's, for /d); exceptions come from the host's
 * sticky flags, cleared before and read after each operation.  The Alpha
 * rules on top (qemu's linux-user behaves the same way):
 *   - without /s, a denormal, infinite or NaN operand traps (comparisons
 *     trap only on NaN and denormals), and any exception not ignored by a
 *     missing qualifier traps: the kernel has nothing to complete, SIGFPE;
 *   - without /u the result underflows to zero silently, without /i
 *     inexact is not reported, without /v integer overflow is not;
 *   - with /s the kernel's software completion delivers the IEEE default
 *     result and sets the status bits; it signals only the exceptions the
 *     program enabled with osf_setsysinfo(SSI_IEEE_FP_CONTROL).
 */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/linux.h"

static int host_rm = FE_TONEAREST;
static const int rm_host[4] = { FE_TOWARDZERO, FE_DOWNWARD, FE_TONEAREST, FE_UPWARD };

static inline void set_rm(unsigned rm)
{
    int h = rm_host[rm & 3];
    if (h != host_rm) {
        fesetround(h);
        host_rm = h;
    }
}

#if defined(__x86_64__)
/* The MXCSR directly: fenv's feclearexcept also touches the x87 unit. */
static inline unsigned mxcsr_get(void) { unsigned v; __asm__ volatile("stmxcsr %0" : "=m"(v)); return v; }
static inline void mxcsr_set(unsigned v) { __asm__ volatile("ldmxcsr %0" : : "m"(v)); }
static inline void fx_clear(void)
{
    unsigned v = mxcsr_get();
    if (v & 0x3f)
        mxcsr_set(v & ~0x3fu);
}
static inline uint64_t fx_flags(void)
{
    unsigned v = mxcsr_get();
    uint64_t e = 0;
    if (v & 0x01) e |= FPCR_INV;
    if (v & 0x04) e |= FPCR_DZE;
    if (v & 0x08) e |= FPCR_OVF;
    if (v & 0x10) e |= FPCR_UNF;
    if (v & 0x20) e |= FPCR_INE;
    return e;
}
#define BAR(x) __asm__ volatile("" : "+x"(x))
#else
static inline void fx_clear(void) { feclearexcept(FE_ALL_EXCEPT); }
static inline uint64_t fx_flags(void)
{
    int v = fetestexcept(FE_ALL_EXCEPT);
    uint64_t e = 0;
    if (v & FE_INVALID) e |= FPCR_INV;
    if (v & FE_DIVBYZERO) e |= FPCR_DZE;
    if (v & FE_OVERFLOW) e |= FPCR_OVF;
    if (v & FE_UNDERFLOW) e |= FPCR_UNF;
    if (v & FE_INEXACT) e |= FPCR_INE;
    return e;
}
#define BAR(x) __asm__ volatile("" : "+m"(x))
#endif

static inline double d_of(uint64_t v) { double d; memcpy(&d, &v, 8); return d; }
static inline uint64_t of_d(double d) { uint64_t v; memcpy(&v, &d, 8); return v; }
static inline float f_of(uint32_t v) { float f; memcpy(&f, &v, 4); return f; }
static inline uint32_t of_f(float f) { uint32_t v; memcpy(&v, &f, 4); return v; }

/* S_floating in a register has the T_floating layout: the 8-bit exponent
 * widened to 11 bits (AAH 4.7.6, LDS/STS). */
uint64_t fp_s_to_reg(uint32_t s)
{
    uint64_t sign = s >> 31, hi = (s >> 30) & 1, lo = (s >> 23) & 0x7f;
    uint64_t exp = (hi << 10) | lo;
    if (hi) {
        if (lo == 0x7f)
            exp = 0x7ff;
    } else if (lo) {
        exp |= 0x380;
    }
    return sign << 63 | exp << 52 | (uint64_t)(s & 0x7fffff) << 29;
}

uint32_t fp_reg_to_s(uint64_t r)
{
    return (uint32_t)(((r >> 32) & 0xc0000000) | ((r >> 29) & 0x3fffffff));
}

void fp_set_fpcr(thread *t, uint64_t v)
{
    v &= FPCR_MASK;
    if (v & FPCR_STATUS)
        v |= FPCR_SUM;
    t->fpcr = v;
}

static inline bool t_special(uint64_t v)   /* denormal, infinity or NaN */
{
    uint64_t e = (v >> 52) & 0x7ff;
    return e == 0x7ff || (e == 0 && (v << 12));
}
static inline bool t_nan(uint64_t v) { return ((v >> 52) & 0x7ff) == 0x7ff && (v << 12); }
static inline bool t_snan(uint64_t v) { return t_nan(v) && !(v & (1ULL << 51)); }
static inline bool t_denorm(uint64_t v) { return !((v >> 52) & 0x7ff) && (v << 12); }

/* Inputs without software completion. */
static bool bad_input(uint64_t v, bool cmp)
{
    if (cmp)
        return t_denorm(v) || t_nan(v);
    return t_special(v);
}

static uint64_t flush_in(thread *t, uint64_t v)
{
    if ((t->fpcr & FPCR_DNZ) && t_denorm(v))
        return v & (1ULL << 63);
    return v;
}

/* Truncating conversion that keeps the low 64 bits of an overflowing
 * result: compilers rely on it for unsigned conversions. */
static uint64_t cvttq(uint64_t a, unsigned rm, uint64_t *exc)
{
    uint64_t sign = a >> 63, frac = a & 0xfffffffffffffULL, ret = 0, round = 0;
    int exp = (int)((a >> 52) & 0x7ff);
    if (exp == 0x7ff) {
        *exc |= FPCR_INV;
        return 0;
    }
    if (exp == 0) {
        if (!frac)
            return 0;
        round = 1;              /* a denormal: far below one */
    } else {
        frac |= 1ULL << 52;
        int shift = exp - 1023 - 52;
        if (shift >= 0) {
            if (shift < 64)
                ret = frac << shift;
            if (shift >= 11 && a != 0xc3e0000000000000ULL)
                *exc |= FPCR_IOV | FPCR_INE;
        } else if (-shift < 64) {
            ret = frac >> -shift;
            round = frac << (64 + shift);
        } else {
            round = 1;
        }
    }
    if (round) {
        *exc |= FPCR_INE;
        switch (rm) {
        case 2:   /* nearest even */
            if (round > (1ULL << 63) || (round == (1ULL << 63) && (ret & 1)))
                ret++;
            break;
        case 3: ret += !sign; break;   /* plus */
        case 1: ret += sign; break;    /* minus */
        default: break;                /* chopped */
        }
    }
    return sign ? -ret : ret;
}

/* A NaN result as Alpha makes it, not as the host did (x86's default NaN
 * is negative, and with two NaN operands it keeps the first): the NaN in
 * Fb, else the one in Fa, made quiet; else the default NaN, positive with
 * every fraction bit set (alpha-facts: the kernel's software completion).
 * single: an S-format result, whose fraction keeps 23 bits. */
static uint64_t alpha_nan(int op, uint64_t a, uint64_t b, bool single)
{
    bool two = op <= FO_DIVT;
    uint64_t r = t_nan(b) ? b : two && t_nan(a) ? a : 0x7fffffffffffffffULL;
    r |= 1ULL << 51;
    return single ? r & ~((1ULL << 29) - 1) : r;
}

uint64_t fp_ieee(thread *t, int op, unsigned q, uint64_t a, uint64_t b, uint64_t *exc)
{
    unsigned rm = (q & FQ_DYN) ? (unsigned)(t->fpcr >> FPCR_DYN_SHIFT) & 3 : (q & FQ_RM);
    bool s = q & FQ_S;
    uint64_t e = 0, r = 0;
    bool cmp = op >= FO_CMPTUN && op <= FO_CMPTLE;
    bool two = op <= FO_CMPTLE;     /* two operands */

    /* The common case needs no flags: normal operands and a normal result
     * of +, -, *, / in round-to-nearest can only be inexact, which matters
     * only with /i. */
    if (op >= FO_ADDT && op <= FO_DIVT && rm == 2 && !(q & FQ_I) && host_rm == FE_TONEAREST &&
        ((a >> 52) & 0x7ff) - 1 < 0x7fe && ((b >> 52) & 0x7ff) - 1 < 0x7fe) {
        double x = d_of(a), y = d_of(b), z;
        switch (op) {
        case FO_ADDT: z = x + y; break;
        case FO_SUBT: z = x - y; break;
        case FO_MULT: z = x * y; break;
        default:      z = x / y; break;
        }
        r = of_d(z);
        if (((r >> 52) & 0x7ff) - 1 < 0x7fe)
            return r;
    }
    /* Exact conversions and ordinary comparisons raise nothing either. */
    if (op == FO_CVTQT && (int64_t)b >= -(1LL << 53) && (int64_t)b <= (1LL << 53))
        return of_d((double)(int64_t)b);
    if (op == FO_CVTQS && (int64_t)b >= -(1LL << 24) && (int64_t)b <= (1LL << 24))
        return fp_s_to_reg(of_f((float)(int64_t)b));
    if (cmp && ((a >> 52) & 0x7ff) - 1 < 0x7fe && ((b >> 52) & 0x7ff) - 1 < 0x7fe) {
        double x = d_of(a), y = d_of(b);
        bool res = op == FO_CMPTEQ ? x == y : op == FO_CMPTLT ? x < y : op == FO_CMPTLE ? x <= y : false;
        return res ? 0x4000000000000000ULL : 0;
    }
    if (op == FO_CVTQS || op == FO_CVTQT || op == FO_CVTQL)
        goto ints;
    if (!s) {
        if ((two && bad_input(a, cmp)) || bad_input(b, cmp)) {
            *exc |= FPCR_INV;
            return 0;
        }
    } else {
        a = flush_in(t, a);
        b = flush_in(t, b);
    }
    if (op == FO_CVTTQ) {
        r = cvttq(b, rm, &e);
        goto done;
    }
    if (cmp) {
        double x = d_of(a), y = d_of(b);
        bool un = t_nan(a) || t_nan(b);
        bool res;
        switch (op) {
        case FO_CMPTUN: res = un; if (t_snan(a) || t_snan(b)) e |= FPCR_INV; break;
        case FO_CMPTEQ: res = !un && x == y; if (t_snan(a) || t_snan(b)) e |= FPCR_INV; break;
        case FO_CMPTLT: res = !un && x < y; if (un) e |= FPCR_INV; break;
        default:        res = !un && x <= y; if (un) e |= FPCR_INV; break;
        }
        r = res ? 0x4000000000000000ULL : 0;
        goto done;
    }
    set_rm(rm);
    fx_clear();
    if (op <= FO_DIVS || op == FO_SQRTS || op == FO_CVTST) {
        float x = f_of(fp_reg_to_s(a)), y = f_of(fp_reg_to_s(b)), z;
        if (op == FO_CVTST) {
            double w = f_of(fp_reg_to_s(b));
            BAR(w);
            r = of_d(w);
            e = fx_flags();
            if (t_nan(r))
                r = alpha_nan(op, a, b, false);
            goto underflow;
        }
        BAR(x); BAR(y);
        switch (op) {
        case FO_ADDS: z = x + y; break;
        case FO_SUBS: z = x - y; break;
        case FO_MULS: z = x * y; break;
        case FO_DIVS: z = x / y; break;
        default:      z = sqrtf(y); break;
        }
        BAR(z);
        e = fx_flags();
        uint32_t zs = of_f(z);
        if (!(zs & 0x7f800000) && (zs & 0x7fffff) &&
            (!(q & FQ_U) || (t->fpcr & (FPCR_UNDZ | FPCR_UNFD)) == (FPCR_UNDZ | FPCR_UNFD))) {
            zs &= 0x80000000;        /* underflow to zero */
            e |= FPCR_UNF | FPCR_INE;
        }
        r = fp_s_to_reg(zs);
        if (t_nan(r))
            r = alpha_nan(op, a, b, true);
        goto done;
    } else {
        double x = d_of(a), y = d_of(b), z;
        BAR(x); BAR(y);
        switch (op) {
        case FO_ADDT: z = x + y; break;
        case FO_SUBT: z = x - y; break;
        case FO_MULT: z = x * y; break;
        case FO_DIVT: z = x / y; break;
        case FO_SQRTT: z = sqrt(y); break;
        default: {     /* FO_CVTTS */
            float f = (float)y;
            BAR(f);
            e = fx_flags();
            uint32_t zs = of_f(f);
            if (!(zs & 0x7f800000) && (zs & 0x7fffff) &&
                (!(q & FQ_U) || (t->fpcr & (FPCR_UNDZ | FPCR_UNFD)) == (FPCR_UNDZ | FPCR_UNFD))) {
                zs &= 0x80000000;
                e |= FPCR_UNF | FPCR_INE;
            }
            r = fp_s_to_reg(zs);
            if (t_nan(r))
                r = alpha_nan(op, a, b, true);
            goto done;
        }
        }
        BAR(z);
        e = fx_flags();
        r = of_d(z);
        if (t_nan(r))
            r = alpha_nan(op, a, b, false);
    }
underflow:
    if (t_denorm(r) &&
        (!(q & FQ_U) || (t->fpcr & (FPCR_UNDZ | FPCR_UNFD)) == (FPCR_UNDZ | FPCR_UNFD))) {
        r &= 1ULL << 63;
        e |= FPCR_UNF | FPCR_INE;
    }
    goto done;

ints:
    if (op == FO_CVTQL) {
        if (b != (uint64_t)(int64_t)(int32_t)b)
            e |= FPCR_IOV | FPCR_INE;
        r = ((b & 0xc0000000) << 32) | ((b & 0x3fffffff) << 29);
    } else {
        set_rm(rm);
        fx_clear();
        int64_t v = (int64_t)b;
        BAR(v);
        if (op == FO_CVTQS) {
            float f = (float)v;
            BAR(f);
            r = fp_s_to_reg(of_f(f));
        } else {
            double dd = (double)v;
            BAR(dd);
            r = of_d(dd);
        }
        e = fx_flags() & FPCR_INE;
    }
done:
    if (!(q & FQ_U))
        e &= ~(FPCR_UNF | FPCR_IOV);    /* /u and /v share the bit */
    if (!(q & FQ_I))
        e &= ~FPCR_INE;
    *exc |= e;
    return r;
}

static int fpe_code(uint64_t exc)
{
    if (exc & FPCR_INV) return A_FPE_FLTINV;
    if (exc & FPCR_DZE) return A_FPE_FLTDIV;
    if (exc & FPCR_OVF) return A_FPE_FLTOVF;
    if (exc & FPCR_UNF) return A_FPE_FLTUND;
    if (exc & FPCR_INE) return A_FPE_FLTRES;
    if (exc & FPCR_IOV) return A_FPE_INTOVF;
    return A_FPE_FLTUNK;
}

void fp_raise(thread *t, block *b, const dinsn *d, unsigned q, uint64_t exc)
{
    t->fpcr |= exc | FPCR_SUM;
    if (q & FQ_S) {
        t->swcr |= (exc >> 35) & SWCR_STATUS_MASK;
        /* the trap enables live in the software control word */
        uint64_t en = 0;
        if (t->swcr & SWCR_TRAP_INV) en |= FPCR_INV | FPCR_IOV;
        if (t->swcr & SWCR_TRAP_DZE) en |= FPCR_DZE;
        if (t->swcr & SWCR_TRAP_OVF) en |= FPCR_OVF;
        if (t->swcr & SWCR_TRAP_UNF) en |= FPCR_UNF;
        if (t->swcr & SWCR_TRAP_INE) en |= FPCR_INE;
        exc &= en;
        if (!exc)
            return;
    }
    uint64_t pc = b->pc + ((uint64_t)(d - b->ins) << 2);
    guest_fault(t, b, d, A_SIGFPE, fpe_code(exc), pc, true);
}
