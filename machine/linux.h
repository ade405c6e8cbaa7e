/*
 * machine/linux.h: the Linux/Alpha user ABI as the guest sees it.
 *
 * Every number here is Alpha's (the headers in arch/alpha/include/uapi/asm), which is
 * why each carries an A_ prefix: the host's <errno.h>, <fcntl.h> and
 * <signal.h> use different values for many of the same names.
 */
#ifndef MACHINE_LINUX_H
#define MACHINE_LINUX_H

#include <stdint.h>

/* errno */
enum {
    A_EPERM = 1, A_ENOENT = 2, A_ESRCH = 3, A_EINTR = 4, A_EIO = 5, A_ENXIO = 6,
    A_E2BIG = 7, A_ENOEXEC = 8, A_EBADF = 9, A_ECHILD = 10, A_EDEADLK = 11,
    A_ENOMEM = 12, A_EACCES = 13, A_EFAULT = 14, A_ENOTBLK = 15, A_EBUSY = 16,
    A_EEXIST = 17, A_EXDEV = 18, A_ENODEV = 19, A_ENOTDIR = 20, A_EISDIR = 21,
    A_EINVAL = 22, A_ENFILE = 23, A_EMFILE = 24, A_ENOTTY = 25, A_ETXTBSY = 26,
    A_EFBIG = 27, A_ENOSPC = 28, A_ESPIPE = 29, A_EROFS = 30, A_EMLINK = 31,
    A_EPIPE = 32, A_EDOM = 33, A_ERANGE = 34, A_EAGAIN = 35, A_EINPROGRESS = 36,
    A_EALREADY = 37, A_ENOTSOCK = 38, A_EOPNOTSUPP = 45, A_EAFNOSUPPORT = 47,
    A_ELOOP = 62, A_ENAMETOOLONG = 63, A_ENOTEMPTY = 66, A_ENOLCK = 77,
    A_ENOSYS = 78, A_ETIMEDOUT = 60, A_EOVERFLOW = 112, A_EILSEQ = 116,
    A_ERESTART = 127, A_ECANCELED = 131
};

/* signals */
enum {
    A_SIGHUP = 1, A_SIGINT = 2, A_SIGQUIT = 3, A_SIGILL = 4, A_SIGTRAP = 5,
    A_SIGABRT = 6, A_SIGEMT = 7, A_SIGFPE = 8, A_SIGKILL = 9, A_SIGBUS = 10,
    A_SIGSEGV = 11, A_SIGSYS = 12, A_SIGPIPE = 13, A_SIGALRM = 14,
    A_SIGTERM = 15, A_SIGURG = 16, A_SIGSTOP = 17, A_SIGTSTP = 18,
    A_SIGCONT = 19, A_SIGCHLD = 20, A_SIGTTIN = 21, A_SIGTTOU = 22,
    A_SIGIO = 23, A_SIGXCPU = 24, A_SIGXFSZ = 25, A_SIGVTALRM = 26,
    A_SIGPROF = 27, A_SIGWINCH = 28, A_SIGINFO = 29, A_SIGUSR1 = 30,
    A_SIGUSR2 = 31
};
enum {
    A_SA_ONSTACK = 1, A_SA_RESTART = 2, A_SA_NOCLDSTOP = 4, A_SA_NODEFER = 8,
    A_SA_RESETHAND = 0x10, A_SA_NOCLDWAIT = 0x20, A_SA_SIGINFO = 0x40
};
enum { A_SIG_BLOCK = 1, A_SIG_UNBLOCK = 2, A_SIG_SETMASK = 3 };
enum { A_SS_ONSTACK = 1, A_SS_DISABLE = 2 };
/* si_code values */
enum {
    A_SI_USER = 0, A_SI_KERNEL = 0x80, A_SI_TKILL = -6,
    A_SEGV_MAPERR = 1, A_SEGV_ACCERR = 2, A_BUS_ADRALN = 1,
    A_ILL_ILLOPC = 1, A_ILL_PRVOPC = 5, A_TRAP_BRKPT = 1,
    A_FPE_INTDIV = 1, A_FPE_INTOVF = 2, A_FPE_FLTDIV = 3, A_FPE_FLTOVF = 4,
    A_FPE_FLTUND = 5, A_FPE_FLTRES = 6, A_FPE_FLTINV = 7, A_FPE_FLTSUB = 8,
    A_FPE_FLTUNK = 14,
    A_CLD_EXITED = 1, A_CLD_KILLED = 2, A_CLD_DUMPED = 3
};
/* Frame layout (arch/alpha/kernel/signal.c): siginfo (128 bytes), then
 * the ucontext, whose mcontext starts at 176 bytes into the frame. */
enum {
    SC_ONSTACK = 0, SC_MASK = 8, SC_PC = 16, SC_PS = 24, SC_REGS = 32,
    SC_OWNEDFP = 288, SC_FPREGS = 296, SC_FPCR = 552, SC_FP_CONTROL = 560,
    SC_TRAPARG_A0 = 600, SC_SIZE = 648,
    UC_FLAGS = 0, UC_LINK = 8, UC_OSF_SIGMASK = 16, UC_STACK = 24,
    UC_MCONTEXT = 48, UC_SIGMASK = UC_MCONTEXT + SC_SIZE, UC_SIZE = UC_SIGMASK + 8,
    RTF_INFO = 0, RTF_UC = 128, RTF_RETCODE = RTF_UC + UC_SIZE,
    RTF_SIZE = RTF_RETCODE + 12,
    SF_SC = 0, SF_RETCODE = SC_SIZE, SF_SIZE = SC_SIZE + 12
};

/* UAC (unaligned access control) */
enum { A_UAC_NOPRINT = 1, A_UAC_NOFIX = 2, A_UAC_SIGBUS = 4 };

/* osf_{get,set}sysinfo */
enum {
    A_GSI_UACPROC = 8, A_GSI_IEEE_FP_CONTROL = 45, A_GSI_IEEE_STATE_AT_SIGNAL = 46,
    A_GSI_PROC_TYPE = 60, A_GSI_GET_HWRPB = 101,
    A_SSI_NVPAIRS = 1, A_SSI_IEEE_FP_CONTROL = 14, A_SSI_IEEE_STATE_AT_SIGNAL = 15,
    A_SSI_IEEE_IGNORE_STATE_AT_SIGNAL = 16, A_SSI_IEEE_RAISE_EXCEPTION = 1001,
    A_SSIN_UACPROC = 6
};

/* FPCR and the kernel's software completion control word (asm/fpu.h) */
#define FPCR_DNOD  (1ULL << 47)
#define FPCR_DNZ   (1ULL << 48)
#define FPCR_INVD  (1ULL << 49)
#define FPCR_DZED  (1ULL << 50)
#define FPCR_OVFD  (1ULL << 51)
#define FPCR_INV   (1ULL << 52)
#define FPCR_DZE   (1ULL << 53)
#define FPCR_OVF   (1ULL << 54)
#define FPCR_UNF   (1ULL << 55)
#define FPCR_INE   (1ULL << 56)
#define FPCR_IOV   (1ULL << 57)
#define FPCR_DYN_SHIFT 58
#define FPCR_DYN_MASK (3ULL << 58)
#define FPCR_UNDZ  (1ULL << 60)
#define FPCR_UNFD  (1ULL << 61)
#define FPCR_INED  (1ULL << 62)
#define FPCR_SUM   (1ULL << 63)
#define FPCR_STATUS (FPCR_INV | FPCR_DZE | FPCR_OVF | FPCR_UNF | FPCR_INE | FPCR_IOV)
#define FPCR_MASK  0xffff800000000000ULL
/* What Linux starts a program with: round to nearest, every trap disabled
 * (the software control word of 0 as an FPCR). */
#define FPCR_INITIAL (FPCR_DNOD | FPCR_INVD | FPCR_DZED | FPCR_OVFD | FPCR_UNFD | FPCR_INED | (2ULL << FPCR_DYN_SHIFT))

#define SWCR_TRAP_INV (1ULL << 1)
#define SWCR_TRAP_DZE (1ULL << 2)
#define SWCR_TRAP_OVF (1ULL << 3)
#define SWCR_TRAP_UNF (1ULL << 4)
#define SWCR_TRAP_INE (1ULL << 5)
#define SWCR_TRAP_DNO (1ULL << 6)
#define SWCR_TRAP_MASK (0x7eULL)
#define SWCR_MAP_DMZ  (1ULL << 12)
#define SWCR_MAP_UMZ  (1ULL << 13)
#define SWCR_MAP_MASK (SWCR_MAP_DMZ | SWCR_MAP_UMZ)
#define SWCR_STATUS_INV (1ULL << 17)
#define SWCR_STATUS_MASK (0x3fULL << 17)
#define SWCR_MASK (SWCR_TRAP_MASK | SWCR_STATUS_MASK | SWCR_MAP_MASK)

/* open flags and friends */
enum {
    A_O_ACCMODE = 3, A_O_NONBLOCK = 04, A_O_APPEND = 010, A_O_CREAT = 01000,
    A_O_TRUNC = 02000, A_O_EXCL = 04000, A_O_NOCTTY = 010000, A_O_DSYNC = 040000,
    A_O_DIRECTORY = 0100000, A_O_NOFOLLOW = 0200000, A_O_LARGEFILE = 0400000,
    A_O_DIRECT = 02000000, A_O_NOATIME = 04000000, A_O_CLOEXEC = 010000000,
    A_O_SYNC = 020000000 | 040000, A_O_PATH = 040000000, A_O_TMPFILE = 0100000000
};
enum {
    A_F_DUPFD = 0, A_F_GETFD = 1, A_F_SETFD = 2, A_F_GETFL = 3, A_F_SETFL = 4,
    A_F_SETOWN = 5, A_F_GETOWN = 6, A_F_GETLK = 7, A_F_SETLK = 8, A_F_SETLKW = 9,
    A_F_DUPFD_CLOEXEC = 1030, A_F_SETPIPE_SZ = 1031, A_F_GETPIPE_SZ = 1032,
    A_F_OFD_GETLK = 36, A_F_OFD_SETLK = 37, A_F_OFD_SETLKW = 38,
    A_F_RDLCK = 1, A_F_WRLCK = 2, A_F_UNLCK = 8
};
#define A_AT_FDCWD (-100)
enum {
    A_AT_SYMLINK_NOFOLLOW = 0x100, A_AT_REMOVEDIR = 0x200, A_AT_EACCESS = 0x200,
    A_AT_SYMLINK_FOLLOW = 0x400, A_AT_NO_AUTOMOUNT = 0x800, A_AT_EMPTY_PATH = 0x1000
};

/* mmap */
enum {
    A_MAP_SHARED = 1, A_MAP_PRIVATE = 2, A_MAP_TYPE = 0xf, A_MAP_ANONYMOUS = 0x10,
    A_MAP_FIXED = 0x100, A_MAP_GROWSDOWN = 0x1000, A_MAP_NORESERVE = 0x10000,
    A_MAP_STACK = 0x80000, A_MAP_FIXED_NOREPLACE = 0x200000,
    A_MREMAP_MAYMOVE = 1, A_MREMAP_FIXED = 2,
    A_MADV_DONTNEED = 6
};

/* clone (generic values; Alpha takes flags, usp, ptid, ctid, tls) */
enum {
    A_CSIGNAL = 0xff, A_CLONE_VM = 0x100, A_CLONE_FS = 0x200, A_CLONE_FILES = 0x400,
    A_CLONE_SIGHAND = 0x800, A_CLONE_VFORK = 0x4000, A_CLONE_PARENT = 0x8000,
    A_CLONE_THREAD = 0x10000, A_CLONE_SYSVSEM = 0x40000, A_CLONE_SETTLS = 0x80000,
    A_CLONE_PARENT_SETTID = 0x100000, A_CLONE_CHILD_CLEARTID = 0x200000,
    A_CLONE_DETACHED = 0x400000, A_CLONE_CHILD_SETTID = 0x1000000
};

/* futex */
enum {
    A_FUTEX_WAIT = 0, A_FUTEX_WAKE = 1, A_FUTEX_REQUEUE = 3, A_FUTEX_CMP_REQUEUE = 4,
    A_FUTEX_WAKE_OP = 5, A_FUTEX_LOCK_PI = 6, A_FUTEX_UNLOCK_PI = 7,
    A_FUTEX_TRYLOCK_PI = 8, A_FUTEX_WAIT_BITSET = 9, A_FUTEX_WAKE_BITSET = 10,
    A_FUTEX_PRIVATE = 128, A_FUTEX_CLOCK_REALTIME = 256
};

/* wait */
enum { A_WNOHANG = 1, A_WUNTRACED = 2, A_WEXITED = 4, A_WCONTINUED = 8, A_WNOWAIT = 0x1000000 };

/* rlimits (Alpha numbers: NOFILE and AS differ from the generic ones) */
enum {
    A_RLIMIT_CPU = 0, A_RLIMIT_FSIZE = 1, A_RLIMIT_DATA = 2, A_RLIMIT_STACK = 3,
    A_RLIMIT_CORE = 4, A_RLIMIT_RSS = 5, A_RLIMIT_NOFILE = 6, A_RLIMIT_AS = 7,
    A_RLIMIT_NPROC = 8, A_RLIMIT_MEMLOCK = 9, A_RLIMIT_LOCKS = 10,
    A_RLIMIT_SIGPENDING = 11, A_RLIMIT_MSGQUEUE = 12, A_RLIMIT_NICE = 13,
    A_RLIMIT_RTPRIO = 14, A_RLIMIT_RTTIME = 15
};
#define A_RLIM_INFINITY 0x7fffffffffffffffULL

/* clocks */
enum {
    A_CLOCK_REALTIME = 0, A_CLOCK_MONOTONIC = 1, A_CLOCK_PROCESS_CPUTIME_ID = 2,
    A_CLOCK_THREAD_CPUTIME_ID = 3, A_CLOCK_MONOTONIC_RAW = 4,
    A_CLOCK_REALTIME_COARSE = 5, A_CLOCK_MONOTONIC_COARSE = 6, A_CLOCK_BOOTTIME = 7,
    A_TIMER_ABSTIME = 1
};

/* ioctl: Alpha's _IOC has 13 size bits and 3 direction bits (1 none, 2 read,
 * 4 write) */
#define A_IOC(dir, type, nr, size) \
    (((uint32_t)(dir) << 29) | ((uint32_t)(size) << 16) | ((uint32_t)(type) << 8) | (uint32_t)(nr))
#define A_TCGETS     A_IOC(2, 't', 19, 44)
#define A_TCSETS     A_IOC(4, 't', 20, 44)
#define A_TCSETSW    A_IOC(4, 't', 21, 44)
#define A_TCSETSF    A_IOC(4, 't', 22, 44)
#define A_TIOCSWINSZ A_IOC(4, 't', 103, 8)
#define A_TIOCGWINSZ A_IOC(2, 't', 104, 8)
#define A_TIOCSPGRP  A_IOC(4, 't', 118, 4)
#define A_TIOCGPGRP  A_IOC(2, 't', 119, 4)
#define A_FIOCLEX    A_IOC(1, 'f', 1, 0)
#define A_FIONCLEX   A_IOC(1, 'f', 2, 0)
#define A_FIONBIO    A_IOC(4, 'f', 126, 4)
#define A_FIONREAD   A_IOC(2, 'f', 127, 4)
#define A_TIOCGSID   0x5429
#define A_TIOCSCTTY  0x540E

/* auxv */
enum {
    A_AT_NULL = 0, A_AT_PHDR = 3, A_AT_PHENT = 4, A_AT_PHNUM = 5, A_AT_PAGESZ = 6,
    A_AT_BASE = 7, A_AT_FLAGS = 8, A_AT_ENTRY = 9, A_AT_UID = 11, A_AT_EUID = 12,
    A_AT_GID = 13, A_AT_EGID = 14, A_AT_PLATFORM = 15, A_AT_HWCAP = 16,
    A_AT_CLKTCK = 17, A_AT_SECURE = 23, A_AT_RANDOM = 25, A_AT_EXECFN = 31,
    A_AT_L1I_CACHESHAPE = 34, A_AT_L1D_CACHESHAPE = 35, A_AT_L2_CACHESHAPE = 36,
    A_AT_L3_CACHESHAPE = 37
};

/* gentrap codes (asm/gentrap.h) */
enum {
    GEN_INTOVF = -1, GEN_INTDIV = -2, GEN_FLTOVF = -3, GEN_FLTDIV = -4,
    GEN_FLTUND = -5, GEN_FLTINV = -6, GEN_FLTINE = -7, GEN_DECOVF = -8,
    GEN_DECDIV = -9, GEN_DECINV = -10, GEN_ROPRAND = -11
};

#endif
