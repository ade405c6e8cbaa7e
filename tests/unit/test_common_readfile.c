/*
 * Unit tests of common/readfile.h: files read whole and NUL-terminated,
 * an empty file as an empty buffer, failures that name the file, and
 * nodes that are not regular files refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/readfile.h"
#include "tests/unit/scratch.h"

static void spit(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

TestSuite(readfile, .init = scratch_make, .fini = scratch_remove);

/* Larger than one read of a pipe-sized buffer, with NUL bytes inside. */
Test(readfile, reads_a_file_whole_and_ends_it_with_a_nul)
{
    char path[128], err[256];
    size_t n = 200000, size;
    uint8_t *want = malloc(n);
    for (size_t i = 0; i < n; i++)
        want[i] = (uint8_t)(i * 7);
    snprintf(path, sizeof path, "%s/data", scratch_dir);
    spit(path, want, n);
    uint8_t *got = readfile(path, SIZE_MAX, &size, err, sizeof err);
    cr_assert(got, "%s", err);
    cr_assert_eq(size, n);
    cr_assert_eq(memcmp(got, want, n), 0);
    cr_assert_eq(got[n], 0);
    free(got);
    free(want);
}

Test(readfile, an_empty_file_is_an_empty_buffer)
{
    char path[128], err[256];
    size_t size = 99;
    snprintf(path, sizeof path, "%s/empty", scratch_dir);
    spit(path, "", 0);
    char *got = readfile(path, SIZE_MAX, &size, err, sizeof err);
    cr_assert(got, "%s", err);
    cr_assert_eq(size, 0);
    cr_assert_str_eq(got, "");
    free(got);
}

Test(readfile, a_missing_file_is_named_with_the_reason)
{
    char path[128], err[256];
    size_t size = 99;
    snprintf(path, sizeof path, "%s/none", scratch_dir);
    cr_assert_null(readfile(path, SIZE_MAX, &size, err, sizeof err));
    cr_assert_eq(errno, ENOENT);
    cr_assert_eq(size, 0);
    cr_assert(strstr(err, path) && strstr(err, strerror(ENOENT)), "%s", err);
}

Test(readfile, a_directory_or_fifo_is_refused)
{
    char path[128], err[256];
    size_t size;
    cr_assert_null(readfile(scratch_dir, SIZE_MAX, &size, err, sizeof err));
    cr_assert_eq(errno, EISDIR);
    cr_assert(strstr(err, scratch_dir) && strstr(err, "a directory, not a regular file"), "%s", err);
    /* opened without blocking: no writer must not hang the reader */
    snprintf(path, sizeof path, "%s/fifo", scratch_dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_assert_null(readfile(path, SIZE_MAX, &size, err, sizeof err));
    cr_assert_eq(errno, EINVAL);
    cr_assert(strstr(err, path) && strstr(err, "not a regular file"), "%s", err);
}

Test(readfile, more_than_max_is_refused_or_cut_to_a_head)
{
    char path[128], err[256];
    size_t size, got;
    uint64_t file_size;
    snprintf(path, sizeof path, "%s/ten", scratch_dir);
    spit(path, "0123456789", 10);
    cr_assert_null(readfile(path, 9, &size, err, sizeof err));
    cr_assert_eq(errno, EFBIG);
    cr_assert_eq(size, 10, "the caller learns the size it refused");
    cr_assert(strstr(err, path), "%s", err);
    char *head = readfile_head(path, 4, &got, &file_size, err, sizeof err);
    cr_assert(head, "%s", err);
    cr_assert_eq(got, 4);
    cr_assert_eq(file_size, 10);
    cr_assert_str_eq(head, "0123");
    free(head);
    head = readfile_head(path, 64, &got, &file_size, err, sizeof err);
    cr_assert(head, "%s", err);
    cr_assert_eq(got, 10);
    cr_assert_eq(file_size, 10);
    cr_assert_str_eq(head, "0123456789");
    free(head);
}
