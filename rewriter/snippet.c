/*
 * rewriter/snippet.c: the words of the code the instrumenter inserts
 * (docs/instrument.md): shadow-stack pushes and pops, chords, path ends
 * with their counters and cycles, the system-call hook's call, and the
 * spill around a snippet with no free registers.  Every snippet's size is
 * independent of where it lands; the region's address is read from the
 * runtime blob, PC-relative.
 */
#include "rewriter/internal.h"
#include "rewriter/runtime/rt.h"

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
#define CMPEQ(a, b, c)  opr(0x2d, a, b, c)
#define ADDQI(a, l, c) (0x10u << 26 | (a) << 21 | (l) << 13 | 1u << 12 | 0x20u << 5 | (c))
#define BR(ra, w)       bra(0x30, ra, w)
#define BSR(ra, w)      bra(0x34, ra, w)
#define JSR(ra, rb)     (0x1au << 26 | (ra) << 21 | (rb) << 16 | 1u << 14)
#define BEQ(ra, w)      bra(0x39, ra, w)
#define BNE(ra, w)      bra(0x3d, ra, w)
#define BLT(ra, w)      bra(0x3a, ra, w)
#define BGT(ra, w)      bra(0x3f, ra, w)
#define SUBQ(a, b, c)   opr(0x29, a, b, c)
#define RPCC(ra)        (0x18u << 26 | (ra) << 21 | 31u << 16 | 0xc000u)
#define LOW32(a, c)     (0x12u << 26 | (a) << 21 | 15u << 13 | 1u << 12 | 0x31u << 5 | (c))

typedef struct wbuf {
    uint32_t *w;             /* NULL: only count */
    uint32_t n;
    uint64_t pc;             /* address of w[0] */
    int bias;                /* sp is this much below the program's (a spill) */
    int slot;                /* bytes of a shadow-stack slot */
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

/* The branch put at word `at` goes to the next word put. */
static void land(wbuf *b, uint32_t at)
{
    if (b->w)
        b->w[at] = (b->w[at] & ~0x1fffffu) | ((b->n - at - 1) & 0x1fffff);
}

/* A call of the blob's entry point `entry`, the return address in at:
 * `bsr at`, or, when the new code may be larger than a branch reaches
 * (4 MB), at = the entry's address, PC-relative, and `jsr at, (at)`. */
static void call_blob(const rw_instr *in, wbuf *b, uint64_t entry)
{
    uint64_t here = b->pc + 4ull * (b->n + 1);
    if (!in->far) {
        put(b, BSR(REG_AT, (int64_t)(in->blob_addr + entry - here) / 4));
        return;
    }
    int64_t hi, lo;
    split16((int64_t)(in->blob_addr + entry - here), &hi, &lo);
    put(b, BR(REG_AT, 0));
    put(b, LDAH(REG_AT, REG_AT, hi));
    put(b, LDA(REG_AT, REG_AT, lo));
    put(b, JSR(REG_AT, REG_AT));
}

static uint32_t call_blob_words(const rw_instr *in)
{
    return in->far ? 4 : 1;
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

/* Does k fit an ldah/lda pair? */
static bool fits32(int64_t k)
{
    int64_t hi, lo;
    split16(k, &hi, &lo);
    return hi >= -32768 && hi <= 32767;
}

/* The region offset of constant k in the pool of those that do not fit
 * (rw_instr_pool); 0 before the region is laid out (only sizes count). */
static int64_t pool_off(const rw_instr *in, int64_t k)
{
    size_t lo = 0, hi = in->npool;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (in->pool[mid] < (uint64_t)k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return in->pool_off ? (int64_t)(in->pool_off + 8 * lo) : 0;
}

static void base(const rw_instr *in, wbuf *b, unsigned a);

/* r = k: an ldah/lda pair, or a load from the pool. */
static void loadk(const rw_instr *in, wbuf *b, unsigned r, int64_t k)
{
    if (fits32(k)) {
        constk(b, r, k);
        return;
    }
    int64_t hi, lo;
    split16(pool_off(in, k), &hi, &lo);
    base(in, b, r);
    put(b, LDAH(r, r, hi));
    put(b, LDQ(r, r, lo));
}

/* r += k; t is clobbered when k does not fit 32 bits (path increments of
 * procedures with very many paths). */
static void addk_t(const rw_instr *in, wbuf *b, unsigned r, unsigned t, int64_t k)
{
    if (fits32(k)) {
        addk(b, r, k);
        return;
    }
    loadk(in, b, t, k);
    put(b, ADDQ(r, t, r));
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

/* a = the running thread's block: its shadow-stack pointer and its last
 * cycle count, at RT_SSP and RT_LAST.  Until a thread is started that
 * is the region itself (RT_TB holds its address); after, the runtime
 * finds the block by the thread's unique value (rt_tblock, with id, the
 * procedure of the code asking, for a new thread's first context).  A
 * program that cannot start threads (no pthread_create) has the region
 * alone. */
static void tbase(const rw_instr *in, wbuf *b, unsigned a, uint32_t id)
{
    base(in, b, a);
    if (!in->threads)
        return;                 /* only ever one thread: the region */
    put(b, LDQ(a, a, RT_TB));
    uint32_t done = b->n;
    put(b, BNE(a, 0));
    put(b, LDA(REG_SP, REG_SP, -16));
    if (a != REG_AT)
        put(b, STQ(REG_AT, REG_SP, 0));
    constk(b, a, id);
    put(b, STQ(a, REG_SP, 8));
    call_blob(in, b, RT_B_TBLOCK);
    put(b, LDQ(a, REG_SP, 8));
    if (a != REG_AT)
        put(b, LDQ(REG_AT, REG_SP, 0));
    put(b, LDA(REG_SP, REG_SP, 16));
    land(b, done);
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

/* x = the running activation's slot, read from the thread's block at a, past the
 * slots of activations a longjmp (or anything else that cut frames off
 * the stack) left: theirs were entered with a lower stack pointer than
 * the one now.  With a calling context tree, code of procedure id (an
 * op's ip + 1; 0 at an entry, where the slot is the caller's, whoever it
 * is) also drops a slot entered with the very stack pointer it has now
 * when the slot's node is another procedure's: the activation a longjmp
 * cut off that its target had called.  The slot is stored back; s is
 * clobbered.  (The first slot's stack pointer is the highest there is,
 * the slack slots' below it 0.) */
static void top(const rw_instr *in, wbuf *b, unsigned a, unsigned s, unsigned x, uint32_t id)
{
    put(b, LDQ(x, a, RT_SSP));
    if (id && in->ip[id - 1].raises_sp) {
        /* Its own slot would look stale: it is taken as the running
         * one, and keeps the stack pointer now, for its callees' heads. */
        put(b, LDA(s, REG_SP, b->bias));
        put(b, STQ(s, x, RT_S_SP));
        return;
    }
    uint32_t loop = b->n;
    put(b, LDQ(s, x, RT_S_SP));
    uint32_t first = b->n;
    put(b, BEQ(s, 0));                  /* below the first slot */
    put(b, LDA(s, s, -b->bias));        /* the program's sp, not a spill's */
    put(b, SUBQ(s, REG_SP, s));
    uint32_t drop = b->n;
    put(b, BLT(s, 0));
    uint32_t keep = b->n, mine = UINT32_MAX;
    if (in->cct && id) {
        put(b, BGT(s, 0));
        put(b, LDQ(s, x, RT_S_NODE));
        put(b, LDQ(s, s, RT_N_ID));
        addk(b, s, -(int64_t)id);
        mine = b->n;
        put(b, BEQ(s, 0));
    } else {
        put(b, BR(REG_ZERO, 0));
    }
    land(b, drop);
    put(b, LDA(x, x, -b->slot));
    put(b, BR(REG_ZERO, (int64_t)loop - (int64_t)b->n - 1));
    land(b, first);
    land(b, keep);
    if (mine != UINT32_MAX)
        land(b, mine);
    put(b, STQ(x, a, RT_SSP));
}

/* Path x (a sum, not yet checked) of procedure ip ran once, for s cycles:
 * its count and cycles grow when x < npaths.  a is clobbered. */
static void count(const rw_instr *in, wbuf *b, const rw_iproc *ip, unsigned a, unsigned s, unsigned x)
{
    if (ip->hcap) {
        /* A hashed table: the runtime's rt_count, which keeps every
         * register but at, saved here with the arguments below a stack
         * pointer moved past them. */
        put(b, LDA(REG_SP, REG_SP, -32));
        put(b, STQ(REG_AT, REG_SP, 0));
        put(b, STQ(x, REG_SP, 8));
        put(b, STQ(s, REG_SP, 16));
        constk(b, a, (int64_t)(ip - in->ip));
        put(b, STQ(a, REG_SP, 24));
        call_blob(in, b, RT_B_COUNT);
        put(b, LDQ(REG_AT, REG_SP, 0));
        put(b, LDA(REG_SP, REG_SP, 32));
        return;
    }
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

/* The cycles s go to the running activation's node too; a is the
 * thread's block and stays it, x is clobbered. */
static void charge_node(const rw_instr *in, wbuf *b, unsigned a, unsigned s, unsigned x, uint32_t id)
{
    if (!in->cct)
        return;
    put(b, LDQ(x, a, RT_SSP));
    put(b, LDQ(a, x, RT_S_NODE));
    put(b, LDQ(x, a, RT_N_CYCLES));
    put(b, ADDQ(x, s, x));
    put(b, STQ(x, a, RT_N_CYCLES));
    tbase(in, b, a, id);
}

/* An entry with a calling context tree: the caller's node (of the slot
 * below, past those a longjmp left) is charged the cycles up to the
 * call; the callee's context is the first record at the caller's call
 * site when that is the callee's node or a back edge to its ancestor
 * node (seed 004's call-site slots), else the runtime finds or makes it
 * (rt_enter).  The new slot keeps the node
 * and the stack pointer; the caller's site stays until its call returns
 * (code after the call clears it), so every call an uninstrumented callee
 * makes, and a tail branch, is seen from that site. */
static void push_cct(const rw_instr *in, wbuf *b, const rw_op *op, unsigned a, unsigned s, unsigned x)
{
    tbase(in, b, a, 0);
    top(in, b, a, s, x, 0);
    lap(b, a, s, x);
    put(b, LDQ(x, a, RT_SSP));
    if (!in->nopaths) {                 /* the caller's path's cycles */
        put(b, LDQ(a, x, RT_S_CYCLES));
        put(b, ADDQ(a, s, a));
        put(b, STQ(a, x, RT_S_CYCLES));
    }
    put(b, LDQ(a, x, RT_S_NODE));
    put(b, LDQ(x, a, RT_N_CYCLES));
    put(b, ADDQ(x, s, x));
    put(b, STQ(x, a, RT_N_CYCLES));
    tbase(in, b, x, 0);
    put(b, LDQ(x, x, RT_SSP));
    put(b, LDQ(s, x, RT_S_SITE));
    put(b, LDQ(x, a, RT_N_NSL));
    put(b, CMPULT(s, x, x));
    uint32_t slow1 = b->n;
    put(b, BEQ(x, 0));
    put(b, S8ADDQ(s, a, s));
    put(b, LDQ(s, s, RT_N_CHILD));
    uint32_t slow2 = b->n;
    put(b, BEQ(s, 0));
    put(b, LDQ(x, s, RT_N_ID));
    addk(b, x, -(int64_t)(op->ip + 1));
    uint32_t node = b->n;
    put(b, BEQ(x, 0));
    /* A back edge to this procedure (its tag is the top bit): counted,
     * and the context is the ancestor it goes to. */
    put(b, ADDQ(x, x, x));
    uint32_t slow3 = b->n;
    put(b, BNE(x, 0));
    put(b, LDQ(x, s, RT_BK_COUNT));
    put(b, ADDQI(x, 1, x));
    put(b, STQ(x, s, RT_BK_COUNT));
    put(b, LDQ(s, s, RT_BK_TO));
    land(b, node);
    tbase(in, b, x, 0);
    put(b, LDQ(x, x, RT_SSP));
    put(b, LDA(x, x, b->slot));
    put(b, STQ(s, x, RT_S_NODE));
    put(b, STQ(REG_ZERO, x, RT_S_SITE));
    put(b, LDQ(a, s, RT_N_CALLS));
    put(b, ADDQI(a, 1, a));
    put(b, STQ(a, s, RT_N_CALLS));
    put(b, LDA(a, REG_SP, b->bias));
    put(b, STQ(a, x, RT_S_SP));
    tbase(in, b, a, 0);
    put(b, STQ(x, a, RT_SSP));
    uint32_t done = b->n;
    put(b, BR(REG_ZERO, 0));
    land(b, slow1);
    land(b, slow2);
    land(b, slow3);
    /* rt_enter keeps every register but at, which is saved here with its
     * arguments, below a stack pointer moved past them. */
    put(b, LDA(REG_SP, REG_SP, -32));
    put(b, STQ(REG_AT, REG_SP, 0));
    constk(b, x, (int64_t)op->ip + 1);
    put(b, STQ(x, REG_SP, 8));
    put(b, LDA(x, REG_SP, 32 + b->bias));
    put(b, STQ(x, REG_SP, 16));
    call_blob(in, b, RT_B_ENTER);
    put(b, LDQ(REG_AT, REG_SP, 0));
    put(b, LDA(REG_SP, REG_SP, 32));
    land(b, done);
    if (!in->nopaths && !in->ip[op->ip].nopaths) {
        tbase(in, b, a, 0);
        put(b, LDQ(x, a, RT_SSP));
        loadk(in, b, s, op->k);
        put(b, STQ(s, x, RT_S_SUM));
        put(b, STQ(REG_ZERO, x, RT_S_CYCLES));
    }
}

/* A path's end (an edge to the exit): counted, its activation popped. */
static void end_words(const rw_instr *in, wbuf *b, const rw_op *op, unsigned a, unsigned s, unsigned x)
{
    const rw_iproc *ip = &in->ip[op->ip];
    tbase(in, b, a, op->ip + 1);
    top(in, b, a, s, x, op->ip + 1);
    /* An activation returning has the stack pointer it entered with.
     * When the slot on top has another, this activation's own was
     * left behind: a longjmp is leaving it (through a ret), and the
     * slot is the one it lands in, not this one's to pop.  (A tail
     * branch may leave with a frame still on the stack.) */
    uint32_t skip = UINT32_MAX;
    if (op->k2) {
        put(b, LDQ(s, x, RT_S_SP));
        put(b, LDA(s, s, -b->bias));
        put(b, CMPEQ(s, REG_SP, s));
        skip = b->n;
        put(b, BEQ(s, 0));
    }
    lap(b, a, s, x);
    charge_node(in, b, a, s, x, op->ip + 1);
    put(b, LDQ(x, a, RT_SSP));
    if (in->nopaths || ip->nopaths) {
        put(b, LDA(x, x, -b->slot));
        put(b, STQ(x, a, RT_SSP));
        if (op->k2)
            land(b, skip);
        return;
    }
    put(b, LDQ(a, x, 8));
    put(b, ADDQ(a, s, s));
    put(b, LDA(x, x, -b->slot));
    tbase(in, b, a, op->ip + 1);
    put(b, STQ(x, a, RT_SSP));
    put(b, LDQ(x, x, b->slot));
    addk_t(in, b, x, a, op->k);
    count(in, b, ip, a, s, x);
    if (op->k2)
        land(b, skip);
}

/* A back edge: the path ending there counted, the next one started. */
static void back_words(const rw_instr *in, wbuf *b, const rw_op *op, unsigned a, unsigned s, unsigned x)
{
    const rw_iproc *ip = &in->ip[op->ip];
    tbase(in, b, a, op->ip + 1);
    top(in, b, a, s, x, op->ip + 1);
    lap(b, a, s, x);
    charge_node(in, b, a, s, x, op->ip + 1);
    put(b, LDQ(x, a, RT_SSP));
    put(b, LDQ(a, x, 8));
    put(b, ADDQ(a, s, s));
    put(b, STQ(REG_ZERO, x, 8));
    put(b, LDQ(a, x, 0));
    if (fits32(op->k)) {
        addk(b, a, op->k);
    } else {            /* s, the cycles, waits in the slot */
        put(b, STQ(s, x, 8));
        loadk(in, b, s, op->k);
        put(b, ADDQ(a, s, a));
        put(b, LDQ(s, x, 8));
    }
    /* The slot becomes the next path's: sum k2, no cycles yet; the
     * ended path's number and cycles go through it to registers. */
    put(b, STQ(a, x, 0));
    put(b, STQ(s, x, 8));
    put(b, LDQ(s, x, 0));
    loadk(in, b, a, op->k2);
    put(b, STQ(a, x, 0));
    put(b, LDQ(a, x, 8));
    put(b, STQ(REG_ZERO, x, 8));
    count(in, b, ip, x, a, s);
}

/* The ops, with registers a, s, x.  A slot is {sum, cycles so far}: an
 * entry charges the caller's path with the cycles up to the call, a
 * path's end adds the cycles since the last start or stop to its own.
 * With a calling context tree, the same cycles go to the node running. */
static void op_words(const rw_instr *in, wbuf *b, const rw_op *op, const uint8_t *reg)
{
    unsigned a = reg[0], s = reg[1], x = reg[2];
    switch (op->kind) {
    case RW_OP_HOOK:
        call_blob(in, b, RT_B_HOOK);
        break;
    case RW_OP_CHILD:       /* in the child (fork returned 0) */
        put(b, BNE(REG_V0, call_blob_words(in)));
        call_blob(in, b, RT_B_CHILD);
        break;
    case RW_OP_THREAD:      /* threads are about to start (rt_threaded) */
        put(b, LDA(REG_SP, REG_SP, -16));
        put(b, STQ(REG_AT, REG_SP, 0));
        call_blob(in, b, RT_B_THREAD);
        put(b, LDQ(REG_AT, REG_SP, 0));
        put(b, LDA(REG_SP, REG_SP, 16));
        break;
    case RW_OP_SITE:        /* the call about to be made is site k (0: none) */
        tbase(in, b, a, op->ip + 1);
        if (op->k) {
            top(in, b, a, s, x, op->ip + 1);
            constk(b, s, op->k);
            put(b, STQ(s, x, RT_S_SITE));
        } else {
            put(b, LDQ(x, a, RT_SSP));
            put(b, STQ(REG_ZERO, x, RT_S_SITE));
        }
        break;
    case RW_OP_PUSH:
        if (in->cct) {
            push_cct(in, b, op, a, s, x);
            break;
        }
        tbase(in, b, a, 0);
        lap(b, a, s, x);
        put(b, LDQ(x, a, RT_SSP));
        put(b, LDQ(a, x, 8));
        put(b, ADDQ(a, s, a));
        put(b, STQ(a, x, 8));
        put(b, LDA(x, x, b->slot));
        tbase(in, b, a, 0);
        put(b, STQ(x, a, RT_SSP));
        loadk(in, b, s, op->k);
        put(b, STQ(s, x, 0));
        put(b, STQ(REG_ZERO, x, 8));
        put(b, LDA(s, REG_SP, b->bias));
        put(b, STQ(s, x, 16));
        break;
    case RW_OP_ADD:
        tbase(in, b, a, op->ip + 1);
        put(b, LDQ(s, a, RT_SSP));
        put(b, LDQ(x, s, 0));
        addk_t(in, b, x, a, op->k);
        put(b, STQ(x, s, 0));
        break;
    case RW_OP_END:
        end_words(in, b, op, a, s, x);
        break;
    case RW_OP_BACK:
        back_words(in, b, op, a, s, x);
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
uint32_t rw_snip_words(const rw_instr *in, const rw_snip *sn, uint32_t cond, uint64_t pc, uint32_t *w)
{
    wbuf b = { w, 0, pc, sn->spill ? SPILL : 0, (int)rw_slot_size(in) };
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
    if (sn->where == RW_SN_STUB)
        put(&b, BR(REG_ZERO, 0));   /* to its target: emit.c fills it in */
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
    wbuf t = { NULL, 0, 0, 0, b.slot }, f = { NULL, 0, 0, 0, b.slot };
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
    uint32_t n = rw_snip_words(cx->ins, sn, cond, pc, NULL);
    if (n > sizeof w / sizeof w[0] || n != sn->nwords)
        return rw_fail(cx, "internal error: snippet at 0x%llx has %u words, not %u",
                       (unsigned long long)sn->at, n, sn->nwords);
    rw_snip_words(cx->ins, sn, cond, pc, w);
    for (uint32_t i = 0; i < n; i++)
        rw_put32(p + 4 * i, w[i]);
    return true;
}

int rw_snip_bias(const rw_snip *s, uint32_t off)
{
    /* after its first word, up to a stub's branch */
    uint32_t end = 4 * s->nwords - (s->where == RW_SN_STUB ? 4 : 0);
    return s->spill && off >= 4 && off < end ? SPILL : 0;
}

uint32_t rw_instr_ops_words(const rw_instr *in, const rw_op *ops, size_t nops, const uint8_t reg[3],
                            uint64_t pc, uint32_t *w)
{
    wbuf b = { w, 0, pc, 0, (int)rw_slot_size(in) };
    for (size_t i = 0; i < nops; i++)
        op_words(in, &b, &ops[i], reg);
    return b.n;
}
