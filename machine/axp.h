/*
 * machine/axp.h: the machine's internal types, shared by the files of machine/ only.
 *
 * Layers, bottom up: guest memory (mem.c: software page table of host
 * frames, per-address-space TLB, copy-on-write), the code cache
 * (translate.c: predecoded blocks per address space), the executor
 * (exec.c: block interpreter), the kernel (proc.c, signal.c, sched.c and the
 * sys_*.c system calls) and the result writers (stats.c, exact.c).
 */
#ifndef MACHINE_AXP_H
#define MACHINE_AXP_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "alpha/insn.h"
#include "machine/machine.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

typedef struct thread thread;
typedef struct proc proc;
typedef struct mm mm;
typedef struct block block;
typedef struct axp_machine machine;
struct cycles_front;

/* ---- guest memory ------------------------------------------------------ */

#define PG_SHIFT   13
#define PG_SIZE    ((uint64_t)1 << PG_SHIFT)
#define PG_MASK    (PG_SIZE - 1)
#define VA_LIMIT   ((uint64_t)1 << 42)       /* Linux/Alpha TASK_SIZE */
#define MMAP_BASE  (VA_LIMIT / 2)            /* TASK_UNMAPPED_BASE */
#define ET_DYN_BASE (MMAP_BASE + 0x1000000)
#define STACK_TOP  0x120000000ULL
#define STACK_MAX  (8ULL << 20)

enum { GP_R = 1, GP_W = 2, GP_X = 4 };       /* Alpha PROT_* values */
enum { PTE_MAPPED = 1, PTE_COW = 2, PTE_CODE = 4 };

typedef struct frame {
    uint32_t refs;
    uint8_t data[PG_SIZE] __attribute__((aligned(64)));
} frame;

typedef struct pte {
    frame *f;            /* NULL until first touched */
    block *code;         /* blocks translated from this page */
    uint8_t prot, flags;
} pte;

/* A TLB hit needs (ea & (~PG_MASK | (size-1))) == tag, which also rejects
 * unaligned accesses; TAG_NONE never matches. */
typedef struct tlbent {
    uint64_t rtag, wtag;
    intptr_t add;        /* host address = add + ea */
    uint64_t pad;        /* 32 bytes: the index is one shift */
} tlbent;
#define TLB_BITS 10
#define TLB_N    (1u << TLB_BITS)
#define TAG_NONE 1

enum { VMA_ANON, VMA_FILE, VMA_STACK, VMA_HEAP };
typedef struct vma {
    uint64_t start, end;
    uint8_t prot, kind;
    bool shared;
    int img;             /* index into machine images, -1 if none */
    int64_t link;        /* link-time address minus run-time address */
    uint64_t off;        /* file offset of start */
    char *name;          /* guest path of a file mapping */
    struct vfile *file;  /* where untouched pages come from (lazy mmap) */
} vma;

/* A host descriptor shared by the regions that map one file. */
typedef struct vfile {
    int fd;
    int refs;
} vfile;
vfile *vfile_new(int hostfd);
void mm_set_file(mm *x, uint64_t start, uint64_t end, vfile *f);

#define JC_BITS 12
#define JC_N (1u << JC_BITS)

typedef struct codecache {
    block **hash;
    uint32_t hmask, n;
    uint64_t gen;        /* bumped when blocks die: stale chain links */
    block *dead;         /* invalidated, freed when no executor runs */
    block *jc[JC_N];     /* direct-mapped by pc, for indirect jumps */
} codecache;

struct mm {
    int refs;
    pte ***dir;          /* 512 x 1024 x pte[1024] over 29-bit page numbers */
    tlbent tlb[TLB_N];
    vma *v;
    size_t nv, cv;
    uint64_t brk_start, brk;
    codecache cc;
    uint64_t frames;     /* frames owned (for stats) */
};

mm *mm_new(void);
mm *mm_fork(mm *src);              /* copy-on-write copy */
void mm_put(machine *m, mm *x);
pte *mm_pte(mm *x, uint64_t va, bool create);
void tlb_flush(mm *x);
void mm_discard(mm *x, uint64_t start, uint64_t len);
int mm_move(machine *m, mm *x, uint64_t from, uint64_t len, uint64_t to);
const uint8_t *mem_code_page(mm *x, uint64_t va, pte **pp);
void tlb_flush_page(mm *x, uint64_t va);

/* Address-space regions.  map replaces whatever was there (MAP_FIXED). */
int mm_map(machine *m, mm *x, uint64_t start, uint64_t len, int prot, int kind,
           const char *name, uint64_t off, int img, int64_t link);
int mm_unmap(machine *m, mm *x, uint64_t start, uint64_t len);
int mm_protect(machine *m, mm *x, uint64_t start, uint64_t len, int prot);
uint64_t mm_find_free(mm *x, uint64_t hint, uint64_t len);
const vma *mm_vma_at(const mm *x, uint64_t va);
bool mm_range_free(const mm *x, uint64_t start, uint64_t len);

/* Guest access from the kernel: return 0 or -EFAULT (Alpha errno). */
int mem_read(mm *x, uint64_t va, void *buf, size_t n);
/* A read that changes nothing: no page made present, no file page read,
 * no fault; false unless every byte is in a page the guest has touched
 * and may read (stack walks at samples). */
bool mem_peek(const mm *x, uint64_t va, void *buf, size_t n);
int mem_write(mm *x, uint64_t va, const void *buf, size_t n);
int mem_write_force(mm *x, uint64_t va, const void *buf, size_t n); /* ignores W */
int mem_zero(mm *x, uint64_t va, size_t n);
/* A NUL-terminated string of at most max bytes; NULL on fault or overlong
 * (*err says which).  Caller frees. */
char *mem_strdup(mm *x, uint64_t va, size_t max, int *err);
/* Host iovecs for [va, va+n): pages made present and, for write, private.
 * Returns the iovec count or -EFAULT. */
struct iovec;
int mem_iov(mm *x, uint64_t va, size_t n, bool write, struct iovec *iov, int max);

/* Executor slow paths (may raise a guest fault and never return). */
struct dinsn;
uint64_t mem_load_slow(thread *t, block *b, const struct dinsn *d, uint64_t ea, int size);
void mem_store_slow(thread *t, block *b, const struct dinsn *d, uint64_t ea, uint64_t v, int size);

/* ---- code cache -------------------------------------------------------- */

/* One predecoded instruction.  a and b are read indexes (31 reads zero);
 * c is the write index, 32 (a sink) when the instruction names r31/f31. */
typedef struct dinsn {
    int32_t off;         /* the functional executor's handler, as an offset */
    uint16_t h;          /* executor handler */
    uint8_t a, b, c;
    uint8_t q;           /* FP qualifiers (FQ_*) */
    uint16_t id;         /* alpha_optable row */
    int32_t imm;         /* literal, displacement, PAL function */
    uint32_t word;
} dinsn;

/* FP qualifier bits kept in dinsn.q: rounding in the low two bits in the
 * FPCR's DYN encoding (0 chopped, 1 minus, 2 normal, 3 plus), FQ_DYN when
 * the instruction asks for the FPCR's mode. */
enum { FQ_RM = 3, FQ_DYN = 4, FQ_U = 8, FQ_I = 16, FQ_S = 32 };

/* How a block ends. */
enum {
    BX_SEQ,      /* page end or length cap: falls through */
    BX_COND,     /* conditional branch */
    BX_BR,       /* br */
    BX_BSR,      /* bsr */
    BX_JMP, BX_JSR, BX_RET, BX_JCR,  /* register jumps (jcr: jsr_coroutine) */
    BX_PAL,      /* callsys and the other control-changing PAL calls */
    BX_ILL       /* an instruction that traps when reached */
};

struct xblock;
#define BLOCK_MAX 256    /* instructions in a block at most */

struct block {
    uint64_t pc, end;    /* [pc, end) */
    uint64_t target;     /* direct branch target */
    uint32_t n;
    uint8_t exit;        /* BX_* */
    block *hnext, *pnext;
    block *succ[2];      /* chained successors: [0] target, [1] end */
    uint64_t gen;        /* cc gen the links were made in */
    struct xblock *x;    /* exact counts (NULL when off) */
    const struct cycles_insn *ti;  /* ins[] decoded for the cycle model (timed machines), else NULL */
    struct cycles_sched **ts;      /* the cycle model's static schedules of it (with ti) */
    dinsn ins[];
};

/* The schedules for the first n instructions of b retired: a block cut
 * short by a fault is not the one they were made for. */
static inline struct cycles_sched **block_scheds(const block *b, uint32_t n)
{
    return n == b->n ? b->ts : NULL;
}

/* The block at pc, translating it if needed; raises SIGSEGV (never
 * returns) when pc is not executable. */
block *code_get(thread *t, uint64_t pc);
void code_invalidate_page(mm *x, uint64_t va);   /* a store into code */
void code_invalidate_range(mm *x, uint64_t start, uint64_t end);
void code_flush(mm *x);                          /* IMB */
void code_reap(machine *m, mm *x);               /* free dead blocks */
void code_free_all(machine *m, mm *x);
void code_init_handlers(void);

/* ---- threads and processes --------------------------------------------- */

#define NSIG_AXP 64
typedef struct ksiginfo {
    int signo, code, err;
    int pid, uid, status;
    uint64_t addr;
    int64_t utime, stime;
} ksiginfo;

typedef struct sigact {
    uint64_t handler, flags, mask, restorer;
} sigact;

typedef struct sighand {
    int refs;
    sigact a[NSIG_AXP + 1];
} sighand;

enum { FK_REG, FK_DIR, FK_PIPE, FK_TTY, FK_CHR, FK_SOCK, FK_OTHER };
typedef struct gfile {
    int refs;
    int host;            /* host descriptor */
    int kind;            /* FK_* */
    int flags;           /* Alpha O_* status flags (O_APPEND, O_NONBLOCK, access) */
    bool hostnb;         /* host descriptor is O_NONBLOCK (one we created) */
    bool random;         /* /dev/[u]random: reads come from random_fill */
    char *path;          /* guest path, for /proc/self/fd and messages */
} gfile;

typedef struct fdent { gfile *f; bool cloexec; } fdent;
typedef struct fdtable {
    int refs;
    int n;
    fdent *e;
} fdtable;

enum { T_RUNNABLE, T_BLOCKED, T_DEAD };
enum { W_NONE, W_FD, W_FUTEX, W_CHILD, W_SLEEP, W_VFORK, W_SIGNAL, W_POLL, W_HOST };

struct thread {
    uint64_t r[33];      /* r[31] stays zero; r[32] absorbs writes to r31 */
    uint64_t f[33];
    uint64_t pc;
    uint64_t fpcr;
    uint64_t swcr;       /* software IEEE trap enables (kernel's ieee_state) */
    uint64_t uniq;       /* PAL unique value: the thread pointer */
    uint64_t lock_addr;  /* LDx_L reservation */
    bool lock;
    bool rx;             /* RC/RS flag */
    uint32_t uac;        /* UAC_* bits */
    uint64_t ea[BLOCK_MAX];  /* timed executor: each memory access's address in the current block */

    machine *m;
    proc *p;
    mm *mm;
    int tid;
    int state;
    int cpu;             /* simulated CPU it is on, -1 if none */
    thread *rq_next;     /* run queue */
    thread *p_next;      /* threads of the process */
    thread *all_next;

    /* blocked in a system call */
    int wkind;
    uint64_t waddr;
    uint32_t wbits;
    int wfd;
    short wevents;
    int64_t wdeadline;   /* virtual ns, -1: none */
    bool woken;
    uint64_t sysno;      /* the call being waited in */
    uint64_t progress;   /* bytes done by a partly finished write */
    void *wdata;         /* per-call state (poll sets) */

    /* signals */
    uint64_t sigmask;
    uint64_t sigpend;
    ksiginfo sq[NSIG_AXP + 1];
    uint64_t saved_mask;
    bool restore_mask;
    uint64_t ss_sp, ss_size;
    int ss_flags;

    uint64_t clear_tid, robust;
    bool yield;          /* sched_yield: give the CPU away */
    int fault_sig;       /* pending signal raised by a fault */
    uint64_t icount;
    uint64_t syscalls;
    jmp_buf *trap;       /* executor's escape for guest faults */

    /* exact mode: the edge this thread took last, until the block it
     * leads to is entered */
    void *xedge;
    uint64_t xto;

    /* value sampling (values.c): the run this thread is in */
    uint32_t vleft;      /* instructions still to record, 0: no run */
    uint32_t vindex;     /* recorded so far */
    uint32_t vskip;      /* instructions to pass over before recording */
    bool vswitch;        /* the executor left to change between timed and values */
    uint64_t vrun, vipc; /* the run's number and the interrupted pc */
    uint64_t *vres;      /* values executor: each instruction's integer then FP
                          * destination after it ran (2 x BLOCK_MAX), or NULL */

    /* the last synchronous fault, for the message if it kills */
    uint64_t fault_pc, fault_addr;
    uint32_t fault_word;
    bool fault_word_ok;
};

enum { P_LIVE, P_ZOMBIE, P_REAPED };
typedef struct rlim { uint64_t cur, max; } rlim;
#define NRLIM 16

struct proc {
    int pid, pgid, sid;
    proc *parent, *children, *sibling;
    proc *all_next;
    mm *mm;
    fdtable *fd;
    sighand *sh;
    int cwd;             /* host O_PATH descriptor of the working directory */
    char *cwd_path;      /* guest path of it */
    uint32_t umask;
    char *exe;           /* guest path of the program */
    thread *threads;
    int nthreads;
    int state;
    int wstatus;         /* wait status once exited */
    int exit_signal;     /* sent to the parent at exit */
    bool group_exit;
    bool child_event;    /* a child changed state: wake wait4 */
    uint64_t sigpend;
    ksiginfo sq[NSIG_AXP + 1];
    uint64_t icount;     /* instructions of its exited threads */
    uint64_t child_icount;
    int64_t it_deadline, it_interval;   /* ITIMER_REAL, virtual ns */
    thread *vfork_parent;
    rlim rl[NRLIM];
    int64_t start_ns;
    int stat_index;      /* its record in m->pstats */
    int hostpid;         /* > 0: a proxy for this host process (hostproc.c) */
};

typedef struct cpu {
    int id;
    thread *cur;
    uint64_t tstart;     /* cur's icount when its current run began */
    uint64_t used;       /* cycles used in the current quantum */
    uint64_t insns;
    uint64_t idle;       /* cycles with nothing to run */
    struct cycles_core *core;   /* its cycle model (timing.c), or NULL */
    struct cycles_front *front; /* the model's front end, which the executor drives (never
                                   through core: the model's thread writes core's lines) */
    /* with stacks on (unwind.c): the block last retired here, the state
     * its thread's registers are in */
    thread *st_t;
    uint64_t st_first, st_last, st_next;
    uint32_t st_word;
} cpu;

/* Per-process summary kept after the process is gone. */
typedef struct pstat {
    int pid, ppid;
    char *exe;
    uint64_t icount;
    int threads;
    int wstatus;
    bool done;
} pstat;

/* A file mapped executable in some process: the unit exact counts and,
 * later, profiles are keyed by. */
typedef struct mimage {
    char *path;          /* host path */
    char *gpath;         /* guest path */
    char build_id[129];
    uint64_t dev, ino;
    int nload;
    struct { uint64_t off, vaddr, filesz; } load[16];
} mimage;

struct axp_machine {
    axp_config cfg;
    FILE *log;
    char *root;          /* guest root overlay directory */
    char *work;          /* --sandbox: the working directory axp started in */
    int workfd, rootfd;  /* --sandbox: the two trees the guest may see */
    uint64_t mem_limit;  /* writable guest memory, all address spaces */
    int max_threads;     /* live guest threads */
    cpu *cpus;
    int ncpu;
    uint64_t quantum;
    uint64_t mhz;

    proc *procs;
    thread *threads;
    thread *rq_head, *rq_tail;
    int next_pid;
    proc *init;
    int nlive;           /* live threads */
    uint64_t host_nofile;   /* the host's RLIMIT_NOFILE when axp started */
    uint64_t wake_gen;      /* bumped whenever a blocked thread may wake */

    uint64_t base_cycles;   /* guest time at the start of this round */
    int64_t rt0_ns;         /* host realtime when the machine started */
    double host_t0, host_t1;
    cpu *curcpu;

    axp_retire_hook hook;
    void *hook_ctx;
    uint64_t hook_retired;  /* AXP_TIMED's counting hook */
    axp_image_hook ihook;
    void *ihook_ctx;
    axp_sample_hook shook;  /* PMU samples */
    void *shook_ctx;
    axp_pm_hook pmhook;     /* ProfileMe records */
    void *pmhook_ctx;
    axp_pm_path_hook pathhook;  /* ProfileMe's true paths */
    void *pathhook_ctx;
    axp_poll_hook phook;    /* safe points */
    void *phook_ctx;
    void (*stats_extra)(void *ctx, FILE *f);
    void *stats_extra_ctx;
    struct timing *tm;      /* cycle model and PMU (timing.c), NULL when off */
    struct values *vs;      /* value sampling (values.c), NULL when off */
    struct tthread *tt;     /* the model's own host thread (timing_thread.c), or NULL: inline */
    bool want_costs;        /* the retire hook gets each instruction's cost (costs.c) */
    struct costs *costs;    /* per CPU, with want_costs */
    struct exact *x;
    struct unwinder *uw;    /* stack walks at samples (unwind.c), NULL when off */
    const axp_stack *sample_stack;  /* the sample being delivered's, for the hook */

    uint8_t nosys_seen[1024 / 8];
    int trace;           /* AXP_TRACE: 1 logs system calls, 2 also blocks */
    bool slow_blocks;    /* per-block work: exact counts or tracing */
    bool halted;
    int halt_status;
    bool init_done;
    int init_status;

    uint64_t icount;        /* retired instructions, all CPUs */
    uint64_t rng;           /* getrandom and /dev/urandom (random_fill) */
    uint64_t syscalls, unaligned, blocks_made, forks, signals;
    pstat *ps;
    int nps, cps;
    mimage *img;
    int nimg, cimg;
};

/* ---- kernel pieces ------------------------------------------------------- */

/* Guest time in nanoseconds as the running CPU sees it. */
int64_t vtime_ns(machine *m);

/* The guest's "random" bytes: a fixed sequence, so runs repeat. */
void random_fill(machine *m, void *buf, size_t n);
uint64_t vcycles(machine *m);

/* The executors.  Run t for about budget instructions; return the number
 * retired.  They return early when t blocks, exits, or gets a signal. */
uint64_t exec_functional(thread *t, int64_t budget);
uint64_t exec_timed(thread *t, int64_t budget);
void exec_init(void);

/* The cycle model and PMU (timing.c): set up before the first instruction,
 * their --stats members, and teardown. */
int timing_start(machine *m, char *err, size_t errsz);
void timing_write_stats(machine *m, FILE *f);
void timing_free(machine *m);
/* The EV5 parameters the cycle model runs with, or NULL when it is off. */
struct ev5_params;
const struct ev5_params *timing_params(const machine *m);
/* CPU cpu's model works for process pid from now on (its caches' tags,
 * and whose its samples are); the executor tells the model's front end
 * itself (cycles_front_asn), that part running on its thread. */
void timing_asn(machine *m, int cpuno, uint32_t pid);

/* Each retired instruction's cost for the retire hook (costs.c):
 * costs_start puts an observer in front of each CPU's (after the PMU's and
 * truth's are in place); costs_block before a block goes to the model;
 * costs_of(i) for its instruction i afterwards. */
struct costs;
int costs_start(machine *m);
void costs_block(machine *m, int cpuno, uint64_t pc, uint32_t n);
const axp_cost *costs_of(machine *m, int cpuno, uint32_t i);
void costs_free(machine *m);
/* Value sampling (values.c).  values_interrupt starts a run in the
 * thread on CPU cpuno; the values executor (exec.c) then hands each block
 * it retires, with the registers it wrote (t->vres), to values_record.
 * timing_start calls values_start when the PMU has the values event. */
int values_start(machine *m, char *err, size_t errsz);
void values_interrupt(void *ctx, int cpuno, uint64_t pc);
struct cycles_load *values_log(machine *m, int cpuno);   /* CYCLES_BLOCK_MAX loads */
void values_record(thread *t, const block *b, uint32_t n, uint64_t next_pc, const struct cycles_load *log,
                   uint32_t nlog);
void values_write_stats(machine *m, FILE *f);
void values_free(machine *m);

/* The model on its own host thread (timing_thread.c): started by
 * timing_start when the host has a second CPU (AXP_MODEL_THREAD=0: never),
 * fed by the executor, drained before blocks are freed, before image and
 * exit notices, and at the end of the run. */
typedef struct tthread tthread;
tthread *tthread_start(machine *m);
void tthread_block(tthread *q, int cpuno, struct cycles_front *f, const block *b, uint32_t n, const uint64_t *ea,
                   uint64_t next_pc);
void tthread_asn(tthread *q, int cpuno, uint32_t pid);
void tthread_poll(tthread *q, int cpuno);
void tthread_drain(tthread *q);
void tthread_stop(tthread *q);
extern int32_t exec_handler_offsets[];

/* Raise a synchronous fault at instruction d of block b; never returns. */
_Noreturn void guest_fault(thread *t, block *b, const dinsn *d, int sig,
                           int code, uint64_t addr, bool after);

/* FP arithmetic (fp.c).  Returns the result and ORs FPCR exception bits
 * into *exc; fp_raise applies qualifiers, status and traps. */
enum {
    FO_ADDS, FO_SUBS, FO_MULS, FO_DIVS, FO_ADDT, FO_SUBT, FO_MULT, FO_DIVT,
    FO_CMPTUN, FO_CMPTEQ, FO_CMPTLT, FO_CMPTLE, FO_CVTTS, FO_CVTST,
    FO_CVTTQ, FO_CVTQS, FO_CVTQT, FO_SQRTS, FO_SQRTT, FO_CVTQL
};
uint64_t fp_ieee(thread *t, int op, unsigned q, uint64_t a, uint64_t b, uint64_t *exc);
void fp_raise(thread *t, block *b, const dinsn *d, unsigned q, uint64_t exc);
uint64_t fp_s_to_reg(uint32_t s);
uint32_t fp_reg_to_s(uint64_t r);
void fp_set_fpcr(thread *t, uint64_t v);

/* Processes and threads (proc.c). */
proc *proc_new(machine *m);
thread *thread_new(machine *m, proc *p);
proc *proc_find(machine *m, int pid);
thread *thread_find(machine *m, int tid);
void thread_exit(thread *t, int code);
void proc_exit(proc *p, int wstatus);       /* whole group */
void proc_kill_others(thread *t);           /* exec: the caller survives */
void proc_reap(machine *m, proc *p);
void make_runnable(machine *m, thread *t);
void pstat_update(machine *m, proc *p);
thread *rq_pop(machine *m);
void rq_push(machine *m, thread *t);

/* Signals (signal.c). */
#define SIGBIT(s) ((uint64_t)1 << ((s) - 1))
void sig_send_thread(thread *t, const ksiginfo *si);
void sig_force(thread *t, const ksiginfo *si);     /* a fault: cannot be blocked */
void sig_send_proc(proc *p, const ksiginfo *si);
bool sig_deliverable(thread *t);
void sig_deliver(thread *t);                /* frame or default action */
void sig_interrupt(thread *t);              /* wake a blocked thread */
int sig_default(int sig);                   /* SD_* */
enum { SD_TERM, SD_CORE, SD_IGN, SD_STOP, SD_CONT };
const char *sig_name(int sig);
long sys_sigreturn_common(thread *t, uint64_t sc, bool rt);

/* System calls (syscall.c). */
enum { SYS_BLOCK = -100000, SYS_NORET = -100001 };
int syscall_do(thread *t);                  /* from callsys: SC_* */
void syscall_retry(thread *t);              /* a blocked call's wait ended */
void syscall_finish(thread *t, long r);     /* set v0/a3 from r */
enum { SC_CONT, SC_LEAVE };
const char *syscall_name(unsigned nr);
bool syscall_restartable(uint64_t nr);
long nosys(thread *t, unsigned nr);

/* Errors: host errno to Alpha errno. */
int xerrno(int host_errno);
static inline long xret(long r, int e) { return r < 0 ? -(long)xerrno(e) : r; }

/* Files (fd.c). */
fdtable *fdt_new(void);
fdtable *fdt_copy(fdtable *f);
void fdt_put(fdtable *f);
void fdt_cloexec(fdtable *f);
gfile *gfile_new(int host, int flags, const char *path);
void gfile_put(gfile *f);
gfile *fd_get(proc *p, int fd);
int fd_install(proc *p, gfile *f, int minfd, bool cloexec);
int fd_close(proc *p, int fd);
int fd_install_at(proc *p, gfile *f, int fd, bool cloexec);
int fd_kind(int host);
bool fd_ready(int host, short events);

/* Paths (path.c): guest path to a host (dirfd, path) pair. */
typedef struct hpath {
    int dirfd;
    char *path;          /* malloc'd */
    int own;             /* a descriptor hpath_free closes, or -1 */
    bool magic;          /* path is /proc/self/fd/N of own: follow it */
} hpath;
enum { PR_CREATE = 1, PR_NOFOLLOW = 2 };   /* path_resolve: the call creates; it does not follow a last link */
int path_resolve(thread *t, int gdirfd, const char *gpath, hpath *out, unsigned how);
void hpath_free(hpath *h);
/* openat of a resolved path; never through one of the host's /proc magic
 * links, never onto axp's own /proc files (errno EACCES). */
int path_open(thread *t, hpath *hp, int hflags, mode_t mode);
char *path_host_for_exec(machine *m, proc *p, const char *gpath, int *err);
char *path_join_norm(const char *base, const char *rel);
/* The machine's own names: 0 when gpath is not one; 1 when it is, with
 * *fd (opened with host flags hflags) or, when link is given, *link (what
 * readlink gives), or *err (an Alpha errno: not there, or refused). */
int path_virtual(thread *t, const char *gpath, int hflags, int *fd, char **link, long *err);
int path_sys(thread *t, const char *gpath);
/* The program's guest path when gpath is /proc/self/exe or another guest
 * process's exe link, else NULL. */
char *path_exe_alias(thread *t, const char *gpath);

/* Writable memory an address space commits (mem.c), and whether adding
 * more bytes would pass the machine's --mem-limit over every live one. */
uint64_t mm_committed(const mm *x);
bool mem_over_limit(machine *m, uint64_t more);

/* Host programs exec'd by guests (hostproc.c). */
bool hostproc_can_run(const char *hostpath);
long hostproc_exec(thread *t, const char *hostpath, char *const argv[], char *const envp[]);
void hostproc_check(thread *t);
void hostproc_signal(proc *p, int sig);
int sig_to_host(int sig);

/* Loader (loader.c).  The machine's own table of the images it loaded is
 * mach_image_*, apart from image/'s image_* that read the files. */
int load_program(thread *t, const char *hostpath, const char *gpath,
                 char *const argv[], char *const envp[], char *err, size_t errsz);
int mach_image_register(machine *m, const char *hostpath, const char *gpath);
int64_t mach_image_link_delta(machine *m, int img, uint64_t off, uint64_t start);
void mach_image_notice(machine *m, proc *p, int img, uint64_t base, uint64_t size, uint64_t off, int64_t link);
void mach_image_notice_all(machine *m, proc *p);
void mach_fork_notice(machine *m, thread *t, proc *c, int ctid, bool shared_vm, bool own_stack);

/* Scheduler (sched.c). */
void sched_wake_futex(machine *m, mm *x, uint64_t addr, int n, uint32_t bits, int *woken);
void machine_halt(machine *m, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mlog(machine *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Exact counts (exact.c). */
struct exact *exact_new(void);
void exact_free(struct exact *x);
void exact_enter(thread *t, block *b);
void exact_leave(thread *t, block *b, uint64_t to, bool taken);
void exact_break(thread *t);
void exact_fault(thread *t, block *b, uint32_t retired);
int exact_write(machine *m, FILE *f);

#endif
