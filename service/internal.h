/*
 * service/internal.h: the service's own parts.
 */
#ifndef SERVICE_INTERNAL_H
#define SERVICE_INTERNAL_H

#include <stdio.h>

#include "profdb/profdb.h"
#include "service/service.h"

/* ---- small helpers (util.c) ---- */
char *svc_join(const char *dir, const char *name);
char *svc_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *svc_dirname(const char *path);
/* One line in STATE/serve.log and on stderr, stamped with the time. */
void svc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool svc_log_open(const char *state_dir, char *err, size_t errlen);
void svc_log_close(void);
/* Run argv (or "sh -c cmd" when argv is NULL) with extra environment
 * "K=V" strings, stdout and stderr to out_path, killed after timeout
 * seconds.  Returns the wait status, or -1 with err when it could not run
 * or timed out. */
int svc_run(char *const argv[], const char *cmd, char *const env[], const char *out_path,
            double timeout, char *err, size_t errlen);
/* Copy src to dst atomically (a temporary beside dst renamed over it),
 * with mode. */
bool svc_copy(const char *src, const char *dst, unsigned mode, char *err, size_t errlen);
/* Whether two files hold the same bytes. */
bool svc_same_file(const char *a, const char *b);
/* The build-id of an image as hex ("" when it has none); false when the
 * file cannot be read as an image. */
bool svc_build_id(const char *path, char hex[129], char *err, size_t errlen);
/* rm -r of a directory the service made (versions). */
void svc_remove_tree(const char *path);

/* ---- the state of one program (store.c) ---- */
#define SVC_PHASE_WATCHING "watching"
#define SVC_PHASE_DEPLOYING "deploying"
#define SVC_PHASE_JUDGING "judging"

typedef struct svc_state {
    char build[129];          /* build-id of the original the versions come from */
    unsigned base;            /* the version holding that original */
    unsigned deployed;        /* the version at the deploy path */
    unsigned previous;        /* what it is judged against */
    unsigned target;          /* deploying: the version being installed */
    unsigned next;            /* the next version's number */
    char phase[16];
    char then[16];            /* deploying: the phase after it */
    int stale;                /* an older build's base whose profile carries
                                 over to this build, or -1 */
    int reference;            /* the older build's version that last ran:
                                 what this build is judged against, or -1 */
    bool carried;             /* the round on the carried-over profile is done */
    char through[PROFDB_EPOCH_MAX];  /* the newest epoch a round has used */
    char since[PROFDB_EPOCH_MAX];    /* judging: the epoch current at the deploy */
    char **history;           /* "TIME VERSION WHAT: TEXT", oldest first */
    size_t nhistory;
} svc_state;

typedef struct svc_prog {
    const svc_config *cfg;
    const svc_program *p;
    char *dir;                /* STATE/NAME */
    svc_state st;
    bool install_failed;      /* an install to retry; its failure logged once */
    ino_t deploy_ino;         /* the deploy path's file when it last held the
                                 deployed version (0: not checked yet) */
    bool deploy_warned;       /* that it no longer does, logged */
} svc_prog;

char *svc_version_dir(const svc_prog *g, unsigned v);
char *svc_version_exe(const svc_prog *g, unsigned v);
/* Whether the deploy path holds the deployed version's bytes. */
bool svc_deploy_holds(const svc_prog *g);
/* Load STATE/NAME/state, or start one from the deploy path and the original
 * (version 0); finishes a deploy a kill interrupted. */
bool svc_state_open(svc_prog *g, char *err, size_t errlen);
bool svc_state_save(svc_prog *g, char *err, size_t errlen);
/* Read a state file without touching anything (cpo status). */
bool svc_state_read(const char *path, svc_state *st, char *err, size_t errlen);
void svc_state_free(svc_state *st);
bool svc_history(svc_prog *g, unsigned version, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Install version v at the deploy path, atomically, and record it. */
bool svc_install(svc_prog *g, unsigned v, char *err, size_t errlen);
/* Drop versions beyond the policy's count (never base, deployed, previous). */
void svc_prune(svc_prog *g);

/* ---- what the profiles say (measure.c) ---- */
typedef struct svc_profile {
    uint64_t samples;         /* cycle samples of the image */
    double cycles;            /* the cycles they stand for */
    uint64_t exits[3];        /* by PROFDB_EXIT_* */
    double units;             /* units of work done */
    size_t nprocs;
    char **names;             /* per procedure, sorted by name */
    double *counts;
} svc_profile;
/* The profile of the image at exe (by its build-id) in one epoch (NULL:
 * all of them). */
bool svc_measure(profdb *db, const char *epoch, const char *exe, const svc_program *p,
                 svc_profile *out, char *err, size_t errlen);
void svc_profile_free(svc_profile *p);
/* Sum of the smaller share of each procedure: 1 when they agree. */
double svc_overlap(const svc_profile *a, const svc_profile *b);
/* Cycles per unit of work, 0 when no unit is known. */
double svc_cycles_per_unit(const svc_profile *p);

/* ---- one round: optimize, check (round.c) ---- */
/* Make version g->st.next from the profile, check it; on success it is in
 * versions/N, ready to install.  False with the reason (the round is
 * recorded in the history either way by the caller). */
bool svc_round(svc_prog *g, profdb *db, double profile_cycles, unsigned *made, char *err,
               size_t errlen);

#endif
