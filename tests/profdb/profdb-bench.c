/*
 * profdb-bench IMAGE: profile size and merge throughput, side by side.
 *
 * Size: a profile of 30,000 distinct sampled offsets inside IMAGE's .text
 * with a skewed count distribution, laid out two ways (offsets uniform over
 * the text, and clustered in hot regions as real cycle profiles are),
 * against the image itself, against plain (u64 offset, u64 count) pairs and
 * against our varint encoding before zstd, at several zstd levels.
 *
 * Throughput: merges into a scratch database of large profiles (30,000
 * offsets each) and of many small ones, wall and CPU time, every merge
 * durable (fsync) as in production.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "image/image.h"
#include "tests/profdb/testutil.h"

enum { DISTINCT = 30000 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

/* Heavy-tailed counts: most offsets a few samples, a few offsets many
 * (Pareto, alpha 1.2). */
static uint64_t skewed(uint64_t *s)
{
    double u = ((double)(tu_rand(s) >> 11) + 1) / 9007199254740993.0;
    double c = pow(u, -1 / 1.2);
    return c > 1e9 ? 1000000000 : (uint64_t)c;
}

static int cmp_off(const void *a, const void *b)
{
    uint64_t x = ((const profdb_entry *)a)->offset, y = ((const profdb_entry *)b)->offset;
    return x < y ? -1 : x > y;
}

/* DISTINCT offsets in [base, base+size), 4-byte aligned, sorted. */
static profdb_entry *make_profile(uint64_t base, uint64_t size, bool clustered, uint64_t seed)
{
    uint64_t s = seed, ninsn = size / 4;
    uint8_t *used = calloc(ninsn, 1);
    profdb_entry *e = malloc(DISTINCT * sizeof *e);
    size_t n = 0;
    while (n < DISTINCT) {
        if (!clustered) {
            uint64_t i = tu_rand(&s) % ninsn;
            if (!used[i]) {
                used[i] = 1;
                e[n++] = (profdb_entry){ base + 4 * i, skewed(&s) };
            }
            continue;
        }
        /* a hot region: a run of 8 to 200 instructions sharing a heat */
        uint64_t start = tu_rand(&s) % ninsn, len = 8 + tu_rand(&s) % 193;
        uint64_t heat = skewed(&s);
        for (uint64_t i = start; i < start + len && i < ninsn && n < DISTINCT; i++) {
            if (used[i] || tu_rand(&s) % 8 == 0)   /* some instructions never sampled */
                continue;
            used[i] = 1;
            uint64_t c = heat * (1 + tu_rand(&s) % 4) / 2;
            e[n++] = (profdb_entry){ base + 4 * i, c ? c : 1 };
        }
    }
    free(used);
    qsort(e, n, sizeof *e, cmp_off);
    return e;
}

static size_t varint_bytes(const profdb_entry *e, size_t n)
{
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = i ? e[i].offset - e[i - 1].offset : e[i].offset;
        for (uint64_t v = d; ; v >>= 7) { b++; if (v < 0x80) break; }
        for (uint64_t v = e[i].count; ; v >>= 7) { b++; if (v < 0x80) break; }
    }
    return b;
}

static size_t encoded_size(const profdb_entry *e, size_t n, int level, double *secs)
{
    char *path = "/usr/bin/lua";
    profdb_profile p = { .n = n, .e = (profdb_entry *)e };
    p.info.event = "cycles";
    p.info.host = "alpha1";
    p.info.paths[0] = path;
    p.info.npaths = 1;
    p.info.build_id_len = 20;
    uint8_t *b;
    size_t size;
    profdb_error err;
    double t0 = now();
    int reps = 0;
    do {
        if (!profdb_encode(&p, level, &b, &size, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            exit(1);
        }
        free(b);
        reps++;
    } while (now() - t0 < 0.2);
    *secs = (now() - t0) / reps;
    return size;
}

static void sizes(const char *imgpath)
{
    image_error ierr;
    image *img = image_open(imgpath, &ierr);
    if (!img) {
        fprintf(stderr, "profdb-bench: %s\n", ierr.msg);
        exit(1);
    }
    const image_section *text = image_section_by_name(img, ".text");
    if (!text) {
        fprintf(stderr, "profdb-bench: %s: no .text\n", imgpath);
        exit(1);
    }
    struct stat st;
    stat(imgpath, &st);
    printf("image %s: %lld bytes, .text %" PRIu64 " bytes (%" PRIu64 " instructions)\n", imgpath,
           (long long)st.st_size, text->size, text->size / 4);
    printf("profile: %d distinct offsets in .text, Pareto-skewed counts\n\n", DISTINCT);

    const char *names[2] = { "uniform", "clustered" };
    profdb_entry *prof[2];
    for (int k = 0; k < 2; k++)
        prof[k] = make_profile(text->addr, text->size, k == 1, 42 + k);
    printf("%-36s %14s %14s\n", "", names[0], names[1]);
    uint64_t tot[2] = { tu_total(prof[0], DISTINCT), tu_total(prof[1], DISTINCT) };
    printf("%-36s %14" PRIu64 " %14" PRIu64 "\n", "samples", tot[0], tot[1]);
    printf("%-36s %14lld %14lld\n", "image file bytes", (long long)st.st_size, (long long)st.st_size);
    size_t pairs = (size_t)DISTINCT * 16;
    printf("%-36s %14zu %14zu\n", "(u64, u64) pairs, bytes", pairs, pairs);
    size_t vb[2] = { varint_bytes(prof[0], DISTINCT), varint_bytes(prof[1], DISTINCT) };
    printf("%-36s %14zu %14zu\n", "varint columns before zstd, bytes", vb[0], vb[1]);
    static const int levels[] = { 1, 3, 9, 19 };
    size_t file9[2] = { 0, 0 };
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        double t[2];
        size_t f[2] = { encoded_size(prof[0], DISTINCT, levels[l], &t[0]),
                        encoded_size(prof[1], DISTINCT, levels[l], &t[1]) };
        char label[64];
        snprintf(label, sizeof label, "profile file bytes, zstd %d%s", levels[l],
                 levels[l] == 9 ? " (used)" : "");
        printf("%-36s %14zu %14zu   encode %.1f / %.1f ms\n", label, f[0], f[1], t[0] * 1e3, t[1] * 1e3);
        if (levels[l] == 9)
            file9[0] = f[0], file9[1] = f[1];
    }
    printf("%-36s %13.1fx %13.1fx   (target >= 10x)\n", "image / profile file",
           (double)st.st_size / (double)file9[0], (double)st.st_size / (double)file9[1]);
    printf("%-36s %13.1fx %13.1fx   (target >= 3x)\n", "(u64, u64) pairs / profile file",
           (double)pairs / (double)file9[0], (double)pairs / (double)file9[1]);
    printf("%-36s %13.1fx %13.1fx\n", "varint columns / profile file",
           (double)vb[0] / (double)file9[0], (double)vb[1] / (double)file9[1]);
    for (int k = 0; k < 2; k++)
        free(prof[k]);
    image_close(img);
}

/* Merge `rounds` batches of `nprof` profiles of `n` samples each. */
static void throughput(const char *label, int nprof, size_t n, int rounds)
{
    char *dir = tu_tmpdir();
    profdb_error err;
    profdb *db = dir ? profdb_open(dir, 0, &err) : NULL;
    if (!db) {
        fprintf(stderr, "profdb-bench: %s\n", dir ? err.msg : "no scratch directory");
        exit(1);
    }
    profdb_input *in = calloc((size_t)nprof, sizeof *in);
    uint8_t (*ids)[20] = calloc((size_t)nprof, 20);
    profdb_entry **s = calloc((size_t)nprof, sizeof *s);
    uint64_t samples = 0, entries = 0;
    double wall = 0, cpus = 0;
    for (int r = 0; r < rounds; r++) {
        uint64_t batch_samples = 0;
        for (int p = 0; p < nprof; p++) {
            s[p] = tu_samples((uint64_t)r * 7919 + (uint64_t)p, n, 1u << 20);
            memcpy(ids[p], &p, sizeof p);
            memset(ids[p] + sizeof p, 0xab, 20 - sizeof p);
            in[p] = (profdb_input){ .path = "/usr/bin/lua", .build_id = ids[p], .build_id_len = 20,
                                    .event = "cycles", .mean_period = 62000, .host = "bench",
                                    .samples = s[p], .nsamples = n };
            batch_samples += tu_total(s[p], n);
        }
        double t0 = now(), c0 = cpu();
        if (profdb_merge(db, in, (size_t)nprof, &err) != (size_t)nprof || err.code) {
            fprintf(stderr, "profdb-bench: %s\n", err.msg);
            exit(1);
        }
        wall += now() - t0;
        cpus += cpu() - c0;
        samples += batch_samples;
        entries += (uint64_t)nprof * n;
        for (int p = 0; p < nprof; p++)
            free(s[p]);
    }
    double merges = (double)nprof * rounds;
    printf("%-30s %8.0f %12.0f %14.0f %10.1f %8.1f\n", label, merges / wall, (double)entries / wall,
           (double)samples / wall, wall, cpus);
    profdb_close(db);
    tu_rmrf(dir);
    free(dir);
    free(in);
    free(ids);
    free(s);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: profdb-bench IMAGE\n");
        return 2;
    }
    sizes(argv[1]);
    printf("\nmerge throughput (every merge read + add + write + fsync + rename; directory synced per batch)\n");
    printf("%-30s %8s %12s %14s %10s %8s\n", "", "merges/s", "entries/s", "samples/s", "wall s", "cpu s");
    throughput("8 profiles x 30000 samples", 8, 30000, 10);
    throughput("200 profiles x 200 samples", 200, 200, 5);
    return 0;
}
