/*
 * machine/translate.c: the code cache.
 *
 * Guest code is decoded once into blocks of predecoded instructions: a block
 * starts wherever control arrives and runs to the first control transfer,
 * the end of its page, or 256 instructions.  Blocks are kept per address
 * space in a hash table keyed by start address, with a direct-mapped cache
 * in front for indirect jumps and successor links for direct ones.  Each
 * code page lists its blocks; a store to the page, munmap, mprotect without
 * exec, or IMB kills them.  Dead blocks go on a list and are freed only when
 * no executor can be inside one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/axp.h"
#include "machine/cycles.h"
#include "machine/exact.h"
#include "machine/linux.h"
#include "machine/ops.h"

/* The cycle model takes a block at a time, a translated block whole. */
_Static_assert(BLOCK_MAX <= CYCLES_BLOCK_MAX, "blocks longer than the cycle model takes");

const uint8_t *mem_code_page(mm *x, uint64_t va, pte **pp);

/* alpha_optable row -> handler; rows that map nowhere trap as illegal. */
static uint16_t *row_handler;
static bool *row_pair;       /* OPR handler with a literal twin */

void code_init_handlers(void)
{
    if (row_handler)
        return;
    row_handler = calloc(alpha_optable_len, sizeof *row_handler);
    row_pair = calloc(alpha_optable_len, sizeof *row_pair);
    for (size_t i = 0; i < alpha_optable_len; i++)
        row_handler[i] = H_ILL;
#define MAP2(h, n) { int r = alpha_lookup(n); if (r >= 0) { row_handler[r] = H_##h; row_pair[r] = true; } }
#define MAP1(h, n) { int r = alpha_lookup(n); if (r >= 0) row_handler[r] = H_##h; }
    OPR_OPS(MAP2)
    ONE_OPS(MAP1)
#undef MAP1
#undef MAP2
}

static inline uint32_t hslot(const codecache *cc, uint64_t pc)
{
    uint64_t h = (pc >> 2) * 0x9e3779b97f4a7c15ULL;
    return (uint32_t)(h >> 40) & cc->hmask;
}

static void hash_insert(codecache *cc, block *b)
{
    if (cc->n >= cc->hmask) {
        uint32_t ncap = (cc->hmask + 1) * 2;
        block **old = cc->hash;
        uint32_t ocap = cc->hmask + 1;
        cc->hash = calloc(ncap, sizeof *cc->hash);
        cc->hmask = ncap - 1;
        for (uint32_t i = 0; i < ocap; i++)
            for (block *p = old[i], *nx; p; p = nx) {
                nx = p->hnext;
                uint32_t s = hslot(cc, p->pc);
                p->hnext = cc->hash[s];
                cc->hash[s] = p;
            }
        free(old);
    }
    uint32_t s = hslot(cc, b->pc);
    b->hnext = cc->hash[s];
    cc->hash[s] = b;
    cc->n++;
}

static void hash_remove(codecache *cc, block *b)
{
    for (block **pp = &cc->hash[hslot(cc, b->pc)]; *pp; pp = &(*pp)->hnext)
        if (*pp == b) {
            *pp = b->hnext;
            cc->n--;
            break;
        }
    block **j = &cc->jc[(b->pc >> 2) & (JC_N - 1)];
    if (*j == b)
        *j = NULL;
}

static bool writes(uint8_t role) { return role == RR_IW || role == RR_FW || role == RR_IRW || role == RR_FRW; }

static void predecode(const alpha_insn *in, dinsn *d, uint8_t *exit)
{
    const alpha_opdef *op = in->op;
    memset(d, 0, sizeof *d);
    d->word = in->word;
    d->id = in->id;
    d->a = in->ra;
    d->b = in->rb;
    *exit = BX_SEQ;
    if (!op) {                  /* an unassigned encoding: SIGILL when reached */
        d->h = H_ILL;
        d->off = exec_handler_offsets[H_ILL];
        *exit = BX_ILL;
        return;
    }
    d->h = row_handler[in->id];
    unsigned w = 32;
    if (writes(op->rc))
        w = in->rc;
    else if (writes(op->ra))
        w = in->ra;
    d->c = (uint8_t)(w == 31 ? 32 : w);
    switch (op->format) {
    case AF_OPR:
        if (in->islit) {
            if (op->flags & OPF_NOLIT)
                d->h = H_ILL;
            else if (row_pair[in->id])
                d->h++;
            d->imm = in->lit;
        }
        break;
    case AF_MEM:
        d->imm = (op->flags & OPF_LDAH) ? in->disp * 65536 : in->disp;
        break;
    case AF_BRA:
        d->imm = in->disp;
        break;
    case AF_PAL:
        d->imm = (int32_t)in->func;
        break;
    case AF_FPOPR: {
        unsigned f = in->func;
        unsigned rm = (f >> 6) & 3;
        d->q = (uint8_t)(rm == 3 ? FQ_DYN : rm);   /* 0 C, 1 M, 2 N */
        if (f & 0x100) d->q |= FQ_U;
        if (f & 0x200) d->q |= FQ_I;
        if (f & 0x400) d->q |= FQ_S;
        break;
    }
    default:
        break;
    }
    /* Writes to r31/f31 without side effects do nothing; loads into
     * r31/f31 are prefetch hints that never fault, except LDQ_U, which is
     * UNOP and touches no memory. */
    bool has_dest = writes(op->rc) || writes(op->ra);
    if (has_dest && d->c == 32 && d->h != H_ILL && op->flow == FLOW_NONE &&
        (op->format == AF_OPR || op->format == AF_MEM || op->format == AF_FPOPR) &&
        !(op->flags & (OPF_STORE | OPF_TRAPS | OPF_LOCKED)) &&
        !((op->flags & OPF_LOAD) == 0 && op->format == AF_MEM && !(op->flags & OPF_ADDR)))
        d->h = (op->flags & OPF_LOAD) && !(op->flags & OPF_ADDR) && strcmp(op->name, "ldq_u") ? H_PREF : H_NOP;
    switch (op->flow) {
    case FLOW_CBRANCH: *exit = BX_COND; break;
    case FLOW_BRANCH: *exit = BX_BR; break;
    case FLOW_CALL: *exit = op->format == AF_BRA ? BX_BSR : BX_JSR; break;
    case FLOW_JUMP: *exit = BX_JMP; break;
    case FLOW_RETURN: *exit = BX_RET; break;
    case FLOW_COROUTINE: *exit = BX_JCR; break;
    case FLOW_PAL:
        /* rduniq and wruniq only touch registers: no reason to end there */
        *exit = (d->h == H_rduniq || d->h == H_wruniq) ? BX_SEQ : BX_PAL;
        break;
    default: break;
    }
    if (d->h == H_ILL)
        *exit = BX_ILL;
    /* the commonest idioms skip reading r31: li and mov */
    if ((d->h == H_lda || d->h == H_ldah || d->h == H_bis_i) && (d->h == H_bis_i ? d->a : d->b) == 31)
        d->h = H_LDI;
    else if (d->h == H_bis && d->a == 31)
        d->h = H_MOV;
    d->off = exec_handler_offsets[d->h];
}

static block *translate(thread *t, uint64_t pc)
{
    mm *x = t->mm;
    pte *p;
    const uint8_t *page = mem_code_page(x, pc, &p);
    if (!page) {
        const vma *v = mm_vma_at(x, pc);
        guest_fault(t, NULL, NULL, A_SIGSEGV, v ? A_SEGV_ACCERR : A_SEGV_MAPERR, pc, false);
    }
    dinsn tmp[BLOCK_MAX];
    uint8_t bx = BX_SEQ;
    uint32_t n = 0;
    uint64_t a = pc;
    alpha_insn in;
    while (n < BLOCK_MAX) {
        uint32_t w;
        memcpy(&w, page + (a & PG_MASK), 4);
        alpha_decode(w, &in);
        predecode(&in, &tmp[n], &bx);
        n++;
        a += 4;
        if (bx != BX_SEQ || !(a & PG_MASK))
            break;
    }
    /* A timed machine's blocks carry the cycle model's decoding after ins[], and
     * room for the model to keep the block's static schedules. */
    bool timed = t->m->tm != NULL;
    size_t isz = sizeof(block) + (n + 1) * sizeof(dinsn);
    size_t tsz = ((isz + n * sizeof(cycles_insn) + 7) & ~(size_t)7) - isz;   /* schedules after, aligned */
    block *b = malloc(isz + (timed ? tsz + cycles_sched_size(n) : 0));
    if (!b) {
        fprintf(stderr, "axp: out of memory translating the code at 0x%" PRIx64 "\n", pc);
        exit(1);
    }
    memset(b, 0, sizeof *b);
    if (timed) {
        cycles_insn *ti = (cycles_insn *)((char *)b + isz);
        for (uint32_t i = 0; i < n; i++)
            cycles_decode(tmp[i].word, tmp[i].id, &ti[i]);
        b->ti = ti;
        b->ts = (cycles_sched **)((char *)ti + tsz);
        memset(b->ts, 0, cycles_sched_size(n));
    }
    memcpy(b->ins, tmp, n * sizeof(dinsn));
    memset(&b->ins[n], 0, sizeof(dinsn));
    b->ins[n].h = H_SEQEND;
    b->ins[n].off = exec_handler_offsets[H_SEQEND];
    b->pc = pc;
    b->end = a;
    b->n = n;
    b->exit = bx;
    if (bx == BX_COND || bx == BX_BR || bx == BX_BSR)
        b->target = a + (uint64_t)((int64_t)tmp[n - 1].imm * 4);
    b->pnext = p->code;
    p->code = b;
    hash_insert(&x->cc, b);
    t->m->blocks_made++;
    if (t->m->x)
        exact_attach(t, b);
    return b;
}

block *code_get(thread *t, uint64_t pc)
{
    codecache *cc = &t->mm->cc;
    block **j = &cc->jc[(pc >> 2) & (JC_N - 1)];
    if (*j && (*j)->pc == pc)
        return *j;
    for (block *b = cc->hash[hslot(cc, pc)]; b; b = b->hnext)
        if (b->pc == pc)
            return *j = b;
    return *j = translate(t, pc);
}

static void kill_block(mm *x, block *b)
{
    hash_remove(&x->cc, b);
    b->hnext = x->cc.dead;
    x->cc.dead = b;
}

void code_invalidate_page(mm *x, uint64_t va)
{
    pte *p = mm_pte(x, va, false);
    if (!p || !(p->flags & PTE_CODE))
        return;
    for (block *b = p->code, *nx; b; b = nx) {
        nx = b->pnext;
        kill_block(x, b);
    }
    p->code = NULL;
    p->flags &= ~PTE_CODE;
    x->cc.gen++;
    tlb_flush_page(x, va);
}

void code_invalidate_range(mm *x, uint64_t start, uint64_t end)
{
    if (!x->cc.n)
        return;
    for (uint64_t va = start & ~PG_MASK; va < end; ) {
        uint64_t vpn = va >> PG_SHIFT;
        if (!x->dir[vpn >> 20]) {                   /* skip 8 GB holes */
            va = ((vpn >> 20) + 1) << (20 + PG_SHIFT);
            continue;
        }
        if (!x->dir[vpn >> 20][(vpn >> 10) & 1023]) {   /* and 8 MB ones */
            va = ((vpn >> 10) + 1) << (10 + PG_SHIFT);
            continue;
        }
        code_invalidate_page(x, va);
        va += PG_SIZE;
    }
}

void code_flush(mm *x)
{
    codecache *cc = &x->cc;
    for (uint32_t i = 0; i <= cc->hmask; i++) {
        for (block *b = cc->hash[i], *nx; b; b = nx) {
            nx = b->hnext;
            pte *p = mm_pte(x, b->pc, false);
            if (p) {
                p->code = NULL;
                p->flags &= ~PTE_CODE;
                tlb_flush_page(x, b->pc);
            }
            b->hnext = cc->dead;
            cc->dead = b;
        }
        cc->hash[i] = NULL;
    }
    cc->n = 0;
    memset(cc->jc, 0, sizeof cc->jc);
    cc->gen++;
}

void code_reap(machine *m, mm *x)
{
    if (m->tt && x->cc.dead)    /* the model's thread may still have these blocks to do */
        tthread_drain(m->tt);
    for (block *b = x->cc.dead, *nx; b; b = nx) {
        nx = b->hnext;
        if (b->x)
            exact_detach(m, x, b);
        if (b->ts)
            cycles_sched_free(b->ts, b->n);
        free(b);
    }
    x->cc.dead = NULL;
}

void code_free_all(machine *m, mm *x)
{
    code_flush(x);
    code_reap(m, x);
}
