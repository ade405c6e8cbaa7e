/* tools/cpo: one file per subcommand, each a thin front end over a library
 * room.  Every command returns the process exit status: 0 on success, 1 on a
 * reported error, 2 on a usage error. */
#ifndef CPO_COMMANDS_H
#define CPO_COMMANDS_H

#include "estimator/diff.h"
#include "estimator/profset.h"
#include "estimator/samples.h"

int cmd_disasm(int argc, char **argv);   /* cmd_disasm.c: alpha/ + image/ */
int cmd_syms(int argc, char **argv);     /* cmd_syms.c: image/ symbols */
int cmd_relocs(int argc, char **argv);   /* cmd_relocs.c: image/ relocations */
int cmd_info(int argc, char **argv);     /* cmd_info.c: image/ summary */
int cmd_cfg(int argc, char **argv);      /* cmd_cfg.c: cfg/ */
int cmd_addrmap(int argc, char **argv);  /* cmd_addrmap.c: rewriter/ address map */
int cmd_cat(int argc, char **argv);      /* cmd_cat.c: profdb/ one profile file */
int cmd_prof(int argc, char **argv);     /* cmd_prof.c: estimator/ samples per procedure */
int cmd_list(int argc, char **argv);     /* cmd_list.c: estimator/ + alpha/ per instruction */
int cmd_stats(int argc, char **argv);    /* cmd_stats.c: estimator/ statistics across sets */
int cmd_diff(int argc, char **argv);     /* cmd_diff.c: estimator/ differences, rewriter/ address maps */
int cmd_accuracy(int argc, char **argv); /* cmd_accuracy.c: estimator/ against exact counts */
int cmd_values(int argc, char **argv);   /* cmd_values.c: profdb/ value profiles */
int cmd_profileme(int argc, char **argv); /* cmd_profileme.c: profdb/ + estimator/ ProfileMe profiles */
/* cmd_profileme.c, for cpo list --profileme: an image's ProfileMe
 * entries (false: an error, said), and its columns (e NULL: blanks). */
struct profdb_pm;
bool cpo_pm_load(const est_set *s, const est_image *im, struct profdb_pm **e, size_t *n);
void cpo_pm_header(void);
void cpo_pm_columns(const struct profdb_pm *e);
/* cpo list --paths: the likely paths to the instruction at addr (0: the
 * most sampled of [lo, hi) with a branch history), at most top. */
int cpo_pm_paths(const est_image *im, const struct profdb_pm *e, size_t n, uint64_t lo, uint64_t hi, uint64_t addr,
                 size_t top);
int cmd_calc(int argc, char **argv);     /* cmd_calc.c: estimator/ frequencies and CPI */
int cmd_export(int argc, char **argv);   /* cmd_export.c: estimator/ pprof export */
/* prof_stacks.c: cpo prof --callers/--callees PROC (proc non-NULL) or
 * --folded (proc NULL), from the selection's stacks. */
int cpo_prof_stacks(est_selection *sel, const char *proc, bool callers, size_t limit);
int cmd_flush(int argc, char **argv);    /* cmd_daemon.c: steer cpod */
int cmd_epoch(int argc, char **argv);    /* cmd_daemon.c */
int cmd_quit(int argc, char **argv);     /* cmd_daemon.c */
int cmd_paths(int argc, char **argv);    /* cmd_paths.c: paths/ path profiles */
int cmd_cct(int argc, char **argv);      /* cmd_cct.c: paths/ calling context trees */
int cmd_report(int argc, char **argv);   /* cmd_report.c: report/ */
int cmd_serve(int argc, char **argv);    /* cmd_serve.c: service/ */
int cmd_status(int argc, char **argv);   /* cmd_serve.c */

/* source.c: source lines beside instructions.  cpo_source_heading prints
 * "file:line:  text" when the instruction at pc starts another line than
 * the last one printed; false when the image has no line for pc. */
typedef struct cpo_source {
    char *name, *text;
    char **lines;
    size_t n;
    bool missing;
    const char *last_file;      /* the image's string, as libbfd gave it */
    unsigned last_line;
} cpo_source;
const char *cpo_source_line(cpo_source *s, const char *file, unsigned line);
bool cpo_source_heading(cpo_source *s, image *img, uint64_t pc);
void cpo_source_free(cpo_source *s);

/* per_image.c: the frame of cpo values and cpo profileme.  option takes
 * a command's own option at argv[*i] (1; -1 when misused, said; 0: not
 * one of its own); load reads one image's items into one malloc'd block
 * (NULL, 0: none; false when they do not read, said), every image before
 * any is shown; show prints the items within [lo, hi) (PROC's range, or
 * everything) and returns how many it showed. */
typedef struct cpo_report cpo_report;
struct cpo_report {
    const char *cmd, *usage;
    const char *nothing;        /* "(no NOTHING)" when nothing showed */
    int (*option)(cpo_report *r, int argc, char **argv, int *i);
    bool (*load)(const cpo_report *r, profdb *db, const est_set *s, const est_image *im, void **items,
                 size_t *n);
    size_t (*show)(const cpo_report *r, const est_image *im, const void *items, size_t n, uint64_t lo,
                   uint64_t hi, bool *first);
    void *ctx;                  /* the command's own options */
    /* set by the options */
    const char *proc, *want;
    bool json;
};
int cpo_report_images(int argc, char **argv, cpo_report *r);
/* --image IMAGE names im: its recorded path, file name, or key prefix. */
bool cpo_image_named(const est_image *im, const char *want);

/* origin.c: est_origin_fn for a rewritten image (its address map), NULL
 * ctx; an image without a map is no rewritten one; a damaged map is
 * reported and the image taken as it is. */
bool cpo_origin_of(void *ctx, const image *img, est_origin *out);

/* selection.c.  The selection option at argv[*i] (with its argument, which
 * *i then passes): 1 when it was one, 0 when argv[*i] is something else,
 * -1 on a misuse (missing argument, both --epoch and --all-epochs), with
 * err naming the option. */
int cpo_selection_arg(est_selection *sel, int argc, char **argv, int *i, est_error *err);
/* Frees what cpo_selection_arg allocated (the event list). */
void cpo_selection_release(est_selection *sel);
/* Shared by prof, list and export.  Finish the selection
 * options (rc: the status so far); returns the exit status, releasing sel
 * when it is not 0.  Then load the set: 0; -1 when that failed (message
 * printed, sel released: exit 1); 1 when an event asked for has no
 * samples (message printed, s loaded and sel kept: free both). */
int cpo_selection_finish(const char *cmd, est_selection *sel, int rc);
int cpo_selection_load(est_selection *sel, est_set *s);
/* --limit N of prof, diff, stats and report: false (said, naming cmd)
 * unless s is a whole number of at least 1. */
bool cpo_limit_arg(const char *cmd, const char *s, size_t *out);

#endif
