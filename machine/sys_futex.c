/*
 * machine/sys_futex.c: futexes.  A waiter parks with its address space and
 * address; a wake marks the first N such waiters (in thread-creation
 * order, so wake-ups are deterministic) and the scheduler lets them return.
 * Keys are (address space, address): shared futexes between processes are
 * not matched.  PI futexes are not supported.
 */
#include "machine/sys.h"

static long futex_wait(thread *t, uint64_t addr, uint32_t val, uint64_t tsva, uint32_t bits, bool absolute)
{
    if (t->wkind == W_FUTEX) {       /* a retry */
        if (t->woken)
            return 0;
        if (t->wdeadline >= 0 && vtime_ns(t->m) >= t->wdeadline)
            return -A_ETIMEDOUT;
        return SYS_BLOCK;
    }
    if (addr & 3)
        return -A_EINVAL;
    uint32_t cur;
    if (mem_read(t->mm, addr, &cur, 4))
        return -A_EFAULT;
    if (cur != val)
        return -A_EAGAIN;
    int64_t deadline = -1;
    if (tsva) {
        int64_t ts[2];
        if (mem_read(t->mm, tsva, ts, 16))
            return -A_EFAULT;
        if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
            return -A_EINVAL;
        int64_t ns = ts[0] * 1000000000 + ts[1];
        if (absolute) {
            /* absolute CLOCK_MONOTONIC, guest time */
            deadline = ns;
            if (t->waddr == 1)
                deadline = ns - t->m->rt0_ns;
        } else {
            deadline = vtime_ns(t->m) + ns;
        }
    }
    t->wkind = W_FUTEX;
    t->waddr = addr;
    t->wbits = bits;
    t->woken = false;
    t->wdeadline = deadline;
    return SYS_BLOCK;
}

static bool wake_op_cmp(int cmp, uint32_t old, uint32_t arg)
{
    switch (cmp) {
    case 0: return old == arg;
    case 1: return old != arg;
    case 2: return (int32_t)old < (int32_t)arg;
    case 3: return (int32_t)old <= (int32_t)arg;
    case 4: return (int32_t)old > (int32_t)arg;
    case 5: return (int32_t)old >= (int32_t)arg;
    default: return false;
    }
}

SYS(futex)
{
    machine *m = t->m;
    uint64_t addr = a[0];
    int op = (int)(a[1] & 127);
    bool realtime = a[1] & A_FUTEX_CLOCK_REALTIME;
    uint32_t val = (uint32_t)a[2];
    int n;
    switch (op) {
    case A_FUTEX_WAIT:
        return futex_wait(t, addr, val, a[3], ~0u, false);
    case A_FUTEX_WAIT_BITSET:
        if (!(uint32_t)a[5])
            return -A_EINVAL;
        if (t->wkind != W_FUTEX)
            t->waddr = realtime;
        return futex_wait(t, addr, val, a[3], (uint32_t)a[5], true);
    case A_FUTEX_WAKE:
        sched_wake_futex(m, t->mm, addr, (int)val, ~0u, &n);
        return n;
    case A_FUTEX_WAKE_BITSET:
        if (!(uint32_t)a[5])
            return -A_EINVAL;
        sched_wake_futex(m, t->mm, addr, (int)val, (uint32_t)a[5], &n);
        return n;
    case A_FUTEX_REQUEUE:
    case A_FUTEX_CMP_REQUEUE: {
        if (op == A_FUTEX_CMP_REQUEUE) {
            uint32_t cur;
            if (mem_read(t->mm, addr, &cur, 4))
                return -A_EFAULT;
            if (cur != (uint32_t)a[5])
                return -A_EAGAIN;
        }
        sched_wake_futex(m, t->mm, addr, (int)val, ~0u, &n);
        int moved = 0, limit = (int)a[3];
        for (thread *w = m->threads; w && moved < limit; w = w->all_next)
            if (w->state == T_BLOCKED && w->wkind == W_FUTEX && !w->woken &&
                w->mm == t->mm && w->waddr == addr) {
                w->waddr = a[4];
                moved++;
            }
        return n + moved;
    }
    case A_FUTEX_WAKE_OP: {
        uint32_t v3 = (uint32_t)a[5];
        int wop = (v3 >> 28) & 7, cmp = (v3 >> 24) & 15;
        uint32_t oparg = (v3 >> 12) & 0xfff, cmparg = v3 & 0xfff;
        if (oparg & 0x800) oparg |= 0xfffff000;
        if (cmparg & 0x800) cmparg |= 0xfffff000;
        if ((v3 >> 31) & 1)
            oparg = 1u << (oparg & 31);
        uint32_t old, nv;
        if (mem_read(t->mm, a[4], &old, 4))
            return -A_EFAULT;
        switch (wop & 7) {
        case 0: nv = oparg; break;
        case 1: nv = old + oparg; break;
        case 2: nv = old | oparg; break;
        case 3: nv = old & ~oparg; break;
        case 4: nv = old ^ oparg; break;
        default: return -A_ENOSYS;
        }
        if (mem_write(t->mm, a[4], &nv, 4))
            return -A_EFAULT;
        sched_wake_futex(m, t->mm, addr, (int)val, ~0u, &n);
        int n2 = 0;
        if (wake_op_cmp(cmp, old, cmparg))
            sched_wake_futex(m, t->mm, a[4], (int)a[3], ~0u, &n2);
        return n + n2;
    }
    default:
        return nosys(t, 394);
    }
}
