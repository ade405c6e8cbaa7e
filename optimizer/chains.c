/*
 * optimizer/chains.c: the block order of one procedure.
 *
 * Bottom-up chaining (Pettis and Hansen): edges by falling frequency, each
 * joins the chain ending at its source to the chain starting at its target,
 * so the hottest edges become fall-throughs and cost no taken-branch bubble.
 * Blocks glued by a call (the return address is the next block) start out
 * as one chain.  Chains are then placed entry first, then the densest (the
 * most executions per instruction) first; chains that never ran go
 * to the cold area (a block the profile saw run, however rarely, stays in
 * the hot part, after the hot chains, and so do the handlers of a hot
 * dispatch that no sample hit).
 */
#include <stdlib.h>
#include <string.h>

#include "optimizer/internal.h"

typedef struct wedge {
    double w;
    uint32_t from, to;
    uint32_t kind;
} wedge;

static int by_weight(const void *a, const void *b)
{
    const wedge *x = a, *y = b;
    if (x->w != y->w)
        return x->w > y->w ? -1 : 1;
    if (x->kind != y->kind)                 /* a fall-through keeps its place */
        return x->kind == CFG_EDGE_FALL ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Never ran, as far as the profile can tell: from samples that includes
 * code too rare to be sampled.  Keeping such blocks in the hot part, in
 * case, spread every sampled procedure's hot code over more lines and cost
 * more on held-out inputs than the branches to the cold area that an input
 * running them pays (docs/notes/optimizer-samples.md).  Keeping the blocks
 * with samples of their own that the flow set to 0 hot as well cost
 * speedtest1 2.4 points over three trainings
 * (docs/notes/estimator-flow-costs.md). */
static bool sure_cold(const est_proc_freq *fp, uint32_t b)
{
    return fp->block[b] <= 0;
}

static double chain_heat(const est_proc_freq *fp, const uint32_t *next, uint32_t h)
{
    double heat = 0;
    for (uint32_t x = h; x != CFG_NONE; x = next[x])
        if (fp->block[x] > heat)
            heat = fp->block[x];
    return heat;
}

/* Instructions executed per instruction of the chain. */
static double chain_density(const cfg_proc *p, const est_proc_freq *fp, const uint32_t *next,
                            uint32_t h)
{
    double run = 0, size = 0;
    for (uint32_t x = h; x != CFG_NONE; x = next[x]) {
        double n = (double)(p->blocks[x].end - p->blocks[x].start) / 4;
        run += fp->block[x] * n;
        size += n;
    }
    return size > 0 ? run / size : 0;
}

/* Warm, and the estimate sure enough to send it to the cold area. */
static bool warm_sure(const est_proc_freq *fp, const uint32_t *next, uint32_t h)
{
    for (uint32_t x = h; x != CFG_NONE; x = next[x])
        if (fp->block_conf[x] < EST_CONF_HIGH)
            return false;
    return true;
}

/* Marks t and what it reaches by fall-through and branch edges that the
 * estimate calls never run; stack has room for every block. */
static void mark_unrun(const cfg_proc *p, const est_proc_freq *fp, uint32_t t, uint8_t *mark,
                       uint32_t *stack)
{
    size_t sp = 0;
    mark[t] = 1;
    stack[sp++] = t;
    while (sp) {
        const cfg_block *B = &p->blocks[stack[--sp]];
        for (uint32_t m = 0; m < B->nout; m++) {
            const cfg_edge *F = &p->edges[p->out_edges[B->first_out + m]];
            uint32_t v = F->to;
            if (v < p->nblocks && !mark[v] && fp->block[v] <= 0 &&
                (F->kind == CFG_EDGE_FALL || F->kind == CFG_EDGE_TAKEN))
                mark[v] = 1, stack[sp++] = v;
        }
    }
}

/* Blocks the samples never saw that an input other than the profile's
 * likely runs: the handlers of a dispatch.  A jump table's jump picks its
 * target by the program's data (an interpreter's opcodes, a database
 * engine's), so a handler no sample hit ran too rarely to be sampled, and
 * runs as soon as an input uses its case more: measured on lua trained on
 * samples, up to 9% of a held-out script's instructions ran in the cold
 * area, most of them in the interpreter's unsampled handlers, against up
 * to 3.4% from exact counts (docs/notes/optimizer-handlers.md).  The
 * targets of every table jump among its procedure's hot blocks are taken,
 * and from each the blocks it reaches that the estimate also calls never
 * run, up to blocks the estimate saw run.  Taking only the dispatches
 * whose average target would be a hot procedure's worth of work (leaving
 * out a parser's reduce switch, hundreds of rare cases) kept a half to a
 * third as many bytes and measured worse on both workloads, on the four
 * trainings both rules were measured on.  A zero from exact counts is a
 * fact about the training and is left alone.  NULL when nothing is marked
 * (or out of memory: then nothing is). */
static uint8_t *unsampled_handlers(const cfg_proc *p, const est_proc_freq *fp, double hot_from)
{
    size_t nb = p->nblocks;
    uint8_t *mark = NULL;
    uint32_t *stack = NULL;
    for (uint32_t j = 0; j < nb; j++) {
        const cfg_block *J = &p->blocks[j];
        if (!(J->flags & CFG_BF_TABLE) || fp->block[j] <= 0 || fp->block[j] < hot_from)
            continue;
        for (uint32_t k = 0; k < J->nout; k++) {
            const cfg_edge *E = &p->edges[p->out_edges[J->first_out + k]];
            uint32_t t = E->to;
            if (E->kind != CFG_EDGE_TABLE || t >= nb || fp->block[t] > 0 ||
                fp->block_conf[t] == EST_CONF_EXACT || (mark && mark[t]))
                continue;
            if (!mark && (!(mark = calloc(nb, 1)) || !(stack = malloc(nb * sizeof *stack)))) {
                free(mark);
                return NULL;
            }
            mark_unrun(p, fp, t, mark, stack);
        }
    }
    free(stack);
    return mark;
}

/* Chains as linked lists: next[], and for each chain head its tail. */
bool opt_chain_proc(const cfg_proc *p, const est_proc_freq *fp, const opt_options *o,
                    opt_proc_layout *out)
{
    size_t nb = p->nblocks;
    uint32_t *next = malloc(nb * sizeof *next), *head = malloc(nb * sizeof *head);
    uint32_t *tail = malloc(nb * sizeof *tail);
    wedge *ed = malloc((p->nedges + 1) * sizeof *ed);
    uint8_t *placed = calloc(nb, 1);
    out->kept = out->kept_bytes = 0;
    out->order = malloc(nb * sizeof *out->order);
    out->align = calloc(nb, sizeof *out->align);
    bool ok = next && head && tail && ed && placed && out->order && out->align;
    if (!ok)
        goto done;
    for (uint32_t b = 0; b < nb; b++)
        next[b] = CFG_NONE, head[b] = tail[b] = b;
    /* Glue: a block that leaves a return address keeps its successor. */
    for (uint32_t b = 0; b + 1 < nb; b++)
        if (p->blocks[b].flags & CFG_BF_LINKS) {
            uint32_t h = head[b], t = tail[b + 1];
            next[b] = b + 1;
            for (uint32_t x = b + 1; x != CFG_NONE; x = next[x])
                head[x] = h;
            tail[h] = t;
        }
    size_t ne = 0;
    if (o->exttsp && !o->no_chain && !opt_exttsp(p, fp, next, head, tail)) {
        ok = false;
        goto done;
    }
    for (size_t e = 0; e < p->nedges && !o->no_chain && !o->exttsp; e++) {
        const cfg_edge *E = &p->edges[e];
        if (E->from >= nb || E->to >= nb || fp->edge[e] <= 0 ||
            (E->kind != CFG_EDGE_FALL && E->kind != CFG_EDGE_TAKEN))
            continue;
        ed[ne++] = (wedge){ fp->edge[e], E->from, E->to, E->kind };
    }
    qsort(ed, ne, sizeof *ed, by_weight);
    for (size_t i = 0; i < ne; i++) {
        uint32_t u = ed[i].from, v = ed[i].to;
        if (next[u] != CFG_NONE || head[v] != v || head[u] == v ||
            (p->blocks[v].flags & CFG_BF_ENTRY))
            continue;
        uint32_t h = head[u];
        next[u] = v;
        tail[h] = tail[v];
        for (uint32_t x = v; x != CFG_NONE; x = next[x])
            head[x] = h;
    }
    size_t n = 0;
    uint32_t entry = 0;
    for (uint32_t b = 0; b < nb; b++)
        if (p->blocks[b].flags & CFG_BF_ENTRY) {
            entry = head[b];
            break;
        }
    double pmax = 0;
    for (uint32_t b = 0; b < nb; b++)
        if (fp->block[b] > pmax)
            pmax = fp->block[b];
    /* The entry's chain, then the hot chains densest first (executions per
     * instruction), so that the code that runs most sits on the fewest
     * lines; chains that ran but far less than the hottest block (warm)
     * follow in falling heat.  Placing each next chain by its connection to
     * the placed ones instead lost over several trainings on the held-out
     * inputs (docs/notes/optimizer-baselines.md): an interpreter's handlers
     * are all connected alike, through its dispatch, and a big hot handler
     * pushed the small ones apart. */
    double warm_below = pmax * OPT_WARM_SHARE;
    for (uint32_t c = entry;;) {
        for (uint32_t x = c; x != CFG_NONE; x = next[x]) {
            out->order[n++] = x;
            placed[x] = 1;
        }
        uint32_t best = CFG_NONE;
        double bd = -1, bh = 0;
        for (uint32_t h = 0; h < nb; h++) {
            if (head[h] != h || placed[h])
                continue;
            double heat = chain_heat(fp, next, h);
            if (heat <= 0 || heat < warm_below)
                continue;
            double d = chain_density(p, fp, next, h);
            if (d > bd || (d == bd && heat > bh))
                best = h, bd = d, bh = heat;
        }
        if (best == CFG_NONE)
            break;
        c = best;
    }
    /* Warm chains by falling heat; then, in address order, chains that
     * never ran: to the cold area when the estimate is sure of it (and warm
     * ones too when asked), else at the end of the hot part. */
    for (;;) {
        uint32_t best = CFG_NONE;
        double bh = 0;
        for (uint32_t h = 0; h < nb; h++)
            if (head[h] == h && !placed[h] && !(o->split_warm && warm_sure(fp, next, h))) {
                double heat = chain_heat(fp, next, h);
                if (heat > bh)
                    best = h, bh = heat;
            }
        if (best == CFG_NONE)
            break;
        for (uint32_t x = best; x != CFG_NONE; x = next[x]) {
            out->order[n++] = x;
            placed[x] = 1;
        }
    }
    /* (with splitting off, nothing goes cold: no block needs keeping) */
    uint8_t *likely = o->cold_handlers || o->no_split ? NULL : unsampled_handlers(p, fp, warm_below);
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1)
            out->split = n;
        for (uint32_t h = 0; h < nb; h++) {
            if (head[h] != h || placed[h])
                continue;
            bool cold = !o->no_split;
            for (uint32_t x = h; x != CFG_NONE; x = next[x])
                cold = cold && sure_cold(fp, x) && !(likely && likely[x]);
            bool warm = chain_heat(fp, next, h) > 0;
            /* pass 0: never-run chains stay hot when splitting is off;
             * 1: warm to cold (--split-warm); 2: never ran, to cold */
            if (pass == 0 ? (cold || warm) : pass == 1 ? !warm : (!cold || warm))
                continue;
            for (uint32_t x = h; x != CFG_NONE; x = next[x]) {
                out->order[n++] = x;
                placed[x] = 1;
                if (pass == 0 && likely && likely[x]) {
                    out->kept++;
                    out->kept_bytes += (uint32_t)(p->blocks[x].end - p->blocks[x].start);
                }
            }
        }
    }
    free(likely);
    out->n = n;
    if (out->split == n)
        out->split = PLAN_NOSPLIT;
done:
    free(next);
    free(head);
    free(tail);
    free(ed);
    free(placed);
    return ok;
}

/* A target of a resolved jump table: entered by a taken jump every time. */
static bool table_target(const cfg_proc *p, const cfg_block *B)
{
    for (uint32_t k = 0; k < B->nin; k++) {
        const cfg_edge *E = &p->edges[p->in_edges[B->first_in + k]];
        if (E->from < p->nblocks && (p->blocks[E->from].flags & CFG_BF_TABLE))
            return true;
    }
    return false;
}

/* Align to the fetch block the hot blocks that are entered by a taken
 * branch or jump, so that its first fetch brings a whole block of them:
 * hot loop heads and hot jump-table targets.  Only where no path falls
 * into the padding: the block before in the layout has no edge to it. */
void opt_align_proc(const cfg_proc *p, const est_proc_freq *fp, const ev5_params *ev5,
                    opt_proc_layout *L, double proc_max)
{
    size_t hot = L->split == PLAN_NOSPLIT ? L->n : L->split;
    for (size_t i = 1; i < hot; i++) {
        uint32_t b = L->order[i], prev = L->order[i - 1];
        const cfg_block *B = &p->blocks[b];
        bool head = B->loop != CFG_NONE && p->loops[B->loop].header == b, table = table_target(p, B);
        double share = table ? OPT_ALIGN_TABLE_SHARE : OPT_ALIGN_LOOP_SHARE;
        if (!(head || table) || fp->block[b] < proc_max * share || fp->block[b] < 1000 ||
            (b && (p->blocks[b - 1].flags & CFG_BF_LINKS)))
            continue;
        bool falls = false;
        for (uint32_t k = 0; k < p->blocks[prev].nout; k++)
            if (p->edges[p->out_edges[p->blocks[prev].first_out + k]].to == b)
                falls = true;
        if (!falls)
            L->align[i] = ev5->fetch_block;
    }
}

double opt_fetch_cost(const cfg_proc *p, const est_proc_freq *fp, const uint32_t *order,
                      size_t n, const ev5_params *ev5)
{
    double c = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b = order[i], nx = i + 1 < n ? order[i + 1] : CFG_NONE;
        const cfg_block *B = &p->blocks[b];
        double wt = 0, wf = 0;
        uint32_t t = CFG_NONE, f = CFG_NONE;
        for (uint32_t k = 0; k < B->nout; k++) {
            uint32_t e = p->out_edges[B->first_out + k];
            const cfg_edge *E = &p->edges[e];
            if (E->kind == CFG_EDGE_TAKEN && E->to < p->nblocks)
                t = E->to, wt = fp->edge[e];
            else if (E->kind == CFG_EDGE_FALL && E->to < p->nblocks)
                f = E->to, wf = fp->edge[e];
        }
        if (t != CFG_NONE && f != CFG_NONE)         /* conditional branch */
            c += nx == f ? wt : nx == t ? wf : wt + wf;
        else if (t != CFG_NONE)                     /* br */
            c += nx == t ? 0 : wt;
        else if (f != CFG_NONE)                     /* falls through */
            c += nx == f ? 0 : wf;
    }
    return c * ev5->taken_bubble;
}
