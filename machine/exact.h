/*
 * machine/exact.h: exact execution counts (axp run --exact FILE).
 *
 * Off, none of this runs: the executors test one pointer per block.  On,
 * every block entry, every control transfer and every fault is counted
 * against the image (mapped ELF file) and link-time address it happened at.
 */
#ifndef MACHINE_EXACT_H
#define MACHINE_EXACT_H

#include "machine/axp.h"

void exact_attach(thread *t, block *b);          /* a block was translated */
void exact_detach(machine *m, mm *x, block *b);  /* it is being freed */
void exact_thread_exit(thread *t);               /* no successor will come */

#endif
