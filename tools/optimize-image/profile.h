/*
 * tools/optimize-image/profile.h: the optimizer's inputs from axp's exact
 * counts, through the estimator (est_freq_from_exact) and profdb's reader.
 */
#ifndef OPTIMIZE_IMAGE_PROFILE_H
#define OPTIMIZE_IMAGE_PROFILE_H

#include "estimator/freq.h"
#include "optimizer/optimize.h"

typedef struct oi_profile {
    est_freq *freq;         /* summed over the files */
    double *shared;         /* [nsets] other images' executions per I-cache set */
    opt_jump *jumps;        /* each JMP/JSR's most frequent in-image target */
    size_t njumps;
    /* Each run's own frequencies and shared heat, where the source keeps
     * runs apart (each --exact file is one run; from samples, each kind of
     * process in the per-process profiles): the I-cache model walks them
     * one after the other. */
    est_freq **runs;
    double **run_shared;
    size_t nruns;
} oi_profile;

/* Read files[0..n) (axp --exact) for the image of cfg.  False with a
 * message naming the file on error. */
bool oi_profile_exact(const cfg_program *cfg, const char *const *files, size_t n,
                      uint32_t line, uint32_t nsets, oi_profile *out, char *err, size_t errlen);
/* The estimator's frequencies from a profile selection's cycle samples,
 * those of rewritten copies carried back, and those of the older builds
 * named by stale (and their copies) matched by est_freq_match.  shared:
 * the cycle samples of the shared libraries the image loads, as
 * executions per I-cache set (line bytes a line); jumps: the value
 * profiles' most frequent targets, when there are any.  *none tells a
 * selection without samples of the image (or of its copies) from other
 * failures. */
struct est_selection;
bool oi_profile_samples(const cfg_program *cfg, const struct est_selection *sel, uint32_t line,
                        uint32_t nsets, const char *const *stale, size_t nstale, oi_profile *out,
                        bool *none, char *err, size_t errlen);
/* Add from, the same image's profile from another database, into to:
 * frequencies and shared-library heat summed, jump targets counted
 * together.  False when memory runs out. */
bool oi_profile_add(oi_profile *to, oi_profile *from, uint32_t nsets);
void oi_profile_free(oi_profile *p);

#endif
