/* tools/optimize-image/exact_bridge.h: est_freq from axp --exact counts. */
#ifndef OPTIMIZE_IMAGE_EXACT_BRIDGE_H
#define OPTIMIZE_IMAGE_EXACT_BRIDGE_H

#include "estimator/freq.h"

/* shared[nsets], when not NULL, gets the executions per I-cache set of the
 * lines of every other image's code (shared libraries). */
est_freq *exact_bridge_read(const cfg_program *cfg, const char *path, double *shared,
                            uint32_t line_size, uint32_t nsets, char *err, size_t errlen);
/* The most frequent in-image target of each JMP/JSR of the image. */
#include "optimizer/optimize.h"
bool exact_bridge_jumps(const cfg_program *cfg, const char *path, opt_jump **out, size_t *n,
                        char *err, size_t errlen);

#endif
