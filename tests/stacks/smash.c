/*
 * smash: a guest that overwrites its own callers' frames while it runs,
 * for the stack walker's hostile-stack test (tests/integration/
 * axp_stacks.sh).  Three rounds fill the stack above smash()'s frame with
 * garbage, with addresses pointing back into the stack, and with all
 * ones; each round spins in a leaf long enough to be sampled many times,
 * then puts the stack back exactly as it was and returns normally.
 * Prints one checksum line per round.  Exit status 0.
 */
#include <stdio.h>
#include <string.h>

#define NOIPA __attribute__((noipa))
#define WORDS 96

static unsigned long saved[WORDS];

NOIPA unsigned long spin(unsigned long n)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++)
        s = s * 31 + (i ^ (s >> 7));
    return s;
}

/* Everything from this frame up WORDS words is the callers': their saved
 * return addresses and frame pointers.  The loops keep to registers. */
NOIPA unsigned long smash(int round)
{
    volatile unsigned long *top = __builtin_frame_address(0);
    for (int i = 0; i < WORDS; i++)
        saved[i] = top[i];
    unsigned long x = 0x9e3779b97f4a7c15ul;
    for (int i = 0; i < WORDS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        top[i] = round == 0 ? x : round == 1 ? (unsigned long)(top + (i % 4)) : ~0ul;
    }
    unsigned long s = spin(400000);
    for (int i = 0; i < WORDS; i++)
        top[i] = saved[i];
    return s;
}

NOIPA unsigned long middle(int round)
{
    return smash(round) + 1;
}

int main(void)
{
    for (int r = 0; r < 3; r++)
        printf("round %d: %lx\n", r, middle(r));
    return 0;
}
