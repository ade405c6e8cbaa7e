/*
 * paths/analyse.c: a path profile against its image (analyse.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "paths/analyse.h"

bool paths_blocks(const cfg_proc *f, const cfg_paths *bl, const pathprof_path *p, uint32_t *blocks, size_t cap,
                  size_t *n)
{
    uint32_t nb = (uint32_t)f->nblocks;
    uint32_t from = CFG_PATH_ENTRY(nb), to = CFG_PATH_EXIT(nb);
    if (p->start != PATHPROF_ENTRY && (from = cfg_block_at(f, p->start)) == CFG_NONE)
        return false;
    if (p->end != PATHPROF_EXIT && (to = cfg_block_at(f, p->end)) == CFG_NONE)
        return false;
    if (p->end != PATHPROF_EXIT && f->blocks[to].start != p->end)
        return false;       /* (a piece may start in the middle of a block) */
    size_t ne;
    if (!cfg_path_piece(bl, from, to, p->id, NULL, 0, &ne))
        return false;
    uint32_t *e = malloc((ne ? ne : 1) * sizeof *e);
    if (!e || !cfg_path_piece(bl, from, to, p->id, e, ne, &ne)) {
        free(e);
        return false;
    }
    *n = 0;
    if (from < nb) {
        if (*n < cap)
            blocks[*n] = from;
        (*n)++;
    }
    for (size_t i = 0; i < ne; i++) {
        uint32_t v = bl->edges[e[i]].to;
        if (v >= nb)
            continue;
        if (*n < cap)
            blocks[*n] = v;
        (*n)++;
    }
    free(e);
    return true;
}

const pathprof_image *paths_image_for(const pathprof *pp, const image *img)
{
    char bid[2 * IMAGE_MAX_BUILD_ID + 1] = "";
    if (img->build_id_len)
        hex_bytes(img->build_id, img->build_id_len, bid, sizeof bid);
    for (size_t i = 0; i < pp->nimages; i++)
        if (bid[0] && !strcmp(pp->images[i].build_id, bid))
            return &pp->images[i];
    for (size_t i = 0; i < pp->nimages; i++)
        if (!strcmp(pp->images[i].path, img->path))
            return &pp->images[i];
    return NULL;
}

/* ---- hot paths ------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
    const paths_hot *x = a, *y = b;
    return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

bool paths_hot_paths(const pathprof *pp, int m, double threshold, paths_hot_table *out)
{
    memset(out, 0, sizeof *out);
    int mi = pathprof_metric(pp, "instructions");
    if (m < 0 || (size_t)m >= pp->nmetrics || mi < 0)
        return false;
    uint64_t insns = pp->outside[mi];
    out->total = pp->outside[m];
    for (size_t i = 0; i < pp->nimages; i++)
        for (size_t j = 0; j < pp->images[i].nprocs; j++) {
            const pathprof_proc *f = &pp->images[i].procs[j];
            for (size_t k = 0; k < f->npaths; k++) {
                const uint64_t *v = pathprof_metrics(pp, f, k);
                out->total += v[m];
                insns += v[mi];
                out->npaths++;
            }
        }
    out->avg_rate = insns ? (double)out->total / (double)insns : 0;
    size_t cap = 0;
    for (size_t i = 0; i < pp->nimages; i++)
        for (size_t j = 0; j < pp->images[i].nprocs; j++) {
            const pathprof_proc *f = &pp->images[i].procs[j];
            for (size_t k = 0; k < f->npaths; k++) {
                const uint64_t *v = pathprof_metrics(pp, f, k);
                if (!out->total || (double)v[m] < threshold * (double)out->total || !v[m])
                    continue;
                if (out->nhot == cap) {
                    cap = cap ? cap * 2 : 16;
                    paths_hot *nh = realloc(out->hot, cap * sizeof *nh);
                    if (!nh) {
                        paths_hot_free(out);
                        return false;
                    }
                    out->hot = nh;
                }
                paths_hot *h = &out->hot[out->nhot++];
                h->image = i;
                h->proc = j;
                h->path = k;
                h->value = v[m];
                h->share = (double)v[m] / (double)out->total;
                h->rate = v[mi] ? (double)v[m] / (double)v[mi] : 0;
                h->dense = h->rate > out->avg_rate;
                out->hot_share += h->share;
                if (h->dense) {
                    out->ndense++;
                    out->dense_share += h->share;
                } else {
                    out->nsparse++;
                    out->sparse_share += h->share;
                }
            }
        }
    if (out->nhot)
        qsort(out->hot, out->nhot, sizeof *out->hot, by_value);
    return true;
}

void paths_hot_free(paths_hot_table *t)
{
    free(t->hot);
    memset(t, 0, sizeof *t);
}

/* ---- against exact counts -------------------------------------------------- */

typedef struct mark {
    uint64_t addr;
    int64_t delta;
} mark;

static int by_addr(const void *a, const void *b)
{
    const mark *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* How often the instruction at each block start ran: the sum of the exact
 * runs covering it, by one sweep over the runs' starts and ends. */
static uint64_t *insn_counts(const profdb_exact_image *ex, const uint64_t *addr, size_t n)
{
    mark *mk = malloc((2 * ex->nruns + 1) * sizeof *mk);
    uint64_t *out = calloc(n ? n : 1, sizeof *out);
    if (!mk || !out) {
        free(mk);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < ex->nruns; i++) {
        mk[2 * i] = (mark){ ex->runs[i].start, (int64_t)ex->runs[i].count };
        mk[2 * i + 1] = (mark){ ex->runs[i].end, -(int64_t)ex->runs[i].count };
    }
    qsort(mk, 2 * ex->nruns, sizeof *mk, by_addr);
    size_t j = 0;
    int64_t run = 0;
    for (size_t i = 0; i < n; i++) {    /* addr is ascending */
        while (j < 2 * ex->nruns && mk[j].addr <= addr[i])
            run += mk[j++].delta;
        out[i] = (uint64_t)run;
    }
    free(mk);
    return out;
}

static bool check_proc(const pathprof_proc *pf, const cfg_proc *f, const cfg_paths *bl, const uint64_t *exact,
                       FILE *report, size_t *bad, char *err, size_t errlen)
{
    uint64_t *sum = calloc(f->nblocks ? f->nblocks : 1, sizeof *sum);
    uint32_t *blk = malloc((f->nblocks + 1) * sizeof *blk);
    if (!sum || !blk) {
        free(sum);
        free(blk);
        snprintf(err, errlen, "out of memory");
        return false;
    }
    bool ok = true;
    for (size_t k = 0; k < pf->npaths && ok; k++) {
        size_t n;
        if (!paths_blocks(f, bl, &pf->paths[k], blk, f->nblocks + 1, &n) || n > f->nblocks) {
            snprintf(err, errlen, "%s: path %" PRIu64 " is not a path of this build of the procedure", f->name,
                     pf->paths[k].id);
            ok = false;
            break;
        }
        /* a piece that began inside its first block did not run that
         * block's first instruction */
        const pathprof_path *p = &pf->paths[k];
        bool inside = p->start != PATHPROF_ENTRY && n && p->start != f->blocks[blk[0]].start;
        for (size_t i = inside; i < n; i++)
            sum[blk[i]] += p->count;
    }
    for (size_t b = 0; ok && b < f->nblocks; b++) {
        if (sum[b] == exact[b])
            continue;
        if (report && *bad < 20)
            fprintf(report, "%s block 0x%" PRIx64 ": paths %" PRIu64 ", exact %" PRIu64 "\n", f->name,
                    f->blocks[b].start, sum[b], exact[b]);
        (*bad)++;
    }
    free(sum);
    free(blk);
    return ok;
}

bool paths_check_exact(const pathprof_image *pim, const cfg_program *cfg, const profdb_exact_image *ex,
                       FILE *report, size_t *procs, size_t *blocks, size_t *bad, char *err, size_t errlen)
{
    *procs = *blocks = *bad = 0;
    for (size_t j = 0; j < pim->nprocs; j++) {
        const pathprof_proc *pf = &pim->procs[j];
        const cfg_proc *f = cfg_proc_at(cfg, pf->addr);
        if (!f || f->start != pf->addr) {
            snprintf(err, errlen, "%s: no procedure starts at 0x%" PRIx64 " in this image", pf->name, pf->addr);
            return false;
        }
        cfg_paths bl;
        if (!cfg_paths_build(f, NULL, &bl, err, errlen))
            return false;
        uint64_t *addr = malloc((f->nblocks ? f->nblocks : 1) * sizeof *addr);
        uint64_t *exact = NULL;
        if (addr) {
            for (size_t b = 0; b < f->nblocks; b++)
                addr[b] = f->blocks[b].start;
            exact = insn_counts(ex, addr, f->nblocks);
        }
        bool ok = exact && check_proc(pf, f, &bl, exact, report, bad, err, errlen);
        if (!exact)
            snprintf(err, errlen, "out of memory");
        free(addr);
        free(exact);
        cfg_paths_free(&bl);
        if (!ok)
            return false;
        (*procs)++;
        *blocks += f->nblocks;
    }
    return true;
}
