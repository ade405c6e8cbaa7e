/*
 * machine/machine.c: creating a machine and its first process, and what
 * axp reports afterwards (--stats).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "machine/axp.h"
#include "machine/linux.h"
#include "machine/unwind.h"

#define DEFAULT_QUANTUM 20000
#define DEFAULT_MHZ 500

static void count_retired(void *ctx, const axp_retire *r)
{
    (void)r;
    ((machine *)ctx)->hook_retired++;
}

axp_machine *axp_new(const axp_config *cfg, char *err, size_t errsz)
{
    if (cfg->ncpus < 1 || cfg->ncpus > 64) {
        snprintf(err, errsz, "--cpus must be between 1 and 64 (got %d)", cfg->ncpus);
        return NULL;
    }
    const char *root = cfg->root ? cfg->root : AXP_DEFAULT_ROOT;
    char *rroot = NULL;
    if (root[0]) {
        rroot = realpath(root, NULL);
        if (!rroot) {
            snprintf(err, errsz, "--root %s: %s", root, strerror(errno));
            return NULL;
        }
    }
    int workfd = -1, rootfd = -1;
    char *work = NULL;
    if (cfg->sandbox) {
        /* the two trees a sandboxed guest sees, held open: the kernel
         * confines every lookup to one of them */
        work = getcwd(NULL, 0);
        if (!rroot || !work) {
            snprintf(err, errsz, "--sandbox: %s", rroot ? strerror(errno) : "needs a --root directory");
            free(rroot);
            free(work);
            return NULL;
        }
        workfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        rootfd = open(rroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
        int probe = (int)syscall(SYS_openat2, rootfd, ".", &how, sizeof how);
        if (workfd < 0 || rootfd < 0 || probe < 0) {
            snprintf(err, errsz, "--sandbox: %s", probe < 0 && workfd >= 0 && rootfd >= 0
                     ? "this host's kernel has no openat2 (Linux 5.6 or later needed)" : strerror(errno));
            free(rroot);
            free(work);
            if (workfd >= 0) close(workfd);
            if (rootfd >= 0) close(rootfd);
            return NULL;
        }
        close(probe);
    }
    exec_init();
    machine *m = calloc(1, sizeof *m);
    m->work = work;
    m->mem_limit = cfg->mem_limit ? cfg->mem_limit : AXP_DEFAULT_MEM_LIMIT;
    m->max_threads = cfg->max_threads ? cfg->max_threads : AXP_DEFAULT_MAX_THREADS;
    m->workfd = workfd;
    m->rootfd = rootfd;
    m->cfg = *cfg;
    m->log = cfg->log ? cfg->log : stderr;
    m->root = rroot;
    m->ncpu = cfg->ncpus;
    m->cpus = calloc((size_t)m->ncpu, sizeof *m->cpus);
    for (int i = 0; i < m->ncpu; i++)
        m->cpus[i].id = i;
    m->quantum = cfg->quantum ? cfg->quantum : DEFAULT_QUANTUM;
    m->mhz = cfg->mhz ? cfg->mhz : DEFAULT_MHZ;
    if (cfg->exact)
        m->x = exact_new();
    /* AXP_TIMED=1: run the timed executor with a counting hook, so the
     * path the timing model will use can be tested on whole programs */
    const char *tm = getenv("AXP_TIMED");
    if (tm && *tm && strcmp(tm, "0"))
        axp_set_retire_hook(m, count_retired, m);
    const char *tr = getenv("AXP_TRACE");
    m->trace = tr ? atoi(tr) : 0;
    m->slow_blocks = m->x || m->trace > 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    m->rt0_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    /* AXP_EPOCH=SECONDS: the guest's wall clock starts there instead of at
     * the host's time, so programs that read the date (speedtest1 does)
     * run identically every time: same instructions, same cycles. */
    const char *ep = getenv("AXP_EPOCH");
    if (ep && *ep)
        m->rt0_ns = strtoll(ep, NULL, 10) * 1000000000;
    /* guest descriptors are host descriptors: allow as many as we may */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        m->host_nofile = rl.rlim_cur;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    return m;
}

void axp_fatal(const char *msg)
{
    static const char pre[] = "axp: internal error (not the guest's): ";
    (void)!write(2, pre, sizeof pre - 1);
    (void)!write(2, msg, strlen(msg));
    (void)!write(2, "\n", 1);
    _exit(AXP_EXIT_INTERNAL);
}

static void internal_fault(int sig)
{
    axp_fatal(sig == SIGSEGV ? "SIGSEGV in axp" : sig == SIGBUS ? "SIGBUS in axp"
              : sig == SIGILL ? "SIGILL in axp" : sig == SIGFPE ? "SIGFPE in axp" : "axp aborted");
}

void axp_catch_internal_faults(void)
{
    /* on a stack of their own: a fault may be a stack overflow */
    static char stack[1 << 16];
    stack_t ss = { .ss_sp = stack, .ss_size = sizeof stack };
    sigaltstack(&ss, NULL);
    struct sigaction sa = { .sa_handler = internal_fault, .sa_flags = SA_ONSTACK | SA_RESETHAND };
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

void axp_set_retire_hook(axp_machine *m, axp_retire_hook fn, void *ctx)
{
    m->hook = fn;
    m->hook_ctx = ctx;
}

void axp_want_costs(axp_machine *m)
{
    m->want_costs = true;
}

void axp_get_image_hook(const axp_machine *m, axp_image_hook *fn, void **ctx)
{
    *fn = m->ihook;
    *ctx = m->ihook_ctx;
}

void axp_set_image_hook(axp_machine *m, axp_image_hook fn, void *ctx)
{
    m->ihook = fn;
    m->ihook_ctx = ctx;
}

void mach_image_notice(machine *m, proc *p, int img, uint64_t base, uint64_t size, uint64_t off, int64_t link)
{
    if (!m->ihook || img < 0)
        return;
    axp_image_event e = { .kind = AXP_IMAGE_LOAD, .pid = p->pid, .base = base, .size = size,
                          .offset = off, .link = link, .path = m->img[img].gpath,
                          .host_path = m->img[img].path, .build_id = m->img[img].build_id };
    if (m->tt)                  /* after the samples before it, and not beside them */
        tthread_drain(m->tt);
    m->ihook(m->ihook_ctx, &e);
}

/* A new process inherits its parent's mappings: announce them. */
void mach_image_notice_all(machine *m, proc *p)
{
    if (!m->ihook || !p->mm)
        return;
    for (size_t i = 0; i < p->mm->nv; i++) {
        const vma *v = &p->mm->v[i];
        if ((v->prot & GP_X) && v->img >= 0)
            mach_image_notice(m, p, v->img, v->start, v->end - v->start, v->off, v->link);
    }
}

/* A process made by thread t: after its mappings, before its first
 * instruction, so a tracker can give it a copy of t's frames. */
void mach_fork_notice(machine *m, thread *t, proc *c, int ctid, bool shared_vm, bool own_stack)
{
    if (!m->ihook)
        return;
    axp_image_event e = { .kind = AXP_PROCESS_FORK, .pid = c->pid, .tid = ctid, .parent_pid = t->p->pid,
                          .parent_tid = t->tid, .shared_vm = shared_vm, .own_stack = own_stack };
    if (m->tt)
        tthread_drain(m->tt);
    m->ihook(m->ihook_ctx, &e);
}

void axp_free(axp_machine *m)
{
    if (!m)
        return;
    timing_free(m);
    values_free(m);
    unwind_free(m);
    for (thread *t = m->threads, *nx; t; t = nx) {
        nx = t->all_next;
        free(t->wdata);
        free(t->vres);
        free(t);
    }
    for (proc *p = m->procs, *nx; p; p = nx) {
        nx = p->all_next;
        if (p->fd)
            fdt_put(p->fd);
        if (p->mm)
            mm_put(m, p->mm);
        if (p->sh && --p->sh->refs == 0)
            free(p->sh);
        if (p->cwd >= 0)
            close(p->cwd);
        free(p->exe);
        free(p->cwd_path);
        free(p);
    }
    for (int i = 0; i < m->nps; i++)
        free(m->ps[i].exe);
    free(m->ps);
    for (int i = 0; i < m->nimg; i++) {
        free(m->img[i].path);
        free(m->img[i].gpath);
    }
    free(m->img);
    exact_free(m->x);
    free(m->cpus);
    free(m->root);
    free(m->work);
    if (m->workfd >= 0)
        close(m->workfd);
    if (m->rootfd >= 0)
        close(m->rootfd);
    free(m);
}

static gfile *inherit(int hostfd, const char *name)
{
    int fd = fcntl(hostfd, F_DUPFD_CLOEXEC, 10);
    if (fd < 0)
        return NULL;
    int fl = fcntl(hostfd, F_GETFL);
    int gfl = 0;
    if ((fl & O_ACCMODE) == O_WRONLY) gfl = 1;
    else if ((fl & O_ACCMODE) == O_RDWR) gfl = 2;
    if (fl & O_APPEND) gfl |= A_O_APPEND;
    if (fl & O_NONBLOCK) gfl |= A_O_NONBLOCK;
    return gfile_new(fd, gfl, name);
}

int axp_spawn(axp_machine *m, const char *path, char *const argv[],
              char *const envp[], char *err, size_t errsz)
{
    if (m->init) {
        snprintf(err, errsz, "the machine already has a first process");
        return -1;
    }
    proc *p = proc_new(m);
    p->mm = mm_new();
    p->fd = fdt_new();
    p->sh = calloc(1, sizeof *p->sh);
    p->sh->refs = 1;
    /* the host's own limit on descriptors, as a process would inherit it */
    if (m->host_nofile > 0 && m->host_nofile <= 1048576) {
        p->rl[A_RLIMIT_NOFILE].cur = m->host_nofile;
        if (p->rl[A_RLIMIT_NOFILE].max < m->host_nofile)
            p->rl[A_RLIMIT_NOFILE].max = m->host_nofile;
    }
    p->cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    /* each guest process has its own umask, applied by the calls that
     * create files; the host's is the first process's and then stays 0 */
    p->umask = umask(0);
    char *cwd = getcwd(NULL, 0);
    p->cwd_path = cwd ? cwd : strdup("/");
    static const char *const stdnames[] = { "<stdin>", "<stdout>", "<stderr>" };
    for (int i = 0; i < 3; i++) {
        gfile *f = inherit(i, stdnames[i]);
        if (f)
            fd_install_at(p, f, i, false);
    }
    thread *t = thread_new(m, p);
    m->init = p;
    char *abs = NULL;
    if (path[0] == '/')
        abs = strdup(path);
    else
        abs = path_join_norm(p->cwd_path, path);
    int r = load_program(t, path, abs, argv, envp, err, errsz);
    free(abs);
    if (r) {
        p->group_exit = true;
        p->wstatus = 127 << 8;
        thread_exit(t, 127);
        m->init = NULL;
        return -1;
    }
    pstat_update(m, p);
    make_runnable(m, t);
    return 0;
}

uint64_t axp_instructions(const axp_machine *m) { return m->icount; }
double axp_host_seconds(const axp_machine *m) { return m->host_t1 - m->host_t0; }


int axp_write_stats(axp_machine *m, FILE *f)
{
    for (proc *p = m->procs; p; p = p->all_next)
        if (p->state == P_LIVE)
            pstat_update(m, p);
    double secs = axp_host_seconds(m);
    fprintf(f, "{\n  \"instructions\": %" PRIu64 ",\n", m->icount);
    fprintf(f, "  \"host_seconds\": %.6f,\n", secs);
    fprintf(f, "  \"instructions_per_second\": %.0f,\n", secs > 0 ? (double)m->icount / secs : 0.0);
    fprintf(f, "  \"cpus\": %d,\n  \"quantum\": %" PRIu64 ",\n  \"mhz\": %" PRIu64 ",\n",
            m->ncpu, m->quantum, m->mhz);
    fprintf(f, "  \"guest_seconds\": %.6f,\n", (double)m->base_cycles / ((double)m->mhz * 1e6));
    fprintf(f, "  \"syscalls\": %" PRIu64 ",\n  \"signals\": %" PRIu64 ",\n", m->syscalls, m->signals);
    fprintf(f, "  \"unaligned_fixups\": %" PRIu64 ",\n  \"blocks_translated\": %" PRIu64 ",\n",
            m->unaligned, m->blocks_made);
    if (m->hook && !m->tm)
        fprintf(f, "  \"timed_executor\": true,\n  \"hook_retired\": %" PRIu64 ",\n", m->hook_retired);
    timing_write_stats(m, f);
    unwind_write_stats(m, f);
    if (m->stats_extra)
        m->stats_extra(m->stats_extra_ctx, f);
    fprintf(f, "  \"per_cpu\": [");
    for (int i = 0; i < m->ncpu; i++)
        fprintf(f, "%s{\"cpu\": %d, \"instructions\": %" PRIu64 ", \"idle_cycles\": %" PRIu64 "}",
                i ? ", " : "", i, m->cpus[i].insns, m->cpus[i].idle);
    fprintf(f, "],\n  \"processes\": [\n");
    for (int i = 0; i < m->nps; i++) {
        pstat *s = &m->ps[i];
        fprintf(f, "    {\"pid\": %d, \"ppid\": %d, \"exe\": ", s->pid, s->ppid);
        json_string(f, s->exe);
        fprintf(f, ", \"instructions\": %" PRIu64 ", \"threads\": %d", s->icount, s->threads);
        if (s->done)
            fprintf(f, ", \"wait_status\": %d", s->wstatus);
        fprintf(f, "}%s\n", i + 1 < m->nps ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return ferror(f) ? -1 : 0;
}

int axp_write_exact(axp_machine *m, FILE *f)
{
    return exact_write(m, f);
}
