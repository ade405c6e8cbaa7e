/*
 * optimizer/icache.c: the I-cache model.  A synthetic run of the program is
 * drawn once from the estimated frequencies, then replayed on the addresses
 * of a layout through a direct-mapped cache of the EV5's geometry.
 *
 * Why a run and not a formula: the conflict measure (layout.c) sums, per
 * set, the executions of all lines but the hottest, as if every two lines
 * of a set interleaved at random.  A loop whose lines all fit misses once
 * per entry, not once per turn, and lines that already evict each other
 * lose little more to a third; only an order of visits says so.  The run is
 * a walk of the CFG: at each block the next is drawn by the estimated
 * frequencies of its edges, a call descends into its callee's entry and
 * comes back to the call's block, a return goes back to the caller.  What
 * the walk cannot know it draws at random: where a run starts (and starts
 * again when it returns from the bottom of its stack), and when the shared
 * libraries run (between blocks, in proportion to their heat, on the sets
 * their own samples give).  A walk of a sum has no phases: code that runs
 * at different times looks as if it ran together, the error the conflict
 * measure makes too.  Where the profile keeps runs apart (each --exact
 * file; each kind of process of the per-process profiles) each is walked
 * on its own, one after the other, and that error shrinks to what happens
 * within one run.
 *
 * Drawn edge by edge, a walk can also stay where the program does not:
 * see MAX_RECURSION and overstayed().  Measured against axp
 * (docs/notes/optimizer-icache-model.md), it predicts the share of misses
 * a plan saves within a few points, and underrates plans that send more
 * code to the cold area.
 *
 * The draws come from a fixed seed, so a plan is the same for the same
 * profile.
 */
#include <stdlib.h>
#include <string.h>

#include "optimizer/internal.h"

#define MAX_DEPTH 512           /* calls deeper than this are stepped over */
/* A call into a procedure already this many times on the stack is stepped
 * over.  A recursive procedure calls itself about once per call in any
 * profile (every call but the outermost comes from itself), so a walk
 * drawing its calls by frequency is a critical branching process: its
 * recursion trees have no finite mean size, and one walk of lua's six
 * training scripts spent 22% of its lines in auxsort (1% of the profile). */
#define MAX_RECURSION 4
#define SEED 0x9e3779b97f4a7c15ull

typedef struct walker {
    const cfg_program *prog;
    const est_freq *f;
    const double *shared;       /* the shared libraries' heat per set, or NULL */
    const opt_options *o;
    opt_trace *t;
    uint32_t *callee;           /* per global block: the procedure its call enters */
    uint8_t *ran;               /* per procedure: some block ran */
    double *want, *seen;        /* per procedure: its share of the profile's
                                   line executions; lines the walk spent in it */
    double *cum;                /* restart points: cumulative executions */
    uint32_t *cum_id;
    size_t ncum;
    double *lib_cum;            /* the libraries' sets, cumulative heat */
    uint32_t line, nsets;
    double lib_rate, lib_acc;   /* library lines per program line */
    uint64_t rng;
    size_t cap;
} walker;

static uint64_t next_rand(walker *w)
{
    w->rng ^= w->rng << 13;     /* xorshift64 */
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* Uniform in [0, x). */
static double draw(walker *w, double x)
{
    return (double)(next_rand(w) >> 11) * (1.0 / 9007199254740992.0) * x;
}

/* The first k with c[k] > r (c ascending). */
static size_t pick(const double *c, size_t n, double r)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < n ? lo : n - 1;
}

static bool put(walker *w, uint32_t v)
{
    opt_trace *t = w->t;
    if (t->n == w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 65536;
        uint32_t *nv = realloc(t->v, nc * sizeof *nv);
        if (!nv)
            return false;
        t->v = nv;
        w->cap = nc;
    }
    t->v[t->n++] = v;
    return true;
}

/* I-cache lines a block spans, as laid out from a line boundary. */
static uint32_t block_lines(const cfg_block *B, uint32_t line)
{
    return (uint32_t)((B->end - B->start + line - 1) / line);
}

/* A block drawn by its executions: where a walk starts, and starts again
 * when it returns from the bottom of its stack. */
static uint32_t restart(walker *w)
{
    return w->cum_id[pick(w->cum, w->ncum, draw(w, w->cum[w->ncum - 1]))];
}

/* The entry block of the procedure at addr, as a global id; CFG_NONE when
 * it is not a procedure that ran. */
static uint32_t entry_of(const walker *w, uint64_t addr)
{
    const cfg_proc *q = addr ? cfg_proc_at(w->prog, addr) : NULL;
    if (!q)
        return CFG_NONE;
    uint32_t j = (uint32_t)(q - w->prog->procs), b = cfg_block_at(q, addr);
    if (b == CFG_NONE || !w->ran[j])
        return CFG_NONE;
    return w->t->base[j] + b;
}

static bool setup(walker *w)
{
    const cfg_program *prog = w->prog;
    opt_trace *t = w->t;
    size_t np = prog->nprocs, nb = 0;
    if (!t->base && !(t->base = malloc((np + 1) * sizeof *t->base)))
        return false;
    for (size_t i = 0; i < np; i++) {
        t->base[i] = (uint32_t)nb;
        nb += prog->procs[i].nblocks;
    }
    t->base[np] = (uint32_t)nb;
    t->nblocks = nb;
    if (!(w->ran = calloc(np + 1, 1)))
        return false;
    for (size_t i = 0; i < np; i++)
        for (size_t b = 0; b < prog->procs[i].nblocks && !w->ran[i]; b++)
            w->ran[i] = w->f->procs[i].block[b] > 0;
    w->callee = malloc((nb + 1) * sizeof *w->callee);
    w->cum = malloc((nb + 1) * sizeof *w->cum);
    w->cum_id = malloc((nb + 1) * sizeof *w->cum_id);
    if (!w->callee || !w->cum || !w->cum_id || nb >= OPT_TRACE_LIB)
        return false;
    for (size_t g = 0; g < nb; g++)
        w->callee[g] = CFG_NONE;
    double sum = 0, lines = 0;
    if (!(w->want = calloc(np + 1, sizeof *w->want)) || !(w->seen = calloc(np + 1, sizeof *w->seen)))
        return false;
    for (size_t i = 0; i < np; i++) {
        const cfg_proc *p = &prog->procs[i];
        const est_proc_freq *fp = &w->f->procs[i];
        for (size_t c = p->ncalls; c-- > 0;) {   /* the first call of a block wins */
            uint64_t to = p->calls[c].target;
            if (!to) {
                const opt_jump *j = opt_jump_at(w->o, p->calls[c].site);
                to = j ? j->target : 0;
            }
            uint32_t e = p->calls[c].block < p->nblocks ? entry_of(w, to) : CFG_NONE;
            if (e != CFG_NONE)
                w->callee[t->base[i] + p->calls[c].block] = e;
        }
        for (size_t b = 0; b < p->nblocks; b++) {
            double x = fp->block[b];
            if (x <= 0)
                continue;
            sum += x;
            w->want[i] += x * block_lines(&p->blocks[b], w->line);
            w->cum[w->ncum] = sum;
            w->cum_id[w->ncum++] = t->base[i] + (uint32_t)b;
        }
    }
    double lib = 0;
    w->lib_cum = calloc(w->nsets, sizeof *w->lib_cum);
    if (!w->lib_cum)
        return false;
    for (uint32_t k = 0; w->shared && k < w->nsets; k++)
        w->lib_cum[k] = lib += w->shared[k];
    for (size_t i = 0; i < np; i++)
        lines += w->want[i];
    w->lib_rate = lines > 0 ? lib / lines : 0;
    for (size_t i = 0; i < np && lines > 0; i++)
        w->want[i] /= lines;
    return w->ncum > 0;
}

/* Where control goes from global block g of procedure i: a block of the
 * same procedure, another's entry (a tail call), or CFG_NONE for a return. */
static uint32_t successor(walker *w, uint32_t i, uint32_t b)
{
    const cfg_proc *p = &w->prog->procs[i];
    const est_proc_freq *fp = &w->f->procs[i];
    const cfg_block *B = &p->blocks[b];
    double sum = 0;
    for (uint32_t k = 0; k < B->nout; k++)
        sum += fp->edge[p->out_edges[B->first_out + k]];
    if (sum <= 0)
        return CFG_NONE;
    double r = draw(w, sum);
    for (uint32_t k = 0; k < B->nout; k++) {
        uint32_t e = p->out_edges[B->first_out + k];
        if ((r -= fp->edge[e]) >= 0 && k + 1 < B->nout)
            continue;
        const cfg_edge *E = &p->edges[e];
        if (E->to < p->nblocks)
            return w->t->base[i] + E->to;
        return E->kind == CFG_EDGE_OUT ? entry_of(w, E->target) : CFG_NONE;
    }
    return CFG_NONE;
}

static uint32_t proc_of(const opt_trace *t, size_t np, uint32_t g)
{
    size_t lo = 0, hi = np;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->base[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

static uint32_t on_stack(const uint32_t *sproc, uint32_t depth, uint32_t proc)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < depth; k++)
        n += sproc[k] == proc;
    return n;
}

/* A walk drawn edge by edge can stay where the profile does not: in a
 * loop whose exit the estimate makes all but impossible, in recursion.
 * A procedure the walk has spent more than twice its share in (with room
 * for its first few thousand lines) returns at once. */
static bool overstayed(const walker *w, uint32_t i, double walked)
{
    return w->seen[i] > 2 * w->want[i] * walked + 4096;
}

/* The walk, until it has touched about `lines` program lines. */
static bool walk(walker *w, uint64_t lines)
{
    const cfg_program *prog = w->prog;
    opt_trace *t = w->t;
    uint32_t stack[MAX_DEPTH], sproc[MAX_DEPTH], depth = 0;
    uint32_t g = restart(w);
    bool resume = false;        /* back from a call: g's lines were touched */
    double mine = 0;            /* program lines of this walk */
    for (uint64_t done = 0; done < lines;) {
        uint32_t i = proc_of(t, prog->nprocs, g), b = g - t->base[i];
        const cfg_block *B = &prog->procs[i].blocks[b];
        if (!resume) {
            uint32_t nl = block_lines(B, w->line);
            if (!put(w, g))
                return false;
            done += nl ? nl : 1;    /* so that the walk ends, whatever the blocks */
            t->walked += nl;
            w->seen[i] += nl;
            mine += nl;
            /* the libraries' lines count toward the length too: a program
             * that lives in libc would otherwise draw without end */
            for (w->lib_acc += nl * w->lib_rate; w->lib_acc >= 1; w->lib_acc -= 1, done++)
                if (!put(w, OPT_TRACE_LIB | (uint32_t)pick(w->lib_cum, w->nsets,
                                                     draw(w, w->lib_cum[w->nsets - 1]))))
                    return false;
            if (w->callee[g] != CFG_NONE && depth < MAX_DEPTH &&
                on_stack(sproc, depth, proc_of(t, prog->nprocs, w->callee[g])) < MAX_RECURSION) {
                sproc[depth] = i;
                stack[depth++] = g;
                g = w->callee[g];
                continue;
            }
        }
        resume = false;
        uint32_t nx = overstayed(w, i, mine) ? CFG_NONE : successor(w, i, b);
        if (nx != CFG_NONE) {
            g = nx;
        } else if (depth) {
            g = stack[--depth];
            resume = true;
        } else {
            g = restart(w);
        }
    }
    return true;
}

/* Line executions of the program by f: what a walk stands for. */
static double line_execs(const cfg_program *prog, const est_freq *f, uint32_t line)
{
    double x = 0;
    for (size_t i = 0; i < prog->nprocs; i++)
        for (size_t b = 0; b < prog->procs[i].nblocks; b++)
            x += f->procs[i].block[b] * block_lines(&prog->procs[i].blocks[b], line);
    return x;
}

/* One walk of f appended to t. */
static bool walk_run(const cfg_program *prog, const est_freq *f, const double *shared,
                     const opt_options *o, uint32_t line, uint32_t nsets, uint64_t lines,
                     uint64_t seed, opt_trace *t, size_t *cap)
{
    walker w = { .prog = prog, .f = f, .shared = shared, .o = o, .t = t, .line = line,
                 .nsets = nsets, .rng = seed, .cap = *cap };
    bool ok = setup(&w) && walk(&w, lines);
    *cap = w.cap;
    free(w.callee), free(w.ran), free(w.want), free(w.seen), free(w.cum), free(w.cum_id), free(w.lib_cum);
    return ok;
}

bool opt_trace_make(const cfg_program *prog, const est_freq *f, const opt_options *o,
                    uint32_t line, uint32_t nsets, uint64_t lines, opt_trace *t)
{
    memset(t, 0, sizeof *t);
    size_t cap = 0;
    double total = line_execs(prog, f, line);
    bool ok = total > 0;
    if (ok && !o->nruns)
        ok = walk_run(prog, f, o->shared_heat, o, line, nsets, lines, SEED, t, &cap);
    /* Runs apart, each its share of the lines, one after the other (their
     * order is of no matter beyond the first lines of each) */
    for (size_t r = 0; ok && r < o->nruns; r++) {
        uint64_t n = (uint64_t)((double)lines * line_execs(prog, o->runs[r], line) / total);
        if (n >= 1000)
            ok = walk_run(prog, o->runs[r], o->run_shared ? o->run_shared[r] : NULL, o, line,
                          nsets, n, SEED + r, t, &cap);
    }
    t->scale = t->walked > 0 ? total / t->walked : 0;
    if (!ok)
        opt_trace_free(t);
    return ok;
}

void opt_trace_free(opt_trace *t)
{
    free(t->v);
    free(t->base);
    memset(t, 0, sizeof *t);
}

double opt_trace_misses(const opt_trace *t, const uint64_t *addr, const uint32_t *size,
                        uint32_t line, uint32_t nsets)
{
    uint64_t *tag = malloc(nsets * sizeof *tag), misses = 0;
    if (!tag || !t->n)
        return free(tag), -1;
    for (uint32_t k = 0; k < nsets; k++)
        tag[k] = UINT64_MAX;
    /* The first tenth warms the cache up: a real run has been running. */
    size_t warm = t->n / 10;
    for (size_t k = 0; k < t->n; k++) {
        uint32_t v = t->v[k];
        if (v & OPT_TRACE_LIB) {
            uint32_t s = v & ~OPT_TRACE_LIB;
            uint64_t lt = (1ull << 62) | s;
            misses += k >= warm && tag[s] != lt;
            tag[s] = lt;
            continue;
        }
        if (addr[v] == UINT64_MAX || !size[v])
            continue;
        for (uint64_t l = addr[v] / line; l <= (addr[v] + size[v] - 1) / line; l++) {
            uint32_t s = (uint32_t)(l % nsets);
            misses += k >= warm && tag[s] != l;
            tag[s] = l;
        }
    }
    free(tag);
    return (double)misses * t->scale * (double)t->n / (double)(t->n - warm);
}
