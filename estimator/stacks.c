/*
 * estimator/stacks.c: naming the frames of a selection's stacks, and the
 * callers, callees and folded views (estimator/stacks.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "estimator/stacks.h"
#include "image/image.h"

static const char *const END_NAMES[] = {
    "complete", "depth", "outside_image", "no_unwind_info", "unreadable", "corrupt",
    "signal_frame", "no_state"
};

const char *est_stack_end_name(unsigned end)
{
    return end < sizeof END_NAMES / sizeof END_NAMES[0] ? END_NAMES[end] : "unknown_reason";
}

void est_stacks_free(est_stacks *s)
{
    for (size_t i = 0; s->name && i < s->st.nframes; i++)
        free(s->name[i]);
    free(s->name);
    for (size_t i = 0; s->file && i < s->st.nimages; i++)
        free(s->file[i]);
    free(s->file);
    profdb_stacks_free(&s->st);
    memset(s, 0, sizeof *s);
}

/* The file of the stacks' image with this key: one of the files the
 * selection names (an image that moved), else the recorded path, but only
 * a file that is that build: a rewritten image's frames, carried back to
 * its original, must not be named by the rewritten file's symbols. */
static char *file_of(const est_selection *sel, const profdb_stack_image *si)
{
    const char *cand[64];
    size_t n = 0;
    for (size_t i = 0; i < sel->nimage_files && n < 63; i++)
        cand[n++] = sel->image_files[i];
    cand[n++] = si->path;
    for (size_t i = 0; i < n; i++) {
        image_error ie;
        image *img = image_open(cand[i], &ie);
        if (!img)
            continue;
        char key[PROFDB_KEY_MAX];
        bool same = !strcmp(profdb_key(img->build_id, img->build_id_len, cand[i], key), si->key);
        image_close(img);
        if (same)
            return strdup(cand[i]);
    }
    return NULL;
}

/* Frames in a rewritten image, carried back to its original through the
 * image's address map (origin): the original's key and address, so the
 * stacks of an optimized binary add up with the original's.  Equal stacks
 * and images are merged afterwards. */
static bool to_originals(est_stacks *s, est_origin_fn origin, void *ctx, est_error *err)
{
    bool moved = false;
    for (size_t i = 0; i < s->st.nimages; i++) {
        profdb_stack_image *si = &s->st.img[i];
        image_error ie;
        image *img = strcmp(si->key, "unknown") ? image_open(si->path, &ie) : NULL;
        est_origin o;
        if (!img || !origin(ctx, img, &o)) {
            image_close(img);
            continue;
        }
        image_close(img);
        for (size_t f = 0; f < s->st.nframes; f++)
            if (s->st.frames[f].image == i)
                s->st.frames[f].offset = o.lookup(o.map, s->st.frames[f].offset);
        char key[2 * PROFDB_MAX_BUILD_ID + 1];
        hex_bytes(o.build_id, o.build_id_len, key, sizeof key);
        char *nk = strdup(key);
        if (o.free)
            o.free(o.map);
        if (!nk) {
            snprintf(err->msg, sizeof err->msg, "out of memory");
            return false;
        }
        free(si->key);
        si->key = nk;
        moved = true;
    }
    profdb_error pe;
    if (moved && !profdb_stacks_normalise(&s->st, &pe)) {
        snprintf(err->msg, sizeof err->msg, "%s", pe.msg);
        return false;
    }
    return true;
}

/* Name every frame through its image's symbols; an image that cannot be
 * read (moved, another build) names its frames by key and offset. */
static bool name_frames(est_stacks *s, est_error *err)
{
    size_t nf = s->st.nframes;
    image **im = calloc(s->st.nimages + 1, sizeof *im);
    if (!im || !(s->name = calloc(nf + 1, sizeof *s->name))) {
        free(im);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return false;
    }
    for (size_t i = 0; i < s->st.nimages; i++) {
        image_error ie;
        if (s->file[i])
            im[i] = image_open(s->file[i], &ie);
    }
    bool ok = true;
    for (size_t i = 0; ok && i < nf; i++) {
        const profdb_frame *f = &s->st.frames[i];
        const image_symbol *sym = im[f->image] ? image_function_at(im[f->image], f->offset) : NULL;
        char buf[512];
        if (sym)
            snprintf(buf, sizeof buf, "%s", sym->name);
        else if (!strcmp(s->st.img[f->image].key, "unknown"))
            snprintf(buf, sizeof buf, "[unknown]");
        else {
            const char *base = strrchr(s->st.img[f->image].path, '/');
            snprintf(buf, sizeof buf, "[%s+0x%" PRIx64 "]", base ? base + 1 : s->st.img[f->image].path,
                     f->offset);
        }
        ok = (s->name[i] = strdup(buf)) != NULL;
    }
    for (size_t i = 0; i < s->st.nimages; i++)
        image_close(im[i]);
    free(im);
    if (!ok)
        snprintf(err->msg, sizeof err->msg, "out of memory");
    return ok;
}

bool est_stacks_load(const est_selection *sel, est_stacks *out, est_error *err)
{
    return est_stacks_load_mapped(sel, NULL, NULL, out, err);
}

bool est_stacks_load_mapped(const est_selection *sel, est_origin_fn origin, void *ctx, est_stacks *out,
                            est_error *err)
{
    memset(out, 0, sizeof *out);
    profdb_error pe;
    profdb *db = profdb_open(sel->db, 0, &pe);
    if (!db) {
        snprintf(err->msg, sizeof err->msg, "%s", pe.msg);
        return false;
    }
    char cur[PROFDB_EPOCH_MAX];
    const char *epoch = sel->epoch;
    if (!epoch && !sel->all_epochs) {
        if (!profdb_current_epoch(db, cur, &pe)) {
            snprintf(err->msg, sizeof err->msg, "%s", pe.msg);
            profdb_close(db);
            return false;
        }
        epoch = cur;
    }
    const char *event = sel->nevents ? sel->events[0] : NULL;
    bool ok = profdb_stacks_select(db, epoch, NULL, event, NULL, &out->st, &pe);
    profdb_close(db);
    if (!ok) {
        snprintf(err->msg, sizeof err->msg, "%s", pe.msg);
        return false;
    }
    out->samples = out->st.total;
    if (origin && !to_originals(out, origin, ctx, err)) {
        est_stacks_free(out);
        return false;
    }
    if (!(out->file = calloc(out->st.nimages + 1, sizeof *out->file))) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        est_stacks_free(out);
        return false;
    }
    for (size_t i = 0; i < out->st.nimages; i++)
        if (strcmp(out->st.img[i].key, "unknown"))
            out->file[i] = file_of(sel, &out->st.img[i]);
    if (!name_frames(out, err)) {
        est_stacks_free(out);
        return false;
    }
    return true;
}

static size_t frame_index(const est_stacks *s, const profdb_stack *st, uint32_t j)
{
    return (size_t)(st->f - s->st.frames) + j;
}

void est_stacks_folded(FILE *f, const est_stacks *s)
{
    for (size_t i = 0; i < s->st.n; i++) {
        const profdb_stack *st = &s->st.s[i];
        if (st->end)
            fprintf(f, "[truncated:%s];", est_stack_end_name(st->end));
        for (uint32_t j = st->n; j-- > 0;) {
            /* ';' and spaces would split a frame: flame-graph tools take
             * the last space-separated field as the count */
            for (const char *c = s->name[frame_index(s, st, j)]; *c; c++)
                fputc(*c == ';' || *c == ' ' ? '_' : *c, f);
            fputc(j ? ';' : ' ', f);
        }
        fprintf(f, "%" PRIu64 "\n", st->count);
    }
}

static int by_count(const void *a, const void *b)
{
    const est_edge *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool count_edge(est_edge **e, size_t *ne, size_t *cap, const char *who, uint64_t count)
{
    size_t k = 0;
    while (k < *ne && strcmp((*e)[k].name, who))
        k++;
    if (k < *ne) {
        (*e)[k].count += count;
        return true;
    }
    if (*ne == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        est_edge *t = realloc(*e, *cap * sizeof *t);
        if (!t)
            return false;
        *e = t;
    }
    (*e)[(*ne)++] = (est_edge){ who, count };
    return true;
}

bool est_stacks_edges(const est_stacks *s, const char *proc, bool callers, est_edge **out, size_t *n,
                      uint64_t *with_proc, est_error *err)
{
    est_edge *e = NULL;
    size_t ne = 0, cap = 0;
    const char **seen = NULL;
    *with_proc = 0;
    for (size_t i = 0; i < s->st.n; i++) {
        const profdb_stack *st = &s->st.s[i];
        /* each distinct caller (callee) of any of proc's frames in this
         * stack counts the stack once: recursion shows both the procedure
         * itself and whoever called it from outside */
        size_t nseen = 0;
        bool any = false;
        for (uint32_t j = 0; j < st->n; j++) {
            if (strcmp(s->name[frame_index(s, st, j)], proc))
                continue;
            any = true;
            const char *who;
            if (callers)
                who = j + 1 < st->n ? s->name[frame_index(s, st, j + 1)]
                      : st->end ? "[truncated]" : "[top]";
            else
                who = j ? s->name[frame_index(s, st, j - 1)] : "[self]";
            size_t q = 0;
            while (q < nseen && strcmp(seen[q], who))
                q++;
            if (q < nseen)
                continue;
            const char **t = realloc(seen, (nseen + 1) * sizeof *t);
            if (!t || !count_edge(&e, &ne, &cap, who, st->count)) {
                free(t ? t : seen);
                free(e);
                snprintf(err->msg, sizeof err->msg, "out of memory");
                return false;
            }
            seen = t;
            seen[nseen++] = who;
        }
        *with_proc += any ? st->count : 0;
    }
    free(seen);
    if (ne > 1)
        qsort(e, ne, sizeof *e, by_count);
    *out = e;
    *n = ne;
    return true;
}
