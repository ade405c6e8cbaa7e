/*
 * Unit tests of common/outfile.h: outputs written whole or not at all,
 * nodes that are not regular files never replaced.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"
#include "tests/unit/scratch.h"

static size_t entries(void)
{
    DIR *d = opendir(scratch_dir);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

TestSuite(outfile, .init = scratch_make, .fini = scratch_remove);

Test(outfile, writes_and_replaces_whole)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/out", scratch_dir);
    for (int round = 0; round < 2; round++) {
        outfile o;
        cr_assert(outfile_open(&o, path, 0640, err, sizeof err), "%s", err);
        FILE *f = outfile_stream(&o);
        fprintf(f, "round %d", round);
        cr_assert(outfile_commit(&o, err, sizeof err), "%s", err);
        cr_assert_str_eq(slurp(path), round ? "round 1" : "round 0");
        cr_assert_eq(entries(), 1, "a temporary was left behind");
    }
}

Test(outfile, abort_keeps_the_old_file)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/out", scratch_dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    outfile o;
    cr_assert(outfile_open(&o, path, 0644, err, sizeof err), "%s", err);
    fputs("new, half written", outfile_stream(&o));
    outfile_abort(&o);
    cr_assert_str_eq(slurp(path), "old");
    cr_assert_eq(entries(), 1);
}

Test(outfile, refuses_nodes_that_are_not_regular_files)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/fifo", scratch_dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    outfile o;
    cr_assert_not(outfile_open(&o, path, 0644, err, sizeof err));
    cr_assert(strstr(err, "a FIFO") && strstr(err, path), "%s", err);
    struct stat st;
    cr_assert(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
    cr_assert_not(outfile_open(&o, scratch_dir, 0644, err, sizeof err));
    cr_assert(strstr(err, "a directory"), "%s", err);
    cr_assert_not(outfile_open(&o, "/dev/null", 0644, err, sizeof err));
    cr_assert(strstr(err, "character device"), "%s", err);
    cr_assert_eq(entries(), 1);
}

Test(outfile, a_symlink_is_replaced_its_target_untouched)
{
    char path[128], target[128], err[256];
    snprintf(path, sizeof path, "%s/link", scratch_dir);
    snprintf(target, sizeof target, "%s/target", scratch_dir);
    FILE *f = fopen(target, "w");
    fputs("precious", f);
    fclose(f);
    cr_assert_eq(symlink(target, path), 0);
    outfile o;
    cr_assert(outfile_open(&o, path, 0644, err, sizeof err), "%s", err);
    fputs("new", outfile_stream(&o));
    cr_assert(outfile_commit(&o, err, sizeof err), "%s", err);
    cr_assert_str_eq(slurp(target), "precious");
    struct stat st;
    cr_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    cr_assert_str_eq(slurp(path), "new");
}

Test(outfile, missing_directory_is_an_error)
{
    char err[256];
    outfile o;
    cr_assert_not(outfile_open(&o, "/nonexistent-dir/x", 0644, err, sizeof err));
    cr_assert(strstr(err, "/nonexistent-dir/x"), "%s", err);
}

/* scratch_dir/name, in one of a few static buffers */
static const char *at(const char *name)
{
    static char buf[32][192];
    static int k;
    k = (k + 1) % 32;
    snprintf(buf[k], sizeof buf[k], "%s/%s", scratch_dir, name);
    return buf[k];
}

Test(outfile, same_file_by_inode_or_by_name)
{
    FILE *f = fopen(at("in"), "w");
    fputs("x", f);
    fclose(f);
    cr_assert_eq(mkdir(at("sub"), 0755), 0);
    cr_assert_eq(symlink(scratch_dir, at("up")), 0);
    cr_assert(outfile_same(at("in"), at("./in")));
    cr_assert(outfile_same(at("in"), at("sub/../in")));
    cr_assert(outfile_same(at("up/in"), at("in")), "a link to the directory on the way");
    cr_assert_not(outfile_same(at("in"), at("out")), "one exists, the other not");
    /* neither exists: two outputs of one run */
    cr_assert(outfile_same(at("out"), at("sub/../out")));
    cr_assert(outfile_same(at("new/out"), at("new/./out")), "a directory not made yet");
    cr_assert_not(outfile_same(at("out"), at("sub/out")));
}

Test(outfile, inside_a_directory)
{
    cr_assert_eq(mkdir(at("db"), 0755), 0);
    cr_assert_eq(symlink(at("db"), at("dblink")), 0);
    cr_assert(outfile_inside(at("db/x"), at("db")));
    cr_assert(outfile_inside(at("db"), at("db")), "the directory itself");
    cr_assert(outfile_inside(at("db/not/yet/made/x"), at("db")));
    cr_assert(outfile_inside(at("dblink/x"), at("db")), "through a link on the way");
    cr_assert_eq(mkdir(at("sub"), 0755), 0);
    cr_assert(outfile_inside(at("sub/../db/y"), at("db/")));
    cr_assert(outfile_inside(at("db/new/../y"), at("db")), "'..' after a directory not made yet");
    cr_assert_not(outfile_inside(at("dbx"), at("db")), "a name that only starts alike");
    cr_assert_not(outfile_inside(at("x"), at("db")));
    /* a link as the last step is itself replaced, never written through */
    cr_assert_not(outfile_inside(at("dblink"), at("db")));
    cr_assert_not(outfile_inside(at("x"), at("no-such-db")));
}

Test(outfile, apart_names_both_sides)
{
    char err[512];
    FILE *f = fopen(at("img"), "w");
    fputs("x", f);
    fclose(f);
    cr_assert_eq(mkdir(at("db"), 0755), 0);
    outfile_arg ins[] = { { "the image", at("img") }, { "--exact", NULL } };
    outfile_arg dirs[] = { { "the database", at("db") } };
    outfile_arg ok[] = { { "-o", at("out") }, { "--report", at("report") }, { "--write-plan", NULL } };
    cr_assert(outfile_apart(ok, 3, ins, 2, dirs, 1, err, sizeof err), "%s", err);

    outfile_arg over_in[] = { { "-o", at("out") }, { "--report", at("./img") } };
    cr_assert_not(outfile_apart(over_in, 2, ins, 2, dirs, 1, err, sizeof err));
    cr_assert(strstr(err, "--report") && strstr(err, "the image"), "%s", err);

    outfile_arg twice[] = { { "-o", at("out") }, { "--report", at("db/../out") } };
    cr_assert_not(outfile_apart(twice, 2, ins, 2, dirs, 1, err, sizeof err));
    cr_assert(strstr(err, "--report") && strstr(err, "-o"), "%s", err);

    outfile_arg in_db[] = { { "--stats", at("db/s.json") } };
    cr_assert_not(outfile_apart(in_db, 1, NULL, 0, dirs, 1, err, sizeof err));
    cr_assert(strstr(err, "inside the database"), "%s", err);
}

Test(outfile, open_stream_says_why_and_leaves_nothing)
{
    char path[160], err[256];
    snprintf(path, sizeof path, "%s/no/such/dir/out", scratch_dir);
    outfile o;
    cr_assert_null(outfile_open_stream(&o, path, 0644, err, sizeof err));
    cr_assert(strstr(err, path), "the message names the path: %s", err);
    cr_assert_eq(entries(), 0);
    snprintf(path, sizeof path, "%s/out", scratch_dir);
    FILE *f = outfile_open_stream(&o, path, 0644, err, sizeof err);
    cr_assert(f, "%s", err);
    fputs("whole", f);
    cr_assert(outfile_commit(&o, err, sizeof err), "%s", err);
    cr_assert_str_eq(slurp(path), "whole");
}
