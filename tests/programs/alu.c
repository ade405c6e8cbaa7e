/* alu: an integer ALU loop with no memory accesses in its body.
 *
 * alu_loop() keeps six independent dependency chains in registers; each
 * step of a chain is two single-cycle operate instructions (xor with the
 * counter, add of a constant), so an EV5 can issue two instructions a
 * cycle on E0 and E1 through most of the body.  The body is unrolled
 * twice.  main calls it twice: the loop body runs exactly ITERS = 50000
 * times in the first call and 500 times in the second, 50500 times in all
 * (each covering two steps of every chain).  Prints both results; exit
 * status 0.
 */
#include <stdio.h>

#define ITERS 50000

#define STEP(x, k) x = (x ^ i) + (k)

__attribute__((noipa)) static unsigned long alu_loop(unsigned long a, unsigned long b, long n)
{
    unsigned long c = a ^ 0x5555, d = b + 0x3333, e = a + b, f = a - b;
    for (long i = 0; i < n; i++) {
        STEP(a, 0x1234567);
        STEP(b, 0x2345671);
        STEP(c, 0x3456712);
        STEP(d, 0x4567123);
        STEP(e, 0x5671234);
        STEP(f, 0x6712345);
        STEP(a, 0x7123456);
        STEP(b, 0x1357913);
        STEP(c, 0x2468024);
        STEP(d, 0x3579135);
        STEP(e, 0x4680246);
        STEP(f, 0x5791357);
    }
    return (a ^ c ^ e) * 3 + ((b + d + f) << 1);
}

int main(void)
{
    unsigned long r1 = alu_loop(1, 2, ITERS);
    unsigned long r2 = alu_loop(r1, r1 >> 1, 500);
    printf("alu %d iterations: %016lx\n", ITERS, r1);
    printf("alu 500 iterations: %016lx\n", r2);
    return 0;
}
