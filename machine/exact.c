/*
 * machine/exact.c: exact execution counts.
 *
 * Records live in one hash table for the whole machine, keyed by image and
 * link-time address, so counts from every process that maps an image add
 * up.  Blocks keep pointers to their records; a thread remembers the edge it
 * last took, and if the next block it enters is not that edge's target (a
 * signal, sigreturn or exec came between) the edge is turned into an exit.
 * Every block entry is thus explained by exactly one edge or entry record
 * and every block execution ends in exactly one edge or exit record: flow is
 * conserved by construction, which the tests check.
 *
 * Output format: docs/machine.md, "Exact counts".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/exact.h"

enum { XR_BLOCK, XR_ENTRY, XR_EDGE, XR_EXIT };

typedef struct xrec {
    struct xrec *next;
    uint8_t type;
    char kind;
    int img, img2;          /* -1: not in an image (absolute address) */
    uint64_t a, b;          /* block: start, end; edge: from, to; else addr */
    uint64_t count;
} xrec;

struct exact {
    xrec **tab;
    size_t mask, n;
};

typedef struct xblock {
    int img;
    int64_t link;           /* link address minus run address */
    xrec *run;
    uint64_t cto[2];        /* last destinations and their edges */
    xrec *cedge[2];
} xblock;

struct exact *exact_new(void)
{
    struct exact *x = calloc(1, sizeof *x);
    x->mask = 4095;
    x->tab = calloc(x->mask + 1, sizeof *x->tab);
    return x;
}

void exact_free(struct exact *x)
{
    if (!x)
        return;
    for (size_t i = 0; i <= x->mask; i++)
        for (xrec *r = x->tab[i], *nx; r; r = nx) {
            nx = r->next;
            free(r);
        }
    free(x->tab);
    free(x);
}

static size_t xhash(uint8_t type, char kind, int img, int img2, uint64_t a, uint64_t b)
{
    uint64_t h = type * 0x100000001b3ULL ^ (uint64_t)(uint8_t)kind;
    h = (h ^ (uint64_t)(uint32_t)img) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ (uint64_t)(uint32_t)img2) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ a) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ b) * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 20);
}

static xrec *xget(struct exact *x, uint8_t type, char kind, int img, int img2, uint64_t a, uint64_t b)
{
    size_t h = xhash(type, kind, img, img2, a, b);
    for (xrec *r = x->tab[h & x->mask]; r; r = r->next)
        if (r->type == type && r->kind == kind && r->img == img && r->img2 == img2 &&
            r->a == a && r->b == b)
            return r;
    if (x->n > x->mask) {
        size_t nm = x->mask * 2 + 1;
        xrec **nt = calloc(nm + 1, sizeof *nt);
        for (size_t i = 0; i <= x->mask; i++)
            for (xrec *r = x->tab[i], *nx; r; r = nx) {
                nx = r->next;
                size_t s = xhash(r->type, r->kind, r->img, r->img2, r->a, r->b) & nm;
                r->next = nt[s];
                nt[s] = r;
            }
        free(x->tab);
        x->tab = nt;
        x->mask = nm;
    }
    xrec *r = calloc(1, sizeof *r);
    r->type = type;
    r->kind = kind;
    r->img = img;
    r->img2 = img2;
    r->a = a;
    r->b = b;
    r->next = x->tab[h & x->mask];
    x->tab[h & x->mask] = r;
    x->n++;
    return r;
}

/* Image and link-time address of a run-time address. */
static void where(mm *m, uint64_t va, int *img, uint64_t *at)
{
    const vma *v = mm_vma_at(m, va);
    if (v && v->img >= 0) {
        *img = v->img;
        *at = (uint64_t)((int64_t)va + v->link);
    } else {
        *img = -1;
        *at = va;
    }
}

void exact_attach(thread *t, block *b)
{
    xblock *xb = calloc(1, sizeof *xb);
    uint64_t at;
    where(t->mm, b->pc, &xb->img, &at);
    xb->link = (int64_t)at - (int64_t)b->pc;
    xb->run = xget(t->m->x, XR_BLOCK, 0, xb->img, xb->img, at, b->end + (uint64_t)xb->link);
    xb->cto[0] = xb->cto[1] = 1;   /* never a pc: pcs are aligned */
    b->x = (struct xblock *)xb;
    if (b->exit == BX_COND) {
        /* a branch never taken still names its target */
        int img2;
        uint64_t at2;
        where(t->mm, b->target, &img2, &at2);
        xb->cedge[0] = xget(t->m->x, XR_EDGE, 'T', xb->img, img2, b->end - 4 + (uint64_t)xb->link, at2);
        xb->cto[0] = b->target;
    }
}

void exact_detach(machine *m, mm *x, block *b)
{
    (void)m;
    (void)x;
    free(b->x);
    b->x = NULL;
}

/* The pending edge did not lead where it said: make it an exit. */
static void retract(thread *t)
{
    xrec *e = (xrec *)t->xedge;
    if (!e)
        return;
    e->count--;
    xget(t->m->x, XR_EXIT, e->kind, e->img, e->img, e->a, 0)->count++;
    t->xedge = NULL;
}

void exact_enter(thread *t, block *b)
{
    xblock *xb = (xblock *)b->x;
    if (!xb) {                       /* translated before counting began */
        exact_attach(t, b);
        xb = (xblock *)b->x;
    }
    if (t->xedge && t->xto != b->pc)
        retract(t);
    if (!t->xedge)
        xget(t->m->x, XR_ENTRY, 0, xb->img, xb->img, b->pc + (uint64_t)xb->link, 0)->count++;
    t->xedge = NULL;
    xb->run->count++;
}

static char kind_of(const block *b, bool taken)
{
    switch (b->exit) {
    case BX_COND: return taken ? 'T' : 'N';
    case BX_BR: return 'B';
    case BX_BSR: return 'C';
    case BX_JMP: return 'J';
    case BX_JSR: return 'S';
    case BX_RET: return 'R';
    case BX_JCR: return 'O';
    case BX_PAL: return 'P';
    default: return 'F';
    }
}

void exact_leave(thread *t, block *b, uint64_t to, bool taken)
{
    xblock *xb = (xblock *)b->x;
    int s = b->exit == BX_COND ? !taken : (int)((to >> 2) & 1);
    xrec *e;
    if (xb->cto[s] == to && xb->cedge[s]) {
        e = xb->cedge[s];
    } else {
        int img2;
        uint64_t at2;
        where(t->mm, to, &img2, &at2);
        e = xget(t->m->x, XR_EDGE, kind_of(b, taken), xb->img, img2,
                 b->end - 4 + (uint64_t)xb->link, at2);
        xb->cto[s] = to;
        xb->cedge[s] = e;
    }
    e->count++;
    t->xedge = e;
    t->xto = to;
}

void exact_fault(thread *t, block *b, uint32_t retired)
{
    xblock *xb = (xblock *)b->x;
    if (!xb)
        return;
    xb->run->count--;
    uint64_t start = b->pc + (uint64_t)xb->link;
    xget(t->m->x, XR_BLOCK, 0, xb->img, xb->img, start, start + 4ULL * retired)->count++;
    xget(t->m->x, XR_EXIT, 'X', xb->img, xb->img, start + 4ULL * retired, 0)->count++;
}

void exact_break(thread *t)
{
    retract(t);
}

void exact_thread_exit(thread *t)
{
    retract(t);
}

/* ---- output -------------------------------------------------------------- */

static int cmp_rec(const void *pa, const void *pb)
{
    const xrec *a = *(xrec *const *)pa, *b = *(xrec *const *)pb;
    if (a->img != b->img) return a->img < b->img ? -1 : 1;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->img2 != b->img2) return a->img2 < b->img2 ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return 0;
}

static void put_img(FILE *f, int img)
{
    if (img < 0)
        fputs("-", f);
    else
        fprintf(f, "%d", img);
}

int exact_write(machine *m, FILE *f)
{
    struct exact *x = m->x;
    fprintf(f, "# axp exact counts, format 1: see docs/machine.md\n");
    for (int i = 0; i < m->nimg; i++)
        fprintf(f, "image %d %s %s\n", i, m->img[i].build_id[0] ? m->img[i].build_id : "-",
                m->img[i].gpath);
    if (!x)
        return ferror(f) ? -1 : 0;
    xrec **all = malloc((x->n + 1) * sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i <= x->mask; i++)
        for (xrec *r = x->tab[i]; r; r = r->next)
            if (r->count || (r->type == XR_EDGE && r->kind == 'T'))
                all[n++] = r;
    qsort(all, n, sizeof *all, cmp_rec);
    static const char *const names[] = { "block", "entry", "edge", "exit" };
    for (size_t i = 0; i < n; i++) {
        xrec *r = all[i];
        fprintf(f, "%s ", names[r->type]);
        put_img(f, r->img);
        switch (r->type) {
        case XR_BLOCK:
            fprintf(f, " 0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64 "\n", r->a, r->b, r->count);
            break;
        case XR_ENTRY:
            fprintf(f, " 0x%" PRIx64 " %" PRIu64 "\n", r->a, r->count);
            break;
        case XR_EDGE:
            fprintf(f, " 0x%" PRIx64 " %c ", r->a, r->kind);
            put_img(f, r->img2);
            fprintf(f, " 0x%" PRIx64 " %" PRIu64 "\n", r->b, r->count);
            break;
        default:
            fprintf(f, " 0x%" PRIx64 " %c %" PRIu64 "\n", r->a, r->kind, r->count);
            break;
        }
    }
    /* Derived views: per conditional branch, per register jump, per call. */
    for (size_t i = 0; i < n; ) {
        xrec *r = all[i];
        size_t j = i;
        while (j < n && all[j]->img == r->img && all[j]->a == r->a)
            j++;
        uint64_t taken = 0, nottaken = 0, calls = 0, jumps = 0, target = 0;
        char jk = 0;
        bool cond = false;
        for (size_t k = i; k < j; k++) {
            xrec *e = all[k];
            if (e->type != XR_EDGE && e->type != XR_EXIT)
                continue;
            switch (e->kind) {
            case 'T': cond = true; if (e->type == XR_EDGE) { taken += e->count; target = e->b; } break;
            case 'N': cond = true; if (e->type == XR_EDGE) nottaken += e->count; break;
            case 'C': calls += e->count; break;
            case 'S': calls += e->count; jumps += e->count; jk = 'S'; break;
            case 'J': case 'R': case 'O': jumps += e->count; jk = e->kind; break;
            default: break;
            }
        }
        if (cond) {
            fprintf(f, "branch ");
            put_img(f, r->img);
            fprintf(f, " 0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", r->a, target, taken, nottaken);
        }
        if (calls) {
            fprintf(f, "call ");
            put_img(f, r->img);
            fprintf(f, " 0x%" PRIx64 " %" PRIu64 "\n", r->a, calls);
        }
        if (jumps) {
            static const char *const jn[] = { ['J'] = "jmp", ['S'] = "jsr", ['R'] = "ret", ['O'] = "jsr_coroutine" };
            fprintf(f, "jump ");
            put_img(f, r->img);
            fprintf(f, " 0x%" PRIx64 " %s %" PRIu64, r->a, jn[(int)jk], jumps);
            for (size_t k = i; k < j; k++) {
                xrec *e = all[k];
                if (e->type == XR_EDGE && (e->kind == 'J' || e->kind == 'S' || e->kind == 'R' || e->kind == 'O')) {
                    fputc(' ', f);
                    put_img(f, e->img2);
                    fprintf(f, ":0x%" PRIx64 "=%" PRIu64, e->b, e->count);
                }
            }
            fputc('\n', f);
        }
        i = j;
    }
    free(all);
    return ferror(f) ? -1 : 0;
}
