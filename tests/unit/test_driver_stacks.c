/*
 * collector/driver_stacks.c: stack records go through a ring in order and
 * whole, across the ring's end, a full ring refuses without writing, a
 * second process sees what the first wrote, and a damaged ring is an
 * error, never a wild read.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/driver_stacks.h"
#include "tests/unit/scratch.h"

static char region[96];

static void setup(void)
{
    scratch_make();
    snprintf(region, sizeof region, "%s/region", scratch_dir);
}

typedef struct seen {
    uint64_t n, sum;
    uint32_t next;              /* the pid expected next: records in order */
    bool bad;
} seen;

static int check(void *ctx, unsigned cpu, const drv_stack_rec *r)
{
    seen *s = ctx;
    (void)cpu;
    if (r->pid != s->next || r->n != 1 + r->pid % 40 || r->event != (r->pid & 7) || r->end != r->pid % 8)
        s->bad = true;
    for (unsigned i = 0; i < r->n; i++)
        if (r->pc[i] != ((uint64_t)r->pid << 20 | i))
            s->bad = true;
    s->next++;
    s->n++;
    return 0;
}

static int put(drv_stacks *s, uint32_t pid)
{
    uint64_t pc[64];
    unsigned n = 1 + pid % 40;
    for (unsigned i = 0; i < n; i++)
        pc[i] = (uint64_t)pid << 20 | i;
    return drv_stack_put(s, 0, pid, pid & 7, pid % 8, pc, n);
}

Test(driver_stacks, in_order_across_the_end_and_refused_when_full, .init = setup, .fini = scratch_remove)
{
    drv_error err;
    drv_stacks *p = drv_stacks_create(region, 2, 4096, &err);
    cr_assert(p, "%s", err.msg);
    drv_stacks *c = drv_stacks_open(region, &err);
    cr_assert(c, "%s", err.msg);
    seen s = { 0 };
    uint32_t pid = 0;
    for (int round = 0; round < 200; round++) {
        int k = 0;
        while (put(p, pid) == DRV_OK)
            pid++, k++;
        cr_assert(k > 0, "round %d: the emptied ring took nothing", round);
        int got = drv_stacks_take(c, check, &s, &err);
        cr_assert(got >= 0, "%s", err.msg);
        cr_assert_eq(s.n, pid, "taken %llu of %u", (unsigned long long)s.n, pid);
    }
    cr_assert(!s.bad);
    cr_assert(pid > 1000, "the ring wrapped many times (%u records)", pid);
    drv_stacks_counters ct;
    drv_stacks_counters_get(c, &ct);
    cr_assert_eq(ct.put, pid);
    cr_assert_eq(ct.taken, pid);
    uint64_t big[DRV_STACKS_MAX_FRAMES] = { 0 };
    cr_assert_eq(drv_stack_put(p, 0, 1, 0, 0, big, DRV_STACKS_MAX_FRAMES), DRV_FULL, "larger than the ring");
    cr_assert_eq(drv_stack_put(p, 2, 1, 0, 0, big, 1), DRV_EINVAL);
    cr_assert_eq(drv_stack_put(p, 0, 1, 0, 0, big, 0), DRV_EINVAL);
    drv_stacks_close(c);
    drv_stacks_close(p);
}

Test(driver_stacks, another_process_reads_and_damage_is_an_error, .init = setup, .fini = scratch_remove)
{
    drv_error err;
    drv_stacks *p = drv_stacks_create(region, 1, 4096, &err);
    cr_assert(p, "%s", err.msg);
    for (uint32_t pid = 0; pid < 20; pid++)
        cr_assert_eq(put(p, pid), DRV_OK);
    pid_t kid = fork();
    if (!kid) {
        drv_stacks *c = drv_stacks_open(region, &err);
        seen s = { 0 };
        _exit(c && drv_stacks_take(c, check, &s, &err) == 20 && !s.bad ? 0 : 1);
    }
    int st;
    waitpid(kid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cr_assert_eq(put(p, 20), DRV_OK);
    /* a record claiming more frames than it has room for */
    FILE *f = fopen(strcat(strcpy((char[128]){ 0 }, region), DRV_STACKS_SUFFIX), "r+");
    cr_assert(f);
    drv_stacks *c = drv_stacks_open(region, &err);
    cr_assert(c, "%s", err.msg);
    /* the next record starts where the child stopped: find it through the
     * ring and break its frame count */
    uint32_t rec[4];
    long at = 4096 + 4096, pos = 0;
    for (uint32_t pid = 0; pid < 20; pid++)
        pos += 16 + 8 * (1 + pid % 40);
    fseek(f, at + pos, SEEK_SET);
    cr_assert_eq(fread(rec, sizeof rec, 1, f), 1);
    rec[1] = (rec[1] & ~0xffffu) | 999;
    fseek(f, at + pos, SEEK_SET);
    fwrite(rec, sizeof rec, 1, f);
    fclose(f);
    seen s = { .next = 20 };
    cr_assert_eq(drv_stacks_take(c, check, &s, &err), DRV_ECORRUPT, "%s", err.msg);
    drv_stacks_close(c);
    drv_stacks_close(p);
    cr_assert_null(drv_stacks_open("/nonexistent/region", &err));
}
