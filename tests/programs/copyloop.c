/* copyloop: a McCalpin (STREAM) style copy, c[i] = a[i].
 *
 * Two arrays of N = 16384 doubles, 128 KB each, 256 KB together: larger than
 * the 21164's 8 KB D-cache and its 96 KB on-chip S-cache, so the copy streams
 * from memory.  The copy runs REPS = 8 times; between repetitions one
 * element of a changes, so every repetition copies different data.
 * The copy loop body runs exactly N / 4 * REPS = 32768 times.
 * Prints a checksum of c after each repetition; exit status 0.
 */
#include <stdio.h>

#define N 16384
#define REPS 8

static double a[N], c[N];

/* The copy as DCPI's Figure 2 shows it: unrolled by four, four loads and
 * then four stores, so that the stores wait on the loads' misses, fill
 * the write buffer and cannot pair with each other.  Left plain, gcc makes
 * the loop a memcpy call (loop distribution) and the copy runs in glibc. */
__attribute__((noipa, optimize("no-tree-loop-distribute-patterns")))
static void copy(double *restrict dst, const double *restrict src, long n)
{
    for (long i = 0; i + 4 <= n; i += 4) {
        double t0 = src[i], t1 = src[i + 1], t2 = src[i + 2], t3 = src[i + 3];
        dst[i] = t0;
        dst[i + 1] = t1;
        dst[i + 2] = t2;
        dst[i + 3] = t3;
    }
}

int main(void)
{
    for (long i = 0; i < N; i++) {
        a[i] = (double)i + 0.5;
        c[i] = -1.0;
    }
    printf("copy of %d doubles (%zu bytes per array), %d times\n",
           N, sizeof a, REPS);
    for (int r = 0; r < REPS; r++) {
        copy(c, a, N);
        /* Exact in double: every partial sum stays below 2^53. */
        double sum = 0.0;
        unsigned long mix = 0;
        for (long i = 0; i < N; i++) {
            sum += c[i];
            mix = mix * 1000003UL + (unsigned long)(c[i] * 2.0);
        }
        printf("rep %d: sum=%.1f mix=%016lx\n", r, sum, mix);
        a[(r * 4099) % N] += 1000.0;
    }
    return 0;
}
