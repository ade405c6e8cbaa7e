/* signals: sigaction handlers and signal masks.
 *
 *   SIGALRM  a one-shot 20 ms ITIMER_REAL timer (setitimer); main waits in
 *            sigsuspend with SIGALRM blocked otherwise.
 *   SIGSEGV  a deliberate store through a NULL pointer; the SA_SIGINFO
 *            handler checks si_addr and leaves with siglongjmp.
 *   SIGFPE   an integer division by zero.  Alpha has no divide instruction:
 *            gcc calls the libc routine __divq, which on a zero divisor
 *            executes `call_pal gentrap` with GEN_INTDIV, and the kernel
 *            turns that into SIGFPE with si_code FPE_INTDIV (on x86-64 the
 *            idiv instruction traps instead; same signal, same code).  Then
 *            raise(SIGFPE), which arrives with si_code SI_TKILL.
 *   SIGCHLD  a forked child exits with status 5; the handler sees its pid
 *            and status (CLD_EXITED), then main reaps it with waitpid.
 *   SIGUSR1  kill(getpid(), SIGUSR1) delivered at once; then blocked with
 *            sigprocmask, sent, seen pending by sigpending, not delivered
 *            until the mask is lifted.
 *   SIGUSR2  ignored with SIG_IGN: sending it does nothing.
 * Exit status 0 when every check passes, 1 otherwise.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void expect(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok)
        failures++;
}

static void on(int sig, void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0) {
        perror("sigaction");
        exit(1);
    }
}

/* ---- SIGALRM ------------------------------------------------------------ */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
    (void)si; (void)uc;
    if (sig == SIGALRM)
        alarms++;
}

static void test_alarm(void)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    on(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 0 }, { 0, 20000 } };   /* 20 ms, once */
    expect(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer 20 ms");
    sigset_t wait_mask = old;
    sigdelset(&wait_mask, SIGALRM);
    while (alarms == 0)
        sigsuspend(&wait_mask);
    sigprocmask(SIG_SETMASK, &old, NULL);
    expect(alarms == 1, "one SIGALRM delivered");
}

/* ---- SIGSEGV and SIGFPE ---------------------------------------------------- */

static sigjmp_buf trap_env;
static volatile int trap_sig, trap_code;
static void *volatile trap_addr;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    trap_sig = sig;
    trap_code = si->si_code;
    trap_addr = si->si_addr;
    siglongjmp(trap_env, 1);
}

static int *volatile null_pointer;
static volatile long divisor;

static void test_segv(void)
{
    on(SIGSEGV, on_trap);
    trap_sig = 0;
    if (sigsetjmp(trap_env, 1) == 0) {
        *null_pointer = 42;
        expect(0, "store through NULL trapped");
    }
    expect(trap_sig == SIGSEGV, "SIGSEGV caught after a store through NULL");
    expect(trap_addr == NULL, "si_addr is the NULL address");
    expect(trap_code == SEGV_MAPERR, "si_code is SEGV_MAPERR");
    signal(SIGSEGV, SIG_DFL);
}

static void test_fpe(void)
{
    on(SIGFPE, on_trap);
    volatile long q = 0;
    trap_sig = 0;
    if (sigsetjmp(trap_env, 1) == 0) {
        q = 1000 / divisor;
        expect(0, "division by zero trapped");
    }
    expect(trap_sig == SIGFPE, "SIGFPE caught after an integer division by zero");
    expect(trap_code == FPE_INTDIV, "si_code is FPE_INTDIV");
    expect(q == 0, "the quotient was never stored");

    trap_sig = 0;
    if (sigsetjmp(trap_env, 1) == 0) {
        raise(SIGFPE);
        expect(0, "raise(SIGFPE) delivered");
    }
    expect(trap_sig == SIGFPE, "SIGFPE caught after raise(SIGFPE)");
    expect(trap_code == SI_TKILL, "si_code is SI_TKILL");
    signal(SIGFPE, SIG_DFL);
}

/* ---- SIGCHLD ---------------------------------------------------------------- */

static volatile sig_atomic_t chld_seen, chld_code, chld_status;
static volatile pid_t chld_pid;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    chld_seen++;
    chld_pid = si->si_pid;
    chld_code = si->si_code;
    chld_status = si->si_status;
}

static void test_chld(void)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old);
    on(SIGCHLD, on_chld);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(5);
    sigset_t wait_mask = old;
    sigdelset(&wait_mask, SIGCHLD);
    while (chld_seen == 0)
        sigsuspend(&wait_mask);
    sigprocmask(SIG_SETMASK, &old, NULL);
    expect(chld_seen == 1, "one SIGCHLD delivered");
    expect(chld_pid == pid, "si_pid is the child");
    expect(chld_code == CLD_EXITED, "si_code is CLD_EXITED");
    expect(chld_status == 5, "si_status is the exit status 5");
    int st;
    expect(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5,
           "waitpid reaps the child with status 5");
    signal(SIGCHLD, SIG_DFL);
}

/* ---- SIGUSR1, SIGUSR2 and the signal mask ---------------------------------- */

static volatile sig_atomic_t usr1;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    if (si->si_code == SI_USER && si->si_pid == getpid())
        usr1++;
}

static void test_mask(void)
{
    on(SIGUSR1, on_usr1);
    kill(getpid(), SIGUSR1);
    expect(usr1 == 1, "SIGUSR1 from kill(getpid()) delivered before kill returned");

    sigset_t block, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, NULL);
    kill(getpid(), SIGUSR1);
    kill(getpid(), SIGUSR1);           /* standard signals do not queue */
    expect(usr1 == 1, "blocked SIGUSR1 not delivered");
    sigpending(&pending);
    expect(sigismember(&pending, SIGUSR1) == 1, "SIGUSR1 pending");
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    expect(usr1 == 2, "SIGUSR1 delivered once when unblocked");
    sigpending(&pending);
    expect(sigismember(&pending, SIGUSR1) == 0, "nothing pending after delivery");

    signal(SIGUSR2, SIG_IGN);
    kill(getpid(), SIGUSR2);
    expect(1, "ignored SIGUSR2 did nothing");
}

int main(void)
{
    test_alarm();
    test_segv();
    test_fpe();
    test_chld();
    test_mask();
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
