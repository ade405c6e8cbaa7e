/*
 * tools/axp/values_log.h: every value-sampling record in the order the
 * machine made it, as text, for tests and for checking hot lists against
 * what the runs really saw.
 *
 * Format: a comment line naming the columns, then one line per recorded
 * instruction: "RUN INDEX CPU PID TID PC RESULT EA LATENCY LEVEL TARGET
 * TAKEN", numbers in hex where they are addresses or values, "-" where
 * the instruction has no such value.  LEVEL is d, s, b or m (D-cache,
 * S-cache, B-cache, memory).
 */
#ifndef TOOLS_AXP_VALUES_LOG_H
#define TOOLS_AXP_VALUES_LOG_H

#include <stdio.h>

#include "common/outfile.h"
#include "machine/machine.h"

/* Starts the log in a temporary next to path, as sample_log_open does
 * (sample_log.h): the stream, or NULL with "PATH: why" in err; committed
 * with outfile_commit(o), given up with outfile_abort(o). */
FILE *values_log_open(outfile *o, const char *path, char *err, size_t errlen);
void values_log_put(void *f, const axp_value *v);   /* an axp_value_hook */

#endif
