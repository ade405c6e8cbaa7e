/*
 * paths/track.c: following every thread's procedures and paths through the
 * stream of retired instructions (see track.h).
 */
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "cfg/cfg.h"
#include "cfg/paths.h"
#include "image/image.h"
#include "paths/internal.h"
#include "paths/track.h"

/* Metric columns: the cost of each instruction as axp_cost gives it. */
enum { M_INSNS, M_CYCLES, M_EV0 = 2, M_STALL0 = M_EV0 + 7, NM = M_STALL0 + AXP_STALL_KINDS };
#define EV_FIRST 1              /* axp_cost.events 1..7: imiss .. smiss */
#define MAX_FRAMES (1u << 20)   /* per thread: deeper activations are not followed */

/* A procedure of a mapped image, with its paths numbered when it first ran. */
typedef struct tproc {
    const cfg_proc *f;
    bool ok;                    /* numbered */
    cfg_paths bl;
    size_t image, proc;         /* its place in the path profile (arrays there grow) */
    /* (start, end, value) -> index into out->paths */
    size_t hcap, hn;
    uint32_t *hidx;             /* UINT32_MAX: empty */
} tproc;

typedef struct timage {
    char *host_path, *path, *build_id;
    bool opened;
    image *img;
    cfg_program *cfg;           /* NULL when the image could not be read */
    tproc **procs;              /* per cfg procedure, made when it first runs */
    size_t ppim;                /* in the path profile, SIZE_MAX before its first path */
    int cctim;
    int keep;                   /* its entry in track.keep, -1 none, -2 not yet looked up */
} timage;

/* track_cct_only: an image's procedures that get contexts, sorted. */
typedef struct keep_im {
    char *build_id, *path;
    uint64_t *proc;
    size_t n;
} keep_im;

typedef struct tmap {
    int pid;
    uint64_t base, end;
    int64_t link;               /* link address minus run-time address */
    uint32_t im;
} tmap;

/* Where an address is: its image (UINT32_MAX: none), link address and
 * procedure (NULL: code no CFG covers). */
typedef struct loc {
    uint32_t im;
    int64_t link;
    uint64_t lo, hi;            /* run-time extent of the procedure, or of the mapping */
    const cfg_proc *f;
    tproc *tp;
} loc;

typedef struct frame {
    uint64_t ret;               /* run-time return address; 0 when not entered by a call */
    uint64_t site;              /* link address of the call */
    uint32_t node;              /* its calling context */
    bool folded;                /* no context of its own: node and site are its caller's */
    uint32_t im;
    int64_t link;
    uint64_t lo, hi;
    const cfg_proc *f;
    tproc *tp;                  /* NULL: no paths followed here */
    uint64_t bend;              /* run-time end of the current block (0: none) */
    uint32_t cur;               /* current block, CFG_NONE when lost */
    uint32_t start;             /* path-graph node the path started at */
    uint64_t startx;            /* a piece's first instruction (link address):
                                 * after a longjmp or a fork, not the block's first */
    uint64_t r;                 /* the path's value so far */
    uint64_t m[NM];             /* and its cost */
} frame;

typedef struct tthr {
    int pid, tid;
    bool live;
    uint64_t expect;            /* where the last instruction said control goes */
    frame *fr;
    size_t n, cap;
} tthr;

struct track {
    pathprof *pp;
    cct *cc;
    keep_im *keep;              /* track_cct_only; NULL: every procedure */
    size_t nkeep;
    timage *im;
    size_t nim, capim;
    tmap *map;
    size_t nmap, capmap;
    tthr *th;
    size_t nth, capth;
    tthr *last;
    bool oom;
    track_stats st;
};

static const char *metric_names[NM + 1];

static void init_names(void)
{
    static char names[NM][32];
    if (metric_names[0])
        return;
    metric_names[0] = "calls";      /* the CCT's first column; paths start at 1 */
    strcpy(names[M_INSNS], "instructions");
    strcpy(names[M_CYCLES], "cycles");
    for (int k = 0; k < 7; k++)
        snprintf(names[M_EV0 + k], sizeof names[0], "%s", axp_event_name(EV_FIRST + k));
    for (int k = 0; k < AXP_STALL_KINDS; k++)
        snprintf(names[M_STALL0 + k], sizeof names[0], "stall_%s", axp_stall_name(k));
    for (int i = 0; i < NM; i++)
        metric_names[i + 1] = names[i];
}

track *track_new(bool paths, bool cct_on)
{
    init_names();
    track *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if ((paths && !(t->pp = pathprof_new(metric_names + 1, NM))) ||
        (cct_on && !(t->cc = cct_new(metric_names, NM + 1)))) {
        track_free(t);
        return NULL;
    }
    return t;
}

static void free_image(timage *im)
{
    for (size_t i = 0; im->procs && im->cfg && i < im->cfg->nprocs; i++)
        if (im->procs[i]) {
            if (im->procs[i]->ok)
                cfg_paths_free(&im->procs[i]->bl);
            free(im->procs[i]->hidx);
            free(im->procs[i]);
        }
    free(im->procs);
    cfg_free(im->cfg);
    image_close(im->img);
    free(im->host_path);
    free(im->path);
    free(im->build_id);
}

void track_free(track *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nim; i++)
        free_image(&t->im[i]);
    for (size_t i = 0; i < t->nth; i++)
        free(t->th[i].fr);
    free(t->im);
    free(t->map);
    free(t->th);
    for (size_t i = 0; i < t->nkeep; i++) {
        free(t->keep[i].build_id);
        free(t->keep[i].path);
        free(t->keep[i].proc);
    }
    free(t->keep);
    pathprof_free(t->pp);
    cct_free(t->cc);
    free(t);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

bool track_cct_only(track *t, const cct *only)
{
    if (!(t->keep = calloc(only->nimages ? only->nimages : 1, sizeof *t->keep)))
        return false;
    t->nkeep = only->nimages;
    for (size_t i = 0; i < only->nimages; i++) {
        keep_im *k = &t->keep[i];
        if (!(k->build_id = strdup(only->images[i].build_id)) || !(k->path = strdup(only->images[i].path)) ||
            !(k->proc = malloc((only->nnodes ? only->nnodes : 1) * sizeof *k->proc)))
            return false;
        for (size_t n = 1; n < only->nnodes; n++)
            if (only->nodes[n].image == (int32_t)i)
                k->proc[k->n++] = only->nodes[n].proc;
        qsort(k->proc, k->n, sizeof *k->proc, cmp_u64);
    }
    return true;
}

/* Whether procedure `proc` of image im (NULL: code in no image) gets a
 * context of its own: always, unless track_cct_only named the ones that do.
 * Images match by build-id, or by path when either has none. */
static bool kept(track *t, timage *im, uint64_t proc)
{
    if (!t->keep)
        return true;
    if (!im)
        return false;
    if (im->keep == -2) {
        im->keep = -1;
        for (size_t i = 0; i < t->nkeep && im->keep < 0; i++) {
            const keep_im *k = &t->keep[i];
            if (k->build_id[0] && im->build_id[0] ? !strcmp(k->build_id, im->build_id) : !strcmp(k->path, im->path))
                im->keep = (int)i;
        }
    }
    return im->keep >= 0 &&
           bsearch(&proc, t->keep[im->keep].proc, t->keep[im->keep].n, sizeof proc, cmp_u64) != NULL;
}

/* ---- images and where an address is -------------------------------------- */

static void end_thread(track *t, tthr *th);
static void fork_thread(track *t, const axp_image_event *e);

void track_image(void *ctx, const axp_image_event *e)
{
    track *t = ctx;
    if (e->kind == AXP_PROCESS_FORK) {
        fork_thread(t, e);
        return;
    }
    if (e->kind == AXP_PROCESS_EXIT) {
        for (size_t i = 0; i < t->nth; i++)
            if (t->th[i].pid == e->pid && t->th[i].live)
                end_thread(t, &t->th[i]);
        size_t k = 0;
        for (size_t i = 0; i < t->nmap; i++)
            if (t->map[i].pid != e->pid)
                t->map[k++] = t->map[i];
        t->nmap = k;
        return;
    }
    uint32_t im = UINT32_MAX;
    for (size_t i = 0; i < t->nim; i++)
        if (!strcmp(t->im[i].host_path, e->host_path) && !strcmp(t->im[i].build_id, e->build_id))
            im = (uint32_t)i;
    if (im == UINT32_MAX) {
        if (!paths_grow(&t->im, &t->capim, t->nim, sizeof *t->im)) {
            t->oom = true;
            return;
        }
        timage *n = &t->im[t->nim];
        memset(n, 0, sizeof *n);
        n->host_path = strdup(e->host_path);
        n->path = strdup(e->path);
        n->build_id = strdup(e->build_id);
        n->cctim = -1;
        n->keep = -2;
        n->ppim = SIZE_MAX;
        if (!n->host_path || !n->path || !n->build_id) {
            free(n->host_path);
            free(n->path);
            free(n->build_id);
            t->oom = true;
            return;
        }
        im = (uint32_t)t->nim++;
    }
    if (!paths_grow(&t->map, &t->capmap, t->nmap, sizeof *t->map)) {
        t->oom = true;
        return;
    }
    t->map[t->nmap++] = (tmap){ e->pid, e->base, e->base + e->size, e->link, im };
}

/* The image's CFG, built when its code first runs. */
static bool open_image(track *t, timage *im)
{
    if (im->opened)
        return im->cfg != NULL;
    im->opened = true;
    image_error ie;
    char err[256];
    if (!(im->img = image_open(im->host_path, &ie)))
        return false;
    if (!(im->cfg = cfg_build(im->img, err, sizeof err)))
        return false;
    if (!(im->procs = calloc(im->cfg->nprocs ? im->cfg->nprocs : 1, sizeof *im->procs))) {
        t->oom = true;
        cfg_free(im->cfg);
        im->cfg = NULL;
        return false;
    }
    return true;
}

static tproc *proc_of(track *t, timage *im, const cfg_proc *f)
{
    size_t i = (size_t)(f - im->cfg->procs);
    if (im->procs[i])
        return im->procs[i];
    tproc *tp = calloc(1, sizeof *tp);
    if (!tp) {
        t->oom = true;
        return NULL;
    }
    tp->f = f;
    char err[256];
    tp->ok = t->pp && cfg_paths_build(f, NULL, &tp->bl, err, sizeof err);
    if (t->pp && !tp->ok)
        t->st.unnumbered_procs++;
    if (tp->ok) {
        pathprof_image *pim = im->ppim != SIZE_MAX ? &t->pp->images[im->ppim]
                            : pathprof_image_add(t->pp, im->path, im->build_id);
        pathprof_proc *out = pim ? pathprof_proc_add(pim, f->start, f->name) : NULL;
        if (!out) {
            t->oom = true;
            cfg_paths_free(&tp->bl);
            tp->ok = false;
        } else {
            im->ppim = tp->image = (size_t)(pim - t->pp->images);
            tp->proc = (size_t)(out - pim->procs);
        }
    }
    im->procs[i] = tp;
    return tp;
}

static bool locate(track *t, int pid, uint64_t pc, loc *l)
{
    memset(l, 0, sizeof *l);
    l->im = UINT32_MAX;
    l->lo = pc & ~4095ULL;      /* code in no image: its page stands for a procedure */
    l->hi = l->lo + 4096;
    for (size_t i = t->nmap; i-- > 0;) {    /* the newest mapping wins */
        const tmap *m = &t->map[i];
        if (m->pid != pid || pc < m->base || pc >= m->end)
            continue;
        timage *im = &t->im[m->im];
        l->im = m->im;
        l->link = m->link;
        l->lo = m->base;
        l->hi = m->end;
        if (open_image(t, im)) {
            const cfg_proc *f = cfg_proc_at(im->cfg, pc + (uint64_t)m->link);
            if (f) {
                l->f = f;
                l->tp = proc_of(t, im, f);
                l->lo = f->start - (uint64_t)m->link;
                l->hi = f->end - (uint64_t)m->link;
            }
        }
        return true;
    }
    return false;
}

/* ---- counting a path ------------------------------------------------------- */

static uint64_t node_addr(const tproc *tp, uint32_t node, uint64_t sentinel)
{
    return node >= tp->f->nblocks ? sentinel : tp->f->blocks[node].start;
}

static pathprof_proc *out_of(const track *t, const tproc *tp)
{
    return &t->pp->images[tp->image].procs[tp->proc];
}

static size_t path_index(track *t, tproc *tp, uint64_t start, uint64_t end, uint64_t id)
{
    pathprof_proc *out = out_of(t, tp);
    if ((tp->hn + 1) * 2 > tp->hcap) {
        size_t nc = tp->hcap ? tp->hcap * 2 : 16;
        uint32_t *nh = malloc(nc * sizeof *nh);
        if (!nh)
            return SIZE_MAX;
        memset(nh, 0xff, nc * sizeof *nh);
        for (size_t i = 0; i < tp->hcap; i++) {
            if (tp->hidx[i] == UINT32_MAX)
                continue;
            const pathprof_path *p = &out->paths[tp->hidx[i]];
            size_t h = (p->id * 0x9e3779b97f4a7c15ULL ^ p->start ^ p->end * 31) & (nc - 1);
            while (nh[h] != UINT32_MAX)
                h = (h + 1) & (nc - 1);
            nh[h] = tp->hidx[i];
        }
        free(tp->hidx);
        tp->hidx = nh;
        tp->hcap = nc;
    }
    size_t h = (id * 0x9e3779b97f4a7c15ULL ^ start ^ end * 31) & (tp->hcap - 1);
    for (;; h = (h + 1) & (tp->hcap - 1)) {
        uint32_t i = tp->hidx[h];
        if (i == UINT32_MAX)
            break;
        const pathprof_path *p = &out->paths[i];
        if (p->id == id && p->start == start && p->end == end)
            return i;
    }
    size_t i = pathprof_path_add(t->pp, out, id, start, end);
    if (i == SIZE_MAX || i >= UINT32_MAX)
        return SIZE_MAX;
    tp->hidx[h] = (uint32_t)i;
    tp->hn++;
    return i;
}

/* The frame's path ends at node `end` (the exit, or the block it stopped
 * in) with value r: count it with its cost, and start afresh. */
static void count_path(track *t, frame *fr, uint32_t end)
{
    tproc *tp = fr->tp;
    uint64_t s = fr->start >= tp->f->nblocks ? PATHPROF_ENTRY : fr->startx;
    uint64_t e = node_addr(tp, end, PATHPROF_EXIT);
    size_t i = path_index(t, tp, s, e, fr->r);
    if (i == SIZE_MAX) {
        t->oom = true;
        return;
    }
    if (s != PATHPROF_ENTRY || e != PATHPROF_EXIT)
        t->st.partial_paths++;
    pathprof_proc *out = out_of(t, tp);
    out->paths[i].count++;
    uint64_t *m = pathprof_metrics(t->pp, out, i);
    for (int q = 0; q < NM; q++)
        m[q] += fr->m[q];
    memset(fr->m, 0, sizeof fr->m);
}

/* What a frame that follows no path ran goes outside the paths. */
static void spill_outside(track *t, frame *fr)
{
    if (t->pp)
        for (int q = 0; q < NM; q++)
            t->pp->outside[q] += fr->m[q];
    memset(fr->m, 0, sizeof fr->m);
}

/* The frame's path stops where it is: through its exit edge when the
 * current block has one and `out` says control leaves that way (a
 * return, a tail branch), else as a piece ending in the block. */
static void end_path(track *t, frame *fr, bool out)
{
    if (!fr->tp || fr->cur == CFG_NONE) {
        spill_outside(t, fr);
        return;
    }
    const cfg_proc *f = fr->f;
    const cfg_block *b = &f->blocks[fr->cur];
    if (out)
        for (uint32_t k = 0; k < b->nout; k++) {
            uint32_t e = f->out_edges[b->first_out + k];
            uint32_t pe = fr->tp->bl.of_cfg[e];
            if (f->edges[e].to == CFG_EXIT && pe != CFG_NONE) {
                fr->r += fr->tp->bl.edges[pe].val;
                count_path(t, fr, CFG_PATH_EXIT(f->nblocks));
                fr->cur = CFG_NONE;
                return;
            }
        }
    count_path(t, fr, fr->cur);
    fr->cur = CFG_NONE;
}

/* Start following the frame's procedure at block b: a path from the
 * entry when control entered the procedure there (enter) and b is an
 * entry, else a piece from b. */
static void start_at(frame *fr, uint32_t b, uint64_t pc, bool enter)
{
    fr->cur = b;
    fr->r = 0;
    if (!fr->tp || b == CFG_NONE) {
        fr->cur = CFG_NONE;
        fr->bend = 0;
        return;
    }
    uint32_t nb = (uint32_t)fr->f->nblocks;
    uint32_t pe = cfg_path_edge_between(&fr->tp->bl, CFG_PATH_ENTRY(nb), b);
    bool at_start = pc + (uint64_t)fr->link == fr->f->blocks[b].start;
    if (pe != CFG_NONE && at_start && enter) {
        fr->start = CFG_PATH_ENTRY(nb);
        fr->r = fr->tp->bl.edges[pe].val;
    } else {
        fr->start = b;
    }
    fr->startx = pc + (uint64_t)fr->link;
    fr->bend = fr->f->blocks[b].end - (uint64_t)fr->link;
}

/* How control came to x: along the code (SYNC), back from a call, which
 * a block may contain (RESUME), or after something outside the thread's
 * code, a signal or a longjmp (ASYNC). */
enum { SYNC, RESUME, ASYNC };

/* Control moves within the frame's procedure to x: along a CFG edge (a
 * back edge ends the path and starts the next at the loop head), or, when
 * no edge explains it, from one piece to the next.  After a call or an
 * interruption it may go on in the middle of the current block. */
static void step_to(track *t, frame *fr, uint64_t x, int how)
{
    if (!fr->tp)
        return;
    const cfg_proc *f = fr->f;
    uint64_t xl = x + (uint64_t)fr->link;
    uint32_t w = CFG_NONE;
    /* where control goes is nearly always a successor's start or, back
     * from a call, the current block: look there before searching */
    if (fr->cur != CFG_NONE) {
        const cfg_block *b = &f->blocks[fr->cur];
        if (xl >= b->start && xl < b->end)
            w = fr->cur;
        for (uint32_t k = 0; w == CFG_NONE && k < b->nout; k++) {
            uint32_t to = f->edges[f->out_edges[b->first_out + k]].to;
            if (to < f->nblocks && f->blocks[to].start == xl)
                w = to;
        }
    }
    if (w == CFG_NONE)
        w = cfg_block_at(f, xl);
    if (fr->cur == CFG_NONE) {
        spill_outside(t, fr);   /* what ran while it was lost */
        start_at(fr, w, x, false);
        if (fr->cur != CFG_NONE && fr->start != CFG_PATH_ENTRY(f->nblocks))
            t->st.resyncs++;
        return;
    }
    if (how != SYNC && w == fr->cur && xl != f->blocks[w].start)
        return;
    const cfg_block *b = &f->blocks[fr->cur];
    if (how != ASYNC && w != CFG_NONE && xl == f->blocks[w].start)
        for (uint32_t k = 0; k < b->nout; k++) {
            uint32_t e = f->out_edges[b->first_out + k];
            if (f->edges[e].to != w || fr->tp->bl.of_cfg[e] == CFG_NONE)
                continue;
            const cfg_path_edge *pe = &fr->tp->bl.edges[fr->tp->bl.of_cfg[e]];
            fr->r += pe->val;
            if (pe->kind == CFG_PATH_EDGE_BACK_OUT) {
                count_path(t, fr, CFG_PATH_EXIT(f->nblocks));
                fr->start = CFG_PATH_ENTRY(f->nblocks);
                fr->r = fr->tp->bl.edges[fr->tp->bl.back_in[e]].val;
            }
            fr->cur = w;
            fr->bend = f->blocks[w].end - (uint64_t)fr->link;
            return;
        }
    /* nothing in the CFG goes there from here */
    t->st.resyncs++;
    count_path(t, fr, fr->cur);
    start_at(fr, w, x, false);  /* a piece: even at an entry, it did not come from there */
}

/* ---- threads and frames -------------------------------------------------- */

static tthr *thread_of(track *t, int pid, int tid)
{
    if (t->last && t->last->tid == tid && t->last->pid == pid && t->last->live)
        return t->last;
    for (size_t i = 0; i < t->nth; i++)
        if (t->th[i].tid == tid && t->th[i].pid == pid && t->th[i].live)
            return t->last = &t->th[i];
    if (!paths_grow(&t->th, &t->capth, t->nth, sizeof *t->th)) {
        t->oom = true;
        return NULL;
    }
    tthr *th = &t->th[t->nth++];
    memset(th, 0, sizeof *th);
    th->pid = pid;
    th->tid = tid;
    th->live = true;
    return t->last = th;
}

static frame *push(track *t, tthr *th, const loc *l, uint64_t x, uint64_t ret, uint64_t site, uint32_t parent)
{
    if (th->n == MAX_FRAMES || !paths_grow(&th->fr, &th->cap, th->n, sizeof *th->fr)) {
        if (th->n < MAX_FRAMES)
            t->oom = true;
        return NULL;
    }
    frame *fr = &th->fr[th->n++];
    memset(fr, 0, sizeof *fr);
    fr->ret = ret;
    fr->site = site;
    fr->im = l->im;
    fr->link = l->link;
    fr->lo = l->lo;
    fr->hi = l->hi;
    fr->f = l->f;
    fr->tp = l->tp && l->tp->ok ? l->tp : NULL;
    fr->cur = CFG_NONE;
    if (t->cc) {
        timage *im = l->im == UINT32_MAX ? NULL : &t->im[l->im];
        if (im && im->cctim < 0 && (im->cctim = cct_image_add(t->cc, im->path, im->build_id)) < 0)
            t->oom = true;
        int32_t ci = im ? im->cctim : CCT_NOIMAGE;
        uint64_t proc = l->f ? l->f->start : im ? l->lo + (uint64_t)l->link : l->lo;
        const char *name = l->f ? l->f->name : "";
        if (!kept(t, im, proc)) {
            /* its cost goes to the caller's context, and what it calls
             * hangs from there at the site by which the chain left it
             * (call), before any recursion is folded */
            fr->folded = true;
            fr->node = parent;
        } else {
            fr->node = cct_call(t->cc, parent, site, ci, proc, name);
            if (fr->node == CCT_NONE) {
                t->oom = true;
                fr->node = CCT_ROOT;
            }
            cct_metrics(t->cc, fr->node)[0]++;
        }
    }
    if (fr->tp)
        start_at(fr, cfg_block_at(fr->f, x + (uint64_t)fr->link), x, true);
    return fr;
}

static void pop(track *t, tthr *th, bool out)
{
    frame *fr = &th->fr[th->n - 1];
    end_path(t, fr, out);
    th->n--;
}

static void end_thread(track *t, tthr *th)
{
    while (th->n)
        pop(t, th, false);
    th->live = false;
    if (t->last == th)
        t->last = NULL;
}

/* A forked child (fork, clone without CLONE_VM on the parent's stack)
 * has its parent's frames on its stack: it goes on in them, under the
 * contexts it was forked in, as an instrumented binary's child does
 * (docs/paths.md).  What ran before the fork is the parent's: the frames
 * start with no cost, the running one a piece from the child's first
 * instruction, the waiting ones a piece when control comes back to them
 * (lost until then).  A thread, or a child on a stack of its own, starts
 * afresh at the root. */
static void fork_thread(track *t, const axp_image_event *e)
{
    if (e->shared_vm || e->own_stack)
        return;
    size_t pi = t->nth;
    for (size_t i = 0; i < t->nth; i++)
        if (t->th[i].pid == e->parent_pid && t->th[i].tid == e->parent_tid && t->th[i].live)
            pi = i;
    if (pi == t->nth || !t->th[pi].n)
        return;
    tthr *c = thread_of(t, e->pid, e->tid);     /* may move t->th */
    tthr *p = &t->th[pi];
    if (!c || c->n)
        return;
    while (c->cap < p->n)
        if (!paths_grow(&c->fr, &c->cap, c->cap, sizeof *c->fr)) {
            t->oom = true;
            return;
        }
    memcpy(c->fr, p->fr, p->n * sizeof *c->fr);
    c->n = p->n;
    c->expect = p->expect;
    for (size_t k = 0; k < c->n; k++) {
        frame *fr = &c->fr[k];
        memset(fr->m, 0, sizeof fr->m);
        fr->cur = CFG_NONE;
        fr->bend = 0;
    }
    frame *top = &c->fr[c->n - 1];
    if (top->tp)
        start_at(top, cfg_block_at(top->f, c->expect + (uint64_t)top->link), c->expect, false);
}

static bool contains(const frame *fr, const loc *l, uint64_t x)
{
    return x >= fr->lo && x < fr->hi && fr->im == l->im && fr->f == l->f;
}

/* Whether x is where an entry of its procedure starts (its start, or one
 * that other procedures reach, such as the one past the GP set-up). */
static bool at_entry(const loc *l, uint64_t x)
{
    if (!l->f)
        return false;
    uint64_t xl = x + (uint64_t)l->link;
    uint32_t b = cfg_block_at(l->f, xl);
    return b != CFG_NONE && l->f->blocks[b].start == xl &&
           (l->f->blocks[b].flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY));
}

/* Control goes to x, and neither a call nor a return to a waiting frame
 * explains it.  Within the running procedure it is a step there; into a
 * procedure further down the stack (a longjmp, the return from a signal
 * handler) the frames above it are left, unless a branch goes to one of
 * its entries (a tail call that recurses); anywhere else it is a tail
 * branch (sync: the running frame is replaced) or, after something
 * outside the code (async: a signal, a thread's first instruction), a
 * new activation on top. */
static void go(track *t, tthr *th, uint64_t x, int how)
{
    loc l;
    locate(t, th->pid, x, &l);
    /* a thread that arrives at an image's entry point has exec'd (or just
     * started): nothing it was doing goes on */
    if (how == ASYNC && l.im != UINT32_MAX && t->im[l.im].img && x + (uint64_t)l.link == t->im[l.im].img->entry)
        while (th->n)
            pop(t, th, false);
    for (size_t k = th->n; k-- > 0;) {
        if (!contains(&th->fr[k], &l, x))
            continue;
        if (how == SYNC && k + 1 < th->n && at_entry(&l, x))
            break;              /* a tail branch into a procedure running further down: recursion */
        bool left = th->n > k + 1;
        while (th->n > k + 1)
            pop(t, th, false);
        step_to(t, &th->fr[k], x, left ? ASYNC : how);
        return;
    }
    uint64_t ret = 0, site = 0;
    if (how != ASYNC && th->n) {
        frame *top = &th->fr[th->n - 1];
        ret = top->ret;
        site = top->site;
        pop(t, th, true);
    } else {
        t->st.resyncs += th->n > 0;
    }
    uint32_t parent = th->n ? th->fr[th->n - 1].node : CCT_ROOT;
    push(t, th, &l, x, ret, site, parent);
}

static void call(track *t, tthr *th, const axp_retire *r)
{
    loc l;
    locate(t, th->pid, r->next_pc, &l);
    uint64_t site = r->pc;
    uint32_t parent = CCT_ROOT;
    if (th->n) {
        frame *top = &th->fr[th->n - 1];
        site = top->folded ? top->site : r->pc + (uint64_t)top->link;
        parent = top->node;
    }
    push(t, th, &l, r->next_pc, r->pc + 4, site, parent);
}

/* A return (or a jump) to x: to the innermost frame waiting there, the
 * ones above it left; false when no frame waits for x. */
static bool ret_to(track *t, tthr *th, uint64_t x)
{
    for (size_t k = th->n; k-- > 1;) {
        if (th->fr[k].ret != x)
            continue;
        while (th->n > k)
            pop(t, th, th->n - 1 == k);     /* it returned; those above it were left */
        step_to(t, &th->fr[k - 1], x, RESUME);
        return true;
    }
    return false;
}

/* The instruction's cost goes to the frame's path (or, when it follows
 * none, outside the paths when the frame stops) and to its context.  Most
 * instructions have no event and no stall: only their count and cycles
 * are added. */
static void add_to(uint64_t *m, const axp_cost *k)
{
    m[M_INSNS]++;
    if (!k)
        return;
    m[M_CYCLES] += k->cycles;
    if (k->any_event)
        for (int e = 0; e < 7; e++)
            m[M_EV0 + e] += k->events[EV_FIRST + e];
    if (k->any_stall)
        for (int s = 0; s < AXP_STALL_KINDS; s++)
            m[M_STALL0 + s] += k->stall[s];
}

static void add_cost(track *t, tthr *th, const axp_retire *r)
{
    frame *fr = &th->fr[th->n - 1];
    add_to(fr->m, r->cost);
    if (t->cc)
        add_to(cct_metrics(t->cc, fr->node) + 1, r->cost);
}

void track_retire(void *ctx, const axp_retire *r)
{
    track *t = ctx;
    tthr *th = thread_of(t, r->pid, r->tid);
    if (!th)
        return;
    t->st.instructions++;
    if (!th->n || r->pc != th->expect)
        go(t, th, r->pc, ASYNC);
    th->expect = r->next_pc;
    if (!th->n)
        return;                 /* out of memory or frames */
    add_cost(t, th, r);
    frame *fr = &th->fr[th->n - 1];
    if (r->next_pc == r->pc + 4 && (fr->tp ? r->next_pc != fr->bend : r->next_pc < fr->hi))
        return;                 /* straight on within the block, or the code that has none */
    unsigned flow = r->id < alpha_optable_len ? alpha_optable[r->id].flow : FLOW_NONE;
    unsigned ra = (r->word >> 21) & 31;
    if (flow == FLOW_CALL && ra != 31) {
        call(t, th, r);
    } else if ((flow == FLOW_RETURN || flow == FLOW_JUMP || flow == FLOW_COROUTINE) && ret_to(t, th, r->next_pc)) {
        /* returned */
    } else {
        go(t, th, r->next_pc, SYNC);
    }
}

bool track_finish(track *t, char *err, size_t errlen)
{
    for (size_t i = 0; i < t->nth; i++)
        if (t->th[i].live)
            end_thread(t, &t->th[i]);
    if (t->oom) {
        snprintf(err, errlen, "out of memory following paths and calling contexts");
        return false;
    }
    return true;
}

const pathprof *track_paths(const track *t) { return t->pp; }
const cct *track_cct(const track *t) { return t->cc; }
track_stats track_get_stats(const track *t) { return t->st; }
