/*
 * estimator/profset.h: naming profile selections on the command line.
 *
 * Commands that read one selection take --db DIR (default $CPO_DB),
 * --epoch E or --all-epochs, and -e EVENT (repeatable).  Commands that
 * compare selections (cpo stats, cpo diff) name each one as a SET:
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

/* The selection option at argv[*i] (with its argument, which *i then
 * passes): returns 1 when it was one, 0 when argv[*i] is something else,
 * -1 on a misuse (missing argument, both --epoch and --all-epochs), with
 * err naming the option. */
int est_selection_arg(est_selection *sel, int argc, char **argv, int *i, est_error *err);
/* After the options: the database defaults to $CPO_DB; none at all is an
 * error naming --db. */
bool est_selection_finish(est_selection *sel, est_error *err);
/* Frees what est_selection_arg allocated (the event list). */
void est_selection_release(est_selection *sel);

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
