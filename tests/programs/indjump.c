/* indjump: an indirect call whose target alternates between two functions.
 *
 * In dispatch(), each iteration loads a function pointer from a table,
 * selected by bit 0 of i, and calls through it: on Alpha a `jsr ra,(pv)`
 * whose target register comes from the table, not from a GOT entry.  The
 * target alternates target_even, target_odd, target_even, ...  The loop
 * body runs exactly ITERS = 10000 times; each target is entered exactly
 * 5000 times.  A predictor that remembers the last target (or a hint
 * naming one of them) misses every time.  Exit status 0.
 */
#include <stdio.h>

#define ITERS 10000

typedef unsigned long (*fn)(unsigned long, long);

__attribute__((noipa)) static unsigned long target_even(unsigned long x, long i)
{
    return x * 3 + (unsigned long)i;
}

__attribute__((noipa)) static unsigned long target_odd(unsigned long x, long i)
{
    return (x >> 1) ^ (unsigned long)i;
}

/* volatile: the compiler must load the pointer at run time. */
static fn volatile table[2] = { target_even, target_odd };

__attribute__((noipa)) static unsigned long dispatch(long n)
{
    unsigned long x = 1;
    for (long i = 0; i < n; i++)
        x = table[i & 1](x, i);
    return x;
}

int main(void)
{
    printf("dispatch %d: %016lx\n", ITERS, dispatch(ITERS));
    return 0;
}
