/*
 * machine/machine.h: the axp machine as seen from outside.
 *
 * A machine is a simulated Alpha 21164 multiprocessor running Linux/Alpha
 * user programs: it loads an ELF executable (and its interpreter), runs every
 * guest process and thread it spawns on N simulated CPUs inside this one host
 * process, and answers their system calls.  Runs are deterministic: the same
 * program and input give the same interleaving and instruction counts.
 */
#ifndef MACHINE_MACHINE_H
#define MACHINE_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct axp_machine axp_machine;

typedef struct axp_config {
    const char *root;       /* guest root overlay (sysroot); NULL: default */
    int ncpus;              /* simulated CPUs, >= 1 */
    bool strict;            /* stop on an unsupported system call */
    bool sandbox;           /* confine guest files to the root and the working directory */
    uint64_t mem_limit;     /* bytes of writable guest memory, all processes; 0: default */
    int max_threads;        /* guest threads and processes alive at once; 0: default */
    bool exact;             /* collect exact execution counts */
    uint64_t quantum;       /* instructions per CPU per scheduling round; 0: default */
    uint64_t mhz;           /* simulated clock for guest time; 0: default */
    uint64_t brk_start;     /* where every program's heap starts (page-aligned,
                             * above its image); 0: after its image */
    FILE *log;              /* diagnostics (stderr if NULL) */
} axp_config;

#define AXP_DEFAULT_ROOT "/usr/alpha-linux-gnu"
#define AXP_DEFAULT_MEM_LIMIT (4ULL << 30)
#define AXP_DEFAULT_MAX_THREADS 1024

/* axp's own exit statuses (docs/machine.md "Exit statuses"); everything
 * else is the guest's: its exit code, or 128+N when signal N killed it. */
enum {
    AXP_EXIT_USAGE = 2,         /* bad command line */
    AXP_EXIT_INTERNAL = 124,    /* axp itself failed: host out of memory, an internal fault */
    AXP_EXIT_STOPPED = 125,     /* the machine had to stop: deadlock, --strict */
    AXP_EXIT_NOEXEC = 126,      /* the program cannot be run */
    AXP_EXIT_NOTFOUND = 127     /* the program does not exist */
};

/* axp's own failure, not the guest's: one line on stderr, exit
 * AXP_EXIT_INTERNAL.  Async-signal-safe. */
__attribute__((noreturn)) void axp_fatal(const char *msg);
/* Report axp's own crashes (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT in
 * axp itself) through axp_fatal, so they never look like the guest's. */
void axp_catch_internal_faults(void);

/* What the cycle model charged one retired instruction (axp_want_costs).
 * Over a run, the cycles of all retired instructions add up to the
 * cycles of all CPUs' models, and their events to the model's counts. */
#define AXP_STALL_KINDS 12
#define AXP_EVENT_KINDS 9
typedef struct axp_cost {
    uint64_t cycles;        /* from the previous issue group to the one this
                             * instruction starts (0 when it joins a group) */
    uint64_t stall[AXP_STALL_KINDS];    /* of cycles, the stalls by cause */
    uint8_t events[AXP_EVENT_KINDS];    /* events counted at it (event 0,
                                         * cycles, and issues are not) */
    uint8_t any_event;                  /* some events[] is not 0 */
    uint8_t any_stall;                  /* some stall[] is not 0 */
} axp_cost;
const char *axp_stall_name(int kind);  /* "icache", "dcache", ... */
const char *axp_event_name(int kind);  /* "imiss", "dmiss", ... as --pmu */

/* What each retired instruction looks like to a timing model or PMU. */
typedef struct axp_retire {
    int cpu;                /* simulated CPU */
    int pid, tid;
    uint64_t pc;
    uint32_t word;          /* the instruction */
    uint16_t id;            /* its row in alpha_optable (0xffff: unknown) */
    uint64_t ea;            /* effective address of a load/store, else 0 */
    uint64_t next_pc;       /* where execution continues */
    uint64_t sp;            /* the stack pointer (r30) after it */
    const axp_cost *cost;   /* with axp_want_costs, else NULL */
} axp_retire;
typedef void (*axp_retire_hook)(void *ctx, const axp_retire *r);

/* What a collector needs to map samples to images: an executable mapping
 * of an image file appeared in a process, or a process ended; and, for a
 * tracker that follows each thread's frames, a process was made (FORK:
 * announced after its inherited mappings' LOADs, before it runs). */
typedef struct axp_image_event {
    enum { AXP_IMAGE_LOAD, AXP_PROCESS_EXIT, AXP_PROCESS_FORK } kind;
    int pid;
    int tid;                /* the new process's thread (FORK) */
    int parent_pid, parent_tid; /* the thread whose fork or clone made it (FORK) */
    bool shared_vm;         /* it shares its parent's memory: vfork, CLONE_VM (FORK) */
    bool own_stack;         /* clone gave it a stack of its own (FORK) */
    uint64_t base, size;    /* the mapping (LOAD) */
    uint64_t offset;        /* file offset of base (LOAD) */
    int64_t link;           /* link-time address minus run-time address (LOAD) */
    const char *path;       /* the image's path as the guest named it (LOAD) */
    const char *host_path;  /* the file axp read it from, as axp opened it: a
                             * collector needs the host's file to read the
                             * image's program headers (LOAD) */
    const char *build_id;   /* lowercase hex, "" if none (LOAD) */
    int wstatus;            /* how the process ended, as Linux's wait
                             * status: (code << 8) or the signal (EXIT) */
} axp_image_event;
typedef void (*axp_image_hook)(void *ctx, const axp_image_event *e);

axp_machine *axp_new(const axp_config *cfg, char *err, size_t errsz);
void axp_free(axp_machine *m);

/* With a hook set, every CPU runs the timed executor, which calls it once
 * per retired instruction, in order (a block's worth when the block
 * ends); without one, the functional executor runs and pays nothing for
 * it.  Set it before axp_run. */
void axp_set_retire_hook(axp_machine *m, axp_retire_hook fn, void *ctx);

/* Hand the retire hook what the cycle model charged each instruction
 * (axp_retire.cost).  Needs the cycle model (axp_set_timing or
 * axp_set_pmu); the model then runs on the executor's thread and looks at
 * every instruction, which is slower.  Call before axp_run. */
void axp_want_costs(axp_machine *m);

/* Called for every executable mapping of an image and every process exit. */
void axp_set_image_hook(axp_machine *m, axp_image_hook fn, void *ctx);
/* The hook set now, so that a second observer can call it from its own. */
void axp_get_image_hook(const axp_machine *m, axp_image_hook *fn, void **ctx);

/* ---- the EV5 cycle model and the performance counters -------------------
 * Both are off by default: a functional run pays nothing for them.  They
 * observe execution without changing it, so a program computes the same
 * thing with or without them.  See docs/machine.md. */

/* Turn the cycle model on, with each "key=value" of assign[] applied to the
 * default EV5 parameters (names as alpha/ev5.h's table).  -1 with a message
 * naming the bad assignment. */
int axp_set_timing(axp_machine *m, const char *const *assign, size_t n, char *err, size_t errsz);

/* Performance counters: "EVENT[:PERIOD],..." (cycles, imiss, dmiss,
 * branchmp, dtbmiss, itbmiss, jsrmp, smiss, issues).  Turns the cycle model
 * on.  seed chooses the random sampling periods. */
int axp_set_pmu(axp_machine *m, const char *spec, uint64_t seed, char *err, size_t errsz);

/* Value sampling (docs/machine.md "Value sampling"): with "values" among
 * the --pmu events, each of its interrupts records the next `length`
 * instructions the interrupted thread executes (1 to AXP_VALUES_MAX,
 * default AXP_VALUES_DEFAULT), one axp_value each, and charges the CPU
 * AXP_VALUES_ENTRY_CYCLES plus AXP_VALUES_INSN_CYCLES per instruction
 * recorded, the interpreter's cost.  -1 with a message when length is
 * out of range. */
#define AXP_VALUES_DEFAULT 16
#define AXP_VALUES_MAX 4096
#define AXP_VALUES_ENTRY_CYCLES 400
#define AXP_VALUES_INSN_CYCLES 40
int axp_set_values_length(axp_machine *m, uint64_t length, char *err, size_t errsz);
/* Before recording, a run passes over a number of instructions drawn
 * uniformly from [0, skip) (default AXP_VALUES_SKIP_DEFAULT, 0 or 1: none),
 * at the same cost per instruction: interrupts fall more often after
 * slow instructions, and without the skip so would the runs. */
#define AXP_VALUES_SKIP_DEFAULT 256
int axp_set_values_skip(axp_machine *m, uint64_t skip, char *err, size_t errsz);

enum {
    AXP_V_RESULT = 1,       /* result: the register it wrote */
    AXP_V_EA = 2,           /* ea: a load's or store's effective address */
    AXP_V_LATENCY = 4,      /* latency, level: a load's, as the cycle model timed it */
    AXP_V_TARGET = 8,       /* target: where a JMP, JSR, RET or JSR_COROUTINE went */
    AXP_V_BRANCH = 16       /* taken: a conditional branch's direction */
};
enum { AXP_LVL_DCACHE, AXP_LVL_SCACHE, AXP_LVL_BCACHE, AXP_LVL_MEMORY };
typedef struct axp_value {
    int cpu, pid, tid;
    uint64_t run;           /* runs are numbered from 1, machine-wide */
    uint32_t index;         /* the instruction's place in its run, from 0 */
    uint64_t ipc;           /* the interrupted instruction, where the run's sample fell */
    uint64_t pc;
    uint32_t word;
    uint16_t id;            /* alpha_optable row, 0xffff: unknown */
    uint16_t has;           /* AXP_V_* */
    uint64_t result, ea, target;
    uint32_t latency;       /* cycles from issue to data */
    uint8_t level;          /* AXP_LVL_*: who answered the load */
    bool taken;
} axp_value;
typedef void (*axp_value_hook)(void *ctx, const axp_value *v);
void axp_set_value_hook(axp_machine *m, axp_value_hook fn, void *ctx);
/* What the values event's period counts: instructions issued (the
 * default: runs then start uniformly over the instructions executed) or
 * cycles, as DCPI's interrupts did (runs then favour what follows slow
 * code; docs/machine.md "Value sampling").  -1 when out of memory. */
int axp_set_values_clock(axp_machine *m, bool instructions);
/* Was "values" among the --pmu events? */
bool axp_pmu_values(const axp_machine *m);

/* ProfileMe (docs/machine.md "ProfileMe"): with "profileme[:PERIOD]"
 * among the --pmu events, one fetched instruction in about PERIOD is
 * tagged and its record delivered once the model has timed it; with a
 * window W > 0 (below the shortest interval) each is paired with a second
 * tagged 1..W fetched instructions later.  Flags as the cycle model's. */
#define AXP_PM_WINDOW_MAX 4096
enum {
    AXP_PM_IMISS = 1, AXP_PM_ITBMISS = 2, AXP_PM_DMISS = 4, AXP_PM_DTBMISS = 8,
    AXP_PM_LOAD = 16, AXP_PM_STORE = 32, AXP_PM_CBRANCH = 64, AXP_PM_TAKEN = 128,
    AXP_PM_JUMP = 256, AXP_PM_MISPREDICT = 512, AXP_PM_PAIRED = 1024, AXP_PM_USEFUL = 2048
};
typedef struct axp_pm {
    int cpu, pid;
    uint64_t pc;
    uint64_t ea;            /* a load's or store's address, a jump's target, else 0 */
    uint32_t flags;         /* AXP_PM_* */
    uint16_t hist;          /* the last conditional branches' outcomes, newest in bit 0 (1: taken) */
    uint8_t hist_len;       /* bits of hist that are real */
    uint8_t level;          /* a load's: AXP_LVL_* */
    uint32_t fetch_issue;   /* cycles from its fetch block's readiness to its issue */
    uint32_t head;          /* cycles at the head of the issue queue */
    uint32_t issue_ready;   /* cycles from issue to its result (a load's: its latency) */
    uint32_t window, distance;   /* a pair's window; the second's distance from the first */
    uint32_t issue_width;   /* issue slots per cycle */
    double period;          /* mean fetched instructions between first tagged instructions */
} axp_pm;
typedef void (*axp_pm_hook)(void *ctx, const axp_pm *r, int n);
void axp_set_pm_hook(axp_machine *m, axp_pm_hook fn, void *ctx);
int axp_set_profileme_window(axp_machine *m, uint64_t window, char *err, size_t errsz);
/* The true path behind each ProfileMe record (docs/machine.md
 * "ProfileMe"), for measuring path reconstruction: the record's process,
 * pc and history, and the runs of consecutive addresses the thread went
 * through up to it, newest first (the first ends after pc), back as far
 * as the history's oldest conditional branch (at most AXP_PM_RUNS + 1
 * runs).  The hook may be called from the model's thread.  Changes no
 * cycle or sample.  Set before the run. */
#define AXP_PM_RUNS 64
typedef struct axp_pm_run { uint64_t start, end; } axp_pm_run;
typedef void (*axp_pm_path_hook)(void *ctx, int pid, uint64_t pc, uint16_t hist, uint8_t hist_len,
                                 const axp_pm_run *run, unsigned n);
void axp_set_pm_path_hook(axp_machine *m, axp_pm_path_hook fn, void *ctx);
bool axp_pmu_profileme(const axp_machine *m);

/* One PMU interrupt: the sample's CPU, process, PC and event number. */
typedef void (*axp_sample_hook)(void *ctx, int cpu, int pid, uint64_t pc, unsigned event);
void axp_set_sample_hook(axp_machine *m, axp_sample_hook fn, void *ctx);

/* Calling contexts at samples (--stacks, docs/machine.md "Stacks at
 * samples"): at every PMU sample the interrupted thread's stack is walked
 * with the .eh_frame of the images mapped in its process, or a prologue
 * scan where an image has none, up to depth frames.  Turns the model
 * thread off: the walk needs the registers of the very block sampled. */
#define AXP_STACK_DEPTH 64
#define AXP_STACK_DEPTH_MAX 1024
/* Why a walk stopped.  COMPLETE: the outermost frame (its return address
 * is undefined or zero); every other reason truncates the stack there. */
enum {
    AXP_STK_COMPLETE, AXP_STK_DEPTH, AXP_STK_NOIMAGE, AXP_STK_NOUNWIND, AXP_STK_UNREADABLE,
    AXP_STK_CORRUPT, AXP_STK_SIGNAL, AXP_STK_STATE, AXP_STK_NEND
};
extern const char *const axp_stack_end_names[AXP_STK_NEND];
typedef struct axp_stack {
    unsigned n;              /* frames in pc[], leaf first */
    unsigned end;            /* AXP_STK_*: why the walk stopped */
    unsigned fallback;       /* frames unwound by the prologue scan */
    const uint64_t *pc;      /* the sampled pc, then each caller's call
                              * instruction (its return address - 4) */
} axp_stack;
int axp_set_stacks(axp_machine *m, unsigned depth, char *err, size_t errsz);
/* Inside the sample hook: the stack of the sample being delivered; NULL
 * when stacks are off. */
const axp_stack *axp_sample_stack(const axp_machine *m);

/* A safe point of CPU cpu, once per scheduling round, busy or idle. */
typedef void (*axp_poll_hook)(void *ctx, int cpu);
void axp_set_poll_hook(axp_machine *m, axp_poll_hook fn, void *ctx);

/* The events the PMU was given: event number, name and nominal mean
 * sampling period.  Returns how many (at most max are written). */
typedef struct axp_pmu_event {
    unsigned id;
    const char *name;
    double mean_period;
} axp_pmu_event;
size_t axp_pmu_events(const axp_machine *m, axp_pmu_event *out, size_t max);

/* More members for --stats: fn writes lines `  "name": value,` into the
 * top-level object. */
void axp_set_stats_extra(axp_machine *m, void (*fn)(void *ctx, FILE *f), void *ctx);

/* Record, per (pid, pc), the cycles each instruction spent at the head of
 * the issue queue and the samples it got, for axp_write_truth: the model's
 * own answer that cycle samples estimate.  Call before axp_run. */
void axp_record_truth(axp_machine *m);
int axp_write_truth(axp_machine *m, FILE *f);

/* Total simulated cycles over all CPUs (0 without the cycle model). */
uint64_t axp_cycles(const axp_machine *m);

/* Create the first process from PATH (a host path) with argv and envp.
 * Returns 0, or -1 with a message naming the file and the problem. */
int axp_spawn(axp_machine *m, const char *path, char *const argv[],
              char *const envp[], char *err, size_t errsz);

/* Run until the first process and everything it started have finished.
 * Returns its exit status, 128+N when signal N killed it, or 125 when the
 * machine itself had to stop (--strict, deadlock). */
int axp_run(axp_machine *m);

/* Send SIGINT, SIGTERM, SIGHUP and SIGQUIT that reach this host process to
 * the guest's foreground (the first process's group) instead. */
void axp_forward_host_signals(void);

/* Results.  Both return 0, or -1 with errno set. */
int axp_write_stats(axp_machine *m, FILE *f);
int axp_write_exact(axp_machine *m, FILE *f);

/* Totals for tests and front ends. */
uint64_t axp_instructions(const axp_machine *m);
double axp_host_seconds(const axp_machine *m);

#endif
