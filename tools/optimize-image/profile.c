/*
 * tools/optimize-image/profile.c: what the optimizer needs from exact
 * counts.  The frequencies are the estimator's (est_freq_from_exact), summed
 * over several files; besides them, the other images' executions per
 * I-cache set (a shared library is mapped on a page boundary, so its
 * link-time addresses give its sets) and each register jump's most frequent
 * target inside the image.
 *
 * Counts taken on a rewritten copy of the image (its address map names this
 * image's build-id) feed the next round: that image's records are carried
 * back through the map before the estimator lays them onto the CFG.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "estimator/samples.h"
#include "profdb/values.h"
#include "rewriter/addrmap.h"
#include "rewriter/carry.h"
#include "tools/optimize-image/profile.h"

static int by_pc_target(const void *a, const void *b)
{
    const opt_jump *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    return x->target < y->target ? -1 : x->target > y->target;
}

/* Register jumps of im (the image itself) and their in-image targets. */
static bool add_jumps(const profdb_exact *ex, const profdb_exact_image *im, opt_jump **v,
                      size_t *n, size_t *cap)
{
    uint32_t self = (uint32_t)(im - ex->images);
    for (size_t j = 0; j < im->njumps; j++) {
        const profdb_exact_jump *J = &im->jumps[j];
        if (strcmp(J->kind, "jmp") && strcmp(J->kind, "jsr"))
            continue;
        for (size_t t = 0; t < J->ntargets; t++) {
            const profdb_exact_target *T = &im->targets[J->first + t];
            if (T->image != self)
                continue;
            if (*n == *cap) {
                opt_jump *nv = realloc(*v, (*cap = *cap ? 2 * *cap : 256) * sizeof *nv);
                if (!nv)
                    return false;
                *v = nv;
            }
            (*v)[(*n)++] = (opt_jump){ J->pc, T->to, (double)T->count, (double)T->count };
        }
    }
    return true;
}

/* Sum repeats of (pc, target); keep each pc's most frequent target. */
static size_t best_targets(opt_jump *v, size_t nv)
{
    qsort(v, nv, sizeof *v, by_pc_target);
    size_t k = 0;
    for (size_t i = 0; i < nv;) {
        opt_jump best = v[i];
        double total = 0;
        best.count = 0;
        size_t j = i;
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
    return k;
}

/* The original address of a new one, if it is original code. */
static bool orig_of(const addrmap *m, uint64_t a, uint64_t *o)
{
    int k;
    *o = addrmap_lookup(m, a, &k);
    return k == AM_CODE || k < 0;
}

/* The original taken target of the conditional branch at o, or 0. */
static uint64_t taken_target(const cfg_program *cfg, uint64_t o)
{
    const cfg_proc *f = cfg_proc_at(cfg, o);
    uint32_t b = f ? cfg_block_at(f, o) : CFG_NONE;
    if (b == CFG_NONE || f->blocks[b].end - 4 != o)
        return 0;
    for (uint32_t k = 0; k < f->blocks[b].nout; k++) {
        const cfg_edge *e = &f->edges[f->out_edges[f->blocks[b].first_out + k]];
        if (e->kind == CFG_EDGE_TAKEN || (e->kind == CFG_EDGE_OUT && e->target != o + 4))
            return e->target;
    }
    return 0;
}

static bool is_br(const cfg_program *cfg, uint64_t o)
{
    uint32_t w;
    alpha_insn in;
    if (!cfg_word(cfg, o, &w))
        return false;
    alpha_decode(w, &in);
    return alpha_flow_of(&in) == FLOW_BRANCH;
}

#define GROW(arr, n, cap) ((n) < (cap) || ((arr) = grow_arr((arr), &(cap), sizeof *(arr))))
static void *grow_arr(void *p, size_t *cap, size_t sz)
{
    void *np = realloc(p, (*cap = *cap ? 2 * *cap : 256) * sz);
    if (!np)
        free(p);
    return np;
}

/* Carry image im (a rewritten copy, map m) back to original addresses in
 * place: runs split where the layout joined original pieces (a join over a
 * dropped BR becomes that BR's edge), branches the layout inverted get their
 * original sense back, added branches and padding drop out. */
static bool carry_back(const cfg_program *cfg, profdb_exact *ex, profdb_exact_image *im,
                       const addrmap *m)
{
    uint32_t self = (uint32_t)(im - ex->images);
    profdb_exact_run *runs = NULL;
    profdb_exact_edge *edges = NULL;
    size_t nr = 0, cr = 0, ne = 0, ce = 0;
    for (size_t r = 0; r < im->nruns; r++) {
        const profdb_exact_run *R = &im->runs[r];
        uint64_t prev = 0;
        for (uint64_t a = R->start; a < R->end; a += 4) {
            uint64_t o;
            if (!orig_of(m, a, &o)) {
                prev = 0;
                continue;
            }
            if (prev && o == prev + 4) {
                runs[nr - 1].end = o + 4;
            } else {
                if (prev && is_br(cfg, prev + 4)) {
                    if (!GROW(edges, ne, ce))
                        goto oom;
                    edges[ne++] = (profdb_exact_edge){ prev + 4, o, R->count, self, 'B' };
                }
                if (!GROW(runs, nr, cr))
                    goto oom;
                runs[nr++] = (profdb_exact_run){ o, o + 4, R->count };
            }
            prev = o;
        }
    }
    for (size_t i = 0; i < im->nedges; i++) {
        profdb_exact_edge E = im->edges[i];
        int k;
        uint64_t from = addrmap_lookup(m, E.from, &k);
        if (k == AM_BRANCH)         /* an added BR stands for its block's end */
            from = addrmap_lookup(m, E.from - 4, &k);
        if (!(k == AM_CODE || k < 0) || (E.to_image == self && !orig_of(m, E.to, &E.to)))
            continue;
        E.from = from;
        if (!GROW(edges, ne, ce))
            goto oom;
        edges[ne++] = E;
    }
    for (size_t i = 0; i < im->nbranches; i++) {
        profdb_exact_branch *B = &im->branches[i];
        uint64_t pc, t;
        if (!orig_of(m, B->pc, &pc) || !orig_of(m, B->target, &t))
            continue;
        B->pc = pc;
        B->target = t;
        if (t == pc + 4 && (t = taken_target(cfg, pc))) {   /* inverted */
            uint64_t x = B->taken;
            B->taken = B->not_taken;
            B->not_taken = x;
            B->target = t;
        }
    }
    for (size_t i = 0; i < im->njumps; i++)
        orig_of(m, im->jumps[i].pc, &im->jumps[i].pc);
    for (size_t i = 0; i < im->ntargets; i++)
        if (im->targets[i].image == self)
            orig_of(m, im->targets[i].to, &im->targets[i].to);
    for (size_t i = 0; i < im->nexits; i++)
        orig_of(m, im->exits[i].addr, &im->exits[i].addr);
    for (size_t i = 0; i < im->nentries; i++)
        orig_of(m, im->entries[i].addr, &im->entries[i].addr);
    free(im->runs);
    free(im->edges);
    im->runs = runs, im->nruns = nr;
    im->edges = edges, im->nedges = ne;
    memcpy(im->build_id, m->build_id, m->build_id_len);
    im->build_id_len = m->build_id_len;
    return true;
oom:
    free(runs);
    free(edges);
    return false;
}

/* An image of ex that is a rewritten copy of cfg's, carried back; or NULL. */
static const profdb_exact_image *rewritten_copy(const cfg_program *cfg, profdb_exact *ex)
{
    const image *img = cfg->img;
    for (size_t k = 0; img->build_id_len && k < ex->nimages; k++) {
        profdb_exact_image *im = &ex->images[k];
        image_error ie;
        image *cp = strcmp(im->path, "-") ? image_open(im->path, &ie) : NULL;
        if (!cp)
            continue;
        char e[128];
        addrmap m = { 0 };
        bool ours = addrmap_read(cp, &m, e, sizeof e) && m.build_id_len == img->build_id_len &&
                    !memcmp(m.build_id, img->build_id, m.build_id_len);
        image_close(cp);
        bool ok = ours && carry_back(cfg, ex, im, &m);
        addrmap_free(&m);
        if (ok)
            return im;
    }
    return NULL;
}

bool oi_profile_exact(const cfg_program *cfg, const char *const *files, size_t n,
                      uint32_t line, uint32_t nsets, oi_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    out->freq = est_freq_new(cfg);
    out->shared = calloc(nsets, sizeof *out->shared);
    out->runs = calloc(n + 1, sizeof *out->runs);
    out->run_shared = calloc(n + 1, sizeof *out->run_shared);
    if (!out->freq || !out->shared || !out->runs || !out->run_shared) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    const image *img = cfg->img;
    for (size_t i = 0; i < n; i++) {
        profdb_error pe;
        profdb_exact *ex = profdb_exact_read(files[i], &pe);
        if (!ex) {
            snprintf(err, errlen, "%s", pe.msg);
            goto fail;
        }
        const profdb_exact_image *self = img->build_id_len
            ? profdb_exact_find(ex, img->build_id, img->build_id_len)
            : profdb_exact_find_path(ex, img->path);
        if (!self)
            self = rewritten_copy(cfg, ex);
        else if (!self->nruns) {
            /* Declared but never run: a file cut short after its image
             * lines, or counts of another program's run. */
            snprintf(err, errlen, "%s: no counts for %s", files[i], img->path);
            profdb_exact_free(ex);
            goto fail;
        }
        est_freq *f = est_freq_from_exact(cfg, ex, err, errlen);
        double *rs = calloc(nsets, sizeof *rs);
        bool ok = f && self && rs;
        if (ok) {
            est_freq_add(out->freq, f);
            ok = add_jumps(ex, self, &out->jumps, &out->njumps, &cap);
        }
        if (ok) {
            out->runs[out->nruns] = f;
            out->run_shared[out->nruns++] = rs;
        } else
            free(rs);
        for (size_t k = 0; ok && k < ex->nimages; k++) {
            const profdb_exact_image *im = &ex->images[k];
            if (im == self || !strcmp(im->path, "-"))
                continue;
            for (size_t r = 0; r < im->nruns; r++)
                for (uint64_t l = im->runs[r].start / line;
                     im->runs[r].end > im->runs[r].start && l <= (im->runs[r].end - 1) / line; l++) {
                    out->shared[l % nsets] += (double)im->runs[r].count;
                    rs[l % nsets] += (double)im->runs[r].count;
                }
        }
        if (f && !ok && !err[0])
            snprintf(err, errlen, "%s: out of memory", files[i]);
        if (!ok)
            est_freq_free(f);
        profdb_exact_free(ex);
        if (!ok)
            goto fail;
    }
    out->njumps = best_targets(out->jumps, out->njumps);
    return true;
fail:
    oi_profile_free(out);
    return false;
}

/* Samples of a rewritten copy (im, its map m) estimated on its own CFG and
 * carried back onto cfg (docs/estimator.md, "Rewritten images"); added to
 * out.  *samples gets the copy's samples. */
static bool add_copy(const cfg_program *cfg, const struct est_selection *sel, const est_image *im,
                     const addrmap *m, est_freq *out, double *samples, char *err, size_t errlen)
{
    cfg_program *nc = cfg_build(im->img, err, errlen);
    double period;
    *samples = 0;
    est_freq *nf = nc ? est_freq_from_selection(sel, nc, NULL, &period, samples, err, errlen) : NULL;
    est_freq *cf = NULL;
    uint64_t *addr = malloc((im->n ? im->n : 1) * sizeof *addr);
    double *cyc = malloc((im->n ? im->n : 1) * sizeof *cyc);
    est_sample_col col = { 0 };
    rw_est_map fm = { 0 };
    est_addr_map am;
    if (nf && addr && cyc && rw_est_map_init(&fm, m, &am)) {
        for (size_t i = 0; i < im->n; i++) {
            addr[i] = im->offsets[i];
            cyc[i] = (double)im->counts[i * im->nevents];
        }
        if (!est_samples_to_orig(&am, addr, cyc, im->n, &col))
            snprintf(err, errlen, "out of memory");
        else if ((cf = est_freq_carry_samples(cfg, nf, &am, &col,
                                              est_mean_period(im->period_sums[0], im->totals[0]), NULL,
                                              err, errlen)))
            est_freq_add(out, cf);
    } else if (nf) {
        snprintf(err, errlen, "out of memory");
    }
    bool ok = cf != NULL;
    rw_est_map_free(&fm);
    free((void *)col.addr);
    free((void *)col.samples);
    free(addr);
    free(cyc);
    est_freq_free(cf);
    est_freq_free(nf);
    cfg_free(nc);
    return ok;
}

/* Every image of the selection rewritten from cfg's (its map names cfg's
 * build-id), carried back.  *samples gets their samples. */
static bool add_copies(const cfg_program *cfg, const struct est_selection *sel, const est_set *set,
                       est_freq *out, double *samples, char *err, size_t errlen)
{
    const image *img = cfg->img;
    *samples = 0;
    if (!img->build_id_len)
        return true;
    bool ok = true;
    for (size_t i = 0; ok && i < set->nimages; i++) {
        const est_image *im = &set->images[i];
        if (im->status != EST_IMAGE_READ || !image_section_by_name(im->img, ADDRMAP_SECTION))
            continue;
        addrmap m = { 0 };
        char e[256];
        double n = 0;
        if (addrmap_read(im->img, &m, e, sizeof e) && m.build_id_len == img->build_id_len &&
            !memcmp(m.build_id, img->build_id, m.build_id_len)) {
            ok = add_copy(cfg, sel, im, &m, out, &n, err, errlen);
            *samples += n;
        }
        addrmap_free(&m);
    }
    return ok;
}

static const char *base_name(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

/* Does img load a library by this name: one of its DT_NEEDED, or the name
 * of its interpreter (the dynamic linker)? */
static bool loads_name(const image *img, const char *name)
{
    for (size_t i = 0; i < img->ndyn; i++) {
        const char *need = img->dyn[i].tag == DT_NEEDED ? image_dyn_str(img, i) : NULL;
        if (need && !strcmp(need, name))
            return true;
    }
    return img->interp && !strcmp(base_name(img->interp), name);
}

/* Is lib a shared library img loads, by its DT_SONAME? */
static bool loads(const image *img, const image *lib)
{
    const char *soname = NULL;
    for (size_t i = 0; lib->type == ET_DYN && i < lib->ndyn && !soname; i++)
        if (lib->dyn[i].tag == DT_SONAME)
            soname = image_dyn_str(lib, i);
    return soname && loads_name(img, soname);
}

/* The shared libraries' heat per I-cache set from their cycle samples.  A
 * library is mapped on a page boundary, so its offsets give its sets.
 * Samples count cycles, the program's side counts executions of lines: a
 * line's cycles over its eight instructions stand for its executions (one
 * cycle per instruction; stalls make a line look hotter, which is the
 * right error for colouring to avoid it).  The libraries' samples are
 * those of every program in the selection: with stacks one could tell
 * this program's apart, but the sets a library's hot code takes are much
 * the same for every caller of malloc or memcpy. */
static void shared_from_samples(const cfg_program *cfg, const est_set *set, uint32_t line,
                                uint32_t nsets, double *shared)
{
    int e = est_event_index(set, "cycles");
    if (e < 0 || !line || !nsets)
        return;
    for (size_t i = 0; i < set->nimages; i++) {
        const est_image *im = &set->images[i];
        if (im->status != EST_IMAGE_READ || !loads(cfg->img, im->img))
            continue;
        double per = est_mean_period(im->period_sums[e], im->totals[e]) / (line / 4);
        for (size_t k = 0; k < im->n; k++)
            shared[(im->offsets[k] / line) % nsets] += per * (double)im->counts[k * im->nevents + e];
    }
}

static void say(const struct est_selection *sel, const char *msg)
{
    if (sel->warn)
        sel->warn(sel->warn_ctx, msg);
    else
        fprintf(stderr, "optimize-image: warning: %s\n", msg);
}

/* Might the image profiled at path be one that matters to img: img under
 * its own name (a copy of it deployed there), or a library img loads by
 * that name? */
static bool may_matter(const image *img, const char *path)
{
    const char *b = base_name(path);
    return !strcmp(b, base_name(img->path)) || loads_name(img, b);
}

/* The selection's images whose file could not be read (the estimator says
 * nothing of them here): by name each one that may matter to cfg's image,
 * the others, whose samples only other programs' estimates would use, in
 * one line. */
static void say_unread(const cfg_program *cfg, const struct est_selection *sel, const est_set *set)
{
    char msg[1536];
    size_t others = 0;
    const char *one = NULL;
    for (size_t i = 0; i < set->nimages; i++) {
        const est_image *im = &set->images[i];
        if (im->status != EST_IMAGE_MISSING && im->status != EST_IMAGE_MISMATCH)
            continue;
        if (!may_matter(cfg->img, im->path)) {
            if (!others++)
                one = im->path;
            continue;
        }
        snprintf(msg, sizeof msg, "%s: %s; its samples are left out", im->path,
                 im->status == EST_IMAGE_MISSING ? "no readable file there"
                                                 : "the file there is another build than the one profiled");
        say(sel, msg);
    }
    if (others) {
        snprintf(msg, sizeof msg,
                 "%zu other image%s of the database (%s%s) could not be read; none is %s or a library "
                 "it loads by name (a rewritten copy of it moved elsewhere needs --image FILE)",
                 others, others == 1 ? "" : "s", one, others > 1 ? ", ..." : "",
                 base_name(cfg->img->path));
        say(sel, msg);
    }
}

/* An older build's estimates (its own samples and its copies'), matched
 * onto cfg and added to out.  Says on stdout how much matched; a database
 * with no samples of it (one of several, say) carries nothing over, with
 * a warning. */
static bool add_stale(const cfg_program *cfg, const struct est_selection *sel, const char *path,
                      est_freq *out, double *samples, char *err, size_t errlen)
{
    image_error ie;
    image *img = image_open(path, &ie);
    if (!img) {
        snprintf(err, errlen, "%s", ie.msg);
        return false;
    }
    cfg_program *oc = cfg_build(img, err, errlen);
    oi_profile old;
    bool none = false;
    bool ok = oc && oi_profile_samples(oc, sel, 32, 1, NULL, 0, &old, &none, err, errlen);
    if (!ok && none) {
        fprintf(stderr, "optimize-image: warning: %s: nothing carried over from it\n", err);
        ok = true;
    } else if (ok) {
        est_match_stats st;
        est_freq *m = est_freq_match(cfg, old.freq, &st, err, errlen);
        if ((ok = m != NULL)) {
            est_freq_add(out, m);
            *samples += st.matched;
            printf("carried over from %s: %zu procedures, %.1f%% of its executed instructions "
                   "matched\n", path, st.procs, st.total > 0 ? 100 * st.matched / st.total : 0);
        }
        est_freq_free(m);
        oi_profile_free(&old);
    }
    cfg_free(oc);
    image_close(img);
    return ok;
}

/* Each JMP and JSR with a target hot list in the image's value profiles
 * (cpod's, from value samples): its most frequent target, with the
 * estimated count and the samples behind it.  RET is left alone: the
 * return stack predicts it.  No value profile is no jumps, not an error. */
static bool value_jumps(const cfg_program *cfg, const struct est_selection *sel, oi_profile *out, char *err,
                        size_t errlen)
{
    char key[PROFDB_KEY_MAX];
    if (!cfg->img->build_id_len || !image_build_id_hex(cfg->img, key, sizeof key))
        return true;
    profdb_error pe;
    profdb *db = profdb_open(sel->db, 0, &pe);
    if (!db) {
        snprintf(err, errlen, "%s", pe.msg);
        return false;
    }
    profdb_vlist *v = NULL;
    size_t n = 0;
    bool ok = profdb_values_sum(db, sel->all_epochs ? NULL : sel->epoch, NULL, key, &v, &n, &pe);
    profdb_close(db);
    if (!ok) {
        if (pe.code == PROFDB_ENOENT)
            return true;
        snprintf(err, errlen, "%s", pe.msg);
        return false;
    }
    out->jumps = calloc(n + 1, sizeof *out->jumps);
    for (size_t i = 0; out->jumps && i < n; i++) {
        const profdb_vlist *l = &v[i];
        const uint8_t *w = l->kind == PROFDB_VK_TARGET ? image_bytes_at(cfg->img, l->offset, 4) : NULL;
        if (!w)
            continue;
        alpha_insn in;
        alpha_decode((uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24, &in);
        if (!in.op || in.op->format != AF_JMP || (in.op->flow != FLOW_JUMP && in.op->flow != FLOW_CALL))
            continue;
        hot_value top;
        double share;
        if (hotlist_top(&l->h, &top, &share, 1) != 1)
            continue;
        out->jumps[out->njumps++] = (opt_jump){ l->offset, top.value, share * (double)l->h.samples,
                                                (double)l->h.samples };
    }
    free(v);
    if (!out->jumps) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    qsort(out->jumps, out->njumps, sizeof *out->jumps, by_pc_target);
    if (out->njumps)
        printf("value samples: %zu indirect jumps and calls with a most frequent target\n", out->njumps);
    return true;
}

static void drop_runs(oi_profile *p)
{
    for (size_t k = 0; k < p->nruns; k++) {
        est_freq_free(p->runs[k]);
        free(p->run_shared[k]);
    }
    free(p->runs);
    free(p->run_shared);
    p->runs = NULL;
    p->run_shared = NULL;
    p->nruns = 0;
}

/* The kinds of process that ran the image, from the selection's
 * per-process profiles (cpod --per-process): each its part of the
 * estimate, and the libraries' heat in proportion to its samples, for the
 * I-cache model to walk apart.  None when the selection keeps no
 * per-process profiles of the image. */
static bool process_runs(const cfg_program *cfg, const struct est_selection *sel, oi_profile *out,
                         uint32_t nsets, char *err, size_t errlen)
{
    est_run *runs;
    size_t n;
    if (!est_freq_runs(sel, cfg, out->freq, &runs, &n, err, errlen))
        return false;
    if (!n)
        return true;
    out->runs = calloc(n, sizeof *out->runs);
    out->run_shared = calloc(n, sizeof *out->run_shared);
    bool ok = out->runs && out->run_shared;
    for (size_t k = 0; ok && k < n; k++) {
        double *rs = calloc(nsets ? nsets : 1, sizeof *rs);
        if (!(ok = rs != NULL))
            break;
        for (uint32_t x = 0; x < nsets; x++)
            rs[x] = out->shared[x] * runs[k].share;
        out->runs[k] = runs[k].freq;
        out->run_shared[k] = rs;
        runs[k].freq = NULL;
        out->nruns++;
    }
    est_runs_free(runs, n);
    if (!ok)
        snprintf(err, errlen, "out of memory");
    return ok;
}

bool oi_profile_samples(const cfg_program *cfg, const struct est_selection *sel, uint32_t line,
                        uint32_t nsets, const char *const *stale, size_t nstale, oi_profile *out,
                        bool *none, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    *none = false;
    double period, samples = 0, copies = 0;
    est_set set;
    est_error ee;
    bool loaded = false;
    out->shared = calloc(nsets ? nsets : 1, sizeof *out->shared);
    out->freq = est_freq_new(cfg);
    if (!out->shared || !out->freq) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    char own_err[1024];
    est_freq *own = est_freq_from_selection(sel, cfg, NULL, &period, &samples, own_err, sizeof own_err);
    if (own) {
        est_freq_add(out->freq, own);
        est_freq_free(own);
    }
    if (!(loaded = est_load(sel, &set, &ee))) {
        snprintf(err, errlen, "%s", ee.msg);
        goto fail;
    }
    say_unread(cfg, sel, &set);
    if (!add_copies(cfg, sel, &set, out->freq, &copies, err, errlen))
        goto fail;
    shared_from_samples(cfg, &set, line, nsets, out->shared);
    est_free(&set);
    loaded = false;
    for (size_t i = 0; i < nstale; i++)
        if (!add_stale(cfg, sel, stale[i], out->freq, &copies, err, errlen))
            goto fail;
    if (!own && !copies) {
        snprintf(err, errlen, "%s", own_err);
        *none = true;
        goto fail;
    }
    if (!value_jumps(cfg, sel, out, err, errlen) || !process_runs(cfg, sel, out, nsets, err, errlen))
        goto fail;
    return true;
fail:
    if (loaded)
        est_free(&set);
    oi_profile_free(out);
    return false;
}

/* The runs of from after to's, taken from it; when only one of them has
 * any, neither keeps them: the runs must add up to the whole. */
static bool add_runs(oi_profile *to, oi_profile *from)
{
    if (!to->nruns || !from->nruns) {
        drop_runs(to);
        drop_runs(from);
        return true;
    }
    size_t n = to->nruns + from->nruns;
    est_freq **r = realloc(to->runs, n * sizeof *r);
    if (r)
        to->runs = r;
    double **sh = r ? realloc(to->run_shared, n * sizeof *sh) : NULL;
    if (sh)
        to->run_shared = sh;
    if (!r || !sh)
        return false;
    memcpy(r + to->nruns, from->runs, from->nruns * sizeof *r);
    memcpy(sh + to->nruns, from->run_shared, from->nruns * sizeof *sh);
    to->nruns = n;
    from->nruns = 0;
    return true;
}

bool oi_profile_add(oi_profile *to, oi_profile *from, uint32_t nsets)
{
    est_freq_add(to->freq, from->freq);
    if (!add_runs(to, from))
        return false;
    for (uint32_t s = 0; s < nsets; s++)
        to->shared[s] += from->shared[s];
    if (!from->njumps)
        return true;
    size_t n = to->njumps + from->njumps;
    opt_jump *v = realloc(to->jumps, n * sizeof *v);
    if (!v)
        return false;
    memcpy(v + to->njumps, from->jumps, from->njumps * sizeof *v);
    to->jumps = v;
    /* Each database's total for a jump counts, not only its top target's. */
    qsort(v, n, sizeof *v, by_pc_target);
    double *totals = malloc(n * sizeof *totals);
    if (!totals)
        return false;
    size_t npc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!i || v[i].pc != v[i - 1].pc)
            totals[npc++] = 0;
        totals[npc - 1] += v[i].total;
    }
    to->njumps = best_targets(v, n);
    for (size_t i = 0; i < to->njumps; i++)
        v[i].total = totals[i];
    free(totals);
    return true;
}

void oi_profile_free(oi_profile *p)
{
    est_freq_free(p->freq);
    free(p->shared);
    free(p->jumps);
    drop_runs(p);
    memset(p, 0, sizeof *p);
}
