/*
 * machine/proc.c: guest processes and threads: creation, exit, reaping.
 *
 * Pids and tids share one counter starting at 1000, handed out in order, so
 * they are the same in every run.  A process whose parent is gone is an
 * orphan and is reaped as soon as it exits, as a real init would; the
 * first process's status is what axp exits with.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/exact.h"
#include "machine/linux.h"

#define FIRST_PID 1000

static int pstat_new(machine *m, proc *p)
{
    if (m->nps == m->cps) {
        m->cps = m->cps ? 2 * m->cps : 16;
        m->ps = realloc(m->ps, (size_t)m->cps * sizeof *m->ps);
    }
    pstat *s = &m->ps[m->nps];
    memset(s, 0, sizeof *s);
    s->pid = p->pid;
    s->ppid = p->parent ? p->parent->pid : 0;
    return m->nps++;
}

void pstat_update(machine *m, proc *p)
{
    pstat *s = &m->ps[p->stat_index];
    uint64_t n = p->icount;
    int k = 0;
    for (thread *t = p->threads; t; t = t->p_next, k++)
        n += t->icount;
    s->icount = n;
    if (p->exe && (!s->exe || strcmp(s->exe, p->exe))) {
        free(s->exe);
        s->exe = strdup(p->exe);
    }
    if (k > s->threads)
        s->threads = k;
}

proc *proc_new(machine *m)
{
    proc *p = calloc(1, sizeof *p);
    if (!m->next_pid)
        m->next_pid = FIRST_PID;
    p->pid = p->pgid = p->sid = m->next_pid++;
    p->cwd = -1;
    p->umask = 022;
    p->exit_signal = A_SIGCHLD;
    p->it_deadline = -1;
    for (int i = 0; i < NRLIM; i++)
        p->rl[i].cur = p->rl[i].max = A_RLIM_INFINITY;
    p->rl[A_RLIMIT_STACK].cur = STACK_MAX;
    p->rl[A_RLIMIT_NOFILE].cur = 1024;
    p->rl[A_RLIMIT_NOFILE].max = 4096;
    p->rl[A_RLIMIT_CORE].cur = 0;
    p->all_next = m->procs;
    m->procs = p;
    p->stat_index = pstat_new(m, p);
    p->start_ns = vtime_ns(m);
    return p;
}

thread *thread_new(machine *m, proc *p)
{
    thread *t = calloc(1, sizeof *t);
    t->m = m;
    t->p = p;
    t->mm = p->mm;
    t->tid = p->threads ? m->next_pid++ : p->pid;
    t->cpu = -1;
    t->state = T_BLOCKED;       /* until made runnable */
    t->wdeadline = -1;
    t->wfd = -1;
    t->fpcr = FPCR_INITIAL;
    t->ss_flags = A_SS_DISABLE;
    /* keep creation order: the scheduler walks this list */
    thread **pp = &p->threads;
    while (*pp)
        pp = &(*pp)->p_next;
    *pp = t;
    p->nthreads++;
    pp = &m->threads;
    while (*pp)
        pp = &(*pp)->all_next;
    *pp = t;
    m->nlive++;
    return t;
}

proc *proc_find(machine *m, int pid)
{
    for (proc *p = m->procs; p; p = p->all_next)
        if (p->pid == pid && p->state != P_REAPED)
            return p;
    return NULL;
}

thread *thread_find(machine *m, int tid)
{
    for (thread *t = m->threads; t; t = t->all_next)
        if (t->tid == tid && t->state != T_DEAD)
            return t;
    return NULL;
}

void rq_push(machine *m, thread *t)
{
    t->rq_next = NULL;
    if (m->rq_tail)
        m->rq_tail->rq_next = t;
    else
        m->rq_head = t;
    m->rq_tail = t;
}

thread *rq_pop(machine *m)
{
    thread *t = m->rq_head;
    if (t) {
        m->rq_head = t->rq_next;
        if (!m->rq_head)
            m->rq_tail = NULL;
        t->rq_next = NULL;
    }
    return t;
}

static void rq_remove(machine *m, thread *t)
{
    thread *prev = NULL;
    for (thread *q = m->rq_head; q; prev = q, q = q->rq_next)
        if (q == t) {
            if (prev)
                prev->rq_next = t->rq_next;
            else
                m->rq_head = t->rq_next;
            if (m->rq_tail == t)
                m->rq_tail = prev;
            t->rq_next = NULL;
            return;
        }
}

void make_runnable(machine *m, thread *t)
{
    if (t->state == T_DEAD)
        return;
    bool queued = t->state == T_RUNNABLE;
    t->state = T_RUNNABLE;
    t->wkind = W_NONE;
    if (!queued && t->cpu < 0)
        rq_push(m, t);
}

static void wake_waiters(machine *m, proc *parent)
{
    parent->child_event = true;
    for (thread *t = parent->threads; t; t = t->p_next)
        if (t->state == T_BLOCKED && t->wkind == W_CHILD)
            t->woken = true;
    m->wake_gen++;
}

/* The last thread is gone: release everything, tell the parent. */
static void proc_zombie(machine *m, proc *p)
{
    if (m->ihook) {
        axp_image_event e = { .kind = AXP_PROCESS_EXIT, .pid = p->pid, .wstatus = p->wstatus };
        if (m->tt)              /* after the process's last samples */
            tthread_drain(m->tt);
        m->ihook(m->ihook_ctx, &e);
    }
    pstat_update(m, p);
    m->ps[p->stat_index].done = true;
    m->ps[p->stat_index].wstatus = p->wstatus;
    p->state = P_ZOMBIE;
    fdt_put(p->fd);
    p->fd = NULL;
    if (p->mm) {
        mm_put(m, p->mm);
        p->mm = NULL;
    }
    if (p->sh && --p->sh->refs == 0)
        free(p->sh);
    p->sh = NULL;
    if (p->cwd >= 0)
        close(p->cwd);
    p->cwd = -1;
    /* children become orphans; dead ones go now */
    for (proc *c = p->children, *nx; c; c = nx) {
        nx = c->sibling;
        c->parent = NULL;
        c->sibling = NULL;
        if (c->state == P_ZOMBIE)
            proc_reap(m, c);
    }
    p->children = NULL;
    if (p->vfork_parent) {
        p->vfork_parent->woken = true;
        p->vfork_parent = NULL;
        m->wake_gen++;
    }
    if (p == m->init) {
        m->init_done = true;
        m->init_status = p->wstatus;
    }
    proc *par = p->parent;
    if (!par || par->state != P_LIVE) {
        proc_reap(m, p);
        return;
    }
    const sigact *sa = &par->sh->a[A_SIGCHLD];
    bool autoreap = sa->handler == 1 /* SIG_IGN */ || (sa->flags & A_SA_NOCLDWAIT);
    if (p->exit_signal > 0 && p->exit_signal <= NSIG_AXP) {
        ksiginfo si = { .signo = p->exit_signal, .pid = p->pid, .uid = (int)getuid() };
        if ((p->wstatus & 0x7f) == 0) {
            si.code = A_CLD_EXITED;
            si.status = (p->wstatus >> 8) & 0xff;
        } else {
            si.code = (p->wstatus & 0x80) ? A_CLD_DUMPED : A_CLD_KILLED;
            si.status = p->wstatus & 0x7f;
        }
        sig_send_proc(par, &si);
    }
    wake_waiters(m, par);
    if (autoreap)
        proc_reap(m, p);
}

void proc_reap(machine *m, proc *p)
{
    if (p->parent) {
        for (proc **pp = &p->parent->children; *pp; pp = &(*pp)->sibling)
            if (*pp == p) {
                *pp = p->sibling;
                break;
            }
        p->parent->child_icount += m->ps[p->stat_index].icount + p->child_icount;
        p->parent = NULL;
    }
    p->state = P_REAPED;
    free(p->exe);
    p->exe = NULL;
    free(p->cwd_path);
    p->cwd_path = NULL;
}

/* Detach t from its process and the machine; the struct itself is freed
 * by the scheduler once no CPU refers to it. */
static void thread_gone(thread *t)
{
    machine *m = t->m;
    proc *p = t->p;
    if (t->state == T_DEAD)
        return;
    if (m->x)
        exact_thread_exit(t);
    if (t->state == T_RUNNABLE && t->cpu < 0)
        rq_remove(m, t);
    t->state = T_DEAD;
    t->wkind = W_NONE;
    m->nlive--;
    for (thread **pp = &p->threads; *pp; pp = &(*pp)->p_next)
        if (*pp == t) {
            *pp = t->p_next;
            break;
        }
    p->icount += t->icount;
    p->nthreads--;
    t->mm = NULL;
    free(t->wdata);
    t->wdata = NULL;
}

static void clear_child_tid(thread *t)
{
    if (t->clear_tid && t->mm) {
        uint32_t zero = 0;
        if (mem_write(t->mm, t->clear_tid, &zero, 4) == 0) {
            int n;
            sched_wake_futex(t->m, t->mm, t->clear_tid, 1, ~0u, &n);
        }
        t->clear_tid = 0;
    }
}

void thread_exit(thread *t, int code)
{
    proc *p = t->p;
    machine *m = t->m;
    if (t->state == T_DEAD)
        return;
    clear_child_tid(t);
    pstat_update(m, p);
    thread_gone(t);
    if (p->nthreads == 0) {
        if (!p->group_exit)
            p->wstatus = (code & 0xff) << 8;
        proc_zombie(m, p);
    }
}

void proc_exit(proc *p, int wstatus)
{
    if (p->state != P_LIVE || p->group_exit)
        return;
    machine *m = p->threads ? p->threads->m : NULL;
    p->group_exit = true;
    p->wstatus = wstatus;
    if (!m)
        return;
    pstat_update(m, p);
    while (p->threads) {
        thread *t = p->threads;
        clear_child_tid(t);
        thread_gone(t);
    }
    proc_zombie(m, p);
}

void proc_kill_others(thread *keep)
{
    proc *p = keep->p;
    for (thread *t = p->threads, *nx; t; t = nx) {
        nx = t->p_next;
        if (t != keep)
            thread_gone(t);
    }
}
