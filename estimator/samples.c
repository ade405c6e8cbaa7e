/*
 * estimator/samples.c: loading a profile selection and adding its samples
 * up per procedure and per image.
 *
 * Everything is summed in memory from profdb's reading API: a profile is a
 * few tens of kilobytes, so a whole epoch fits easily, and reading it once
 * lets every report be a pass over sorted arrays.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "estimator/common.h"
#include "estimator/samples.h"

static bool fail(est_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

void est_warnf(void (*warn)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (warn)
        warn(ctx, msg);
    else
        fprintf(stderr, "cpo: warning: %s\n", msg);
}

double est_mean_period(uint64_t period_sum, uint64_t samples)
{
    return samples ? (double)period_sum / (double)samples : 0.0;
}

/* ---- events and keys ---------------------------------------------------- */

static bool strv_has(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return true;
    return false;
}

static bool strv_push(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return false;
    *v = nv;
    if (!(nv[*n] = strdup(s)))
        return false;
    (*n)++;
    return true;
}

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* "cycles" leads, as in DCPI's reports; the rest follow by name. */
static int cmp_event(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    bool cx = !strcmp(x, "cycles"), cy = !strcmp(y, "cycles");
    if (cx != cy)
        return cx ? -1 : 1;
    return strcmp(x, y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int est_event_index(const est_set *s, const char *event)
{
    for (size_t i = 0; i < s->nevents; i++)
        if (!strcmp(s->events[i], event))
            return (int)i;
    return -1;
}

/* ---- one image's samples ------------------------------------------------ */

typedef struct {
    uint64_t offset, count;
    size_t event;
} triple;

static int cmp_triple(const void *a, const void *b)
{
    const triple *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

/* Fold (offset, event, count) triples into the image's columns. */
static bool fold_triples(est_image *im, triple *t, size_t nt, size_t nev)
{
    if (nt)             /* t is NULL when no profile was summed */
        qsort(t, nt, sizeof *t, cmp_triple);
    size_t n = 0;
    for (size_t i = 0; i < nt; i++)
        n += i == 0 || t[i].offset != t[i - 1].offset;
    im->offsets = malloc((n ? n : 1) * sizeof *im->offsets);
    im->counts = calloc((n ? n : 1) * nev, sizeof *im->counts);
    if (!im->offsets || !im->counts)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < nt; i++) {
        if (i == 0 || t[i].offset != t[i - 1].offset)
            im->offsets[k++] = t[i].offset;
        uint64_t *c = &im->counts[(k - 1) * nev + t[i].event];
        *c = est_add_sat(*c, t[i].count);
    }
    im->n = n;
    return true;
}

static bool same_build_id(const est_image *im, const image *img)
{
    return im->build_id_len == img->build_id_len &&
           !memcmp(im->build_id, img->build_id, im->build_id_len);
}


/* Find the image's file: files given by the user first (by build-id), then
 * every path its profiles recorded, then every path the whole database has
 * seen for its key.  A file with another build-id is another program now
 * living at that path: its symbols would put samples in the wrong
 * procedures, so the image is reported whole instead. */
static void locate(est_image *im, char *const *paths, size_t npaths, profdb *db,
                   image **given, size_t ngiven, const est_selection *sel)
{
    if (im->build_id_len) {
        for (size_t i = 0; i < ngiven; i++) {
            if (given[i] && same_build_id(im, given[i])) {
                im->img = given[i];
                given[i] = NULL;
                im->status = EST_IMAGE_READ;
                return;
            }
        }
    }
    char first_err[sizeof ((image_error *)0)->msg] = "";
    char mismatch[PROFDB_MAX_PATH + 300] = "";
    profdb_image known = { 0 };
    profdb_error perr;
    bool have_known = false;
    for (int round = 0; round < 2; round++) {
        char *const *v = paths;
        size_t nv = npaths;
        if (round == 1) {
            have_known = profdb_lookup(db, im->key, &known, &perr);
            if (!have_known)
                break;
            v = known.paths;
            for (nv = 0; known.paths[nv]; nv++)
                ;
        }
        for (size_t i = 0; i < nv; i++) {
            if (round == 1 && strv_has(paths, npaths, v[i]))
                continue;
            image_error ierr;
            image *img = image_open(v[i], &ierr);
            if (!img) {
                if (!first_err[0])
                    snprintf(first_err, sizeof first_err, "%s", ierr.msg);
                continue;
            }
            if (im->build_id_len && !same_build_id(im, img)) {
                if (!mismatch[0]) {
                    char a[2 * PROFDB_MAX_BUILD_ID + 1], b[2 * PROFDB_MAX_BUILD_ID + 1];
                    snprintf(mismatch, sizeof mismatch, "%s has build-id %s, its profiles %s",
                             v[i], img->build_id_len ? hex_bytes(img->build_id, img->build_id_len, a, sizeof a)
                                                     : "(none)",
                             hex_bytes(im->build_id, im->build_id_len, b, sizeof b));
                }
                image_close(img);
                continue;
            }
            im->img = img;
            im->status = EST_IMAGE_READ;
            if (have_known)
                profdb_image_free(&known);
            return;
        }
    }
    if (have_known)
        profdb_image_free(&known);
    im->status = mismatch[0] ? EST_IMAGE_MISMATCH : EST_IMAGE_MISSING;
    if (!sel->quiet_missing)
        est_warnf(sel->warn, sel->warn_ctx, "%s: its samples are reported for the whole image",
                  mismatch[0] ? mismatch : first_err[0] ? first_err : im->path);
}

/* Sum every host's (and with all_epochs every epoch's) profiles of one
 * image for each column event. */
static bool load_image(profdb *db, const char *epoch, const profdb_info *infos, size_t ninfos,
                       const char *key, est_set *s, est_image *im, image **given, size_t ngiven,
                       const est_selection *sel, est_error *err)
{
    size_t nev = s->nevents;
    snprintf(im->key, sizeof im->key, "%s", key);
    im->nevents = nev;
    im->totals = calloc(nev, sizeof *im->totals);
    im->period_sums = calloc(nev, sizeof *im->period_sums);
    if (!im->totals || !im->period_sums)
        return fail(err, "out of memory");
    triple *t = NULL;
    size_t nt = 0;
    char **paths = NULL;
    size_t npaths = 0;
    int64_t newest = INT64_MIN;
    bool ok = true;
    for (size_t e = 0; ok && e < nev; e++) {
        bool present = false;
        for (size_t i = 0; i < ninfos && !present; i++)
            present = !strcmp(infos[i].key, key) && !strcmp(infos[i].event, s->events[e]);
        if (!present)
            continue;
        profdb_profile p;
        profdb_error perr;
        if (!profdb_sum(db, epoch, NULL, key, s->events[e], &p, NULL, &perr)) {
            if (perr.code == PROFDB_ENOENT)
                continue;    /* set aside by a writer since the listing */
            ok = fail(err, "%s", perr.msg);
            break;
        }
        triple *nt2 = realloc(t, (nt + p.n + 1) * sizeof *t);
        if (!nt2) {
            profdb_profile_free(&p);
            ok = fail(err, "out of memory");
            break;
        }
        t = nt2;
        for (size_t i = 0; i < p.n; i++)
            t[nt++] = (triple){ p.e[i].offset, p.e[i].count, e };
        im->totals[e] = p.info.total;
        im->period_sums[e] = p.info.period_sum;
        for (unsigned i = 0; ok && i < p.info.npaths; i++)
            if (!strv_has(paths, npaths, p.info.paths[i]) && !strv_push(&paths, &npaths, p.info.paths[i]))
                ok = fail(err, "out of memory");
        if (ok && p.info.updated > newest) {
            newest = p.info.updated;
            free(im->path);
            if (!(im->path = strdup(p.info.paths[0])))
                ok = fail(err, "out of memory");
        }
        if (p.info.build_id_len && !im->build_id_len) {
            memcpy(im->build_id, p.info.build_id, p.info.build_id_len);
            im->build_id_len = p.info.build_id_len;
        }
        profdb_profile_free(&p);
    }
    if (ok && !im->path && !(im->path = strdup(key)))
        ok = fail(err, "out of memory");
    if (ok && !fold_triples(im, t, nt, nev))
        ok = fail(err, "out of memory");
    free(t);
    if (ok) {
        if (!strcmp(key, PROFDB_UNKNOWN_KEY))
            im->status = EST_IMAGE_UNKNOWN;
        else if (im->n)
            locate(im, paths, npaths, db, given, ngiven, sel);
        else
            im->status = EST_IMAGE_MISSING;   /* no samples left to place */
    }
    strv_free(paths, npaths);
    return ok;
}

typedef struct proc_total {
    const char *event;
    uint64_t total;
} proc_total;

static int by_event(const void *a, const void *b)
{
    return strcmp(((const proc_total *)a)->event, ((const proc_total *)b)->event);
}

static int by_total(const void *a, const void *b)
{
    const proc_total *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->event, y->event);
}

/* The per-process cycle profiles, the EST_MAX_PROCESSES busiest: every
 * column is a count per sampled offset, so a week of processes loaded
 * whole would take gigabytes; the busiest tell the kinds of work apart. */
static bool pick_processes(const profdb_info *infos, size_t n, est_set *s)
{
    proc_total *v = malloc((n + 1) * sizeof *v);
    size_t nv = 0;
    if (!v)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(infos[i].event, EST_PROCESS_EVENT, strlen(EST_PROCESS_EVENT)))
            v[nv++] = (proc_total){ infos[i].event, infos[i].total };
    /* one total per event: its hosts' and epochs' files side by side */
    qsort(v, nv, sizeof *v, by_event);
    size_t m = 0;
    for (size_t k = 0; k < nv; k++)
        if (m && !strcmp(v[m - 1].event, v[k].event))
            v[m - 1].total += v[k].total;
        else
            v[m++] = v[k];
    nv = m;
    qsort(v, nv, sizeof *v, by_total);
    bool ok = true;
    for (size_t k = 0; ok && k < nv && k < EST_MAX_PROCESSES; k++)
        ok = strv_push(&s->events, &s->nevents, v[k].event);
    free(v);
    return ok;
}

static bool pick_events(const est_selection *sel, const profdb_info *infos, size_t n, est_set *s)
{
    if (sel->events) {
        for (size_t i = 0; i < sel->nevents; i++)
            if (!strv_has(s->events, s->nevents, sel->events[i]) &&
                !strv_push(&s->events, &s->nevents, sel->events[i]))
                return false;
        return true;
    }
    if (sel->processes)
        return pick_processes(infos, n, s);
    for (size_t i = 0; i < n; i++) {
        const char *ev = infos[i].event;
        bool want = !strchr(ev, '@') && strcmp(ev, PROFDB_EXITS_EVENT);
        if (want && !strv_has(s->events, s->nevents, ev) && !strv_push(&s->events, &s->nevents, ev))
            return false;
    }
    if (s->nevents)
        qsort(s->events, s->nevents, sizeof *s->events, cmp_event);
    return true;
}

bool est_load(const est_selection *sel, est_set *out, est_error *err)
{
    memset(out, 0, sizeof *out);
    if (!sel->db || !*sel->db)
        return fail(err, "no profile database given");
    if (sel->all_epochs && sel->epoch)
        return fail(err, "%s: an epoch and every epoch both asked for", sel->db);
    for (size_t i = 0; i < sel->nevents; i++)
        if (!sel->events[i] || !*sel->events[i])
            return fail(err, "an empty event name");
    profdb_error perr;
    profdb *db = profdb_open(sel->db, 0, &perr);
    if (!db)
        return fail(err, "%s", perr.msg);
    est_set *s = out;
    bool ok = (s->db = strdup(sel->db)) != NULL || fail(err, "out of memory");
    s->all_epochs = sel->all_epochs;
    if (ok && !sel->all_epochs) {
        if (sel->epoch)
            snprintf(s->epoch, sizeof s->epoch, "%s", sel->epoch);
        else if (!profdb_current_epoch(db, s->epoch, &perr))
            ok = fail(err, "%s", perr.msg);
    }
    /* The name as given goes to profdb (the copy in s->epoch is for
     * headings and could be cut short). */
    const char *epoch = sel->all_epochs ? NULL : sel->epoch ? sel->epoch : s->epoch;
    profdb_info *infos = NULL;
    size_t ninfos = 0;
    if (ok && !profdb_list(db, epoch, &infos, &ninfos, &perr))
        ok = fail(err, "%s", perr.msg);
    if (ok && !pick_events(sel, infos, ninfos, s))
        ok = fail(err, "out of memory");
    if (ok) {
        s->totals = calloc(s->nevents + 1, sizeof *s->totals);
        s->period_sums = calloc(s->nevents + 1, sizeof *s->period_sums);
        if (!s->totals || !s->period_sums)
            ok = fail(err, "out of memory");
    }
    /* The images: every key with a profile of a column event. */
    char **keys = NULL;
    size_t nkeys = 0;
    for (size_t i = 0; ok && i < ninfos; i++)
        if (strv_has(s->events, s->nevents, infos[i].event) && !strv_has(keys, nkeys, infos[i].key) &&
            !strv_push(&keys, &nkeys, infos[i].key))
            ok = fail(err, "out of memory");
    if (ok && nkeys)
        qsort(keys, nkeys, sizeof *keys, cmp_str);
    size_t ngiven = sel->nimage_files + sel->nopen_images;
    image **given = calloc(ngiven + 1, sizeof *given);
    if (ok && !given)
        ok = fail(err, "out of memory");
    for (size_t i = 0; ok && i < ngiven; i++) {
        image_error ierr;
        const image *o = i < sel->nimage_files ? NULL : sel->open_images[i - sel->nimage_files];
        if (!(given[i] = o ? image_open_mem(o->file, o->file_size, o->path, &ierr)
                           : image_open(sel->image_files[i], &ierr)))
            ok = fail(err, "%s", ierr.msg);
    }
    if (ok && nkeys && !(s->images = calloc(nkeys, sizeof *s->images)))
        ok = fail(err, "out of memory");
    for (size_t k = 0; ok && k < nkeys; k++) {
        est_image *im = &s->images[s->nimages++];
        ok = load_image(db, epoch, infos, ninfos, keys[k], s, im, given, ngiven, sel, err);
        for (size_t e = 0; ok && e < s->nevents; e++) {
            s->totals[e] = est_add_sat(s->totals[e], im->totals[e]);
            s->period_sums[e] = est_add_sat(s->period_sums[e], im->period_sums[e]);
        }
    }
    for (size_t i = 0; given && i < ngiven; i++)
        image_close(given[i]);
    free(given);
    strv_free(keys, nkeys);
    profdb_infos_free(infos, ninfos);
    profdb_close(db);
    if (!ok)
        est_free(s);
    return ok;
}

void est_free(est_set *s)
{
    for (size_t i = 0; i < s->nimages; i++) {
        est_image *im = &s->images[i];
        free(im->path);
        image_close(im->img);
        free(im->offsets);
        free(im->counts);
        free(im->totals);
        free(im->period_sums);
    }
    free(s->images);
    strv_free(s->events, s->nevents);
    free(s->totals);
    free(s->period_sums);
    free(s->db);
    memset(s, 0, sizeof *s);
}

/* ---- lookups -------------------------------------------------------------- */

static size_t lower_bound(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const uint64_t *est_counts_at(const est_image *im, uint64_t offset)
{
    size_t i = lower_bound(im->offsets, im->n, offset);
    return i < im->n && im->offsets[i] == offset ? &im->counts[i * im->nevents] : NULL;
}

void est_offsets_in(const est_image *im, uint64_t lo, uint64_t hi, size_t *first, size_t *last)
{
    *first = lower_bound(im->offsets, im->n, lo);
    *last = hi <= lo ? *first : lower_bound(im->offsets, im->n, hi);
}
