/*
 * machine/values.c: value sampling, after DCPI's value-sampling extension.
 *
 * A "values" interrupt (pmu.c) starts a run in the thread it interrupted:
 * the thread's next `length` instructions are recorded with what they
 * produced.  The real system interpreted them in the interrupt handler;
 * here the thread runs them in the values executor (exec_body.h compiled
 * a third time), which keeps each instruction's destination register, and
 * the cycle model, fed those blocks without static schedules, notes each
 * load's latency.  What the handler's interpreter would have cost is
 * charged to the CPU: AXP_VALUES_ENTRY_CYCLES when the run starts and
 * AXP_VALUES_INSN_CYCLES for each instruction it passes over (the random
 * skip before recording) or records.
 *
 * A run ends after `length` instructions or after a system call or
 * another PAL call that changes control (the interpreter gave up at
 * traps); a fault ends the block it hit unrecorded; a thread that leaves
 * its CPU keeps its run for when it comes back.  An interrupt that finds its thread in a
 * run already starts none (counted as "overlapping").  Without the cycle
 * model on its own host thread (timing.c does not start it with values
 * on), interrupts arrive while the interrupted thread is still on the CPU.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "alpha/insn.h"
#include "machine/axp.h"
#include "machine/cycles.h"

struct values {
    uint32_t length;
    axp_value_hook fn;
    void *ctx;
    cycles_load *log;           /* per CPU, CYCLES_BLOCK_MAX each */
    uint32_t skip;              /* a run first passes over [0, skip) instructions */
    uint64_t rng;
    uint64_t runs, overlapping, idle, nomem, skipped, recorded, charged, next_run;
};

static struct values *vs_get(machine *m)
{
    if (!m->vs && (m->vs = calloc(1, sizeof *m->vs))) {
        m->vs->length = AXP_VALUES_DEFAULT;
        m->vs->skip = AXP_VALUES_SKIP_DEFAULT;
        m->vs->rng = 0x9e3779b97f4a7c15ULL;
    }
    return m->vs;
}

int axp_set_values_length(axp_machine *m, uint64_t length, char *err, size_t errsz)
{
    if (length < 1 || length > AXP_VALUES_MAX) {
        snprintf(err, errsz, "--values-length: expected a number from 1 to %d, got %" PRIu64, AXP_VALUES_MAX,
                 length);
        return -1;
    }
    if (!vs_get(m)) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    m->vs->length = (uint32_t)length;
    return 0;
}

int axp_set_values_skip(axp_machine *m, uint64_t skip, char *err, size_t errsz)
{
    if (skip > AXP_VALUES_MAX) {
        snprintf(err, errsz, "--values-skip: expected a number from 0 to %d, got %" PRIu64, AXP_VALUES_MAX, skip);
        return -1;
    }
    if (!vs_get(m)) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    m->vs->skip = (uint32_t)skip;
    return 0;
}

void axp_set_value_hook(axp_machine *m, axp_value_hook fn, void *ctx)
{
    if (vs_get(m)) {
        m->vs->fn = fn;
        m->vs->ctx = ctx;
    }
}

int values_start(machine *m, char *err, size_t errsz)
{
    struct values *v = vs_get(m);
    if (!v || !(v->log = calloc((size_t)m->ncpu * CYCLES_BLOCK_MAX, sizeof *v->log))) {
        snprintf(err, errsz, "out of memory setting up value sampling");
        return -1;
    }
    return 0;
}

void values_free(machine *m)
{
    if (m->vs) {
        free(m->vs->log);
        free(m->vs);
        m->vs = NULL;
    }
}

void values_interrupt(void *ctx, int cpuno, uint64_t pc)
{
    machine *m = ctx;
    struct values *v = m->vs;
    thread *t = m->cpus[cpuno].cur;
    if (!t || t->state != T_RUNNABLE) {
        v->idle++;
        return;
    }
    if (t->vleft) {
        v->overlapping++;
        return;
    }
    if (!t->vres && !(t->vres = malloc(2 * BLOCK_MAX * sizeof *t->vres))) {
        v->nomem++;
        return;
    }
    v->runs++;
    t->vleft = v->length;
    t->vskip = 0;
    if (v->skip > 1) {      /* xorshift64*, as the PMU's periods */
        v->rng ^= v->rng >> 12;
        v->rng ^= v->rng << 25;
        v->rng ^= v->rng >> 27;
        t->vskip = (uint32_t)(((v->rng * 0x2545f4914f6cdd1dULL) >> 32) % v->skip);
    }
    t->vindex = 0;
    t->vrun = ++v->next_run;
    t->vipc = pc;
    cycles_charge(m->cpus[cpuno].core, AXP_VALUES_ENTRY_CYCLES);
    v->charged += AXP_VALUES_ENTRY_CYCLES;
}

/* Which register file an instruction writes: 1 integer, 2 FP, 0 none. */
static int dest_file(const alpha_opdef *op)
{
    const uint8_t roles[3] = { op->ra, op->rb, op->rc };
    for (int i = 0; i < 3; i++) {
        if (roles[i] == RR_IW || roles[i] == RR_IRW)
            return 1;
        if (roles[i] == RR_FW || roles[i] == RR_FRW)
            return 2;
    }
    return 0;
}

/* What instruction i of b (of n run, then next_pc) produced, into r;
 * *li is where the block's next load is looked for in the model's log. */
static void fill(const thread *t, const block *b, uint32_t i, uint32_t n, uint64_t next_pc, const cycles_load *log,
                 uint32_t nlog, uint32_t *li, axp_value *r)
{
    const dinsn *d = &b->ins[i];
    uint64_t pc = r->pc, next = i + 1 < n ? pc + 4 : next_pc;
    if (d->id >= alpha_optable_len)
        return;
    const alpha_opdef *op = &alpha_optable[d->id];
    int file = dest_file(op);
    if (file && d->c < 31) {
        r->has |= AXP_V_RESULT;
        r->result = t->vres[i + (file == 2 ? BLOCK_MAX : 0)];
    }
    bool unop = (op->flags & OPF_UNOP) && d->c == 32;
    if ((op->flags & (OPF_LOAD | OPF_STORE)) && !(op->flags & OPF_ADDR) && !unop) {
        r->has |= AXP_V_EA;
        r->ea = t->ea[i];
    }
    if ((op->flags & OPF_LOAD) && !unop) {
        /* the model's loads come in the same order; it may time as
         * loads what alpha/ does not call one (prefetches) */
        uint32_t j = *li;
        while (j < nlog && log[j].pc != pc)
            j++;
        if (j < nlog) {
            r->has |= AXP_V_LATENCY;
            r->latency = log[j].latency;
            r->level = log[j].level;
            *li = j + 1;
        }
    }
    if (op->flow == FLOW_CBRANCH) {
        r->has |= AXP_V_BRANCH;
        r->taken = next != pc + 4;
    } else if (op->format == AF_JMP) {
        r->has |= AXP_V_TARGET;
        r->target = next;
    }
}

/* The first n instructions of b ran, then control went to next_pc: the
 * run passes over what it still skips, and records the rest of its share
 * of them. */
void values_record(thread *t, const block *b, uint32_t n, uint64_t next_pc, const cycles_load *log, uint32_t nlog)
{
    machine *m = t->m;
    struct values *v = m->vs;
    uint32_t i = n < t->vskip ? n : t->vskip, li = 0;
    uint32_t end = n - i < t->vleft ? n : i + t->vleft;
    t->vskip -= i;
    v->skipped += i;
    for (; i < end; i++) {
        axp_value r = { .cpu = m->curcpu->id, .pid = t->p->pid, .tid = t->tid, .run = t->vrun,
                        .index = t->vindex++, .ipc = t->vipc, .pc = b->pc + 4 * (uint64_t)i,
                        .word = b->ins[i].word, .id = b->ins[i].id };
        fill(t, b, i, n, next_pc, log, nlog, &li, &r);
        t->vleft--;
        v->recorded++;
        if (v->fn)
            v->fn(v->ctx, &r);
    }
    if (b->exit == BX_PAL && end == n)      /* the interpreter stops at a trap */
        t->vleft = t->vskip = 0;
    uint64_t cost = (uint64_t)n * AXP_VALUES_INSN_CYCLES;
    if (end < n)
        cost = (uint64_t)end * AXP_VALUES_INSN_CYCLES;
    v->charged += cost;
    cycles_charge(m->curcpu->core, cost);
}

cycles_load *values_log(machine *m, int cpuno)
{
    return m->vs->log + (size_t)cpuno * CYCLES_BLOCK_MAX;
}

void values_write_stats(machine *m, FILE *f)
{
    const struct values *v = m->vs;
    if (!v || !v->log)
        return;
    fprintf(f,
            "  \"values\": {\"length\": %u, \"skip\": %u, \"runs\": %" PRIu64 ", \"overlapping\": %" PRIu64
            ", \"idle\": %" PRIu64 ", \"no_memory\": %" PRIu64 ", \"skipped\": %" PRIu64 ", \"recorded\": %" PRIu64
            ", \"cycles_charged\": %" PRIu64 "},\n",
            v->length, v->skip, v->runs, v->overlapping, v->idle, v->nomem, v->skipped, v->recorded, v->charged);
}
