/*
 * service/service.h: the continuous-optimization service (docs/service.md).
 *
 * `cpo serve` looks after the programs its configuration names: it watches
 * the profile database cpod fills, and when a program's profile has
 * converged it has the optimizer rewrite the program's original build,
 * checks the candidate, deploys it atomically, judges it on the profiles
 * that follow, and rolls it back when it is worse.  Everything it decides
 * is kept in a state directory that a kill at any moment leaves consistent.
 */
#ifndef SERVICE_SERVICE_H
#define SERVICE_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { SVC_WORK_RUNS, SVC_WORK_CALLS } svc_work_kind;

typedef struct svc_program {
    char *name;
    unsigned line;           /* of its [program NAME] heading */
    char *original;          /* the build as made: read, never written */
    char *deploy;            /* where the running executable lives */
    svc_work_kind work;      /* a unit of work: one run, or one call of work_proc */
    char *work_proc;
    char *test;              /* shell command checking $EXE under $RUN */
    double test_timeout;     /* seconds */
    uint64_t min_samples;    /* cycle samples behind any decision */
    double converge;         /* overlap of successive epochs' procedure shares */
    double min_gain;         /* predicted share of cycles saved to deploy */
    double regression;       /* rollback when cycles per unit rise by more */
    unsigned keep;           /* versions kept besides the deployed one */
} svc_program;

typedef struct svc_config {
    char *path;
    char *db;                /* the database cpod fills */
    char *state;             /* versions, state and log */
    double poll;             /* seconds between looks */
    char *tools;             /* directory of optimize-image and axp */
    char *axp;               /* $RUN for checks on axp */
    char *qemu;              /* $RUN for checks on qemu-alpha */
    size_t nprograms;
    svc_program *programs;
} svc_config;

/* Read a configuration file; relative paths in it are relative to its
 * directory.  False with "FILE:LINE: what is wrong" in err, or "FILE: what is
 * wrong" when no one line is to blame (a missing 'db', no program). */
bool svc_config_load(const char *path, const char *tools, svc_config *out, char *err,
                     size_t errlen);
void svc_config_free(svc_config *c);

typedef struct svc_options {
    bool once;               /* one pass over the programs, then return */
    double max_seconds;      /* stop after this long (0: never) */
} svc_options;

/* Serve until SIGTERM (or after one pass with once).  Returns the exit
 * status: 0 after a clean stop, 1 when the service could not start or
 * started with no program it could look after. */
int svc_serve(const char *config_path, const char *tools, const svc_options *o);

/* What the service is doing and has done, from its state directory. */
int svc_status(const svc_config *c, FILE *out);

#endif
