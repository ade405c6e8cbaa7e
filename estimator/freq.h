/*
 * estimator/freq.h: block and edge frequencies with their confidence, for
 * every procedure of an image.
 *
 * One shape for every source of frequencies: exact counts (axp --exact,
 * the ground truth) and estimates from samples.  The optimizer lays code out
 * from it and `cpo accuracy` compares two of them.  Edges are the CFG's own
 * (cfg_proc.edges), including those from the virtual entry and to the exit.
 */
#ifndef ESTIMATOR_FREQ_H
#define ESTIMATOR_FREQ_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "profdb/exact.h"

typedef enum { EST_CONF_LOW, EST_CONF_MEDIUM, EST_CONF_HIGH, EST_CONF_EXACT } est_conf;

typedef struct est_proc_freq {
    double  *block;      /* [proc->nblocks] estimated executions */
    uint8_t *block_conf; /* est_conf per block */
    double  *edge;       /* [proc->nedges] estimated executions, like proc->edges */
    uint8_t *edge_conf;
    double   samples;    /* cycle samples in the procedure (0 for exact) */
} est_proc_freq;

typedef struct est_freq {
    const cfg_program *cfg;
    est_proc_freq *procs;   /* parallel to cfg->procs */
} est_freq;

/* Empty frequencies (all zero, confidence low) for every procedure. */
est_freq *est_freq_new(const cfg_program *cfg);
void est_freq_free(est_freq *f);
const char *est_conf_name(unsigned conf);

/* Exact counts of the image cfg was built from, found in ex by build-id
 * (by path when the image has none).  NULL with a message when the counts
 * hold no such image or memory runs out. */
est_freq *est_freq_from_exact(const cfg_program *cfg, const profdb_exact *ex, char *err,
                              size_t errlen);

#endif
