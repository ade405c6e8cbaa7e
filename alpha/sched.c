/*
 * alpha/sched.c: the EV5 static block scheduler (see sched.h and
 * docs/alpha.md, "The static scheduler").
 *
 * An in-order 21164 issues a group of up to four instructions a cycle.  An
 * instruction joins the group of the one before it when it lies in the same
 * aligned fetch block, the group has a pipe left for it (ev5_groups), no
 * load meets a store, and its operands and unit are ready in that cycle;
 * otherwise it starts the next group in the first cycle its operands and
 * unit allow.  This is the machine's cycle model with everything dynamic
 * taken away, and the model uses it as such, so every rule here is one the
 * model follows: registers are examined Ra, Rb, Rc, then the unit, and a
 * later constraint becomes the cause of a stall only if strictly later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/sched.h"

const char *const alpha_sched_reason_names[ASR_COUNT] = {
    [ASR_DUAL] = "dual", [ASR_FIRST] = "first", [ASR_FETCH_BLOCK] = "fetch_block",
    [ASR_SLOTTING] = "slotting", [ASR_LOAD_STORE] = "load_store", [ASR_DEPENDENCY] = "dependency",
    [ASR_MULTIPLIER] = "multiplier", [ASR_DIVIDER] = "divider",
};

struct alpha_sched {
    ev5_params p;
    ev5_groups groups;
    ev5_issue issue[];          /* per row, then unknown, then UNOP */
};

alpha_sched *alpha_sched_new(const ev5_params *p, char *err, size_t errsize)
{
    if (!ev5_validate(p, err, errsize))
        return NULL;
    alpha_sched *s = malloc(sizeof *s + (alpha_optable_len + 2) * sizeof(ev5_issue));
    if (!s || !ev5_groups_build(p, &s->groups)) {
        snprintf(err, errsize, "%s", s ? "EV5 issue-group table too large" : "out of memory");
        free(s);
        return NULL;
    }
    s->p = *p;
    for (size_t i = 0; i < alpha_optable_len; i++)
        ev5_issue_of(p, &alpha_optable[i], false, &s->issue[i]);
    ev5_issue_of(p, NULL, false, &s->issue[alpha_optable_len]);
    int ldq_u = alpha_lookup("ldq_u");
    ev5_issue_of(p, ldq_u >= 0 ? &alpha_optable[ldq_u] : NULL, true, &s->issue[alpha_optable_len + 1]);
    return s;
}

void alpha_sched_free(alpha_sched *s) { free(s); }
const ev5_params *alpha_sched_params(const alpha_sched *s) { return &s->p; }
const ev5_groups *alpha_sched_groups(const alpha_sched *s) { return &s->groups; }

const ev5_issue *alpha_sched_issue(const alpha_sched *s, uint16_t row)
{
    return &s->issue[row <= alpha_optable_len + 1 ? row : alpha_optable_len];
}

/* A register field of role r: the register read, or NOREG. */
static uint8_t reg_of(uint8_t role, unsigned field, bool read)
{
    if (field == 31)
        return ALPHA_SCHED_NOREG;
    switch (role) {
    case RR_IR: return read ? (uint8_t)field : ALPHA_SCHED_NOREG;
    case RR_IW: return read ? ALPHA_SCHED_NOREG : (uint8_t)field;
    case RR_IRW: return (uint8_t)field;
    case RR_FR: return read ? (uint8_t)(32 + field) : ALPHA_SCHED_NOREG;
    case RR_FW: return read ? ALPHA_SCHED_NOREG : (uint8_t)(32 + field);
    case RR_FRW: return (uint8_t)(32 + field);
    default: return ALPHA_SCHED_NOREG;
    }
}

void alpha_sched_op_of(const alpha_insn *i, alpha_sched_op *out)
{
    *out = (alpha_sched_op){ .row = alpha_sched_unknown(),
                             .src = { ALPHA_SCHED_NOREG, ALPHA_SCHED_NOREG, ALPHA_SCHED_NOREG },
                             .dst = ALPHA_SCHED_NOREG };
    const alpha_opdef *d = i->op;
    if (!d)
        return;
    /* UNOP keeps its registers: it waits for its base register like the
     * load it is spelled as (and writes R31, nothing) */
    out->row = alpha_is_unop(i) ? alpha_sched_unop() : i->id;
    const uint8_t roles[3] = { d->ra, d->rb, d->rc };
    const unsigned field[3] = { i->ra, i->rb, i->rc };
    for (int f = 0; f < 3; f++) {
        out->src[f] = reg_of(roles[f], field[f], true);
        uint8_t w = reg_of(roles[f], field[f], false);
        if (w != ALPHA_SCHED_NOREG)
            out->dst = w;
    }
    if (d->format == AF_OPR && i->islit)
        out->src[1] = ALPHA_SCHED_NOREG;
}

#define NONE INT64_MIN          /* a time from before the run: ready */

/* What the run has made so far. */
typedef struct state {
    int64_t ready[64], early[64];   /* when each register's value is ready
                                       (early: for a same-cycle branch/CMOV) */
    int32_t writer[64];
    int64_t unit_free[3];
    int32_t unit_user[3];
    int32_t mem_k;                  /* the group's load or store, -1: none */
} state;

/* Why an instruction that issued the cycle after its predecessor (in t)
 * did not join its group; held: its operand or unit (o->reason) was
 * ready only then. */
static void why_not_joined(const alpha_sched *s, const state *st, uint8_t group, const ev5_issue *is, bool newfb,
                           bool held, alpha_sched_slot *o)
{
    if (newfb) {
        o->reason = ASR_FETCH_BLOCK;
        o->culprit = -1;
        o->operand = 0;
    } else if (held) {
        /* the operand or unit is the reason */
    } else if (is->mem && s->groups.next[group][is->pipe] != EV5_NO_ROOM) {
        o->reason = ASR_LOAD_STORE;
        o->culprit = st->mem_k;
    } else {
        o->reason = ASR_SLOTTING;
        o->culprit = -1;
    }
    if (!held || newfb)
        o->operand = 0;
}

uint32_t alpha_sched_ops(const alpha_sched *s, const alpha_sched_op *ops, uint32_t n, uint64_t pc,
                         alpha_sched_slot *out)
{
    if (!n)
        return 0;
    state st;
    for (int r = 0; r < 64; r++) {
        st.ready[r] = st.early[r] = NONE;
        st.writer[r] = -1;
    }
    for (int u = 0; u < 3; u++) {
        st.unit_free[u] = NONE;
        st.unit_user[u] = -1;
    }
    st.mem_k = -1;
    uint8_t group = 0;
    int64_t t = -1;             /* the predecessor's issue: instruction 0 costs one cycle */
    for (uint32_t k = 0; k < n; k++) {
        const alpha_sched_op *op = &ops[k];
        const ev5_issue *is = alpha_sched_issue(s, op->row);
        alpha_sched_slot *o = &out[k];
        *o = (alpha_sched_slot){ .culprit = -1, .reason = ASR_DUAL };
        const uint64_t a = pc + 4 * (uint64_t)k;
        bool newfb = k == 0 || !ev5_same_fetch_block(&s->p, a - 4, a);

        /* What holds it: a later constraint is the cause only if strictly later. */
        int64_t earliest = NONE;
        for (int f = 0; f < 3; f++) {
            unsigned r = op->src[f];
            if (r >= 64)
                continue;
            int64_t when = f == 0 && is->early ? st.early[r] : st.ready[r];
            if (when == NONE) {
                o->livein |= (uint8_t)(1u << f);
            } else if (when > earliest) {
                earliest = when;
                o->reason = ASR_DEPENDENCY;
                o->operand = (uint8_t)(1u << f);
                o->culprit = st.writer[r];
            }
        }
        if (is->unit) {
            if (st.unit_free[is->unit] == NONE) {
                o->unit_livein = true;
            } else if (st.unit_free[is->unit] > earliest) {
                earliest = st.unit_free[is->unit];
                o->reason = is->unit == EV5_UNIT_MUL ? ASR_MULTIPLIER : ASR_DIVIDER;
                o->operand = 0;
                o->culprit = st.unit_user[is->unit];
            }
        }

        uint8_t g = s->groups.next[group][is->cls];
        bool join = !newfb && group != 0 && earliest <= t && g != EV5_NO_ROOM;
        int64_t issue = t;
        if (join) {
            *o = (alpha_sched_slot){ .culprit = -1, .reason = ASR_DUAL, .livein = o->livein,
                                     .unit_livein = o->unit_livein };
            group = g;
        } else {
            issue = earliest > t + 1 ? earliest : t + 1;
            o->m = (uint32_t)(issue - t);
            o->stall = o->m - 1;
            if (k == 0) {
                o->reason = ASR_FIRST;
                o->culprit = -1;
                o->operand = 0;
            } else if (!o->stall) {
                why_not_joined(s, &st, group, is, newfb, earliest > t, o);
            }
            group = s->groups.next[0][is->cls];
            st.mem_k = -1;
        }
        o->issue = (uint32_t)issue;
        o->group = group;
        if (is->mem)
            st.mem_k = (int32_t)k;

        if (op->dst < 64) {
            st.ready[op->dst] = issue + is->lat;
            st.early[op->dst] = is->fast ? issue : issue + is->lat;
            st.writer[op->dst] = (int32_t)k;
        }
        if (is->unit) {
            st.unit_free[is->unit] = issue + is->busy;
            st.unit_user[is->unit] = (int32_t)k;
        }
        t = issue;
    }
    return (uint32_t)(t + 1);
}

/* Runs up to this long are converted on the stack, longer ones on the
 * heap (and give 0 cycles when memory runs out). */
#define CHUNK 256

uint32_t alpha_sched_block(const alpha_sched *s, const alpha_insn *ins, uint32_t n, uint64_t pc,
                           alpha_sched_slot *out)
{
    if (!n)
        return 0;
    alpha_sched_op buf[CHUNK], *ops = n <= CHUNK ? buf : malloc(n * sizeof *ops);
    if (!ops)
        return 0;
    for (uint32_t k = 0; k < n; k++)
        alpha_sched_op_of(&ins[k], &ops[k]);
    uint32_t cycles = alpha_sched_ops(s, ops, n, pc, out);
    if (ops != buf)
        free(ops);
    return cycles;
}

uint32_t alpha_sched_words(const alpha_sched *s, const uint32_t *words, uint32_t n, uint64_t pc,
                           alpha_sched_slot *out)
{
    if (!n)
        return 0;
    alpha_sched_op buf[CHUNK], *ops = n <= CHUNK ? buf : malloc(n * sizeof *ops);
    if (!ops)
        return 0;
    for (uint32_t k = 0; k < n; k++) {
        alpha_insn in;
        alpha_decode(words[k], &in);
        alpha_sched_op_of(&in, &ops[k]);
    }
    uint32_t cycles = alpha_sched_ops(s, ops, n, pc, out);
    if (ops != buf)
        free(ops);
    return cycles;
}
