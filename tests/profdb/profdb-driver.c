/*
 * profdb-driver: deterministic writers and checkers for the profdb
 * integration tests.
 *
 *   write DB SEED LOG [N]        merge batch 1, 2, ... N (default: until
 *                                killed); after each batch is stored append
 *                                its number to LOG
 *   check SNAP DB SEED DONE      every profile in DB reads cleanly, and each
 *                                equals its state in SNAP (a copy taken
 *                                before the writer ran) plus batches 1..k,
 *                                k = DONE or DONE+1: no merge half-visible,
 *                                no stored merge lost
 *   hostwrite DB HOST SEED N     merge N batches as host HOST
 *   hostcheck DB SEED... -- N    the sum over hosts equals every batch of
 *                                every writer SEED (one per host writer)
 *   newepoch DB                  start a new epoch
 *   readloop DB STOPFILE         read every profile again and again until
 *                                STOPFILE exists; any error fails
 *   killrun DB SEED LOG MS [mid] run `write DB SEED LOG` in a child and
 *                                SIGKILL it after MS milliseconds, or with
 *                                "mid" at the first moment after that when a
 *                                profile is half written (its temporary
 *                                file exists)
 *   sample FILE N [unknown]      write one standalone profile of N entries
 *                                (fuzz seeds, cpo cat tests)
 *
 * A batch touches NIMG images x 2 events; its samples depend only on
 * (seed, batch, profile), so a checker regenerates what a writer merged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/profdb/testutil.h"

enum { NIMG = 4, NPROF = 2 * NIMG, NSAMPLES = 20000 };
static const char *const EVENTS[2] = { "cycles", "imiss" };

static void bid(int img, uint8_t out[20])
{
    for (int i = 0; i < 20; i++)
        out[i] = (uint8_t)(0xa0 + img * 7 + i);
}

static profdb_entry *batch(uint64_t seed, uint64_t b, int prof, size_t *n)
{
    *n = NSAMPLES / (1 + prof % 3);
    return tu_samples(seed * 1000003 + b * 101 + (uint64_t)prof, *n, 1u << 20);
}

static profdb_input input_for(int prof, uint8_t *buildid, const char *host, profdb_entry *s, size_t n)
{
    static char paths[NIMG][32];
    int img = prof / 2;
    snprintf(paths[img], sizeof paths[img], "/usr/bin/prog%d", img);
    bid(img, buildid);
    return (profdb_input){ .path = paths[img], .build_id = buildid, .build_id_len = 20,
                           .event = EVENTS[prof % 2], .mean_period = 62000, .host = host,
                           .samples = s, .nsamples = n };
}

static int merge_batch(profdb *db, uint64_t seed, uint64_t b, const char *host)
{
    profdb_input in[NPROF];
    profdb_entry *s[NPROF];
    uint8_t ids[NPROF][20];
    for (int p = 0; p < NPROF; p++) {
        size_t n;
        s[p] = batch(seed, b, p, &n);
        in[p] = input_for(p, ids[p], host, s[p], n);
    }
    profdb_error err;
    size_t k = profdb_merge(db, in, NPROF, &err);
    for (int p = 0; p < NPROF; p++)
        free(s[p]);
    if (k != NPROF || err.code) {
        fprintf(stderr, "profdb-driver: batch %" PRIu64 ": %s\n", b, err.msg);
        return 1;
    }
    return 0;
}

static int cmd_write(char **av)
{
    profdb_error err;
    profdb *db = profdb_open(av[0], PROFDB_CREATE, &err);
    if (!db) {
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
        return 1;
    }
    uint64_t seed = strtoull(av[1], NULL, 0);
    int log = open(av[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log < 0) {
        perror(av[2]);
        return 1;
    }
    uint64_t last = av[3] ? strtoull(av[3], NULL, 0) : 1000000;
    for (uint64_t b = 1; b <= last; b++) {
        if (merge_batch(db, seed, b, "torture"))
            return 1;
        char line[32];
        int len = snprintf(line, sizeof line, "%" PRIu64 "\n", b);
        if (write(log, line, (size_t)len) != len)
            return 1;
    }
    return 0;
}

/* A sparse vector of counts keyed by offset, kept sorted. */
typedef struct {
    profdb_entry *e;
    size_t n;
} vec;

static int cmp_off(const void *a, const void *b)
{
    uint64_t x = ((const profdb_entry *)a)->offset, y = ((const profdb_entry *)b)->offset;
    return x < y ? -1 : x > y;
}

static void vec_add(vec *v, const profdb_entry *s, size_t n)
{
    profdb_entry *add = malloc((n + 1) * sizeof *add), *out = malloc((v->n + n + 1) * sizeof *out);
    memcpy(add, s, n * sizeof *s);
    qsort(add, n, sizeof *add, cmp_off);
    size_t i = 0, j = 0, k = 0;
    while (i < v->n || j < n) {
        profdb_entry x = j == n || (i < v->n && v->e[i].offset <= add[j].offset) ? v->e[i++] : add[j++];
        if (k && out[k - 1].offset == x.offset)
            out[k - 1].count += x.count;
        else
            out[k++] = x;
    }
    free(add);
    free(v->e);
    v->e = out;
    v->n = k;
}

static bool vec_eq(const vec *a, const vec *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->e, b->e, a->n * sizeof *a->e));
}

/* The stored profile of prof in db (all epochs and hosts), empty if none. */
static int load(profdb *db, int prof, vec *v)
{
    uint8_t id[20];
    char key[PROFDB_KEY_MAX];
    bid(prof / 2, id);
    profdb_key(id, 20, NULL, key);
    profdb_profile p;
    profdb_error err;
    v->e = NULL;
    v->n = 0;
    if (!profdb_sum(db, NULL, NULL, key, EVENTS[prof % 2], &p, NULL, &err)) {
        if (err.code == PROFDB_ENOENT)
            return 0;
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
        return 1;
    }
    vec_add(v, p.e, p.n);
    profdb_profile_free(&p);
    return 0;
}

/* Every profile file reads cleanly, whole. */
static unsigned long files_read;

static int read_all(profdb *db, const char *what)
{
    profdb_info *v;
    size_t n;
    profdb_error err;
    if (!profdb_list(db, NULL, &v, &n, &err)) {
        fprintf(stderr, "profdb-driver: %s: %s\n", what, err.msg);
        return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        profdb_profile p;
        if (!profdb_read_file(v[i].file, &p, &err)) {
            fprintf(stderr, "profdb-driver: %s: %s\n", what, err.msg);
            bad = 1;
        } else {
            profdb_profile_free(&p);
            files_read++;
        }
    }
    profdb_infos_free(v, n);
    return bad;
}

static int cmd_check(char **av)
{
    profdb_error err;
    profdb *snap = profdb_open(av[0], 0, &err), *db = snap ? profdb_open(av[1], 0, &err) : NULL;
    if (!db) {
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
        return 1;
    }
    uint64_t seed = strtoull(av[2], NULL, 0), done = strtoull(av[3], NULL, 0);
    if (read_all(db, "after kill"))
        return 1;
    int bad = 0, ahead = 0;
    for (int p = 0; p < NPROF && !bad; p++) {
        vec want, got;
        if (load(snap, p, &want) || load(db, p, &got))
            return 1;
        for (uint64_t b = 1; b <= done; b++) {
            size_t n;
            profdb_entry *s = batch(seed, b, p, &n);
            vec_add(&want, s, n);
            free(s);
        }
        if (!vec_eq(&want, &got)) {
            size_t n;
            profdb_entry *s = batch(seed, done + 1, p, &n);
            vec_add(&want, s, n);
            free(s);
            if (vec_eq(&want, &got)) {
                ahead++;
            } else {
                fprintf(stderr, "profdb-driver: profile %d matches neither batch %" PRIu64
                        " nor %" PRIu64 "\n", p, done, done + 1);
                bad = 1;
            }
        }
        free(want.e);
        free(got.e);
    }
    if (!bad)
        printf("batches done %" PRIu64 ", profiles holding batch %" PRIu64 " too: %d of %d\n",
               done, done + 1, ahead, NPROF);
    profdb_close(db);
    profdb_close(snap);
    return bad;
}

static int cmd_hostwrite(char **av)
{
    profdb_error err;
    profdb *db = profdb_open(av[0], PROFDB_CREATE, &err);
    if (!db) {
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
        return 1;
    }
    uint64_t seed = strtoull(av[2], NULL, 0), n = strtoull(av[3], NULL, 0);
    for (uint64_t b = 1; b <= n; b++)
        if (merge_batch(db, seed, b, av[1]))
            return 1;
    profdb_close(db);
    return 0;
}

static int cmd_hostcheck(int ac, char **av)
{
    profdb_error err;
    profdb *db = profdb_open(av[0], 0, &err);
    if (!db) {
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
        return 1;
    }
    int nseeds = 0;
    while (1 + nseeds < ac && strcmp(av[1 + nseeds], "--"))
        nseeds++;
    if (2 + nseeds >= ac) {
        fprintf(stderr, "profdb-driver: hostcheck DB SEED... -- N\n");
        return 2;
    }
    uint64_t nb = strtoull(av[2 + nseeds], NULL, 0);
    if (read_all(db, "after concurrent merges"))
        return 1;
    int bad = 0;
    uint64_t grand = 0;
    for (int p = 0; p < NPROF; p++) {
        vec want = { 0 }, got;
        if (load(db, p, &got))
            return 1;
        for (int k = 0; k < nseeds; k++)
            for (uint64_t b = 1; b <= nb; b++) {
                size_t n;
                profdb_entry *s = batch(strtoull(av[1 + k], NULL, 0), b, p, &n);
                vec_add(&want, s, n);
                free(s);
            }
        uint64_t tw = tu_total(want.e, want.n), tg = tu_total(got.e, got.n);
        grand += tg;
        if (!vec_eq(&want, &got)) {
            fprintf(stderr, "profdb-driver: profile %d: %" PRIu64 " samples stored, %" PRIu64
                    " merged\n", p, tg, tw);
            bad = 1;
        }
        free(want.e);
        free(got.e);
    }
    if (!bad)
        printf("%d profiles, %" PRIu64 " samples: the sum over hosts equals every merge\n",
               NPROF, grand);
    profdb_close(db);
    return bad;
}

static int cmd_newepoch(char **av)
{
    profdb_error err;
    profdb *db = profdb_open(av[0], 0, &err);
    char name[PROFDB_EPOCH_MAX];
    if (!db || !profdb_new_epoch(db, name, &err)) {
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
        return 1;
    }
    printf("%s\n", name);
    profdb_close(db);
    return 0;
}

static int cmd_readloop(char **av)
{
    profdb_error err;
    profdb *db = NULL;
    struct stat st;
    unsigned long rounds = 0;
    while (stat(av[1], &st) < 0) {
        if (!db && !(db = profdb_open(av[0], 0, &err))) {
            if (err.code != PROFDB_ENOENT) {
                fprintf(stderr, "profdb-driver: %s\n", err.msg);
                return 1;
            }
            usleep(1000);
            continue;
        }
        if (read_all(db, "while writers run"))
            return 1;
        rounds++;
    }
    printf("%lu passes over the database, %lu profiles read while writers ran: no error\n",
           rounds, files_read);
    profdb_close(db);
    return 0;
}

static bool temp_exists(const char *db)
{
    DIR *d = opendir(db);
    struct dirent *de;
    bool found = false;
    while (d && !found && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/torture", db, de->d_name);
        DIR *h = opendir(path);
        struct dirent *x;
        while (h && !found && (x = readdir(h))) {
            size_t n = strlen(x->d_name);
            found = x->d_name[0] == '.' && n > 4 && !strcmp(x->d_name + n - 4, ".tmp");
        }
        if (h)
            closedir(h);
    }
    if (d)
        closedir(d);
    return found;
}

static int cmd_killrun(int ac, char **av)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        char *wav[4] = { av[0], av[1], av[2], NULL };
        _exit(cmd_write(wav));
    }
    usleep((useconds_t)strtoul(av[3], NULL, 0) * 1000);
    if (ac > 4 && !strcmp(av[4], "mid"))
        for (long spins = 0; !temp_exists(av[0]) && spins < 2000000; spins++)
            if (waitpid(pid, NULL, WNOHANG) == pid) {
                fprintf(stderr, "profdb-driver: the writer ended by itself\n");
                return 1;
            }
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
        fprintf(stderr, "profdb-driver: the writer ended by itself (status 0x%x)\n", st);
        return 1;
    }
    return 0;
}

static int cmd_sample(int ac, char **av)
{
    size_t n = strtoul(av[1], NULL, 0);
    bool unknown = ac > 2 && !strcmp(av[2], "unknown");
    profdb_entry *s = tu_samples(n, n, unknown ? 1ull << 40 : 1u << 16);
    if (unknown)
        for (size_t i = 0; i < n; i++)
            s[i].offset += 0x120000000;
    uint8_t id[20];
    profdb_input in = input_for(0, id, "alpha1", s, n);
    if (unknown) {
        in.path = PROFDB_UNKNOWN_PATH;
        in.build_id_len = 0;
    }
    /* through a scratch database, so the file is exactly what cpod writes */
    char *tmp = tu_tmpdir();
    profdb_error err;
    profdb *db = tmp ? profdb_open(tmp, 0, &err) : NULL;
    profdb_info *v = NULL;
    size_t nv = 0;
    int rc = 1;
    if (db && profdb_merge(db, &in, 1, &err) == 1 && !err.code && profdb_list(db, NULL, &v, &nv, &err) &&
        nv == 1) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", v[0].file, av[0]);
        rc = system(cmd) != 0;
    } else {
        fprintf(stderr, "profdb-driver: %s\n", err.msg);
    }
    profdb_infos_free(v, nv);
    profdb_close(db);
    if (tmp)
        tu_rmrf(tmp);
    free(tmp);
    free(s);
    return rc;
}

int main(int argc, char **argv)
{
    if ((argc == 6 || argc == 7) && !strcmp(argv[1], "killrun"))
        return cmd_killrun(argc - 2, argv + 2);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "sample"))
        return cmd_sample(argc - 2, argv + 2);
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "write"))
        return cmd_write(argv + 2);
    if (argc == 6 && !strcmp(argv[1], "check"))
        return cmd_check(argv + 2);
    if (argc == 6 && !strcmp(argv[1], "hostwrite"))
        return cmd_hostwrite(argv + 2);
    if (argc >= 6 && !strcmp(argv[1], "hostcheck"))
        return cmd_hostcheck(argc - 2, argv + 2);
    if (argc == 3 && !strcmp(argv[1], "newepoch"))
        return cmd_newepoch(argv + 2);
    if (argc == 4 && !strcmp(argv[1], "readloop"))
        return cmd_readloop(argv + 2);
    fprintf(stderr, "usage: profdb-driver write DB SEED LOG [N] | check SNAP DB SEED DONE |\n"
            "       hostwrite DB HOST SEED N | hostcheck DB SEED... -- N | newepoch DB | readloop DB STOPFILE |\n"
            "       killrun DB SEED LOG MS [mid] | sample FILE N [unknown]\n");
    return 2;
}
