/*
 * optimizer/layout.c: the whole plan.
 *
 * Every procedure that ran gets its blocks chained (chains.c); the hot parts
 * are then ordered by call affinity, Pettis-Hansen style: call edges by
 * falling frequency join the groups of their caller and callee, and groups
 * go out hottest per byte first.  Packing only the hot parts together is
 * what matters on the EV5: its 8 KB I-cache is direct-mapped, so two pieces
 * of hot code conflict exactly when they lie a multiple of 8 KB apart, and
 * hot code that spans fewer bytes can only conflict less.  Procedures that
 * never ran are not listed: the rewriter places them after the listed ones
 * in address order, and the cold parts after everything.
 */
#include <stdlib.h>
#include <string.h>

#include "optimizer/internal.h"

typedef struct cedge {
    uint32_t a, b;
    double w;
} cedge;

static int by_pair(const void *x, const void *y)
{
    const cedge *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static int by_w(const void *x, const void *y)
{
    const cedge *p = x, *q = y;
    if (p->w != q->w)
        return p->w > q->w ? -1 : 1;
    return by_pair(x, y);
}

typedef struct pinfo {
    double insns, density;
    uint32_t hot_bytes;
    uint32_t grp, nxt;          /* group id (its first member), next member */
    uint32_t last;              /* for a group's first member: its last */
    double gw, gb;              /* for a group's first member: insns, bytes */
} pinfo;

static const pinfo *sort_pi;
static double sort_hot;
static int by_density(const void *x, const void *y)
{
    const pinfo *p = &sort_pi[*(const uint32_t *)x], *q = &sort_pi[*(const uint32_t *)y];
    double dp = p->gw / (p->gb + 1), dq = q->gw / (q->gb + 1);
    bool hp = p->gw >= sort_hot, hq = q->gw >= sort_hot;
    if (hp != hq)                       /* hot groups first, whatever their size */
        return hp ? -1 : 1;
    if (dp != dq)
        return dp > dq ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

const opt_jump *opt_jump_at(const opt_options *o, uint64_t pc)
{
    for (size_t lo = 0, hi = o->njumps; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->jumps[mid].pc == pc)
            return &o->jumps[mid];
        if (o->jumps[mid].pc < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Whether groups ga and gb together fit the I-cache, where no member can
 * conflict with another. */
static bool group_fits(const pinfo *pi, uint32_t ga, uint32_t gb, uint32_t cache_bytes)
{
    return pi[ga].gb + pi[gb].gb <= cache_bytes;
}

/* Group b after group a. */
static void merge_groups(pinfo *pi, uint32_t ga, uint32_t gb)
{
    if (ga == gb)
        return;
    pi[pi[ga].last].nxt = gb;
    pi[ga].last = pi[gb].last;
    pi[ga].gw += pi[gb].gw;
    pi[ga].gb += pi[gb].gb;
    for (uint32_t x = gb; x != CFG_NONE; x = pi[x].nxt)
        pi[x].grp = ga;
}

static int by_insns(const void *x, const void *y)
{
    const pinfo *p = &sort_pi[*(const uint32_t *)x], *q = &sort_pi[*(const uint32_t *)y];
    if (p->insns != q->insns)
        return p->insns > q->insns ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Call-chain clustering (Ottoni and Maher's C3): hottest procedure first,
 * each joins, after it, the group of its most frequent caller, as long as
 * the two together fit the I-cache: a group that fits never conflicts with
 * itself, and a callee sits just after its caller.  ce: caller a, callee b,
 * one per pair. */
static bool c3_merge(pinfo *pi, const cedge *ce, size_t m, const uint32_t *ran, size_t nran,
                     uint32_t cache_bytes)
{
    uint32_t *byheat = malloc((nran + 1) * sizeof *byheat);
    if (!byheat)
        return false;
    memcpy(byheat, ran, nran * sizeof *byheat);
    sort_pi = pi;
    qsort(byheat, nran, sizeof *byheat, by_insns);
    for (size_t k = 0; k < nran; k++) {
        uint32_t callee = byheat[k], caller = CFG_NONE;
        double best = 0;
        for (size_t e = 0; e < m; e++)
            if (ce[e].b == callee && ce[e].w > best)
                best = ce[e].w, caller = ce[e].a;
        if (caller == CFG_NONE)
            continue;
        uint32_t ga = pi[caller].grp, gb = pi[callee].grp;
        if (ga != gb && group_fits(pi, ga, gb, cache_bytes))
            merge_groups(pi, ga, gb);
    }
    free(byheat);
    return true;
}

/* The direct calls between hot procedures (at least hot instructions
 * each), caller a and callee b, weighted by the call site's count; *n of
 * them.  Calls through a register count toward nothing, even where a
 * target profile names their callee: with them speedtest1's plan from
 * value samples lost 1.4 to 2.8 points on held-out inputs over three
 * trainings (docs/notes/optimizer-baselines.md); their targets serve as
 * hints only.  NULL when out of memory. */
static cedge *hot_call_edges(const cfg_program *prog, const est_freq *f, const pinfo *pi,
                             const uint32_t *ran, size_t nran, double hot, size_t *n)
{
    size_t cap = 16, ne = 0;
    cedge *ce = malloc(cap * sizeof *ce);
    for (size_t k = 0; ce && k < nran; k++) {
        uint32_t i = ran[k];
        const cfg_proc *p = &prog->procs[i];
        for (size_t c = 0; c < p->ncalls; c++) {
            uint64_t callee = p->calls[c].target;
            const cfg_proc *q = callee ? cfg_proc_at(prog, callee) : NULL;
            uint32_t j = q ? (uint32_t)(q - prog->procs) : i;
            if (j == i || pi[j].insns < hot || pi[i].insns < hot || p->calls[c].block >= p->nblocks)
                continue;
            if (ne == cap) {
                cedge *nc = realloc(ce, (cap *= 2) * sizeof *ce);
                if (!nc) {
                    free(ce);
                    return NULL;
                }
                ce = nc;
            }
            ce[ne++] = (cedge){ i, j, f->procs[i].block[p->calls[c].block] };
        }
    }
    *n = ne;
    return ce;
}

/* Call-affinity order of the procedures that ran: indices into prog->procs.
 * Groups merge by direct calls between hot procedures, by falling weight,
 * or with o->c3 by call-chain clustering. */
static uint32_t *order_procs(const cfg_program *prog, const est_freq *f, pinfo *pi,
                             const uint32_t *ran, size_t nran, const opt_options *o, double total,
                             uint32_t cache_bytes)
{
    /* Only hot procedures join groups: a call from a procedure that ran a
     * handful of times would otherwise drag it, and all it calls, in among
     * the hot code.  Hot: OPT_HOT_SHARE of what ran.  One under `group`
     * (lukewarm) joins only a group it fits in with (merge below); the
     * groups of at least `group` go first.  C3 has no lukewarm ones. */
    double group = total * (o->c3 ? OPT_HOT_SHARE : OPT_GROUP_SHARE);
    size_t ne = 0;
    cedge *ce = o->no_order ? calloc(1, sizeof *ce)
                            : hot_call_edges(prog, f, pi, ran, nran, total * OPT_HOT_SHARE, &ne);
    uint32_t *grps = malloc((nran + 1) * sizeof *grps), *out = malloc((nran + 1) * sizeof *out);
    if (!ce || !grps || !out)
        goto oom;
    /* C3 needs the direction (caller a, callee b); the affinity order
     * counts calls either way as one pair */
    for (size_t k = 0; k < ne && !o->c3; k++)
        if (ce[k].a > ce[k].b)
            ce[k] = (cedge){ ce[k].b, ce[k].a, ce[k].w };
    qsort(ce, ne, sizeof *ce, by_pair);
    size_t m = 0;
    for (size_t k = 0; k < ne; k++)
        if (m && ce[m - 1].a == ce[k].a && ce[m - 1].b == ce[k].b)
            ce[m - 1].w += ce[k].w;
        else
            ce[m++] = ce[k];
    qsort(ce, m, sizeof *ce, by_w);
    for (size_t k = 0; k < nran; k++) {
        pinfo *x = &pi[ran[k]];
        x->grp = x->last = ran[k];
        x->nxt = CFG_NONE;
        x->gw = x->insns;
        x->gb = x->hot_bytes;
    }
    if (o->c3) {
        if (!c3_merge(pi, ce, m, ran, nran, cache_bytes))
            goto oom;
    } else
        /* By falling weight, down to call sites that never ran: a call
         * between two hot procedures that the training never took still
         * ties them; stopping at those lost on the held-out inputs of
         * speedtest1 and lua (docs/notes/optimizer-baselines.md).  A
         * lukewarm procedure joins only while the group fits the cache,
         * where it cannot conflict with its partners: in a group larger
         * than the cache (an interpreter's loop and its callees) it lands
         * on some set of the hottest code for nothing. */
        for (size_t k = 0; k < m; k++) {
            uint32_t ga = pi[ce[k].a].grp, gb = pi[ce[k].b].grp;
            bool lukewarm = pi[ce[k].a].insns < group || pi[ce[k].b].insns < group;
            if (!lukewarm || group_fits(pi, ga, gb, cache_bytes))
                merge_groups(pi, ga, gb);
        }
    size_t ng = 0;
    for (size_t k = 0; k < nran; k++)
        if (pi[ran[k]].grp == ran[k])
            grps[ng++] = ran[k];
    sort_pi = pi;
    sort_hot = group;
    qsort(grps, ng, sizeof *grps, by_density);
    size_t n = 0;
    for (size_t g = 0; g < ng; g++)
        for (uint32_t x = grps[g]; x != CFG_NONE; x = pi[x].nxt)
            out[n++] = x;
    free(ce);
    free(grps);
    return out;
oom:
    free(ce);
    free(grps);
    free(out);
    return NULL;
}

/* I-cache lines the executed blocks touch, each with the executions of the
 * blocks on it: (line, heat) pairs, merged by line when counted. */
typedef struct lineset {
    uint64_t *v;
    double *h;
    size_t n, cap;
} lineset;

static bool add_lines(lineset *s, uint64_t start, uint64_t end, uint32_t line, double heat)
{
    for (uint64_t l = start / line; l <= (end - 1) / line; l++) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 1024;
            uint64_t *nv = realloc(s->v, s->cap * sizeof *nv);
            if (nv)
                s->v = nv;
            double *nh = realloc(s->h, s->cap * sizeof *nh);
            if (nh)
                s->h = nh;
            if (!nv || !nh)
                return false;
        }
        s->v[s->n] = l;
        s->h[s->n++] = heat;
    }
    return true;
}

static const uint64_t *sort_lines;
static int by_line(const void *x, const void *y)
{
    uint64_t a = sort_lines[*(const uint32_t *)x], b = sort_lines[*(const uint32_t *)y];
    return a < b ? -1 : a > b;
}

/* Distinct lines, and the conflict measure of them with the shared code:
 * per cache set, the executions of all its lines but the hottest (what a
 * direct-mapped cache misses at most when they interleave). */
static bool count_lines(lineset *s, const double *shared, uint32_t nsets, uint64_t phase,
                        uint64_t *nlines, double *conflict)
{
    uint32_t *ix = malloc((s->n + 1) * sizeof *ix);
    double *sum = calloc(nsets, sizeof *sum), *max = calloc(nsets, sizeof *max);
    if (!ix || !sum || !max) {
        free(ix), free(sum), free(max);
        return false;
    }
    for (size_t i = 0; i < s->n; i++)
        ix[i] = (uint32_t)i;
    sort_lines = s->v;
    qsort(ix, s->n, sizeof *ix, by_line);
    for (uint32_t k = 0; shared && k < nsets; k++)
        sum[k] = max[k] = shared[k];
    uint64_t n = 0;
    for (size_t i = 0; i < s->n;) {
        uint64_t l = s->v[ix[i]];
        double h = 0;
        for (; i < s->n && s->v[ix[i]] == l; i++)
            h += s->h[ix[i]];
        n++;
        uint32_t set = (uint32_t)((l + phase) % nsets);
        sum[set] += h;
        if (h > max[set])
            max[set] = h;
    }
    double c = 0;
    for (uint32_t k = 0; k < nsets; k++)
        c += sum[k] - max[k];
    *nlines = n;
    *conflict = c;
    free(ix), free(sum), free(max);
    return true;
}

static double proc_insns(const cfg_proc *p, const est_proc_freq *fp, double *maxb)
{
    double s = 0;
    *maxb = 0;
    for (size_t b = 0; b < p->nblocks; b++) {
        s += fp->block[b] * (double)((p->blocks[b].end - p->blocks[b].start) / 4);
        if (fp->block[b] > *maxb)
            *maxb = fp->block[b];
    }
    return s;
}

/* Bytes the rewriter will emit for block order[i] followed by order[i+1]
 * (n: none): its own, plus a BR when its fall-through is not next and cannot
 * be had by inverting, minus a BR to the block that is next. */
static int32_t emitted(const cfg_proc *p, const uint32_t *order, size_t i, size_t n)
{
    uint32_t b = order[i], nx = i + 1 < n ? order[i + 1] : CFG_NONE, t = CFG_NONE, f = CFG_NONE;
    const cfg_block *B = &p->blocks[b];
    for (uint32_t k = 0; k < B->nout; k++) {
        const cfg_edge *E = &p->edges[p->out_edges[B->first_out + k]];
        if (E->kind == CFG_EDGE_TAKEN && E->to < p->nblocks)
            t = E->to;
        else if (E->kind == CFG_EDGE_FALL && E->to < p->nblocks)
            f = E->to;
    }
    int32_t sz = (int32_t)(B->end - B->start);
    if (f != CFG_NONE && nx != f && !(t != CFG_NONE && nx == t))
        sz += 4;
    else if (f == CFG_NONE && t != CFG_NONE && nx == t)
        sz -= 4;
    return sz;
}

static uint32_t hot_bytes(const cfg_proc *p, const opt_proc_layout *L, uint32_t *cold)
{
    uint32_t h = 0, c = 0;
    size_t hot = L->split == PLAN_NOSPLIT ? L->n : L->split;
    for (size_t i = 0; i < L->n; i++) {
        if (i >= hot)
            c += (uint32_t)emitted(p, L->order + hot, i - hot, L->n - hot);
        else
            h += (uint32_t)emitted(p, L->order, i, hot) + (L->align[i] ? L->align[i] - 4 : 0);
    }
    *cold = c;
    return h;
}

/* The hot part of a procedure laid out from a line boundary: heat per line
 * into heat[0..*nl) (zeroed by the caller, room for hot_bytes/line + 2). */
static void line_heat(const cfg_proc *p, const est_proc_freq *fp, const opt_proc_layout *L,
                      uint32_t line, double *heat, uint32_t *nl)
{
    size_t hot = L->split == PLAN_NOSPLIT ? L->n : L->split;
    uint64_t off = 0;
    *nl = 0;
    for (size_t i = 0; i < hot; i++) {
        if (L->align[i])
            off = (off + L->align[i] - 1) & ~(uint64_t)(L->align[i] - 1);
        uint64_t sz = (uint64_t)emitted(p, L->order, i, hot);
        double h = fp->block[L->order[i]];
        for (uint64_t l = off / line; sz && l <= (off + sz - 1) / line; l++) {
            heat[l] += h;
            if (l + 1 > *nl)
                *nl = (uint32_t)l + 1;
        }
        off += sz;
    }
}

typedef struct filler {
    uint32_t proc;
    uint32_t size;
} filler;

static int by_size_desc(const void *x, const void *y)
{
    const filler *p = x, *q = y;
    if (p->size != q->size)
        return p->size > q->size ? -1 : 1;
    return p->proc < q->proc ? -1 : p->proc > q->proc;
}

/* Colouring: the shift, in lines, of the whole hot region that puts its
 * executed lines on the cache sets where the shared libraries' code is
 * coolest.  One shift for all keeps every caller next to its callee as
 * the call-affinity order put them (moving procedures apart one by one to
 * dodge conflicts lost more than it won: docs/notes/optimizer-lua.md). */
static uint32_t best_shift(const double *prog_sets, const double *shared, uint32_t nsets,
                           double *gain)
{
    double base = 0, best = -1;
    uint32_t bs = 0;
    for (uint32_t sh = 0; sh < nsets; sh++) {
        double c = 0;
        for (uint32_t k = 0; k < nsets; k++) {
            double a = prog_sets[k], b2 = shared[(k + sh) % nsets];
            c += a < b2 ? a : b2;
        }
        if (sh == 0)
            base = c;
        if (best < 0 || c < best)
            best = c, bs = sh;
    }
    *gain = base - best;
    return bs;
}

/* Never-run procedures, largest first, adding up to at most want bytes. */
static uint64_t take_fillers(filler *fl, size_t nfl, uint64_t want, plan *pl,
                             const cfg_program *prog, size_t *n, bool *ok)
{
    qsort(fl, nfl, sizeof *fl, by_size_desc);
    uint64_t got = 0;
    for (size_t k = 0; *ok && k < nfl && want - got >= 4; k++)
        if (fl[k].size <= want - got) {
            *ok = plan_add_proc(pl, prog->procs[fl[k].proc].start, 4) != NULL;
            got += fl[k].size;
            ++*n;
        }
    return got;
}

static bool jump_known(const opt_options *o, uint64_t pc)
{
    return opt_jump_at(o, pc) != NULL;
}

/* A jump table's JMP without a target profile: the hint goes to the table
 * target whose edge the estimate makes the most frequent.  From samples
 * that is the only target knowledge there is (value samples would give
 * indirect calls too). */
static bool table_hints(const cfg_proc *p, const est_proc_freq *fp, const opt_options *o,
                        plan *pl, size_t *nhints)
{
    for (size_t t = 0; t < p->ntables; t++) {
        uint64_t pc = p->tables[t].jump;
        uint32_t b = cfg_block_at(p, pc);
        if (b == CFG_NONE || jump_known(o, pc))
            continue;
        const cfg_block *B = &p->blocks[b];
        double best = 0;
        uint32_t to = CFG_NONE;
        for (uint32_t k = 0; k < B->nout; k++) {
            uint32_t e = p->out_edges[B->first_out + k];
            const cfg_edge *E = &p->edges[e];
            if (E->kind == CFG_EDGE_TABLE && E->to < p->nblocks && fp->edge[e] > best)
                best = fp->edge[e], to = E->to;
        }
        if (to == CFG_NONE)
            continue;
        if (!plan_add_hint(pl, pc, p->blocks[to].start))
            return false;
        ++*nhints;
    }
    return true;
}

/* What the passes of opt_plan share. */
typedef struct planner {
    const cfg_program *prog;
    const est_freq *f;
    const opt_options *o;
    const ev5_params *ev5;
    plan *pl;
    opt_result *res;
    uint32_t line, nsets;
    pinfo *pi;
    uint32_t *ran, *order;      /* the procedures that ran; their order */
    size_t nran, nfl;
    opt_proc_layout *L;
    filler *fl;                 /* never-run procedures, to fill with */
    double *prog_sets;          /* executions per I-cache set */
    double *heat;               /* one procedure's executions per line */
    size_t nheat;
    uint32_t *gap;              /* lines of nops before each procedure */
    double hot_share;           /* instructions that make a procedure hot */
    lineset before, after;
    opt_trace trace;            /* the I-cache model's walk */
    uint64_t *addr;             /* per global block: where the plan puts it */
    uint32_t *size;             /* and its bytes there */
} planner;

/* Hot procedures start on a 32-byte line, the others on 16 bytes. */
static uint32_t proc_align(const planner *P, uint32_t i)
{
    return P->pi[i].insns >= P->hot_share ? 32 : 16;
}

/* Where procedure i starts when the code before it ends at off: aligned,
 * then its gap. */
static uint64_t proc_start(const planner *P, uint32_t i, uint64_t off)
{
    uint64_t al = proc_align(P, i);
    return ((off + al - 1) & ~(al - 1)) + (uint64_t)P->gap[i] * P->line;
}

/* Chains and aligns the blocks of every procedure that ran, notes the
 * lines it runs on at its original addresses, and lists those that did
 * not as fillers. */
static bool chain_all(planner *P)
{
    const cfg_program *prog = P->prog;
    uint32_t maxhot = 0;
    bool ok = true;
    for (size_t i = 0; i < prog->nprocs; i++) {
        double maxb;
        P->res->insns += proc_insns(&prog->procs[i], &P->f->procs[i], &maxb);
    }
    /* A procedure under OPT_GROUP_SHARE keeps no unsampled handlers hot
     * (opt_chain_proc, as with --cold-handlers): the cases of a switch
     * that runs rarely cost hot bytes for code another input would rarely
     * run either.  Over five trainings each, speedtest1's held-out mean
     * went from 0.9042 of -O2 to 0.8881 and lua's from 0.8996 to 0.8965
     * (docs/notes/optimizer-handlers.md). */
    opt_options rare = *P->o;
    rare.cold_handlers = true;
    for (size_t i = 0; ok && i < prog->nprocs; i++) {
        const cfg_proc *p = &prog->procs[i];
        const est_proc_freq *fp = &P->f->procs[i];
        double maxb;
        P->pi[i].insns = proc_insns(p, fp, &maxb);
        if (P->pi[i].insns <= 0 || !p->nblocks) {
            if (p->nblocks && !(p->flags & (CFG_PF_MISSING | CFG_PF_BADCODE)) && p->end > p->start)
                P->fl[P->nfl++] = (filler){ (uint32_t)i, (uint32_t)(p->end - p->start) };
            continue;
        }
        P->ran[P->nran++] = (uint32_t)i;
        bool lukewarm = P->pi[i].insns < OPT_GROUP_SHARE * P->res->insns;
        ok = opt_chain_proc(p, fp, lukewarm ? &rare : P->o, &P->L[i]);
        if (ok && P->L[i].kept) {
            P->res->kept_blocks += P->L[i].kept;
            P->res->kept_bytes += P->L[i].kept_bytes;
            P->res->kept_procs++;
        }
        if (ok && !P->o->no_align)
            opt_align_proc(p, fp, P->ev5, &P->L[i], maxb);
        uint32_t cold;
        P->pi[i].hot_bytes = ok ? hot_bytes(p, &P->L[i], &cold) : 0;
        if (P->pi[i].hot_bytes > maxhot)
            maxhot = P->pi[i].hot_bytes;
        for (size_t b = 0; ok && b < p->nblocks; b++)
            if (fp->block[b] > 0)
                ok = add_lines(&P->before, p->blocks[b].start, p->blocks[b].end, P->line, fp->block[b]);
    }
    P->nheat = maxhot / P->line + 64;
    return ok && (P->heat = calloc(P->nheat, sizeof *P->heat)) != NULL;
}

/* The direct calls between hot procedures as two lists per procedure, in
 * the CSR way: L->list[L->first[i] .. L->first[i + 1]) are the callees of
 * i in calls[0], its callers in calls[1]. */
typedef struct call_lists {
    uint32_t *first, *list;
} call_lists;

static void call_lists_free(call_lists *L)
{
    for (int d = 0; d < 2; d++) {
        free(L[d].first);
        free(L[d].list);
        L[d].first = L[d].list = NULL;
    }
}

static bool hot_calls(planner *P, call_lists calls[2])
{
    size_t np = P->prog->nprocs, ne = 0;
    cedge *e = hot_call_edges(P->prog, P->f, P->pi, P->ran, P->nran, P->hot_share, &ne);
    bool ok = e != NULL;
    for (int d = 0; ok && d < 2; d++) {
        uint32_t *cnt = calloc(np + 2, sizeof *cnt), *list = malloc((ne + 1) * sizeof *list);
        calls[d] = (call_lists){ cnt, list };
        if (!(ok = cnt && list))
            break;
        for (size_t k = 0; k < ne; k++)
            cnt[(d ? e[k].b : e[k].a) + 2]++;
        for (size_t i = 0; i < np; i++)
            cnt[i + 2] += cnt[i + 1];
        /* cnt[i + 1] is where i's list goes; filling moves it to its end,
         * which is where i + 1's starts */
        for (size_t k = 0; k < ne; k++)
            list[cnt[(d ? e[k].b : e[k].a) + 1]++] = d ? e[k].a : e[k].b;
    }
    free(e);
    if (!ok)
        call_lists_free(calls);
    return ok;
}

/* Gaps (--gaps; off by default): a hot procedure whose hot lines would
 * share cache sets with the hot lines of its partners placed before it
 * (what packing cannot avoid once a group outgrows the cache, as an
 * interpreter's loop and what it calls do) moves up to OPT_MAX_GAP lines
 * further on, where the smaller of the two executions per set sums least:
 * Hashemi, Kaeli and Calder's colouring with the call graph as the time
 * relation.  Partners: the hot procedures it calls or is called by
 * directly.  The gap is nops, never run.  The relation is the same under
 * any shift of the whole region, so colouring against the libraries comes
 * after.  Measured over eleven draws each (docs/notes/optimizer-gaps.md)
 * it moved lua's held-out mean by 0.2 points for the better and
 * speedtest1's by 0.9 for the worse; with siblings (the other callees of
 * its callers) as partners too, lua lost 1.7 points: hence off. */
typedef struct gapper {
    uint32_t nsets, *stamp, *nls, mark;
    uint64_t *at;               /* placed: the line it starts on */
    double **lh;                /* placed: its heat per line */
    double *psets;              /* the partners' heat per set */
} gapper;

static void add_partner(gapper *G, uint32_t q)
{
    if (!G->lh[q] || G->stamp[q] == G->mark)
        return;
    G->stamp[q] = G->mark;
    for (uint32_t l = 0; l < G->nls[q]; l++)
        G->psets[(G->at[q] + l) % G->nsets] += G->lh[q][l];
}

/* Adds the heat of i's partners placed so far to G->psets. */
static void add_partners(gapper *G, const call_lists calls[2], uint32_t i)
{
    memset(G->psets, 0, G->nsets * sizeof *G->psets);
    G->mark = i + 1;
    G->stamp[i] = G->mark;
    for (int d = 0; d < 2; d++)
        for (uint32_t x = calls[d].first[i]; x < calls[d].first[i + 1]; x++)
            add_partner(G, calls[d].list[x]);
}

static bool space_procs(planner *P)
{
    size_t np = P->prog->nprocs;
    call_lists calls[2] = { { 0 } };
    gapper G = { .nsets = P->nsets, .stamp = calloc(np + 1, sizeof *G.stamp),
                 .nls = calloc(np + 1, sizeof *G.nls), .at = calloc(np + 1, sizeof *G.at),
                 .lh = calloc(np + 1, sizeof *G.lh), .psets = malloc(P->nsets * sizeof *G.psets) };
    bool ok = G.stamp && G.nls && G.at && G.lh && G.psets && hot_calls(P, calls);
    uint64_t off = 0;
    for (size_t k = 0; ok && k < P->nran; k++) {
        uint32_t i = P->order[k], nl = 0;
        off = proc_start(P, i, off);        /* no gap yet */
        if (P->pi[i].insns < P->hot_share) {
            off += P->pi[i].hot_bytes;
            continue;
        }
        memset(P->heat, 0, P->nheat * sizeof *P->heat);
        line_heat(&P->prog->procs[i], &P->f->procs[i], &P->L[i], P->line, P->heat, &nl);
        add_partners(&G, calls, i);
        uint64_t l0 = (off + P->o->code_phase) / P->line;
        double best = -1, c0 = 0;
        uint32_t bg = 0;
        for (uint32_t g = 0; g <= OPT_MAX_GAP && g < G.nsets; g++) {
            double c = 0;
            for (uint32_t l = 0; l < nl; l++) {
                double a = P->heat[l], b = G.psets[(l0 + g + l) % G.nsets];
                c += a < b ? a : b;
            }
            if (g == 0)
                c0 = c;
            if (best < 0 || c < best)
                best = c, bg = g;
            if (c == 0)
                break;
        }
        P->res->pair_conflict_before += c0;
        P->res->pair_conflict_after += best;
        P->gap[i] = bg;
        P->res->gaps += bg > 0;
        P->res->gap_bytes += (uint64_t)bg * P->line;
        off += (uint64_t)bg * P->line;
        G.at[i] = (off + P->o->code_phase) / P->line;
        G.nls[i] = nl;
        ok = (G.lh[i] = malloc((nl + 1) * sizeof **G.lh)) != NULL;
        if (ok)
            memcpy(G.lh[i], P->heat, nl * sizeof **G.lh);
        off += P->pi[i].hot_bytes;
    }
    for (size_t i = 0; G.lh && i < np; i++)
        free(G.lh[i]);
    call_lists_free(calls);
    free(G.stamp), free(G.nls), free(G.at), free(G.lh), free(G.psets);
    return ok;
}

/* The hot procedures' lines with the shared libraries': the offset where
 * the program's hot code starts so that the two overlap least, filled up
 * to with never-run procedures. */
static uint64_t colour_shift(planner *P, bool *ok)
{
    uint64_t off = 0;
    for (size_t k = 0; k < P->nran; k++) {
        uint32_t i = P->order[k], nl = 0;
        memset(P->heat, 0, P->nheat * sizeof *P->heat);
        line_heat(&P->prog->procs[i], &P->f->procs[i], &P->L[i], P->line, P->heat, &nl);
        off = proc_start(P, i, off);
        for (uint32_t l = 0; l < nl; l++)
            P->prog_sets[((off + P->o->code_phase) / P->line + l) % P->nsets] += P->heat[l];
        off += P->pi[i].hot_bytes;
    }
    double gain;
    uint32_t sh = best_shift(P->prog_sets, P->o->shared_heat, P->nsets, &gain);
    off = take_fillers(P->fl, P->nfl, (uint64_t)sh * P->line, P->pl, P->prog, &P->res->fillers, ok);
    P->res->filler_bytes = off;
    return off;
}

/* Where the hot blocks of procedure i land when it starts at off (from
 * the start of the moved code), for the I-cache model. */
static void place_hot(planner *P, uint32_t i, uint64_t off)
{
    const cfg_proc *p = &P->prog->procs[i];
    const opt_proc_layout *L = &P->L[i];
    size_t hot = L->split == PLAN_NOSPLIT ? L->n : L->split;
    if (!P->addr)
        return;
    off += P->o->code_phase;
    for (size_t k = 0; k < hot; k++) {
        if (L->align[k])
            off = (off + L->align[k] - 1) & ~(uint64_t)(L->align[k] - 1);
        uint32_t g = P->trace.base[i] + L->order[k], sz = (uint32_t)emitted(p, L->order, k, hot);
        P->addr[g] = off;
        P->size[g] = sz;
        off += sz;
    }
}

/* The cold parts, after the hot code ending at off and the procedures
 * that never ran (the rewriter's order), each procedure's in plan order. */
static void place_cold(planner *P, uint64_t off)
{
    if (!P->addr)
        return;
    for (size_t k = 0; k < P->nfl; k++)
        off += P->fl[k].size;
    off += P->o->code_phase;
    off -= P->res->filler_bytes;        /* the fillers went in front */
    for (size_t k = 0; k < P->nran; k++) {
        uint32_t i = P->order[k];
        const opt_proc_layout *L = &P->L[i];
        if (L->split == PLAN_NOSPLIT)
            continue;
        for (size_t x = L->split; x < L->n; x++) {
            uint32_t g = P->trace.base[i] + L->order[x];
            uint32_t sz = (uint32_t)emitted(&P->prog->procs[i], L->order + L->split, x - L->split,
                                            L->n - L->split);
            P->addr[g] = off;
            P->size[g] = sz;
            off += sz;
        }
    }
}

/* The I-cache model's walk and the misses it predicts in the original
 * layout.  Without a walk (nothing ran, or no memory for it) the report
 * says nothing of misses and the plan is the same. */
static void model_before(planner *P)
{
    const cfg_program *prog = P->prog;
    if (!opt_trace_make(prog, P->f, P->o, P->line, P->nsets, OPT_TRACE_LINES, &P->trace))
        return;
    size_t nb = P->trace.nblocks;
    P->addr = malloc((nb + 1) * sizeof *P->addr);
    P->size = malloc((nb + 1) * sizeof *P->size);
    if (!P->addr || !P->size) {
        free(P->addr), free(P->size);
        P->addr = NULL, P->size = NULL;
        return;
    }
    for (size_t i = 0; i < prog->nprocs; i++)
        for (size_t b = 0; b < prog->procs[i].nblocks; b++) {
            const cfg_block *B = &prog->procs[i].blocks[b];
            P->addr[P->trace.base[i] + b] = B->start;
            P->size[P->trace.base[i] + b] = (uint32_t)(B->end - B->start);
        }
    P->res->icache_before = opt_trace_misses(&P->trace, P->addr, P->size, P->line, P->nsets);
    P->res->icache_runs = P->o->nruns;
    for (size_t g = 0; g < nb; g++)
        P->addr[g] = UINT64_MAX;
}

/* Procedure i into the plan at *off, with its note and its fetch cost
 * before and after. */
static bool emit_proc(planner *P, uint32_t i, uint64_t *off)
{
    const cfg_proc *p = &P->prog->procs[i];
    const est_proc_freq *fp = &P->f->procs[i];
    const opt_proc_layout *Lp = &P->L[i];
    opt_result *res = P->res;
    uint32_t nl = 0, line = P->line;
    memset(P->heat, 0, P->nheat * sizeof *P->heat);
    line_heat(p, fp, Lp, line, P->heat, &nl);
    *off = proc_start(P, i, *off);
    place_hot(P, i, *off);
    plan_proc *pp = plan_add_proc(P->pl, p->start, proc_align(P, i));
    if (!pp)
        return false;
    pp->gap = P->gap[i] * line;
    opt_proc_note *nt = &res->notes[res->nnotes++];
    nt->proc = i;
    nt->insns = P->pi[i].insns;
    nt->action = (p->flags & CFG_PF_MISSING) ? OPT_MOVED : OPT_CHAINED;
    nt->why = (p->flags & CFG_PF_MISSING) ? "control flow not fully known: moved whole" : NULL;
    nt->hot_bytes = hot_bytes(p, Lp, &nt->cold_bytes);
    nt->kept_bytes = Lp->kept_bytes;
    bool ok = true;
    for (uint32_t l = 0; ok && l < nl; l++)
        if (P->heat[l] > 0)
            ok = add_lines(&P->after, *off + (uint64_t)l * line, *off + (uint64_t)l * line + 1, line,
                           P->heat[l]);
    *off += nt->hot_bytes;
    for (size_t b = 0; ok && b < Lp->n; b++) {
        if (b == Lp->split)
            plan_set_split(pp);
        ok = plan_add_block(pp, p->blocks[Lp->order[b]].start, Lp->align[b]);
        nt->aligned += Lp->align[b] != 0;
    }
    uint32_t *orig = ok ? malloc(p->nblocks * sizeof *orig) : NULL;
    if (!orig)
        return false;
    for (uint32_t b = 0; b < p->nblocks; b++)
        orig[b] = b;
    size_t hn = Lp->split == PLAN_NOSPLIT ? Lp->n : Lp->split;
    nt->cost_before = opt_fetch_cost(p, fp, orig, p->nblocks, P->ev5);
    nt->cost_after = opt_fetch_cost(p, fp, Lp->order, hn, P->ev5) +
                     opt_fetch_cost(p, fp, Lp->order + hn, Lp->n - hn, P->ev5);
    free(orig);
    res->bubbles_before += nt->cost_before;
    res->bubbles_after += nt->cost_after;
    return true;
}

/* Hints: the rewriter points each JMP/JSR's hint field at the new address
 * of its most frequent target; the EV5 predicts from it.  Each is counted
 * in its procedure's note too. */
static bool add_hints(planner *P)
{
    const cfg_program *prog = P->prog;
    const opt_options *o = P->o;
    opt_result *res = P->res;
    uint32_t *note_of = malloc((prog->nprocs ? prog->nprocs : 1) * sizeof *note_of);
    bool ok = note_of != NULL;
    for (size_t i = 0; ok && i < prog->nprocs; i++)
        note_of[i] = UINT32_MAX;
    for (size_t k = 0; ok && k < res->nnotes; k++)
        note_of[res->notes[k].proc] = (uint32_t)k;
    for (size_t k = 0; ok && k < o->njumps; k++) {
        const cfg_proc *p = cfg_proc_at(prog, o->jumps[k].pc);
        if (!p || !cfg_proc_at(prog, o->jumps[k].target) || o->jumps[k].count <= 0)
            continue;
        ok = plan_add_hint(P->pl, o->jumps[k].pc, o->jumps[k].target);
        res->hints++;
        if (note_of[p - prog->procs] != UINT32_MAX)
            res->notes[note_of[p - prog->procs]].hints++;
    }
    for (size_t k = 0; ok && k < P->nran; k++) {
        uint32_t i = P->ran[k];
        size_t h = 0;
        ok = table_hints(&prog->procs[i], &P->f->procs[i], o, P->pl, &h);
        res->hints += h;
        if (note_of[i] != UINT32_MAX)
            res->notes[note_of[i]].hints += (uint32_t)h;
    }
    free(note_of);
    return ok;
}

static void planner_free(planner *P)
{
    for (size_t i = 0; i < P->prog->nprocs && P->L; i++) {
        free(P->L[i].order);
        free(P->L[i].align);
    }
    free(P->L);
    free(P->pi);
    free(P->ran);
    free(P->order);
    free(P->fl);
    free(P->prog_sets);
    free(P->heat);
    free(P->gap);
    free(P->before.v), free(P->before.h);
    free(P->after.v), free(P->after.h);
    free(P->addr), free(P->size);
    opt_trace_free(&P->trace);
}

bool opt_plan(const cfg_program *prog, const est_freq *f, const opt_options *o, plan *pl,
              opt_result *res, char *err, size_t errlen)
{
    ev5_params defp;
    const ev5_params *ev5 = o->ev5;
    if (!ev5) {
        ev5_defaults(&defp);
        ev5 = &defp;
    }
    plan_init(pl);
    pl->name = "optimizer";
    memset(res, 0, sizeof *res);
    size_t np = prog->nprocs;
    planner P = { .prog = prog, .f = f, .o = o, .ev5 = ev5, .pl = pl, .res = res,
                  .line = ev5->icache.line, .nsets = ev5->icache.size / ev5->icache.line };
    P.pi = calloc(np + 1, sizeof *P.pi);
    P.ran = malloc((np + 1) * sizeof *P.ran);
    P.L = calloc(np + 1, sizeof *P.L);
    P.fl = calloc(np + 1, sizeof *P.fl);
    P.prog_sets = calloc(P.nsets, sizeof *P.prog_sets);
    P.gap = calloc(np + 1, sizeof *P.gap);
    res->notes = calloc(np + 1, sizeof *res->notes);
    bool ok = P.pi && P.ran && P.L && P.fl && P.prog_sets && P.gap && res->notes &&
              chain_all(&P);
    if (ok && !(P.order = order_procs(prog, f, P.pi, P.ran, P.nran, o, res->insns, ev5->icache.size)))
        ok = false;
    for (uint32_t k = 0; o->shared_heat && k < P.nsets; k++) {
        res->shared_heat += o->shared_heat[k];
        res->shared_sets += o->shared_heat[k] > 0;
    }
    P.hot_share = res->insns * OPT_HOT_SHARE;
    res->icache_before = res->icache_after = -1;
    if (ok)
        model_before(&P);
    uint64_t off = 0;
    if (ok && o->gaps && !o->no_order)
        ok = space_procs(&P);
    if (ok && !o->no_colour && o->shared_heat)
        off = colour_shift(&P, &ok);
    for (size_t k = 0; ok && k < P.nran; k++)
        ok = emit_proc(&P, P.order[k], &off);
    if (ok && P.addr) {
        place_cold(&P, off);
        res->icache_after = opt_trace_misses(&P.trace, P.addr, P.size, P.line, P.nsets);
    }
    ok = ok && add_hints(&P);
    for (size_t i = 0; ok && i < np; i++)
        if (P.pi[i].insns <= 0) {
            opt_proc_note *nt = &res->notes[res->nnotes++];
            nt->proc = (uint32_t)i;
            nt->action = OPT_COLD;
            nt->why = "never ran";
        }
    if (ok)
        ok = count_lines(&P.before, o->shared_heat, P.nsets, 0, &res->hot_lines_before,
                         &res->conflict_before) &&
             count_lines(&P.after, o->shared_heat, P.nsets, o->code_phase / P.line,
                         &res->hot_lines_after, &res->conflict_after);
    planner_free(&P);
    if (!ok) {
        snprintf(err, errlen, "optimizer: out of memory");
        plan_free(pl);
        opt_result_free(res);
    }
    return ok;
}

void opt_result_free(opt_result *res)
{
    free(res->notes);
    memset(res, 0, sizeof *res);
}

static const char *action_name(unsigned a)
{
    static const char *const names[] = { "cold", "moved", "chained", "pinned" };
    return a < 4 ? names[a] : "?";
}

void opt_report(FILE *out, const cfg_program *prog, const opt_result *r)
{
    size_t ran = 0, split = 0, aligned = 0;
    uint64_t hot = 0;
    for (size_t k = 0; k < r->nnotes; k++) {
        const opt_proc_note *n = &r->notes[k];
        ran += n->action != OPT_COLD;
        split += n->cold_bytes != 0;
        aligned += n->aligned;
        hot += n->hot_bytes;
    }
    fprintf(out, "# cpo optimizer report\n");
    fprintf(out, "procedures: %zu, %zu ran; %zu split; %zu blocks aligned\n", prog->nprocs, ran,
            split, aligned);
    fprintf(out, "hot code: %llu bytes; I-cache lines it touches: %llu before, %llu after\n",
            (unsigned long long)hot, (unsigned long long)r->hot_lines_before,
            (unsigned long long)r->hot_lines_after);
    fprintf(out, "I-cache conflict measure (executions sharing a set, shared libraries included): "
            "%.0f before, %.0f after; %zu never-run procedures (%llu bytes) placed as fillers\n",
            r->conflict_before, r->conflict_after, r->fillers, (unsigned long long)r->filler_bytes);
    fprintf(out, "gaps: %zu hot procedures moved off the sets of their callers and callees "
            "(%llu bytes of nops); their conflict measure %.0f without the gaps, %.0f with\n",
            r->gaps, (unsigned long long)r->gap_bytes, r->pair_conflict_before,
            r->pair_conflict_after);
    fprintf(out, "unsampled handlers kept hot: %zu blocks (%llu bytes) in %zu procedures\n",
            r->kept_blocks, (unsigned long long)r->kept_bytes, r->kept_procs);
    fprintf(out, "shared libraries' code: %.0f executions on %u I-cache sets\n", r->shared_heat,
            r->shared_sets);
    fprintf(out, "jump hints: %zu\n", r->hints);
    char runs[48] = "one walk of the sum";
    if (r->icache_runs == 1)
        snprintf(runs, sizeof runs, "one run");
    else if (r->icache_runs)
        snprintf(runs, sizeof runs, "%zu runs apart", r->icache_runs);
    if (r->icache_before >= 0 && r->icache_after >= 0)
        fprintf(out, "predicted I-cache misses (a walk drawn from the estimates, %s, shared "
                "libraries included): %.0f before, %.0f after (%.1f%% fewer)\n", runs,
                r->icache_before, r->icache_after,
                r->icache_before > 0 ? 100 * (1 - r->icache_after / r->icache_before) : 0);
    fprintf(out, "predicted taken-branch cycles: %.0f before, %.0f after (%.0f saved, %.2f%% of "
            "%.0f instructions)\n", r->bubbles_before, r->bubbles_after,
            r->bubbles_before - r->bubbles_after,
            r->insns > 0 ? 100 * (r->bubbles_before - r->bubbles_after) / r->insns : 0, r->insns);
    fprintf(out, "# order action insns%% hot-bytes cold-bytes aligned hints cycles-before cycles-after name [why]\n");
    for (size_t k = 0; k < r->nnotes; k++) {
        const opt_proc_note *n = &r->notes[k];
        if (n->action == OPT_COLD)
            continue;
        const cfg_proc *p = &prog->procs[n->proc];
        fprintf(out, "%zu %s %.3f %u %u %u %u %.0f %.0f %s", k, action_name(n->action),
                r->insns > 0 ? 100 * n->insns / r->insns : 0, n->hot_bytes, n->cold_bytes,
                n->aligned, n->hints, n->cost_before, n->cost_after, p->name ? p->name : "?");
        if (n->why)
            fprintf(out, " # %s", n->why);
        else if (n->kept_bytes)
            fprintf(out, " # %u bytes of handlers no sample hit kept hot", n->kept_bytes);
        fputc('\n', out);
    }
    fprintf(out, "# %zu procedures never ran: left in address order after the hot code\n",
            prog->nprocs - ran);
}
