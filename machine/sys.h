/*
 * machine/sys.h: the system call handlers, shared by syscall.c (the table)
 * and the sys_*.c files that implement them.
 *
 * A handler gets the calling thread and its six argument registers (a0-a5)
 * and returns a value >= 0, -errno (Alpha numbering), SYS_BLOCK after
 * arranging to wait (it is called again when the wait may be over), or
 * SYS_NORET when it has set the registers itself.
 */
#ifndef MACHINE_SYS_H
#define MACHINE_SYS_H

#include "machine/axp.h"
#include "machine/linux.h"

typedef long (*sysfn)(thread *t, const uint64_t *a);

#define SYS(name) long sys_##name(thread *t, const uint64_t *a)

/* helpers */
char *path_arg(thread *t, uint64_t va, long *err);      /* NULL: *err set */
int path_join_guest(thread *t, int dirfd, const char *p, char **out);
int wait_fd(thread *t, gfile *f, short events);          /* SYS_BLOCK */
long block_until(thread *t, int64_t deadline_ns);

/* sys_file.c, sys_fd.c, sys_ioctl.c, sys_stat.c, sys_name.c, sys_dir.c, sys_poll.c */
SYS(read); SYS(write); SYS(open); SYS(openat); SYS(close); SYS(lseek);
SYS(pread64); SYS(pwrite64); SYS(readv); SYS(writev); SYS(preadv); SYS(pwritev);
SYS(dup); SYS(dup2); SYS(dup3); SYS(pipe); SYS(pipe2); SYS(fcntl); SYS(ioctl);
SYS(flock); SYS(fsync); SYS(ftruncate); SYS(truncate); SYS(fallocate);
SYS(stat); SYS(lstat); SYS(fstat); SYS(stat64); SYS(lstat64); SYS(fstat64);
SYS(fstatat64); SYS(statx); SYS(statfs); SYS(fstatfs); SYS(statfs64); SYS(fstatfs64);
SYS(access); SYS(faccessat); SYS(faccessat2); SYS(getdents64); SYS(getdents);
SYS(mkdir); SYS(mkdirat); SYS(rmdir); SYS(unlink); SYS(unlinkat); SYS(rename);
SYS(renameat); SYS(renameat2); SYS(link); SYS(linkat); SYS(symlink); SYS(symlinkat);
SYS(readlink); SYS(readlinkat); SYS(chmod); SYS(fchmod); SYS(fchmodat);
SYS(chown); SYS(fchown); SYS(lchown); SYS(fchownat); SYS(utimes); SYS(utimensat);
SYS(futimesat); SYS(mknod); SYS(mknodat); SYS(chdir); SYS(fchdir); SYS(getcwd);
SYS(umask); SYS(poll); SYS(ppoll); SYS(select); SYS(pselect6); SYS(sendfile);
SYS(sync); SYS(memfd_create); SYS(copy_file_range); SYS(close_range);

/* sys_mem.c */
SYS(brk); SYS(mmap); SYS(munmap); SYS(mprotect); SYS(mremap); SYS(madvise);
SYS(msync); SYS(mincore); SYS(mlock); SYS(getpagesize);

/* sys_proc.c, sys_futex.c, sys_info.c */
SYS(exit); SYS(exit_group); SYS(fork); SYS(vfork); SYS(clone); SYS(execve);
SYS(wait4); SYS(waitid); SYS(getxpid); SYS(getppid); SYS(gettid); SYS(getxuid);
SYS(getxgid); SYS(geteuid); SYS(getegid); SYS(setuid); SYS(setgid);
SYS(getgroups); SYS(getresuid); SYS(getresgid); SYS(setpgid); SYS(getpgid);
SYS(getpgrp); SYS(setsid); SYS(getsid); SYS(set_tid_address); SYS(set_robust_list);
SYS(get_robust_list); SYS(kill); SYS(tkill); SYS(tgkill); SYS(prlimit64);
SYS(getrlimit); SYS(setrlimit); SYS(getrusage); SYS(times); SYS(getpriority);
SYS(setpriority); SYS(sched_yield); SYS(sched_getaffinity); SYS(sched_setaffinity);
SYS(sched_getparam); SYS(sched_getscheduler); SYS(sched_setscheduler);
SYS(sched_get_priority_max); SYS(sched_get_priority_min); SYS(prctl);
SYS(personality); SYS(futex); SYS(uname); SYS(sysinfo); SYS(getcpu);
SYS(osf_getsysinfo); SYS(osf_setsysinfo); SYS(getrandom); SYS(sethostname);
SYS(setreuid); SYS(setregid); SYS(setresuid); SYS(setresgid); SYS(setgroups);
SYS(capget);

/* sys_sig.c */
SYS(rt_sigaction); SYS(osf_sigaction); SYS(rt_sigprocmask); SYS(osf_sigprocmask);
SYS(sigreturn); SYS(rt_sigreturn); SYS(rt_sigsuspend); SYS(sigsuspend);
SYS(rt_sigpending); SYS(sigpending); SYS(rt_sigtimedwait); SYS(sigaltstack);
SYS(rt_sigqueueinfo); SYS(setitimer); SYS(getitimer);

/* sys_time.c */
SYS(clock_gettime); SYS(clock_getres); SYS(clock_nanosleep); SYS(nanosleep);
SYS(gettimeofday); SYS(osf_gettimeofday); SYS(settimeofday);

#endif
