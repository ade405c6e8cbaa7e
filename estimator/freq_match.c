/*
 * estimator/freq_match.c: carrying frequencies over from an older build of
 * a program to a new one (stale-profile matching, as BOLT does for
 * profiles of a previous release).
 *
 * Procedures are matched by name (namesakes in address order).  Within a procedure, each block is known
 * by a hash of its instructions with the fields that depend on where code
 * and data lie left out: branch displacements, memory displacements (GP-
 * relative addresses move with the layout), jump hints.  A new block takes
 * the count of the next block of the old procedure, in address order, with
 * the same hash that no earlier new block took: an unchanged procedure
 * matches whole, one edited in the middle keeps its untouched blocks.  An
 * edge takes the count of the old edge of the same kind between the
 * matched ends.  The flow step then fills what did not match, consistently
 * with what did.
 */
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "common/hash.h"
#include "estimator/freq_internal.h"

static uint64_t block_hash(const cfg_program *p, const cfg_block *b)
{
    uint64_t h = FNV1A_INIT;
    for (uint64_t a = b->start; a < b->end; a += 4) {
        uint32_t w = 0;
        if (!cfg_word(p, a, &w))
            break;
        alpha_insn in;
        alpha_decode(w, &in);
        switch (in.op ? in.op->format : AF_RESERVED) {
        case AF_BRA: w &= ~0x1fffffu; break;
        case AF_MEM: w &= ~0xffffu; break;
        case AF_JMP: w &= ~0x3fffu; break;
        default: break;
        }
        h = fnv1a(h, &w, sizeof w);
    }
    return h;
}

/* For each block of nf, the matched block of of, or CFG_NONE. */
static void match_blocks(const cfg_program *np, const cfg_proc *nf, const cfg_program *op,
                         const cfg_proc *of, uint32_t *to)
{
    uint64_t *oh = malloc((of->nblocks ? of->nblocks : 1) * sizeof *oh);
    bool *used = calloc(of->nblocks ? of->nblocks : 1, sizeof *used);
    for (size_t b = 0; b < nf->nblocks; b++)
        to[b] = CFG_NONE;
    if (!oh || !used) {
        free(oh);
        free(used);
        return;
    }
    for (size_t b = 0; b < of->nblocks; b++)
        oh[b] = block_hash(op, &of->blocks[b]);
    size_t from = 0;   /* matches keep address order where they can */
    for (size_t b = 0; b < nf->nblocks; b++) {
        uint64_t h = block_hash(np, &nf->blocks[b]);
        for (size_t pass = 0; pass < 2 && to[b] == CFG_NONE; pass++)
            for (size_t k = pass ? 0 : from; k < of->nblocks; k++)
                if (!used[k] && oh[k] == h) {
                    to[b] = (uint32_t)k;
                    used[k] = true;
                    from = k + 1;
                    break;
                }
    }
    free(oh);
    free(used);
}

static long old_edge(const cfg_proc *of, uint32_t from, uint32_t to, uint8_t kind)
{
    for (size_t e = 0; e < of->nedges; e++)
        if (of->edges[e].from == from && of->edges[e].to == to && of->edges[e].kind == kind)
            return (long)e;
    return -1;
}

static void match_proc(const est_freq *old, const cfg_proc *of, const est_proc_freq *oq,
                       const cfg_program *np, const cfg_proc *nf, est_proc_freq *q, uint32_t *to,
                       est_match_stats *st)
{
    match_blocks(np, nf, old->cfg, of, to);
    for (size_t b = 0; b < nf->nblocks; b++) {
        if (to[b] == CFG_NONE)
            continue;
        q->block[b] = oq->block[to[b]];
        q->block_conf[b] = oq->block_conf[to[b]];
        q->block_from[b] = EST_FROM_SAMPLES;
        st->matched += oq->block[to[b]] * (double)(of->blocks[to[b]].end - of->blocks[to[b]].start) / 4;
    }
    for (size_t e = 0; e < nf->nedges; e++) {
        const cfg_edge *ed = &nf->edges[e];
        uint32_t u = ed->from == CFG_ENTRY ? CFG_ENTRY : to[ed->from];
        uint32_t v = ed->to == CFG_EXIT ? CFG_EXIT : to[ed->to];
        long k = u == CFG_NONE || v == CFG_NONE ? -1 : old_edge(of, u, v, ed->kind);
        if (k < 0)
            continue;
        q->edge[e] = oq->edge[k];
        q->edge_conf[e] = oq->edge_conf[k];
        q->edge_from[e] = EST_FROM_SAMPLES;
    }
    q->samples = oq->samples;
}

typedef struct named {
    const char *name;
    uint32_t proc;
} named;

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->proc > y->proc) - (x->proc < y->proc);
}

static named *by_name(const cfg_program *p)
{
    named *v = malloc((p->nprocs ? p->nprocs : 1) * sizeof *v);
    for (size_t i = 0; v && i < p->nprocs; i++)
        v[i] = (named){ p->procs[i].name ? p->procs[i].name : "", (uint32_t)i };
    if (v)
        qsort(v, p->nprocs, sizeof *v, cmp_named);
    return v;
}

/* For each new procedure, the old one of the same name; two local
 * procedures of one name (static functions of two files) pair up in
 * address order. */
static bool pair_procs(const cfg_program *np, const cfg_program *op, uint32_t *pair)
{
    named *a = by_name(np), *b = by_name(op);
    bool ok = a && b;
    for (size_t i = 0; i < np->nprocs; i++)
        pair[i] = CFG_NONE;
    for (size_t i = 0, k = 0; ok && i < np->nprocs && k < op->nprocs;) {
        int c = strcmp(a[i].name, b[k].name);
        if (c == 0)
            pair[a[i++].proc] = b[k++].proc;
        else if (c < 0)
            i++;
        else
            k++;
    }
    free(a);
    free(b);
    return ok;
}

est_freq *est_freq_match(const cfg_program *np, const est_freq *old, est_match_stats *st,
                         char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    const cfg_program *op = old->cfg;
    for (size_t p = 0; p < op->nprocs; p++)
        for (size_t b = 0; b < op->procs[p].nblocks; b++)
            st->total += old->procs[p].block[b] *
                         (double)(op->procs[p].blocks[b].end - op->procs[p].blocks[b].start) / 4;
    est_freq *out = est_freq_new(np);
    size_t most = 1;
    for (size_t p = 0; p < np->nprocs; p++)
        if (np->procs[p].nblocks > most)
            most = np->procs[p].nblocks;
    uint32_t *to = malloc(most * sizeof *to);
    uint32_t *pair = malloc((np->nprocs ? np->nprocs : 1) * sizeof *pair);
    if (!out || !to || !pair || !pair_procs(np, op, pair)) {
        snprintf(err, errlen, "out of memory matching an older build's profile");
        goto fail;
    }
    for (size_t p = 0; p < np->nprocs; p++) {
        const cfg_proc *nf = &np->procs[p];
        const cfg_proc *of = pair[p] == CFG_NONE ? NULL : &op->procs[pair[p]];
        if (!of || nf->flags & CFG_PF_MISSING || of->flags & CFG_PF_MISSING)
            continue;
        st->procs++;
        match_proc(old, of, &old->procs[of - op->procs], np, nf, &out->procs[p], to, st);
        if (!est_flow_solve(nf, &out->procs[p])) {
            snprintf(err, errlen, "out of memory matching an older build's profile");
            goto fail;
        }
    }
    free(to);
    free(pair);
    return out;
fail:
    free(to);
    free(pair);
    est_freq_free(out);
    return NULL;
}
