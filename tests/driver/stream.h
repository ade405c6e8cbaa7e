/*
 * tests/driver/stream.h: a deterministic synthetic stream of (pid, pc,
 * event) samples shaped like cycle samples of a real machine, for the
 * driver's concurrency test and benchmark.
 *
 * Shape (every figure is a parameter):
 *  - code is basic blocks of 4..12 instructions; which block a sample hits
 *    follows a Zipf law over `blocks` ranks (exponent `zipf_s`): a few
 *    blocks take most samples, a long tail takes the rest;
 *  - inside a block, half the samples fall on one stalling instruction and
 *    the rest spread evenly (cycle samples pile up where the pipe waits);
 *  - every `phase_len` samples the program moves to another phase: the
 *    rank->block mapping is reshuffled, so the hot set changes;
 *  - a quarter of the blocks live in a shared library, the rest in the
 *    main executable;
 *  - `pids` long-lived processes share the CPUs (weights 1, 1/4, 1/9...,
 *    the same on every CPU, so keys recur across CPUs), and a fraction
 *    `short_frac` of samples comes from short-lived processes, a new one
 *    every `short_len` of them (the compile-job case that hurts
 *    aggregation most: their keys never repeat);
 *  - a fraction `imiss_frac` of samples is event 1 (IMISS) on a flatter
 *    Zipf (exponent `imiss_zipf`), the rest event 0 (CYCLES).
 */
#ifndef TESTS_DRIVER_STREAM_H
#define TESTS_DRIVER_STREAM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct stream_shape {
    unsigned blocks;
    double zipf_s;
    unsigned phase_len;
    unsigned pids;
    double short_frac;
    unsigned short_len;
    double imiss_frac;
    double imiss_zipf;
} stream_shape;

/* One long-running integer program (the speedtest1 case), calibrated so
 * that DCPI's round-robin table misses about as often as the paper's
 * Table 4 reports for SPECint95 (9.5%). */
static const stream_shape stream_program_shape = {
    .blocks = 30000, .zipf_s = 1.35, .phase_len = 1000000, .pids = 2,
    .short_frac = 0.002, .short_len = 2000, .imiss_frac = 0.05, .imiss_zipf = 1.15,
};

/* The same code run by a stream of short processes (a build: every
 * compiler run a new pid, so its keys never match earlier ones), with the
 * churn set so that round-robin misses about as often as the paper's gcc
 * row (44.5%). */
static const stream_shape stream_procs_shape = {
    .blocks = 30000, .zipf_s = 1.35, .phase_len = 1000000, .pids = 2,
    .short_frac = 0.95, .short_len = 500, .imiss_frac = 0.05, .imiss_zipf = 1.15,
};

/* A flat, long-tailed stream that keeps the table thrashing: what the
 * concurrency test uses to exercise evictions and hand-overs hard. */
static const stream_shape stream_tail_shape = {
    .blocks = 20000, .zipf_s = 1.1, .phase_len = 500000, .pids = 3,
    .short_frac = 0.02, .short_len = 2000, .imiss_frac = 0.1, .imiss_zipf = 0.8,
};

#define STREAM_EXEC 0x120000000ull
#define STREAM_LIB  0x20000000000ull
#define STREAM_PID0 100u

typedef struct stream_cdf {
    unsigned n;
    double *c;          /* c[i] = P(rank <= i) */
} stream_cdf;

typedef struct stream {
    stream_shape sh;
    const stream_cdf *hot, *flat;
    uint64_t rng;
    uint64_t n;         /* samples so far */
    uint64_t salt;      /* current phase's shuffle */
    uint32_t short_pid, short_left, next_short;
    double pid_cdf[16];
} stream;

static inline uint64_t stream_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline uint64_t stream_rand(stream *s) { return s->rng = stream_mix(s->rng); }
static inline double stream_unit(stream *s) { return (double)(stream_rand(s) >> 11) / 9007199254740992.0; }

static inline int stream_cdf_init(stream_cdf *z, unsigned n, double s)
{
    z->n = n;
    if (!(z->c = malloc(n * sizeof *z->c)))
        return -1;
    double sum = 0;
    for (unsigned i = 0; i < n; i++)
        z->c[i] = sum += 1.0 / pow(i + 1, s);
    for (unsigned i = 0; i < n; i++)
        z->c[i] /= sum;
    return 0;
}

static inline unsigned stream_cdf_draw(const stream_cdf *z, double u)
{
    unsigned lo = 0, hi = z->n - 1;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (z->c[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* first_short: pids for this stream's short-lived processes start here. */
static inline void stream_init(stream *s, const stream_shape *sh, const stream_cdf *hot,
                               const stream_cdf *flat, uint64_t seed, uint32_t first_short)
{
    s->sh = *sh;
    s->hot = hot;
    s->flat = flat;
    s->rng = stream_mix(seed);
    s->n = 0;
    s->salt = 0;
    s->short_pid = 0;
    s->short_left = 0;
    s->next_short = first_short;
    unsigned np = sh->pids < 16 ? sh->pids : 16;
    double sum = 0;
    for (unsigned i = 0; i < np; i++)
        s->pid_cdf[i] = sum += 1.0 / ((i + 1.0) * (i + 1.0));
    for (unsigned i = 0; i < np; i++)
        s->pid_cdf[i] /= sum;
}

static inline void stream_next(stream *s, uint32_t *pid, uint64_t *pc, unsigned *event)
{
    const stream_shape *sh = &s->sh;
    if (sh->phase_len && s->n % sh->phase_len == 0)
        s->salt = stream_mix(s->n / sh->phase_len + 77) % sh->blocks;
    s->n++;
    double u = stream_unit(s);
    if (u < sh->short_frac) {
        if (!s->short_left) {
            s->short_pid = s->next_short++;
            s->short_left = sh->short_len;
        }
        s->short_left--;
        *pid = s->short_pid;
    } else {
        unsigned i = 0;
        double v = stream_unit(s);
        while (i + 1 < sh->pids && i + 1 < 16 && s->pid_cdf[i] < v)
            i++;
        *pid = STREAM_PID0 + i;
    }
    int imiss = stream_unit(s) < sh->imiss_frac;
    unsigned rank = stream_cdf_draw(imiss ? s->flat : s->hot, stream_unit(s));
    uint64_t block = ((uint64_t)rank * 7919 + s->salt) % sh->blocks;
    uint64_t h = stream_mix(block);
    unsigned len = 4 + (unsigned)(h % 9), insn;
    uint64_t r = stream_rand(s);
    insn = (r & 1) ? (unsigned)((h >> 8) % len) : (unsigned)((r >> 1) % len);
    uint64_t base = ((h >> 16) & 3) == 0 ? STREAM_LIB : STREAM_EXEC;
    *pc = base + block * 48 + 4 * insn;
    *event = imiss;
}

#endif
