/* intloop: integer loops with known trip counts.
 *
 * Each loop lives in its own procedure (noipa: never inlined, cloned or
 * specialised), and main calls each procedure exactly once, so the execution
 * count of every loop body is fixed:
 *
 *   loop1000   the body runs exactly 1000 times (i = 0 .. 999).
 *   nested     the outer body runs 10 times; the inner body runs 37 times per
 *              outer iteration, 370 times in all.
 *   third      the body runs 3000 times; the `if` inside it is taken on
 *              every third iteration (the 3rd, 6th, ... 3000th), exactly
 *              1000 times, and calls bump() each time it is taken, so bump()
 *              is entered exactly 1000 times.  The if's body is a call so
 *              the compiler keeps a real conditional branch (no cmov).
 *
 * The loop bodies mix shifts, multiplies and xors so that the compiler cannot
 * replace a loop by a closed-form value.  Output is the result of each loop;
 * exit status 0.
 */
#include <stdio.h>

#define NOIPA __attribute__((noipa))

NOIPA unsigned long loop1000(unsigned long x)
{
    for (int i = 0; i < 1000; i++)
        x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15UL + (unsigned long)i;
    return x;
}

NOIPA unsigned long nested(unsigned long x)
{
    for (int i = 0; i < 10; i++) {
        x ^= (unsigned long)i << 3;
        for (int j = 0; j < 37; j++)
            x = (x << 5 | x >> 59) + (unsigned long)(j * i) + 1;
    }
    return x;
}

NOIPA unsigned long bump(unsigned long h, int i)
{
    return h * 31 + (unsigned long)i;
}

NOIPA unsigned long third(unsigned long *hits)
{
    unsigned long h = 7, s = 0;
    int k = 0;
    for (int i = 0; i < 3000; i++) {
        s = (s ^ (unsigned long)i) * 3;
        if (++k == 3) {
            k = 0;
            h = bump(h, i);
            (*hits)++;
        }
    }
    return h ^ s;
}

int main(void)
{
    unsigned long hits = 0;
    unsigned long a = loop1000(1);
    unsigned long b = nested(2);
    unsigned long c = third(&hits);
    printf("loop1000: %016lx\n", a);
    printf("nested:   %016lx\n", b);
    printf("third:    %016lx hits=%lu\n", c, hits);
    return 0;
}
