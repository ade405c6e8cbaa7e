/*
 * collector/cpod_daemon.c: cpod's main loop.
 *
 * One thread does everything but writing the database: it watches the
 * regions directory for machines, takes their full buffers every few
 * milliseconds, drains their hash tables every --drain, answers the
 * control socket and signals.  Every --flush (and on request) it hands
 * the profiles gathered so far to the merge thread and starts new ones,
 * so a slow disk never stops the draining.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/cpod_internal.h"

#define DEF_DRAIN_MS   (5 * 60 * 1000LL)     /* DCPI's defaults */
#define DEF_FLUSH_MS   (10 * 60 * 1000LL)
#define DEF_TIMEOUT_MS 5000
#define DEF_JOURNAL    (64ull << 20)
#define RESCAN_MS      2000
#define TICK_MIN_MS    2
#define TICK_MAX_MS    50
#define CLIENT_IDLE_MS 10000
#define ORPHAN_META_S  3600

long long cpod_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void warn_cb(void *ctx, const char *msg)
{
    (void)ctx;
    cpod_log("%s", msg);
}

static const char *interval(long long ms, char *buf, size_t size)
{
    if (ms % 3600000 == 0)
        snprintf(buf, size, "%lldh", ms / 3600000);
    else if (ms % 60000 == 0)
        snprintf(buf, size, "%lldm", ms / 60000);
    else if (ms % 1000 == 0)
        snprintf(buf, size, "%llds", ms / 1000);
    else
        snprintf(buf, size, "%lldms", ms);
    return buf;
}

/* ---- the regions directory ----------------------------------------------------- */

/* Regions that could not be attached, so each is logged once: damaged
 * ones are left alone, busy ones (another consumer holds them) retried
 * quietly.  An entry goes when its file does. */
typedef struct ignored {
    struct ignored *next;
    char *name;
    bool seen, busy;
} ignored;

static ignored *ignore_list;

static ignored *find_ignored(const char *name)
{
    for (ignored *g = ignore_list; g; g = g->next)
        if (!strcmp(g->name, name)) {
            g->seen = true;
            return g;
        }
    return NULL;
}

static void ignore(const char *name, bool busy)
{
    ignored *g = calloc(1, sizeof *g);
    if (g && (g->name = strdup(name))) {
        g->seen = true;
        g->busy = busy;
        g->next = ignore_list;
        ignore_list = g;
    } else {
        free(g);
    }
}

static void free_ignored(bool all)
{
    for (ignored **pp = &ignore_list; *pp;) {
        ignored *g = *pp;
        if (all || !g->seen) {
            *pp = g->next;
            free(g->name);
            free(g);
        } else {
            g->seen = false;
            pp = &g->next;
        }
    }
}

static bool has_suffix(const char *s, const char *suf, size_t *stem)
{
    size_t n = strlen(s), k = strlen(suf);
    *stem = n - k;
    return n > k && !strcmp(s + n - k, suf);
}

static cpod_region *find_region(cpod *d, const char *name)
{
    for (cpod_region *r = d->regions; r; r = r->next)
        if (!strcmp(r->name, name))
            return r;
    return NULL;
}

static void scan(cpod *d)
{
    /* A damaged region removed by hand: what was taken from it goes with
     * the next merge, then the region is forgotten. */
    for (cpod_region *r = d->regions; r; r = r->next)
        if (r->broken && !r->gone && access(r->path, F_OK) != 0 && errno == ENOENT) {
            cpod_region_counters(r, &r->final);
            r->gone = true;
        }
    DIR *dir = opendir(d->regions_dir);
    if (!dir) {
        static int warned;
        if (!warned++)
            cpod_log("%s: cannot list: %s", d->regions_dir, strerror(errno));
        return;
    }
    struct dirent *de;
    char name[256];
    while ((de = readdir(dir))) {
        size_t stem;
        if (de->d_name[0] == '.')
            continue;
        if (has_suffix(de->d_name, ".journal", &stem) || has_suffix(de->d_name, ".meta", &stem)) {
            /* Left behind by a removal cut short; a .meta may also be a
             * machine's about to create its region, hence the age. */
            bool journal = de->d_name[stem + 1] == 'j';
            snprintf(name, sizeof name, "%.*s", (int)stem, de->d_name);
            char drvname[300];
            struct stat st;
            snprintf(drvname, sizeof drvname, "%s.drv", name);
            if (find_region(d, name) || fstatat(dirfd(dir), drvname, &st, AT_SYMLINK_NOFOLLOW) == 0)
                continue;
            if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            if (journal || time(NULL) - st.st_mtime > ORPHAN_META_S)
                unlinkat(dirfd(dir), de->d_name, 0);
            continue;
        }
        if (!has_suffix(de->d_name, ".drv", &stem) || stem >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)stem, de->d_name);
        ignored *g = find_ignored(name);
        if (find_region(d, name) || (g && !g->busy))
            continue;
        char msg[640];
        bool busy;
        cpod_region *r = cpod_region_attach(d, name, &busy, msg, sizeof msg);
        if (!r) {
            if (!g) {
                cpod_log("%s%s", msg, busy ? "; trying again until it is free" : "; ignoring this region");
                ignore(name, busy);
            }
            continue;
        }
        if (g)
            g->seen = false;   /* attached: forget it */
        r->next = d->regions;
        d->regions = r;
    }
    closedir(dir);
    free_ignored(false);
}

/* ---- merging ------------------------------------------------------------------------- */

void cpod_drain_all(cpod *d)
{
    for (cpod_region *r = d->regions; r; r = r->next)
        cpod_region_flush(r);
}

static void hand(cpod *d, cpod_job *j)
{
    d->running = j;
    pthread_mutex_lock(&d->mu);
    d->job = j;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

static bool pin_of(cpod *d, cpod_pin *pin, cpod_prof *p)
{
    pin->prof = p;
    pin->total = p->total;
    pin->period = p->total ? p->period_sum / (double)p->total : 0;
    if (p->img) {
        pin->path = strdup(p->img->path);
        memcpy(pin->bid, p->img->bid, p->img->bidlen);
        pin->bidlen = p->img->bidlen;
    } else {
        pin->path = strdup(PROFDB_UNKNOWN_PATH);
    }
    if (p->per_pid) {
        size_t n = strlen(p->event) + strlen(p->machine) + 24;
        if ((pin->event = malloc(n)))
            snprintf(pin->event, n, "%s@pid-%u.%s", p->event, p->pid, p->machine);
    } else {
        pin->event = strdup(p->event);
    }
    /* The job owns the table from here; the image stays with this thread. */
    cpod_image_unref(&d->images, p->img);
    p->img = NULL;
    return pin->path && pin->event;
}

uint64_t cpod_start_merge(cpod *d, bool new_epoch)
{
    cpod_job *j = calloc(1, sizeof *j);
    cpod_profset *s = &d->live;
    if (j)
        j->pins = calloc(s->n ? s->n : 1, sizeof *j->pins);
    if (!j || !j->pins) {
        /* Cannot even describe the job: keep the profiles for the next one. */
        cpod_log("out of memory starting a merge");
        free(j);
        return 0;
    }
    uint64_t gen = ++d->gen;
    d->covered_gen = gen;
    for (cpod_region *r = d->regions; r; r = r->next)
        cpod_region_mark(r, gen);
    j->gen = gen;
    j->new_epoch = new_epoch;
    j->samples = s->samples;
    j->unknown = s->unknown;
    j->stk = d->stk;
    cpod_stackset_init(&d->stk);
    for (size_t b = 0; b < s->nb; b++)
        for (cpod_prof *p = s->tab[b], *next; p; p = next) {
            next = p->next;
            p->next = NULL;
            if (!pin_of(d, &j->pins[j->n++], p))
                cpod_log("out of memory: a profile of generation %" PRIu64 " is lost", gen);
        }
    free(s->tab);
    cpod_profset_init(s);
    d->pm_gone.records += d->pmlive.records;
    d->pm_gone.unmapped += d->pmlive.unmapped;
    d->pm_gone.bad += d->pmlive.bad;
    d->pm_gone.lost += d->pmlive.lost;
    if (d->pmlive.nimg && (j->pm = malloc(sizeof *j->pm))) {
        *j->pm = d->pmlive;
        memset(&d->pmlive, 0, sizeof d->pmlive);
    }
    d->pmlive.records = d->pmlive.unmapped = d->pmlive.bad = d->pmlive.lost = 0;
    if (d->vlive.nimg && (j->values = malloc(sizeof *j->values))) {
        *j->values = d->vlive;
        memset(&d->vlive, 0, sizeof d->vlive);
    }
    d->journal_bytes = 0;
    hand(d, j);
    return gen;
}

static void kick(cpod *d)
{
    if (d->running)
        return;
    if (d->retry) {
        /* After a failure, wait out the back-off unless somebody asks for
         * a flush (the cause may have been fixed): trying again at once
         * would spin on a full or read-only disk. */
        if (d->want_flush || cpod_now_ms() >= d->retry_at)
            hand(d, d->retry);
        return;
    }
    if (!d->want_flush)
        return;
    scan(d);   /* a machine that appeared a moment ago is part of this flush */
    cpod_drain_all(d);
    uint64_t gen = cpod_start_merge(d, d->want_epoch);
    if (!gen)
        return;
    d->want_flush = d->want_epoch = false;
    for (cpod_client *c = d->clients; c; c = c->next)
        if (c->waiting && !c->ticket)
            c->ticket = gen;
    if (d->quitting && !d->quit_ticket)
        d->quit_ticket = gen;
}

void cpod_request_merge(cpod *d, bool new_epoch, bool quit)
{
    d->want_flush = true;
    d->want_epoch |= new_epoch;
    if (quit)
        d->quitting = true;
    kick(d);
}

static void lost(const cpod *d, uint64_t *samples, uint64_t *notices, unsigned *attached)
{
    *samples = d->gone.dropped;
    *notices = d->gone.notices_lost;
    *attached = 0;
    for (const cpod_region *r = d->regions; r; r = r->next) {
        drv_counters k;
        cpod_region_counters(r, &k);
        *samples += k.dropped;
        *notices += k.notices_lost;
        *attached += !r->gone;
    }
}

void cpod_report(cpod *d, const cpod_job *j, char *out, size_t size)
{
    uint64_t ls, ln;
    unsigned attached;
    lost(d, &ls, &ln, &attached);
    double pu = j->samples ? 100.0 * (double)j->unknown / (double)j->samples : 0;
    double tu = d->samples ? 100.0 * (double)d->unknown / (double)d->samples : 0;
    int n = snprintf(out, size,
                     "flushed %" PRIu64 " samples into %zu profiles in epoch %s (%.3f s)\n"
                     "unknown %" PRIu64 " samples (%.3f%%)\n"
                     "lost %" PRIu64 " samples, %" PRIu64 " notices (in the drivers, since start)\n"
                     "machines %u attached, %u gone; since start %" PRIu64 " samples, %.3f%% unknown\n",
                     j->samples, j->n, j->epoch, j->seconds, j->unknown, pu, ls, ln, attached,
                     d->machines_gone, d->samples, tu);
    if (j->values && n > 0 && (size_t)n < size) {
        size_t lists = 0;
        for (size_t i = 0; i < j->values->nimg; i++)
            lists += j->values->img[i].n;
        n += snprintf(out + n, size - n,
                      "values %" PRIu64 " records into %zu hot lists of %zu images (%" PRIu64 " unmapped, %" PRIu64
                      " lost)\n",
                      j->values->records, lists, j->values->nimg, j->values->unmapped, j->values->lost);
    }
    if ((j->pm || d->pm_gone.records) && n > 0 && (size_t)n < size) {
        static const cpod_pmset none;
        const cpod_pmset *pm = j->pm ? j->pm : &none;
        size_t entries = 0;
        for (size_t i = 0; i < pm->nimg; i++)
            entries += pm->img[i].n;
        n += snprintf(out + n, size - n,
                      "profileme %" PRIu64 " records into %zu instructions of %zu images (%" PRIu64
                      " unmapped, %" PRIu64 " malformed, %" PRIu64 " lost); since start %" PRIu64 " records, %"
                      PRIu64 " unmapped, %" PRIu64 " malformed, %" PRIu64 " lost\n",
                      pm->records, entries, pm->nimg, pm->unmapped, pm->bad, pm->lost, d->pm_gone.records, d->pm_gone.unmapped, d->pm_gone.bad, d->pm_gone.lost);
    }
    if (d->stacks + d->stacks_lost && n > 0 && (size_t)n < size)
        n += snprintf(out + n, size - n, "stacks %" PRIu64 " flushed (%" PRIu64 " frames, %" PRIu64
                      " unknown); since start %" PRIu64 " taken, %" PRIu64 " lost\n",
                      j->stk.stacks, j->stk.frames, j->stk.unknown_frames, d->stacks, d->stacks_lost);
    for (const cpod_region *r = d->regions; r && n > 0 && (size_t)n < size; r = r->next)
        if (r->timed_out)
            n += snprintf(out + n, size - n, "unanswered: machine %.150s did not answer the flush; "
                          "what its hash tables hold comes with a later one\n", r->label);
}

static void answer(cpod *d, const cpod_job *j, bool ok, const char *err, bool also_unticketed)
{
    char rep[2048];
    for (cpod_client *c = d->clients, *next; c; c = next) {
        next = c->next;
        if (!c->waiting || !(c->ticket == j->gen || (also_unticketed && !c->ticket)))
            continue;
        if (!ok) {
            cpod_msg(rep, sizeof rep, "error: %s\n", err);
        } else {
            cpod_report(d, j, rep, sizeof rep - 64);
            size_t n = strlen(rep);
            if (!strcmp(c->cmd, "epoch")) {
                if (j->new_epoch_name[0])
                    snprintf(rep + n, sizeof rep - n, "new epoch %s\nok\n", j->new_epoch_name);
                else
                    snprintf(rep + n, sizeof rep - n, "error: the old epoch is flushed, but "
                             "no new epoch: %.500s\n", j->err.msg);
            } else {
                snprintf(rep + n, sizeof rep - n, "ok\n");
            }
        }
        cpod_client_reply(d, c, rep);
    }
}

/* What becomes of a generation whose merge failed as the daemon exits:
 * after the pending file was written, everything not stored yet is in it
 * (the next daemon's journal replay skips the generation and finishes it
 * from there); before, the journals still hold it.  "LEAD N failed: ...". */
static void exit_message(const cpod *d, const cpod_job *j, const char *lead, char *out, size_t size)
{
    char held[240], path[CPOD_PATH_MAX + 64];
    if (j->pended) {
        cpod_state_file(d, "pending", j->gen, path, sizeof path);
        cpod_job_unstored(j, held, sizeof held);
        cpod_msg(out, size, "%s %" PRIu64 " failed: %.400s (what it has not stored yet%s%s%s is kept in %s; "
                 "the next cpod to start stores it)", lead, j->gen, j->err.msg, held[0] ? ", " : "", held,
                 held[0] ? "," : "", path);
    } else {
        cpod_msg(out, size, "%s %" PRIu64 " failed: %.500s (no pending file was written: the journals keep "
                 "its samples, values, stacks and ProfileMe records for the next cpod to start)", lead, j->gen,
                 j->err.msg);
    }
}

static void job_done(cpod *d, cpod_job *j)
{
    d->running = NULL;
    if (j->ok) {
        d->merged_gen = j->gen;
        d->merged += j->samples;
        for (cpod_region **pp = &d->regions; *pp;) {
            cpod_region *r = *pp;
            if (r->gone && r->gone_gen && r->gone_gen <= j->gen) {
                *pp = r->next;
                drv_counters k = r->final;
                d->gone.dropped += k.dropped;
                d->gone.notices_lost += k.notices_lost;
                d->machines_gone++;
                cpod_region_remove(r);
                continue;
            }
            cpod_region_compact(r, j->gen);
            pp = &r->next;
        }
        double pu = j->samples ? 100.0 * (double)j->unknown / (double)j->samples : 0;
        cpod_log("merged generation %" PRIu64 "%s: %" PRIu64 " samples into %zu profiles "
                 "(%zu written, %zu already in) in epoch %s, %.3f s; %" PRIu64 " unknown (%.3f%%)",
                 j->gen, j->retry ? " (retried)" : "", j->samples, j->n, j->merged, j->skipped,
                 j->epoch, j->seconds, j->unknown, pu);
        if (j->new_epoch && j->new_epoch_name[0])
            cpod_log("started epoch %s", j->new_epoch_name);
        else if (j->new_epoch)
            cpod_log("cannot start a new epoch: %s", j->err.msg);
        if (d->retry == j)
            d->retry = NULL;
        if (d->failures)
            cpod_log("merging works again, after %" PRIu64 " failed attempt%s", d->failures,
                     d->failures == 1 ? "" : "s");
        d->failures = 0;
        d->fail_msg[0] = 0;
        d->retry_wait = 0;
        answer(d, j, true, NULL, false);
        if (d->quitting && d->quit_ticket == j->gen)
            d->quit = true;
    } else {
        char msg[900];
        long long cap = d->o.flush_ms > 1000 ? d->o.flush_ms : 1000;
        d->retry_wait = d->retry_wait ? d->retry_wait * 2 : 1000;
        if (d->retry_wait > cap)
            d->retry_wait = cap;
        d->retry_at = cpod_now_ms() + d->retry_wait;
        d->failures++;
        bool exiting = d->quitting && (d->quit_ticket == j->gen || !d->quit_ticket);
        if (exiting)
            exit_message(d, j, "merge generation", msg, sizeof msg);
        else
            cpod_msg(msg, sizeof msg, "merge generation %" PRIu64 " failed: %.700s (kept; retried in "
                     "%lld s, or at the next flush)", j->gen, j->err.msg, d->retry_wait / 1000);
        /* Logged when the failure starts or changes, not at every attempt. */
        if (strncmp(d->fail_msg, j->err.msg, sizeof d->fail_msg - 1)) {
            cpod_log("%s", msg);
            snprintf(d->fail_msg, sizeof d->fail_msg, "%.*s", (int)sizeof d->fail_msg - 1, j->err.msg);
        } else if ((d->failures & (d->failures - 1)) == 0) {
            cpod_log("merges still failing (%" PRIu64 " attempts): %.700s", d->failures, j->err.msg);
        }
        d->retry = j;
        /* The flush asked for has its answer: a failure. */
        answer(d, j, false, msg, j->retry);
        d->want_flush = d->want_epoch = false;
        j->retry = true;
        if (exiting) {
            d->quit = true;
            d->exit_status = 1;
        }
    }
    if (!d->retry)
        cpod_job_free(j);
    if (!d->quit)
        kick(d);
}

/* ---- open, serve, close -------------------------------------------------------------- */

/* The database directory removed, or replaced by another one at the same
 * path: nothing more may be drained, since samples could only go into a
 * deleted tree or a stranger's database.  Says so and makes the daemon
 * stop; what is still in memory is lost with the database it was for. */
static bool db_replaced(cpod *d)
{
    struct stat st;
    bool gone = stat(d->db_dir, &st) != 0;
    if (!gone && st.st_dev == d->db_dev && st.st_ino == d->db_ino)
        return false;
    cpod_log("the database directory %s %s: stopping without draining anything more "
             "(%" PRIu64 " samples held in memory are dropped)", d->db_dir,
             gone ? "was removed" : "was replaced by another one", d->live.samples);
    d->quit = true;
    d->exit_status = 1;
    return true;
}

static bool fail(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return false;
}

static bool take_lock(cpod *d, char *msg, size_t size)
{
    char path[CPOD_PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/lock", d->state);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(msg, size, "%s: cannot open: %s", path, strerror(errno));
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int e = errno;
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        close(fd);
        if (e == EAGAIN || e == EACCES)
            return fail(msg, size, "%s is already served by cpod pid %s (lock %s)", d->db_dir,
                        buf[0] ? buf : "?", path);
        return fail(msg, size, "%s: cannot lock: %s", path, strerror(e));
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        close(fd);
        return fail(msg, size, "%s: cannot write: %s", path, strerror(errno));
    }
    d->lock_fd = fd;
    return true;
}

cpod *cpod_open(const cpod_options *o, char *msg, size_t msg_size)
{
    cpod *d = calloc(1, sizeof *d);
    if (!d) {
        fail(msg, msg_size, "out of memory");
        return NULL;
    }
    d->o = *o;
    d->lock_fd = d->listen_fd = d->inotify_fd = d->wake_fd = -1;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    cpod_images_init(&d->images, o->per_process, o->nper_process);
    cpod_profset_init(&d->live);
    cpod_stackset_init(&d->stk);
    if (!d->o.drain_ms)
        d->o.drain_ms = DEF_DRAIN_MS;
    if (!d->o.flush_ms)
        d->o.flush_ms = DEF_FLUSH_MS;
    if (!d->o.flush_timeout_ms)
        d->o.flush_timeout_ms = DEF_TIMEOUT_MS;
    if (!d->o.journal_limit)
        d->o.journal_limit = DEF_JOURNAL;
    if (!o->db_dir || strlen(o->db_dir) >= sizeof d->db_dir - 64) {
        fail(msg, msg_size, "no database directory, or its path is too long");
        goto bad;
    }
    snprintf(d->db_dir, sizeof d->db_dir, "%s", o->db_dir);
    char host[PROFDB_MAX_NAME + 2];
    if (gethostname(host, sizeof host) < 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[PROFDB_MAX_NAME] = '\0';
    for (char *p = host; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '_';
    memcpy(d->host, host, sizeof d->host);
    d->host[sizeof d->host - 1] = '\0';

    if (!cpod_state_dir(d->db_dir, true, d->state, msg, msg_size) || !take_lock(d, msg, msg_size))
        goto bad;
    char logp[CPOD_PATH_MAX + 8];
    snprintf(logp, sizeof logp, "%s/log", d->state);
    if (!cpod_log_open(o->log_path ? o->log_path : o->log_stderr ? NULL : logp, msg, msg_size))
        goto bad;
    profdb_error perr;
    if (!(d->db = profdb_open(d->db_dir, PROFDB_CREATE | PROFDB_TOLERANT, &perr))) {
        fail(msg, msg_size, "%s", perr.msg);
        goto bad;
    }
    profdb_set_warn(d->db, warn_cb, NULL);
    struct stat dbst;
    if (stat(d->db_dir, &dbst) == 0) {
        d->db_dev = dbst.st_dev;
        d->db_ino = dbst.st_ino;
    }
    if (!cpod_regions_dir(d->state, true, d->regions_dir, msg, msg_size) ||
        !cpod_merge_recover(d, msg, msg_size) || !cpod_control_listen(d, msg, msg_size))
        goto bad;
    if ((d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        fail(msg, msg_size, "eventfd: %s", strerror(errno));
        goto bad;
    }
    d->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (d->inotify_fd >= 0 &&
        inotify_add_watch(d->inotify_fd, d->regions_dir, IN_CREATE | IN_MOVED_TO) < 0) {
        close(d->inotify_fd);
        d->inotify_fd = -1;   /* the periodic rescan still finds machines */
    }
    char a[32], b[32];
    cpod_log("cpod started: database %s, state %s, regions %s, drain every %s, flush every %s%s",
             d->db_dir, d->state, d->regions_dir, interval(d->o.drain_ms, a, sizeof a),
             interval(d->o.flush_ms, b, sizeof b), o->nper_process ? ", per-process profiles for:" : "");
    for (size_t i = 0; i < o->nper_process; i++)
        cpod_log("  per-process: %s", o->per_process[i]);
    scan(d);
    return d;
bad:
    cpod_close(d);
    return NULL;
}

static void collect_all(cpod *d, int *taken)
{
    *taken = 0;
    for (cpod_region *r = d->regions; r; r = r->next)
        *taken += cpod_region_collect(r);
}

static void expire_clients(cpod *d, long long now)
{
    for (cpod_client *c = d->clients, *next; c; c = next) {
        next = c->next;
        if (!c->waiting && now - c->since > CLIENT_IDLE_MS)
            cpod_client_reply(d, c, "error: no request received\n");
    }
}

static void read_signals(cpod *d, int sfd)
{
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGHUP) {
            cpod_log_reopen();
            cpod_log("SIGHUP: log reopened");
        } else if (d->quitting) {
            cpod_log("%s again: exiting now; what is not merged stays in the journals and any "
                     "pending file for the next start", strsignal((int)si.ssi_signo));
            _exit(1);
        } else {
            cpod_log("%s: flushing, then exiting", strsignal((int)si.ssi_signo));
            cpod_request_merge(d, false, true);
        }
    }
}

/* The merge thread finished a job. */
static void merge_finished(cpod *d)
{
    uint64_t v;
    if (read(d->wake_fd, &v, sizeof v) < 0)
        {}
    pthread_mutex_lock(&d->mu);
    cpod_job *j = d->done_job;
    d->done_job = NULL;
    pthread_mutex_unlock(&d->mu);
    if (j)
        job_done(d, j);
}

static void serve_clients(cpod *d, const struct pollfd *pf, int first, int n)
{
    /* Clients may close themselves while being read: collect the ready
     * descriptors first. */
    int ready[CPOD_MAX_CLIENTS], k = 0;
    for (int i = first; i < n && k < CPOD_MAX_CLIENTS; i++)
        if (pf[i].revents)
            ready[k++] = pf[i].fd;
    for (int i = 0; i < k; i++)
        for (cpod_client *c = d->clients; c; c = c->next)
            if (c->fd == ready[i]) {
                cpod_control_read(d, c);
                break;
            }
}

/* Timed work after each wake-up: merges and drains when due, merging
 * early when the journals grow, retries, idle clients. */
static void housekeeping(cpod *d, bool *disabled_journals)
{
    long long now = cpod_now_ms();
    if (now >= d->next_flush) {
        d->next_flush = now + d->o.flush_ms;
        d->next_drain = now + d->o.drain_ms;
        cpod_request_merge(d, false, false);
    } else if (now >= d->next_drain) {
        d->next_drain = now + d->o.drain_ms;
        cpod_drain_all(d);
    }
    if (d->journal_bytes > d->o.journal_limit) {
        if (!d->running && !d->retry) {
            cpod_log("%" PRIu64 " bytes journalled since the last merge: merging early",
                     d->journal_bytes);
            cpod_request_merge(d, false, false);
        } else if (d->retry && d->journal_bytes > 4 * d->o.journal_limit && !*disabled_journals) {
            cpod_log("the database refuses merges and the journals passed %" PRIu64 " bytes: "
                     "journalling stops until a merge succeeds", d->journal_bytes);
            for (cpod_region *r = d->regions; r; r = r->next)
                r->j.failed = true;
            *disabled_journals = true;
        }
    }
    if (!d->retry)
        *disabled_journals = false;
    else if (!d->running && now >= d->retry_at)
        kick(d);
    expire_clients(d, now);
}

static int start_serving(cpod *d, int *sfd)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if ((*sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        cpod_log("signalfd: %s", strerror(errno));
        return 1;
    }
    if (pthread_create(&d->thread, NULL, cpod_merge_thread, d) != 0) {
        cpod_log("cannot start the merge thread");
        close(*sfd);
        return 1;
    }
    d->thread_up = true;
    return 0;
}

int cpod_serve(cpod *d)
{
    int sfd;
    if (start_serving(d, &sfd))
        return 1;
    long long now = cpod_now_ms(), next_scan = now + RESCAN_MS;
    d->next_drain = now + d->o.drain_ms;
    d->next_flush = now + d->o.flush_ms;
    if (d->retry)
        kick(d);   /* what the last daemon left: try now */
    int tick = TICK_MIN_MS;
    bool disabled_journals = false;
    while (!d->quit) {
        struct pollfd pf[5 + CPOD_MAX_CLIENTS];
        int n = 0;
        pf[n++] = (struct pollfd){ sfd, POLLIN, 0 };
        pf[n++] = (struct pollfd){ d->listen_fd, POLLIN, 0 };
        pf[n++] = (struct pollfd){ d->wake_fd, POLLIN, 0 };
        pf[n++] = (struct pollfd){ d->inotify_fd, POLLIN, 0 };
        int first_client = n;
        for (cpod_client *c = d->clients; c && n < (int)(sizeof pf / sizeof *pf); c = c->next)
            if (!c->eof)
                pf[n++] = (struct pollfd){ c->fd, POLLIN, 0 };
        int pr = poll(pf, (nfds_t)n, tick);
        if (pr < 0 && errno != EINTR) {
            cpod_log("poll: %s", strerror(errno));
            break;
        }
        if (pr > 0 && (pf[0].revents & POLLIN))
            read_signals(d, sfd);
        if (pr > 0 && (pf[2].revents & POLLIN))
            merge_finished(d);
        now = cpod_now_ms();
        if ((pr > 0 && (pf[3].revents & POLLIN)) || now >= next_scan) {
            char buf[4096];
            while (d->inotify_fd >= 0 && read(d->inotify_fd, buf, sizeof buf) > 0)
                ;
            if (db_replaced(d))
                break;
            scan(d);
            next_scan = now + RESCAN_MS;
        }
        if (pr > 0 && (pf[1].revents & POLLIN))
            cpod_control_accept(d);
        if (pr > 0)
            serve_clients(d, pf, first_client, n);
        int taken;
        collect_all(d, &taken);
        tick = taken ? TICK_MIN_MS : tick * 2 > TICK_MAX_MS ? TICK_MAX_MS : tick * 2;
        housekeeping(d, &disabled_journals);
    }
    close(sfd);
    if (d->retry) {
        char msg[1200];
        exit_message(d, d->retry, "exiting with the merge of generation", msg, sizeof msg);
        cpod_log("%s", msg);
    }
    cpod_log("cpod exiting (status %d): %" PRIu64 " samples taken, %" PRIu64 " merged, %" PRIu64
             " unknown", d->exit_status, d->samples, d->merged, d->unknown);
    return d->exit_status;
}

void cpod_close(cpod *d)
{
    if (!d)
        return;
    if (d->thread_up) {
        pthread_mutex_lock(&d->mu);
        d->stop_thread = true;
        pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
        if (d->done_job && d->done_job != d->retry)
            cpod_job_free(d->done_job);   /* finished after the loop stopped looking */
    }
    while (d->clients)
        cpod_client_reply(d, d->clients, "error: cpod is exiting\n");
    for (cpod_region *r = d->regions, *next; r; r = next) {
        next = r->next;
        cpod_region_free(r);
    }
    cpod_job_free(d->retry);
    cpod_profset_free(&d->live, &d->images);
    cpod_vset_free(&d->vlive);
    cpod_pmset_free(&d->pmlive);
    cpod_stackset_free(&d->stk);
    cpod_images_free(&d->images);
    cpod_intern_free();
    free_ignored(true);
    if (d->db)
        profdb_close(d->db);
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        /* Only our own socket: a daemon started on a new database at the
         * same path has made its own there. */
        struct stat st;
        if (stat(d->sock_path, &st) == 0 && st.st_dev == d->sock_dev && st.st_ino == d->sock_ino)
            unlink(d->sock_path);
    }
    if (d->inotify_fd >= 0)
        close(d->inotify_fd);
    if (d->wake_fd >= 0)
        close(d->wake_fd);
    if (d->lock_fd >= 0)
        close(d->lock_fd);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    cpod_log_close();
    free(d);
}
