/*
 * tools/axp/sample_log.h: every PMU sample in the order the machine took
 * it, as text, for replaying the real sample stream through the driver
 * (tests/driver/drv_replay.c) and for comparing runs.
 *
 * Format: a comment line, then one line per sample, "CPU PID PC EVENT"
 * with PC in hex ("0 1000 0x1200012a0 0").
 */
#ifndef TOOLS_AXP_SAMPLE_LOG_H
#define TOOLS_AXP_SAMPLE_LOG_H

#include <stdint.h>
#include <stdio.h>

/* NULL with errno set when path cannot be written. */
FILE *sample_log_open(const char *path);
void sample_log_put(FILE *f, int cpu, int pid, uint64_t pc, unsigned event);
/* 0, or -1 with errno set when anything could not be written. */
int sample_log_close(FILE *f);

#endif
