/*
 * tools/axp/sample_log.h: every PMU sample in the order the machine took
 * it, as text, for replaying the real sample stream through the driver
 * (tests/driver/drv_replay.c) and for comparing runs.
 *
 * Format: a comment line, then one line per sample, "CPU PID PC EVENT"
 * with PC in hex ("0 1000 0x1200012a0 0").  With --stacks each line goes
 * on with why the walk stopped (machine.h's axp_stack_end_names) and the
 * callers' call instructions, innermost first
 * ("0 1000 0x1200012a0 0 complete 0x120001310 0x120001f08").
 */
#ifndef TOOLS_AXP_SAMPLE_LOG_H
#define TOOLS_AXP_SAMPLE_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "common/outfile.h"
#include "machine/machine.h"

/* Starts the log in a temporary next to path (common/outfile.h): the
 * stream to write it with, or NULL with "PATH: why" in err.  An earlier
 * file at path stays as it was until outfile_commit(o) renames the whole
 * log into place (it says whether every write reached the file);
 * outfile_abort(o) removes the temporary instead. */
FILE *sample_log_open(outfile *o, const char *path, char *err, size_t errlen);
/* st: the sample's stack, NULL without --stacks. */
void sample_log_put(FILE *f, int cpu, int pid, uint64_t pc, unsigned event, const axp_stack *st);

#endif
