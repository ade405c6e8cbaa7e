/*
 * machine/sys_proc.c: processes and threads: clone, fork, vfork, execve,
 * exit, wait, ids, process groups, kill, limits and usage.
 *
 * clone makes a thread (CLONE_THREAD) or a process; fork and vfork are
 * clones.  A process gets a copy-on-write copy of its parent's address
 * space unless CLONE_VM shares it (vfork: the parent then sleeps until the
 * child execs or exits).  execve of an Alpha program replaces the address
 * space in place; a "#!" script runs its interpreter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "machine/exact.h"
#include "machine/sys.h"


/* ---- exit -------------------------------------------------------------- */

SYS(exit)
{
    thread_exit(t, (int)a[0]);
    return SYS_NORET;
}

SYS(exit_group)
{
    proc_exit(t->p, ((int)a[0] & 0xff) << 8);
    return SYS_NORET;
}

/* ---- clone, fork, vfork ---------------------------------------------------- */

static void copy_regs(thread *c, const thread *t, uint64_t sp)
{
    memcpy(c->r, t->r, sizeof c->r);
    memcpy(c->f, t->f, sizeof c->f);
    c->pc = t->pc;
    c->fpcr = t->fpcr;
    c->swcr = t->swcr;
    c->uniq = t->uniq;
    c->uac = t->uac;
    c->sigmask = t->sigmask;
    c->r[0] = 0;
    c->r[19] = 0;
    if (sp)
        c->r[30] = sp;
}

static long do_clone(thread *t, uint64_t flags, uint64_t sp, uint64_t ptid, uint64_t ctid, uint64_t tls)
{
    machine *m = t->m;
    proc *p = t->p;
    if (t->wkind == W_VFORK) {       /* the vfork child let go */
        if (!t->woken)
            return SYS_BLOCK;
        t->wkind = W_NONE;
        return (long)t->waddr;
    }
    if ((flags & A_CLONE_THREAD) && (flags & (A_CLONE_VM | A_CLONE_SIGHAND)) != (A_CLONE_VM | A_CLONE_SIGHAND))
        return -A_EINVAL;
    if ((flags & A_CLONE_SIGHAND) && !(flags & A_CLONE_VM))
        return -A_EINVAL;
    /* --max-threads, as RLIMIT_NPROC would; and a new address space's
     * commitment within --mem-limit */
    if (m->nlive >= m->max_threads)
        return -A_EAGAIN;
    if (!(flags & A_CLONE_VM) && mem_over_limit(m, mm_committed(t->mm)))
        return -A_ENOMEM;
    if (flags & A_CLONE_THREAD) {
        thread *c = thread_new(m, p);
        copy_regs(c, t, sp);
        if (flags & A_CLONE_SETTLS)
            c->uniq = tls;
        uint32_t tid = (uint32_t)c->tid;
        if (flags & A_CLONE_PARENT_SETTID)
            mem_write(p->mm, ptid, &tid, 4);
        if (flags & A_CLONE_CHILD_SETTID)
            mem_write(p->mm, ctid, &tid, 4);
        if (flags & A_CLONE_CHILD_CLEARTID)
            c->clear_tid = ctid;
        make_runnable(m, c);
        return c->tid;
    }
    proc *c = proc_new(m);
    proc *par = (flags & A_CLONE_PARENT) && p->parent ? p->parent : p;
    c->parent = par;
    proc **pp = &par->children;
    while (*pp)
        pp = &(*pp)->sibling;
    *pp = c;
    m->ps[c->stat_index].ppid = par->pid;
    c->pgid = p->pgid;
    c->sid = p->sid;
    c->umask = p->umask;
    c->cwd = fcntl(p->cwd, F_DUPFD_CLOEXEC, 10);
    c->cwd_path = p->cwd_path ? strdup(p->cwd_path) : NULL;
    c->exe = p->exe ? strdup(p->exe) : NULL;
    memcpy(c->rl, p->rl, sizeof c->rl);
    c->exit_signal = (int)(flags & A_CSIGNAL);
    if (flags & A_CLONE_VM) {
        c->mm = p->mm;
        c->mm->refs++;
    } else {
        c->mm = mm_fork(p->mm);
    }
    if (flags & A_CLONE_FILES) {
        c->fd = p->fd;
        c->fd->refs++;
    } else {
        c->fd = fdt_copy(p->fd);
    }
    if (flags & A_CLONE_SIGHAND) {
        c->sh = p->sh;
        c->sh->refs++;
    } else {
        c->sh = malloc(sizeof *c->sh);
        *c->sh = *p->sh;
        c->sh->refs = 1;
    }
    thread *ct = thread_new(m, c);
    copy_regs(ct, t, sp);
    if (flags & A_CLONE_SETTLS)
        ct->uniq = tls;
    ct->ss_sp = t->ss_sp;
    ct->ss_size = t->ss_size;
    ct->ss_flags = t->ss_flags;
    uint32_t tid = (uint32_t)ct->tid;
    if (flags & A_CLONE_PARENT_SETTID)
        mem_write(p->mm, ptid, &tid, 4);
    if (flags & A_CLONE_CHILD_SETTID)
        mem_write(c->mm, ctid, &tid, 4);
    if (flags & A_CLONE_CHILD_CLEARTID)
        ct->clear_tid = ctid;
    pstat_update(m, c);
    mach_image_notice_all(m, c);
    mach_fork_notice(m, t, c, ct->tid, (flags & A_CLONE_VM) != 0, sp != 0);
    m->forks++;
    make_runnable(m, ct);
    if (flags & A_CLONE_VFORK) {
        c->vfork_parent = t;
        t->wkind = W_VFORK;
        t->waddr = (uint64_t)c->pid;
        t->woken = false;
        return SYS_BLOCK;
    }
    return c->pid;
}

SYS(clone) { return do_clone(t, a[0], a[1], a[2], a[3], a[4]); }
SYS(fork) { (void)a; return do_clone(t, A_SIGCHLD, 0, 0, 0, 0); }
SYS(vfork) { (void)a; return do_clone(t, A_CLONE_VM | A_CLONE_VFORK | A_SIGCHLD, 0, 0, 0, 0); }

/* ---- execve ------------------------------------------------------------ */

static char **str_array(thread *t, uint64_t va, long *err)
{
    size_t n = 0, cap = 16;
    char **v = calloc(cap, sizeof *v);
    if (!va)
        return v;
    for (;;) {
        uint64_t p;
        if (mem_read(t->mm, va + 8 * n, &p, 8)) {
            *err = -A_EFAULT;
            goto bad;
        }
        if (!p)
            break;
        if (n + 2 > cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        int e = 0;
        v[n] = mem_strdup(t->mm, p, 1 << 20, &e);
        if (!v[n]) {
            *err = e == -A_ENAMETOOLONG ? -A_E2BIG : e;
            goto bad;
        }
        v[++n] = NULL;
        if (n > 100000) {
            *err = -A_E2BIG;
            goto bad;
        }
    }
    return v;
bad:
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return NULL;
}

static void free_array(char **v)
{
    if (!v)
        return;
    for (size_t i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

SYS(execve)
{
    machine *m = t->m;
    proc *p = t->p;
    long err;
    char *gp = path_arg(t, a[0], &err);
    if (!gp)
        return err;
    char **argv = str_array(t, a[1], &err);
    char **envp = argv ? str_array(t, a[2], &err) : NULL;
    if (!argv || !envp) {
        free(gp);
        free_array(argv);
        free_array(envp);
        return err;
    }
    /* /proc/self/exe runs the guest's program again, not axp */
    char *alias = path_exe_alias(t, gp);
    if (alias) {
        free(gp);
        gp = alias;
    }
    int e = 0;
    char *host = path_host_for_exec(m, p, gp, &e);
    if (!host) {
        free(gp);
        free_array(argv);
        free_array(envp);
        return e ? e : -A_ENOENT;
    }
    char *abs = path_join_norm(p->cwd_path ? p->cwd_path : "/", gp);
    char msg[600];
    int r = load_program(t, host, abs, argv, envp, msg, sizeof msg);
    if (r == -A_ENOEXEC && hostproc_can_run(host))
        r = (int)hostproc_exec(t, host, argv, envp);
    free(host);
    free(abs);
    free(gp);
    free_array(argv);
    free_array(envp);
    if (r == SYS_BLOCK)
        return r;
    if (r) {
        if (r == -A_ENOEXEC || r == -A_ENOMEM)
            mlog(m, "pid %d: execve: %s", p->pid, msg);
        return r;
    }
    /* the new program runs alone, with its own tables */
    proc_kill_others(t);
    if (p->fd->refs > 1) {
        fdtable *n = fdt_copy(p->fd);
        fdt_put(p->fd);
        p->fd = n;
    }
    fdt_cloexec(p->fd);
    if (p->sh->refs > 1) {
        sighand *n = malloc(sizeof *n);
        *n = *p->sh;
        n->refs = 1;
        p->sh->refs--;
        p->sh = n;
    }
    for (int s = 1; s <= NSIG_AXP; s++)
        if (p->sh->a[s].handler > 1) {
            memset(&p->sh->a[s], 0, sizeof p->sh->a[s]);
        } else {
            p->sh->a[s].flags = 0;
            p->sh->a[s].restorer = 0;
        }
    t->ss_sp = t->ss_size = 0;
    t->ss_flags = A_SS_DISABLE;
    t->robust = 0;
    if (p->vfork_parent) {
        p->vfork_parent->woken = true;
        p->vfork_parent = NULL;
        t->m->wake_gen++;
    }
    if (m->x)
        exact_break(t);
    pstat_update(m, p);
    return SYS_NORET;
}

/* ---- wait ---------------------------------------------------------------- */

static bool child_matches(const proc *c, long pid, const proc *self)
{
    if (pid > 0)
        return c->pid == pid;
    if (pid == -1)
        return true;
    if (pid == 0)
        return c->pgid == self->pgid;
    return c->pgid == -pid;
}

static void put_rusage(thread *t, uint64_t va, uint64_t icount)
{
    if (!va)
        return;
    uint64_t ru[18];
    memset(ru, 0, sizeof ru);
    uint64_t us = icount / t->m->mhz;      /* cycles to microseconds */
    ru[0] = us / 1000000;
    ru[1] = us % 1000000;
    mem_write(t->mm, va, ru, sizeof ru);
}

SYS(wait4)
{
    proc *p = t->p;
    long pid = (int)a[0];
    uint64_t opt = a[2];
    bool any = false;
    for (proc *c = p->children; c; c = c->sibling) {
        if (!child_matches(c, pid, p))
            continue;
        any = true;
        if (c->state != P_ZOMBIE)
            continue;
        int st = c->wstatus;
        if (a[1] && mem_write(t->mm, a[1], &st, 4))
            return -A_EFAULT;
        put_rusage(t, a[3], t->m->ps[c->stat_index].icount);
        int cpid = c->pid;
        proc_reap(t->m, c);
        return cpid;
    }
    if (!any)
        return -A_ECHILD;
    if (opt & A_WNOHANG)
        return 0;
    t->wkind = W_CHILD;
    return SYS_BLOCK;
}

SYS(waitid)
{
    proc *p = t->p;
    int type = (int)a[0];
    long id = (long)a[1];
    uint64_t opt = a[3];
    if (type < 0 || type > 2 || !(opt & A_WEXITED))
        return -A_EINVAL;
    bool any = false;
    for (proc *c = p->children; c; c = c->sibling) {
        /* P_ALL, P_PID, P_PGID (0: the caller's group) */
        if ((type == 1 && c->pid != id) || (type == 2 && c->pgid != (id ? id : p->pgid)))
            continue;
        any = true;
        if (c->state != P_ZOMBIE)
            continue;
        if (a[2]) {
            uint8_t si[128];
            memset(si, 0, sizeof si);
            int v[3] = { A_SIGCHLD, 0, 0 };
            int st = c->wstatus;
            v[2] = (st & 0x7f) == 0 ? A_CLD_EXITED : (st & 0x80) ? A_CLD_DUMPED : A_CLD_KILLED;
            memcpy(si, v, 12);
            int w[3] = { c->pid, (int)getuid(), (st & 0x7f) == 0 ? (st >> 8) & 0xff : st & 0x7f };
            memcpy(si + 16, w, 12);
            if (mem_write(t->mm, a[2], si, sizeof si))
                return -A_EFAULT;
        }
        if (!(opt & A_WNOWAIT))
            proc_reap(t->m, c);
        return 0;
    }
    if (!any)
        return -A_ECHILD;
    if (opt & A_WNOHANG) {
        if (a[2]) {
            uint8_t si[128];
            memset(si, 0, sizeof si);
            mem_write(t->mm, a[2], si, sizeof si);
        }
        return 0;
    }
    t->wkind = W_CHILD;
    return SYS_BLOCK;
}

/* ---- ids ------------------------------------------------------------------ */

SYS(getxpid)
{
    (void)a;
    t->r[20] = (uint64_t)(t->p->parent ? t->p->parent->pid : 1);
    return t->p->pid;
}
SYS(getppid) { (void)a; return t->p->parent ? t->p->parent->pid : 1; }
SYS(gettid) { (void)a; return t->tid; }
SYS(getxuid) { (void)a; t->r[20] = geteuid(); return getuid(); }
SYS(getxgid) { (void)a; t->r[20] = getegid(); return getgid(); }
SYS(geteuid) { (void)t; (void)a; return geteuid(); }
SYS(getegid) { (void)t; (void)a; return getegid(); }
SYS(setuid) { (void)t; return a[0] == getuid() || a[0] == geteuid() ? 0 : -A_EPERM; }
SYS(setgid) { (void)t; return a[0] == getgid() || a[0] == getegid() ? 0 : -A_EPERM; }
SYS(setreuid) { (void)t; (void)a; return 0; }
SYS(setregid) { (void)t; (void)a; return 0; }
SYS(setresuid) { (void)t; (void)a; return 0; }
SYS(setresgid) { (void)t; (void)a; return 0; }
SYS(setgroups) { (void)t; (void)a; return -A_EPERM; }
SYS(sethostname) { (void)t; (void)a; return -A_EPERM; }

SYS(getgroups)
{
    gid_t g[256];
    int n = getgroups(256, g);
    if (n < 0)
        return -xerrno(errno);
    if (a[0] == 0)
        return n;
    if ((int)a[0] < n)
        return -A_EINVAL;
    uint32_t out[256];
    for (int i = 0; i < n; i++)
        out[i] = g[i];
    return mem_write(t->mm, a[1], out, (size_t)n * 4) ? -A_EFAULT : n;
}

static long put3(thread *t, const uint64_t *a, uint32_t x, uint32_t y, uint32_t z)
{
    if (mem_write(t->mm, a[0], &x, 4) || mem_write(t->mm, a[1], &y, 4) || mem_write(t->mm, a[2], &z, 4))
        return -A_EFAULT;
    return 0;
}
SYS(getresuid) { return put3(t, a, getuid(), geteuid(), geteuid()); }
SYS(getresgid) { return put3(t, a, getgid(), getegid(), getegid()); }

SYS(setpgid)
{
    proc *p = a[0] ? proc_find(t->m, (int)a[0]) : t->p;
    if (!p || (p != t->p && p->parent != t->p))
        return -A_ESRCH;
    int pg = a[1] ? (int)a[1] : p->pid;
    if (pg < 0)
        return -A_EINVAL;
    p->pgid = pg;
    return 0;
}

SYS(getpgid)
{
    proc *p = a[0] ? proc_find(t->m, (int)a[0]) : t->p;
    return p ? p->pgid : -A_ESRCH;
}

SYS(getpgrp) { (void)a; return t->p->pgid; }

SYS(setsid)
{
    (void)a;
    proc *p = t->p;
    for (proc *q = t->m->procs; q; q = q->all_next)
        if (q != p && q->state == P_LIVE && q->pgid == p->pid)
            return -A_EPERM;
    p->sid = p->pgid = p->pid;
    return p->sid;
}

SYS(getsid)
{
    proc *p = a[0] ? proc_find(t->m, (int)a[0]) : t->p;
    return p ? p->sid : -A_ESRCH;
}

SYS(set_tid_address) { t->clear_tid = a[0]; return t->tid; }
SYS(set_robust_list) { if (a[1] != 24) return -A_EINVAL; t->robust = a[0]; return 0; }
SYS(get_robust_list)
{
    thread *w = a[0] ? thread_find(t->m, (int)a[0]) : t;
    if (!w)
        return -A_ESRCH;
    uint64_t len = 24;
    if (mem_write(t->mm, a[1], &w->robust, 8) || mem_write(t->mm, a[2], &len, 8))
        return -A_EFAULT;
    return 0;
}

/* ---- signals to others ---------------------------------------------------- */

SYS(kill)
{
    machine *m = t->m;
    long pid = (int)a[0];
    int sig = (int)a[1];
    if (sig < 0 || sig > NSIG_AXP)
        return -A_EINVAL;
    ksiginfo si = { .signo = sig, .code = A_SI_USER, .pid = t->p->pid, .uid = (int)getuid() };
    int hit = 0;
    for (proc *p = m->procs; p; p = p->all_next) {
        if (p->state != P_LIVE)
            continue;
        bool match = pid > 0 ? p->pid == pid
                   : pid == 0 ? p->pgid == t->p->pgid
                   : pid == -1 ? p != t->p && p != m->init
                   : p->pgid == -pid;
        if (!match)
            continue;
        hit++;
        if (sig)
            sig_send_proc(p, &si);
    }
    return hit ? 0 : -A_ESRCH;
}

static long thread_kill(thread *t, int tgid, int tid, int sig)
{
    if (sig < 0 || sig > NSIG_AXP)
        return -A_EINVAL;
    thread *w = thread_find(t->m, tid);
    if (!w || (tgid > 0 && w->p->pid != tgid))
        return -A_ESRCH;
    if (sig) {
        ksiginfo si = { .signo = sig, .code = A_SI_TKILL, .pid = t->p->pid, .uid = (int)getuid() };
        sig_send_thread(w, &si);
    }
    return 0;
}

SYS(tkill) { return thread_kill(t, -1, (int)a[0], (int)a[1]); }
SYS(tgkill) { return thread_kill(t, (int)a[0], (int)a[1], (int)a[2]); }

/* ---- limits and usage ----------------------------------------------------- */

static long rlimit_common(thread *t, proc *p, unsigned res, uint64_t newva, uint64_t oldva)
{
    if (res >= NRLIM)
        return -A_EINVAL;
    if (oldva && mem_write(t->mm, oldva, &p->rl[res], 16))
        return -A_EFAULT;
    if (newva) {
        rlim r;
        if (mem_read(t->mm, newva, &r, 16))
            return -A_EFAULT;
        if (r.cur > r.max)
            return -A_EINVAL;
        if (res == A_RLIMIT_NOFILE && r.max > 1048576)
            return -A_EPERM;
        p->rl[res] = r;
    }
    return 0;
}

SYS(prlimit64)
{
    proc *p = a[0] ? proc_find(t->m, (int)a[0]) : t->p;
    if (!p)
        return -A_ESRCH;
    return rlimit_common(t, p, (unsigned)a[1], a[2], a[3]);
}
SYS(getrlimit) { return rlimit_common(t, t->p, (unsigned)a[0], 0, a[1]); }
SYS(setrlimit) { return rlimit_common(t, t->p, (unsigned)a[0], a[1], 0); }

static uint64_t proc_cycles(proc *p)
{
    uint64_t n = p->icount;
    for (thread *q = p->threads; q; q = q->p_next)
        n += q->icount;
    return n;
}

SYS(getrusage)
{
    int who = (int)a[0];
    uint64_t n = who == -1 ? t->p->child_icount : who == 1 ? t->icount : proc_cycles(t->p);
    put_rusage(t, a[1], n);
    return 0;
}

SYS(times)
{
    machine *m = t->m;
    uint64_t hz = 1024;            /* Alpha's USER_HZ */
    if (a[0]) {
        uint64_t tms[4] = { proc_cycles(t->p) * hz / (m->mhz * 1000000), 0,
                            t->p->child_icount * hz / (m->mhz * 1000000), 0 };
        if (mem_write(t->mm, a[0], tms, sizeof tms))
            return -A_EFAULT;
    }
    return (long)((uint64_t)vtime_ns(m) * hz / 1000000000);
}

SYS(getpriority) { (void)t; (void)a; return 20; }
SYS(setpriority) { (void)t; (void)a; return 0; }
SYS(sched_yield) { (void)a; t->yield = true; return 0; }

SYS(sched_getaffinity)
{
    if (a[1] < 8 || (a[1] & 7))
        return -A_EINVAL;
    uint64_t mask = t->m->ncpu >= 64 ? ~0ULL : (1ULL << t->m->ncpu) - 1;
    if (mem_zero(t->mm, a[2], a[1]) || mem_write(t->mm, a[2], &mask, 8))
        return -A_EFAULT;
    return 8;
}
SYS(sched_setaffinity) { (void)t; (void)a; return 0; }
SYS(sched_getparam) { int z = 0; return mem_write(t->mm, a[1], &z, 4) ? -A_EFAULT : 0; }
SYS(sched_getscheduler) { (void)t; (void)a; return 0; }
SYS(sched_setscheduler) { (void)t; return a[1] == 0 ? 0 : -A_EPERM; }
SYS(sched_get_priority_max) { (void)t; (void)a; return 0; }
SYS(sched_get_priority_min) { (void)t; (void)a; return 0; }
SYS(personality) { (void)t; (void)a; return 0; }
SYS(capget)
{
    uint32_t z[6] = {0};
    if (a[1] && mem_write(t->mm, a[1], z, sizeof z))
        return -A_EFAULT;
    return 0;
}

SYS(prctl)
{
    switch (a[0]) {
    case 1: return 0;                           /* PR_SET_PDEATHSIG */
    case 3: return 1;                           /* PR_GET_DUMPABLE */
    case 4: return 0;                           /* PR_SET_DUMPABLE */
    case 15: return 0;                          /* PR_SET_NAME */
    case 16: {                                  /* PR_GET_NAME */
        char name[16] = {0};
        const char *e = t->p->exe ? strrchr(t->p->exe, '/') : NULL;
        snprintf(name, sizeof name, "%s", e ? e + 1 : "axp");
        return mem_write(t->mm, a[1], name, 16) ? -A_EFAULT : 0;
    }
    default: return -A_EINVAL;
    }
}
