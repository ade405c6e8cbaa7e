/*
 * estimator/profset.h: naming profile selections as text.
 *
 * Commands that compare selections (cpo stats, cpo diff) name each one as
 * a SET (the options of a single selection are the front end's:
 * tools/cpo/selection.c):
 *
 *   DIR           the database's current epoch
 *   DIR@EPOCH     one epoch (YYYYMMDDTHHMMSSZ, perhaps with -NNN)
 *   DIR@all       every epoch summed
 *   DIR@current   the current epoch, spelled out
 *
 * A DIR whose own name contains '@' is taken whole when it exists.
 */
#ifndef ESTIMATOR_PROFSET_H
#define ESTIMATOR_PROFSET_H

#include <stdbool.h>

#include "estimator/samples.h"

typedef struct est_setspec {
    char *text;          /* as given, for headings */
    char *db;
    char *epoch;         /* NULL: the current epoch */
    bool all_epochs;
} est_setspec;

/* Parse a SET; a bad one is an error quoting it. */
bool est_parse_set(const char *text, est_setspec *out, est_error *err);
void est_setspec_free(est_setspec *spec);
/* A selection reading spec (events and the rest left as they are). */
void est_setspec_select(const est_setspec *spec, est_selection *sel);

#endif
