/*
 * tools/axp/paths.h: `axp run --paths FILE --cct FILE`: the path tracker
 * (paths/track.h) on the machine's hooks, and its files.
 */
#ifndef AXP_PATHS_H
#define AXP_PATHS_H

#include <stdio.h>

#include "machine/machine.h"

typedef struct axp_paths axp_paths;

/* Attach a tracker for a path profile (paths) and/or a calling context
 * tree (cct) to m, after every other image hook is set; NULL with a
 * message when out of memory. */
axp_paths *axp_paths_start(axp_machine *m, int want_paths, int want_cct, char *err, size_t errlen);
/* Contexts only for the procedures with a node in the tree in `file`
 * (track_cct_only); 0, or -1 with a message. */
int axp_paths_cct_only(axp_paths *p, const char *file, char *err, size_t errlen);
/* After the run: write what was asked; 0, or -1 with a message. */
int axp_paths_write_paths(axp_paths *p, FILE *f);
int axp_paths_write_cct(axp_paths *p, FILE *f);
int axp_paths_finish(axp_paths *p, char *err, size_t errlen);
void axp_paths_free(axp_paths *p);

#endif
