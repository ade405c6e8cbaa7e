/*
 * Unit tests for the cpod daemon, through its public headers: a daemon runs
 * in a child process (cpod_open + cpod_serve), the test plays the machine
 * through cpod_attach and the driver, steers the daemon with
 * cpod_request, and reads the database back with profdb.  Images are named
 * by paths that do not exist, so offsets are file offsets and no Alpha
 * file is needed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/client.h"
#include "collector/cpod.h"
#include "collector/driver.h"
#include "profdb/profdb.h"
#include "tests/unit/scratch.h"

static char db[700], logpath[300];

static void setup(void)
{
    scratch_make();
    snprintf(db, sizeof db, "%s/db", scratch_dir);
    snprintf(logpath, sizeof logpath, "%s/log", scratch_dir);
}

/* The daemon's regions are on /dev/shm, outside the scratch directory:
 * found through STATE/regions before that goes. */
static void teardown(void)
{
    char state[CPOD_PATH_MAX], msg[256], cmd[CPOD_PATH_MAX + 600], link[CPOD_PATH_MAX + 16], target[CPOD_PATH_MAX];
    if (cpod_state_dir(db, false, state, msg, sizeof msg)) {
        snprintf(link, sizeof link, "%s/regions", state);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0 && (target[n] = '\0', !strncmp(target, "/dev/shm/cpod-", 14))) {
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", target);
            if (system(cmd)) {}
        }
    }
    scratch_remove();
}

TestSuite(cpod, .init = setup, .fini = teardown, .timeout = 60);

/* ---- helpers ------------------------------------------------------------------- */

static pid_t start_daemon(const char *drain, const char *const *pp, size_t npp)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t c = fork();
    cr_assert(c >= 0);
    if (c == 0) {
        close(p[0]);
        cpod_options o = { .db_dir = db, .log_path = logpath, .flush_ms = 3600000,
                           .per_process = pp, .nper_process = npp };
        long long ms;
        if (drain && cpod_parse_interval(drain, &ms))
            o.drain_ms = ms;
        char msg[1024];
        cpod *d = cpod_open(&o, msg, sizeof msg);
        if (!d) {
            if (write(p[1], msg, strlen(msg))) {}
            _exit(1);
        }
        if (write(p[1], "ok", 2)) {}
        close(p[1]);
        int rc = cpod_serve(d);
        cpod_close(d);
        _exit(rc);
    }
    close(p[1]);
    char buf[1024] = "";
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    buf[n > 0 ? n : 0] = '\0';
    cr_assert_str_eq(buf, "ok", "daemon did not start: %s", buf);
    return c;
}

static int request(const char *what, char **reply, char *msg)
{
    *reply = NULL;
    return cpod_request(db, what, 20000, reply, msg, 1024);
}

static void must(const char *what)
{
    char *reply, msg[1024];
    int rc = request(what, &reply, msg);
    cr_assert_eq(rc, CPOD_REPLY_OK, "%s: %s", what, msg);
    free(reply);
}

static void stop_daemon(pid_t c)
{
    must("quit");
    int st;
    cr_assert_eq(waitpid(c, &st, 0), c);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "daemon exit status %d", st);
}

/* Answers the daemon's flush requests, as the machine's scheduler does. */
static atomic_int polling;
static void *poller(void *arg)
{
    drv *d = arg;
    while (atomic_load(&polling)) {
        for (unsigned c = 0; c < drv_ncpus(d); c++)
            drv_poll(d, c);
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    return NULL;
}

static uint64_t count_at(const char *key, const char *event, uint64_t off)
{
    profdb_error err;
    profdb *p = profdb_open(db, 0, &err);
    cr_assert(p, "%s", err.msg);
    profdb_profile prof;
    uint64_t c = 0;
    if (profdb_sum(p, NULL, NULL, key, event, &prof, NULL, &err)) {
        for (size_t i = 0; i < prof.n; i++)
            if (prof.e[i].offset == off)
                c = prof.e[i].count;
        profdb_profile_free(&prof);
    }
    profdb_close(p);
    return c;
}

static uint64_t total_of(const char *key, const char *event, double *mean)
{
    profdb_error err;
    profdb *p = profdb_open(db, 0, &err);
    cr_assert(p, "%s", err.msg);
    profdb_profile prof;
    uint64_t t = 0;
    if (profdb_sum(p, NULL, NULL, key, event, &prof, NULL, &err)) {
        t = prof.info.total;
        if (mean)
            *mean = profdb_mean_period(&prof.info);
        profdb_profile_free(&prof);
    }
    profdb_close(p);
    return t;
}

static void load(drv *d, uint32_t pid, uint64_t base, uint64_t size, uint64_t off, const char *path,
                 uint8_t bidbyte)
{
    uint8_t bid[20];
    memset(bid, bidbyte, sizeof bid);
    cr_assert_eq(drv_notice_load(d, pid, base, size, off, path, bid, sizeof bid), DRV_OK);
}

static void sample(drv *d, uint32_t pid, uint64_t pc, unsigned ev)
{
    cr_assert_eq(drv_sample(d, 0, pid, pc, ev), DRV_OK);
}

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KEY_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define KEY_C "cccccccccccccccccccccccccccccccccccccccc"

/* ---- small pieces ------------------------------------------------------------------ */

Test(cpod, intervals)
{
    struct { const char *s; long long ms; } ok[] = {
        { "30", 30000 }, { "30s", 30000 }, { "250ms", 250 }, { "5m", 300000 }, { "2h", 7200000 },
        { "1.5s", 1500 }, { "1d", 86400000 }, { "0.5", 500 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        long long ms = -1;
        cr_assert(cpod_parse_interval(ok[i].s, &ms), "%s", ok[i].s);
        cr_assert_eq(ms, ok[i].ms, "%s: %lld", ok[i].s, ms);
    }
    const char *bad[] = { "", "0", "-1", "5x", "ms", "1e400", "0.1ms", "s5", "10 s", NULL };
    for (size_t i = 0; bad[i]; i++) {
        long long ms;
        cr_assert_not(cpod_parse_interval(bad[i], &ms), "'%s' accepted", bad[i]);
    }
    cr_assert_not(cpod_parse_interval(NULL, &(long long){ 0 }));
}

Test(cpod, locations)
{
    char state[CPOD_PATH_MAX], regions[CPOD_PATH_MAX], again[CPOD_PATH_MAX], msg[512];
    cr_assert_not(cpod_state_dir(db, false, state, msg, sizeof msg));
    cr_assert(strstr(msg, "no cpod state"), "%s", msg);
    cr_assert(cpod_state_dir(db, true, state, msg, sizeof msg), "%s", msg);
    cr_assert(strstr(state, "/.cpod/"), "%s", state);
    cr_assert_not(cpod_regions_dir(state, false, regions, msg, sizeof msg));
    cr_assert(cpod_regions_dir(state, true, regions, msg, sizeof msg), "%s", msg);
    struct stat st;
    cr_assert_eq(stat(regions, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    cr_assert_eq(st.st_mode & 077, 0, "regions directory mode %o", st.st_mode & 0777);
    cr_assert(cpod_regions_dir(state, false, again, msg, sizeof msg), "%s", msg);
    cr_assert_str_eq(again, regions);
    if (strncmp(regions, "/dev/shm/", 9) == 0) {
        /* After a reboot the tmpfs is empty and the link dangles. */
        cr_assert_eq(rmdir(regions), 0);
        cr_assert(cpod_regions_dir(state, true, again, msg, sizeof msg), "%s", msg);
        cr_assert_str_eq(again, regions);
        cr_assert_eq(stat(regions, &st), 0);
    }
    /* A file where the database should be */
    char file[400];
    snprintf(file, sizeof file, "%s/plainfile", scratch_dir);
    int fd = open(file, O_CREAT | O_WRONLY, 0644);
    close(fd);
    cr_assert_not(cpod_state_dir(file, true, state, msg, sizeof msg));
    cr_assert(strstr(msg, "plainfile"), "%s", msg);
}

Test(cpod, attach_checks_its_machine)
{
    drv_error err;
    cpod_machine m = { .ncpus = 0 };
    cr_assert_null(cpod_attach(db, &m, NULL, 0, &err));
    cr_assert_eq(err.code, DRV_EINVAL);
    cpod_event bad_name[] = { { 0, "two words", 1 } };
    m = (cpod_machine){ .ncpus = 2, .events = bad_name, .nevents = 1 };
    cr_assert_null(cpod_attach(db, &m, NULL, 0, &err));
    cr_assert_eq(err.code, DRV_EINVAL);
    cpod_event twice[] = { { 3, "a", 1 }, { 3, "b", 1 } };
    m.events = twice;
    m.nevents = 2;
    cr_assert_null(cpod_attach(db, &m, NULL, 0, &err));
    cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
    cpod_event big[] = { { 256, "x", 1 } };
    m.events = big;
    m.nevents = 1;
    cr_assert_null(cpod_attach(db, &m, NULL, 0, &err));

    cpod_event good[] = { { 0, "cycles", 62000 }, { 7, "my.event-1", 0 } };
    m = (cpod_machine){ .ncpus = 2, .events = good, .nevents = 2, .name = "test\nmachine" };
    char path[CPOD_PATH_MAX];
    drv *d = cpod_attach(db, &m, path, sizeof path, &err);
    cr_assert(d, "%s", err.msg);
    cr_assert_eq(drv_ncpus(d), 2);
    size_t n = strlen(path);
    cr_assert(n > 4 && !strcmp(path + n - 4, ".drv"), "%s", path);
    char meta[CPOD_PATH_MAX + 8], text[512] = "";
    snprintf(meta, sizeof meta, "%.*s.meta", (int)(n - 4), path);
    FILE *f = fopen(meta, "r");
    cr_assert(f, "%s", meta);
    size_t k = fread(text, 1, sizeof text - 1, f);
    text[k] = '\0';
    fclose(f);
    cr_assert(strstr(text, "event 7 my.event-1 0\n"), "%s", text);
    cr_assert(strstr(text, "name test machine\n"), "a newline in the name must not split the line: %s", text);
    /* A second machine of the same process gets a region of its own. */
    char path2[CPOD_PATH_MAX];
    drv *d2 = cpod_attach(db, &m, path2, sizeof path2, &err);
    cr_assert(d2, "%s", err.msg);
    cr_assert_str_neq(path, path2);
    cr_assert_not(cpod_running(db, NULL));
    drv_close(d);
    drv_close(d2);
}

/* ---- the daemon ------------------------------------------------------------------- */

Test(cpod, control_and_lock)
{
    char *reply, msg[1024];
    cr_assert_eq(request("flush", &reply, msg), CPOD_NO_DAEMON);
    cr_assert(strstr(msg, "no cpod is running"), "%s", msg);
    pid_t c = start_daemon(NULL, NULL, 0);
    int pid = 0;
    cr_assert(cpod_running(db, &pid));
    cr_assert_eq(pid, c);
    /* A second daemon is refused, naming the first. */
    cpod_options o = { .db_dir = db, .log_path = logpath };
    cpod *d2 = cpod_open(&o, msg, sizeof msg);
    cr_assert_null(d2);
    char want[64];
    snprintf(want, sizeof want, "already served by cpod pid %d", (int)c);
    cr_assert(strstr(msg, want), "%s", msg);

    cr_assert_eq(request("status", &reply, msg), CPOD_REPLY_OK, "%s", msg);
    snprintf(want, sizeof want, "pid %d\n", (int)c);
    cr_assert(strstr(reply, want), "%s", reply);
    free(reply);
    cr_assert_eq(request("shutdown-now", &reply, msg), CPOD_REPLY_ERROR);
    cr_assert(strstr(msg, "unknown request 'shutdown-now'"), "%s", msg);
    free(reply);
    cr_assert_eq(request("flush", &reply, msg), CPOD_REPLY_OK, "%s", msg);
    cr_assert(strstr(reply, "flushed 0 samples"), "%s", reply);
    free(reply);
    cr_assert_eq(request("epoch", &reply, msg), CPOD_REPLY_OK, "%s", msg);
    cr_assert(strstr(reply, "new epoch "), "%s", reply);
    free(reply);
    stop_daemon(c);
    cr_assert_not(cpod_running(db, NULL));
    cr_assert_eq(request("flush", &reply, msg), CPOD_NO_DAEMON, "%s", msg);
}

Test(cpod, maps_fork_exec_exit_and_events)
{
    const char *pp[] = { "libb.so" };
    pid_t c = start_daemon(NULL, pp, 1);
    cpod_event evs[] = { { 0, "cycles", 1000 }, { 5, "custom", 10 } };
    cpod_machine m = { .ncpus = 1, .events = evs, .nevents = 2,
                       .drv = { .full_mode = DRV_FULL_STALL } };
    drv_error err;
    char region[4200], pp10[300], pp11[300];
    drv *d = cpod_attach(db, &m, region, sizeof region, &err);
    cr_assert(d, "%s", err.msg);
    /* per-process profiles are named by pid and the region's NAME.drv */
    const char *base = strrchr(region, '/') + 1;
    int blen = (int)strlen(base) - 4;
    snprintf(pp10, sizeof pp10, "cycles@pid-10.%.*s", blen, base);
    snprintf(pp11, sizeof pp11, "cycles@pid-11.%.*s", blen, base);
    pthread_t th;
    atomic_store(&polling, 1);
    pthread_create(&th, NULL, poller, d);

    /* A over [0x10000, 0x14000); B mapped over its middle page cuts it in two. */
    load(d, 10, 0x10000, 0x4000, 0, "/nonexistent/a.out", 0xaa);
    load(d, 10, 0x12000, 0x1000, 0x5000, "/nonexistent/libb.so", 0xbb);
    sample(d, 10, 0x10010, 0);                 /* A +0x10 */
    sample(d, 10, 0x12010, 0);                 /* B +0x5010 */
    sample(d, 10, 0x13010, 0);                 /* A +0x3010 */
    sample(d, 10, 0x13010, 5);                 /* A +0x3010, event "custom" */
    sample(d, 10, 0x13010, 9);                 /* standard name: issues */
    sample(d, 10, 0x13010, 200);               /* no name anywhere: event200 */
    sample(d, 10, 0x20000, 0);                 /* mapped nowhere */
    cr_assert_eq(drv_notice_fork(d, 10, 11), DRV_OK);
    sample(d, 11, 0x10020, 0);                 /* inherited A +0x20 */
    sample(d, 11, 0x12020, 0);                 /* inherited B: per-process for pid 11 */
    cr_assert_eq(drv_notice_exec(d, 11), DRV_OK);
    load(d, 11, 0x40000, 0x1000, 0, "/nonexistent/c.out", 0xcc);
    sample(d, 11, 0x40004, 0);                 /* C +4 */
    sample(d, 11, 0x10030, 0);                 /* before the exec, still in a table: A +0x30 */
    cr_assert_eq(drv_notice_exit(d, 10, 0), DRV_OK);
    sample(d, 10, 0x10040, 0);                 /* exited, not yet flushed: still A +0x40 */
    sample(d, 12, 0x10000, 0);                 /* never announced */
    must("flush");

    cr_assert_eq(count_at(KEY_A, "cycles", 0x10), 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 0x3010), 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 0x20), 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 0x30), 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 0x40), 1);
    cr_assert_eq(total_of(KEY_A, "cycles", NULL), 5);
    cr_assert_eq(count_at(KEY_A, "custom", 0x3010), 1);
    cr_assert_eq(count_at(KEY_A, "issues", 0x3010), 1);
    cr_assert_eq(count_at(KEY_A, "event200", 0x3010), 1);
    cr_assert_eq(count_at(KEY_B, "cycles", 0x5010), 1);
    cr_assert_eq(count_at(KEY_B, "cycles", 0x5020), 1);
    cr_assert_eq(count_at(KEY_B, pp10, 0x5010), 1);
    cr_assert_eq(count_at(KEY_B, pp11, 0x5020), 1);
    cr_assert_eq(total_of(KEY_A, pp10, NULL), 0, "A is not per-process");
    cr_assert_eq(count_at(KEY_C, "cycles", 4), 1);
    cr_assert_eq(count_at("unknown", "cycles", 0x20000), 1);
    cr_assert_eq(count_at("unknown", "cycles", 0x10000), 1);
    double mean = 0;
    cr_assert_eq(total_of(KEY_A, "custom", &mean), 1);
    cr_assert_float_eq(mean, 10.0, 1e-9);
    total_of(KEY_A, "cycles", &mean);
    cr_assert_float_eq(mean, 1000.0, 1e-9);

    /* That flush completed after pid 10's exit: its map is gone now. */
    sample(d, 10, 0x10050, 0);
    must("flush");
    cr_assert_eq(count_at("unknown", "cycles", 0x10050), 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 0x50), 0);

    atomic_store(&polling, 0);
    pthread_join(th, NULL);
    drv_close(d);
    stop_daemon(c);
}

Test(cpod, journal_survives_sigkill)
{
    pid_t c = start_daemon("50ms", NULL, 0);
    cpod_machine m = { .ncpus = 2, .drv = { .full_mode = DRV_FULL_STALL, .table_entries = 64,
                                            .buffer_entries = 16 } };
    drv_error err;
    drv *d = cpod_attach(db, &m, NULL, 0, &err);
    cr_assert(d, "%s", err.msg);
    pthread_t th;
    atomic_store(&polling, 1);
    pthread_create(&th, NULL, poller, d);
    load(d, 7, 0x100000, 0x10000, 0, "/nonexistent/prog", 0xaa);
    enum { N = 5000 };
    for (unsigned i = 0; i < N; i++) {
        int rc;
        while ((rc = drv_sample(d, i & 1, 7, 0x100000 + 4 * (i % 700), 0)) == DRV_FULL)
            drv_wait(d, i & 1, 10);
        cr_assert_eq(rc, DRV_OK);
    }
    /* Wait for the daemon to hold every sample in memory (drains every 50 ms;
     * up to 20 s, for a machine busy with other work: 4 s once was not). */
    char *reply, msg[1024];
    bool all = false;
    for (int t = 0; t < 2000 && !all; t++) {
        cr_assert_eq(request("status", &reply, msg), CPOD_REPLY_OK, "%s", msg);
        all = strstr(reply, "samples 5000 since start") != NULL;
        free(reply);
        if (!all)
            nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
    }
    cr_assert(all, "the daemon never took all %d samples", N);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    cr_assert_eq(total_of(KEY_A, "cycles", NULL), 0, "nothing was merged before the kill");

    /* The next daemon rebuilds the samples and the maps from the journal:
     * later samples of the same process still find their image. */
    c = start_daemon("50ms", NULL, 0);
    sample(d, 7, 0x100000 + 4 * 701, 0);
    sample(d, 1, 0x100000 + 4 * 701, 1);   /* another process: unknown */
    must("flush");
    cr_assert_eq(total_of(KEY_A, "cycles", NULL), N + 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 4 * 701), 1);
    cr_assert_eq(count_at(KEY_A, "cycles", 0), N / 700 + 1);
    cr_assert_eq(total_of("unknown", "imiss", NULL), 1);
    atomic_store(&polling, 0);
    pthread_join(th, NULL);
    drv_close(d);
    stop_daemon(c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(cpod, damaged_files_are_reported_not_fatal)
{
    char state[CPOD_PATH_MAX], regions[CPOD_PATH_MAX], msg[512], path[CPOD_PATH_MAX + 64];
    cr_assert(cpod_state_dir(db, true, state, msg, sizeof msg), "%s", msg);
    cr_assert(cpod_regions_dir(state, true, regions, msg, sizeof msg), "%s", msg);
    snprintf(path, sizeof path, "%s/junk.drv", regions);
    write_file(path, "this is not a driver region\n");
    /* a region whose description is damaged, and whose journal is garbage */
    snprintf(path, sizeof path, "%s/m1-0.drv", regions);
    drv_params p = { .ncpus = 1, .full_mode = DRV_FULL_STALL };
    drv_error err;
    drv *d = drv_open(path, &p, &err);
    cr_assert(d, "%s", err.msg);
    snprintf(path, sizeof path, "%s/m1-0.meta", regions);
    write_file(path, "cpod-machine 1\nevent 999 cycles 1\n");
    snprintf(path, sizeof path, "%s/m1-0.journal", regions);
    write_file(path, "garbage garbage garbage garbage garbage\n");
    /* a pending merge file that is damaged */
    snprintf(path, sizeof path, "%s/pending-3", state);
    write_file(path, "cpod-pending 1\n\0 not really");

    pid_t c = start_daemon(NULL, NULL, 0);
    load(d, 3, 0x10000, 0x1000, 0, "/nonexistent/x", 0xaa);
    sample(d, 3, 0x10008, 0);
    drv_close(d);   /* the machine goes: the daemon salvages */
    must("flush");
    cr_assert_eq(count_at(KEY_A, "cycles", 8), 1, "standard names when the description is bad");
    stop_daemon(c);
    FILE *f = fopen(logpath, "r");
    cr_assert(f);
    char log[16384];
    size_t n = fread(log, 1, sizeof log - 1, f);
    log[n] = '\0';
    fclose(f);
    cr_assert(strstr(log, "junk.drv") && strstr(log, "ignoring this region"), "%s", log);
    cr_assert(strstr(log, "m1-0.meta:2: want \"event ID NAME"), "%s", log);
    cr_assert(strstr(log, "m1-0.journal: not a journal"), "%s", log);
    cr_assert(strstr(log, "pending-3: damaged"), "%s", log);
}

Test(cpod, deep_database_path)
{
    /* Longer than a unix socket's 108-byte path. */
    char deep[600];
    snprintf(deep, sizeof deep, "%s", scratch_dir);
    while (strlen(deep) < 200)
        strcat(deep, "/a-rather-long-directory-name");
    snprintf(db, sizeof db, "%s/db", deep);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", deep);
    cr_assert_eq(system(cmd), 0);
    pid_t c = start_daemon(NULL, NULL, 0);
    must("flush");
    stop_daemon(c);
}
