/*
 * collector/cpod_internal.h: the daemon's structures, shared by the
 * collector/cpod_*.c files and nothing else.
 *
 * Data flow: a region's entries (pid, pc, event, count) go through that
 * machine's process maps (cpod_procs) to an image and a link-time offset,
 * then into the live profile set (cpod_profset), keyed by image, event and,
 * for images named with --per-process, pid.  A flush hands the live set to
 * the merge thread and starts a new one.  Everything but the merge itself
 * runs on the main thread.
 */
#ifndef COLLECTOR_CPOD_INTERNAL_H
#define COLLECTOR_CPOD_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "collector/cpod.h"
#include "collector/driver.h"
#include "collector/driver_stacks.h"
#include "profdb/profdb.h"
#include "profdb/values.h"
#include "profdb/profileme.h"
#include "profdb/stacks.h"

#define CPOD_PAGE          8192u      /* Alpha's page size */
#define CPOD_MAX_CLIENTS   256        /* control clients served at once; more get a refusal */
#define CPOD_MAX_MAPS      4096u      /* mappings per process */
#define CPOD_IMAGE_CACHE   256u       /* unreferenced images kept for their headers */
#define CPOD_EVNAME_MAX    1024u      /* distinct event names interned */

/* The control socket's address: STATE/control, or when that is too long for
 * sun_path, /proc/self/fd/N/control through a descriptor on the directory
 * (returned; close it after connect or bind).  -1: none needed; -2: error. */
int cpod_control_addr(const char *state_dir, struct sockaddr_un *sa, socklen_t *len);

/* ---- log (cpod_log.c) ------------------------------------------------------ */

bool cpod_log_open(const char *path, char *msg, size_t msg_size);   /* NULL: stderr */
bool cpod_log_reopen(void);
void cpod_log_close(void);
void cpod_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* snprintf for messages, where a long path may cut the text short. */
void cpod_msg(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- events (cpod_events.c) ------------------------------------------------ */

typedef struct cpod_evdef {
    const char *name;      /* interned; NULL until first used */
    double period;
} cpod_evdef;

typedef struct cpod_meta {
    char name[128];
    unsigned ncpus;
    long pid;
    char evname[256][CPOD_MAX_EVENT_NAME + 1];   /* "" where the machine named none */
    double period[256];
} cpod_meta;

bool cpod_event_name_ok(const char *s);
const char *cpod_intern_event(const char *name);
void cpod_intern_free(void);
/* Read NAME.meta; false with a message naming the file and line. */
bool cpod_meta_read(const char *path, cpod_meta *m, char *msg, size_t msg_size);
bool cpod_meta_write(const char *path, const cpod_machine *m, char *msg, size_t msg_size);
/* Event id's name and period on a machine described by m (NULL: standard). */
void cpod_meta_event(const cpod_meta *m, unsigned id, cpod_evdef *out);

/* ---- images (cpod_images.c) ------------------------------------------------ */

typedef struct cpod_seg {
    uint64_t lo, hi;       /* file range [lo, hi) of a PT_LOAD segment */
    uint64_t delta;        /* link-time address = file offset + delta */
} cpod_seg;

typedef struct cpod_image {
    struct cpod_image *next;            /* hash chain */
    struct cpod_image *lru_prev, *lru_next;   /* unreferenced ones, newest first */
    char key[PROFDB_KEY_MAX];
    char *path;
    uint8_t bid[PROFDB_MAX_BUILD_ID];
    size_t bidlen;
    unsigned refs;
    bool per_process;
    bool xlate;            /* program headers read: offsets are link-time addresses */
    size_t nseg;
    cpod_seg *seg;
} cpod_image;

typedef struct cpod_images {
    cpod_image **tab;
    size_t nb, n, nlru;
    cpod_image *lru_head, *lru_tail;
    char **pp;             /* --per-process arguments (with realpaths) */
    size_t npp;
} cpod_images;

void cpod_images_init(cpod_images *im, const char *const *per_process, size_t n);
void cpod_images_free(cpod_images *im);
/* A referenced image (refs + 1); NULL only when out of memory. */
cpod_image *cpod_image_get(cpod_images *im, const char *path, const uint8_t *bid, size_t bidlen);
void cpod_image_ref(cpod_image *img);
void cpod_image_unref(cpod_images *im, cpod_image *img);
/* For a mapping of file range [foff, foff+size) at base: the amount to add
 * to a pc to get the profile offset. */
uint64_t cpod_image_adj(const cpod_image *img, uint64_t base, uint64_t size, uint64_t foff);

/* ---- process maps (cpod_procs.c) ------------------------------------------- */

typedef struct cpod_map {
    uint64_t lo, hi;       /* [lo, hi) in the process */
    uint64_t foff;         /* file offset mapped at lo */
    uint64_t adj;          /* offset = pc + adj */
    cpod_image *img;
} cpod_map;

typedef struct cpod_proc {
    struct cpod_proc *next;
    uint32_t pid;
    bool dead;
    uint64_t dead_gen;     /* reap once a flush started after this one completes */
    uint32_t n, cap, last;
    cpod_map *map;         /* sorted, disjoint */
    uint32_t nold;
    uint64_t old_gen;
    cpod_map *old;         /* before the last exec (or pid reuse): samples may lag */
    cpod_image *exe;       /* the first image mapped since the last exec: the program */
} cpod_proc;

typedef struct cpod_procs {
    cpod_proc **tab;
    size_t nb, n, nmaps;
    cpod_images *im;
    cpod_proc *last;
    uint64_t refused;      /* LOADs over the per-process limit */
} cpod_procs;

void cpod_procs_init(cpod_procs *p, cpod_images *im);
void cpod_procs_free(cpod_procs *p);
/* Apply one notice; gen is the region's latest flush generation.  false
 * only when out of memory. */
bool cpod_procs_notice(cpod_procs *p, const drv_notice *n, uint64_t gen);
const cpod_map *cpod_procs_lookup(cpod_procs *p, uint32_t pid, uint64_t pc);
/* The program a process runs (its first image since the last exec), or NULL. */
cpod_image *cpod_procs_exe(cpod_procs *p, uint32_t pid);
/* The distinct images of pid's current map, dead or alive (at most max). */
size_t cpod_procs_images(cpod_procs *p, uint32_t pid, cpod_image **out, size_t max);
/* Forget exited processes and pre-exec maps older than flush done_gen. */
void cpod_procs_reap(cpod_procs *p, uint64_t done_gen);
/* Every process as notices that rebuild it (for the journal). */
typedef bool (*cpod_notice_fn)(void *ctx, const drv_notice *n);
bool cpod_procs_snapshot(const cpod_procs *p, cpod_notice_fn fn, void *ctx);

/* ---- in-memory profiles (cpod_prof.c) -------------------------------------- */

typedef struct cpod_prof {
    struct cpod_prof *next;
    cpod_image *img;       /* NULL: the unknown profile (offsets are pcs) */
    const char *event;     /* interned */
    uint32_t pid;
    bool per_pid;
    char *machine;         /* per_pid: the region the process ran on (pids
                              are the machine's: every axp run starts at 1000) */
    uint64_t total;
    double period_sum;
    size_t n, cap;         /* open addressing; cnt 0 marks a free slot */
    uint64_t *off, *cnt;
} cpod_prof;

typedef struct cpod_profset {
    cpod_prof **tab;
    size_t nb, n;
    uint64_t samples, unknown;
    cpod_prof *last;
} cpod_profset;

void cpod_profset_init(cpod_profset *s);
/* Free every profile, dropping their image references. */
void cpod_profset_free(cpod_profset *s, cpod_images *im);
cpod_prof *cpod_prof_get(cpod_profset *s, cpod_image *img, const char *event, uint32_t pid,
                         const char *machine);
bool cpod_prof_add(cpod_prof *p, uint64_t off, uint64_t count, double period);
void cpod_prof_free(cpod_prof *p, cpod_images *im);
/* The profile's pairs, sorted by offset, malloc'd. */
profdb_entry *cpod_prof_entries(const cpod_prof *p);

/* ---- stacks between merges (cpod_stacks.c) ---------------------------------- */

typedef struct cpod_stk cpod_stk;
typedef struct cpod_stkgroup cpod_stkgroup;
typedef struct cpod_stackset {
    cpod_stkgroup *groups;     /* one per (image set, event) */
    uint64_t stacks, frames, unknown_frames;
} cpod_stackset;

void cpod_stackset_init(cpod_stackset *s);
void cpod_stackset_free(cpod_stackset *s);
/* Count one record, its frames mapped through procs.  false: out of memory. */
bool cpod_stacks_add(cpod_stackset *s, cpod_procs *procs, const char *event, const drv_stack_rec *r);
/* Merge every group into db; the groups stored leave s (*done counts
 * them).  false with err set when some could not be stored (they stay in s). */
bool cpod_stacks_merge(cpod_stackset *s, profdb *db, const char *host, size_t *done, profdb_error *err);
/* The stacks (with their counts) still in s: not stored yet. */
uint64_t cpod_stacks_held(const cpod_stackset *s);

/* ---- journal (cpod_journal.c) ---------------------------------------------- */

/* Per region, what the daemon has taken from it and not yet merged: the
 * notices (so a restarted daemon knows every process's maps) and the
 * entry batches (so it can rebuild the samples a killed daemon held),
 * cut into merge generations by markers. */
enum { CPOD_J_NOTICE = 1, CPOD_J_BATCH = 2, CPOD_J_MARK = 3, CPOD_J_SNAP = 4, CPOD_J_VALUES = 5,
       CPOD_J_STACK = 6 };

typedef struct cpod_jrec {
    int type;
    const drv_notice *notice;          /* NOTICE */
    const drv_batch *batch;            /* BATCH */
    const drv_value_batch *values;     /* VALUES (n 0: where a CPU's stream stands) */
    unsigned cpu;                      /* STACK: the ring's CPU */
    const drv_stack_rec *stack;        /* STACK (n 0: where a CPU's ring stands) */
    uint64_t gen;                      /* MARK, SNAP: merge generation */
    uint64_t seq;                      /* SNAP: notices below this seq are in the snapshot */
} cpod_jrec;

typedef struct cpod_buf {
    uint8_t *p;
    size_t n, cap;
} cpod_buf;

typedef struct cpod_journal {
    int fd;
    char *path;
    uint64_t size;         /* bytes in the file */
    bool failed;           /* a write failed: off until the next rewrite */
    cpod_buf scratch;
} cpod_journal;

void cpod_buf_free(cpod_buf *b);
/* Append r, encoded, to b. */
bool cpod_jrec_encode(cpod_buf *b, const cpod_jrec *r);
typedef bool (*cpod_jrec_fn)(void *ctx, const cpod_jrec *r);
/* Open (creating) path and hand every intact record to fn; a torn or
 * damaged tail (a daemon killed mid-write) is cut off.  A false from fn
 * stops the replay and fails the open. */
bool cpod_journal_open(cpod_journal *j, const char *path, cpod_jrec_fn fn, void *ctx, char *msg,
                       size_t msg_size);
bool cpod_journal_append(cpod_journal *j, const cpod_jrec *r);
/* Replace the file by: head (encoded records), then the old file's bytes
 * from tail_from on. */
bool cpod_journal_compact(cpod_journal *j, const cpod_buf *head, uint64_t tail_from);
void cpod_journal_close(cpod_journal *j);

/* ---- the pending file's fields (cpod_journal.c, cpod_pending.c) ----------- */

/* Fields in host byte order, and a
 * reader that stops at the end of its bytes (ok goes false, reads give 0). */
bool cpod_put(cpod_buf *b, const void *p, size_t n);
bool cpod_put32(cpod_buf *b, uint32_t v);
bool cpod_put64(cpod_buf *b, uint64_t v);
typedef struct cpod_rd {
    const uint8_t *p, *end;
    bool ok;
} cpod_rd;
const uint8_t *cpod_get(cpod_rd *r, size_t n);
uint32_t cpod_get32(cpod_rd *r);
uint64_t cpod_get64(cpod_rd *r);
/* n bytes of r as a string (malloc'd; NULL and r->ok false if short). */
char *cpod_getstr(cpod_rd *r, size_t n);

/* What a target file of a merge (a value, ProfileMe or stack file) held
 * before the merge, kept in the pending file: whoever finishes the merge
 * after a stop reads the file's total again to tell whether the input
 * landed (cpod_pending.c). */
typedef struct cpod_land {
    uint64_t pre;          /* its total then; 0 when absent or damaged */
    bool known;            /* false: it could not be read then */
} cpod_land;

/* One image's part of a value or ProfileMe set in the pending file: its
 * key, what its target held before the merge, the encoded entries.  The
 * reader's *data points into r; false when r is cut short or damaged. */
bool cpod_put_image(cpod_buf *b, const char *key, const cpod_land *land, const uint8_t *data,
                    size_t size);
bool cpod_get_image(cpod_rd *r, char *key, size_t keysize, cpod_land *land, const uint8_t **data,
                    size_t *size);

/* Before a merge: what the target holds, from a read that gave total (ok)
 * or failed with err. */
void cpod_land_before(cpod_land *l, bool ok, uint64_t total, const profdb_error *err);
/* After a stop: has an input of total samples landed in the target, which
 * a read now finds holding now (ok) or fails on (err)?  what names the
 * target in a log line when its total makes no sense. */
bool cpod_land_arrived(const cpod_land *l, bool ok, uint64_t now, const profdb_error *err, uint64_t total,
                       const char *what, const char *epoch);

/* ---- regions (cpod_region.c) ----------------------------------------------- */

typedef struct cpod cpod;

/* What a region has delivered, per CPU, so that what a killed daemon took
 * but could not mark as taken is recognised when the driver offers it
 * again. */
typedef struct cpod_cpustate {
    uint64_t buf_next;     /* overflow buffers below this seq are journalled */
    uint64_t active_next;  /* ... salvaged part-filled buffers */
    uint64_t table_hash;   /* the last salvaged table chunk */
    uint64_t values_next;  /* value records below this place are journalled */
    uint64_t stacks_next;  /* stack records below this byte of the ring are journalled */
} cpod_cpustate;

typedef struct cpod_region {
    struct cpod_region *next;
    cpod *d;
    char *name;            /* NAME of NAME.drv */
    char *path, *meta_path, *jpath;
    char label[160];       /* for the log: the machine's name */
    drvc *c;
    drv_stacks *stk;       /* its stack rings, once the machine made them */
    unsigned ncpus;
    cpod_meta *meta;       /* NULL: the standard events */
    cpod_evdef ev[256];
    cpod_procs procs;
    cpod_journal j;
    cpod_cpustate *cs;
    uint64_t notice_next;  /* notices below this seq are already applied */
    uint64_t flush_gen;    /* flushes requested of this region */
    uint64_t done_gen;     /* the last one completed */
    uint64_t replay_gen;   /* while replaying: the generation of the records read */
    uint64_t mark_off;     /* journal size just after the last marker */
    uint64_t snap_gen;     /* the marker snap was taken at */
    cpod_buf snap;         /* the maps as they were at that marker */
    uint64_t samples, unknown;   /* taken since attach */
    bool gone;             /* producer gone, region emptied: remove once merged */
    uint64_t gone_gen;     /* ... i.e. once merge generation gone_gen is in */
    bool broken;           /* the driver reported it damaged: left alone */
    bool timed_out;        /* its last flush was not answered */
    long long attached_ms;
    drv_counters final;    /* counters when it was emptied */
    /* the sample path's cache */
    const cpod_map *lmap;
    uint32_t lpid;
} cpod_region;

/* ---- value profiles (cpod_values.c) ------------------------------------------
 * Value records from the regions' value rings go, through the same maps
 * as the samples, into one hot list per (image, offset, kind); each merge
 * generation takes the set along and merges it into the images' value
 * profiles (profdb/values.h) after their PC profiles. */
typedef struct cpod_vimg {
    char key[PROFDB_KEY_MAX];
    profdb_vlist *v;
    size_t n, cap;
    bool stored;           /* merged into the database by this job */
    cpod_land land;
} cpod_vimg;

typedef struct cpod_vslot {
    uint64_t offset;
    uint32_t img, list;    /* list + 1; 0: empty */
    int kind;
} cpod_vslot;

typedef struct cpod_vset {
    cpod_vimg *img;
    size_t nimg, cimg;
    cpod_vslot *slot;
    size_t nslot, cslot;
    uint64_t records, unmapped, lost;   /* taken; in no announced mapping; out of memory */
} cpod_vset;

void cpod_vset_free(cpod_vset *s);
/* Merge the set's images not yet stored (*done counts them); false with
 * err at the first that fails. */
bool cpod_values_store(cpod *d, cpod_vset *s, size_t *done, profdb_error *err);
/* Before a merge into epoch (before): note what each image's value
 * profile holds.  After a stop (!before): mark stored the images whose
 * lists are in; how many. */
size_t cpod_values_land(cpod *d, cpod_vset *s, const char *epoch, bool before);
/* The set's lists into b / back from r (false with why when damaged). */
bool cpod_values_save(cpod_vset *s, cpod_buf *b);
bool cpod_values_load(cpod_vset *s, cpod_rd *r, char *why, size_t why_size);

/* Value records of region r into the live lists (after cpod_region.c has
 * journalled them). */
void cpod_values_feed(cpod_region *r, const drv_value *v, size_t n);

/* ---- ProfileMe profiles (cpod_pm.c) -------------------------------------------
 * ProfileMe records from the stack rings go, through the same maps as the
 * samples, into one profdb_pm per (image, offset), which each merge
 * generation takes along and merges into the images' ProfileMe profiles
 * (profdb/profileme.h) after the value profiles. */
typedef struct cpod_pmimg {
    char key[PROFDB_KEY_MAX];
    profdb_pm *e;
    size_t n, cap;
    uint32_t *slot;        /* open addressing by offset: index + 1, 0 empty */
    size_t cslot;
    bool stored;           /* merged into the database by this job */
    cpod_land land;
} cpod_pmimg;

typedef struct cpod_pmset {
    cpod_pmimg *img;
    size_t nimg, cimg;
    uint64_t records, unmapped, bad, lost;   /* taken; in no mapping; malformed; out of memory */
} cpod_pmset;

void cpod_pmset_free(cpod_pmset *s);
/* One ProfileMe record of pid (a stack-ring record of event DRV_PM_EVENT). */
void cpod_pm_add(cpod_pmset *s, cpod_procs *procs, const drv_stack_rec *r);
/* Merge the set's images not yet stored (*done counts them); false with
 * err at the first that fails. */
bool cpod_pm_store(cpod *d, cpod_pmset *s, size_t *done, profdb_error *err);
/* As cpod_values_land, _save, _load for ProfileMe entries (no entry is
 * added once saved: the slots are not kept). */
size_t cpod_pm_land(cpod *d, cpod_pmset *s, const char *epoch, bool before);
bool cpod_pm_save(cpod_pmset *s, cpod_buf *b);
bool cpod_pm_load(cpod_pmset *s, cpod_rd *r, char *why, size_t why_size);

/* NULL with *busy set when another consumer holds it (try again later). */
cpod_region *cpod_region_attach(cpod *d, const char *name, bool *busy, char *msg, size_t msg_size);
/* Take full buffers; if the producer is gone, everything left.  Returns
 * the number of buffers taken. */
int cpod_region_collect(cpod_region *r);
/* Drain the hash tables (drvc_flush), or salvage a dead machine's region. */
void cpod_region_flush(cpod_region *r);
/* A merge of generation gen starts: mark the journal. */
void cpod_region_mark(cpod_region *r, uint64_t gen);
/* Generation gen is in the database: drop it from the journal. */
void cpod_region_compact(cpod_region *r, uint64_t gen);
/* Gone and merged: delete its files and free it. */
void cpod_region_remove(cpod_region *r);
void cpod_region_free(cpod_region *r);
void cpod_region_counters(const cpod_region *r, drv_counters *out);

/* ---- merging (cpod_merge.c) ------------------------------------------------ */

/* One profile on its way into the database. */
typedef struct cpod_pin {
    char *path;            /* PROFDB_UNKNOWN_PATH for the unknown profile */
    char *event;           /* "cycles", or "cycles@pid-42" for a per-process one */
    uint8_t bid[PROFDB_MAX_BUILD_ID];
    size_t bidlen;
    double period;         /* mean sampling period */
    uint64_t total;        /* samples in it */
    uint64_t pre;          /* the stored profile's total before this merge */
    bool stored;
    size_t n;
    profdb_entry *e;       /* built by the merge thread from prof */
    cpod_prof *prof;
} cpod_pin;

/* A merge generation: its profiles, value lists, ProfileMe entries and
 * stacks.  Before the first file is written the whole job goes to
 * STATE/pending-GEN with every target file's stored total: a daemon
 * stopped half way (killed, or exiting while the database refuses the
 * merge) is succeeded by one that reads the totals again and merges
 * exactly what did not get in. */
typedef struct cpod_job {
    uint64_t gen;
    bool new_epoch;        /* then start a new epoch */
    bool pended;           /* pending file written: resolve by totals */
    bool retry;            /* a failed or inherited job being tried again */
    cpod_pin *pins;
    size_t n;
    uint64_t samples, unknown;
    cpod_stackset stk;     /* the generation's stacks */
    char epoch[PROFDB_EPOCH_MAX];
    /* results */
    bool ok;
    profdb_error err;
    size_t merged, skipped;    /* profiles written now / found already stored */
    char new_epoch_name[PROFDB_EPOCH_MAX];
    double seconds;
    cpod_vset *values;     /* the generation's value lists, or NULL */
    cpod_pmset *pm;        /* the generation's ProfileMe entries, or NULL */
    size_t files_merged, files_found;   /* value, ProfileMe and stack files, as merged, skipped */
} cpod_job;

void cpod_job_free(cpod_job *j);
/* What of j is not stored yet (profiles, stacks, value lists, ProfileMe
 * entries), as text for a message ("" when all is); its length. */
size_t cpod_job_unstored(const cpod_job *j, char *out, size_t size);
/* STATE/NAME-GEN (gen 0: STATE/NAME). */
void cpod_state_file(const cpod *d, const char *name, uint64_t gen, char *out, size_t size);
/* The pending file (cpod_pending.c): the whole job, written whole or not
 * at all; read back, or NULL with why when damaged. */
bool cpod_pending_write(cpod *d, cpod_job *j, profdb_error *err);
cpod_job *cpod_pending_read(const char *path, char *msg, size_t msg_size);
/* As cpod_values_land, _save, _load for stacks: the groups found stored
 * leave s. */
size_t cpod_stacks_land(cpod *d, cpod_stackset *s, const char *epoch, bool before);
bool cpod_stacks_save(const cpod_stackset *s, cpod_buf *b);
bool cpod_stacks_load(cpod_stackset *s, cpod_rd *r, char *why, size_t why_size);
/* Run job (on the merge thread, or at start-up). */
void cpod_merge_run(cpod *d, cpod_job *job);
void *cpod_merge_thread(void *arg);
/* At start: finish what a killed daemon left pending; sets merged_gen,
 * covered_gen and gen, and d->retry if the database refuses it now. */
bool cpod_merge_recover(cpod *d, char *msg, size_t msg_size);

/* ---- control socket (cpod_control.c) ---------------------------------------- */

typedef struct cpod_client {
    struct cpod_client *next;
    int fd;
    char buf[256];
    size_t len;
    bool waiting;          /* its request runs; reply when the job is done */
    bool eof;              /* it closed its writing side after a complete
                              request: not polled, but still answered */
    char cmd[16];
    uint64_t ticket;       /* ... the merge generation that answers it (0: not started) */
    long long since;       /* connected at (ms) */
} cpod_client;

bool cpod_control_listen(cpod *d, char *msg, size_t msg_size);
void cpod_control_accept(cpod *d);
void cpod_control_read(cpod *d, cpod_client *c);
void cpod_client_reply(cpod *d, cpod_client *c, const char *text);
void cpod_client_close(cpod *d, cpod_client *c);

/* ---- the daemon (cpod_daemon.c) --------------------------------------------- */

struct cpod {
    cpod_options o;
    char db_dir[CPOD_PATH_MAX];
    dev_t db_dev, sock_dev;  /* what db_dir and our socket were when opened: */
    ino_t db_ino, sock_ino;  /* a different file there is not ours any more */
    char state[CPOD_PATH_MAX];
    char regions_dir[CPOD_PATH_MAX];
    char sock_path[CPOD_PATH_MAX];
    char host[PROFDB_MAX_NAME + 1];
    int lock_fd, listen_fd, inotify_fd, wake_fd;
    profdb *db;
    cpod_images images;
    cpod_profset live;
    cpod_vset vlive;       /* value lists since the last merge */
    cpod_pmset pmlive;     /* ProfileMe entries since the last merge */
    cpod_stackset stk;     /* stacks taken since the last merge started */
    uint64_t stacks, stacks_lost;   /* stacks taken; stacks lost to memory or the database */
    cpod_region *regions;
    cpod_client *clients;

    /* the merge thread */
    pthread_t thread;
    bool thread_up;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cpod_job *job;         /* handed to the thread */
    cpod_job *done_job;    /* handed back */
    bool stop_thread;
    cpod_job *running;     /* the main thread's view: a job is out */
    bool want_flush, want_epoch;   /* a fresh merge (and epoch) is wanted */
    bool quitting;         /* the last merge is under way */
    uint64_t quit_ticket;  /* ... as this generation */

    uint64_t gen;          /* merge generations started */
    uint64_t merged_gen;   /* ... and fully in the database */
    uint64_t covered_gen;  /* ... or in a pending file (journals skip them) */
    cpod_job *retry;       /* a job the database refused, tried again first */
    long long retry_at;    /* not before this (ms), unless a flush is asked for */
    long long retry_wait;  /* the back-off: doubles per failure up to the flush interval */
    uint64_t failures;     /* merges failed in a row */
    char fail_msg[256];    /* what the last failure said (logged once while it repeats) */
    uint64_t journal_bytes;     /* journalled since the last merge */

    /* lifetime figures */
    uint64_t samples, unknown, merged;   /* samples taken, unknown, merged */
    cpod_pmset pm_gone;    /* ProfileMe figures of the generations handed to merges (no entries) */
    drv_counters gone;     /* counters of the machines that went away */
    unsigned machines_gone;
    long long next_drain, next_flush;    /* monotonic ms */
    bool quit;
    int exit_status;
};

long long cpod_now_ms(void);
/* Hand the live profiles to the merge thread (flush), optionally followed
 * by a new epoch.  Returns the job's generation. */
uint64_t cpod_start_merge(cpod *d, bool new_epoch);
/* A flush (with a new epoch after it, or followed by exiting) is wanted:
 * start it now, or after the merge under way. */
void cpod_request_merge(cpod *d, bool new_epoch, bool quit);
/* Drain every region's hash tables. */
void cpod_drain_all(cpod *d);
/* The figures `cpo flush` prints, for a finished job. */
void cpod_report(cpod *d, const cpod_job *j, char *out, size_t size);

#endif
