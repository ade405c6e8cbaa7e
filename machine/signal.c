/*
 * machine/signal.c: signal generation and delivery, with Linux/Alpha's
 * frames (arch/alpha/kernel/signal.c): an rt frame (siginfo, ucontext,
 * three words of return code) for SA_SIGINFO handlers, the older
 * sigcontext frame otherwise.  glibc passes its sigreturn stub as the
 * restorer; without one the return code on the stack does the job.
 *
 * Job control stops are not modelled: SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU
 * are ignored by default.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/linux.h"

#define SIG_DFL 0
#define SIG_IGN 1
#define KILLSTOP (SIGBIT(A_SIGKILL) | SIGBIT(A_SIGSTOP))

static const char *const names[] = {
    [A_SIGHUP] = "SIGHUP", [A_SIGINT] = "SIGINT", [A_SIGQUIT] = "SIGQUIT",
    [A_SIGILL] = "SIGILL", [A_SIGTRAP] = "SIGTRAP", [A_SIGABRT] = "SIGABRT",
    [A_SIGEMT] = "SIGEMT", [A_SIGFPE] = "SIGFPE", [A_SIGKILL] = "SIGKILL",
    [A_SIGBUS] = "SIGBUS", [A_SIGSEGV] = "SIGSEGV", [A_SIGSYS] = "SIGSYS",
    [A_SIGPIPE] = "SIGPIPE", [A_SIGALRM] = "SIGALRM", [A_SIGTERM] = "SIGTERM",
    [A_SIGURG] = "SIGURG", [A_SIGSTOP] = "SIGSTOP", [A_SIGTSTP] = "SIGTSTP",
    [A_SIGCONT] = "SIGCONT", [A_SIGCHLD] = "SIGCHLD", [A_SIGTTIN] = "SIGTTIN",
    [A_SIGTTOU] = "SIGTTOU", [A_SIGIO] = "SIGIO", [A_SIGXCPU] = "SIGXCPU",
    [A_SIGXFSZ] = "SIGXFSZ", [A_SIGVTALRM] = "SIGVTALRM", [A_SIGPROF] = "SIGPROF",
    [A_SIGWINCH] = "SIGWINCH", [A_SIGINFO] = "SIGINFO", [A_SIGUSR1] = "SIGUSR1",
    [A_SIGUSR2] = "SIGUSR2",
};

const char *sig_name(int sig)
{
    static char buf[16];
    if (sig > 0 && sig < (int)(sizeof names / sizeof names[0]) && names[sig])
        return names[sig];
    snprintf(buf, sizeof buf, "SIG%d", sig);
    return buf;
}

static const char *sig_desc(int sig)
{
    switch (sig) {
    case A_SIGSEGV: return "segmentation fault";
    case A_SIGBUS: return "bus error";
    case A_SIGILL: return "illegal instruction";
    case A_SIGFPE: return "arithmetic exception";
    case A_SIGTRAP: return "trace/breakpoint trap";
    default: return "signal";
    }
}

int sig_default(int sig)
{
    switch (sig) {
    case A_SIGCHLD: case A_SIGURG: case A_SIGWINCH: case A_SIGINFO:
        return SD_IGN;
    case A_SIGCONT:
        return SD_CONT;
    case A_SIGSTOP: case A_SIGTSTP: case A_SIGTTIN: case A_SIGTTOU:
        return SD_STOP;
    case A_SIGQUIT: case A_SIGILL: case A_SIGTRAP: case A_SIGABRT: case A_SIGEMT:
    case A_SIGFPE: case A_SIGBUS: case A_SIGSEGV: case A_SIGSYS: case A_SIGXCPU:
    case A_SIGXFSZ:
        return SD_CORE;
    default:
        return SD_TERM;
    }
}

static bool ignored(proc *p, int sig)
{
    const sigact *a = &p->sh->a[sig];
    if (sig == A_SIGKILL)
        return false;
    if (a->handler == SIG_IGN)
        return true;
    if (a->handler == SIG_DFL) {
        int d = sig_default(sig);
        return d == SD_IGN || d == SD_STOP || d == SD_CONT;
    }
    return false;
}

/* A blocked thread that can take sig now: interrupt its wait. */
static void kick(thread *t, int sig)
{
    if (t->state == T_BLOCKED && (!(t->sigmask & SIGBIT(sig)) || sig == A_SIGKILL))
        sig_interrupt(t);
}

void sig_send_thread(thread *t, const ksiginfo *si)
{
    int sig = si->signo;
    if (sig <= 0 || sig > NSIG_AXP || t->state == T_DEAD)
        return;
    if (t->p->hostpid > 0) {
        hostproc_signal(t->p, sig);
        return;
    }
    if (ignored(t->p, sig) && !(t->sigmask & SIGBIT(sig)))
        return;
    t->m->signals++;
    if (!(t->sigpend & SIGBIT(sig)))
        t->sq[sig] = *si;
    t->sigpend |= SIGBIT(sig);
    kick(t, sig);
}

void sig_send_proc(proc *p, const ksiginfo *si)
{
    int sig = si->signo;
    if (sig <= 0 || sig > NSIG_AXP || p->state != P_LIVE || !p->threads)
        return;
    if (p->hostpid > 0) {
        hostproc_signal(p, sig);
        return;
    }
    if (sig == A_SIGKILL) {
        proc_exit(p, A_SIGKILL);
        return;
    }
    bool all_block = true;
    for (thread *t = p->threads; t; t = t->p_next)
        if (!(t->sigmask & SIGBIT(sig)))
            all_block = false;
    if (ignored(p, sig) && !all_block)
        return;
    p->threads->m->signals++;
    if (!(p->sigpend & SIGBIT(sig)))
        p->sq[sig] = *si;
    p->sigpend |= SIGBIT(sig);
    for (thread *t = p->threads; t; t = t->p_next)
        if (!(t->sigmask & SIGBIT(sig))) {
            kick(t, sig);
            break;
        }
}

void sig_force(thread *t, const ksiginfo *si)
{
    int sig = si->signo;
    sigact *a = &t->p->sh->a[sig];
    if (a->handler == SIG_IGN || (t->sigmask & SIGBIT(sig))) {
        a->handler = SIG_DFL;
        t->sigmask &= ~SIGBIT(sig);
    }
    t->sq[sig] = *si;
    t->sigpend |= SIGBIT(sig);
    t->fault_sig = sig;
}

bool sig_deliverable(thread *t)
{
    return ((t->sigpend | t->p->sigpend) & (~t->sigmask | KILLSTOP)) != 0;
}

static int next_signal(thread *t, bool *shared)
{
    uint64_t ok = ~t->sigmask | KILLSTOP;
    uint64_t mine = t->sigpend & ok, ours = t->p->sigpend & ok;
    /* synchronous faults first, then the lowest number */
    if (t->fault_sig && (mine & SIGBIT(t->fault_sig))) {
        *shared = false;
        return t->fault_sig;
    }
    if (mine) {
        *shared = false;
        return __builtin_ctzll(mine) + 1;
    }
    if (ours) {
        *shared = true;
        return __builtin_ctzll(ours) + 1;
    }
    return 0;
}

/* The signal that would be delivered and its action, without taking it. */
static int peek(thread *t, const sigact **act)
{
    bool shared;
    uint64_t saved_t = t->sigpend, saved_p = t->p->sigpend;
    for (;;) {
        int sig = next_signal(t, &shared);
        if (!sig) {
            t->sigpend = saved_t;
            t->p->sigpend = saved_p;
            return 0;
        }
        if (!ignored(t->p, sig)) {
            t->sigpend = saved_t;
            t->p->sigpend = saved_p;
            *act = &t->p->sh->a[sig];
            return sig;
        }
        if (shared)
            t->p->sigpend &= ~SIGBIT(sig);
        else
            t->sigpend &= ~SIGBIT(sig);
    }
}

void sig_interrupt(thread *t)
{
    if (t->state != T_BLOCKED)
        return;
    const sigact *a = NULL;
    int sig = peek(t, &a);
    if (!sig)
        return;
    if (t->wkind == W_VFORK && sig != A_SIGKILL)
        return;      /* a vfork parent sleeps until the child lets go */
    bool restart = a && a->handler > SIG_IGN && (a->flags & A_SA_RESTART) &&
                   syscall_restartable(t->sysno);
    free(t->wdata);
    t->wdata = NULL;
    if (t->progress && (t->sysno == 4 || t->sysno == 121 || t->sysno == 350)) {
        syscall_finish(t, (long)t->progress);       /* a partial write */
    } else if (restart) {
        t->pc -= 4;                                 /* callsys again */
    } else {
        syscall_finish(t, -A_EINTR);
    }
    t->progress = 0;
    make_runnable(t->m, t);
}

/* ---- frames ------------------------------------------------------------ */

static void put64(uint8_t *buf, size_t off, uint64_t v) { memcpy(buf + off, &v, 8); }
static void put32(uint8_t *buf, size_t off, uint32_t v) { memcpy(buf + off, &v, 4); }

static void fill_siginfo(uint8_t *b, const ksiginfo *si)
{
    memset(b, 0, 128);
    put32(b, 0, (uint32_t)si->signo);
    put32(b, 4, (uint32_t)si->err);
    put32(b, 8, (uint32_t)si->code);
    switch (si->signo) {
    case A_SIGSEGV: case A_SIGBUS: case A_SIGILL: case A_SIGFPE: case A_SIGTRAP:
        if (si->code > 0 && si->code < A_SI_KERNEL) {
            put64(b, 16, si->addr);
            break;
        }
        /* sent by kill */
        /* fall through */
    default:
        put32(b, 16, (uint32_t)si->pid);
        put32(b, 20, (uint32_t)si->uid);
        if (si->signo == A_SIGCHLD) {
            put32(b, 24, (uint32_t)si->status);
            put64(b, 32, (uint64_t)si->utime);
            put64(b, 40, (uint64_t)si->stime);
        }
        break;
    }
}

static void fill_sigcontext(thread *t, uint8_t *sc, uint64_t mask, uint64_t sp)
{
    memset(sc, 0, SC_SIZE);
    put64(sc, SC_ONSTACK, t->ss_size && sp >= t->ss_sp && sp < t->ss_sp + t->ss_size);
    put64(sc, SC_MASK, mask);
    put64(sc, SC_PC, t->pc);
    put64(sc, SC_PS, 8);
    for (int i = 0; i < 31; i++)
        put64(sc, SC_REGS + 8 * (size_t)i, t->r[i]);
    put64(sc, SC_REGS + 8 * 30, sp);
    for (int i = 0; i < 31; i++)
        put64(sc, SC_FPREGS + 8 * (size_t)i, t->f[i]);
    put64(sc, SC_FPCR, t->fpcr);
    put64(sc, SC_FP_CONTROL, t->swcr);
    put64(sc, SC_TRAPARG_A0, t->fault_addr);
}

static bool on_altstack(thread *t, uint64_t sp)
{
    return t->ss_size && sp > t->ss_sp && sp <= t->ss_sp + t->ss_size;
}

static bool setup_frame(thread *t, int sig, const sigact *a, const ksiginfo *si, uint64_t oldmask)
{
    uint64_t oldsp = t->r[30], sp = oldsp;
    if ((a->flags & A_SA_ONSTACK) && t->ss_size && !(t->ss_flags & A_SS_DISABLE) && !on_altstack(t, sp))
        sp = t->ss_sp + t->ss_size;
    bool rt = a->flags & A_SA_SIGINFO;
    size_t size = rt ? RTF_SIZE : SF_SIZE;
    uint64_t fr = (sp - size) & ~31ULL;
    uint8_t buf[RTF_SIZE];
    memset(buf, 0, sizeof buf);
    uint8_t *sc;
    size_t retcode;
    if (rt) {
        fill_siginfo(buf + RTF_INFO, si);
        uint8_t *uc = buf + RTF_UC;
        put64(uc, UC_OSF_SIGMASK, oldmask);
        put64(uc, UC_STACK, t->ss_sp);
        put32(uc, UC_STACK + 8, (uint32_t)(t->ss_size ? (on_altstack(t, oldsp) ? A_SS_ONSTACK : 0) : A_SS_DISABLE));
        put64(uc, UC_STACK + 16, t->ss_size);
        sc = uc + UC_MCONTEXT;
        put64(uc, UC_SIGMASK, oldmask);
        retcode = RTF_RETCODE;
    } else {
        sc = buf + SF_SC;
        retcode = SF_RETCODE;
    }
    fill_sigcontext(t, sc, oldmask, oldsp);
    uint64_t ra = a->restorer;
    if (!ra) {
        put32(buf, retcode, 0x47fe0410);                       /* mov $30,$16 */
        put32(buf, retcode + 4, 0x201f0000 | (rt ? 351 : 103)); /* ldi $0,NR */
        put32(buf, retcode + 8, 0x00000083);                   /* callsys */
        ra = fr + retcode;
    }
    if (mem_write(t->mm, fr, buf, size))
        return false;
    if (!a->restorer)
        code_invalidate_range(t->mm, fr, fr + size);
    t->r[26] = ra;
    t->r[27] = t->pc = a->handler;
    t->r[16] = (uint64_t)sig;
    t->r[17] = rt ? fr + RTF_INFO : 0;
    t->r[18] = rt ? fr + RTF_UC : fr + SF_SC;
    t->r[30] = fr;
    return true;
}

static void fatal_message(thread *t, int sig)
{
    machine *m = t->m;
    char insn[96] = "?";
    if (t->fault_word_ok) {
        alpha_insn in;
        alpha_decode(t->fault_word, &in);
        if (in.op)
            alpha_disasm(&in, t->fault_pc, insn, sizeof insn, NULL, NULL);
        else
            snprintf(insn, sizeof insn, ".long 0x%08x", t->fault_word);
        for (char *c = insn; *c; c++)
            if (*c == '\t')
                *c = ' ';
    } else if (t->fault_pc == t->fault_addr) {
        snprintf(insn, sizeof insn, "fetch: not executable");
    } else {
        snprintf(insn, sizeof insn, "in a system call");
    }
    mlog(m, "pid %d (%s): %s (%s) at pc 0x%" PRIx64 " [%s], address 0x%" PRIx64,
         t->p->pid, t->p->exe ? t->p->exe : "?", sig_name(sig), sig_desc(sig),
         t->fault_pc, insn, t->fault_addr);
}

void sig_deliver(thread *t)
{
    while (t->state == T_RUNNABLE) {
        bool shared;
        int sig = next_signal(t, &shared);
        if (!sig)
            return;
        ksiginfo si;
        if (shared) {
            si = t->p->sq[sig];
            t->p->sigpend &= ~SIGBIT(sig);
        } else {
            si = t->sq[sig];
            t->sigpend &= ~SIGBIT(sig);
        }
        bool fault = t->fault_sig == sig && !shared;
        if (fault)
            t->fault_sig = 0;
        sigact *a = &t->p->sh->a[sig];
        if (sig != A_SIGKILL && a->handler == SIG_IGN)
            continue;
        if (sig == A_SIGKILL || a->handler == SIG_DFL) {
            int d = sig_default(sig);
            if (sig != A_SIGKILL && (d == SD_IGN || d == SD_STOP || d == SD_CONT))
                continue;
            if (fault)
                fatal_message(t, sig);
            proc_exit(t->p, sig | (d == SD_CORE && t->p->rl[A_RLIMIT_CORE].cur ? 0x80 : 0));
            return;
        }
        uint64_t oldmask = t->restore_mask ? t->saved_mask : t->sigmask;
        t->restore_mask = false;
        if (t->m->x)
            exact_break(t);
        if (!setup_frame(t, sig, a, &si, oldmask)) {
            /* no room for a frame: the process dies of SIGSEGV */
            t->fault_pc = t->pc;
            t->fault_word_ok = false;
            t->fault_addr = t->r[30];
            fatal_message(t, A_SIGSEGV);
            proc_exit(t->p, A_SIGSEGV);
            return;
        }
        t->lock = false;
        t->sigmask |= a->mask;
        if (!(a->flags & A_SA_NODEFER))
            t->sigmask |= SIGBIT(sig);
        t->sigmask &= ~KILLSTOP;
        if (a->flags & A_SA_RESETHAND)
            a->handler = SIG_DFL;
        return;       /* one frame at a time: the handler runs first */
    }
}

long sys_sigreturn_common(thread *t, uint64_t sc, bool rt)
{
    uint8_t buf[SC_SIZE];
    uint64_t mask;
    if (rt) {
        uint64_t uc = sc;
        if (mem_read(t->mm, uc + UC_SIGMASK, &mask, 8))
            goto bad;
        sc = uc + UC_MCONTEXT;
    } else if (mem_read(t->mm, sc + SC_MASK, &mask, 8)) {
        goto bad;
    }
    if (mem_read(t->mm, sc, buf, SC_SIZE))
        goto bad;
    t->sigmask = mask & ~KILLSTOP;
    memcpy(&t->pc, buf + SC_PC, 8);
    for (int i = 0; i < 31; i++)
        memcpy(&t->r[i], buf + SC_REGS + 8 * i, 8);
    for (int i = 0; i < 31; i++)
        memcpy(&t->f[i], buf + SC_FPREGS + 8 * i, 8);
    uint64_t fpcr;
    memcpy(&fpcr, buf + SC_FPCR, 8);
    fp_set_fpcr(t, fpcr);
    t->lock = false;
    return SYS_NORET;
bad:
    {
        ksiginfo si = { .signo = A_SIGSEGV, .code = A_SI_KERNEL };
        t->fault_pc = t->pc;
        t->fault_word_ok = false;
        t->fault_addr = sc;
        sig_force(t, &si);
    }
    return SYS_NORET;
}
