/*
 * machine/sys_sig.c: the signal calls.  Alpha's kernel sigaction is
 * { handler, unsigned long flags, sigset_t mask } and rt_sigaction takes
 * the restorer as a fifth argument (glibc passes its sigreturn stub).
 */
#include <stdlib.h>
#include <string.h>

#include "machine/sys.h"

#define KILLSTOP (SIGBIT(A_SIGKILL) | SIGBIT(A_SIGSTOP))

static void drop_pending(proc *p, int sig)
{
    p->sigpend &= ~SIGBIT(sig);
    for (thread *t = p->threads; t; t = t->p_next)
        t->sigpend &= ~SIGBIT(sig);
}

static long set_action(thread *t, int sig, const sigact *na, sigact *oa)
{
    if (sig < 1 || sig > NSIG_AXP)
        return -A_EINVAL;
    sigact *cur = &t->p->sh->a[sig];
    if (oa)
        *oa = *cur;
    if (na) {
        if (sig == A_SIGKILL || sig == A_SIGSTOP)
            return -A_EINVAL;
        *cur = *na;
        cur->mask &= ~KILLSTOP;
        bool ign = cur->handler == 1 ||
                   (cur->handler == 0 && sig_default(sig) != SD_TERM && sig_default(sig) != SD_CORE);
        if (ign)
            drop_pending(t->p, sig);
    }
    return 0;
}

SYS(rt_sigaction)
{
    if (a[3] != 8)
        return -A_EINVAL;
    sigact na, oa;
    if (a[1]) {
        uint64_t k[3];
        if (mem_read(t->mm, a[1], k, sizeof k))
            return -A_EFAULT;
        na.handler = k[0];
        na.flags = k[1];
        na.mask = k[2];
        na.restorer = a[4];
    }
    long r = set_action(t, (int)a[0], a[1] ? &na : NULL, &oa);
    if (r)
        return r;
    if (a[2]) {
        uint64_t k[3] = { oa.handler, oa.flags, oa.mask };
        if (mem_write(t->mm, a[2], k, sizeof k))
            return -A_EFAULT;
    }
    return 0;
}

/* OSF layout: { handler, old_sigset_t mask, int flags } and no restorer. */
SYS(osf_sigaction)
{
    sigact na, oa;
    if (a[1]) {
        uint8_t b[20];
        if (mem_read(t->mm, a[1], b, sizeof b))
            return -A_EFAULT;
        uint32_t fl;
        memcpy(&na.handler, b, 8);
        memcpy(&na.mask, b + 8, 8);
        memcpy(&fl, b + 16, 4);
        na.flags = fl;
        na.restorer = 0;
    }
    long r = set_action(t, (int)a[0], a[1] ? &na : NULL, &oa);
    if (r)
        return r;
    if (a[2]) {
        uint8_t b[24] = {0};
        uint32_t fl = (uint32_t)oa.flags;
        memcpy(b, &oa.handler, 8);
        memcpy(b + 8, &oa.mask, 8);
        memcpy(b + 16, &fl, 4);
        if (mem_write(t->mm, a[2], b, sizeof b))
            return -A_EFAULT;
    }
    return 0;
}

static long change_mask(thread *t, int how, uint64_t set)
{
    set &= ~KILLSTOP;
    switch (how) {
    case A_SIG_BLOCK: t->sigmask |= set; break;
    case A_SIG_UNBLOCK: t->sigmask &= ~set; break;
    case A_SIG_SETMASK: t->sigmask = set; break;
    default: return -A_EINVAL;
    }
    return 0;
}

SYS(rt_sigprocmask)
{
    if (a[3] != 8)
        return -A_EINVAL;
    uint64_t old = t->sigmask;
    if (a[1]) {
        uint64_t set;
        if (mem_read(t->mm, a[1], &set, 8))
            return -A_EFAULT;
        long r = change_mask(t, (int)a[0], set);
        if (r)
            return r;
    }
    if (a[2] && mem_write(t->mm, a[2], &old, 8))
        return -A_EFAULT;
    return 0;
}

/* OSF: the new mask by value, the old one as the result. */
SYS(osf_sigprocmask)
{
    uint64_t old = t->sigmask;
    long r = change_mask(t, (int)a[0], a[1]);
    if (r)
        return r;
    t->r[19] = 0;
    return (long)(old & 0x7fffffffffffffffULL);
}

SYS(sigreturn) { return sys_sigreturn_common(t, a[0], false); }
SYS(rt_sigreturn) { return sys_sigreturn_common(t, a[0] + RTF_UC, true); }

static long suspend(thread *t, uint64_t mask)
{
    if (t->wkind == W_SIGNAL)
        return sig_deliverable(t) ? -A_EINTR : SYS_BLOCK;
    t->saved_mask = t->sigmask;
    t->restore_mask = true;
    t->sigmask = mask & ~KILLSTOP;
    if (sig_deliverable(t))
        return -A_EINTR;
    t->wkind = W_SIGNAL;
    return SYS_BLOCK;
}

SYS(rt_sigsuspend)
{
    if (a[1] != 8)
        return -A_EINVAL;
    uint64_t mask = 0;
    if (t->wkind != W_SIGNAL && mem_read(t->mm, a[0], &mask, 8))
        return -A_EFAULT;
    return suspend(t, mask);
}

SYS(sigsuspend) { return suspend(t, a[0]); }

SYS(rt_sigpending)
{
    uint64_t p = (t->sigpend | t->p->sigpend) & t->sigmask;
    return mem_write(t->mm, a[0], &p, 8) ? -A_EFAULT : 0;
}

SYS(sigpending)
{
    uint64_t p = (t->sigpend | t->p->sigpend) & t->sigmask;
    return mem_write(t->mm, a[0], &p, 8) ? -A_EFAULT : 0;
}

SYS(rt_sigtimedwait)
{
    uint64_t set;
    if (mem_read(t->mm, a[0], &set, 8))
        return -A_EFAULT;
    uint64_t have = (t->sigpend | t->p->sigpend) & set;
    if (have) {
        int sig = __builtin_ctzll(have) + 1;
        ksiginfo si;
        if (t->sigpend & SIGBIT(sig)) {
            si = t->sq[sig];
            t->sigpend &= ~SIGBIT(sig);
        } else {
            si = t->p->sq[sig];
            t->p->sigpend &= ~SIGBIT(sig);
        }
        if (a[1]) {
            uint8_t b[128] = {0};
            int v[3] = { si.signo, si.err, si.code };
            memcpy(b, v, 12);
            int w[2] = { si.pid, si.uid };
            memcpy(b + 16, w, 8);
            if (mem_write(t->mm, a[1], b, sizeof b))
                return -A_EFAULT;
        }
        return sig;
    }
    if (t->wkind != W_SIGNAL) {
        t->wdeadline = -1;
        if (a[2]) {
            int64_t ts[2];
            if (mem_read(t->mm, a[2], ts, 16))
                return -A_EFAULT;
            int64_t ns = ts[0] * 1000000000 + ts[1];
            if (ns == 0)
                return -A_EAGAIN;
            t->wdeadline = vtime_ns(t->m) + ns;
        }
    } else if (t->wdeadline >= 0 && vtime_ns(t->m) >= t->wdeadline) {
        return -A_EAGAIN;
    }
    t->wkind = W_SIGNAL;
    return SYS_BLOCK;
}

SYS(sigaltstack)
{
    if (a[1]) {
        uint8_t b[24] = {0};
        bool on = t->ss_size && t->r[30] > t->ss_sp && t->r[30] <= t->ss_sp + t->ss_size;
        uint32_t fl = t->ss_size ? (on ? A_SS_ONSTACK : 0) : A_SS_DISABLE;
        memcpy(b, &t->ss_sp, 8);
        memcpy(b + 8, &fl, 4);
        memcpy(b + 16, &t->ss_size, 8);
        if (mem_write(t->mm, a[1], b, sizeof b))
            return -A_EFAULT;
    }
    if (a[0]) {
        uint8_t b[24];
        if (mem_read(t->mm, a[0], b, sizeof b))
            return -A_EFAULT;
        uint64_t sp, size;
        uint32_t fl;
        memcpy(&sp, b, 8);
        memcpy(&fl, b + 8, 4);
        memcpy(&size, b + 16, 8);
        if (fl & A_SS_DISABLE) {
            t->ss_sp = t->ss_size = 0;
            t->ss_flags = A_SS_DISABLE;
        } else {
            if (fl & ~(uint32_t)A_SS_ONSTACK)
                return -A_EINVAL;
            if (size < 4096)
                return -12;   /* ENOMEM */
            t->ss_sp = sp;
            t->ss_size = size;
            t->ss_flags = 0;
        }
    }
    return 0;
}

SYS(rt_sigqueueinfo)
{
    proc *p = proc_find(t->m, (int)a[0]);
    if (!p)
        return -A_ESRCH;
    int sig = (int)a[1];
    if (sig < 0 || sig > NSIG_AXP)
        return -A_EINVAL;
    ksiginfo si = { .signo = sig, .code = A_SI_USER, .pid = t->p->pid };
    if (sig)
        sig_send_proc(p, &si);
    return 0;
}

/* struct itimerval of two 64-bit timevals; only ITIMER_REAL is kept. */
static void tv_put(int64_t *v, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    v[0] = ns / 1000000000;
    v[1] = ns % 1000000000 / 1000;
}

static void itimer_get(thread *t, int64_t v[4])
{
    proc *p = t->p;
    tv_put(v, p->it_interval);
    tv_put(v + 2, p->it_deadline < 0 ? 0 : p->it_deadline - vtime_ns(t->m));
    if (p->it_deadline >= 0 && v[2] == 0 && v[3] == 0)
        v[3] = 1;
}

SYS(getitimer)
{
    if (a[0] > 2)
        return -A_EINVAL;
    int64_t v[4] = {0};
    if (a[0] == 0)
        itimer_get(t, v);
    return mem_write(t->mm, a[1], v, sizeof v) ? -A_EFAULT : 0;
}

SYS(setitimer)
{
    if (a[0] > 2)
        return -A_EINVAL;
    int64_t nv[4] = {0}, ov[4] = {0};
    if (a[1] && mem_read(t->mm, a[1], nv, sizeof nv))
        return -A_EFAULT;
    if (a[0] == 0) {
        itimer_get(t, ov);
        int64_t iv = nv[0] * 1000000000 + nv[1] * 1000;
        int64_t val = nv[2] * 1000000000 + nv[3] * 1000;
        t->p->it_interval = iv;
        t->p->it_deadline = val ? vtime_ns(t->m) + val : -1;
    }
    if (a[2] && mem_write(t->mm, a[2], ov, sizeof ov))
        return -A_EFAULT;
    return 0;
}
