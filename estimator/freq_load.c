/*
 * estimator/freq_load.c: from a profile selection to frequency estimates
 * of one image (est_analyse, estimator/freq.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/freq.h"
#include "estimator/samples.h"

void est_analysis_free(est_analysis *a)
{
    if (!a)
        return;
    est_freq_free(a->freq);
    est_sched_free_all(a->sched);
    cfg_free(a->cfg);
    image_close(a->img);
    free(a->col_samples);
    free(a->col_addr);
    free(a);
}

est_analysis *est_analyse(const struct est_selection *selp, const char *image_path, char *err,
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
    est_selection sel = *selp;
    static const char *const cycles[] = { "cycles" };
    const char *files[1] = { image_path };
    sel.events = cycles;
    sel.nevents = 1;
    sel.image_files = files;
    sel.nimage_files = 1;
    est_set s;
    est_error eerr;
    if (!est_load(&sel, &s, &eerr)) {
        snprintf(err, errlen, "%s", eerr.msg);
        est_analysis_free(a);
        return NULL;
    }
    const est_image *im = NULL;
    for (size_t i = 0; i < s.nimages; i++)
        if (a->img->build_id_len && s.images[i].build_id_len == a->img->build_id_len &&
            !memcmp(s.images[i].build_id, a->img->build_id, a->img->build_id_len))
            im = &s.images[i];
    bool ok = false;
    if (!im || !im->totals[0]) {
        char hex[129];
        snprintf(err, errlen, "%s: no cycle samples of %s (build-id %s) in the selection", s.db,
                 image_path, a->img->build_id_len ? image_build_id_hex(a->img, hex, sizeof hex) : "none");
        goto out;
    }
    a->samples = (double)im->totals[0];
    a->period = est_mean_period(im->period_sums[0], im->totals[0]);
    a->ncol = im->n;
    a->col_addr = malloc((im->n + 1) * sizeof *a->col_addr);
    a->col_samples = malloc((im->n + 1) * sizeof *a->col_samples);
    if (!a->col_addr || !a->col_samples) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < im->n; i++) {
        a->col_addr[i] = im->offsets[i];
        a->col_samples[i] = (double)im->counts[i * im->nevents];
    }
    if (!(a->cfg = cfg_build(a->img, err, errlen)))
        goto out;
    est_sample_col col = { a->col_addr, a->col_samples, a->ncol };
    a->freq = est_freq_from_samples(a->cfg, &col, a->period, NULL, &a->sched, err, errlen);
    ok = a->freq != NULL;
out:
    est_free(&s);
    if (!ok) {
        est_analysis_free(a);
        return NULL;
    }
    return a;
}
