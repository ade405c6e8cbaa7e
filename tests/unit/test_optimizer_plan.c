/*
 * Layout-plan reader: the checks that need more than one line (a procedure
 * both placed and pinned) and plans of millions of lines, read or refused
 * at their first mistake without scanning every earlier line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "optimizer/plan.h"

static const struct { const char *text, *where, *what; } both[] = {
    { "cpo-layout 1\npin 0x10\nproc 0x20\nproc 0x10\n", "p:4:", "pinned on line 2" },
    { "cpo-layout 1\nproc 0x10\nblock 0x10\npin 0x10\n", "p:4:", "placed on line 2" },
    { "cpo-layout 1\nproc 0x10\nhint 0x10 0x20\nhint 0x10 0x30\n", "p:4:", "line 3" },
    { "cpo-layout 1\npin 0x10\npin 0x10\n", "p:3:", "line 2" },
};

Test(optimizer_plan, pin_and_proc_of_one_procedure_is_an_error)
{
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        plan pl;
        char err[256] = "";
        cr_assert(!plan_parse(both[i].text, strlen(both[i].text), "p", &pl, err, sizeof err),
                  "plan %zu accepted", i);
        cr_assert(!strncmp(err, both[i].where, strlen(both[i].where)), "plan %zu: %s", i, err);
        cr_assert(strstr(err, both[i].what), "plan %zu: '%s' lacks '%s'", i, err, both[i].what);
        plan_free(&pl);
    }
}

Test(optimizer_plan, same_block_in_two_procedures_is_left_to_the_rewriter)
{
    /* Block repeats are per procedure; across procedures the rewriter
     * refuses the block that is not in its procedure. */
    static const char t[] = "cpo-layout 1\nproc 0x10\nblock 0x10\nproc 0x20\nblock 0x10\n";
    plan pl;
    char err[256];
    cr_assert(plan_parse(t, strlen(t), "p", &pl, err, sizeof err), "%s", err);
    plan_free(&pl);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 2 million lines: 20,000 procedures of 99 blocks.  A reader that compares
 * each line with the earlier ones never finishes this. */
static char *big_plan(size_t *len, const char *line2)
{
    size_t cap = 64u << 20, n = 0;
    char *t = malloc(cap);
    cr_assert(t);
    n += (size_t)sprintf(t + n, "cpo-layout 1\n%s", line2);
    for (unsigned p = 0; p < 20000; p++) {
        uint64_t base = 0x120000000ull + (uint64_t)p * 0x1000;
        n += (size_t)sprintf(t + n, "proc 0x%llx\n", (unsigned long long)base);
        for (unsigned b = 0; b < 99; b++)
            n += (size_t)sprintf(t + n, "block 0x%llx\n", (unsigned long long)(base + 16 * b));
    }
    *len = n;
    return t;
}

Test(optimizer_plan, two_million_lines_read_or_refused_at_the_first_error, .timeout = 60)
{
    size_t len;
    char err[256];
    plan pl;
    char *t = big_plan(&len, "");
    double t0 = now();
    cr_assert(plan_parse(t, len, "big", &pl, err, sizeof err), "%s", err);
    double t1 = now();
    cr_assert_eq(pl.nprocs, 20000);
    cr_assert_eq(pl.procs[19999].nblocks, 99);
    plan_free(&pl);
    cr_assert_lt(t1 - t0, 10.0, "2 million lines took %.1f s", t1 - t0);
    free(t);

    /* A repeat at the very end is found, with both lines named. */
    t = big_plan(&len, "");
    len += (size_t)sprintf(t + len, "proc 0x120000000\n");
    cr_assert(!plan_parse(t, len, "big", &pl, err, sizeof err));
    cr_assert(strstr(err, "big:2000002:") && strstr(err, "line 2"), "%s", err);
    free(t);

    /* A mistake on line 2 stops the reader there. */
    t = big_plan(&len, "frobnicate\n");
    t0 = now();
    cr_assert(!plan_parse(t, len, "big", &pl, err, sizeof err));
    t1 = now();
    cr_assert(!strncmp(err, "big:2:", 6), "%s", err);
    cr_assert_lt(t1 - t0, 0.5, "an error on line 2 took %.2f s", t1 - t0);
    free(t);
}
