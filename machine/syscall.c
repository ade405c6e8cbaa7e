/*
 * machine/syscall.c: system call dispatch.
 *
 * callsys with the number in v0 and arguments in a0-a5; the result goes
 * back in v0 with a3 = 0, or the (positive, Alpha) errno in v0 with a3 = 1.
 * A call that has to wait parks its thread and is re-run from the scheduler
 * when the wait may be over, never by re-executing the instruction, so
 * instruction counts do not depend on how long a thread waited.
 */
#include <stdlib.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/exact.h"
#include "machine/sys.h"

#define NSYS 600

static long sys_rseq(thread *t, const uint64_t *a) { (void)t; (void)a; return -A_ENOSYS; }

/* Calls glibc tries and copes without: ENOSYS, and no complaint. */
#define QUIET sys_rseq

static const sysfn table[NSYS] = {
    [1] = sys_exit, [2] = sys_fork, [3] = sys_read, [4] = sys_write, [6] = sys_close,
    [9] = sys_link, [10] = sys_unlink, [12] = sys_chdir, [13] = sys_fchdir, [14] = sys_mknod,
    [15] = sys_chmod, [16] = sys_chown, [17] = sys_brk, [19] = sys_lseek, [20] = sys_getxpid,
    [23] = sys_setuid, [24] = sys_getxuid, [33] = sys_access, [36] = sys_sync, [37] = sys_kill,
    [39] = sys_setpgid, [41] = sys_dup, [42] = sys_pipe, [45] = sys_open, [47] = sys_getxgid,
    [48] = sys_osf_sigprocmask, [52] = sys_sigpending, [54] = sys_ioctl, [57] = sys_symlink,
    [58] = sys_readlink, [59] = sys_execve, [60] = sys_umask, [63] = sys_getpgrp,
    [64] = sys_getpagesize, [66] = sys_vfork, [67] = sys_stat, [68] = sys_lstat,
    [71] = sys_mmap, [73] = sys_munmap, [74] = sys_mprotect, [75] = sys_madvise,
    [79] = sys_getgroups, [80] = sys_setgroups, [82] = sys_setpgid, [90] = sys_dup2,
    [91] = sys_fstat, [92] = sys_fcntl, [94] = sys_poll, [95] = sys_fsync, [96] = sys_setpriority,
    [100] = sys_getpriority, [103] = sys_sigreturn, [111] = sys_sigsuspend,
    [116] = sys_osf_gettimeofday, [120] = sys_readv, [121] = sys_writev, [123] = sys_fchown,
    [124] = sys_fchmod, [126] = sys_setreuid, [127] = sys_setregid, [128] = sys_rename,
    [129] = sys_truncate, [130] = sys_ftruncate, [131] = sys_flock, [132] = sys_setgid,
    [136] = sys_mkdir, [137] = sys_rmdir, [144] = sys_getrlimit, [145] = sys_setrlimit,
    [147] = sys_setsid, [156] = sys_osf_sigaction, [208] = sys_lchown, [217] = sys_msync,
    [233] = sys_getpgid, [234] = sys_getsid, [235] = sys_sigaltstack,
    [256] = sys_osf_getsysinfo, [257] = sys_osf_setsysinfo, [261] = sys_fsync,
    [305] = sys_getdents, [312] = sys_clone, [314] = sys_mlock, [315] = sys_mlock,
    [316] = sys_mlock, [317] = sys_mlock, [318] = sys_sysinfo, [323] = sys_times,
    [324] = sys_personality, [328] = sys_statfs, [329] = sys_fstatfs,
    [330] = QUIET, [331] = sys_sched_getparam, [332] = sys_sched_setscheduler,
    [333] = sys_sched_getscheduler, [334] = sys_sched_yield,
    [335] = sys_sched_get_priority_max, [336] = sys_sched_get_priority_min,
    [339] = sys_uname, [340] = sys_nanosleep, [341] = sys_mremap, [343] = sys_setresuid,
    [344] = sys_getresuid, [348] = sys_prctl, [349] = sys_pread64, [350] = sys_pwrite64,
    [351] = sys_rt_sigreturn, [352] = sys_rt_sigaction, [353] = sys_rt_sigprocmask,
    [354] = sys_rt_sigpending, [355] = sys_rt_sigtimedwait, [356] = sys_rt_sigqueueinfo,
    [357] = sys_rt_sigsuspend, [358] = sys_select, [359] = sys_gettimeofday,
    [360] = sys_settimeofday, [361] = sys_getitimer, [362] = sys_setitimer,
    [363] = sys_utimes, [364] = sys_getrusage, [365] = sys_wait4, [367] = sys_getcwd,
    [368] = sys_capget, [370] = sys_sendfile, [371] = sys_setresgid, [372] = sys_getresgid,
    [375] = sys_mincore, [377] = sys_getdents64, [378] = sys_gettid, [381] = sys_tkill,
    [394] = sys_futex, [395] = sys_sched_setaffinity, [396] = sys_sched_getaffinity,
    [405] = sys_exit_group, [411] = sys_set_tid_address, [413] = QUIET /* fadvise64 */,
    [420] = sys_clock_gettime, [421] = sys_clock_getres, [422] = sys_clock_nanosleep,
    [424] = sys_tgkill, [425] = sys_stat64, [426] = sys_lstat64, [427] = sys_fstat64,
    [438] = sys_waitid, [447] = sys_fsync, [450] = sys_openat, [451] = sys_mkdirat,
    [452] = sys_mknodat, [453] = sys_fchownat, [454] = sys_futimesat, [455] = sys_fstatat64,
    [456] = sys_unlinkat, [457] = sys_renameat, [458] = sys_linkat, [459] = sys_symlinkat,
    [460] = sys_readlinkat, [461] = sys_fchmodat, [462] = sys_faccessat,
    [463] = sys_pselect6, [464] = sys_ppoll, [466] = sys_set_robust_list,
    [467] = sys_get_robust_list, [473] = sys_getcpu, [475] = sys_utimensat,
    [480] = sys_fallocate, [487] = sys_dup3, [488] = sys_pipe2, [490] = sys_preadv,
    [491] = sys_pwritev, [496] = sys_prlimit64, [510] = sys_renameat2, [511] = sys_getrandom,
    [512] = sys_memfd_create, [517] = QUIET /* membarrier */, [519] = sys_copy_file_range,
    [522] = sys_statx, [527] = QUIET /* rseq */, [528] = sys_statfs64, [529] = sys_fstatfs64,
    [530] = sys_getegid, [531] = sys_geteuid, [532] = sys_getppid, [546] = sys_close_range,
    [549] = sys_faccessat2,
};

long nosys(thread *t, unsigned nr)
{
    machine *m = t->m;
    if (nr < 1024 && !(m->nosys_seen[nr / 8] & (1u << (nr % 8)))) {
        m->nosys_seen[nr / 8] |= (uint8_t)(1u << (nr % 8));
        if (m->cfg.strict)
            machine_halt(m, 125, "pid %d: unsupported system call %s (%u); stopping (--strict)",
                         t->p->pid, syscall_name(nr), nr);
        else
            mlog(m, "pid %d: unsupported system call %s (%u) returns ENOSYS",
                 t->p->pid, syscall_name(nr), nr);
    } else if (m->cfg.strict) {
        m->halted = true;
    }
    return -A_ENOSYS;
}

void syscall_finish(thread *t, long r)
{
    if (r < 0 && r >= -4095) {
        t->r[0] = (uint64_t)-r;
        t->r[19] = 1;
    } else {
        t->r[0] = (uint64_t)r;
        t->r[19] = 0;
    }
}

static long dispatch(thread *t, uint64_t nr)
{
    if (nr < NSYS && table[nr])
        return table[nr](t, &t->r[16]);
    return nosys(t, (unsigned)nr);
}

int syscall_do(thread *t)
{
    machine *m = t->m;
    m->syscalls++;
    t->syscalls++;
    t->sysno = t->r[0];
    t->wkind = W_NONE;
    t->woken = false;
    t->wdeadline = -1;
    t->progress = 0;
    long r = dispatch(t, t->sysno);
    if (m->trace)
        mlog(m, "%d: %s(%#lx, %#lx, %#lx, %#lx) = %ld%s", t->tid, syscall_name((unsigned)t->sysno),
             (unsigned long)t->r[16], (unsigned long)t->r[17], (unsigned long)t->r[18],
             (unsigned long)t->r[19], r, r == SYS_BLOCK ? " (blocks)" : "");
    if (r == SYS_BLOCK) {
        if (t->state == T_RUNNABLE)
            t->state = T_BLOCKED;
        return SC_LEAVE;
    }
    if (r != SYS_NORET && t->state != T_DEAD)
        syscall_finish(t, r);
    if (t->state != T_RUNNABLE || m->halted || t->yield || sig_deliverable(t))
        return SC_LEAVE;
    return SC_CONT;
}

void syscall_retry(thread *t)
{
    long r = dispatch(t, t->sysno);
    if (r == SYS_BLOCK)
        return;
    t->woken = false;
    t->wdeadline = -1;
    t->progress = 0;
    free(t->wdata);
    t->wdata = NULL;
    if (r != SYS_NORET && t->state != T_DEAD)
        syscall_finish(t, r);
    if (t->state == T_BLOCKED)
        make_runnable(t->m, t);
}

bool syscall_restartable(uint64_t nr)
{
    switch (nr) {
    case 3: case 4: case 120: case 121: case 349: case 350:   /* read, write & co */
    case 365: case 438:                                       /* wait4, waitid */
    case 394:                                                 /* futex */
    case 131: case 92:                                        /* flock, fcntl */
        return true;
    default:
        return false;
    }
}

/* ---- helpers for the handlers ------------------------------------------ */

char *path_arg(thread *t, uint64_t va, long *err)
{
    int e = 0;
    if (!va) {
        *err = -A_EFAULT;
        return NULL;
    }
    char *s = mem_strdup(t->mm, va, 4096, &e);
    if (!s)
        *err = e;
    return s;
}

/* Park t until host descriptor f is ready for events. */
int wait_fd(thread *t, gfile *f, short events)
{
    t->wkind = W_FD;
    t->wfd = f->host;
    t->wevents = events;
    return SYS_BLOCK;
}

long block_until(thread *t, int64_t deadline_ns)
{
    t->wkind = W_SLEEP;
    t->wdeadline = deadline_ns;
    return SYS_BLOCK;
}
