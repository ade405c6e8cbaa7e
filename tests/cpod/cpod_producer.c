/*
 * tests/cpod/cpod_producer.c: a machine stand-in for testing cpod.
 *
 *   cpod_producer DB EXPECTED [options] IMAGE...
 *
 * Attaches to DB's daemon as a machine would (cpod_attach, 4 CPUs, events
 * cycles and imiss), then plays a deterministic little system: processes
 * that load the given real images (build-ids read with image/), fork,
 * exec and exit, one that never announces anything, and PCs outside every
 * mapping.  Samples are spread over the CPUs in stall mode, so the driver
 * drops nothing.  EXPECTED gets what the database must then hold, one line
 * per profile offset: "KEY EVENT OFFSET COUNT" (OFFSET in hex), unknown
 * samples under key "unknown" with the pc as offset.
 *
 * Options: --samples N (default 200000)  --seed N  --pid-base N (default
 * 1000; run two producers with different bases for two machines)  --rate
 * N (samples per second, 0 = flat out)  --per-process NAME (also expect
 * per-process profiles of the image with that file name)  --stop-after N
 * (exit with status 3 right after N samples, without exit notices or
 * detaching cleanly: a crashing machine)  --table N, --buffer N (driver
 * sizes, default 1024 and 512: small, so that entries move a lot)
 * --no-expect (write no expectation: for benchmarks)  --quiet
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/cpod.h"
#include "image/image.h"

#define NCPUS 4
#define PAGE 8192u
#define NHOT 64

typedef struct img {
    const char *path, *base;
    char key[160];
    uint8_t bid[DRV_MAX_BUILD_ID];
    size_t bidlen;
    image_segment seg[16];
    size_t nseg;
    uint64_t text_lo, text_hi;     /* link-time addresses of the executable segment */
    uint64_t hot[NHOT];
} img;

static img *imgs;
static size_t nimgs;
static drv *D;
static const char *per_process, *expected_path;
static void write_expected(const char *out);
static uint64_t rate, sent, stop_after;
static bool no_expect;
static struct timespec t0;

/* ---- expected counts ------------------------------------------------------- */

typedef struct ent {
    int img;                 /* -1: unknown */
    unsigned ev;
    uint32_t pid;            /* per-process entries; 0 otherwise */
    uint64_t off, count;
} ent;

static ent *tab;
static size_t cap, used;

static uint64_t hash(int i, unsigned ev, uint32_t pid, uint64_t off)
{
    uint64_t h = (off >> 2) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(uint32_t)i << 40 | (uint64_t)ev << 32 | pid) * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

static void expect(int i, unsigned ev, uint32_t pid, uint64_t off)
{
    if (no_expect)
        return;
    if (2 * (used + 1) > cap) {
        size_t oc = cap;
        ent *old = tab;
        cap = cap ? cap * 2 : 1 << 16;
        tab = calloc(cap, sizeof *tab);
        if (!tab)
            exit(1);
        used = 0;
        for (size_t k = 0; k < oc; k++)
            if (old[k].count) {
                size_t s = hash(old[k].img, old[k].ev, old[k].pid, old[k].off) & (cap - 1);
                while (tab[s].count)
                    s = (s + 1) & (cap - 1);
                tab[s] = old[k];
                used++;
            }
        free(old);
    }
    size_t s = hash(i, ev, pid, off) & (cap - 1);
    while (tab[s].count && !(tab[s].img == i && tab[s].ev == ev && tab[s].pid == pid && tab[s].off == off))
        s = (s + 1) & (cap - 1);
    if (!tab[s].count) {
        tab[s] = (ent){ i, ev, pid, off, 0 };
        used++;
    }
    tab[s].count++;
}

/* ---- the machine ------------------------------------------------------------- */

static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void pace(void)
{
    if (!rate || sent % 64)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double el = (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
    double want = (double)sent / (double)rate;
    if (want > el) {
        double d = want - el;
        nanosleep(&(struct timespec){ (time_t)d, (long)((d - (time_t)d) * 1e9) }, NULL);
    }
}

static void sample(uint32_t pid, uint64_t pc, unsigned ev)
{
    unsigned cpu = (unsigned)(next() % NCPUS);
    for (;;) {
        int rc = drv_sample(D, cpu, pid, pc, ev);
        if (rc == DRV_OK)
            break;
        if (rc != DRV_FULL) {
            fprintf(stderr, "cpod_producer: drv_sample: %s\n", drv_strerror(rc));
            exit(1);
        }
        /* No room: the daemon is behind, or down.  Keep answering flush
         * requests on every CPU while waiting, as the machine's idle loop would. */
        for (unsigned c = 0; c < NCPUS; c++)
            drv_poll(D, c);
        drv_wait(D, cpu, 20);
    }
    if (++sent % 1024 == 0)
        for (unsigned c = 0; c < NCPUS; c++)
            drv_poll(D, c);
    if (stop_after && sent == stop_after) {
        write_expected(expected_path);
        _exit(3);   /* a crash: no exit notices, no detaching */
    }
    pace();
}

static void notice(int rc, const char *what)
{
    if (rc != DRV_OK) {
        fprintf(stderr, "cpod_producer: %s notice: %s\n", what, drv_strerror(rc));
        exit(1);
    }
}

/* Map image i into pid at bias (load address minus link address) the way
 * a loader would: one LOAD per PT_LOAD segment, page-aligned. */
static void load(uint32_t pid, int i, uint64_t bias)
{
    const img *m = &imgs[i];
    for (size_t k = 0; k < m->nseg; k++) {
        const image_segment *s = &m->seg[k];
        uint64_t lo = s->vaddr & ~(uint64_t)(PAGE - 1);
        uint64_t hi = (s->vaddr + s->memsz + PAGE - 1) & ~(uint64_t)(PAGE - 1);
        notice(drv_notice_load(D, pid, bias + lo, hi - lo, s->offset & ~(uint64_t)(PAGE - 1),
                               m->path, m->bid, m->bidlen), "load");
    }
}

/* n samples in process pid, spread over images imgv[] mapped at biasv[]. */
static void run(uint32_t pid, const int *imgv, const uint64_t *biasv, int nim, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        unsigned ev = next() % 10 == 0 ? 1 : 0;
        int which = (int)(next() % (uint64_t)nim);
        const img *m = &imgs[imgv[which]];
        uint64_t off;
        uint64_t r = next() % 100;
        if (r < 70) {           /* hot spots, skewed */
            uint64_t h = next() % NHOT;
            off = m->hot[h * h / NHOT];
        } else {
            off = m->text_lo + (next() % ((m->text_hi - m->text_lo) / 4)) * 4;
        }
        expect(imgv[which], ev, 0, off);   /* first: a crash may end sample() */
        if (per_process && !strcmp(per_process, m->base))
            expect(imgv[which], ev, pid, off);
        sample(pid, off + biasv[which], ev);
    }
}

/* Samples no image claims: high addresses nobody maps. */
static void unmapped(uint32_t pid, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        unsigned ev = next() % 10 == 0 ? 1 : 0;
        uint64_t pc = 0x3ff00000000ull + (next() % 512) * 4;
        expect(-1, ev, 0, pc);
        sample(pid, pc, ev);
    }
}

static void read_image(img *m, const char *path)
{
    image_error err;
    image *f = image_open(path, &err);
    if (!f) {
        fprintf(stderr, "cpod_producer: %s\n", err.msg);
        exit(1);
    }
    m->path = realpath(path, NULL);   /* what a machine reports: the host file */
    if (!m->path) {
        perror(path);
        exit(1);
    }
    m->base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    memcpy(m->bid, f->build_id, f->build_id_len);
    m->bidlen = f->build_id_len;
    if (!m->bidlen) {
        fprintf(stderr, "cpod_producer: %s has no build-id\n", path);
        exit(1);
    }
    image_build_id_hex(f, m->key, sizeof m->key);
    for (size_t k = 0; k < f->nsegments && m->nseg < 16; k++) {
        const image_segment *s = &f->segments[k];
        if (s->type != 1)   /* PT_LOAD */
            continue;
        m->seg[m->nseg++] = *s;
        if ((s->flags & 1) && !m->text_hi) {   /* PF_X */
            m->text_lo = (s->vaddr + 3) & ~3ull;
            m->text_hi = s->vaddr + s->filesz;
        }
    }
    if (m->text_hi <= m->text_lo + 64) {
        fprintf(stderr, "cpod_producer: %s: no executable segment\n", path);
        exit(1);
    }
    for (int h = 0; h < NHOT; h++)
        m->hot[h] = m->text_lo + (next() % ((m->text_hi - m->text_lo) / 4)) * 4;
    image_close(f);
}

static int cmp_ent(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->img != y->img)
        return x->img < y->img ? -1 : 1;
    if (x->ev != y->ev)
        return x->ev < y->ev ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The region's name (NAME of NAME.drv): per-process profiles carry it. */
static char machine[256];

static void write_expected(const char *out)
{
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        exit(1);
    }
    size_t k = 0;
    for (size_t i = 0; i < cap; i++)
        if (tab[i].count)
            tab[k++] = tab[i];
    qsort(tab, k, sizeof *tab, cmp_ent);
    static const char *evname[] = { "cycles", "imiss" };
    for (size_t i = 0; i < k; i++) {
        const ent *e = &tab[i];
        if (e->pid)
            fprintf(f, "%s %s@pid-%u.%s %016" PRIx64 " %" PRIu64 "\n", imgs[e->img].key,
                    evname[e->ev], e->pid, machine, e->off, e->count);
        else
            fprintf(f, "%s %s %016" PRIx64 " %" PRIu64 "\n", e->img < 0 ? "unknown" : imgs[e->img].key,
                    evname[e->ev], e->off, e->count);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cpod_producer DB EXPECTED [options] IMAGE...\n");
        return 2;
    }
    const char *db = argv[1], *out = argv[2];
    expected_path = out;
    uint64_t total = 200000, seed = 1;
    uint32_t base = 1000;
    bool quiet = false;
    unsigned table = 1024, buffer = 512;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quiet"))
            quiet = true;
        else if (!strcmp(a, "--no-expect"))
            no_expect = true;
        else if (!strncmp(a, "--", 2) && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(a, "--samples")) total = strtoull(v, NULL, 0);
            else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0);
            else if (!strcmp(a, "--pid-base")) base = (uint32_t)strtoul(v, NULL, 0);
            else if (!strcmp(a, "--rate")) rate = strtoull(v, NULL, 0);
            else if (!strcmp(a, "--per-process")) per_process = v;
            else if (!strcmp(a, "--stop-after")) stop_after = strtoull(v, NULL, 0);
            else if (!strcmp(a, "--table")) table = (unsigned)strtoul(v, NULL, 0);
            else if (!strcmp(a, "--buffer")) buffer = (unsigned)strtoul(v, NULL, 0);
            else {
                fprintf(stderr, "cpod_producer: unknown option %s\n", a);
                return 2;
            }
        } else {
            paths[nimgs++] = a;
        }
    }
    if (nimgs < 3) {
        fprintf(stderr, "cpod_producer: give at least three images\n");
        return 2;
    }
    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    imgs = calloc(nimgs, sizeof *imgs);
    for (size_t i = 0; i < nimgs; i++)
        read_image(&imgs[i], paths[i]);

    cpod_event evs[] = { { CPOD_EV_CYCLES, "cycles", 62000 }, { CPOD_EV_IMISS, "imiss", 1000 } };
    char name[64];
    snprintf(name, sizeof name, "cpod_producer pid %d", (int)getpid());
    cpod_machine mach = { .ncpus = NCPUS, .events = evs, .nevents = 2, .name = name,
                          .drv = { .full_mode = DRV_FULL_STALL, .table_entries = table,
                                   .buffer_entries = buffer } };
    char region[4200];
    drv_error err;
    if (!(D = cpod_attach(db, &mach, region, sizeof region, &err))) {
        fprintf(stderr, "cpod_producer: %s\n", err.msg);
        return 1;
    }
    if (!quiet)
        fprintf(stderr, "cpod_producer: region %s\n", region);
    const char *rname = strrchr(region, '/') ? strrchr(region, '/') + 1 : region;
    snprintf(machine, sizeof machine, "%.*s", (int)(strlen(rname) > 4 ? strlen(rname) - 4 : 0), rname);
    clock_gettime(CLOCK_MONOTONIC, &t0);

    /* The play.  Every image is an ET_EXEC linked at 0x120000000, so a
     * process holds one at its link address and others as "libraries"
     * high up (the daemon does not care what kind of file it maps). */
    const uint64_t lib = 0x20000000000ull - 0x120000000ull;
    const uint64_t lib2 = 0x20100000000ull - 0x120000000ull;
    uint64_t n = total / 8;
    uint32_t shell = base, child = base + 1, other = base + 2, ghost = base + 50;
    int sv[2] = { 0, 1 };
    uint64_t sb[2] = { 0, lib };
    notice(drv_notice_exec(D, shell), "exec");
    load(shell, 0, 0);
    load(shell, 1, lib);
    run(shell, sv, sb, 2, n);
    unmapped(shell, n / 8);                       /* pcs nothing maps */

    for (int round = 0; round < 3; round++) {
        /* fork: the child runs in the parent's images, then execs image 2
         * (where image 0 was) with image 1 at another address. */
        notice(drv_notice_fork(D, shell, child), "fork");
        int lv[1] = { 1 };
        uint64_t lb[1] = { lib };
        run(child, lv, lb, 1, n / 4);             /* only where the new map will not be */
        notice(drv_notice_exec(D, child), "exec");
        load(child, 2 + round % ((int)nimgs - 2), 0);
        load(child, 1, lib2);
        int cv[2] = { 2 + round % ((int)nimgs - 2), 1 };
        uint64_t cb[2] = { 0, lib2 };
        run(child, cv, cb, 2, n / 2);
        run(shell, sv, sb, 2, n / 4);             /* the parent runs meanwhile */
        notice(drv_notice_exit(D, child, 0), "exit");
        child += 10;
    }
    /* another process with its own program */
    notice(drv_notice_exec(D, other), "exec");
    load(other, (int)nimgs - 1, 0);
    int ov[1] = { (int)nimgs - 1 };
    uint64_t ob[1] = { 0 };
    run(other, ov, ob, 1, n);
    /* a process nobody announced */
    unmapped(ghost, n / 4);
    /* whatever is left of the budget, back in the first process */
    if (sent < total)
        run(shell, sv, sb, 2, total - sent);
    notice(drv_notice_exit(D, other, 0), "exit");
    notice(drv_notice_exit(D, shell, 0), "exit");
    drv_counters c;
    drv_counters_get(D, -1, &c);
    drv_close(D);
    if (!no_expect)
        write_expected(out);
    if (!quiet)
        fprintf(stderr, "cpod_producer: %" PRIu64 " samples, %" PRIu64 " dropped, %" PRIu64
                " notices lost\n", sent, c.dropped, c.notices_lost);
    return c.dropped || c.notices_lost;
}
