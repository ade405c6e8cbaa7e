/*
 * tests/unit/scratch.h: a scratch directory made before each test and
 * removed after it (.init and .fini of a TestSuite or a Test), for the
 * unit tests that work on files.  scratch_make_shm puts it on /dev/shm
 * when that is writable, for the driver's tests: their regions are mapped
 * files, on a tmpfs like real regions, and much faster there.
 */
#ifndef TESTS_UNIT_SCRATCH_H
#define TESTS_UNIT_SCRATCH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch_dir[64];

static inline void scratch_make_under(const char *base)
{
    snprintf(scratch_dir, sizeof scratch_dir, "%s/cpo-unit-XXXXXX", base);
    cr_assert(mkdtemp(scratch_dir));
}

static inline void scratch_make(void)
{
    scratch_make_under("/tmp");
}

static inline void scratch_make_shm(void)
{
    scratch_make_under(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
}

static inline void scratch_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", scratch_dir);
    cr_assert_eq(system(cmd), 0);
}

#endif
