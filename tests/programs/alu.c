/* alu: an integer ALU loop with no memory accesses in its body.
 *
 * alu_loop() keeps two independent dependency chains in registers, each
 * made of single-cycle operate instructions (add, xor, logical shifts,
 * s4addq, compares), so an EV5 can issue one instruction of each chain in
 * the same cycle on E0 and E1.  main calls it twice: the loop body runs
 * exactly ITERS = 100000 times in the first call and 1000 times in the
 * second, 101000 times in all.  Prints both results; exit status 0.
 */
#include <stdio.h>

#define ITERS 100000

__attribute__((noipa)) static unsigned long alu_loop(unsigned long a, unsigned long b, long n)
{
    unsigned long c = a ^ 0x5555, d = b + 0x3333;
    for (long i = 0; i < n; i++) {
        a = a + c;          /* chain 1: a, c */
        b = b ^ d;          /* chain 2: b, d */
        c = c ^ (a >> 3);
        d = d + (b << 2);
        a = a - (c & 0xff);
        b = b + (d | 1);
        c = c + (unsigned long)i;
        d = d ^ (unsigned long)i;
    }
    return (a ^ c) * 3 + ((b + d) << 1);
}

int main(void)
{
    unsigned long r1 = alu_loop(1, 2, ITERS);
    unsigned long r2 = alu_loop(r1, r1 >> 1, 1000);
    printf("alu %d iterations: %016lx\n", ITERS, r1);
    printf("alu 1000 iterations: %016lx\n", r2);
    return 0;
}
