/* recursion: deep and branching recursion.
 *
 *   depth(100000)  a non-tail recursion 100000 calls deep, small frame
 *                  (needs a few MB of stack: fine under the usual 8 MB limit)
 *   ack(2,3), ack(3,5)  Ackermann's function, with a count of calls
 *   is_even/is_odd       mutual recursion, 10000 deep, not in tail position
 *   hofstadter F/M       Hofstadter's female and male sequences, n < 20,
 *                        computed by plain (exponential) mutual recursion
 * Exit status 0.
 */
#include <stdio.h>

#define NOIPA __attribute__((noipa))

static unsigned long calls;

NOIPA unsigned long depth(unsigned long n)
{
    if (n == 0)
        return 1;
    unsigned long r = depth(n - 1);
    return (r ^ (r >> 3)) + n;   /* work after the call: no tail call */
}

NOIPA unsigned long ack(unsigned long m, unsigned long n)
{
    calls++;
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

NOIPA int is_odd(unsigned n);

NOIPA int is_even(unsigned n)
{
    if (n == 0)
        return 1;
    return is_odd(n - 1) & 1;    /* the & keeps the call out of tail position */
}

NOIPA int is_odd(unsigned n)
{
    if (n == 0)
        return 0;
    return is_even(n - 1) & 1;
}

NOIPA int hof_m(int n);

NOIPA int hof_f(int n)
{
    calls++;
    return n == 0 ? 1 : n - hof_m(hof_f(n - 1));
}

NOIPA int hof_m(int n)
{
    calls++;
    return n == 0 ? 0 : n - hof_f(hof_m(n - 1));
}

int main(void)
{
    printf("depth(100000) = %016lx\n", depth(100000));
    unsigned long r;
    calls = 0;
    r = ack(2, 3);
    printf("ack(2,3) = %lu (%lu calls)\n", r, calls);
    calls = 0;
    r = ack(3, 5);
    printf("ack(3,5) = %lu (%lu calls)\n", r, calls);
    printf("is_even(10000) = %d, is_odd(10000) = %d, is_even(9999) = %d\n",
           is_even(10000), is_odd(10000), is_even(9999));
    calls = 0;
    printf("F:");
    for (int n = 0; n < 20; n++)
        printf(" %d", hof_f(n));
    printf("\nM:");
    for (int n = 0; n < 20; n++)
        printf(" %d", hof_m(n));
    printf("\n(%lu calls)\n", calls);
    return 0;
}
