/*
 * service/serve.c: the loop of cpo serve (docs/service.md).
 *
 * Each program is in one of three phases.  Watching: the deployed version
 * runs; when two successive closed epochs of its profile agree (the overlap
 * of their procedure shares at least `converge`) with at least min-samples
 * behind them, and no round has used those epochs yet, a round makes and
 * checks a candidate and installs it.  Judging: the new version runs until
 * its own profile holds min-samples; its cycles per unit of work are then
 * compared with the version before it, and it is kept, or rolled back on a
 * regression beyond the threshold; a run killed by a signal rolls it back
 * at once.  Deploying: only between two writes of the state, see store.c.
 * A new build at the original's path starts a new base version.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/outfile.h"
#include "report/report.h"
#include "service/internal.h"

static volatile sig_atomic_t stop_requested, reload_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    reload_requested = 1;
}

static bool save(svc_prog *g)
{
    char err[512];
    if (svc_state_save(g, err, sizeof err))
        return true;
    svc_log("%s: cannot save the state: %s", g->p->name, err);
    return false;
}

/* An install that failed: logged once, tried again at every look. */
static void failed_install(svc_prog *g, unsigned v, const char *err)
{
    if (!g->install_failed)
        svc_log("%s: cannot install version %u: %s (tried again at every look)", g->p->name, v, err);
    g->install_failed = true;
}

static bool install(svc_prog *g, unsigned v, const char *then)
{
    char err[512];
    snprintf(g->st.then, sizeof g->st.then, "%s", then);
    if (svc_install(g, v, err, sizeof err))
        return true;
    g->install_failed = false;          /* a new install's failure is news */
    failed_install(g, v, err);
    return false;
}

/* An install that failed (the deploy directory read-only, a full disk)
 * leaves the phase at deploying: tried again at every look, as a restart
 * would, until it goes through. */
static void retry_install(svc_prog *g)
{
    char err[512];
    unsigned v = g->st.target;
    if (svc_install(g, v, err, sizeof err)) {
        svc_log("%s: version %u installed at %s after all", g->p->name, v, g->p->deploy);
        svc_history(g, v, "installed", "at %s, after an install that had failed", g->p->deploy);
        save(g);
        g->install_failed = false;
    } else
        failed_install(g, v, err);
}

static void rollback(svc_prog *g, const char *fmt, const char *why)
{
    unsigned bad = g->st.deployed, back = g->st.previous;
    if (!install(g, back, SVC_PHASE_WATCHING))
        return;
    svc_history(g, bad, "rolled back", fmt, why, back);
    save(g);
}

/* The cycles of every kept version's profile: what a round's estimates
 * stand for, against which the optimizer's predicted saving is a share. */
static double profile_cycles(svc_prog *g, profdb *db)
{
    double total = 0;
    for (unsigned v = 0; v < g->st.next; v++) {
        char *exe = svc_version_exe(g, v), err[512];
        svc_profile m;
        if (exe && access(exe, R_OK) == 0 && svc_measure(db, NULL, exe, NULL, &m, err, sizeof err)) {
            total += m.cycles;
            svc_profile_free(&m);
        }
        free(exe);
    }
    return total;
}

/* The two newest closed epochs after st.through holding samples of exe. */
static int recent_epochs(svc_prog *g, profdb *db, const char *exe, svc_profile m[2],
                         char names[2][PROFDB_EPOCH_MAX])
{
    char **ep = NULL, cur[PROFDB_EPOCH_MAX], err[512];
    size_t n = 0;
    profdb_error pe;
    if (!profdb_epochs(db, &ep, &n, &pe) || !profdb_current_epoch(db, cur, &pe)) {
        profdb_strv_free(ep);
        return 0;
    }
    int found = 0;
    for (size_t i = n; i-- > 0 && found < 2;) {
        if (!strcmp(ep[i], cur) || strcmp(ep[i], g->st.through) <= 0)
            continue;
        svc_profile p;
        if (!svc_measure(db, ep[i], exe, g->p, &p, err, sizeof err)) {
            svc_log("%s: epoch %s: %s", g->p->name, ep[i], err);
            continue;
        }
        if (!p.samples) {
            svc_profile_free(&p);
            continue;
        }
        /* newest first: m[1] the newer one */
        m[1 - found] = p;
        snprintf(names[1 - found], PROFDB_EPOCH_MAX, "%s", ep[i]);
        found++;
    }
    if (found == 1) {
        m[0] = m[1];
        snprintf(names[0], PROFDB_EPOCH_MAX, "%s", names[1]);
    }
    profdb_strv_free(ep);
    return found;
}

/* A round, and the install of what it made; from says what profile. */
static void deploy_round(svc_prog *g, profdb *db, const char *from)
{
    unsigned v;
    char err[1024];
    if (!svc_round(g, db, profile_cycles(g, db), &v, err, sizeof err)) {
        svc_history(g, v, "rejected", "%s", err);
        save(g);
        return;
    }
    unsigned old = g->st.deployed;
    g->st.previous = old;
    profdb_error pe;
    if (!profdb_current_epoch(db, g->st.since, &pe))
        g->st.since[0] = 0;
    if (!install(g, v, SVC_PHASE_JUDGING))
        return;
    svc_history(g, v, "deployed", "from %s; judged against version %u", from, old);
    save(g);
    svc_prune(g);
}

static void watch(svc_prog *g, profdb *db)
{
    char from[160];
    if (g->st.stale >= 0 && !g->st.carried) {
        /* a new build: its older build's profile is converged already */
        g->st.carried = true;
        snprintf(from, sizeof from, "the profile carried over from version %d", g->st.stale);
        deploy_round(g, db, from);
        return;
    }
    char *exe = svc_version_exe(g, g->st.deployed);
    svc_profile m[2];
    char names[2][PROFDB_EPOCH_MAX];
    int found = exe ? recent_epochs(g, db, exe, m, names) : 0;
    free(exe);
    if (found < 2) {
        if (found)
            svc_profile_free(&m[0]);
        return;
    }
    double overlap = svc_overlap(&m[0], &m[1]);
    uint64_t samples = m[0].samples + m[1].samples;
    svc_profile_free(&m[0]);
    svc_profile_free(&m[1]);
    if (overlap < g->p->converge || samples < g->p->min_samples)
        return;
    /* a round uses these epochs once, whatever it decides */
    snprintf(g->st.through, sizeof g->st.through, "%s", names[1]);
    svc_log("%s: profile converged: epochs %s and %s agree to %.1f%% with %llu samples",
            g->p->name, names[0], names[1], 100 * overlap, (unsigned long long)samples);
    if (g->st.stale >= 0) {
        svc_log("%s: fresh samples take over from the profile of version %d", g->p->name,
                g->st.stale);
        g->st.stale = -1;
    }
    snprintf(from, sizeof from, "the profile through epoch %s", names[1]);
    deploy_round(g, db, from);
}

/* The profile of exe summed over the closed epochs in (after, until], or
 * [after, until] with from_after (either end open when empty); *n gets how
 * many epochs held samples. */
static bool measure_span(svc_prog *g, profdb *db, const char *exe, const char *after,
                         bool from_after, const char *until, svc_profile *sum, int *n, char *err,
                         size_t errlen)
{
    char **ep = NULL, cur[PROFDB_EPOCH_MAX];
    size_t count = 0;
    profdb_error pe;
    memset(sum, 0, sizeof *sum);
    *n = 0;
    if (!profdb_epochs(db, &ep, &count, &pe) || !profdb_current_epoch(db, cur, &pe)) {
        snprintf(err, errlen, "%.500s", pe.msg);
        profdb_strv_free(ep);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < count; i++) {
        if (!strcmp(ep[i], cur) || (after[0] && strcmp(ep[i], after) < (from_after ? 0 : 1)) ||
            (until[0] && strcmp(ep[i], until) > 0))
            continue;
        svc_profile p;
        if (!(ok = svc_measure(db, ep[i], exe, g->p, &p, err, errlen)))
            break;
        *n += p.samples > 0;
        sum->samples += p.samples;
        sum->cycles += p.cycles;
        sum->units += p.units;
        for (int k = 0; k < 3; k++)
            sum->exits[k] += p.exits[k];
        svc_profile_free(&p);
    }
    profdb_strv_free(ep);
    return ok;
}

static bool report_file(const rpt *r, const char *dir, const char *name, bool html)
{
    char *path = svc_join(dir, name), err[512];
    outfile o;
    FILE *f = path ? outfile_open_stream(&o, path, 0644, err, sizeof err) : NULL;
    bool ok = f != NULL;
    if (f) {
        if (html)
            rpt_html(r, f, 30);
        else
            rpt_text(r, f, 30);
        ok = outfile_commit(&o, err, sizeof err);
    }
    free(path);
    return ok;
}

/* The before-and-after report of a judged version, in versions/N/judged
 * (docs/reports.md). */
static void judged_report(svc_prog *g, profdb *db, unsigned old_v, unsigned new_v)
{
    char *old_exe = svc_version_exe(g, old_v), *new_exe = svc_version_exe(g, new_v);
    char *dir = svc_format("%s/versions/%u/judged", g->dir, new_v), err[1024];
    rpt r;
    bool ok = old_exe && new_exe && dir && (mkdir(dir, 0755) == 0 || errno == EEXIST) &&
              rpt_build(profdb_dir(db), NULL, old_exe, new_exe, &r, err, sizeof err);
    if (ok) {
        ok = report_file(&r, dir, "report.txt", false) && report_file(&r, dir, "index.html", true);
        rpt_free(&r);
        if (ok)
            svc_log("%s: report of version %u against %u in %s", g->p->name, new_v, old_v, dir);
    }
    if (!ok)
        svc_log("%s: no report of version %u: %s", g->p->name, new_v, dir ? err : "out of memory");
    free(old_exe);
    free(new_exe);
    free(dir);
}

/* Crashes and failures judge a version at once, from every epoch. */
static bool judge_exits(svc_prog *g, profdb *db, const char *now_exe, const char *old_exe)
{
    svc_profile a, b;
    char err[512], why[256];
    if (!svc_measure(db, NULL, now_exe, NULL, &a, err, sizeof err))
        return false;
    if (!svc_measure(db, NULL, old_exe, NULL, &b, err, sizeof err)) {
        svc_profile_free(&a);
        return false;
    }
    double runs_a = (double)(a.exits[0] + a.exits[1] + a.exits[2]);
    double runs_b = (double)(b.exits[0] + b.exits[1] + b.exits[2]);
    bool rolled = true;
    if (a.exits[PROFDB_EXIT_SIGNAL]) {
        snprintf(why, sizeof why, "%llu of its runs were killed by a signal",
                 (unsigned long long)a.exits[PROFDB_EXIT_SIGNAL]);
        rollback(g, "%s; version %u is back", why);
    } else if (runs_a >= 10 && a.exits[1] / runs_a > (runs_b ? b.exits[1] / runs_b : 0) + 0.05) {
        snprintf(why, sizeof why, "%.0f%% of its runs failed", 100 * a.exits[1] / runs_a);
        rollback(g, "%s; version %u is back", why);
    } else {
        rolled = false;
    }
    svc_profile_free(&a);
    svc_profile_free(&b);
    return rolled;
}

/* Cycles per unit of work of the new version over the whole epochs since
 * its deploy, against the old one's over the epochs up to it: whole
 * epochs, so both stand for the same mix of work. */
static void judge(svc_prog *g, profdb *db)
{
    char *now_exe = svc_version_exe(g, g->st.deployed), *old_exe = svc_version_exe(g, g->st.previous);
    svc_profile a, b;
    char err[512], why[256];
    int na = 0, nb = 0;
    /* the deploy's epoch counts when the old version did no work in it */
    svc_profile in_since = { 0 };
    bool whole = false;
    if (now_exe && old_exe && g->st.since[0] &&
        svc_measure(db, g->st.since, old_exe, NULL, &in_since, err, sizeof err)) {
        whole = in_since.samples == 0;
        svc_profile_free(&in_since);
    }
    bool ok = now_exe && old_exe && !judge_exits(g, db, now_exe, old_exe) &&
              measure_span(g, db, now_exe, g->st.since, whole, "", &a, &na, err, sizeof err) &&
              measure_span(g, db, old_exe, "", false, g->st.since, &b, &nb, err, sizeof err);
    free(now_exe);
    free(old_exe);
    if (ok && !b.samples && g->st.reference >= 0) {
        /* the new build never ran unoptimized: the older build's last
         * version did the same work */
        char *ref = svc_version_exe(g, (unsigned)g->st.reference);
        ok = ref && measure_span(g, db, ref, "", false, g->st.since, &b, &nb, err, sizeof err);
        free(ref);
    }
    if (!ok || !na || a.samples < g->p->min_samples || a.units <= 0)
        return;
    double ca = svc_cycles_per_unit(&a), cb = svc_cycles_per_unit(&b);
    double change = cb > 0 ? ca / cb - 1 : 0;
    snprintf(why, sizeof why, "cycles per unit of work %.0f -> %.0f (%+.1f%%) over %d epoch%s",
             cb, ca, 100 * change, na, na == 1 ? "" : "s");
    judged_report(g, db, g->st.previous, g->st.deployed);
    if (change > g->p->regression) {
        rollback(g, "%s, beyond the regression threshold; version %u is back", why);
    } else {
        snprintf(g->st.phase, sizeof g->st.phase, "%s", SVC_PHASE_WATCHING);
        svc_history(g, g->st.deployed, "kept", "%s", why);
        save(g);
    }
}

/* A new build at the original's path becomes a new base version. */
static void rebuild(svc_prog *g, const char *id)
{
    unsigned n = g->st.next;
    char *tmp = svc_format("%s/versions/%u.tmp", g->dir, n), *dir = svc_version_dir(g, n);
    char *exe = tmp ? svc_join(tmp, "exe") : NULL, err[512] = "out of memory";
    bool ok = tmp && dir && exe && mkdir(tmp, 0755) == 0 &&
              svc_copy(g->p->original, exe, 0755, err, sizeof err) && rename(tmp, dir) == 0;
    free(exe);
    free(dir);
    if (!ok) {
        svc_log("%s: cannot take the new build: %s", g->p->name, err);
        if (tmp)
            svc_remove_tree(tmp);
        free(tmp);
        return;
    }
    free(tmp);
    g->st.next = n + 1;
    snprintf(g->st.build, sizeof g->st.build, "%s", id);
    g->st.stale = (int)g->st.base;
    g->st.reference = (int)g->st.deployed;
    g->st.carried = false;
    g->st.base = g->st.previous = n;
    g->st.through[0] = 0;
    if (!install(g, n, SVC_PHASE_WATCHING))
        return;
    svc_history(g, n, "new build", "%s (build-id %.12s...) deployed as it is; the profile of "
                "version %d carries over", g->p->original, id, g->st.stale);
    save(g);
    svc_prune(g);
}

/* Whether the deploy path still holds the deployed version: someone may
 * have replaced or removed it.  Said once in the log (cpo status says it
 * too), never put back: a person who put another build there meant it.  The
 * bytes are compared only when the file there is another file than the
 * last time (an install makes a new one). */
static void check_deploy(svc_prog *g)
{
    struct stat st;
    bool there = lstat(g->p->deploy, &st) == 0;
    if (there && st.st_ino == g->deploy_ino)
        return;
    if (there && svc_deploy_holds(g)) {
        g->deploy_ino = st.st_ino;
        g->deploy_warned = false;
    } else if (!g->deploy_warned) {
        svc_log("%s: %s no longer holds version %u (%s); left as it is", g->p->name, g->p->deploy,
                g->st.deployed, there ? "another file is there" : "nothing is there");
        g->deploy_warned = true;
        g->deploy_ino = 0;
    }
}

static void step(svc_prog *g, profdb *db)
{
    if (strcmp(g->st.phase, SVC_PHASE_DEPLOYING))
        check_deploy(g);
    char id[129], err[512];
    if (!svc_build_id(g->p->original, id, err, sizeof err))
        svc_log("%s: %s", g->p->name, err);
    else if (id[0] && strcmp(id, g->st.build))
        rebuild(g, id);
    if (!strcmp(g->st.phase, SVC_PHASE_JUDGING))
        judge(g, db);
    else if (!strcmp(g->st.phase, SVC_PHASE_WATCHING))
        watch(g, db);
    else if (!strcmp(g->st.phase, SVC_PHASE_DEPLOYING))
        retry_install(g);
}

static int lock_service(const char *state)
{
    char *path = svc_join(state, "serve.pid");
    int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB)) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = 0;
        /* the winner may not have written its pid yet */
        char *pid = strtok(buf, "\n");
        fprintf(stderr, "cpo serve: %s is served already (pid %s)\n", state, pid ? pid : "not yet recorded");
        close(fd);
        fd = -1;
    } else if (fd >= 0) {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)n, 0) != n)
            fprintf(stderr, "cpo serve: %s: cannot record the pid\n", path);
    } else {
        fprintf(stderr, "cpo serve: %s: %s\n", path ? path : state, strerror(errno));
    }
    free(path);
    return fd;
}

static void sleep_poll(double seconds)
{
    struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    while (!stop_requested && !reload_requested && nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Load the configuration and every program's state; programs that cannot
 * start are reported and left out. */
static bool start(const char *path, const char *tools, svc_config *cfg, svc_prog **progs,
                  size_t *n)
{
    char err[1024];
    if (!svc_config_load(path, tools, cfg, err, sizeof err)) {
        fprintf(stderr, "cpo serve: %s\n", err);
        return false;
    }
    svc_prog *v = calloc(cfg->nprograms, sizeof *v);
    if (!v)
        return false;
    *n = 0;
    for (size_t i = 0; i < cfg->nprograms; i++) {
        svc_prog *g = &v[*n];
        *g = (svc_prog){ .cfg = cfg, .p = &cfg->programs[i],
                         .dir = svc_join(cfg->state, cfg->programs[i].name) };
        if (g->dir && svc_state_open(g, err, sizeof err)) {
            svc_log("%s: version %u deployed at %s, %s", g->p->name, g->st.deployed,
                    g->p->deploy, g->st.phase);
            (*n)++;
            continue;
        }
        svc_log("%s: not looked after: %s", cfg->programs[i].name, g->dir ? err : "out of memory");
        svc_state_free(&g->st);
        free(g->dir);
    }
    *progs = v;
    return true;
}

static void finish(svc_config *cfg, svc_prog *progs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        svc_state_free(&progs[i].st);
        free(progs[i].dir);
    }
    free(progs);
    svc_config_free(cfg);
}

int svc_serve(const char *config_path, const char *tools, const svc_options *o)
{
    svc_config cfg;
    char err[1024];
    if (!svc_config_load(config_path, tools, &cfg, err, sizeof err)) {
        fprintf(stderr, "cpo serve: %s\n", err);
        return 1;
    }
    /* Each step says what went wrong itself: lock_service on stderr,
     * the others in err. */
    int lock = -1;
    err[0] = 0;
    bool made = mkdir(cfg.state, 0755) == 0 || errno == EEXIST;
    if (!made)
        snprintf(err, sizeof err, "%s: cannot make the state directory: %s", cfg.state, strerror(errno));
    bool ok = made && svc_log_open(cfg.state, err, sizeof err) && (lock = lock_service(cfg.state)) >= 0;
    if (!ok && err[0])
        fprintf(stderr, "cpo serve: %s\n", err);
    char *state = strdup(cfg.state);
    svc_config_free(&cfg);
    if (!ok || !state) {
        free(state);
        return 1;
    }
    struct sigaction sa = { .sa_handler = on_stop };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    svc_prog *progs = NULL;
    size_t n = 0;
    int status = 0;
    double t0 = now();
    bool started = false;
    while (!stop_requested && status == 0) {
        if (!progs) {
            if (!start(config_path, tools, &cfg, &progs, &n)) {
                status = 1;
                break;
            }
            /* Nothing to look after at start-up (--once too) is a failure
             * to start, not a service that looks busy and does nothing.  A
             * SIGHUP does not end a running service (nor does a broken
             * configuration): it waits for the next. */
            if (!n)
                svc_log("no program is looked after: every one %s names was refused (see above)%s",
                        config_path, started ? "; waiting for a SIGHUP" : "");
            if (!n && !started) {
                status = 1;
                break;
            }
            started = true;
        }
        profdb_error pe;
        profdb *db = profdb_open(cfg.db, 0, &pe);
        if (!db)
            svc_log("waiting for the database: %s", pe.msg);
        for (size_t i = 0; db && i < n && !stop_requested; i++)
            step(&progs[i], db);
        profdb_close(db);
        if (o->once || (o->max_seconds > 0 && now() - t0 > o->max_seconds))
            break;
        sleep_poll(cfg.poll);
        if (reload_requested) {
            reload_requested = 0;
            svc_config test;
            if (!svc_config_load(config_path, tools, &test, err, sizeof err)) {
                svc_log("SIGHUP: %s; going on with the configuration as it was", err);
                continue;
            }
            /* The lock and the log belong to the state directory this
             * service started with: another one takes a restart. */
            bool moved = strcmp(test.state, state) != 0;
            if (moved)
                svc_log("SIGHUP: 'state' changed from %s to %s, which takes a restart; going on "
                        "with the configuration as it was", state, test.state);
            svc_config_free(&test);
            if (moved)
                continue;
            svc_log("SIGHUP: reading %s again", config_path);
            finish(&cfg, progs, n);
            progs = NULL;
        }
    }
    if (stop_requested)
        svc_log("stopping on a signal; state saved");
    if (progs)
        finish(&cfg, progs, n);
    svc_log_close();
    close(lock);
    free(state);
    return status;
}
