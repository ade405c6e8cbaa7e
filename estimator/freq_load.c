/*
 * estimator/freq_load.c: from a profile selection to frequency estimates
 * of one image (est_freq_from_selection, est_analyse; estimator/freq.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/ev5.h"
#include "estimator/culprits.h"
#include "estimator/freq.h"
#include "estimator/freq_internal.h"
#include "estimator/profileme.h"
#include "estimator/samples.h"

void est_analysis_free(est_analysis *a)
{
    if (!a)
        return;
    est_freq_free(a->freq);
    est_sched_free_all(a->sched);
    est_events_free(a->events);
    cfg_free(a->cfg);
    image_close(a->img);
    free(a);
}

/* The selection's samples of img alone (of the events given, or of all
 * of them when nevents is 0) into *s, img's own among them in *im (NULL
 * when the selection has none of it, by build-id); false with a message
 * when loading fails. */
bool est_load_image(const est_selection *selp, const image *img, const char *const *events,
                    size_t nevents, est_set *s, const est_image **im, char *err, size_t errlen)
{
    est_selection sel = *selp;
    /* img itself (which may be at no path: recovered from a rewritten
     * copy), after those the caller has open unless it is one of them:
     * each is copied and read again by est_load. */
    const image **open = malloc((selp->nopen_images + 1) * sizeof *open);
    if (!open) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    size_t n = 0;
    bool known = false;
    for (size_t i = 0; i < selp->nopen_images; i++) {
        open[n++] = selp->open_images[i];
        known |= selp->open_images[i] == img;
    }
    if (!known)
        open[n++] = img;
    sel.events = events;
    sel.nevents = nevents;
    sel.open_images = open;
    sel.nopen_images = n;
    est_error eerr;
    *im = NULL;
    bool ok = est_load(&sel, s, &eerr);
    free(open);
    if (!ok) {
        snprintf(err, errlen, "%s", eerr.msg);
        return false;
    }
    for (size_t i = 0; i < s->nimages; i++)
        if (img->build_id_len && s->images[i].build_id_len == img->build_id_len &&
            !memcmp(s->images[i].build_id, img->build_id, img->build_id_len))
            *im = &s->images[i];
    return true;
}

est_freq *est_freq_from_selection(const struct est_selection *selp, const cfg_program *cfg,
                                  est_sched **scheds, double *period, double *samples, char *err,
                                  size_t errlen)
{
    const image *img = cfg->img;
    static const char *const cycles[] = { "cycles" };
    est_set s;
    const est_image *im;
    if (!est_load_image(selp, img, cycles, 1, &s, &im, err, errlen))
        return NULL;
    est_freq *f = NULL;
    uint64_t *addr = NULL;
    double *col = NULL;
    if (!im || !im->totals[0]) {
        char hex[129];
        snprintf(err, errlen, "%s: no cycle samples of %s (build-id %s) in the selection", s.db,
                 img->path, img->build_id_len ? image_build_id_hex(img, hex, sizeof hex) : "none");
        goto out;
    }
    *samples = (double)im->totals[0];
    *period = est_mean_period(im->period_sums[0], im->totals[0]);
    addr = malloc((im->n + 1) * sizeof *addr);
    col = malloc((im->n + 1) * sizeof *col);
    if (!addr || !col) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < im->n; i++) {
        addr[i] = im->offsets[i];
        col[i] = (double)im->counts[i * im->nevents];
    }
    est_sample_col c = { addr, col, im->n };
    f = est_freq_from_samples(cfg, &c, *period, NULL, scheds, err, errlen);
    /* where the image has ProfileMe samples, its frequencies are counted */
    if (f && !selp->cycles_only && !est_pm_count_into(selp, cfg, f, err, errlen)) {
        est_freq_free(f);
        f = NULL;
    }
out:
    free(addr);
    free(col);
    est_free(&s);
    return f;
}

/* How many of the selection's events took turns on the counters the
 * cycle counter leaves: each was counted only slots/k of the time.  Every
 * event of a PC profile other than cycles is a counter's (values and
 * ProfileMe records are profiles of other kinds). */
static double multiplexed(const est_set *s)
{
    int k = 0, cycles = 0;
    for (size_t e = 0; e < s->nevents; e++) {
        if (!strcmp(s->events[e], "cycles"))
            cycles = 1;
        else if (s->totals[e])
            k++;
    }
    int slots = EV5_PMU_COUNTERS - cycles;
    return k > slots ? (double)k / slots : 1;
}

/* The image's samples of the events that bound the culprits into *out
 * (NULL when it has none); false with a message when loading fails. */
static bool events_load(const est_selection *selp, const cfg_program *cfg, est_events **out,
                        char *err, size_t errlen)
{
    *out = NULL;
    est_set s;
    const est_image *im;
    /* all the events: the multiplexing needs their count */
    if (!est_load_image(selp, cfg->img, NULL, 0, &s, &im, err, errlen))
        return false;
    int col[EST_EV_COUNT];
    bool any = false;
    for (int k = 0; k < EST_EV_COUNT; k++) {
        col[k] = est_event_index(&s, est_event_names[k]);
        any |= im && col[k] >= 0 && im->totals[col[k]] > 0;
    }
    bool ok = true;
    est_events *e = any ? calloc(1, sizeof *e) : NULL;
    if (any && (!e || !(e->addr = malloc((im->n + 1) * sizeof *e->addr)) ||
                !(e->count = calloc((im->n + 1) * EST_EV_COUNT, sizeof *e->count)))) {
        snprintf(err, errlen, "out of memory");
        est_events_free(e);
        e = NULL;
        ok = false;
    }
    double mux = multiplexed(&s);
    for (int k = 0; e && k < EST_EV_COUNT; k++)
        if (col[k] >= 0 && im->totals[col[k]])
            e->period[k] = mux * est_mean_period(im->period_sums[col[k]], im->totals[col[k]]);
    for (size_t i = 0; e && i < im->n; i++) {
        uint64_t *c = &im->counts[i * im->nevents];
        bool some = false;
        for (int k = 0; k < EST_EV_COUNT; k++)
            some |= col[k] >= 0 && c[col[k]];
        if (!some)
            continue;
        for (int k = 0; k < EST_EV_COUNT; k++)
            e->count[e->n * EST_EV_COUNT + (size_t)k] = col[k] >= 0 ? (double)c[col[k]] : 0;
        e->addr[e->n++] = im->offsets[i];
    }
    est_free(&s);
    *out = e;
    return ok;
}

est_analysis *est_analyse(const struct est_selection *sel, const char *image_path, char *err,
                          size_t errlen)
{
    est_analysis *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    image_error ierr;
    if (!(a->img = image_open(image_path, &ierr))) {
        snprintf(err, errlen, "%s", ierr.msg);
        est_analysis_free(a);
        return NULL;
    }
    if (!(a->cfg = cfg_build(a->img, err, errlen)) ||
        !(a->freq = est_freq_from_selection(sel, a->cfg, &a->sched, &a->period, &a->samples, err,
                                            errlen)) ||
        !events_load(sel, a->cfg, &a->events, err, errlen)) {
        est_analysis_free(a);
        return NULL;
    }
    return a;
}
