/*
 * rewriter/instrument.c: which code goes where to count Ball-Larus paths
 * (docs/instrument.md), and its words.
 *
 * Every activation's path sum lives on a shadow stack in the data region:
 * an entry head pushes the entry edge's increment, a chord adds its
 * increment, a path's end counts counters[sum + inc] and pops (a return or
 * tail branch) or restarts the sum (a back edge).  Edge code goes before
 * the block's last instruction when that is a branch (a conditional one
 * chooses the code of the edge it will take), after it when the block
 * falls through or calls.  Each snippet uses three registers free there.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/liveness.h"
#include "cfg/paths.h"
#include "common/escape.h"
#include "rewriter/internal.h"
#include "rewriter/rtblob.h"
#include "rewriter/runtime/rt.h"


#define MAX_DENSE (1u << 16)     /* paths a procedure's counter table holds */
#define SS_SLOTS (1u << 19)      /* shadow stack: activations */
#define SS_SLACK 1024u           /* slots below the first, for unbalanced pops */
#define PAGE 8192u

const char *rw_noins_name(unsigned r)
{
    static const char *const n[RW_NOINS_N] = {
        "no path numbering", "too many paths", "no free registers", "jump table",
        "coroutine or linking jump", "not moved freely",
    };
    return r < RW_NOINS_N ? n[r] : "?";
}

/* ---- words ---------------------------------------------------------------- */

static uint32_t mem(unsigned op, unsigned ra, unsigned rb, int64_t disp)
{
    return (uint32_t)op << 26 | ra << 21 | rb << 16 | ((uint32_t)disp & 0xffff);
}

static uint32_t opr(unsigned func, unsigned ra, unsigned rb, unsigned rc)
{
    return 0x10u << 26 | ra << 21 | rb << 16 | func << 5 | rc;
}

static uint32_t bra(unsigned op, unsigned ra, int64_t words)
{
    return (uint32_t)op << 26 | ra << 21 | ((uint32_t)words & 0x1fffff);
}

#define LDA(ra, rb, d)  mem(0x08, ra, rb, d)
#define LDAH(ra, rb, d) mem(0x09, ra, rb, d)
#define LDQ(ra, rb, d)  mem(0x29, ra, rb, d)
#define STQ(ra, rb, d)  mem(0x2d, ra, rb, d)
#define ADDQ(a, b, c)   opr(0x20, a, b, c)
#define S8ADDQ(a, b, c) opr(0x32, a, b, c)
#define CMPULT(a, b, c) opr(0x1d, a, b, c)
#define ADDQI(a, l, c) (0x10u << 26 | (a) << 21 | (l) << 13 | 1u << 12 | 0x20u << 5 | (c))
#define BR(ra, w)       bra(0x30, ra, w)
#define BSR(ra, w)      bra(0x34, ra, w)
#define BEQ(ra, w)      bra(0x39, ra, w)
#define BNE(ra, w)      bra(0x3d, ra, w)
#define SUBQ(a, b, c)   opr(0x29, a, b, c)
#define RPCC(ra)        (0x18u << 26 | (ra) << 21 | 31u << 16 | 0xc000u)
#define LOW32(a, c)     (0x12u << 26 | (a) << 21 | 15u << 13 | 1u << 12 | 0x31u << 5 | (c))

typedef struct wbuf {
    uint32_t *w;             /* NULL: only count */
    uint32_t n;
    uint64_t pc;             /* address of w[0] */
    int bias;                /* sp is this much below the program's (a spill) */
} wbuf;

static void put(wbuf *b, uint32_t word)
{
    if (b->w)
        b->w[b->n] = word;
    b->n++;
}

/* d split for ldah/lda: hi * 65536 + lo == d, lo signed 16 bits. */
static void split16(int64_t d, int64_t *hi, int64_t *lo)
{
    *lo = (int16_t)(d & 0xffff);
    *hi = (d - *lo) >> 16;
}

/* r = r + k, always two words. */
static void addk(wbuf *b, unsigned r, int64_t k)
{
    int64_t hi, lo;
    split16(k, &hi, &lo);
    put(b, LDAH(r, r, hi));
    put(b, LDA(r, r, lo));
}

static void constk(wbuf *b, unsigned r, int64_t k)
{
    int64_t hi, lo;
    split16(k, &hi, &lo);
    put(b, LDAH(r, REG_ZERO, hi));
    put(b, LDA(r, r, lo));
}

/* a = the region's address, read from the blob: three words. */
static void base(const rw_instr *in, wbuf *b, unsigned a)
{
    uint64_t here = b->pc + 4ull * (b->n + 1);
    int64_t d = (int64_t)(in->blob_addr + RT_B_REGABS - here), hi, lo;
    split16(d, &hi, &lo);
    put(b, BR(a, 0));
    put(b, LDAH(a, a, hi));
    put(b, LDQ(a, a, lo));
}

/* The cycles since the last path start or stop into s (the counter's low
 * 32 bits wrap: the difference is taken modulo 2^32), the counter noted;
 * a holds the region, x is clobbered. */
static void lap(wbuf *b, unsigned a, unsigned s, unsigned x)
{
    put(b, RPCC(x));
    put(b, LDQ(s, a, RT_LAST));
    put(b, STQ(x, a, RT_LAST));
    put(b, SUBQ(x, s, s));
    put(b, LOW32(s, s));
}

/* x = the running activation's slot, read from the region at a, past the
 * slots of activations a longjmp (or anything else that cut frames off
 * the stack) left: theirs were entered with a lower stack pointer than
 * the one now.  The slot is stored back; s is clobbered. */
static void top(wbuf *b, unsigned a, unsigned s, unsigned x)
{
    put(b, LDQ(x, a, RT_SSP));
    put(b, LDQ(s, a, RT_THREADED));     /* threads share the stack: */
    put(b, BNE(s, 7));                  /* another's slots are not stale */
    put(b, LDQ(s, x, 16));
    put(b, BEQ(s, 5));                  /* below the first slot */
    put(b, LDA(s, s, -b->bias));        /* the program's sp, not a spill's */
    put(b, CMPULT(s, REG_SP, s));
    put(b, BEQ(s, 2));
    put(b, LDA(x, x, -RT_SLOT));
    put(b, BR(REG_ZERO, -7));
    put(b, STQ(x, a, RT_SSP));
}

/* Path x (a sum, not yet checked) of procedure ip ran once, for s cycles:
 * its count and cycles grow when x < npaths.  a is clobbered. */
static void count(const rw_instr *in, wbuf *b, const rw_iproc *ip, unsigned a, unsigned s, unsigned x)
{
    constk(b, a, (int64_t)ip->npaths);
    put(b, CMPULT(x, a, a));
    put(b, BEQ(a, 13));
    base(in, b, a);
    addk(b, a, (int64_t)ip->counts);
    put(b, ADDQ(x, x, x));
    put(b, S8ADDQ(x, a, a));
    put(b, LDQ(x, a, 0));
    put(b, ADDQI(x, 1, x));
    put(b, STQ(x, a, 0));
    put(b, LDQ(x, a, 8));
    put(b, ADDQ(x, s, x));
    put(b, STQ(x, a, 8));
}

/* The ops, with registers a, s, x.  A slot is {sum, cycles so far}: an
 * entry charges the caller's path with the cycles up to the call, a
 * path's end adds the cycles since the last start or stop to its own. */
static void op_words(const rw_instr *in, wbuf *b, const rw_op *op, const uint8_t *reg)
{
    unsigned a = reg[0], s = reg[1], x = reg[2];
    const rw_iproc *ip = op->kind == RW_OP_HOOK || op->kind == RW_OP_PUSH ? NULL : &in->ip[op->ip];
    switch (op->kind) {
    case RW_OP_HOOK: {
        uint64_t hook = in->blob_addr + RT_B_HOOK;
        put(b, BSR(REG_AT, (int64_t)(hook - (b->pc + 4ull * (b->n + 1))) / 4));
        break;
    }
    case RW_OP_PUSH:
        base(in, b, a);
        lap(b, a, s, x);
        put(b, LDQ(x, a, RT_SSP));
        put(b, LDQ(a, x, 8));
        put(b, ADDQ(a, s, a));
        put(b, STQ(a, x, 8));
        put(b, LDA(x, x, RT_SLOT));
        base(in, b, a);
        put(b, STQ(x, a, RT_SSP));
        constk(b, s, op->k);
        put(b, STQ(s, x, 0));
        put(b, STQ(REG_ZERO, x, 8));
        put(b, LDA(s, REG_SP, b->bias));
        put(b, STQ(s, x, 16));
        break;
    case RW_OP_ADD:
        base(in, b, a);
        put(b, LDQ(s, a, RT_SSP));
        put(b, LDQ(x, s, 0));
        addk(b, x, op->k);
        put(b, STQ(x, s, 0));
        break;
    case RW_OP_END:
        base(in, b, a);
        top(b, a, s, x);
        lap(b, a, s, x);
        put(b, LDQ(x, a, RT_SSP));
        put(b, LDQ(a, x, 8));
        put(b, ADDQ(a, s, s));
        put(b, LDA(x, x, -RT_SLOT));
        base(in, b, a);
        put(b, STQ(x, a, RT_SSP));
        put(b, LDQ(x, x, RT_SLOT));
        addk(b, x, op->k);
        count(in, b, ip, a, s, x);
        break;
    case RW_OP_BACK:
        base(in, b, a);
        top(b, a, s, x);
        lap(b, a, s, x);
        put(b, LDQ(x, a, RT_SSP));
        put(b, LDQ(a, x, 8));
        put(b, ADDQ(a, s, s));
        put(b, STQ(REG_ZERO, x, 8));
        put(b, LDQ(a, x, 0));
        addk(b, a, op->k);
        /* The slot becomes the next path's: sum k2, no cycles yet; the
         * ended path's number and cycles go through it to registers. */
        put(b, STQ(a, x, 0));
        put(b, STQ(s, x, 8));
        put(b, LDQ(s, x, 0));
        constk(b, a, op->k2);
        put(b, STQ(a, x, 0));
        put(b, LDQ(a, x, 8));
        put(b, STQ(REG_ZERO, x, 8));
        count(in, b, ip, x, a, s);
        break;
    }
}

/* A snippet with no three free registers saves three below the stack
 * pointer, moved down this much while it runs (docs/instrument.md). */
#define SPILL 32

static void snip_body(const rw_instr *in, const rw_snip *sn, uint32_t cond, wbuf *bp);

static void ops_words(const rw_instr *in, wbuf *b, const rw_snip *sn, uint32_t from, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        op_words(in, b, &in->ops[sn->first + from + i], sn->reg);
}

/* The snippet's words at pc into w (NULL: only their number).  A split
 * tests the branch's own condition: `b!cond skip; taken code; br done;
 * skip: fall code; done:` and then the branch itself. */
static uint32_t snip_words(const rw_instr *in, const rw_snip *sn, uint32_t cond, uint64_t pc, uint32_t *w)
{
    wbuf b = { w, 0, pc, sn->spill ? SPILL : 0 };
    if (sn->spill) {
        put(&b, LDA(REG_SP, REG_SP, -SPILL));
        for (int i = 0; i < 3; i++)
            put(&b, STQ(sn->reg[i], REG_SP, 8 * i));
    }
    snip_body(in, sn, cond, &b);
    if (sn->spill) {
        for (int i = 0; i < 3; i++)
            put(&b, LDQ(sn->reg[i], REG_SP, 8 * i));
        put(&b, LDA(REG_SP, REG_SP, SPILL));
    }
    return b.n;
}

static void snip_body(const rw_instr *in, const rw_snip *sn, uint32_t cond, wbuf *bp)
{
    wbuf b = *bp;
    if (!sn->split) {
        ops_words(in, &b, sn, 0, sn->nt);
        *bp = b;
        return;
    }
    wbuf t = { NULL, 0, 0, 0 }, f = { NULL, 0, 0, 0 };
    ops_words(in, &t, sn, 0, sn->nt);
    ops_words(in, &f, sn, sn->nt, sn->nf);
    if (sn->nt) {
        uint32_t inv = cond;
        alpha_invert_branch(&inv);
        put(&b, (inv & ~0x1fffffu) | ((t.n + (sn->nf ? 1 : 0)) & 0x1fffff));
        ops_words(in, &b, sn, 0, sn->nt);
        if (sn->nf)
            put(&b, BR(REG_ZERO, f.n));
    } else {
        put(&b, (cond & ~0x1fffffu) | (f.n & 0x1fffff));
    }
    ops_words(in, &b, sn, sn->nt, sn->nf);
    *bp = b;
}

bool rw_instr_emit(rw_ctx *cx, const rw_snip *sn, uint64_t pc, uint8_t *p)
{
    uint32_t cond = 0, w[256];
    if (sn->split)
        cfg_word(cx->prog, sn->at, &cond);
    uint32_t n = snip_words(cx->ins, sn, cond, pc, NULL);
    if (n > sizeof w / sizeof w[0] || n != sn->nwords)
        return rw_fail(cx, "internal error: snippet at 0x%llx has %u words, not %u",
                       (unsigned long long)sn->at, n, sn->nwords);
    snip_words(cx->ins, sn, cond, pc, w);
    for (uint32_t i = 0; i < n; i++)
        rw_put32(p + 4 * i, w[i]);
    return true;
}

/* ---- lookup --------------------------------------------------------------- */

/* The snippets at instruction `at`, in order (head, before, after). */
const rw_snip *rw_snips_at(const rw_ctx *cx, uint64_t at, size_t *n)
{
    *n = 0;
    const rw_instr *in = cx->ins;
    if (!in || !in->nsnips)
        return NULL;
    size_t lo = 0, hi = in->nsnips;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (in->snips[mid].at < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t k = lo;
    while (k < in->nsnips && in->snips[k].at == at)
        k++;
    *n = k - lo;
    return *n ? &in->snips[lo] : NULL;
}

/* Bytes of the code at the start of the block at `at` that only some ways
 * in run: an entry's head (calls), a table edge's code (the table); the
 * procedure's branches and fall-throughs go past it. */
uint32_t rw_head_bytes(const rw_ctx *cx, uint64_t at)
{
    size_t n;
    uint32_t b = 0;
    const rw_snip *s = rw_snips_at(cx, at, &n);
    for (size_t j = 0; j < n && s[j].where <= RW_SN_INCOMING; j++)
        b += 4 * s[j].nwords;
    return b;
}

/* ---- planning ------------------------------------------------------------- */

static bool build_region(rw_ctx *cx);

typedef struct plan_st {
    rw_ctx *cx;
    rw_instr *in;
    size_t capsn, capops;
} plan_st;

static bool add_snip(plan_st *ps, const rw_snip *sn)
{
    rw_instr *in = ps->in;
    if (in->nsnips == ps->capsn) {
        ps->capsn = ps->capsn ? 2 * ps->capsn : 1024;
        rw_snip *t = realloc(in->snips, ps->capsn * sizeof *t);
        if (!t)
            return false;
        in->snips = t;
    }
    in->snips[in->nsnips++] = *sn;
    return true;
}

static bool add_op(plan_st *ps, uint8_t kind, int64_t k, int64_t k2, uint32_t ip)
{
    rw_instr *in = ps->in;
    if (in->nops == ps->capops) {
        ps->capops = ps->capops ? 2 * ps->capops : 1024;
        rw_op *t = realloc(in->ops, ps->capops * sizeof *t);
        if (!t)
            return false;
        in->ops = t;
    }
    in->ops[in->nops++] = (rw_op){ kind, k, k2, ip };
    return true;
}

/* Three free integer registers of live, temporaries first. */
static bool pick_regs(alpha_regset live, uint8_t *reg)
{
    static const uint8_t order[] = { 1, 2, 3, 4, 5, 6, 7, 8, 22, 23, 24, 25, 28, 27,
                                     16, 17, 18, 19, 20, 21, 0, 9, 10, 11, 12, 13, 14, 15 };
    int n = 0;
    for (size_t i = 0; i < sizeof order && n < 3; i++)
        if (!(live & (1ull << order[i])))
            reg[n++] = order[i];
    return n == 3;
}

/* Three registers free at a place; else three temporaries the snippet
 * saves and restores around itself. */
static void regs_for(alpha_regset live, rw_snip *sn, rw_instr *in)
{
    if (pick_regs(live, sn->reg))
        return;
    sn->spill = true;
    sn->reg[0] = 1, sn->reg[1] = 2, sn->reg[2] = 3;
    in->spills++;
}

/* What running CFG edge e does to the path sum, as ops appended. */
static bool edge_ops(plan_st *ps, const cfg_paths *pp, const cfg_proc *f, uint32_t e, uint32_t ip)
{
    uint32_t pe = pp->of_cfg[e];
    if (pe == CFG_NONE)
        return true;
    const cfg_path_edge *x = &pp->edges[pe];
    if (x->kind == CFG_PATH_EDGE_BACK_OUT) {
        const cfg_path_edge *bi = &pp->edges[pp->back_in[e]];
        return add_op(ps, RW_OP_BACK, x->inc, bi->inc, ip);
    }
    if (x->to == CFG_PATH_EXIT(f->nblocks))
        return add_op(ps, RW_OP_END, x->inc, 0, ip);
    return !x->inc || add_op(ps, RW_OP_ADD, x->inc, 0, ip);
}

static bool same_ops(const rw_instr *in, uint32_t a, uint32_t na, uint32_t b, uint32_t nb)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++)
        if (in->ops[a + i].kind != in->ops[b + i].kind || in->ops[a + i].k != in->ops[b + i].k ||
            in->ops[a + i].k2 != in->ops[b + i].k2)
            return false;
    return true;
}

static uint32_t word_at(const rw_ctx *cx, uint64_t a)
{
    uint32_t w = 0;
    cfg_word(cx->prog, a, &w);
    return w;
}

/* A jump table whose edges need different code: each edge's code goes to
 * the start of its target, where only the table's entries lead. */
static int table_snips(plan_st *ps, const cfg_proc *f, const cfg_paths *pp, const cfg_live *lv,
                       uint32_t bi, uint32_t ip)
{
    const cfg_block *b = &f->blocks[bi];
    for (uint32_t k = 0; k < b->nout; k++) {
        uint32_t e = f->out_edges[b->first_out + k], t = f->edges[e].to;
        bool seen = false;
        for (uint32_t j = 0; j < k; j++)
            seen |= f->edges[f->out_edges[b->first_out + j]].to == t;
        if (seen)
            continue;               /* parallel edges: one path edge */
        if (t >= f->nblocks || (f->blocks[t].flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY)))
            return RW_NOINS_TABLE;
        /* Other ways in skip the code (rw_head_bytes); another table
         * could not. */
        const cfg_block *tb = &f->blocks[t];
        for (uint32_t j = 0; j < tb->nin; j++) {
            const cfg_edge *x = &f->edges[f->in_edges[tb->first_in + j]];
            if (x->kind == CFG_EDGE_TABLE && x->from != bi)
                return RW_NOINS_TABLE;
        }
        rw_snip sn = { .at = tb->start, .where = RW_SN_INCOMING, .first = (uint32_t)ps->in->nops };
        if (!edge_ops(ps, pp, f, e, ip))
            return RW_NOINS_N;
        sn.nt = (uint32_t)ps->in->nops - sn.first;
        if (!sn.nt)
            continue;
        regs_for(lv->in[t], &sn, ps->in);
        if (!add_snip(ps, &sn))
            return RW_NOINS_N;
    }
    return -1;
}

/* The edge code of block b: a snippet before or after its last instruction;
 * returns a RW_NOINS_* reason, or -1 when fine. */
static int block_snip(plan_st *ps, const cfg_proc *f, const cfg_paths *pp, const cfg_live *lv,
                      uint32_t bi, uint32_t ip)
{
    rw_ctx *cx = ps->cx;
    rw_instr *in = ps->in;
    const cfg_block *b = &f->blocks[bi];
    if (!b->nout)
        return -1;
    uint64_t last = b->end - 4;
    alpha_insn li;
    alpha_decode(word_at(cx, last), &li);
    alpha_flow fl = alpha_flow_of(&li);
    rw_snip sn = { .at = last, .where = RW_SN_BEFORE, .first = (uint32_t)in->nops };
    bool links = (fl == FLOW_CALL || fl == FLOW_BRANCH || fl == FLOW_JUMP) && li.ra != REG_ZERO;
    if (fl == FLOW_COROUTINE || (links && fl != FLOW_CALL))
        return RW_NOINS_LINK;
    if (fl == FLOW_CBRANCH) {
        uint64_t t = alpha_branch_target(&li, last);
        uint32_t te = CFG_NONE, fe = CFG_NONE;
        for (uint32_t k = 0; k < b->nout; k++) {
            uint32_t e = f->out_edges[b->first_out + k];
            if (f->edges[e].target == t && te == CFG_NONE)
                te = e;
            else
                fe = e;
        }
        if (te == CFG_NONE || fe == CFG_NONE)
            return RW_NOINS_PATHS;
        if (!edge_ops(ps, pp, f, te, ip))
            return RW_NOINS_N;
        sn.nt = (uint32_t)in->nops - sn.first;
        if (!edge_ops(ps, pp, f, fe, ip))
            return RW_NOINS_N;
        sn.nf = (uint32_t)in->nops - sn.first - sn.nt;
        if (same_ops(in, sn.first, sn.nt, sn.first + sn.nt, sn.nf)) {
            in->nops -= sn.nf;
            sn.nf = 0;
        } else {
            sn.split = true;
        }
    } else {
        for (uint32_t k = 0; k < b->nout; k++) {
            uint32_t from = (uint32_t)in->nops;
            if (!edge_ops(ps, pp, f, f->out_edges[b->first_out + k], ip))
                return RW_NOINS_N;
            uint32_t n = (uint32_t)in->nops - from;
            if (k && !same_ops(in, sn.first, sn.nt, from, n)) {
                in->nops = sn.first;
                return (b->flags & CFG_BF_TABLE) ? table_snips(ps, f, pp, lv, bi, ip) : RW_NOINS_TABLE;
            }
            if (k)
                in->nops = from;
            else
                sn.nt = n;
        }
        if (fl == FLOW_CALL && links)
            sn.where = RW_SN_AFTER;
        else if (fl == FLOW_NONE || fl == FLOW_PAL)
            sn.where = RW_SN_AFTER;
    }
    if (!sn.nt && !sn.nf)
        return -1;
    alpha_regset live = sn.where == RW_SN_AFTER ? lv->out[bi] : cfg_live_before(cx->prog, f, lv, bi, last);
    regs_for(live, &sn, in);
    return add_snip(ps, &sn) ? -1 : RW_NOINS_N;
}

/* Heads of the entry blocks and the edge code of every block of f;
 * returns a RW_NOINS_* reason, or -1 when its paths will be counted. */
static int plan_paths(plan_st *ps, const cfg_proc *f, uint32_t ip)
{
    rw_ctx *cx = ps->cx;
    char err[256];
    cfg_paths pp;
    cfg_live lv;
    if (!cfg_paths_build(f, NULL, &pp, err, sizeof err))
        return RW_NOINS_PATHS;
    if (pp.npaths > MAX_DENSE) {
        cfg_paths_free(&pp);
        return RW_NOINS_LARGE;
    }
    if (!cfg_live_build(cx->prog, f, &lv, err, sizeof err)) {
        cfg_paths_free(&pp);
        return RW_NOINS_PATHS;
    }
    ps->in->ip[ip].npaths = pp.npaths;
    int why = -1;
    for (size_t e = 0; e < f->nedges && why < 0; e++) {
        const cfg_edge *x = &f->edges[e];
        if (x->kind == CFG_EDGE_TABLE && x->to < f->nblocks &&
            (f->blocks[x->to].flags & (CFG_BF_ENTRY | CFG_BF_ALTENTRY)))
            why = RW_NOINS_TABLE;     /* a table entry cannot skip a head */
        if (x->kind != CFG_EDGE_ENTRY || x->to >= f->nblocks || pp.of_cfg[e] == CFG_NONE)
            continue;
        rw_snip sn = { .at = f->blocks[x->to].start, .where = RW_SN_HEAD, .first = (uint32_t)ps->in->nops };
        if (!add_op(ps, RW_OP_PUSH, pp.edges[pp.of_cfg[e]].inc, 0, ip))
            why = RW_NOINS_N;
        sn.nt = 1;
        if (why < 0)
            regs_for(lv.in[x->to], &sn, ps->in);
        if (why < 0 && !add_snip(ps, &sn))
            why = RW_NOINS_N;
    }
    for (uint32_t b = 0; b < f->nblocks && why < 0; b++)
        if (!(f->blocks[b].flags & CFG_BF_UNREACH))
            why = block_snip(ps, f, &pp, &lv, b, ip);
    cfg_live_free(&lv);
    cfg_paths_free(&pp);
    return why;
}

static int by_place(const void *a, const void *b)
{
    const rw_snip *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return (x->where > y->where) - (x->where < y->where);
}

bool rw_instr_plan(rw_ctx *cx)
{
    rw_instr *in = calloc(1, sizeof *in);
    if (!in)
        return rw_fail(cx, "out of memory");
    cx->ins = in;
    if (!rw_rt_size())
        return rw_fail(cx, "this build of optimize-image has no runtime to instrument with "
                           "(it needs %s)", "alpha-linux-gnu-gcc at build time");
    const cfg_program *prog = cx->prog;
    plan_st ps = { cx, in, 0, 0 };
    in->ip = calloc(prog->nprocs ? prog->nprocs : 1, sizeof *in->ip);
    in->ins_proc = calloc(prog->nprocs ? prog->nprocs : 1, 1);
    if (!in->ip || !in->ins_proc)
        return rw_fail(cx, "out of memory");
    for (size_t i = 0; i < prog->nprocs; i++) {
        const cfg_proc *f = &prog->procs[i];
        const rw_proc *rp = &cx->procs[i];
        bool movable = rp->reason == RW_MOVED && !rp->rigid;
        for (uint64_t a = f->start; a < f->end; a += 4) {
            alpha_insn li;
            alpha_decode(word_at(cx, a), &li);
            if (!li.op || li.op->format != AF_PAL || li.func != PAL_CALLSYS)
                continue;
            if (!movable) {
                in->unhooked++;
                continue;
            }
            rw_snip sn = { .at = a, .where = RW_SN_BEFORE, .first = (uint32_t)in->nops, .nt = 1 };
            if (!add_op(&ps, RW_OP_HOOK, 0, 0, 0) || !add_snip(&ps, &sn))
                return rw_fail(cx, "out of memory");
            in->hooks++;
        }
        if (!movable) {
            in->noins[RW_NOINS_RIGID]++;
            continue;
        }
        size_t sn0 = in->nsnips, op0 = in->nops;
        uint32_t ip = (uint32_t)in->nip;
        in->ip[ip].proc = (uint32_t)i;
        int why = plan_paths(&ps, f, ip);
        if (why == RW_NOINS_N)
            return rw_fail(cx, "out of memory");
        if (why >= 0) {
            /* Keep its system-call hooks, drop the rest. */
            size_t k = sn0;
            for (size_t j = sn0; j < in->nsnips; j++)
                if (in->ops[in->snips[j].first].kind == RW_OP_HOOK)
                    in->snips[k++] = in->snips[j];
            in->nsnips = k;
            (void)op0;
            in->noins[why]++;
            if (cx->opt->log)
                fprintf(cx->opt->log, "paths not counted: %s 0x%llx: %s\n", f->name,
                        (unsigned long long)f->start, rw_noins_name((unsigned)why));
            continue;
        }
        in->ins_proc[i] = 1;
        in->ip[ip].counts = in->counters;
        in->counters += 16 * in->ip[ip].npaths;
        in->nip++;
    }
    qsort(in->snips, in->nsnips, sizeof *in->snips, by_place);
    for (size_t j = 0; j < in->nsnips; j++) {
        uint32_t cond = 0;
        if (in->snips[j].split)
            cfg_word(prog, in->snips[j].at, &cond);
        in->snips[j].nwords = snip_words(in, &in->snips[j], cond, 0, NULL);
    }
    in->blob_size = (rw_rt_size() + 31) & ~(uint64_t)31;
    if (!build_region(cx))
        return false;
    for (size_t j = 0; j < in->nsnips; j++) {
        uint32_t cond = 0;
        if (in->snips[j].split)
            cfg_word(prog, in->snips[j].at, &cond);
        if (snip_words(in, &in->snips[j], cond, 0, NULL) != in->snips[j].nwords)
            return rw_fail(cx, "internal error: a snippet's size depends on its counters");
    }
    return true;
}

void rw_instr_free(rw_ctx *cx)
{
    rw_instr *in = cx->ins;
    if (!in)
        return;
    free(in->snips);
    free(in->ops);
    free(in->ip);
    free(in->ins_proc);
    free(in->data);
    free(in);
    cx->ins = NULL;
}

/* ---- the data region ------------------------------------------------------ */

static void put64(uint8_t *d, size_t off, uint64_t v)
{
    rw_put64(d + off, v);
}

/* The region's contents but the addresses: the bytes the file holds, and
 * its size in memory (the shadow stack between its guard pages, then the
 * counters, are zero pages).  The counters' offsets become final. */
static bool build_region(rw_ctx *cx)
{
    rw_instr *in = cx->ins;
    const cfg_program *prog = cx->prog;
    char *txt = NULL, *lines = NULL;
    size_t txtlen = 0, lineslen = 0;
    FILE *t = open_memstream(&txt, &txtlen), *l = open_memstream(&lines, &lineslen);
    if (!t || !l) {
        if (t)
            fclose(t);
        if (l)
            fclose(l);
        return rw_fail(cx, "out of memory");
    }
    char hex[129], *real = realpath(cx->img->path, NULL);
    image_build_id_hex(cx->img, hex, sizeof hex);
    fprintf(t, "cpo-paths 1\nmetrics cycles\nimage %s ", hex[0] ? hex : "-");
    escape_write(t, real ? real : cx->img->path);
    free(real);
    fputc('\n', t);
    size_t headlen = (size_t)ftell(t);
    fputs("outside 0\nend\n", t);
    size_t envname = (size_t)ftell(t);
    fputs("CPO_PROFILE_OUT=", t);
    size_t msg = (size_t)ftell(t);
    fputs("cpo: the program started a thread: its path counts are not kept "
          "(docs/instrument.md)\n", t);
    size_t errmsg = (size_t)ftell(t);
    fputs("cpo: cannot create the path profile (or its name is over 975 bytes): ", t);
    size_t msgend = (size_t)ftell(t);
    size_t *lineoff = calloc(in->nip + 1, sizeof *lineoff);
    for (size_t i = 0; i < in->nip && lineoff; i++) {
        const cfg_proc *f = &prog->procs[in->ip[i].proc];
        lineoff[i] = (size_t)ftell(l);
        fprintf(l, "proc 0x%llx ", (unsigned long long)f->start);
        escape_write(l, f->name);
        fputc('\n', l);
    }
    if (lineoff)
        lineoff[in->nip] = (size_t)ftell(l);
    bool ok = fclose(t) == 0 && fclose(l) == 0 && lineoff;
    size_t procs = RT_HDRSIZE, strs = procs + RT_PSIZE * in->nip, lns = strs + txtlen;
    size_t fsz = (lns + lineslen + PAGE - 1) & ~(size_t)(PAGE - 1);
    uint8_t *d = ok ? calloc(1, fsz) : NULL;
    if (!d) {
        free(txt);
        free(lines);
        free(lineoff);
        return rw_fail(cx, "out of memory");
    }
    uint64_t guard1 = fsz, stack = guard1 + PAGE, guard2 = stack + (uint64_t)RT_SLOT * SS_SLOTS;
    uint64_t counters = guard2 + PAGE;
    in->ss_first = stack + (uint64_t)RT_SLOT * SS_SLACK;
    in->guard1 = guard1;
    in->guard2 = guard2;
    put64(d, RT_NPROCS, in->nip);
    put64(d, RT_PROCS, procs);
    put64(d, RT_HEAD, strs);
    put64(d, RT_HEADLEN, headlen);
    put64(d, RT_ENVNAME, strs + envname);
    put64(d, RT_ENVLEN, msg - envname);
    put64(d, RT_MSG, strs + msg);
    put64(d, RT_MSGLEN, errmsg - msg);
    put64(d, RT_ERRMSG, strs + errmsg);
    put64(d, RT_ERRLEN, msgend - errmsg);
    put64(d, RT_COUNTERS, counters);
    put64(d, RT_COUNTLEN, in->counters);
    for (size_t i = 0; i < in->nip; i++) {
        in->ip[i].counts += counters;
        uint8_t *p = d + procs + RT_PSIZE * i;
        put64(p, RT_P_COUNTS, in->ip[i].counts);
        put64(p, RT_P_NPATHS, in->ip[i].npaths);
        put64(p, RT_P_LINE, lns + lineoff[i]);
        put64(p, RT_P_LINELEN, lineoff[i + 1] - lineoff[i]);
    }
    memcpy(d + strs, txt, txtlen);
    memcpy(d + lns, lines, lineslen);
    free(txt);
    free(lines);
    free(lineoff);
    in->data = d;
    in->filesz = fsz;
    in->memsz = counters + in->counters;
    return true;
}

/* The region goes at addr (page-aligned): its addresses. */
void rw_instr_place(rw_ctx *cx, uint64_t addr)
{
    rw_instr *in = cx->ins;
    in->region = addr;
    put64(in->data, RT_SSP, addr + in->ss_first);
    put64(in->data, RT_GUARD, addr + in->guard1);
    put64(in->data, RT_GUARD2, addr + in->guard2);
}

/* The blob at the start of the new code, its words filled in. */
void rw_instr_blob(rw_ctx *cx, uint8_t *p)
{
    rw_instr *in = cx->ins;
    memcpy(p, rw_rt_blob, rw_rt_size());
    uint64_t entry = rw_map(cx, cx->img->entry);
    rw_put64(p + RT_B_REGION, in->region - in->blob_addr);
    rw_put64(p + RT_B_ENTRY, entry - in->blob_addr);
    rw_put64(p + RT_B_REGABS, in->region);
    if (in->ofini)
        rw_put64(p + RT_B_OFINI, in->ofini - in->blob_addr);
}

/* A dynamic program's DT_FINI goes to the runtime's finaliser (after
 * rw_patch_dynamic gave it the moved address). */
void rw_instr_fini(rw_ctx *cx)
{
    const image_section *d = NULL;
    for (size_t s = 0; s < cx->img->nsections; s++)
        if (cx->img->sections[s].type == SHT_DYNAMIC)
            d = &cx->img->sections[s];
    if (!d || d->offset + d->size > cx->out_size)
        return;
    for (uint64_t o = 0; o + 16 <= d->size; o += 16) {
        uint8_t *p = cx->out + d->offset + o;
        int64_t tag = (int64_t)rw_le64(p);
        if (tag == DT_NULL)
            break;
        if (tag == DT_FINI) {
            cx->ins->ofini = rw_le64(p + 8);
            rw_put64(p + 8, cx->ins->blob_addr + RT_B_FINI);
        }
    }
}

uint32_t rw_snip_bytes(const rw_snip *s)
{
    return 4 * s->nwords;
}

int rw_snip_bias(const rw_snip *s, uint32_t off)
{
    return s->spill && off >= 4 ? SPILL : 0;     /* after its first word */
}

bool rw_snip_is_head(const rw_snip *s)
{
    return s->where == RW_SN_HEAD;
}

bool rw_snip_is_after(const rw_snip *s)
{
    return s->where == RW_SN_AFTER;
}

uint64_t rw_instr_blob_size(const rw_ctx *cx)
{
    return cx->ins ? cx->ins->blob_size : 0;
}

uint64_t rw_instr_filesz(const rw_ctx *cx)
{
    return cx->ins->filesz;
}

uint64_t rw_instr_memsz(const rw_ctx *cx)
{
    return cx->ins->memsz;
}

bool rw_instr_write(const rw_ctx *cx, int fd, uint64_t at)
{
    return rw_pwrite_all(fd, cx->ins->data, cx->ins->filesz, cx->ins->region + at);
}

void rw_instr_stats(const rw_ctx *cx, rw_stats *st)
{
    const rw_instr *in = cx->ins;
    st->ins_procs = in->nip;
    for (unsigned r = 0; r < RW_NOINS_N && r < sizeof st->noins / sizeof st->noins[0]; r++)
        st->noins[r] = in->noins[r];
    st->hooks = in->hooks;
    st->unhooked = in->unhooked;
    st->spills = in->spills;
    st->counter_bytes = in->counters;
    for (size_t i = 0; i < cx->nitems; i++)
        st->ins_bytes += cx->items[i].ins;
}

uint64_t rw_insn_addr(const rw_ctx *cx, uint64_t old)
{
    uint64_t a = rw_map(cx, old);
    size_t n;
    const rw_snip *s = cx->ins && rw_moved(cx, old) ? rw_snips_at(cx, old, &n) : NULL;
    for (size_t j = 0; s && j < n; j++)
        if (s[j].where != RW_SN_AFTER)
            a += rw_snip_bytes(&s[j]);
    return a;
}

/* An entry's head runs first, so pv holds the head's address; after a
 * call with code inserted behind it, ra holds that code's address. */
uint64_t rw_gpdisp_base(const rw_ctx *cx, uint64_t old)
{
    if (!cx->ins || !rw_moved(cx, old))
        return rw_map(cx, old);
    size_t n;
    const rw_snip *h = rw_snips_at(cx, old, &n);
    if (n && h[0].where == RW_SN_HEAD)
        return rw_map(cx, old);
    uint32_t w = 0, pw = 0;
    alpha_insn in, pi;
    cfg_word(cx->prog, old, &w);
    alpha_decode(w, &in);
    if (in.rb == REG_RA && cfg_word(cx->prog, old - 4, &pw)) {
        alpha_decode(pw, &pi);
        if (alpha_flow_of(&pi) == FLOW_CALL && pi.ra == REG_RA)
            return rw_insn_addr(cx, old - 4) + 4;
    }
    return rw_insn_addr(cx, old);
}

uint32_t rw_instr_ops_words(const rw_instr *in, const rw_op *ops, size_t nops, const uint8_t reg[3],
                            uint64_t pc, uint32_t *w)
{
    wbuf b = { w, 0, pc, 0 };
    for (size_t i = 0; i < nops; i++)
        op_words(in, &b, &ops[i], reg);
    return b.n;
}

uint32_t rw_instr_snip_words(const rw_instr *in, const rw_snip *sn, uint64_t pc, uint32_t *w)
{
    return snip_words(in, sn, 0, pc, w);
}
