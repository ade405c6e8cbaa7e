/*
 * estimator/common.h: small helpers the estimator's files share (not part
 * of its API).
 */
#ifndef ESTIMATOR_COMMON_H
#define ESTIMATOR_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "estimator/samples.h"

/* Sample counts add up without wrapping: a count pinned at the maximum is
 * wrong in a visible way, a wrapped one silently. */
static inline uint64_t est_add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static inline bool est_oom(est_error *err)
{
    if (err)
        snprintf(err->msg, sizeof err->msg, "out of memory");
    return false;
}

/* A warning to warn(ctx, message), or "cpo: warning: MESSAGE" on stderr
 * when warn is NULL (estimator/samples.c). */
void est_warnf(void (*warn)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
