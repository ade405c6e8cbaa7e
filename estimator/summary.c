/*
 * estimator/summary.c: DCPI's Figure 4 for one procedure.
 */
#include <string.h>

#include "estimator/summary.h"

/* The instruction's share of F x M_i that is static stall, by reason. */
static void static_part(const alpha_sched_slot *sl, double F, est_summary *s)
{
    double stall = F * sl->stall, half = 0;
    if (sl->reason == ASR_SLOTTING || sl->reason == ASR_LOAD_STORE)
        half = F * 0.5;     /* it would have shared its cycle with the one before */
    s->stat[sl->reason] += stall + half;
    if (sl->reason == ASR_DEPENDENCY && stall > 0) {
        /* a wait on two operands at once is split between them */
        int n = !!(sl->operand & ASF_RA) + !!(sl->operand & ASF_RB) + !!(sl->operand & ASF_RC);
        for (int k = 0; k < 3 && n; k++)
            if (sl->operand & (1 << k))
                s->operand[k] += stall / n;
    }
    s->execution += F * sl->m - stall - half;
}

static void dynamic_part(const est_culprit *c, est_summary *s)
{
    if (c->stall <= 0)
        return;
    s->dynamic += c->stall;
    if (!c->causes) {
        s->unexplained += c->stall;
        return;
    }
    bool alone = !(c->causes & (c->causes - 1));
    for (int k = 0; k < EST_DYN_COUNT; k++)
        if (c->causes & (1u << k)) {
            s->dyn_max[k] += c->stall;
            if (alone)
                s->dyn_min[k] += c->stall;
        }
}

void est_summary_of(const est_analysis *a, const est_culprits *cu, size_t p, est_summary *out)
{
    memset(out, 0, sizeof *out);
    const cfg_proc *f = &a->cfg->procs[p];
    const est_proc_freq *q = &a->freq->procs[p];
    const est_proc_sched *ps = &a->sched->procs[p];
    for (size_t b = 0; b < f->nblocks && b < ps->nblocks; b++) {
        const est_block_sched *bs = &ps->blocks[b];
        const est_culprit *row = cu && cu->blocks[p] && b < cu->nblocks[p] ? cu->blocks[p][b] : NULL;
        double F = q->block[b] > 0 ? q->block[b] : 0;
        for (uint32_t i = 0; i < bs->n; i++) {
            double S = bs->samples ? bs->samples[i] : 0, cyc = S * a->period;
            out->samples += S;
            out->cycles += cyc;
            out->instructions += F;
            out->best += F * bs->slots[i].m;
            static_part(&bs->slots[i], F, out);
            double excess = cyc - F * bs->slots[i].m;
            double noise = est_stall_noise(S, a->period);
            if (row)
                dynamic_part(&row[i], out);
            else if (excess > noise)
                out->dynamic += excess, out->unexplained += excess;
            if (excess < -noise)
                out->gain += excess;
        }
    }
    double stat = 0;
    for (int r = 0; r < ASR_COUNT; r++)
        stat += out->stat[r];
    out->error = out->cycles - out->execution - stat - out->dynamic - out->gain;
}
