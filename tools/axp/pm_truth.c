/*
 * tools/axp/pm_truth.c: --profileme-truth (pm_truth.h).  A table of the
 * distinct (process, pc, history, runs) with their counts, open
 * addressing on a hash of them; the runs in one growing pool.  The hook
 * may run on the model's thread, and with several CPUs on several, so a
 * lock guards the table.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "tools/axp/pm_truth.h"

typedef struct ent {
    uint64_t hash;              /* 0: empty */
    uint64_t count, pc;
    size_t off;                 /* its runs in the pool */
    uint32_t nruns;
    int pid;
    uint16_t hist;
    uint8_t len;
} ent;

struct pm_truth {
    pthread_mutex_t lock;
    ent *tab;
    size_t cap, n;              /* cap a power of two, kept at most half full */
    axp_pm_run *pool;
    size_t npool, cpool;
    bool oom;
};

static bool same(const pm_truth *t, const ent *e, int pid, uint64_t pc, uint16_t hist, uint8_t len,
                 const axp_pm_run *run, unsigned n)
{
    return e->pid == pid && e->pc == pc && e->hist == hist && e->len == len && e->nruns == n &&
           !memcmp(&t->pool[e->off], run, n * sizeof *run);
}

static bool grow(pm_truth *t)
{
    size_t cap = t->cap ? 2 * t->cap : 4096;
    ent *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->tab[i].hash)
            continue;
        size_t j = t->tab[i].hash & (cap - 1);
        while (tab[j].hash)
            j = (j + 1) & (cap - 1);
        tab[j] = t->tab[i];
    }
    free(t->tab);
    t->tab = tab;
    t->cap = cap;
    return true;
}

static void put(void *ctx, int pid, uint64_t pc, uint16_t hist, uint8_t len, const axp_pm_run *run, unsigned n)
{
    pm_truth *t = ctx;
    uint64_t key[4] = { (uint64_t)pid, pc, (uint64_t)len << 16 | hist, n };
    uint64_t h = fnv1a(fnv1a(FNV1A_INIT, key, sizeof key), run, n * sizeof *run);
    h |= !h;
    pthread_mutex_lock(&t->lock);
    if (t->oom || (2 * (t->n + 1) > t->cap && !grow(t)))
        goto oom;
    size_t j = h & (t->cap - 1);
    for (; t->tab[j].hash; j = (j + 1) & (t->cap - 1)) {
        if (t->tab[j].hash == h && same(t, &t->tab[j], pid, pc, hist, len, run, n)) {
            t->tab[j].count++;
            pthread_mutex_unlock(&t->lock);
            return;
        }
    }
    if (t->npool + n > t->cpool) {
        size_t cap = t->cpool ? 2 * t->cpool : 65536;
        while (cap < t->npool + n)
            cap *= 2;
        axp_pm_run *p = realloc(t->pool, cap * sizeof *p);
        if (!p)
            goto oom;
        t->pool = p;
        t->cpool = cap;
    }
    memcpy(&t->pool[t->npool], run, n * sizeof *run);
    t->tab[j] = (ent){ h, 1, pc, t->npool, n, pid, hist, len };
    t->npool += n;
    t->n++;
    pthread_mutex_unlock(&t->lock);
    return;
oom:
    /* (the file is then refused at the end, not the run) */
    t->oom = true;
    pthread_mutex_unlock(&t->lock);
}

pm_truth *pm_truth_start(axp_machine *m)
{
    pm_truth *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    axp_set_pm_path_hook(m, put, t);
    return t;
}

int pm_truth_write(const pm_truth *t, FILE *f)
{
    if (t->oom) {
        errno = ENOMEM;
        return -1;
    }
    fprintf(f, "# profileme-truth 1: count pid pc history_length history runs (start-end, newest first)\n");
    for (size_t i = 0; i < t->cap; i++) {
        const ent *e = &t->tab[i];
        if (!e->hash)
            continue;
        fprintf(f, "%" PRIu64 " %d %" PRIx64 " %u %x", e->count, e->pid, e->pc, e->len, e->hist);
        for (uint32_t k = 0; k < e->nruns; k++)
            fprintf(f, " %" PRIx64 "-%" PRIx64, t->pool[e->off + k].start, t->pool[e->off + k].end);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

void pm_truth_free(pm_truth *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t->tab);
    free(t->pool);
    free(t);
}
