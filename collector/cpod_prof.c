/*
 * collector/cpod_prof.c: in-memory profiles between two merges.
 *
 * One per (image, event), plus one per (image, event, machine, pid) for
 * images named with --per-process, plus the unknown profile per event.  Each is an
 * open-addressing table of offset -> count, since samples arrive in no
 * order and most hit offsets seen before.  A merge hands the whole set to
 * the merge thread and starts an empty one, so memory is bounded by what
 * one flush interval touches, not by how long the daemon runs.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/cpod_internal.h"

static size_t prof_slot(const cpod_image *img, const char *event, uint32_t pid,
                        const char *machine, size_t nb)
{
    uint64_t h = (uint64_t)(uintptr_t)img * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uintptr_t)event * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)pid * 0x165667B19E3779F9ull;
    for (const char *c = machine; c && *c; c++)
        h = (h ^ (uint8_t)*c) * 0x100000001B3ull;
    return (size_t)(h >> 40) & (nb - 1);
}

static bool same(const cpod_prof *p, const cpod_image *img, const char *event, uint32_t pid,
                 const char *machine)
{
    return p->img == img && p->event == event && p->pid == pid &&
           (machine ? p->machine && !strcmp(p->machine, machine) : !p->machine);
}

void cpod_profset_init(cpod_profset *s)
{
    memset(s, 0, sizeof *s);
}

void cpod_prof_free(cpod_prof *p, cpod_images *im)
{
    if (!p)
        return;
    if (p->img)
        cpod_image_unref(im, p->img);
    free(p->off);
    free(p->cnt);
    free(p->machine);
    free(p);
}

void cpod_profset_free(cpod_profset *s, cpod_images *im)
{
    for (size_t b = 0; b < s->nb; b++)
        for (cpod_prof *p = s->tab[b], *next; p; p = next) {
            next = p->next;
            cpod_prof_free(p, im);
        }
    free(s->tab);
    cpod_profset_init(s);
}

cpod_prof *cpod_prof_get(cpod_profset *s, cpod_image *img, const char *event, uint32_t pid,
                         const char *machine)
{
    if (!machine)
        pid = 0;
    cpod_prof *l = s->last;
    if (l && same(l, img, event, pid, machine))
        return l;
    if (s->nb) {
        for (cpod_prof *p = s->tab[prof_slot(img, event, pid, machine, s->nb)]; p; p = p->next)
            if (same(p, img, event, pid, machine))
                return s->last = p;
    }
    if (s->n >= s->nb) {
        size_t nb = s->nb ? s->nb * 2 : 64;
        cpod_prof **tab = calloc(nb, sizeof *tab);
        if (!tab)
            return NULL;
        for (size_t b = 0; b < s->nb; b++)
            for (cpod_prof *p = s->tab[b], *next; p; p = next) {
                next = p->next;
                size_t k = prof_slot(p->img, p->event, p->pid, p->machine, nb);
                p->next = tab[k];
                tab[k] = p;
            }
        free(s->tab);
        s->tab = tab;
        s->nb = nb;
    }
    cpod_prof *p = calloc(1, sizeof *p);
    if (!p || (machine && !(p->machine = strdup(machine)))) {
        free(p);
        return NULL;
    }
    p->img = img;
    p->event = event;
    p->pid = pid;
    p->per_pid = machine != NULL;
    if (img)
        cpod_image_ref(img);
    size_t k = prof_slot(img, event, pid, machine, s->nb);
    p->next = s->tab[k];
    s->tab[k] = p;
    s->n++;
    return s->last = p;
}

static inline size_t off_slot(uint64_t off, size_t cap)
{
    return (size_t)(((off >> 2) * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static bool rehash(cpod_prof *p)
{
    size_t cap = p->cap ? p->cap * 2 : 256;
    uint64_t *off = malloc(cap * sizeof *off), *cnt = calloc(cap, sizeof *cnt);
    if (!off || !cnt) {
        free(off);
        free(cnt);
        return false;
    }
    for (size_t i = 0; i < p->cap; i++) {
        if (!p->cnt[i])
            continue;
        size_t k = off_slot(p->off[i], cap);
        while (cnt[k])
            k = (k + 1) & (cap - 1);
        off[k] = p->off[i];
        cnt[k] = p->cnt[i];
    }
    free(p->off);
    free(p->cnt);
    p->off = off;
    p->cnt = cnt;
    p->cap = cap;
    return true;
}

bool cpod_prof_add(cpod_prof *p, uint64_t off, uint64_t count, double period)
{
    if (!count)
        return true;
    if (2 * (p->n + 1) > p->cap && !rehash(p))
        return false;
    size_t k = off_slot(off, p->cap);
    while (p->cnt[k] && p->off[k] != off)
        k = (k + 1) & (p->cap - 1);
    if (!p->cnt[k]) {
        p->off[k] = off;
        p->n++;
    }
    p->cnt[k] += count;
    p->total += count;
    p->period_sum += (double)count * period;
    return true;
}

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const profdb_entry *)a)->offset, y = ((const profdb_entry *)b)->offset;
    return x < y ? -1 : x > y;
}

profdb_entry *cpod_prof_entries(const cpod_prof *p)
{
    profdb_entry *e = malloc((p->n ? p->n : 1) * sizeof *e);
    if (!e)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < p->cap; i++)
        if (p->cnt[i])
            e[k++] = (profdb_entry){ p->off[i], p->cnt[i] };
    qsort(e, k, sizeof *e, cmp_entry);
    return e;
}
