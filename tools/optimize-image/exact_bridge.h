/* tools/optimize-image/exact_bridge.h: est_freq from axp --exact counts. */
#ifndef OPTIMIZE_IMAGE_EXACT_BRIDGE_H
#define OPTIMIZE_IMAGE_EXACT_BRIDGE_H

#include "estimator/freq.h"

est_freq *exact_bridge_read(const cfg_program *cfg, const char *path, char *err, size_t errlen);

#endif
