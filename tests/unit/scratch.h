/*
 * tests/unit/scratch.h: a scratch directory made before each test of a
 * suite and removed after it (TestSuite's .init and .fini), for the unit
 * tests of helpers that work on files.
 */
#ifndef TESTS_UNIT_SCRATCH_H
#define TESTS_UNIT_SCRATCH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char scratch_dir[64];

static inline void scratch_make(void)
{
    strcpy(scratch_dir, "/tmp/cpo-unit-XXXXXX");
    cr_assert(mkdtemp(scratch_dir));
}

static inline void scratch_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", scratch_dir);
    cr_assert_eq(system(cmd), 0);
}

#endif
