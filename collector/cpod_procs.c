/*
 * collector/cpod_procs.c: each process's image map, kept from the
 * machine's notices.
 *
 * LOAD adds a mapping (over whatever it covers, as mmap does), FORK copies
 * the parent's map, EXEC empties it, EXIT marks the process dead.  Samples
 * trail the notices: an entry can sit in a CPU's hash table for minutes,
 * so a dead process, and the map a process had before its last exec, are
 * kept until a flush requested after the notice has completed (the
 * driver's rule, docs/driver-shm.md 4.3).  Lookups try the current map,
 * then the one before the exec: after fork+exec the new program usually
 * sits where the old one did, and no one can tell those samples apart.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/cpod_internal.h"

static size_t slot(const cpod_procs *p, uint32_t pid)
{
    return (size_t)((pid * 0x9E3779B1u) >> 7) & (p->nb - 1);
}

void cpod_procs_init(cpod_procs *p, cpod_images *im)
{
    memset(p, 0, sizeof *p);
    p->im = im;
}

static void drop_maps(cpod_procs *p, cpod_map *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        cpod_image_unref(p->im, m[i].img);
    p->nmaps -= n;
    free(m);
}

static void set_exe(cpod_procs *p, cpod_proc *x, cpod_image *img)
{
    if (img)
        cpod_image_ref(img);
    if (x->exe)
        cpod_image_unref(p->im, x->exe);
    x->exe = img;
}

static void proc_free(cpod_procs *p, cpod_proc *x)
{
    set_exe(p, x, NULL);
    drop_maps(p, x->map, x->n);
    drop_maps(p, x->old, x->nold);
    free(x);
}

void cpod_procs_free(cpod_procs *p)
{
    for (size_t b = 0; b < p->nb; b++)
        for (cpod_proc *x = p->tab[b], *next; x; x = next) {
            next = x->next;
            proc_free(p, x);
        }
    free(p->tab);
    cpod_images *im = p->im;
    memset(p, 0, sizeof *p);
    p->im = im;
}

static cpod_proc *find(cpod_procs *p, uint32_t pid)
{
    if (p->last && p->last->pid == pid)
        return p->last;
    if (!p->nb)
        return NULL;
    for (cpod_proc *x = p->tab[slot(p, pid)]; x; x = x->next)
        if (x->pid == pid)
            return p->last = x;
    return NULL;
}

static cpod_proc *get(cpod_procs *p, uint32_t pid)
{
    cpod_proc *x = find(p, pid);
    if (x)
        return x;
    if (p->n >= p->nb) {
        size_t nb = p->nb ? p->nb * 2 : 64, ob = p->nb;
        cpod_proc **tab = calloc(nb, sizeof *tab), **old = p->tab;
        if (!tab)
            return NULL;
        p->tab = tab;
        p->nb = nb;
        for (size_t b = 0; b < ob; b++)
            for (cpod_proc *y = old[b], *next; y; y = next) {
                next = y->next;
                size_t k = slot(p, y->pid);
                y->next = tab[k];
                tab[k] = y;
            }
        free(old);
    }
    if (!(x = calloc(1, sizeof *x)))
        return NULL;
    x->pid = pid;
    size_t k = slot(p, pid);
    x->next = p->tab[k];
    p->tab[k] = x;
    p->n++;
    return p->last = x;
}

/* The current map becomes the one before: what an exec, or a pid coming
 * back to life, does. */
static void retire_map(cpod_procs *p, cpod_proc *x, uint64_t gen)
{
    drop_maps(p, x->old, x->nold);
    x->old = x->map;
    x->nold = x->n;
    x->old_gen = gen;
    x->map = NULL;
    x->n = x->cap = x->last = 0;
    x->dead = false;
    set_exe(p, x, NULL);
}

static bool load(cpod_procs *p, cpod_proc *x, const drv_notice *n)
{
    uint64_t lo = n->base, hi = n->base + n->size;
    if (!n->size || hi < lo)
        return true;   /* an empty or wrapping mapping maps nothing */
    if (x->n >= CPOD_MAX_MAPS) {
        p->refused++;
        return true;
    }
    cpod_image *img = cpod_image_get(p->im, n->path, n->build_id, n->build_id_len);
    if (!img)
        return false;
    /* The program is the first image mapped; an exec the machine does not
     * announce shows as a new image mapped over the program's own code. */
    bool over_exe = !x->exe;
    for (uint32_t i = 0; i < x->n && !over_exe; i++)
        over_exe = x->map[i].img == x->exe && x->map[i].lo < hi && lo < x->map[i].hi;
    if (over_exe)
        set_exe(p, x, img);
    /* Rebuild the sorted array: pieces of old mappings outside [lo, hi),
     * and the new one in its place.  A mapping cut in two needs a slot
     * more, hence n + 2. */
    cpod_map *v = malloc((x->n + 2) * sizeof *v);
    if (!v) {
        cpod_image_unref(p->im, img);
        return false;
    }
    uint32_t k = 0;
    bool placed = false;
    cpod_map nm = { lo, hi, n->offset, cpod_image_adj(img, lo, n->size, n->offset), img };
    for (uint32_t i = 0; i < x->n; i++) {
        cpod_map m = x->map[i];
        if (!placed && m.lo >= lo) {
            v[k++] = nm;
            placed = true;
        }
        if (m.hi <= lo || m.lo >= hi) {
            v[k++] = m;
            continue;
        }
        bool kept = false;
        if (m.lo < lo) {
            v[k] = m;
            v[k++].hi = lo;
            kept = true;
        }
        if (m.hi > hi) {
            if (!placed) {
                v[k++] = nm;
                placed = true;
            }
            v[k] = m;
            v[k].foff += hi - m.lo;
            v[k++].lo = hi;
            if (kept) {
                cpod_image_ref(m.img);
                p->nmaps++;
            }
            kept = true;
        }
        if (!kept) {
            cpod_image_unref(p->im, m.img);
            p->nmaps--;
        }
    }
    if (!placed)
        v[k++] = nm;
    p->nmaps++;
    free(x->map);
    x->map = v;
    x->n = x->cap = k;
    x->last = 0;
    return true;
}

bool cpod_procs_notice(cpod_procs *p, const drv_notice *n, uint64_t gen)
{
    cpod_proc *x;
    switch (n->type) {
    case DRV_NOTICE_LOAD:
        if (!(x = get(p, n->pid)))
            return false;
        if (x->dead)
            retire_map(p, x, gen);
        return load(p, x, n);
    case DRV_NOTICE_EXIT:
        if ((x = find(p, n->pid))) {
            x->dead = true;
            x->dead_gen = gen;
        }
        return true;
    case DRV_NOTICE_EXEC:
        if (!(x = get(p, n->pid)))
            return false;
        retire_map(p, x, gen);
        return true;
    case DRV_NOTICE_FORK: {
        cpod_proc *parent = find(p, n->ppid);
        if (!(x = get(p, n->pid)))
            return false;
        if (x->n || x->dead)
            retire_map(p, x, gen);
        x->dead = false;
        if (parent && parent != x)
            set_exe(p, x, parent->exe);
        if (!parent || parent == x || !parent->n)
            return true;
        if (!(x->map = malloc(parent->n * sizeof *x->map)))
            return false;
        memcpy(x->map, parent->map, parent->n * sizeof *x->map);
        x->n = x->cap = parent->n;
        for (uint32_t i = 0; i < x->n; i++)
            cpod_image_ref(x->map[i].img);
        p->nmaps += x->n;
        return true;
    }
    }
    return true;
}

static const cpod_map *search(cpod_map *m, uint32_t n, uint32_t *last, uint64_t pc)
{
    if (*last < n && pc >= m[*last].lo && pc < m[*last].hi)
        return &m[*last];
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (pc < m[mid].lo)
            hi = mid;
        else if (pc >= m[mid].hi)
            lo = mid + 1;
        else {
            *last = mid;
            return &m[mid];
        }
    }
    return NULL;
}

const cpod_map *cpod_procs_lookup(cpod_procs *p, uint32_t pid, uint64_t pc)
{
    cpod_proc *x = find(p, pid);
    if (!x)
        return NULL;
    const cpod_map *m = search(x->map, x->n, &x->last, pc);
    if (!m && x->nold) {
        uint32_t ignored = 0;
        m = search(x->old, x->nold, &ignored, pc);
    }
    return m;
}

cpod_image *cpod_procs_exe(cpod_procs *p, uint32_t pid)
{
    cpod_proc *x = find(p, pid);
    return x && !x->dead ? x->exe : NULL;
}

size_t cpod_procs_images(cpod_procs *p, uint32_t pid, cpod_image **out, size_t max)
{
    cpod_proc *x = find(p, pid);
    size_t n = 0;
    for (uint32_t i = 0; x && i < x->n; i++) {
        size_t k = 0;
        while (k < n && out[k] != x->map[i].img)
            k++;
        if (k == n && n < max)
            out[n++] = x->map[i].img;
    }
    return n;
}

void cpod_procs_reap(cpod_procs *p, uint64_t done_gen)
{
    p->last = NULL;
    for (size_t b = 0; b < p->nb; b++)
        for (cpod_proc **pp = &p->tab[b]; *pp;) {
            cpod_proc *x = *pp;
            if (x->dead && x->dead_gen < done_gen) {
                *pp = x->next;
                proc_free(p, x);
                p->n--;
                continue;
            }
            if (x->nold && x->old_gen < done_gen) {
                drop_maps(p, x->old, x->nold);
                x->old = NULL;
                x->nold = 0;
            }
            pp = &x->next;
        }
}

static bool emit_maps(const cpod_proc *x, const cpod_map *m, uint32_t n, cpod_notice_fn fn,
                      void *ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        drv_notice no = { .type = DRV_NOTICE_LOAD, .pid = x->pid, .base = m[i].lo,
                          .size = m[i].hi - m[i].lo, .offset = m[i].foff,
                          .build_id_len = m[i].img->bidlen, .path = m[i].img->path };
        memcpy(no.build_id, m[i].img->bid, m[i].img->bidlen);
        if (!fn(ctx, &no))
            return false;
    }
    return true;
}

bool cpod_procs_snapshot(const cpod_procs *p, cpod_notice_fn fn, void *ctx)
{
    for (size_t b = 0; b < p->nb; b++)
        for (const cpod_proc *x = p->tab[b]; x; x = x->next) {
            drv_notice exec = { .type = DRV_NOTICE_EXEC, .pid = x->pid };
            drv_notice ex = { .type = DRV_NOTICE_EXIT, .pid = x->pid };
            if (!emit_maps(x, x->old, x->nold, fn, ctx) ||
                (x->nold && !fn(ctx, &exec)) ||
                (!x->nold && !x->n && !fn(ctx, &exec)) ||   /* a process with no map yet */
                !emit_maps(x, x->map, x->n, fn, ctx) ||
                (x->dead && !fn(ctx, &ex)))
                return false;
        }
    return true;
}
