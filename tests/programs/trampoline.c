/*
 * trampoline: GCC nested functions whose addresses escape, so GCC builds a
 * trampoline for each on the stack (the executable needs PT_GNU_STACK with
 * PF_X, and the code written there runs after an IMB).  Each call of
 * outer(k) writes new trampolines at the same stack addresses with another
 * static chain: a machine that kept the old decoded code would see the
 * wrong k.  outer runs for k = 1..199; apply calls inner 50 times per k,
 * qsort calls cmp on 40 elements per k.
 */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) long apply(long (*f)(long), int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += f(i);
    return s;
}

static __attribute__((noinline)) long outer(long k)
{
    long bias = 3 * k;
    long inner(long x) { return x * k + bias; }
    int cmp(const void *a, const void *b)
    {
        long x = *(const long *)a % (k + 1), y = *(const long *)b % (k + 1);
        return (x > y) - (x < y);
    }
    long v[40];
    for (int i = 0; i < 40; i++)
        v[i] = (i * 7919 + k) % 101;
    qsort(v, 40, sizeof v[0], cmp);
    return apply(inner, 50) + v[0] + 7 * v[39];
}

int main(void)
{
    long t = 0;
    for (long k = 1; k < 200; k++) {
        t += outer(k);
        if (k % 50 == 0)
            printf("k=%ld total=%ld\n", k, t);
    }
    printf("%ld\n", t);
    return 0;
}
