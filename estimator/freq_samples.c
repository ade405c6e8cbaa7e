/*
 * estimator/freq_samples.c: block and edge frequencies from cycle samples
 * (seed 000, §6.1), made flow-consistent at least cost (freq_flow.c).
 *
 * A cycle sample lands on the instruction at the head of the issue queue,
 * so an instruction that ran F times and spent M cycles there each time
 * when nothing dynamic held it up collects about F * M / P samples at a
 * period of P, more when it stalled.  Every instruction of a frequency
 * class runs equally often, so the smaller ratios S/M of the class's issue
 * points (M > 0) say what F is; the larger ones are stalls.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/sched.h"
#include "estimator/freq.h"
#include "estimator/freq_internal.h"

/* Tuning, each a rule of the paper's made concrete (docs/estimator.md). */
#define FEW_SAMPLES   24     /* a class with fewer: F = sum S / sum M */
#define CLUSTER_SPAN  1.5    /* a cluster's largest ratio over its smallest */
#define MIN_SHARE     0.2    /* a cluster needs this share of the class's M */
#define NOISE_SIGMAS  2.0    /* within sampling noise: this many deviations */
#define CAP_SIGMAS    2.0    /* a block's cap allows this many deviations */
#define QUIET_SAMPLES 30     /* quiet points need this many to decide alone */
#define WIDE_POINT    4.0    /* a point expecting this many times the samples
                                behind F is judged with F's spread too */

typedef struct point {
    double s, m;             /* samples and M over the point's run */
    double ratio;
    bool quiet;              /* no dynamic stall can reach its run */
} point;

typedef struct cls {
    point *pts;
    size_t n, cap;
    double s, m;             /* totals over the class's instructions */
} cls;

static int by_ratio(const void *a, const void *b)
{
    double x = ((const point *)a)->ratio, y = ((const point *)b)->ratio;
    return x < y ? -1 : x > y;
}

static bool add_point(cls *c, double s, double m, bool quiet)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        point *np = realloc(c->pts, cap * sizeof *np);
        if (!np)
            return false;
        c->pts = np;
        c->cap = cap;
    }
    c->pts[c->n++] = (point){ s, m, s / m, quiet };
    return true;
}

/* Samples at an address: addr[] ascending. */
static double samples_at(const est_sample_col *col, uint64_t a)
{
    size_t lo = 0, hi = col->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (col->addr[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < col->n && col->addr[lo] == a ? col->samples[lo] : 0;
}

/* Schedules block b and adds its issue points to its class.  An issue
 * point that waited on an earlier instruction j of the block takes the
 * ratio over j+1..i: a dynamic stall between them shortens i's own wait
 * but not the whole run's (§6.1.3). */
/* Schedules the n words at pc after ctx instructions of the code before
 * them (the block's only predecessor, falling through into it), so that
 * the first instructions' M_i count the issue groups they really join. */
static bool schedule(const cfg_program *prog, const alpha_sched *sch, const uint32_t *words, uint32_t n,
                     uint64_t pc, uint32_t ctx, alpha_sched_slot *out)
{
    if (!ctx)
        return alpha_sched_words(sch, words, n, pc, out) > 0;
    uint32_t *w = malloc((ctx + n) * sizeof *w);
    alpha_sched_slot *sl = malloc((ctx + n) * sizeof *sl);
    bool ok = w && sl;
    for (uint32_t i = 0; ok && i < ctx; i++)
        if (!cfg_word(prog, pc - 4 * (ctx - i), &w[i]))
            w[i] = 0;
    if (ok) {
        memcpy(w + ctx, words, n * sizeof *w);
        ok = alpha_sched_words(sch, w, ctx + n, pc - 4 * ctx, sl) > 0;
    }
    if (ok) {
        memcpy(out, sl + ctx, n * sizeof *out);
        /* Culprits are indices into the block: one before it is none. */
        for (uint32_t i = 0; i < n; i++)
            out[i].culprit = out[i].culprit >= (int32_t)ctx ? out[i].culprit - (int32_t)ctx : -1;
    }
    free(w);
    free(sl);
    return ok;
}

/* As schedule(), but a call inside the block ends a run: the instruction
 * after it issues when the callee returns, in a fetch of its own, never in
 * the call's issue group (the scheduler takes a branch before the end as
 * falling through).  Without the cut the return point joined the call's
 * group and the next instruction, which issues with it, counted a cycle
 * of its own: a point with no samples that pulled sqlite3VdbeExec's
 * handlers that call out to a count of 0. */
static bool schedule_runs(const cfg_program *prog, const alpha_sched *sch, const uint32_t *words,
                          uint32_t n, uint64_t pc, uint32_t ctx, alpha_sched_slot *out)
{
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; i++) {
        alpha_insn in;
        alpha_decode(words[i], &in);
        if (i + 1 < n && !(in.op && in.op->flow == FLOW_CALL))
            continue;
        if (!schedule(prog, sch, words + s, i + 1 - s, pc + 4ull * s, s ? 0 : ctx, out + s))
            return false;
        for (uint32_t k = s; k <= i; k++)
            if (out[k].culprit >= 0)
                out[k].culprit += (int32_t)s;
        s = i + 1;
    }
    return true;
}

/* The kernel's time in a system call passes with the instruction after
 * the callsys at the head: the model's cost of a call at least, more when
 * the call takes longer (so that instruction is not quiet).  The cycles
 * instruction k of the block at pc holds the head for a call, or 0. */
static double syscall_m(const cfg_program *prog, const alpha_sched *sch, uint64_t pc, uint32_t k)
{
    uint32_t w;
    alpha_insn in;
    if (!k || !cfg_word(prog, pc + 4 * ((uint64_t)k - 1), &w))
        return 0;
    alpha_decode(w, &in);
    if (!in.op || in.op->flow != FLOW_PAL || in.op->func != PAL_CALLSYS)
        return 0;
    return alpha_sched_params(sch)->syscall_cycles;
}

static bool block_points(const cfg_program *prog, const alpha_sched *sch, const est_sample_col *col,
                         const cfg_block *b, uint32_t ctx, uint32_t alt, cls *c, est_block_sched *bs,
                         double *mmin)
{
    uint32_t n = (uint32_t)((b->end - b->start) / 4);
    bs->n = n;
    bs->slots = calloc(n ? n : 1, sizeof *bs->slots);
    bs->samples = calloc(n ? n : 1, sizeof *bs->samples);
    uint32_t *words = malloc((n ? n : 1) * sizeof *words);
    if (!bs->slots || !bs->samples || !words) {
        free(words);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!cfg_word(prog, b->start + 4 * i, &words[i]))
            words[i] = 0;
        bs->samples[i] = samples_at(col, b->start + 4 * i);
    }
    bool ok = !n || schedule_runs(prog, sch, words, n, b->start, ctx, bs->slots);
    uint8_t *quiet = ok ? malloc(n ? n : 1) : NULL;
    if (quiet)
        est_quiet(words, n, b->start, alpha_sched_params(sch)->icache.line, bs->slots, quiet);
    /* A block entered both by falling through and by a jump: where the two
     * ways in schedule its first instructions differently, their M_i is
     * not known, and they are no measure. */
    double m1 = 0, m2 = 0;
    for (uint32_t i = 0; i < n; i++)
        m1 += bs->slots[i].m;
    *mmin = m1;
    alpha_sched_slot *other = quiet && n && alt != ctx ? malloc(n * sizeof *other) : NULL;
    if (other) {
        if (schedule_runs(prog, sch, words, n, b->start, alt, other)) {
            for (uint32_t i = 0; i < n; i++) {
                if (other[i].m != bs->slots[i].m)
                    quiet[i] = 0;
                m2 += other[i].m;
            }
            if (m2 < m1)
                *mmin = m2;
        }
        free(other);
    }
    free(words);
    if (!quiet)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const alpha_sched_slot *sl = &bs->slots[i];
        c->s += bs->samples[i];
        c->m += sl->m;
        if (!sl->m)
            continue;
        double sys = syscall_m(prog, sch, b->start, i);
        double s = bs->samples[i], m = sl->m + sys;
        bool q = quiet[i] && !sys;
        if (sl->culprit >= 0 && (uint32_t)sl->culprit + 1 < i && sl->stall) {
            s = m = 0;
            for (uint32_t k = (uint32_t)sl->culprit + 1; k <= i; k++) {
                sys = syscall_m(prog, sch, b->start, k);
                s += bs->samples[k];
                m += bs->slots[k].m + sys;
                q = q && quiet[k] && !sys;
            }
        }
        if (m > 0 && !add_point(c, s, m, q)) {
            free(quiet);
            return false;
        }
    }
    free(quiet);
    return true;
}

/* From a first estimate f, the issue points whose samples are what f
 * predicts within sampling noise (Poisson: two standard deviations) are
 * the ones no dynamic stall held up; their ratio is the better estimate.
 * Points far below the prediction are left out too: their M_i is wrong
 * (the instruction issued with one the schedule did not see).
 * Repeated to a fixed point.  Choosing the smallest ratios alone would
 * pick the points that noise pushed down, and so underestimate.
 * *sbehind: the samples behind f, then behind the result.  A point that
 * expects many times more samples than stand behind f (the one after a
 * system call: hundreds of cycles at the head per execution) is judged
 * with f's own spread as well as its own, or f's noise alone would keep
 * out the point that knows F best. */
static double refine(const cls *c, double f, size_t *nclean, double *sbehind)
{
    for (int iter = 0; iter < 30; iter++) {
        double s = 0, m = 0;
        size_t n = 0;
        for (size_t i = 0; i < c->n; i++) {
            double expect = f * c->pts[i].m, var = expect;
            if (expect > WIDE_POINT * *sbehind && *sbehind > 0)
                var += expect * expect / *sbehind;
            if (fabs(c->pts[i].s - expect) <= NOISE_SIGMAS * sqrt(var) + 1) {
                s += c->pts[i].s;
                m += c->pts[i].m;
                n++;
            }
        }
        if (!n || m <= 0)
            break;
        *nclean = n;
        *sbehind = s;
        double nf = s / m;
        if (fabs(nf - f) <= 1e-9 * (f > 0 ? f : 1))
            return nf;
        f = nf;
    }
    return f;
}

/* F for one class, in samples per cycle at the head (multiply by the
 * period for executions), and its confidence; false when the class has
 * no issue point to go by. */
static bool class_estimate(cls *c, double *f, uint8_t *conf, uint8_t *upper)
{
    *upper = 0;
    if (!c->n || c->m <= 0)
        return false;
    /* Quiet points, when they have samples enough, say what F is; the
     * others that agree with them within noise join in. */
    double qs = 0, qm = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->pts[i].quiet)
            qs += c->pts[i].s, qm += c->pts[i].m;
    if (qm > 0 && qs >= QUIET_SAMPLES) {
        size_t np = 0;
        double sb = qs;
        *f = refine(c, qs / qm, &np, &sb);
        *conf = qs >= 100 ? EST_CONF_HIGH : EST_CONF_MEDIUM;
        return true;
    }
    if (c->s < FEW_SAMPLES) {
        *f = c->s / c->m;
        *conf = c->s >= FEW_SAMPLES / 3 && c->n >= 3 ? EST_CONF_MEDIUM : EST_CONF_LOW;
        *upper = 1;
        return true;
    }
    qsort(c->pts, c->n, sizeof *c->pts, by_ratio);
    double mtot = 0;
    size_t np = 0;
    for (size_t i = 0; i < c->n; i++)
        mtot += c->pts[i].m;
    /* The first cluster of small ratios that holds enough of the class's
     * issue cycles; a lone small ratio is noise more often than truth. */
    for (size_t a = 0; a < c->n; a++) {
        double lo = c->pts[a].ratio, s = 0, m = 0;
        size_t k = a;
        for (; k < c->n && c->pts[k].ratio <= CLUSTER_SPAN * lo + 1e-12; k++) {
            s += c->pts[k].s;
            m += c->pts[k].m;
        }
        /* A cluster of zero ratios only counts when it is most of the class. */
        if (m < MIN_SHARE * mtot || (lo == 0 && m < 0.5 * mtot))
            continue;
        double sb = s;
        *f = refine(c, s / m, &np, &sb);
        *conf = np >= 3 && s >= 100 ? EST_CONF_HIGH : np >= 2 && s >= 20 ? EST_CONF_MEDIUM : EST_CONF_LOW;
        *upper = 1;
        return true;
    }
    *f = c->s / c->m;
    *conf = EST_CONF_LOW;
    *upper = 1;
    return true;
}

static void est_sched_free(est_proc_sched *ps)
{
    if (!ps)
        return;
    for (size_t b = 0; b < ps->nblocks; b++) {
        free(ps->blocks[b].slots);
        free(ps->blocks[b].samples);
    }
    free(ps->blocks);
    ps->blocks = NULL;
}

/* Instructions of the block before b to schedule with it when b is
 * entered by falling through from it: up to 16; 0 when b has no such
 * way in.  *only: falling through is b's only way in. */
static uint32_t fall_context(const cfg_proc *f, size_t b, bool *only)
{
    const cfg_block *bl = &f->blocks[b];
    *only = false;
    if (!b || f->blocks[b - 1].end != bl->start)
        return 0;
    bool fall = false;
    for (uint32_t k = 0; k < bl->nin; k++) {
        const cfg_edge *e = &f->edges[f->in_edges[bl->first_in + k]];
        fall |= e->kind == CFG_EDGE_FALL && e->from == b - 1;
    }
    if (!fall)
        return 0;
    *only = bl->nin == 1;
    uint64_t len = (bl->start - f->blocks[b - 1].start) / 4;
    return len > 16 ? 16 : (uint32_t)len;
}

/* The cycle samples on block b's instructions. */
static double sched_samples(const est_block_sched *bs)
{
    double s = 0;
    for (uint32_t i = 0; i < bs->n; i++)
        s += bs->samples[i];
    return s;
}

/* The most executions block b's s samples allow: each execution spends at
 * least mmin cycles at the head (the fewer of its schedules after a jump
 * and after falling in), so F mmin / P samples at least, give or take
 * Poisson noise (two deviations, and 3 when none were seen: the 95%
 * bound of a Poisson mean with no events). */
static double block_cap(double s, double mmin, double period)
{
    if (mmin <= 0)
        return INFINITY;
    return (s + CAP_SIGMAS * sqrt(s) + 3) * period / mmin;
}

/* One procedure: class estimates, local propagation, then the flow. */
static bool estimate_proc(const cfg_program *prog, const alpha_sched *sch, const est_sample_col *col,
                          double period, const cfg_proc *f, est_proc_freq *q, est_proc_sched *ps)
{
    bool ok = false;
    uint32_t ncls = f->nclasses;
    cls *cl = calloc(ncls + 1, sizeof *cl);
    double *cf = calloc(ncls + 1, sizeof *cf);
    uint8_t *cc = calloc(ncls + 1, 1), *known = calloc(ncls + 1, 1), *cu = calloc(ncls + 1, 1);
    ps->nblocks = f->nblocks;
    ps->blocks = calloc(f->nblocks + 1, sizeof *ps->blocks);
    if (!cl || !cf || !cc || !cu || !known || !ps->blocks)
        goto out;
    bool missing = f->flags & CFG_PF_MISSING;
    for (size_t b = 0; b < f->nblocks; b++) {
        /* A CFG missing edges has no trustworthy classes: each block alone. */
        uint32_t k = f->blocks[b].eqclass;
        cls tmp = { 0 };
        cls *c = missing || k >= ncls ? &tmp : &cl[k];
        bool only;
        uint32_t ctx = fall_context(f, b, &only);
        double mmin;
        if (!block_points(prog, sch, col, &f->blocks[b], only ? ctx : 0, ctx, c, &ps->blocks[b],
                          &mmin)) {
            free(tmp.pts);
            goto out;
        }
        q->block_cap[b] = block_cap(sched_samples(&ps->blocks[b]), mmin, period);
        q->samples += c == &tmp ? tmp.s : 0;
        if (c == &tmp) {
            double fb;
            uint8_t conf;
            uint8_t up;
            if (class_estimate(&tmp, &fb, &conf, &up)) {
                q->block[b] = fb * period;
                q->block_conf[b] = conf;
                q->block_upper[b] = up;
                q->block_from[b] = EST_FROM_SAMPLES;
            }
            free(tmp.pts);
        }
    }
    for (uint32_t k = 0; k < ncls; k++) {
        q->samples += cl[k].s;
        if (!missing && class_estimate(&cl[k], &cf[k], &cc[k], &cu[k]))
            known[k] = 1;
    }
    if (!missing) {
        for (size_t b = 0; b < f->nblocks; b++) {
            uint32_t k = f->blocks[b].eqclass;
            if (k < ncls && known[k]) {
                q->block[b] = cf[k] * period;
                q->block_conf[b] = cc[k];
                q->block_upper[b] = cu[k];
                q->block_from[b] = EST_FROM_SAMPLES;
            }
        }
        for (size_t e = 0; e < f->nedges; e++) {
            uint32_t k = f->edges[e].eqclass;
            if (k < ncls && known[k]) {
                q->edge[e] = cf[k] * period;
                q->edge_conf[e] = cc[k];
                q->edge_upper[e] = cu[k];
                q->edge_from[e] = EST_FROM_SAMPLES;
            }
        }
    }
    est_propagate(f, q);
    ok = est_flow_solve(f, q);
out:
    for (uint32_t k = 0; cl && k < ncls; k++)
        free(cl[k].pts);
    free(cl);
    free(cf);
    free(cc);
    free(cu);
    free(known);
    return ok;
}

est_freq *est_freq_from_samples(const cfg_program *cfg, const est_sample_col *col, double period,
                                const struct ev5_params *ev5, est_sched **scheds, char *err, size_t errlen)
{
    ev5_params def;
    if (!ev5) {
        ev5_defaults(&def);
        ev5 = &def;
    }
    if (!(period > 0)) {
        snprintf(err, errlen, "%s: the profile has no sampling period", cfg->img->path);
        return NULL;
    }
    alpha_sched *sch = alpha_sched_new(ev5, err, errlen);
    if (!sch)
        return NULL;
    est_freq *f = est_freq_new(cfg);
    est_sched *sc = calloc(1, sizeof *sc);
    if (sc)
        sc->procs = calloc(cfg->nprocs + 1, sizeof *sc->procs);
    bool ok = f && sc && sc->procs;
    if (sc)
        sc->nprocs = cfg->nprocs;
    for (size_t p = 0; ok && p < cfg->nprocs; p++)
        ok = estimate_proc(cfg, sch, col, period, &cfg->procs[p], &f->procs[p], &sc->procs[p]);
    alpha_sched_free(sch);
    if (!ok) {
        snprintf(err, errlen, "out of memory estimating frequencies of %s", cfg->img->path);
        est_freq_free(f);
        est_sched_free_all(sc);
        return NULL;
    }
    if (scheds)
        *scheds = sc;
    else
        est_sched_free_all(sc);
    return f;
}

void est_sched_free_all(est_sched *sc)
{
    if (!sc)
        return;
    for (size_t p = 0; sc->procs && p < sc->nprocs; p++)
        est_sched_free(&sc->procs[p]);
    free(sc->procs);
    free(sc);
}
