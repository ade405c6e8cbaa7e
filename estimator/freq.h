/*
 * estimator/freq.h: block and edge frequencies with their confidence, for
 * every procedure of an image.
 */
#ifndef ESTIMATOR_FREQ_H
#define ESTIMATOR_FREQ_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"

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

void est_freq_free(est_freq *f);

#endif
