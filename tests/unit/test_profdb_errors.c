/*
 * profdb/: every way a profile or a database can be wrong.  Each failure
 * must come back as its own code with a message naming the file, never as
 * a crash or a wrong profile, and a failed write must leave the stored
 * profile as it was.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>

#include "profdb/exact.h"
#include "profdb/stacks.h"
#include "report/report.h"
#include "tests/profdb/testutil.h"

static const uint8_t BID[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
#define BIDHEX "0102030405060708"

static char *dir;
static char dbdir[512];

static void record_warning(void *ctx, const char *msg)
{
    snprintf(ctx, 1024, "%s", msg);
}
static void setup(void)
{
    dir = tu_tmpdir();
    cr_assert(dir);
    snprintf(dbdir, sizeof dbdir, "%s/db", dir);
}
static void teardown(void) { tu_rmrf(dir); free(dir); }

static profdb_input input(profdb_entry *s, size_t n)
{
    return (profdb_input){ .path = "/bin/prog", .build_id = BID, .build_id_len = sizeof BID,
                           .event = "cycles", .mean_period = 1000, .host = "h",
                           .samples = s, .nsamples = n };
}

/* A database with one real profile; its file's path in `path`. */
static profdb *make_db(size_t n, char *path, size_t size)
{
    profdb_error err;
    profdb *db = profdb_open(dbdir, PROFDB_CREATE, &err);
    cr_assert(db, "%s", err.msg);
    profdb_entry *s = tu_samples(7, n, 1 << 18);
    profdb_input in = input(s, n);
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 1, "%s", err.msg);
    free(s);
    char epoch[PROFDB_EPOCH_MAX];
    cr_assert(profdb_current_epoch(db, epoch, &err), "%s", err.msg);
    snprintf(path, size, "%s/%s/h/" BIDHEX ".cycles.prof", dbdir, epoch);
    return db;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*n + 1);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

static void expect_fail(const uint8_t *b, size_t n, const char *what)
{
    profdb_profile p;
    profdb_error err = { 0 };
    bool ok = profdb_decode(b, n, "FILE", &p, &err);
    cr_assert_not(ok, "%s: decoded", what);
    cr_assert_neq(err.code, PROFDB_OK, "%s", what);
    cr_assert(!strncmp(err.msg, "FILE: ", 6), "%s: message \"%s\"", what, err.msg);
}

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void wr32(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

/* Recompute both checksums, so that only the field under test is wrong. */
static void reseal(uint8_t *b, size_t n)
{
    uint32_t hlen = rd32(b + 12);
    wr32(b + 72, (uint32_t)crc32_z(0, b + hlen, n - hlen));
    wr32(b + hlen - 4, (uint32_t)crc32_z(0, b, hlen - 4));
}

Test(profdb_errors, truncated_everywhere, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(3000, path, sizeof path);
    size_t n;
    uint8_t *b = slurp(path, &n);
    cr_assert_gt(n, 200);
    for (size_t len = 0; len < n; len += len < 300 ? 1 : 7) {
        profdb_profile p;
        profdb_error err;
        cr_assert_not(profdb_decode(b, len, "FILE", &p, &err), "length %zu decoded", len);
        cr_assert_eq(err.code, PROFDB_ETRUNC, "length %zu: %s", len, err.msg);
        cr_assert(!strncmp(err.msg, "FILE: ", 6) && strstr(err.msg, "trunc"), "%s", err.msg);
    }
    /* The same through the file, as a reader and as a writer meets it. */
    spit(path, b, n / 2);
    profdb_profile p;
    profdb_error err;
    cr_assert_not(profdb_read_file(path, &p, &err));
    cr_assert_eq(err.code, PROFDB_ETRUNC);
    cr_assert(strstr(err.msg, path), "%s", err.msg);
    cr_assert_not(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, NULL, &err));
    cr_assert_eq(err.code, PROFDB_ETRUNC, "%s", err.msg);
    profdb_close(db);
    free(b);
}

Test(profdb_errors, every_byte_flipped, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(500, path, sizeof path);
    size_t n;
    uint8_t *b = slurp(path, &n);
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            b[i] ^= (uint8_t)(1 << bit);
            profdb_profile p;
            profdb_error err;
            cr_assert_not(profdb_decode(b, n, "FILE", &p, &err), "byte %zu bit %d decoded", i, bit);
            /* the header length may point anywhere: any error will do */
            profdb_err want = i < 8 ? PROFDB_EMAGIC : i < 10 ? PROFDB_EVERSION
                            : i >= 12 && i < 16 ? PROFDB_OK : PROFDB_ECHECKSUM;
            if (want)
                cr_assert_eq(err.code, want, "byte %zu: %s", i, err.msg);
            cr_assert(!strncmp(err.msg, "FILE: ", 6), "%s", err.msg);
            b[i] ^= (uint8_t)(1 << bit);
        }
    }
    profdb_close(db);
    free(b);
}

Test(profdb_errors, wrong_version_and_magic, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(100, path, sizeof path);
    size_t n;
    uint8_t *b = slurp(path, &n);
    b[8] = 2;
    reseal(b, n);
    spit(path, b, n);
    profdb_profile p;
    profdb_error err;
    cr_assert_not(profdb_read_file(path, &p, &err));
    cr_assert_eq(err.code, PROFDB_EVERSION);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, "version 2"), "%s", err.msg);

    /* A writer must not touch a profile from a newer format. */
    profdb_entry s[1] = { { 4, 1 } };
    profdb_input in = input(s, 1);
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 0);
    cr_assert_eq(err.code, PROFDB_EVERSION, "%s", err.msg);
    size_t n2;
    uint8_t *b2 = slurp(path, &n2);
    cr_assert(n2 == n && !memcmp(b, b2, n));
    free(b2);

    cr_assert_not(profdb_decode("ELF\x7f not a profile", 18, "FILE", &p, &err));
    cr_assert_eq(err.code, PROFDB_EMAGIC);
    cr_assert_str_eq(err.msg, "FILE: not a cpo profile (bad magic)");
    profdb_close(db);
    free(b);
}

Test(profdb_errors, consistent_checksums_wrong_contents, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(400, path, sizeof path);
    size_t n;
    uint8_t *orig = slurp(path, &n);
    uint32_t hlen = rd32(orig + 12);
    uint8_t *b = malloc(n + 16);
    struct { size_t at; int width; uint64_t delta; const char *what; } cases[] = {
        { 16, 8, 1, "total + 1" },
        { 16, 8, (uint64_t)-1, "total - 1" },
        { 24, 8, 1, "entries + 1" },
        { 24, 8, (uint64_t)-1, "entries - 1" },
        { 24, 8, 1ull << 40, "entries huge" },
        { 64, 8, 1, "encoded length + 1" },
        { 64, 8, (uint64_t)-1, "encoded length - 1" },
        { 56, 8, 1, "payload length + 1" },
        { 10, 2, 1, "flags" },
        { 76, 1, 1, "build-id length" },
        { 77, 1, 1, "path count" },
        { 78, 2, 1, "event length" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(b, orig, n);
        uint64_t v = 0;
        for (int k = 0; k < cases[c].width; k++)
            v |= (uint64_t)b[cases[c].at + k] << (8 * k);
        v += cases[c].delta;
        for (int k = 0; k < cases[c].width; k++)
            b[cases[c].at + k] = (uint8_t)(v >> (8 * k));
        reseal(b, n);
        expect_fail(b, n, cases[c].what);
    }
    /* The payload replaced by other valid zstd data. */
    memcpy(b, orig, n);
    for (size_t i = hlen + 20; i < n; i++)
        b[i] ^= 0x55;
    reseal(b, n);
    expect_fail(b, n, "scrambled payload");
    /* Trailing bytes. */
    memcpy(b, orig, n);
    memset(b + n, 0, 16);
    expect_fail(b, n + 16, "trailing bytes");
    profdb_profile p;
    profdb_error err;
    profdb_decode(b, n + 16, "FILE", &p, &err);
    cr_assert_eq(err.code, PROFDB_ECORRUPT);
    /* A count of zero, and offsets out of order, sealed properly. */
    profdb_entry e[3] = { { 4, 1 }, { 8, 2 }, { 12, 3 } };
    char *pp = "/p";
    profdb_profile q = { .n = 3, .e = e };
    q.info.event = "cycles";
    q.info.host = "h";
    q.info.paths[0] = pp;
    q.info.npaths = 1;
    uint8_t *enc;
    size_t elen;
    cr_assert(profdb_encode(&q, 1, &enc, &elen, &err), "%s", err.msg);
    cr_assert(profdb_decode(enc, elen, "FILE", &p, &err), "%s", err.msg);
    profdb_profile_free(&p);
    free(enc);
    e[1].count = 0;   /* encode refuses it: the decoder must as well */
    cr_assert_not(profdb_encode(&q, 1, &enc, &elen, &err));
    profdb_close(db);
    free(orig);
    free(b);
}

Test(profdb_errors, corrupt_profile_set_aside_by_writer, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(300, path, sizeof path);
    size_t n;
    uint8_t *b = slurp(path, &n);
    b[n - 3] ^= 0xff;
    spit(path, b, n);
    static char warned[1024];
    warned[0] = '\0';
    profdb_set_warn(db, record_warning, warned);

    profdb_profile p;
    profdb_error err;
    cr_assert_not(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, NULL, &err));
    cr_assert_eq(err.code, PROFDB_ECHECKSUM);
    cr_assert(strstr(err.msg, path), "%s", err.msg);

    profdb_entry s[2] = { { 4, 5 }, { 8, 6 } };
    profdb_input in = input(s, 2);
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 1, "%s", err.msg);
    cr_assert(strstr(warned, path) && strstr(warned, "set aside"), "warning: %s", warned);
    cr_assert(profdb_read_file(path, &p, &err), "%s", err.msg);
    cr_assert_eq(p.info.total, 11);
    profdb_profile_free(&p);

    /* The damaged bytes are kept beside it, and readers ignore them. */
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c '\\.prof\\.corrupt-'", path);
    FILE *f = popen(cmd, "r");
    int count = 0;
    cr_assert_eq(fscanf(f, "%d", &count), 1);
    pclose(f);
    cr_assert_eq(count, 1);
    profdb_info *v;
    size_t nv;
    cr_assert(profdb_list(db, NULL, &v, &nv, &err), "%s", err.msg);
    cr_assert_eq(nv, 1);
    profdb_infos_free(v, nv);
    profdb_close(db);
    free(b);
}

Test(profdb_errors, tolerant_readers_skip, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(300, path, sizeof path);
    profdb_entry s[1] = { { 4, 5 } };
    profdb_input in = input(s, 1);
    in.host = "other";
    profdb_error err;
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 1, "%s", err.msg);
    spit(path, "CPOPROF\n\1", 9);
    profdb_close(db);

    db = profdb_open(dbdir, PROFDB_TOLERANT, &err);
    cr_assert(db, "%s", err.msg);
    static char warned[1024];
    warned[0] = '\0';
    profdb_set_warn(db, record_warning, warned);
    profdb_profile p;
    size_t nf;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, &nf, &err), "%s", err.msg);
    cr_assert_eq(nf, 1);
    cr_assert_eq(p.info.total, 5);
    cr_assert(strstr(warned, path) && strstr(warned, "trunc"), "%s", warned);
    profdb_profile_free(&p);
    profdb_close(db);
}

Test(profdb_errors, missing_and_wrong_directories, .init = setup, .fini = teardown)
{
    profdb_error err;
    char p[1200];
    snprintf(p, sizeof p, "%s/nope", dir);
    cr_assert_null(profdb_open(p, 0, &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);
    cr_assert(strstr(err.msg, p), "%s", err.msg);
    snprintf(p, sizeof p, "%s/nope/deeper", dir);
    cr_assert_null(profdb_open(p, PROFDB_CREATE, &err));
    cr_assert(strstr(err.msg, p), "%s", err.msg);
    snprintf(p, sizeof p, "%s/file", dir);
    spit(p, "x", 1);
    cr_assert_null(profdb_open(p, PROFDB_CREATE, &err));
    cr_assert_eq(err.code, PROFDB_EINVAL);
    cr_assert(strstr(err.msg, "not a directory"), "%s", err.msg);

    profdb_profile prof;
    cr_assert_not(profdb_read_file(p, &prof, &err));      /* a 1-byte file */
    cr_assert_eq(err.code, PROFDB_EMAGIC);
    cr_assert_not(profdb_read_file(dir, &prof, &err));    /* a directory */
    cr_assert_eq(err.code, PROFDB_EINVAL);
    snprintf(p, sizeof p, "%s/fifo", dir);
    cr_assert_eq(mkfifo(p, 0600), 0);
    cr_assert_not(profdb_read_file(p, &prof, &err));      /* must not hang */
    cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
    snprintf(p, sizeof p, "%s/none.prof", dir);
    cr_assert_not(profdb_read_file(p, &prof, &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);
    cr_assert(strstr(err.msg, p), "%s", err.msg);

    /* An epoch directory that is a file, and a bad marker. */
    profdb *db = profdb_open(dbdir, PROFDB_CREATE, &err);
    cr_assert(db);
    char m[1200];
    snprintf(m, sizeof m, "%s/current", dbdir);
    spit(m, "garbage\n", 8);
    char cur[PROFDB_EPOCH_MAX];
    cr_assert_not(profdb_current_epoch(db, cur, &err));
    cr_assert_eq(err.code, PROFDB_ECORRUPT);
    cr_assert(strstr(err.msg, m), "%s", err.msg);
    profdb_entry s[1] = { { 4, 5 } };
    profdb_input in = input(s, 1);
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 0);
    cr_assert_eq(err.code, PROFDB_ECORRUPT);
    profdb_close(db);
}

Test(profdb_errors, bad_inputs, .init = setup, .fini = teardown)
{
    profdb_error err;
    profdb *db = profdb_open(dbdir, PROFDB_CREATE, &err);
    cr_assert(db);
    profdb_entry s[1] = { { 4, 5 } };
    char longpath[5000];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    profdb_input in[8];
    for (int i = 0; i < 8; i++)
        in[i] = input(s, 1);
    in[0].event = "";
    in[1].event = "cy\ncles";
    in[2].mean_period = 0.0 / 0.0;
    in[3].mean_period = -1;
    in[4].samples = NULL;
    in[5].path = longpath;
    in[6].host = "";
    in[7].build_id_len = 65;
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(profdb_merge(db, &in[i], 1, &err), 0, "input %d merged", i);
        cr_assert_eq(err.code, PROFDB_EINVAL, "input %d: %s", i, err.msg);
    }
    /* A batch stops at the first bad input; those before it are stored. */
    profdb_input batch[3] = { input(s, 1), in[0], input(s, 1) };
    cr_assert_eq(profdb_merge(db, batch, 3, &err), 1);
    cr_assert_eq(err.code, PROFDB_EINVAL);
    profdb_profile p;
    cr_assert(profdb_sum(db, NULL, NULL, BIDHEX, "cycles", &p, NULL, &err), "%s", err.msg);
    cr_assert_eq(p.info.total, 5);
    profdb_profile_free(&p);
    cr_assert_not(profdb_sum(db, NULL, NULL, "XYZ", "cycles", &p, NULL, &err));
    cr_assert_eq(err.code, PROFDB_EINVAL);
    profdb_close(db);
}

static void drop_privileges(void)
{
    if (geteuid() == 0) {
        /* root writes anywhere; become nobody for the permission check */
        cr_assert_eq(setgid(65534), 0);
        cr_assert_eq(setuid(65534), 0);
    }
}

Test(profdb_errors, unwritable_directory, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(200, path, sizeof path);
    size_t n;
    uint8_t *before = slurp(path, &n);
    char hostdir[1024];
    snprintf(hostdir, sizeof hostdir, "%s", path);
    *strrchr(hostdir, '/') = '\0';
    chmod(dir, 0755);
    chmod(hostdir, 0555);
    pid_t pid = fork();
    if (pid == 0) {
        drop_privileges();
        profdb_entry s[1] = { { 4, 5 } };
        profdb_input in = input(s, 1);
        profdb_error err;
        int bad = profdb_merge(db, &in, 1, &err) != 0 || err.code != PROFDB_EIO ||
                  err.sys_errno != EACCES || !strstr(err.msg, hostdir);
        if (bad)
            fprintf(stderr, "merge into a read-only directory: %s\n", err.msg);
        _exit(bad);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    chmod(hostdir, 0755);
    size_t n2;
    uint8_t *after = slurp(path, &n2);
    cr_assert(n == n2 && !memcmp(before, after, n));
    profdb_close(db);
    free(before);
    free(after);
}

/* A write that fails half way (here the file-size limit; a full disk
 * behaves the same, see tests/integration/profdb_enospc.sh): the old
 * profile stays, no temporary is left, the error names the profile. */
Test(profdb_errors, write_error_keeps_old_file, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(200, path, sizeof path);
    size_t n;
    uint8_t *before = slurp(path, &n);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = { n + 100, n + 100 };
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    profdb_entry *s = tu_samples(99, 50000, 1 << 24);
    profdb_input in = input(s, 50000);
    profdb_error err;
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 0);
    cr_assert_eq(err.code, PROFDB_EIO);
    cr_assert_eq(err.sys_errno, EFBIG);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, "cannot write"), "%s", err.msg);
    size_t n2;
    uint8_t *after = slurp(path, &n2);
    cr_assert(n == n2 && !memcmp(before, after, n));
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c tmp", path);
    FILE *f = popen(cmd, "r");
    int count = -1;
    cr_assert_eq(fscanf(f, "%d", &count), 1);
    pclose(f);
    cr_assert_eq(count, 0);
    profdb_close(db);
    free(s);
    free(before);
    free(after);
}

/* A profile renamed by hand to another key: listed by its header, summed
 * by its name, it would count for one image here and another there. */
Test(profdb_errors, renamed_profile, .init = setup, .fini = teardown)
{
    char path[1024], moved[1100];
    profdb *db = make_db(50, path, sizeof path);
    snprintf(moved, sizeof moved, "%.*s/0a0b0c0d.cycles.prof", (int)(strrchr(path, '/') - path), path);
    cr_assert_eq(rename(path, moved), 0);
    profdb_error err;
    profdb_info *v;
    size_t n;
    cr_assert_not(profdb_list(db, NULL, &v, &n, &err));
    cr_assert_eq(err.code, PROFDB_ECORRUPT);
    cr_assert(strstr(err.msg, moved) && strstr(err.msg, "does not match its name"), "%s", err.msg);
    profdb_profile p;
    cr_assert_not(profdb_sum(db, NULL, NULL, "0a0b0c0d", "cycles", &p, NULL, &err));
    cr_assert(strstr(err.msg, moved), "%s", err.msg);
    profdb_close(db);
}

Test(profdb_errors, stacks_of_no_epoch, .init = setup, .fini = teardown)
{
    char path[1024];
    profdb *db = make_db(5, path, sizeof path);
    profdb_stacks st;
    profdb_error err;
    const char *bad[] = { "20300101T000000Z", "../db/20300101T000000Z", "." };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_not(profdb_stacks_select(db, bad[i], NULL, NULL, NULL, &st, &err), "%s", bad[i]);
        cr_assert_eq(err.code, PROFDB_ENOENT, "%s: %s", bad[i], err.msg);
        cr_assert(strstr(err.msg, "no epoch"), "%s", err.msg);
    }
    profdb_close(db);
}

/* Exact counts cut short after the image lines read as zero counts. */
Test(profdb_errors, exact_without_counts)
{
    static const char cut[] = "# axp exact counts\nimage 0 0a0b /x\nimage 1 - /y\n";
    static const char other[] = "image 0 0a0b /x\nimage 1 - /y\nblock 1 0x10 0x20 3\n";
    profdb_error err;
    cr_assert_null(profdb_exact_parse(cut, strlen(cut), "t.exact", &err));
    cr_assert(strstr(err.msg, "t.exact: no counts for any image"), "%s", err.msg);
    profdb_exact *ex = profdb_exact_parse(other, strlen(other), "t.exact", &err);
    cr_assert(ex, "%s", err.msg);
    cr_assert_null(profdb_exact_counts(ex, (const uint8_t *)"\x0a\x0b", 2, "/x", &err));
    cr_assert_eq(err.code, PROFDB_ECORRUPT);
    cr_assert_str_eq(err.msg, "t.exact: no counts for /x");
    cr_assert_null(profdb_exact_counts(ex, (const uint8_t *)"\x0a\x0c", 2, "/z", &err));
    cr_assert_eq(err.code, PROFDB_ENOENT);
    cr_assert_eq(profdb_exact_counts(ex, NULL, 0, "/y", &err), &ex->images[1]);
    profdb_exact_free(ex);
}

/* A report over a database without samples of the program: empty, and no
 * qsort of a NULL array (UBSan's nonnull check, under make unit-asan). */
Test(profdb_errors, report_of_empty_database, .init = setup, .fini = teardown)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char prog[512];
    snprintf(prog, sizeof prog, "%s/programs/intloop-dyn", build);
    cr_assert_eq(mkdir(dbdir, 0755), 0);
    rpt r;
    char err[1024];
    cr_assert(rpt_build(dbdir, NULL, prog, prog, &r, err, sizeof err), "%s", err);
    cr_assert_eq(r.nprocs, 0);
    rpt_free(&r);
}
