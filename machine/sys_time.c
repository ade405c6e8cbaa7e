/*
 * machine/sys_time.c: clocks and sleeps, all in guest time.
 *
 * Guest time is the machine's cycle count at the simulated clock rate, so
 * it is the same in every run: a program that times itself sees the work
 * it did, not how busy the host was.  The wall clock starts at the host's
 * time when the machine started and advances with guest time.
 */
#include <string.h>

#include "machine/sys.h"

static int64_t clock_ns(thread *t, int clk, long *err)
{
    machine *m = t->m;
    *err = 0;
    switch (clk) {
    case A_CLOCK_REALTIME: case A_CLOCK_REALTIME_COARSE:
        return m->rt0_ns + vtime_ns(m);
    case A_CLOCK_MONOTONIC: case A_CLOCK_MONOTONIC_RAW: case A_CLOCK_MONOTONIC_COARSE:
    case A_CLOCK_BOOTTIME:
        return vtime_ns(m);
    case A_CLOCK_PROCESS_CPUTIME_ID: {
        uint64_t n = t->p->icount;
        for (thread *q = t->p->threads; q; q = q->p_next)
            n += q->icount;
        return (int64_t)(n * 1000 / m->mhz);
    }
    case A_CLOCK_THREAD_CPUTIME_ID:
        return (int64_t)(t->icount * 1000 / m->mhz);
    default:
        *err = -A_EINVAL;
        return 0;
    }
}

SYS(clock_gettime)
{
    long err;
    int64_t ns = clock_ns(t, (int)a[0], &err);
    if (err)
        return err;
    int64_t ts[2] = { ns / 1000000000, ns % 1000000000 };
    return mem_write(t->mm, a[1], ts, 16) ? -A_EFAULT : 0;
}

SYS(clock_getres)
{
    long err;
    clock_ns(t, (int)a[0], &err);
    if (err)
        return err;
    int64_t ts[2] = { 0, 1 };
    return a[1] && mem_write(t->mm, a[1], ts, 16) ? -A_EFAULT : 0;
}

SYS(gettimeofday)
{
    int64_t ns = t->m->rt0_ns + vtime_ns(t->m);
    if (a[0]) {
        int64_t tv[2] = { ns / 1000000000, ns % 1000000000 / 1000 };
        if (mem_write(t->mm, a[0], tv, 16))
            return -A_EFAULT;
    }
    if (a[1]) {
        int32_t tz[2] = { 0, 0 };
        if (mem_write(t->mm, a[1], tz, 8))
            return -A_EFAULT;
    }
    return 0;
}

SYS(osf_gettimeofday)
{
    int64_t ns = t->m->rt0_ns + vtime_ns(t->m);
    if (a[0]) {
        int32_t tv[2] = { (int32_t)(ns / 1000000000), (int32_t)(ns % 1000000000 / 1000) };
        if (mem_write(t->mm, a[0], tv, 8))
            return -A_EFAULT;
    }
    return 0;
}

SYS(settimeofday) { (void)t; (void)a; return -A_EPERM; }

/* Sleep to an absolute guest-time deadline; on a retry, done or not. */
static long sleep_until(thread *t, int64_t deadline, uint64_t remva)
{
    int64_t now = vtime_ns(t->m);
    if (now >= deadline)
        return 0;
    t->wkind = W_SLEEP;
    t->wdeadline = deadline;
    t->waddr = remva;
    return SYS_BLOCK;
}

SYS(nanosleep)
{
    if (t->wkind == W_SLEEP)
        return sleep_until(t, t->wdeadline, a[1]);
    int64_t ts[2];
    if (mem_read(t->mm, a[0], ts, 16))
        return -A_EFAULT;
    if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
        return -A_EINVAL;
    return sleep_until(t, vtime_ns(t->m) + ts[0] * 1000000000 + ts[1], a[1]);
}

SYS(clock_nanosleep)
{
    if (t->wkind == W_SLEEP)
        return sleep_until(t, t->wdeadline, a[3]);
    long err;
    clock_ns(t, (int)a[0], &err);
    if (err)
        return err;
    int64_t ts[2];
    if (mem_read(t->mm, a[2], ts, 16))
        return -A_EFAULT;
    if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
        return -A_EINVAL;
    int64_t ns = ts[0] * 1000000000 + ts[1];
    int64_t deadline;
    if (a[1] & A_TIMER_ABSTIME)
        deadline = (a[0] == A_CLOCK_REALTIME || a[0] == A_CLOCK_REALTIME_COARSE) ? ns - t->m->rt0_ns : ns;
    else
        deadline = vtime_ns(t->m) + ns;
    return sleep_until(t, deadline, (a[1] & A_TIMER_ABSTIME) ? 0 : a[3]);
}
