/*
 * alpha/sched.h: the EV5 static block scheduler.
 *
 * Given a straight-line run of instructions and the address of its first,
 * it works out where each issues when nothing dynamic happens: every cache
 * hits, no branch is mispredicted, every value from before the run is
 * ready and the multiplier and divider are free when it starts.  The rules
 * are alpha/ev5.h's (issue width, fetch blocks, slotting, the load/store
 * clash, latencies with the same-cycle path from a compare or logical
 * operation to a branch or CMOV, the busy units); the machine's cycle
 * model builds its block schedules with this scheduler, and the estimator
 * takes M_i (DCPI's minimum head-of-queue cycles) and the static stalls'
 * culprits from it, so the two never disagree.
 */
#ifndef ALPHA_SCHED_H
#define ALPHA_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "alpha/ev5.h"
#include "alpha/insn.h"

/* Why an instruction did not issue in the cycle of the one before it, and,
 * when it waited longer than the one cycle a new group costs, why it
 * stalled.  The stall reasons are named as axp's `--stats` "stalls"
 * object names them ("dependency", "multiplier", "divider"). */
typedef enum {
    ASR_DUAL = 0,        /* it did issue with its predecessor: M = 0 */
    ASR_FIRST,           /* the run's first instruction */
    ASR_FETCH_BLOCK,     /* starts an aligned fetch block: groups never span two */
    ASR_SLOTTING,        /* no pipe left for it in the group, or the group is full */
    ASR_LOAD_STORE,      /* a load may not join a store's group, nor the reverse */
    ASR_DEPENDENCY,      /* an operand is not ready yet */
    ASR_MULTIPLIER,      /* the integer multiplier is busy */
    ASR_DIVIDER,         /* the FP divider is busy */
    ASR_COUNT
} alpha_sched_reason;
extern const char *const alpha_sched_reason_names[ASR_COUNT];

/* Register fields, as bits. */
enum { ASF_RA = 1, ASF_RB = 2, ASF_RC = 4 };

/* One instruction's place in the schedule. */
typedef struct alpha_sched_slot {
    uint32_t issue;      /* its issue cycle, relative to instruction 0's */
    uint32_t m;          /* M_i: cycles at the head of the issue queue, issue
                            minus the predecessor's issue (1 for instruction 0,
                            0 when dual-issued) */
    uint32_t stall;      /* static stall cycles: m - 1 when m > 1, else 0 */
    uint8_t reason;      /* alpha_sched_reason: of the stall when stall > 0,
                            else of m == 1 (ASR_DUAL when m == 0) */
    uint8_t operand;     /* ASR_DEPENDENCY: the field that waited (ASF_*) */
    int32_t culprit;     /* the instruction waited on: the operand's writer
                            (ASR_DEPENDENCY), the unit's last user
                            (ASR_MULTIPLIER, ASR_DIVIDER), the load or store
                            in the group (ASR_LOAD_STORE); -1 otherwise */
    uint8_t group;       /* the issue group after it (row of ev5_groups) */
    uint8_t livein;      /* ASF_* fields reading a value from before the run */
    bool unit_livein;    /* uses a unit no earlier instruction of the run used */
} alpha_sched_slot;

/* An instruction as the scheduler reads it: its table row and registers.
 * Registers are 0-31 integer, 32-63 FP; R31, F31 and "no register" are
 * ALPHA_SCHED_NOREG. */
#define ALPHA_SCHED_NOREG 64
typedef struct alpha_sched_op {
    uint16_t row;        /* alpha_optable row; alpha_sched_unknown(): a word
                            not in the table; alpha_sched_unop(): UNOP */
    uint8_t src[3];      /* read through Ra, Rb, Rc (a literal reads none) */
    uint8_t dst;         /* written */
} alpha_sched_op;

static inline uint16_t alpha_sched_unknown(void) { return (uint16_t)alpha_optable_len; }
static inline uint16_t alpha_sched_unop(void) { return (uint16_t)(alpha_optable_len + 1); }
void alpha_sched_op_of(const alpha_insn *i, alpha_sched_op *out);

/* The scheduler for one set of parameters: the issue rules of every row
 * and the group table, worked out once. */
typedef struct alpha_sched alpha_sched;
/* NULL with a message in err when the parameters are not valid
 * (ev5_validate) or memory runs out. */
alpha_sched *alpha_sched_new(const ev5_params *p, char *err, size_t errsize);
void alpha_sched_free(alpha_sched *s);
const ev5_params *alpha_sched_params(const alpha_sched *s);
const ev5_groups *alpha_sched_groups(const alpha_sched *s);
/* The issue rules of a row (alpha_sched_unknown() and _unop() included). */
const ev5_issue *alpha_sched_issue(const alpha_sched *s, uint16_t row);

/* Schedule the n instructions at pc into out[n]; returns the run's cycles
 * (the last issue + 1, which is the sum of the M_i).  Control transfers
 * and barriers are scheduled like any instruction: a branch before the
 * end is taken as falling through, an MB finds the write buffer empty.
 * The block and words forms convert runs longer than 256 on the heap and
 * return 0 if that fails. */
uint32_t alpha_sched_ops(const alpha_sched *s, const alpha_sched_op *ops, uint32_t n, uint64_t pc,
                         alpha_sched_slot *out);
uint32_t alpha_sched_block(const alpha_sched *s, const alpha_insn *ins, uint32_t n, uint64_t pc,
                           alpha_sched_slot *out);
uint32_t alpha_sched_words(const alpha_sched *s, const uint32_t *words, uint32_t n, uint64_t pc,
                           alpha_sched_slot *out);

#endif
