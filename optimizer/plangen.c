/*
 * optimizer/plangen.c: plans made without a profile, to test the rewriter.
 *
 * The identity plan keeps the original order but still moves every
 * procedure.  A random plan shuffles procedures, shuffles blocks inside each
 * procedure, splits some procedures into hot and cold parts, inverts some
 * conditional branches and aligns some blocks, all at random but valid:
 * the entry block stays first and a block that leaves a return address
 * keeps its successor right behind it (the two move as one chain).
 */
#include <stdlib.h>

#include "alpha/insn.h"
#include "cfg/cfg.h"
#include "optimizer/plan.h"

bool plan_identity(const cfg_program *prog, plan *pl)
{
    plan_init(pl);
    pl->name = "identity";
    for (size_t i = 0; i < prog->nprocs; i++)
        if (!plan_add_proc(pl, prog->procs[i].start, 0))
            return false;
    return true;
}

/* splitmix64: small, good enough, and the same on every host. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
    return n ? next_rand(s) % n : 0;
}

bool plan_random(const cfg_program *prog, uint64_t seed, plan *pl)
{
    plan_init(pl);
    pl->name = "random";
    uint64_t s = seed;
    size_t np = prog->nprocs, maxb = 1;
    uint32_t *porder = malloc((np ? np : 1) * sizeof *porder);
    for (size_t i = 0; i < np; i++)
        if (prog->procs[i].nblocks > maxb)
            maxb = prog->procs[i].nblocks;
    uint32_t *chain = malloc(maxb * sizeof *chain);     /* chain starts */
    uint32_t *order = malloc(maxb * sizeof *order);
    if (!porder || !chain || !order)
        goto oom;
    for (size_t i = 0; i < np; i++)
        porder[i] = (uint32_t)i;
    for (size_t i = np; i > 1; i--) {
        size_t j = below(&s, i);
        uint32_t t = porder[i - 1];
        porder[i - 1] = porder[j];
        porder[j] = t;
    }
    for (size_t pi = 0; pi < np; pi++) {
        const cfg_proc *f = &prog->procs[porder[pi]];
        static const uint32_t aligns[] = { 0, 0, 0, 8, 16, 32 };
        plan_proc *pp = plan_add_proc(pl, f->start, aligns[below(&s, 6)]);
        if (!pp)
            goto oom;
        /* Chains: a block that links is glued to the one after it. */
        size_t nc = 0;
        for (uint32_t b = 0; b < f->nblocks; b++)
            if (b == 0 || !(f->blocks[b - 1].flags & CFG_BF_LINKS))
                chain[nc++] = b;
        /* Keep the entry chain first; shuffle the others. */
        for (size_t i = nc; i > 2; i--) {
            size_t j = 1 + below(&s, i - 1);
            uint32_t t = chain[i - 1];
            chain[i - 1] = chain[j];
            chain[j] = t;
        }
        size_t n = 0, split = SIZE_MAX;
        /* Some procedures go wholly to the cold area (a split before the
         * entry), the rest of the split ones after a chain. */
        bool do_split = below(&s, 2) && (nc > 1 || below(&s, 4) == 0);
        size_t split_chain = !do_split ? nc
                             : nc == 1 || below(&s, 8) == 0 ? 0 : 1 + below(&s, nc - 1);
        for (size_t c = 0; c < nc; c++) {
            if (c == split_chain)
                split = n;
            uint32_t b = chain[c];
            do
                order[n++] = b;
            while (f->blocks[b].flags & CFG_BF_LINKS && ++b < f->nblocks);
        }
        for (size_t i = 0; i < n; i++) {
            if (i == split)
                plan_set_split(pp);
            uint32_t al = below(&s, 8) == 0 ? (below(&s, 2) ? 16 : 32) : 0;
            if (order[i] && (f->blocks[order[i] - 1].flags & CFG_BF_LINKS))
                al = 0;     /* glued to the return address before it */
            if (!plan_add_block(pp, f->blocks[order[i]].start, al))
                goto oom;
        }
        /* Invert some conditional branches. */
        for (size_t b = 0; b < f->nblocks; b++) {
            uint32_t w;
            alpha_insn in;
            if (!cfg_word(prog, f->blocks[b].end - 4, &w))
                continue;
            alpha_decode(w, &in);
            if (alpha_flow_of(&in) == FLOW_CBRANCH && below(&s, 3) == 0 &&
                !plan_add_invert(pl, f->blocks[b].end - 4))
                goto oom;
        }
    }
    free(porder);
    free(chain);
    free(order);
    return true;
oom:
    free(porder);
    free(chain);
    free(order);
    return false;
}
