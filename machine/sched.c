/*
 * machine/sched.c: N simulated CPUs in one host thread, deterministically.
 *
 * Time moves in rounds.  In a round each CPU in turn runs its thread for a
 * quantum of instructions (a thread switches only at a block boundary, or
 * when it blocks or exits; a CPU whose thread stops picks the next one from
 * the run queue).  After the round, guest time advances by one quantum of
 * cycles, timers fire, and blocked threads whose condition may now hold
 * retry their system call.  Nothing here reads the host clock, so the same
 * program and input give the same interleaving in every run; only input
 * from outside the machine (a terminal, a pipe from the host) can vary it.
 *
 * A thread blocks for a pipe, a futex, a child, a sleep or a signal; when
 * every CPU is idle the machine jumps guest time to the next deadline, or,
 * with only host descriptors to wait for, blocks in poll(2).  If nothing at
 * all can wake any thread, the guest has deadlocked and the machine says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "machine/axp.h"
#include "machine/linux.h"

/* Signals sent to axp itself (a terminal's ^C, kill) go to the guest:
 * to the first process's process group, as a terminal would send them. */
static volatile sig_atomic_t host_pending;

static void on_host_signal(int sig)
{
    host_pending |= 1 << sig;
}

void axp_forward_host_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_host_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

static void deliver_host_signals(machine *m)
{
    if (!host_pending)
        return;
    int pend = host_pending;
    host_pending = 0;
    static const struct { int h, a; } map[] = {
        { SIGINT, A_SIGINT }, { SIGTERM, A_SIGTERM }, { SIGHUP, A_SIGHUP }, { SIGQUIT, A_SIGQUIT },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (!(pend & (1 << map[i].h)))
            continue;
        int pg = m->init && m->init->state == P_LIVE ? m->init->pgid : -1;
        ksiginfo si = { .signo = map[i].a, .code = A_SI_KERNEL };
        for (proc *p = m->procs; p; p = p->all_next)
            if (p->state == P_LIVE && (p->pgid == pg || pg < 0))
                sig_send_proc(p, &si);
    }
}

uint64_t vcycles(machine *m)
{
    cpu *c = m->curcpu;
    if (!c)
        return m->base_cycles;
    uint64_t v = m->base_cycles + c->used;
    if (c->cur && c->cur->state != T_DEAD)
        v += c->cur->icount - c->tstart;
    return v;
}

int64_t vtime_ns(machine *m)
{
    return (int64_t)(vcycles(m) * 1000 / m->mhz);
}

static uint64_t ns_to_cycles(machine *m, int64_t ns)
{
    return (uint64_t)ns * m->mhz / 1000;
}

void mlog(machine *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("axp: ", m->log);
    vfprintf(m->log, fmt, ap);
    fputc('\n', m->log);
    fflush(m->log);
    va_end(ap);
}

void machine_halt(machine *m, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("axp: ", m->log);
    vfprintf(m->log, fmt, ap);
    fputc('\n', m->log);
    fflush(m->log);
    va_end(ap);
    if (!m->halted) {
        m->halted = true;
        m->halt_status = status;
    }
}

void sched_wake_futex(machine *m, mm *x, uint64_t addr, int n, uint32_t bits, int *woken)
{
    *woken = 0;
    for (thread *t = m->threads; t && *woken < n; t = t->all_next)
        if (t->state == T_BLOCKED && t->wkind == W_FUTEX && !t->woken &&
            t->mm == x && t->waddr == addr && (t->wbits & bits)) {
            t->woken = true;
            (*woken)++;
        }
    if (*woken)
        m->wake_gen++;
}

static void fire_timers(machine *m, int64_t now)
{
    for (proc *p = m->procs; p; p = p->all_next) {
        if (p->state != P_LIVE || p->it_deadline < 0 || now < p->it_deadline)
            continue;
        if (p->it_interval > 0) {
            while (p->it_deadline <= now)
                p->it_deadline += p->it_interval;
        } else {
            p->it_deadline = -1;
        }
        ksiginfo si = { .signo = A_SIGALRM, .code = A_SI_KERNEL };
        sig_send_proc(p, &si);
    }
}

/* Retry every blocked call whose condition may hold, again while retries
 * wake others (a proxy's exit wakes its parent's wait4).  Returns true
 * when some thread became runnable. */
static bool wake_blocked(machine *m, int64_t now, bool *fdwait, int64_t *next_deadline)
{
    bool any = false;
    for (int pass = 0; pass < 16; pass++) {
        uint64_t gen = m->wake_gen;
        bool progress = false;
        *fdwait = false;
        *next_deadline = -1;
        for (thread *t = m->threads; t; t = t->all_next) {
            if (t->state != T_BLOCKED)
                continue;
            if (t->wkind == W_HOST) {
                hostproc_check(t);
                if (t->state == T_BLOCKED)
                    *fdwait = true;
                else
                    progress = true;
                continue;
            }
            bool go = t->woken;
            if (t->wdeadline >= 0 && now >= t->wdeadline)
                go = true;
            if (t->wkind == W_CHILD && t->p->child_event)
                go = true;
            if (t->wkind == W_FD || t->wkind == W_POLL || t->wkind == W_SIGNAL)
                go = true;     /* the call checks for itself */
            if (go)
                syscall_retry(t);
            if (t->state == T_RUNNABLE) {
                progress = any = true;
                continue;
            }
            if (t->wkind == W_FD || (t->wkind == W_POLL && t->waddr))
                *fdwait = true;
            if (t->wdeadline >= 0 && (*next_deadline < 0 || t->wdeadline < *next_deadline))
                *next_deadline = t->wdeadline;
        }
        if (!progress && gen == m->wake_gen)
            break;
    }
    for (proc *p = m->procs; p; p = p->all_next)
        p->child_event = false;
    return any;
}

static int64_t next_timer(machine *m)
{
    int64_t d = -1;
    for (proc *p = m->procs; p; p = p->all_next)
        if (p->state == P_LIVE && p->it_deadline >= 0 && (d < 0 || p->it_deadline < d))
            d = p->it_deadline;
    return d;
}

/* Block in the host until a descriptor some guest waits for is ready. */
static void host_wait(machine *m, int timeout_ms)
{
    int n = 0, cap = 16;
    struct pollfd *pf = malloc((size_t)cap * sizeof *pf);
    for (thread *t = m->threads; t; t = t->all_next) {
        if (t->state != T_BLOCKED)
            continue;
        if (t->wkind == W_FD || (t->wkind == W_HOST && t->wfd >= 0)) {
            if (n == cap)
                pf = realloc(pf, (size_t)(cap *= 2) * sizeof *pf);
            pf[n].fd = t->wfd;
            pf[n].events = t->wevents;
            n++;
        } else if (t->wkind == W_POLL && t->wdata) {
            struct pollfd *tp = t->wdata;
            for (int i = 0; i < (int)t->waddr; i++) {
                if (n == cap)
                    pf = realloc(pf, (size_t)(cap *= 2) * sizeof *pf);
                pf[n++] = tp[i];
            }
        }
    }
    /* with no descriptor and no timeout this sleeps until a signal */
    if (n || timeout_ms < 0)
        while (poll(n ? pf : NULL, (nfds_t)n, timeout_ms) < 0 && errno == EINTR && !host_pending)
            ;
    free(pf);
}

/* Is some thread waiting for nothing but a signal (pause, sigsuspend)? */
static bool waits_for_signal(machine *m)
{
    for (thread *t = m->threads; t; t = t->all_next)
        if (t->state == T_BLOCKED && t->wdeadline < 0 &&
            (t->wkind == W_SIGNAL || (t->wkind == W_POLL && !t->waddr)))
            return true;
    return false;
}

static void free_dead(machine *m)
{
    for (thread **pp = &m->threads; *pp;) {
        thread *t = *pp;
        if (t->state == T_DEAD && t->cpu < 0) {
            *pp = t->all_next;
            free(t->wdata);
            free(t->vres);
            free(t);
        } else {
            pp = &t->all_next;
        }
    }
}

static void run_cpu(machine *m, cpu *c)
{
    uint64_t q = m->quantum;
    m->curcpu = c;
    c->used = 0;
    while (c->used < q && !m->halted) {
        thread *t = c->cur;
        if (!t) {
            t = rq_pop(m);
            if (!t)
                break;
            c->cur = t;
            t->cpu = c->id;
            c->st_t = NULL;     /* no block of t's retired here yet (unwind.c) */
        }
        if (t->state != T_RUNNABLE) {
            c->cur = NULL;
            t->cpu = -1;
            continue;
        }
        c->tstart = t->icount;
        if (sig_deliverable(t)) {
            sig_deliver(t);
            if (t->state != T_RUNNABLE) {
                c->cur = NULL;
                t->cpu = -1;
                continue;
            }
        }
        uint64_t n = (m->hook || c->core) ? exec_timed(t, (int64_t)(q - c->used))
                             : exec_functional(t, (int64_t)(q - c->used));
        c->used += n;
        c->insns += n;
        m->icount += n;
        c->tstart = t->icount;
        if (t->mm && t->mm->cc.dead)
            code_reap(m, t->mm);
        if (t->state != T_RUNNABLE) {
            c->cur = NULL;
            t->cpu = -1;
        } else if (t->yield) {
            t->yield = false;
            if (m->rq_head) {
                c->cur = NULL;
                t->cpu = -1;
                rq_push(m, t);
            }
        }
    }
    if (c->used < q)
        c->idle += q - c->used;
    thread *t = c->cur;
    if (t) {
        t->lock = false;      /* a reservation does not survive a switch */
        if (m->rq_head) {
            c->cur = NULL;
            t->cpu = -1;
            rq_push(m, t);
        }
    }
}

static bool anyone_running(machine *m)
{
    if (m->rq_head)
        return true;
    for (int i = 0; i < m->ncpu; i++)
        if (m->cpus[i].cur)
            return true;
    return false;
}

int axp_run(machine *m)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    m->host_t0 = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    char err[256];
    if (timing_start(m, err, sizeof err))
        machine_halt(m, 125, "%s", err);
    while (m->nlive > 0 && !m->halted) {
        for (int i = 0; i < m->ncpu; i++) {
            run_cpu(m, &m->cpus[i]);
            if (m->phook && m->tt)      /* (the driver's polls go with its samples) */
                tthread_poll(m->tt, i);
            else if (m->phook)
                m->phook(m->phook_ctx, i);
        }
        m->curcpu = NULL;
        m->base_cycles += m->quantum;
        deliver_host_signals(m);
        int64_t now = vtime_ns(m);
        fire_timers(m, now);
        bool fdwait;
        int64_t deadline;
        wake_blocked(m, now, &fdwait, &deadline);
        free_dead(m);
        while (!m->halted && m->nlive > 0 && !anyone_running(m)) {
            /* every CPU idle: wait for the next thing that can happen */
            int64_t tmr = next_timer(m);
            if (tmr >= 0 && (deadline < 0 || tmr < deadline))
                deadline = tmr;
            if (!fdwait && deadline < 0 && waits_for_signal(m)) {
                /* only a signal from outside can help: wait for one */
                host_wait(m, -1);
                deliver_host_signals(m);
                wake_blocked(m, vtime_ns(m), &fdwait, &deadline);
                continue;
            }
            if (!fdwait && deadline < 0) {
                for (thread *t = m->threads; t; t = t->all_next)
                    if (t->state == T_BLOCKED)
                        mlog(m, "pid %d tid %d blocked in %s forever", t->p->pid, t->tid,
                             syscall_name((unsigned)t->sysno));
                machine_halt(m, 125, "deadlock: every guest thread is blocked and nothing can wake one");
                break;
            }
            if (fdwait) {
                /* host descriptors first; with a deadline pending, only look */
                host_wait(m, deadline >= 0 ? 0 : -1);
                deliver_host_signals(m);
                wake_blocked(m, vtime_ns(m), &fdwait, &deadline);
                tmr = next_timer(m);
                if (tmr >= 0 && (deadline < 0 || tmr < deadline))
                    deadline = tmr;
                if (anyone_running(m) || deadline < 0)
                    continue;
            }
            /* nothing else can happen before the deadline: skip to it */
            uint64_t target = ns_to_cycles(m, deadline) + 1;
            if (target > m->base_cycles)
                m->base_cycles = target;
            deliver_host_signals(m);
            now = vtime_ns(m);
            fire_timers(m, now);
            wake_blocked(m, now, &fdwait, &deadline);
        }
    }
    /* the model's thread done: what follows reads its results */
    tthread_stop(m->tt);
    m->tt = NULL;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    m->host_t1 = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    if (m->halted)
        return m->halt_status;
    int st = m->init_status;
    if ((st & 0x7f) == 0)
        return (st >> 8) & 0xff;
    return 128 + (st & 0x7f);
}
