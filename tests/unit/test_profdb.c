/*
 * profdb/: encoding, merging as addition, epochs, hosts and the reading
 * API.  Error cases are in test_profdb_errors.c.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/profdb/testutil.h"

static int cmp_off(const void *a, const void *b)
{
    uint64_t x = ((const profdb_entry *)a)->offset, y = ((const profdb_entry *)b)->offset;
    return x < y ? -1 : x > y;
}

/* Reference addition: sort and fold, independent of profdb's merge. */
static size_t fold(profdb_entry *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_off);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].count)
            continue;
        if (k && v[k - 1].offset == v[i].offset)
            v[k - 1].count += v[i].count;
        else
            v[k++] = v[i];
    }
    return k;
}

static void expect_entries(const profdb_profile *p, const profdb_entry *want, size_t n)
{
    cr_assert_eq(p->n, n, "entries: %zu, want %zu", p->n, n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(p->e[i].offset, want[i].offset, "entry %zu offset", i);
        cr_assert_eq(p->e[i].count, want[i].count, "entry %zu count", i);
    }
}

static const uint8_t BID[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
#define BIDHEX "deadbeef0102030405060708090a0b0c0d0e0f10"

static profdb_input input(const char *path, const char *event, const char *host,
                          profdb_entry *s, size_t n)
{
    return (profdb_input){ .path = path, .build_id = BID, .build_id_len = sizeof BID,
                           .event = event, .mean_period = 62000.0, .host = host,
                           .samples = s, .nsamples = n };
}

static void merge_ok(profdb *db, const profdb_input *in, size_t n)
{
    profdb_error err;
    size_t k = profdb_merge(db, in, n, &err);
    cr_assert_eq(k, n, "merged %zu of %zu: %s", k, n, err.msg);
    cr_assert_eq(err.code, PROFDB_OK, "%s", err.msg);
}

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert(dir); }
static void teardown(void) { tu_rmrf(dir); free(dir); }

static profdb *open_db(void)
{
    profdb_error err;
    char p[1024];
    snprintf(p, sizeof p, "%s/db", dir);
    profdb *db = profdb_open(p, PROFDB_CREATE, &err);
    cr_assert(db, "%s", err.msg);
    return db;
}

Test(profdb_codec, round_trip)
{
    size_t n = 5000;
    profdb_entry *s = tu_samples(1, n, 1 << 20);
    n = fold(s, n);
    /* extremes: offset 0 and the top of the range, a huge count */
    s[0].offset = 0;
    s[n - 1].offset = UINT64_MAX;
    s[n - 1].count = UINT64_MAX / 4;
    char *paths[] = { "/usr/bin/lua", "/old/lua" };
    profdb_profile p = { .n = n, .e = s };
    p.info.event = "cycles";
    p.info.host = "alpha1.example.com";
    p.info.paths[0] = paths[0];
    p.info.paths[1] = paths[1];
    p.info.npaths = 2;
    memcpy(p.info.build_id, BID, sizeof BID);
    p.info.build_id_len = sizeof BID;
    p.info.period_sum = 123456789012345ull;
    p.info.created = 1700000000;
    p.info.updated = 1700000123;
    uint8_t *bytes;
    size_t size;
    profdb_error err;
    cr_assert(profdb_encode(&p, 0, &bytes, &size, &err), "%s", err.msg);

    profdb_profile q;
    cr_assert(profdb_decode(bytes, size, "mem", &q, &err), "%s", err.msg);
    expect_entries(&q, s, n);
    cr_assert_eq(q.info.total, tu_total(s, n));
    cr_assert_eq(q.info.nentries, n);
    cr_assert_str_eq(q.info.event, "cycles");
    cr_assert_str_eq(q.info.host, "alpha1.example.com");
    cr_assert_eq(q.info.npaths, 2);
    cr_assert_str_eq(q.info.paths[0], "/usr/bin/lua");
    cr_assert_str_eq(q.info.paths[1], "/old/lua");
    cr_assert_str_eq(q.info.key, BIDHEX);
    cr_assert_eq(q.info.build_id_len, sizeof BID);
    cr_assert_eq(memcmp(q.info.build_id, BID, sizeof BID), 0);
    cr_assert_eq(q.info.period_sum, 123456789012345ull);
    cr_assert_eq(q.info.created, 1700000000);
    cr_assert_eq(q.info.updated, 1700000123);
    cr_assert_eq(q.info.version, PROFDB_VERSION);
    cr_assert_eq(q.info.payload_len + 82 < size, true);

    profdb_info h;
    cr_assert(profdb_decode_header(bytes, size, "mem", &h, &err), "%s", err.msg);
    cr_assert_eq(h.total, q.info.total);
    cr_assert_eq(h.nentries, n);
    profdb_info_free(&h);
    profdb_profile_free(&q);
    free(bytes);
    free(s);
}

Test(profdb_codec, empty_profile)
{
    char *path = "/bin/x";
    profdb_profile p = { 0 };
    p.info.event = "imiss";
    p.info.host = "h";
    p.info.paths[0] = path;
    p.info.npaths = 1;
    uint8_t *bytes;
    size_t size;
    profdb_error err;
    cr_assert(profdb_encode(&p, 3, &bytes, &size, &err), "%s", err.msg);
    profdb_profile q;
    cr_assert(profdb_decode(bytes, size, "mem", &q, &err), "%s", err.msg);
    cr_assert_eq(q.n, 0);
    cr_assert_eq(q.info.total, 0);
    cr_assert(q.info.key[0] == 'p' && !strncmp(q.info.key, "path-", 5));
    profdb_profile_free(&q);
    free(bytes);
}

Test(profdb_codec, rejects_unsorted)
{
    profdb_entry e[2] = { { 8, 1 }, { 4, 1 } };
    char *path = "/bin/x";
    profdb_profile p = { .n = 2, .e = e };
    p.info.event = "cycles";
    p.info.host = "h";
    p.info.paths[0] = path;
    p.info.npaths = 1;
    uint8_t *bytes;
    size_t size;
    profdb_error err;
    cr_assert_not(profdb_encode(&p, 0, &bytes, &size, &err));
    cr_assert_eq(err.code, PROFDB_EINVAL);
}

Test(profdb_keys, names)
{
    char k[PROFDB_KEY_MAX];
    cr_assert_str_eq(profdb_key(BID, sizeof BID, "/x", k), BIDHEX);
    cr_assert_str_eq(profdb_key(NULL, 0, PROFDB_UNKNOWN_PATH, k), PROFDB_UNKNOWN_KEY);
    cr_assert_str_eq(profdb_key(NULL, 0, NULL, k), PROFDB_UNKNOWN_KEY);
    profdb_key(NULL, 0, "/bin/sh", k);
    char k2[PROFDB_KEY_MAX];
    profdb_key(NULL, 0, "/bin/dash", k2);
    cr_assert(!strncmp(k, "path-", 5) && strlen(k) == 21);
    cr_assert_str_neq(k, k2);
}

Test(profdb_merge, is_addition, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    size_t na = 20000, nb = 15000;
    profdb_entry *a = tu_samples(2, na, 300000), *b = tu_samples(3, nb, 300000);
    profdb_input in = input("/usr/bin/lua", "cycles", "hostA", a, na);
    merge_ok(db, &in, 1);
    in.samples = b;
    in.nsamples = nb;
    in.mean_period = 4000.5;
    merge_ok(db, &in, 1);

    profdb_entry *all = malloc((na + nb) * sizeof *all);
    memcpy(all, a, na * sizeof *a);
    memcpy(all + na, b, nb * sizeof *b);
    size_t n = fold(all, na + nb);

    profdb_profile p;
    size_t nfiles;
    profdb_error err;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, &nfiles, &err), "%s", err.msg);
    cr_assert_eq(nfiles, 1);
    expect_entries(&p, all, n);
    uint64_t ta = tu_total(a, na), tb = tu_total(b, nb);
    cr_assert_eq(p.info.total, ta + tb);
    cr_assert_eq(p.info.period_sum, (uint64_t)llround(62000.0 * ta) + (uint64_t)llround(4000.5 * tb));
    cr_assert_str_eq(p.info.host, "hostA");
    cr_assert_str_eq(p.info.paths[0], "/usr/bin/lua");
    cr_assert(p.info.created <= p.info.updated);
    profdb_profile_free(&p);

    /* The same through the file itself. */
    char epoch[PROFDB_EPOCH_MAX];
    cr_assert(profdb_current_epoch(db, epoch, &err), "%s", err.msg);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/hostA/%s.cycles.prof", profdb_dir(db), epoch, BIDHEX);
    cr_assert(profdb_read_file(path, &p, &err), "%s", err.msg);
    expect_entries(&p, all, n);
    cr_assert_str_eq(p.info.file, path);
    profdb_profile_free(&p);
    profdb_close(db);
    free(a);
    free(b);
    free(all);
}

Test(profdb_merge, batch_events_and_paths, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    profdb_entry *a = tu_samples(4, 100, 4096), *b = tu_samples(5, 100, 4096);
    profdb_input in[3] = {
        input("/bin/lua", "cycles", "h", a, 100),
        input("/bin/lua", "imiss", "h", b, 100),
        input("/opt/lua-renamed", "cycles", "h", b, 100),
    };
    merge_ok(db, in, 3);
    profdb_image img;
    profdb_error err;
    cr_assert(profdb_lookup(db, BIDHEX, &img, &err), "%s", err.msg);
    cr_assert_str_eq(img.key, BIDHEX);
    cr_assert_str_eq(img.events[0], "cycles");
    cr_assert_str_eq(img.events[1], "imiss");
    cr_assert_null(img.events[2]);
    /* both names are known; the one merged last is first in its profile */
    bool lua = false, ren = false;
    for (char **p = img.paths; *p; p++)
        lua |= !strcmp(*p, "/bin/lua"), ren |= !strcmp(*p, "/opt/lua-renamed");
    cr_assert(lua && ren);
    cr_assert_eq(img.total, tu_total(a, 100) + 2 * tu_total(b, 100));
    profdb_image_free(&img);

    profdb_profile p;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, NULL, &err), "%s", err.msg);
    cr_assert_eq(p.info.npaths, 2);
    cr_assert_str_eq(p.info.paths[0], "/opt/lua-renamed");
    cr_assert_str_eq(p.info.paths[1], "/bin/lua");
    profdb_profile_free(&p);

    profdb_total *t;
    size_t nt;
    cr_assert(profdb_totals(db, NULL, &t, &nt, &err), "%s", err.msg);
    cr_assert_eq(nt, 2);
    cr_assert_str_eq(t[0].event, "cycles");
    cr_assert_eq(t[0].total, tu_total(a, 100) + tu_total(b, 100));
    cr_assert_eq(t[0].nprofiles, 1);
    cr_assert_str_eq(t[1].event, "imiss");
    cr_assert_eq(t[1].total, tu_total(b, 100));
    profdb_totals_free(t, nt);

    cr_assert_not(profdb_lookup(db, "00ff", &img, &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);
    cr_assert_not(profdb_sum(db, NULL, NULL, BIDHEX, "dmiss", &p, NULL, &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);
    cr_assert(strstr(err.msg, "dmiss"), "%s", err.msg);
    profdb_close(db);
    free(a);
    free(b);
}

Test(profdb_merge, unknown_and_no_build_id, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    profdb_entry s[3] = { { 0x120001000, 5 }, { 0x20000000000, 1 }, { 0x120001000, 2 } };
    profdb_input in[2] = {
        { .event = "cycles", .mean_period = 1, .host = "h", .samples = s, .nsamples = 3 },
        { .path = "/bin/nobid", .event = "cycles", .mean_period = 1, .host = "h", .samples = s,
          .nsamples = 2 },
    };
    merge_ok(db, in, 2);
    profdb_info *v;
    size_t n;
    profdb_error err;
    cr_assert(profdb_list(db, NULL, &v, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 2);
    cr_assert(!strncmp(v[0].key, "path-", 5));
    cr_assert_str_eq(v[0].paths[0], "/bin/nobid");
    cr_assert_str_eq(v[1].key, PROFDB_UNKNOWN_KEY);
    cr_assert_str_eq(v[1].paths[0], PROFDB_UNKNOWN_PATH);
    cr_assert_eq(v[1].total, 8);
    cr_assert_eq(v[1].nentries, 2);
    cr_assert_eq(v[1].build_id_len, 0);
    profdb_profile p;
    cr_assert(profdb_sum(db, NULL, NULL, PROFDB_UNKNOWN_KEY, "cycles", &p, NULL, &err), "%s", err.msg);
    cr_assert_eq(p.e[0].offset, 0x120001000);
    cr_assert_eq(p.e[0].count, 7);
    profdb_profile_free(&p);
    cr_assert(profdb_sum(db, NULL, NULL, v[0].key, "cycles", &p, NULL, &err), "%s", err.msg);
    cr_assert_eq(p.info.total, 6);
    profdb_profile_free(&p);
    profdb_infos_free(v, n);
    profdb_close(db);
}

Test(profdb_merge, empty_input_writes_nothing, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    profdb_entry z[2] = { { 4, 0 }, { 8, 0 } };
    profdb_input in = input("/bin/x", "cycles", "h", z, 2);
    merge_ok(db, &in, 1);
    in.nsamples = 0;
    merge_ok(db, &in, 1);
    profdb_info *v;
    size_t n;
    profdb_error err;
    cr_assert(profdb_list(db, NULL, &v, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 0);
    profdb_infos_free(v, n);
    profdb_close(db);
}

Test(profdb_epochs, new_epochs_and_sums, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    profdb_error err;
    char cur[PROFDB_EPOCH_MAX];
    cr_assert_not(profdb_current_epoch(db, cur, &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);

    profdb_entry a[1] = { { 16, 3 } }, b[1] = { { 16, 4 } }, c[1] = { { 32, 5 } };
    profdb_input in = input("/bin/x", "cycles", "h", a, 1);
    merge_ok(db, &in, 1);            /* creates the first epoch */
    char e1[PROFDB_EPOCH_MAX], e2[PROFDB_EPOCH_MAX], e3[PROFDB_EPOCH_MAX];
    cr_assert(profdb_current_epoch(db, e1, &err), "%s", err.msg);
    cr_assert(profdb_new_epoch(db, e2, &err), "%s", err.msg);
    in.samples = b;
    merge_ok(db, &in, 1);
    cr_assert(profdb_new_epoch(db, e3, &err), "%s", err.msg);
    in.samples = c;
    merge_ok(db, &in, 1);

    /* Three distinct names, sortable, in creation order even within a
     * second. */
    cr_assert_eq(strlen(e1) >= 16, true);
    cr_assert_eq(e1[8], 'T');
    cr_assert_eq(e1[15], 'Z');
    char **v;
    size_t n;
    cr_assert(profdb_epochs(db, &v, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(v[0], e1);
    cr_assert_str_eq(v[1], e2);
    cr_assert_str_eq(v[2], e3);
    cr_assert_null(v[3]);
    profdb_strv_free(v);
    cr_assert(profdb_current_epoch(db, cur, &err));
    cr_assert_str_eq(cur, e3);

    profdb_profile p;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert_eq(p.info.total, 12);
    cr_assert_eq(p.n, 2);
    cr_assert_eq(p.e[0].count, 7);
    cr_assert_str_eq(p.info.epoch, "");
    profdb_profile_free(&p);
    cr_assert(profdb_sum(db, e2, NULL, BIDHEX, "cycles", &p, &n, &err), "%s", err.msg);
    cr_assert_eq(p.info.total, 4);
    cr_assert_str_eq(p.info.epoch, e2);
    profdb_profile_free(&p);
    cr_assert_not(profdb_sum(db, "20000101T000000Z", NULL, BIDHEX, "cycles", &p, &n, &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);

    profdb_info *iv;
    cr_assert(profdb_list(db, e1, &iv, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(iv[0].epoch, e1);
    profdb_infos_free(iv, n);

    /* The marker decides, not the newest name. */
    char mpath[1024];
    snprintf(mpath, sizeof mpath, "%s/current", profdb_dir(db));
    FILE *f = fopen(mpath, "w");
    fprintf(f, "%s\n", e1);
    fclose(f);
    cr_assert(profdb_current_epoch(db, cur, &err));
    cr_assert_str_eq(cur, e1);
    merge_ok(db, &in, 1);
    cr_assert(profdb_sum(db, e1, NULL, BIDHEX, "cycles", &p, &n, &err), "%s", err.msg);
    cr_assert_eq(p.info.total, 8);
    profdb_profile_free(&p);
    /* Without a marker the newest is current. */
    unlink(mpath);
    cr_assert(profdb_current_epoch(db, cur, &err));
    cr_assert_str_eq(cur, e3);
    profdb_close(db);
}

Test(profdb_hosts, summed_on_read, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    const char *hosts[] = { "alpha1", "alpha2.example.com", "../evil/host", ".hidden" };
    uint64_t total = 0;
    for (int h = 0; h < 4; h++) {
        profdb_entry *s = tu_samples(10 + h, 1000, 65536);
        profdb_input in = input("/bin/x", "cycles", hosts[h], s, 1000);
        merge_ok(db, &in, 1);
        total += tu_total(s, 1000);
        free(s);
    }
    profdb_error err;
    profdb_profile p;
    size_t n;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 4);
    cr_assert_eq(p.info.total, total);
    cr_assert_str_eq(p.info.host, "");
    profdb_profile_free(&p);
    for (int h = 0; h < 4; h++) {
        cr_assert(profdb_sum(db, NULL, hosts[h], BIDHEX, "cycles", &p, &n, &err), "%s", err.msg);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(p.info.host, hosts[h]);
        profdb_profile_free(&p);
    }
    /* Odd host names stay inside the epoch directory. */
    char epoch[PROFDB_EPOCH_MAX], path[1024];
    cr_assert(profdb_current_epoch(db, epoch, &err));
    snprintf(path, sizeof path, "%s/%s/%%2E.%%2Fevil%%2Fhost", profdb_dir(db), epoch);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    profdb_info *v;
    cr_assert(profdb_list(db, NULL, &v, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 4);
    profdb_infos_free(v, n);
    profdb_close(db);
}

/* Several processes merge into one database at once, each as its own
 * host, two of them sharing a host name: nothing is lost. */
Test(profdb_hosts, concurrent_writers, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    enum { NPROC = 6, ROUNDS = 15, N = 2000 };
    const char *hosts[NPROC] = { "a", "b", "c", "d", "shared", "shared" };
    for (int k = 0; k < NPROC; k++) {
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            profdb_error err;
            for (int r = 0; r < ROUNDS; r++) {
                profdb_entry *s = tu_samples(1000 * k + r, N, 1 << 16);
                profdb_input in[2] = { input("/bin/x", "cycles", hosts[k], s, N),
                                       input("/bin/x", "imiss", hosts[k], s, N / 2) };
                if (profdb_merge(db, in, 2, &err) != 2) {
                    fprintf(stderr, "%s\n", err.msg);
                    _exit(1);
                }
                free(s);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < NPROC; k++) {
        int st;
        wait(&st);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    uint64_t want_c = 0, want_i = 0;
    profdb_entry *all = malloc((size_t)NPROC * ROUNDS * N * sizeof *all);
    size_t na = 0;
    for (int k = 0; k < NPROC; k++)
        for (int r = 0; r < ROUNDS; r++) {
            profdb_entry *s = tu_samples(1000 * k + r, N, 1 << 16);
            want_c += tu_total(s, N);
            want_i += tu_total(s, N / 2);
            memcpy(all + na, s, N * sizeof *s);
            na += N;
            free(s);
        }
    na = fold(all, na);
    profdb_profile p;
    profdb_error err;
    size_t n;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 5);
    cr_assert_eq(p.info.total, want_c);
    expect_entries(&p, all, na);
    profdb_profile_free(&p);
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "imiss", &p, &n, &err), "%s", err.msg);
    cr_assert_eq(p.info.total, want_i);
    profdb_profile_free(&p);
    free(all);
    profdb_close(db);
}

/* Ten names of 4000 bytes: eight kept, newest first, and a header of
 * 32 KB that listings must still read. */
Test(profdb_merge, many_long_paths, .init = setup, .fini = teardown)
{
    profdb *db = open_db();
    profdb_entry s[1] = { { 4, 1 } };
    static char names[10][4001];
    for (int i = 0; i < 10; i++) {
        memset(names[i], 'a' + i, 4000);
        names[i][0] = '/';
        names[i][4000] = '\0';
        profdb_input in = input(names[i], "cycles", "h", s, 1);
        merge_ok(db, &in, 1);
    }
    profdb_info *v;
    size_t n;
    profdb_error err;
    cr_assert(profdb_list(db, NULL, &v, &n, &err), "%s", err.msg);
    cr_assert_eq(n, 1);
    cr_assert_eq(v[0].npaths, PROFDB_MAX_PATHS);
    for (unsigned i = 0; i < PROFDB_MAX_PATHS; i++)
        cr_assert_str_eq(v[0].paths[i], names[9 - i]);
    cr_assert_eq(v[0].total, 10);
    profdb_infos_free(v, n);
    profdb_close(db);
}
