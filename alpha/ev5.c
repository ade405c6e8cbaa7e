/*
 * alpha/ev5.c: default EV5 parameters, their sources, and access by name.
 *
 * Sources: "fact" entries restate shared alpha-facts.md (which cites the
 * DCPI paper, gcc's ev5.md scheduling model and the 21164PC manual);
 * "assumption" entries are our choice where no source gave a number.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/ev5.h"

#define F(field) offsetof(ev5_params, field)

const ev5_param_desc ev5_param_table[] = {
    { "issue_width", F(issue_width), "fact: up to four instructions a cycle" },
    { "fetch_block", F(fetch_block), "fact: naturally aligned 16-byte fetch block" },
    { "lat.iadd", F(lat[LAT_IADD]), "fact: integer ALU 1 cycle" },
    { "lat.ilogic", F(lat[LAT_ILOGIC]), "fact: 1 cycle (0 to a branch or CMOV in the same cycle)" },
    { "lat.icmp", F(lat[LAT_ICMP]), "fact: 1 cycle (0 to a branch or CMOV in the same cycle)" },
    { "lat.shift", F(lat[LAT_SHIFT]), "fact: integer ALU 1 cycle" },
    { "lat.cmov", F(lat[LAT_CMOV]), "fact: CMOV 2 cycles" },
    { "lat.imull", F(lat[LAT_IMULL]), "fact: IMULL 8 cycles" },
    { "lat.imulq", F(lat[LAT_IMULQ]), "fact: IMULQ 12 cycles" },
    { "lat.umulh", F(lat[LAT_UMULH]), "fact: UMULH 14 cycles" },
    { "lat.load", F(lat[LAT_LOAD]), "fact: load hitting the D-cache 2 cycles" },
    { "lat.store", F(lat[LAT_STORE]), "assumption: stores produce no register result" },
    { "lat.ldl", F(lat[LAT_LDL]), "assumption: LDx_L as a load, 2 cycles" },
    { "lat.stc", F(lat[LAT_STC]), "assumption: STx_C result ready after 2 cycles" },
    { "lat.branch", F(lat[LAT_BRANCH]), "assumption: BR/BSR link register ready next cycle" },
    { "lat.jump", F(lat[LAT_JUMP]), "assumption: JSR link register ready next cycle" },
    { "lat.fadd", F(lat[LAT_FADD]), "fact: FP add/mul/FCMOV/CPYS 4 cycles" },
    { "lat.fmul", F(lat[LAT_FMUL]), "fact: FP multiply 4 cycles" },
    { "lat.fdivs", F(lat[LAT_FDIVS]), "fact: FDIV single 15 cycles" },
    { "lat.fdivt", F(lat[LAT_FDIVT]), "fact: FDIV double 22 cycles" },
    { "lat.fsqrts", F(lat[LAT_FSQRTS]), "assumption: the 21164 has no SQRT; as FDIV single" },
    { "lat.fsqrtt", F(lat[LAT_FSQRTT]), "assumption: the 21164 has no SQRT; as FDIV double" },
    { "lat.itof", F(lat[LAT_ITOF]), "assumption: FIX moves (not on the 21164) 4 cycles" },
    { "lat.misc", F(lat[LAT_MISC]), "assumption: RPCC/MB/TRAPB 1 cycle" },
    { "lat.pal", F(lat[LAT_PAL]), "assumption: see syscall_cycles" },
    { "lat.mvi", F(lat[LAT_MVI]), "assumption: MVI/CIX (not on the 21164) 2 cycles" },
    { "imul_busy.mull", F(imul_busy[0]), "assumption: multiplier not pipelined: busy for the latency" },
    { "imul_busy.mulq", F(imul_busy[1]), "assumption: multiplier not pipelined: busy for the latency" },
    { "imul_busy.umulh", F(imul_busy[2]), "assumption: multiplier not pipelined: busy for the latency" },
    { "fdiv_busy.s", F(fdiv_busy_s), "fact: divider not pipelined" },
    { "fdiv_busy.t", F(fdiv_busy_t), "fact: divider not pipelined" },
    { "icache.size", F(icache.size), "fact: I-cache 8 KB" },
    { "icache.line", F(icache.line), "fact: 32-byte lines" },
    { "icache.ways", F(icache.ways), "fact: direct-mapped" },
    { "icache.latency", F(icache.latency), "assumption: hit costs nothing beyond issue" },
    { "dcache.size", F(dcache.size), "fact: D-cache 8 KB" },
    { "dcache.line", F(dcache.line), "fact: 32-byte lines" },
    { "dcache.ways", F(dcache.ways), "fact: direct-mapped, write-through, read-allocate" },
    { "dcache.latency", F(dcache.latency), "fact: L1 2 cycles (gcc ev5 model)" },
    { "scache.size", F(scache.size), "fact: S-cache 96 KB on chip" },
    { "scache.line", F(scache.line), "assumption: 64-byte blocks" },
    { "scache.ways", F(scache.ways), "fact: 3-way set associative, write-back" },
    { "scache.latency", F(scache.latency), "fact: L2 12 cycles (gcc ev5 model)" },
    { "bcache.size", F(bcache.size), "fact: optional, 1-64 MB; assumption: 2 MB fitted" },
    { "bcache.line", F(bcache.line), "assumption: 64-byte blocks" },
    { "bcache.ways", F(bcache.ways), "assumption: direct-mapped" },
    { "bcache.latency", F(bcache.latency), "fact: L3 38 cycles (gcc ev5 model)" },
    { "mem_latency", F(mem_latency), "assumption: 80 cycles to memory after a B-cache miss" },
    { "bcache_fill_busy", F(bcache_fill_busy), "assumption: a 64-byte line crosses a 16-byte B-cache port in 4 cycles" },
    { "mem_fill_busy", F(mem_fill_busy), "assumption: about 1.8 bytes a cycle from memory, 36 cycles per 64-byte line" },
    { "itb_entries", F(itb_entries), "fact: ITB 48 entries, fully associative" },
    { "dtb_entries", F(dtb_entries), "fact: DTB 64 entries" },
    { "page_size", F(page_size), "fact: 8 KB pages" },
    { "itb_miss_cycles", F(itb_miss_cycles), "assumption: PALcode refill about 30 cycles" },
    { "dtb_miss_cycles", F(dtb_miss_cycles), "assumption: PALcode refill about 30 cycles" },
    { "write_buffer_entries", F(write_buffer_entries), "fact: six-entry write buffer (DCPI paper)" },
    { "write_buffer_drain", F(write_buffer_drain), "assumption: one entry retires to the S-cache every 5 cycles" },
    { "bp_entries", F(bp_entries), "assumption: one 2-bit counter per I-cache instruction slot (2048)" },
    { "mispredict_penalty", F(mispredict_penalty), "assumption: 5 cycles" },
    { "jump_mispredict_penalty", F(jump_mispredict_penalty), "assumption: a wrong JMP/JSR hint costs like a mispredict" },
    { "return_stack", F(return_stack), "fact: 12-entry return stack for RET" },
    { "taken_bubble", F(taken_bubble), "assumption: 1 fetch bubble after a taken branch" },
    { "syscall_cycles", F(syscall_cycles), "assumption: a system call costs 300 cycles" },
    { "pmu_skid", F(pmu_skid), "fact: interrupt delivered six cycles after the overflow (DCPI paper)" },
};
const size_t ev5_param_count = sizeof ev5_param_table / sizeof ev5_param_table[0];

void ev5_defaults(ev5_params *p)
{
    memset(p, 0, sizeof *p);
    p->issue_width = 4;
    p->fetch_block = 16;
    p->lat[LAT_IADD] = p->lat[LAT_ILOGIC] = p->lat[LAT_ICMP] = p->lat[LAT_SHIFT] = 1;
    p->lat[LAT_CMOV] = 2;
    p->lat[LAT_IMULL] = 8;
    p->lat[LAT_IMULQ] = 12;
    p->lat[LAT_UMULH] = 14;
    p->lat[LAT_LOAD] = 2;
    p->lat[LAT_LDL] = 2;
    p->lat[LAT_STC] = 2;
    p->lat[LAT_BRANCH] = p->lat[LAT_JUMP] = 1;
    p->lat[LAT_FADD] = p->lat[LAT_FMUL] = 4;
    p->lat[LAT_FDIVS] = p->lat[LAT_FSQRTS] = 15;
    p->lat[LAT_FDIVT] = p->lat[LAT_FSQRTT] = 22;
    p->lat[LAT_ITOF] = 4;
    p->lat[LAT_MISC] = 1;
    p->lat[LAT_PAL] = 1;
    p->lat[LAT_MVI] = 2;
    p->imul_busy[0] = 8;
    p->imul_busy[1] = 12;
    p->imul_busy[2] = 14;
    p->fdiv_busy_s = 15;
    p->fdiv_busy_t = 22;
    p->icache = (ev5_cache){ 8192, 32, 1, 0 };
    p->dcache = (ev5_cache){ 8192, 32, 1, 2 };
    p->scache = (ev5_cache){ 96 * 1024, 64, 3, 12 };
    p->bcache = (ev5_cache){ 2 * 1024 * 1024, 64, 1, 38 };
    p->mem_latency = 80;
    p->bcache_fill_busy = 4;
    p->mem_fill_busy = 36;
    p->itb_entries = 48;
    p->dtb_entries = 64;
    p->page_size = 8192;
    p->itb_miss_cycles = p->dtb_miss_cycles = 30;
    p->write_buffer_entries = 6;
    p->write_buffer_drain = 5;
    p->bp_entries = 2048;
    p->mispredict_penalty = 5;
    p->jump_mispredict_penalty = 5;
    p->return_stack = 12;
    p->taken_bubble = 1;
    p->syscall_cycles = 300;
    p->pmu_skid = 6;
}

static const ev5_param_desc *find(const char *name, size_t len)
{
    for (size_t i = 0; i < ev5_param_count; i++)
        if (strlen(ev5_param_table[i].name) == len && !strncmp(ev5_param_table[i].name, name, len))
            return &ev5_param_table[i];
    return NULL;
}

bool ev5_set(ev5_params *p, const char *a, char *err, size_t errsize)
{
    const char *eq = strchr(a, '=');
    if (!eq) {
        snprintf(err, errsize, "EV5 parameter '%s': expected key=value", a);
        return false;
    }
    const ev5_param_desc *d = find(a, (size_t)(eq - a));
    if (!d) {
        snprintf(err, errsize, "unknown EV5 parameter '%.*s'", (int)(eq - a), a);
        return false;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(eq + 1, &end, 0);
    if (errno || end == eq + 1 || *end || v > UINT32_MAX || eq[1] == '-') {
        snprintf(err, errsize, "EV5 parameter '%s': '%s' is not a number", d->name, eq + 1);
        return false;
    }
    *(uint32_t *)((char *)p + d->offset) = (uint32_t)v;
    return true;
}

bool ev5_get(const ev5_params *p, const char *name, uint32_t *value)
{
    const ev5_param_desc *d = find(name, strlen(name));
    if (!d)
        return false;
    *value = *(const uint32_t *)((const char *)p + d->offset);
    return true;
}

unsigned ev5_pipe_mask(alpha_pipe pipe)
{
    switch (pipe) {
    case PIPE_E0: return EV5_E0;
    case PIPE_E1: return EV5_E1;
    case PIPE_E01: return EV5_E0 | EV5_E1;
    case PIPE_FA: return EV5_FA;
    case PIPE_FM: return EV5_FM;
    case PIPE_FAM: return EV5_FA | EV5_FM;
    default: return 0;
    }
}

uint32_t ev5_latency(const ev5_params *p, const alpha_insn *i)
{
    return i->op ? p->lat[i->op->lat] : 0;
}

void ev5_issue_of(const ev5_params *p, const alpha_opdef *d, bool unop, ev5_issue *out)
{
    *out = (ev5_issue){ .pipe = EV5_PC_E01, .cls = EV5_PC_E01, .lat = p ? 1 : 0 };
    if (!d)
        return;
    switch (d->pipe) {
    case PIPE_E0: out->pipe = EV5_PC_E0; break;
    case PIPE_E1: out->pipe = EV5_PC_E1; break;
    case PIPE_FA: out->pipe = EV5_PC_FA; break;
    case PIPE_FM: out->pipe = EV5_PC_FM; break;
    case PIPE_FAM: out->pipe = EV5_PC_FAM; break;
    default: out->pipe = EV5_PC_E01; break;
    }
    out->lat = p ? p->lat[d->lat] : 0;
    if (unop) {                 /* the slot, no access, no result */
        out->cls = out->pipe;
        return;
    }
    if (d->flags & OPF_STORE)
        out->mem = EV5_MEM_STORE;
    else if ((d->flags & (OPF_LOAD | OPF_PREFETCH)) && !(d->flags & OPF_ADDR))
        out->mem = EV5_MEM_LOAD;
    out->cls = (uint8_t)(out->pipe + EV5_PC_COUNT * out->mem);
    out->fast = d->lat == LAT_ICMP || d->lat == LAT_ILOGIC;
    /* FP branches test a register of their own pipe: no early path */
    out->early = d->lat == LAT_CMOV || (d->flow == FLOW_CBRANCH && d->pipe != PIPE_FA);
    out->barrier = (d->flags & OPF_BARRIER) != 0;
    switch (d->lat) {
    case LAT_IMULL: out->unit = EV5_UNIT_MUL; out->busy = p ? p->imul_busy[0] : 0; break;
    case LAT_IMULQ: out->unit = EV5_UNIT_MUL; out->busy = p ? p->imul_busy[1] : 0; break;
    case LAT_UMULH: out->unit = EV5_UNIT_MUL; out->busy = p ? p->imul_busy[2] : 0; break;
    case LAT_FDIVS: case LAT_FSQRTS: out->unit = EV5_UNIT_DIV; out->busy = p ? p->fdiv_busy_s : 0; break;
    case LAT_FDIVT: case LAT_FSQRTT: out->unit = EV5_UNIT_DIV; out->busy = p ? p->fdiv_busy_t : 0; break;
    default: break;
    }
}

void ev5_issue_insn(const ev5_params *p, const alpha_insn *i, ev5_issue *out)
{
    ev5_issue_of(p, i->op, alpha_is_unop(i), out);
}

/* A group as counts of instructions per pipe class, and its memory kinds. */
typedef struct gstate {
    uint8_t n[EV5_PC_COUNT], ld, st;
} gstate;

bool ev5_groups_build(const ev5_params *p, ev5_groups *g)
{
    gstate st[EV5_GROUP_STATES];
    uint32_t ng = 1;
    memset(&st[0], 0, sizeof st[0]);
    for (uint32_t i = 0; i < ng; i++) {
        int size = 0;
        for (int k = 0; k < EV5_PC_COUNT; k++)
            size += st[i].n[k];
        g->size[i] = (uint8_t)size;
        for (int cls = 0; cls < EV5_GROUP_CLASSES; cls++) {
            int pipe = cls % EV5_PC_COUNT, mem = cls / EV5_PC_COUNT;
            gstate x = st[i];
            x.n[pipe]++;
            const uint8_t *n = x.n;
            bool ok = (uint32_t)size < p->issue_width && n[EV5_PC_E0] <= 1 && n[EV5_PC_E1] <= 1 &&
                      n[EV5_PC_E0] + n[EV5_PC_E1] + n[EV5_PC_E01] <= 2 && n[EV5_PC_FA] <= 1 &&
                      n[EV5_PC_FM] <= 1 && n[EV5_PC_FA] + n[EV5_PC_FM] + n[EV5_PC_FAM] <= 2 &&
                      !(mem == EV5_MEM_LOAD && x.st) && !(mem == EV5_MEM_STORE && x.ld);
            g->next[i][cls] = EV5_NO_ROOM;
            if (!ok)
                continue;
            x.ld |= mem == EV5_MEM_LOAD;
            x.st |= mem == EV5_MEM_STORE;
            uint32_t j = 0;
            while (j < ng && memcmp(&st[j], &x, sizeof x))
                j++;
            if (j == ng) {
                if (ng == EV5_GROUP_STATES)
                    return false;
                st[ng++] = x;
            }
            g->next[i][cls] = (uint8_t)j;
        }
    }
    g->count = ng;
    return true;
}

static bool pow2(uint32_t v) { return v && !(v & (v - 1)); }

static bool cache_ok(const ev5_cache *c, const char *name, bool optional, char *err, size_t errsize)
{
    if (optional && c->size == 0)
        return true;
    if (!pow2(c->line) || c->line < 8 || c->line > 4096) {
        snprintf(err, errsize, "EV5 parameter '%s.line': must be a power of two from 8 to 4096", name);
        return false;
    }
    if (c->ways < 1 || c->ways > 64) {
        snprintf(err, errsize, "EV5 parameter '%s.ways': must be from 1 to 64", name);
        return false;
    }
    uint64_t sets = (uint64_t)c->size / c->line / c->ways;
    if (!sets || sets * c->line * c->ways != c->size || !pow2((uint32_t)sets) || c->size > (1u << 30)) {
        snprintf(err, errsize,
                 "EV5 parameter '%s.size': must be line x ways x a power of two, at most 1 GB", name);
        return false;
    }
    return true;
}

bool ev5_validate(const ev5_params *p, char *err, size_t errsize)
{
    struct { const char *name; uint32_t v, lo, hi; bool p2; } r[] = {
        { "issue_width", p->issue_width, 1, 4, false },
        { "fetch_block", p->fetch_block, 4, 64, true },
        { "page_size", p->page_size, 4096, 1u << 24, true },
        { "itb_entries", p->itb_entries, 1, 4096, false },
        { "dtb_entries", p->dtb_entries, 1, 4096, false },
        { "write_buffer_entries", p->write_buffer_entries, 1, 32, false },
        { "bp_entries", p->bp_entries, 1, 1u << 20, true },
        { "return_stack", p->return_stack, 0, 1024, false },
        { "pmu_skid", p->pmu_skid, 0, 1000, false },
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i].v < r[i].lo || r[i].v > r[i].hi || (r[i].p2 && !pow2(r[i].v))) {
            snprintf(err, errsize, "EV5 parameter '%s': must be %s from %u to %u", r[i].name,
                     r[i].p2 ? "a power of two" : "a number", r[i].lo, r[i].hi);
            return false;
        }
    for (int i = 0; i < LAT_COUNT; i++)
        if (p->lat[i] > 255) {
            snprintf(err, errsize, "EV5 latency parameters must be at most 255 cycles");
            return false;
        }
    if (p->imul_busy[0] > 255 || p->imul_busy[1] > 255 || p->imul_busy[2] > 255 ||
        p->fdiv_busy_s > 255 || p->fdiv_busy_t > 255) {
        snprintf(err, errsize, "EV5 busy-unit parameters must be at most 255 cycles");
        return false;
    }
    return cache_ok(&p->icache, "icache", false, err, errsize) &&
           cache_ok(&p->dcache, "dcache", false, err, errsize) &&
           cache_ok(&p->scache, "scache", false, err, errsize) &&
           cache_ok(&p->bcache, "bcache", true, err, errsize);
}
