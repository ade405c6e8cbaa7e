/*
 * collector/cpod.h: the cpod daemon, and how machines find it.
 *
 * cpod serves one profile database directory DB on one host.  Everything it
 * keeps besides the profiles lives in DB/.cpod/HOST/ (docs/cpod.md):
 *
 *   lock        the serving daemon's pid, under an open-file-description lock
 *   control     the unix socket that `cpo flush|epoch|quit` talk to
 *   log         the log, unless --log names another file
 *   merged, pending   the state of the last merge into the database
 *   regions ->  a directory on a tmpfs holding one driver region per
 *               attached machine (NAME.drv), what the machine says about its
 *               events (NAME.meta) and the daemon's journal of it
 *               (NAME.journal)
 *
 * A machine calls cpod_attach() once at start: it gets a region of its own,
 * created in the regions directory, and uses it through collector/driver.h
 * (drv_sample, drv_poll, the notices, drv_close at the end).  The daemon
 * notices the new region, drains it while the machine runs and salvages it
 * when the machine is gone, crashed or not.
 */
#ifndef COLLECTOR_CPOD_H
#define COLLECTOR_CPOD_H

#include <stdbool.h>
#include <stddef.h>

#include "collector/driver.h"

/* The standard event numbers a machine passes to drv_sample().  A machine
 * may use other numbers and names (cpod_event below); these are what the
 * daemon assumes when a machine names none. */
enum {
    CPOD_EV_CYCLES = 0,
    CPOD_EV_IMISS = 1,
    CPOD_EV_DMISS = 2,
    CPOD_EV_BRANCHMP = 3,
    CPOD_EV_DTBMISS = 4,
    CPOD_EV_ITBMISS = 5,
    CPOD_EV_REPLAYTRAP = 6,
    CPOD_EV_SCMISS = 7,
    CPOD_EV_BCMISS = 8,
    CPOD_EV_ISSUES = 9,
    CPOD_NSTD_EVENTS
};

/* The standard name of event id ("cycles", ...), or NULL. */
const char *cpod_std_event_name(unsigned id);

/* What one event number means on a machine: its profile name (1..63 bytes
 * of [A-Za-z0-9_.-]) and the mean sampling period, in events per sample
 * (0: unknown). */
typedef struct cpod_event {
    unsigned id;
    const char *name;
    double mean_period;
} cpod_event;

#define CPOD_MAX_EVENT_NAME 63

typedef struct cpod_machine {
    unsigned ncpus;               /* 1..DRV_MAX_CPUS */
    const cpod_event *events;     /* NULL: the standard names, periods unknown */
    size_t nevents;
    const char *name;             /* shown in the daemon's log; NULL: "pid N" */
    drv_params drv;               /* sizes and policies; ncpus is taken from above */
} cpod_machine;

/* Create a region of its own for a machine feeding the daemon of db_dir,
 * and attach to it as the producer.  Works whether or not a daemon is
 * running: samples wait in the region (drop mode: until its buffers fill)
 * and a daemon started later takes them.  The region's path goes to
 * path_out if not NULL.  NULL on failure, with err naming what failed. */
drv *cpod_attach(const char *db_dir, const cpod_machine *m, char *path_out, size_t path_size,
                 drv_error *err);

/* Is a daemon serving db_dir on this host?  Its pid in *pid if so. */
bool cpod_running(const char *db_dir, int *pid);

/* ---- locations ------------------------------------------------------------ */

#define CPOD_PATH_MAX 4096

/* DB/.cpod/HOST (HOST escaped as in profdb), created if create is set. */
bool cpod_state_dir(const char *db_dir, bool create, char out[CPOD_PATH_MAX], char *msg,
                    size_t msg_size);
/* The regions directory (the target of STATE/regions), created with the
 * link if create is set: a private directory on /dev/shm named after the
 * state directory, else STATE/regions itself. */
bool cpod_regions_dir(const char *state_dir, bool create, char out[CPOD_PATH_MAX], char *msg,
                      size_t msg_size);

/* "30", "30s", "250ms", "5m", "2h", "1.5s" -> milliseconds; false if malformed
 * or not positive. */
bool cpod_parse_interval(const char *s, long long *ms);

/* ---- the daemon ----------------------------------------------------------- */

typedef struct cpod_options {
    const char *db_dir;
    long long drain_ms;           /* hash tables drained this often (0: default 5 min) */
    long long flush_ms;           /* merged into the database this often (0: default 10 min) */
    const char *const *per_process;   /* images that get per-process profiles */
    size_t nper_process;
    const char *log_path;         /* NULL: STATE/log, or stderr when log_stderr */
    bool log_stderr;
    int flush_timeout_ms;         /* how long a machine may take to answer a flush (0: 5000) */
    unsigned long long journal_limit;  /* bytes journalled before an early merge (0: 64 MiB) */
} cpod_options;

typedef struct cpod cpod;

/* Take the lock, open the database, bind the control socket, attach to the
 * regions already there.  NULL with a message when another daemon serves
 * the directory or anything else is wrong. */
cpod *cpod_open(const cpod_options *o, char *msg, size_t msg_size);

/* Serve until SIGTERM, SIGINT or `cpo quit`, then flush and return the exit
 * status.  SIGHUP reopens the log.  Blocks those signals in the caller. */
int cpod_serve(cpod *d);

void cpod_close(cpod *d);

#endif
