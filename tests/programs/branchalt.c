/* branchalt: a conditional branch that alternates taken / not taken.
 *
 * In alternate(), the test of bit 0 of i compiles to a BLBC/BLBS (or
 * similar) conditional branch; the two sides update different volatile
 * counters, so the compiler cannot turn the branch into a conditional move.
 * The loop body runs exactly ITERS = 10000 times; each side of the branch
 * runs exactly 5000 times, strictly alternating (odd side, even side, ...
 * starting with even at i = 0).  A branch predictor with a 2-bit counter per
 * branch mispredicts it about half the time.  Exit status 0.
 */
#include <stdio.h>

#define ITERS 10000

static volatile unsigned long odd_sum, even_sum;

__attribute__((noipa)) static void alternate(long n)
{
    for (long i = 0; i < n; i++) {
        if (i & 1)
            odd_sum += (unsigned long)i;
        else
            even_sum += (unsigned long)i ^ 0x55;
    }
}

int main(void)
{
    alternate(ITERS);
    printf("odd_sum %lu even_sum %lu\n", odd_sum, even_sum);
    return 0;
}
