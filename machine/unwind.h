/*
 * machine/unwind.h: the stack walk at a PMU sample (unwind.c), inside the
 * machine.  The timed executor tells it, block by block, the state the
 * registers are in; the sample sink asks it for the interrupted thread's
 * calling context.
 */
#ifndef MACHINE_UNWIND_H
#define MACHINE_UNWIND_H

#include <stdint.h>
#include <stdio.h>

#include "machine/axp.h"

typedef struct unwinder unwinder;

/* The block the executor just retired on CPU cpuno, registers as it left
 * them: its first and last instruction, the last one's word, and where
 * control went.  Only called with stacks on. */
static inline void unwind_block(machine *m, int cpuno, thread *t, uint64_t first, uint64_t last,
                                uint32_t word, uint64_t next)
{
    cpu *c = &m->cpus[cpuno];
    c->st_t = t;
    c->st_first = first;
    c->st_last = last;
    c->st_word = word;
    c->st_next = next;
}

/* Walk CPU cpuno's thread for a sample at pc; the result stays valid
 * until the next walk. */
const axp_stack *unwind_sample(machine *m, int cpuno, uint64_t pc);
void unwind_write_stats(machine *m, FILE *f);
void unwind_free(machine *m);

#endif
