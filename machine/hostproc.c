/*
 * machine/hostproc.c: guest processes that exec a host program.
 *
 * qemu-user hands an execve of a native program to the host kernel, so an
 * Alpha shell under qemu can run the host's sort or tr.  axp does the same:
 * when a guest execs a file that is not Alpha but the host can run (an ELF
 * for the host's machine, or a "#!" script), the program runs as a real host
 * child with the guest's descriptors, working directory and environment.
 * The guest process stays in the machine as a proxy whose thread waits (on
 * a pidfd, so the machine can poll it with the other descriptors) until the
 * host child exits; its wait status and signals sent to it are translated.
 * Host children run in real time, outside the machine's deterministic
 * schedule.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/exact.h"
#include "machine/linux.h"

/* Alpha signal numbers and the host's, by name. */
static const struct { int a, h; } sigmap[] = {
    {A_SIGHUP, SIGHUP}, {A_SIGINT, SIGINT}, {A_SIGQUIT, SIGQUIT}, {A_SIGILL, SIGILL},
    {A_SIGTRAP, SIGTRAP}, {A_SIGABRT, SIGABRT}, {A_SIGFPE, SIGFPE}, {A_SIGKILL, SIGKILL},
    {A_SIGBUS, SIGBUS}, {A_SIGSEGV, SIGSEGV}, {A_SIGSYS, SIGSYS}, {A_SIGPIPE, SIGPIPE},
    {A_SIGALRM, SIGALRM}, {A_SIGTERM, SIGTERM}, {A_SIGURG, SIGURG}, {A_SIGSTOP, SIGSTOP},
    {A_SIGTSTP, SIGTSTP}, {A_SIGCONT, SIGCONT}, {A_SIGCHLD, SIGCHLD}, {A_SIGTTIN, SIGTTIN},
    {A_SIGTTOU, SIGTTOU}, {A_SIGIO, SIGIO}, {A_SIGXCPU, SIGXCPU}, {A_SIGXFSZ, SIGXFSZ},
    {A_SIGVTALRM, SIGVTALRM}, {A_SIGPROF, SIGPROF}, {A_SIGWINCH, SIGWINCH},
    {A_SIGINFO, SIGPWR}, {A_SIGUSR1, SIGUSR1}, {A_SIGUSR2, SIGUSR2},
};

int sig_to_host(int a)
{
    for (size_t i = 0; i < sizeof sigmap / sizeof sigmap[0]; i++)
        if (sigmap[i].a == a)
            return sigmap[i].h;
    return a;
}

static int sig_from_host(int h)
{
    for (size_t i = 0; i < sizeof sigmap / sizeof sigmap[0]; i++)
        if (sigmap[i].h == h)
            return sigmap[i].a;
    return h;
}

static uint16_t host_machine(void)
{
    static uint16_t em;
    if (!em) {
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        Elf64_Ehdr eh;
        if (fd >= 0 && read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh)
            em = eh.e_machine;
        if (fd >= 0)
            close(fd);
    }
    return em;
}

bool hostproc_can_run(const char *hostpath)
{
    int fd = open(hostpath, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char b[64];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (access(hostpath, X_OK) != 0)
        return false;
    if (n >= 2 && b[0] == '#' && b[1] == '!')
        return true;
    if (n >= (ssize_t)sizeof(Elf64_Ehdr) && !memcmp(b, ELFMAG, SELFMAG)) {
        Elf64_Ehdr eh;
        memcpy(&eh, b, sizeof eh);
        return eh.e_machine == host_machine() && host_machine() != EM_ALPHA;
    }
    return false;
}

/* In the child: the guest's descriptors at their guest numbers.  Our
 * own pipes are non-blocking on the host side; the child gets a fresh,
 * blocking open of the same pipe instead. */
static void child_fds(proc *p)
{
    fdtable *ft = p->fd;
    int n = ft->n;
    int *tmp = calloc((size_t)(n ? n : 1), sizeof *tmp);
    for (int i = 0; i < n; i++) {
        tmp[i] = -1;
        gfile *f = ft->e[i].f;
        if (!f || ft->e[i].cloexec)
            continue;
        int src = f->host;
        if (f->hostnb) {
            char path[64];
            snprintf(path, sizeof path, "/proc/self/fd/%d", f->host);
            int acc = (f->flags & A_O_ACCMODE) == 1 ? O_WRONLY : (f->flags & A_O_ACCMODE) == 2 ? O_RDWR : O_RDONLY;
            int r = open(path, acc);
            if (r >= 0)
                src = r;
        }
        tmp[i] = fcntl(src, F_DUPFD, 4096);
    }
    for (int i = 0; i < n; i++)
        if (tmp[i] >= 0) {
            dup2(tmp[i], i);
            close(tmp[i]);
        } else if (i < 3) {
            close(i);
        }
    free(tmp);
}

long hostproc_exec(thread *t, const char *hostpath, char *const argv[], char *const envp[])
{
    machine *m = t->m;
    proc *p = t->p;
    if (m->tt)                  /* the model's thread idle: nothing of it half done in the child */
        tthread_drain(m->tt);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -xerrno(errno);
    if (pid == 0) {
        child_fds(p);
        if (p->cwd >= 0 && fchdir(p->cwd) != 0)
            _exit(126);
        umask((mode_t)p->umask);
        for (int s = 1; s < 32; s++) {
            int h = sig_to_host(s);
            if (h > 0 && h < 65 && h != SIGKILL && h != SIGSTOP)
                signal(h, p->sh->a[s].handler == 1 ? SIG_IGN : SIG_DFL);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(hostpath, argv, envp);
        _exit(127);
    }
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0)
        fcntl(pfd, F_SETFD, FD_CLOEXEC);
    /* the host child owns the descriptors now; holding them here would
     * keep pipes from reaching end-of-file */
    proc_kill_others(t);
    fdt_put(p->fd);
    p->fd = fdt_new();
    p->hostpid = pid;
    free(p->exe);
    p->exe = strdup(hostpath);
    if (p->vfork_parent) {
        p->vfork_parent->woken = true;
        p->vfork_parent = NULL;
        t->m->wake_gen++;
    }
    if (m->x)
        exact_break(t);
    pstat_update(m, p);
    t->wkind = W_HOST;
    t->wfd = pfd;
    t->wevents = POLLIN;
    return SYS_BLOCK;
}

/* The scheduler's check on a proxy: has the host child exited? */
void hostproc_check(thread *t)
{
    proc *p = t->p;
    int st;
    pid_t r = waitpid(p->hostpid, &st, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return;
    if (t->wfd >= 0)
        close(t->wfd);
    t->wfd = -1;
    int ws;
    if (r < 0)
        ws = 127 << 8;
    else if (WIFEXITED(st))
        ws = WEXITSTATUS(st) << 8;
    else
        ws = sig_from_host(WTERMSIG(st)) | (WCOREDUMP(st) ? 0x80 : 0);
    p->hostpid = 0;
    proc_exit(p, ws);
}

void hostproc_signal(proc *p, int sig)
{
    if (p->hostpid > 0 && sig > 0)
        kill(p->hostpid, sig_to_host(sig));
}
