/* tailcall: recursion through a tail call into a procedure that is still
 * running further down the stack.
 *
 *   outer(n) calls middle(n), which calls inner(n), which ends with the
 *   tail call outer(n - 1): a `br` to outer's entry while the first outer
 *   waits for middle.  The inner outer's return goes to middle, whose
 *   activation is still there.  outer(6) makes 7 activations of outer,
 *   7 of middle, 7 of inner, 7 calls of leaf from middle and 7 from
 *   outer (35 calls counted); run 3 times.
 * Exit status 0.
 */
#include <stdio.h>

#define NOIPA __attribute__((noipa))

static unsigned long calls;

static NOIPA unsigned long leaf(unsigned long n)
{
    calls++;
    return n * 3 + 1;
}

static NOIPA unsigned long outer(unsigned long n);

static NOIPA unsigned long inner(unsigned long n)
{
    calls++;
    if (n == 0)
        return 5;
    return outer(n - 1);        /* a tail call: br to outer, running further down */
}

static NOIPA unsigned long middle(unsigned long n)
{
    calls++;
    unsigned long r = inner(n);
    return r * 7 + leaf(n);     /* after the call: not a tail call */
}

static NOIPA unsigned long outer(unsigned long n)
{
    calls++;
    unsigned long r = middle(n);
    return (r ^ (r >> 5)) + leaf(n + 1);
}

int main(void)
{
    for (int k = 0; k < 3; k++) {
        calls = 0;
        unsigned long r = outer(6);
        printf("outer(6) = %lu (%lu calls)\n", r, calls);
    }
    return 0;
}
