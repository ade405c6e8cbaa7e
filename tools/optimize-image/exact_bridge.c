/*
 * tools/optimize-image/exact_bridge.c: frequencies from axp's exact counts
 * (docs/machine.md, "Exact counts") for the optimizer, until the estimator's
 * est_freq_from_exact replaces this file.
 *
 * A CFG block's count is the count of its first instruction: the sum of the
 * runs that cover it (a difference array over run starts and ends).  A
 * conditional branch's edges are its T and N records; a table jump's edges
 * its target histogram; any other fall-through the count of the block's last
 * instruction.
 *
 * Counts taken on a rewritten image of this one (its address map names this
 * image's build-id) are read through the map: each instruction's count goes
 * to its original address; branches the rewriter added and padding are
 * dropped.  So a profile of the optimized binary feeds the next round.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/addrmap.h"
#include "tools/optimize-image/exact_bridge.h"

typedef struct ev { uint64_t addr; double d; } ev;
typedef struct xe { uint64_t from, to; double c; char kind; } xe;

static int by_addr(const void *a, const void *b)
{
    uint64_t x = ((const ev *)a)->addr, y = ((const ev *)b)->addr;
    return x < y ? -1 : x > y;
}

static int by_from(const void *a, const void *b)
{
    const xe *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

#define PUSH(arr, n, cap, val) do {                                      \
        if (n == cap) {                                                  \
            void *np_ = realloc(arr, (cap = cap ? 2 * cap : 4096) * sizeof *arr); \
            if (!np_) goto oom;                                          \
            arr = np_;                                                   \
        }                                                                \
        arr[n++] = val;                                                  \
    } while (0)

/* Count of the instruction at a: prefix sum of the events before or at a. */
static double count_at(const ev *v, const double *pre, size_t n, uint64_t a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m].addr <= a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo ? pre[lo - 1] : 0;
}

static double edge_count(const xe *x, size_t n, uint64_t from, uint64_t to, int kind)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (x[m].from < from)
            lo = m + 1;
        else
            hi = m;
    }
    double c = 0;
    for (; lo < n && x[lo].from == from; lo++)
        if (x[lo].to == to && (!kind || x[lo].kind == kind))
            c += x[lo].c;
    return c;
}

/* Is the image at path a rewritten copy of orig?  Then *map is its map. */
static bool mapped_from(const char *path, const image *orig, addrmap *map)
{
    image_error ie;
    image *im = image_open(path, &ie);
    if (!im)
        return false;
    char e[128];
    addrmap m = { 0 };
    bool ok = addrmap_read(im, &m, e, sizeof e) && m.build_id_len == orig->build_id_len &&
              !memcmp(m.build_id, orig->build_id, m.build_id_len);
    image_close(im);
    if (ok) {
        addrmap_free(map);
        *map = m;
    } else {
        addrmap_free(&m);
    }
    return ok;
}

est_freq *exact_bridge_read(const cfg_program *cfg, const char *path, double *shared,
                            uint32_t line_size, uint32_t nsets, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char want[130];
    image_build_id_hex(cfg->img, want, sizeof want);
    ev *v = NULL;
    xe *x = NULL;
    size_t nv = 0, cv = 0, nx = 0, cx = 0;
    double *pre = NULL;
    est_freq *f = NULL;
    char line[8192];
    uint64_t lsz = line_size ? line_size : 32;
    long img = -1, mimg = -1, lineno = 0;
    addrmap map = { 0 };
    /* other images' numbers in the current file: 1 when shared code */
    uint8_t other[256] = { 0 };
    bool found = false;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        long n, m;
        uint64_t a, b;
        double c;
        char kind[16], bid[160];
        if (line[0] == '#')
            continue;
        char ipath[4096];
        if (sscanf(line, "image %ld %159s %4095s", &n, bid, ipath) >= 2) {
            if (n >= 0 && n < 256)
                other[n] = strcmp(bid, want) && strcmp(ipath, "-");
            if (n == img)
                img = -1;
            if (n == mimg)
                mimg = -1;
            if (!strcmp(bid, want)) {       /* files may be concatenated */
                img = n;
                found = true;
            } else if (strcmp(ipath, "-") && mapped_from(ipath, cfg->img, &map)) {
                mimg = n;
                other[n] = 0;
                found = true;
            }
        } else if (sscanf(line, "block %ld %" SCNx64 " %" SCNx64 " %lf", &n, &a, &b, &c) == 4) {
            if (n == img && b > a) {
                PUSH(v, nv, cv, ((ev){ a, c }));
                PUSH(v, nv, cv, ((ev){ b, -c }));
            } else if (n == mimg && b > a) {
                /* Inside a run, two moved instructions whose originals are
                 * not adjacent were joined by the layout: an edge of the
                 * original (an inverted branch's old taken path, say). */
                uint64_t prev = 0;
                for (uint64_t pc = a; pc < b; pc += 4) {
                    int k;
                    uint64_t o = addrmap_lookup(&map, pc, &k);
                    if (k == AM_CODE || k < 0) {
                        PUSH(v, nv, cv, ((ev){ o, c }));
                        PUSH(v, nv, cv, ((ev){ o + 4, -c }));
                        if (prev && o != prev + 4)
                            PUSH(x, nx, cx, ((xe){ prev, o, c, 'F' }));
                        prev = o;
                    } else {
                        prev = 0;
                    }
                }
            } else if (shared && n >= 0 && n < 256 && other[n] && b > a) {
                for (uint64_t l = a / lsz; l <= (b - 1) / lsz; l++)
                    shared[l % nsets] += c;
            }
        } else if (sscanf(line, "edge %ld %" SCNx64 " %15s %ld %" SCNx64 " %lf", &n, &a, kind, &m, &b, &c) == 6) {
            if (n == img && m == img)
                PUSH(x, nx, cx, ((xe){ a, b, c, kind[0] }));
            else if (n == mimg && m == mimg) {
                int k1, k2;
                uint64_t oa = addrmap_lookup(&map, a, &k1), ob = addrmap_lookup(&map, b, &k2);
                if (k1 == AM_BRANCH)    /* an added BR: the block's last one */
                    oa = addrmap_lookup(&map, a - 4, &k1);
                if ((k1 == AM_CODE || k1 < 0) && (k2 == AM_CODE || k2 < 0))
                    PUSH(x, nx, cx, ((xe){ oa, ob, c, kind[0] }));
            }
        } else if (!strncmp(line, "entry ", 6) || !strncmp(line, "exit ", 5) ||
                   !strncmp(line, "branch ", 7) || !strncmp(line, "jump ", 5) ||
                   !strncmp(line, "call ", 5) || line[0] == '\n') {
            continue;
        } else {
            snprintf(err, errlen, "%s:%ld: not a line of axp's exact counts", path, lineno);
            goto fail;
        }
    }
    if (ferror(fp)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    if (!found) {
        snprintf(err, errlen, "%s: no counts for this image (build-id %s)", path, want);
        goto fail;
    }
    qsort(v, nv, sizeof *v, by_addr);
    qsort(x, nx, sizeof *x, by_from);
    pre = malloc((nv + 1) * sizeof *pre);
    f = calloc(1, sizeof *f);
    if (!pre || !f || !(f->procs = calloc(cfg->nprocs + 1, sizeof *f->procs)))
        goto oom;
    f->cfg = cfg;
    double s = 0;
    for (size_t i = 0; i < nv; i++)
        pre[i] = s += v[i].d;
    for (size_t i = 0; i < cfg->nprocs; i++) {
        const cfg_proc *p = &cfg->procs[i];
        est_proc_freq *q = &f->procs[i];
        q->block = calloc(p->nblocks + 1, sizeof *q->block);
        q->block_conf = malloc(p->nblocks + 1);
        q->edge = calloc(p->nedges + 1, sizeof *q->edge);
        q->edge_conf = malloc(p->nedges + 1);
        if (!q->block || !q->block_conf || !q->edge || !q->edge_conf)
            goto oom;
        memset(q->block_conf, EST_CONF_EXACT, p->nblocks + 1);
        memset(q->edge_conf, EST_CONF_EXACT, p->nedges + 1);
        for (size_t b = 0; b < p->nblocks; b++)
            q->block[b] = count_at(v, pre, nv, p->blocks[b].start);
        for (size_t e = 0; e < p->nedges; e++) {
            const cfg_edge *E = &p->edges[e];
            if (E->from >= p->nblocks)
                continue;
            const cfg_block *B = &p->blocks[E->from];
            uint64_t last = B->end - 4, to = E->to < p->nblocks ? p->blocks[E->to].start : E->target;
            switch (E->kind) {
            case CFG_EDGE_TAKEN: case CFG_EDGE_TABLE: case CFG_EDGE_OUT:
                q->edge[e] = B->nout == 1 && E->kind == CFG_EDGE_TAKEN
                                 ? q->block[E->from]    /* a BR (maybe dropped by a rewrite) */
                                 : edge_count(x, nx, last, to, 0);
                if (E->kind == CFG_EDGE_OUT && !q->edge[e])
                    q->edge[e] = 0;
                break;
            case CFG_EDGE_FALL: {
                /* what ran the last instruction and did not go elsewhere:
                 * holds for inverted branches and added BRs alike */
                double out = 0;
                for (uint32_t k = 0; k < B->nout; k++) {
                    const cfg_edge *O = &p->edges[p->out_edges[B->first_out + k]];
                    if (O != E && (O->kind == CFG_EDGE_TAKEN || O->kind == CFG_EDGE_TABLE ||
                                   O->kind == CFG_EDGE_OUT))
                        out += edge_count(x, nx, last, O->to < p->nblocks ? p->blocks[O->to].start
                                                                         : O->target, 0);
                }
                double all = count_at(v, pre, nv, last);
                q->edge[e] = all > out ? all - out : 0;
                break;
            }
            case CFG_EDGE_RETURN:
                q->edge[e] = count_at(v, pre, nv, last);
                break;
            default:
                q->edge[e] = q->block[E->to < p->nblocks ? E->to : 0];
            }
        }
    }
    free(v);
    free(x);
    free(pre);
    addrmap_free(&map);
    fclose(fp);
    return f;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
fail:
    free(v);
    free(x);
    free(pre);
    addrmap_free(&map);
    est_freq_free(f);
    fclose(fp);
    return NULL;
}

void est_freq_free(est_freq *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->procs && i < f->cfg->nprocs; i++) {
        free(f->procs[i].block);
        free(f->procs[i].block_conf);
        free(f->procs[i].edge);
        free(f->procs[i].edge_conf);
    }
    free(f->procs);
    free(f);
}

static int by_pc_target(const void *a, const void *b)
{
    const opt_jump *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    return x->target < y->target ? -1 : x->target > y->target;
}

bool exact_bridge_jumps(const cfg_program *cfg, const char *path, opt_jump **out, size_t *n,
                        char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    char want[130], bid[160], kind[8];
    image_build_id_hex(cfg->img, want, sizeof want);
    opt_jump *v = NULL;
    size_t nv = 0, cv = 0;
    long img = -1, nimg, m;
    uint64_t pc, to;
    double c;
    int used;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        if (sscanf(line, "image %ld %159s", &nimg, bid) == 2) {
            if (!strcmp(bid, want))
                img = nimg;
            else if (nimg == img)
                img = -1;
            continue;
        }
        if (sscanf(line, "jump %ld %" SCNx64 " %7s %lf%n", &nimg, &pc, kind, &c, &used) != 4 ||
            nimg != img || !strcmp(kind, "ret"))
            continue;
        for (const char *s = line + used; sscanf(s, " %ld:%" SCNx64 "=%lf%n", &m, &to, &c, &used) == 3;
             s += used)
            if (m == img)
                PUSH(v, nv, cv, ((opt_jump){ pc, to, c, c }));
    }
    free(line);
    fclose(fp);
    qsort(v, nv, sizeof *v, by_pc_target);
    size_t k = 0;
    for (size_t i = 0; i < nv;) {       /* sum repeats, keep each pc's best */
        size_t j = i;
        opt_jump best = v[i];
        double total = 0;
        best.count = 0;
        while (j < nv && v[j].pc == v[i].pc) {
            size_t t = j;
            double s = 0;
            for (; j < nv && v[j].pc == v[t].pc && v[j].target == v[t].target; j++)
                s += v[j].count;
            total += s;
            if (s > best.count)
                best.count = s, best.target = v[t].target;
        }
        best.total = total;
        v[k++] = best;
        i = j;
    }
    *out = v;
    *n = k;
    return true;
oom:
    free(line);
    free(v);
    fclose(fp);
    snprintf(err, errlen, "%s: out of memory", path);
    return false;
}
