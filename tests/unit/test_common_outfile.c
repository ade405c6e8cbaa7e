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
