/*
 * machine/cycles_pm.c: ProfileMe's share of the cycle model (cycles.h).
 *
 * The hardware of the paper counts fetched instructions down from a
 * random value and tags the one it reaches zero at; the tag travels with
 * the instruction and its record is delivered when it is done.  Here the
 * countdown runs over the instructions fed to the model (in an in-order
 * model that fetches no wrong path, those fetched are those retired), a
 * block holding a tagged instruction goes through the model one
 * instruction at a time (cycles.c), and what the model decided for the
 * tagged one becomes its record.  Paired sampling tags a second
 * instruction 1..window fetched instructions after the first, drawn
 * uniformly (the paper's nested sampling); the pair is delivered once
 * both are done, each record saying whether its partner issued while it
 * was in progress (useful overlap, from its fetch to its result).
 */
#include <stdlib.h>
#include <string.h>

#include "machine/cycles_int.h"

static uint32_t between(uint64_t *rng, uint32_t lo, uint32_t hi)
{
    /* xorshift64*, as the PMU's periods */
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    uint64_t r = *rng * 0x2545f4914f6cdd1dULL;
    return lo + (uint32_t)((r >> 32) % ((uint64_t)hi - lo + 1));
}

void cycles_set_profileme(cycles_core *c, const cycles_pm_config *cfg,
                          void (*fn)(void *ctx, const cycles_pm *r, int n), void *ctx)
{
    pm_state *s = &c->pm;
    if (!cfg || !fn)
        return;
    s->on = s->sampling = true;
    s->cfg = *cfg;
    s->fn = fn;
    s->ctx = ctx;
    s->rng = (cfg->seed + 3) * 0x9e3779b97f4a7c15ULL ^ 0xd6e8feb86659fd93ULL;
    if (!s->rng)
        s->rng = 1;
    s->left = between(&s->rng, cfg->lo, cfg->hi);
}

void cycles_pm_get_stats(const cycles_core *c, cycles_pm_stats *out)
{
    *out = c->pm.st;
}

bool pm_due(cycles_core *c, uint32_t n)
{
    pm_state *s = &c->pm;
    if (!s->sampling)
        return s->truth != NULL;
    if (s->left <= n || (s->left2 && s->left2 <= n) || s->truth)
        return true;
    s->left -= n;
    if (s->left2)
        s->left2 -= n;
    return false;
}

void pm_history(cycles_core *c, const cycles_insn *last, uint64_t last_pc, uint64_t next_pc)
{
    pm_state *s = &c->pm;
    if (c->ops[last->op].kind != K_CBR)
        return;
    s->hist = (uint16_t)(s->hist << 1 | (next_pc != last_pc + 4));
    if (s->hist_len < 16)
        s->hist_len++;
}

static void pm_path_out(cycles_core *c, const cycles_pm *r);

/* b issued while a was in progress: from the cycle a's fetch block could
 * issue up to, not including, the cycle a's result is ready; the cycles
 * the paper's issue slots count for a are the same ones. */
static bool overlaps(const cycles_pm *a, const cycles_pm *b)
{
    return b->issue >= a->fetch && b->issue < a->ready;
}

void pm_tagged(cycles_core *c, cycles_pm *r, bool first, bool second)
{
    pm_state *s = &c->pm;
    s->st.tagged++;
    r->hist = s->hist;
    r->hist_len = s->hist_len;
    if (s->paths)
        pm_path_out(c, r);
    if (second) {
        cycles_pm pair[2] = { s->first, *r };
        pair[1].flags |= CPM_PAIRED;
        pair[1].window = s->cfg.window;
        pair[1].distance = s->distance;
        if (overlaps(&pair[0], &pair[1]))
            pair[0].flags |= CPM_USEFUL;
        if (overlaps(&pair[1], &pair[0]))
            pair[1].flags |= CPM_USEFUL;
        s->st.records += 2;
        s->st.pairs++;
        s->fn(s->ctx, pair, 2);
    }
    if (!first)
        return;
    s->left = between(&s->rng, s->cfg.lo, s->cfg.hi);
    if (!s->cfg.window) {
        s->st.records++;
        s->fn(s->ctx, r, 1);
        return;
    }
    /* (the parser keeps the window below the shortest interval, so a
     * pair is done before the next one starts) */
    s->first = *r;
    s->first.flags |= CPM_PAIRED;
    s->first.window = s->cfg.window;
    s->distance = between(&s->rng, 1, s->cfg.window);
    s->left2 = s->distance;
}

/* ---- the truth of the wasted issue slots ------------------------------------- */

void cycles_set_pm_truth(cycles_core *c, void (*fn)(void *ctx, uint64_t pc, uint64_t slots, uint64_t used),
                         void *ctx)
{
    pm_state *s = &c->pm;
    s->truth = fn;
    s->truth_ctx = ctx;
    if (fn)
        s->on = true;
}

static void truth_close(cycles_core *c, const pm_open *o)
{
    c->pm.truth(c->pm.truth_ctx, o->pc, (uint64_t)c->p.issue_width * (o->ready - o->fetch), o->used);
}

void pm_truth_step(cycles_core *c, uint64_t pc, uint64_t fetch, uint64_t issue, uint64_t ready)
{
    pm_state *s = &c->pm;
    /* later: this one issued in the time of each still open before it */
    size_t k = 0;
    for (size_t i = 0; i < s->nopen; i++) {
        if (issue < s->open[i].ready) {
            s->open[i].used++;
            s->open[k++] = s->open[i];
        } else {
            truth_close(c, &s->open[i]);
        }
    }
    s->nopen = k;
    /* earlier: those that issued from its fetch on (in order: the newest first) */
    pm_open o = { pc, fetch, ready, 0 };
    for (uint32_t j = s->nrecent; j > 0 && s->nrecent - j < PMT_RECENT; j--) {
        if (s->recent[(j - 1) % PMT_RECENT] < fetch)
            break;
        o.used++;
    }
    s->recent[s->nrecent++ % PMT_RECENT] = issue;
    if (ready <= issue) {
        truth_close(c, &o);
        return;
    }
    if (s->nopen == s->copen) {
        size_t cap = s->copen ? 2 * s->copen : 64;
        pm_open *n = realloc(s->open, cap * sizeof *n);
        if (!n) {               /* (its figures are lost, not the model's) */
            truth_close(c, &o);
            return;
        }
        s->open = n;
        s->copen = cap;
    }
    s->open[s->nopen++] = o;
}

void cycles_pm_truth_flush(cycles_core *c)
{
    pm_state *s = &c->pm;
    for (size_t i = 0; s->truth && i < s->nopen; i++)
        truth_close(c, &s->open[i]);
    s->nopen = 0;
}

/* ---- the true paths behind the histories -------------------------------------- */

void cycles_set_pm_paths(cycles_core *c, void (*fn)(void *ctx, const cycles_pm *r, const cycles_run *run, uint32_t n),
                         void *ctx)
{
    c->pm.paths = fn;
    c->pm.paths_ctx = ctx;
}

/* A block went through the model: a run of its own, or the newest run
 * grown when control fell through into it (a block cut short, a
 * conditional branch not taken), so runs are maximal. */
void pm_run(cycles_core *c, uint64_t pc, uint32_t n, bool cbr)
{
    pm_state *s = &c->pm;
    cycles_run *r = s->nruns ? &s->runs[(s->nruns - 1) % CYCLES_RUNS] : NULL;
    if (!r || r->end != pc) {
        r = &s->runs[s->nruns++ % CYCLES_RUNS];
        r->start = pc;
        r->cbr = 0;
    }
    r->end = pc + 4 * (uint64_t)n;
    r->cbr += cbr;
}

/* The runs that led to a tagged instruction, newest first (cycles.h). */
static void pm_path_out(cycles_core *c, const cycles_pm *r)
{
    pm_state *s = &c->pm;
    cycles_run out[CYCLES_RUNS + 1];
    uint32_t n = 1, cbr = 0;
    uint64_t k = s->nruns, oldest = s->nruns > CYCLES_RUNS ? s->nruns - CYCLES_RUNS : 0;
    out[0] = (cycles_run){ s->block_start, r->pc + 4, 0 };
    if (k > oldest && s->runs[(k - 1) % CYCLES_RUNS].end == out[0].start) {
        /* (its block continues the newest run) */
        out[0].start = s->runs[(k - 1) % CYCLES_RUNS].start;
        cbr = out[0].cbr = s->runs[(k - 1) % CYCLES_RUNS].cbr;
        k--;
    }
    while (cbr < r->hist_len && k > oldest) {
        out[n] = s->runs[--k % CYCLES_RUNS];
        cbr += out[n++].cbr;
    }
    s->paths(s->paths_ctx, r, out, n);
}
