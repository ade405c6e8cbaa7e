/*
 * rewriter/instrument.c: which code goes where to count Ball-Larus paths
 * (docs/instrument.md); the words are snippet.c's, the data region
 * rtregion.c's.
 *
 * Every activation's path sum lives on a shadow stack in the data region:
 * an entry head pushes the entry edge's increment, a chord adds its
 * increment, a path's end counts counters[sum + inc] and pops (a return or
 * tail branch) or restarts the sum (a back edge).  With a calling context
 * tree, the slot also holds the activation's node, which the head finds
 * from the caller's node and the call site it noted before the call.  Edge code goes before
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
#include "rewriter/internal.h"
#include "rewriter/rtblob.h"
#include "rewriter/runtime/rt.h"

#define MAX_DENSE (1u << 16)     /* paths a procedure's dense counter table holds */
#define HASHED (1u << 12)        /* entries of a larger one's hashed table */

const char *rw_noins_name(unsigned r)
{
    static const char *const n[RW_NOINS_N] = {
        "no path numbering", "too many paths", "no free registers", "jump table",
        "coroutine or linking jump", "not moved freely",
    };
    return r < RW_NOINS_N ? n[r] : "?";
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

typedef struct plan_st {
    rw_ctx *cx;
    rw_instr *in;
    size_t capsn, capops;
    bool stubs;                 /* table edges may get stubs (table_snips) */
} plan_st;

/* Room for one more of n elements of size bytes in *arr (capacity *cap). */
static bool room(void *arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? 2 * *cap : 1024;
    void *t = realloc(*(void **)arr, nc * size);
    if (!t)
        return false;
    *(void **)arr = t;
    *cap = nc;
    return true;
}

static bool add_snip(plan_st *ps, const rw_snip *sn)
{
    rw_instr *in = ps->in;
    if (!room(&in->snips, &ps->capsn, in->nsnips, sizeof *in->snips))
        return false;
    in->snips[in->nsnips++] = *sn;
    return true;
}

static bool add_op(plan_st *ps, uint8_t kind, int64_t k, int64_t k2, uint32_t ip)
{
    rw_instr *in = ps->in;
    if (!room(&in->ops, &ps->capops, in->nops, sizeof *in->ops))
        return false;
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

/* What running CFG edge e does to the path sum, as ops appended.  An
 * edge to the exit also leaves the activation (k2: by a return); without
 * paths, that is all an edge does. */
static bool edge_ops(plan_st *ps, const cfg_paths *pp, const cfg_proc *f, uint32_t e, uint32_t ip)
{
    uint32_t pe = pp->of_cfg[e];
    if (pe == CFG_NONE)
        return true;
    const cfg_path_edge *x = &pp->edges[pe];
    bool paths = !ps->in->nopaths && !ps->in->ip[ip].nopaths;
    if (x->kind == CFG_PATH_EDGE_BACK_OUT) {
        const cfg_path_edge *bi = &pp->edges[pp->back_in[e]];
        return !paths || add_op(ps, RW_OP_BACK, x->inc, bi->inc, ip);
    }
    if (x->to == CFG_PATH_EXIT(f->nblocks))
        return add_op(ps, RW_OP_END, paths ? x->inc : 0, f->edges[e].kind == CFG_EDGE_RETURN, ip);
    return !paths || !x->inc || add_op(ps, RW_OP_ADD, x->inc, 0, ip);
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

/* Is the jump at `jump` the only one reading its tables?  A stub takes
 * a table's entries for one target; another jump reading them would run
 * the stub's code too.  (A jump sharing a table with another of its
 * procedure never needs one: the numbering cuts its table edges, which
 * then all have the same code before the jump, cfg/paths.h.) */
static bool private_tables(const rw_ctx *cx, const cfg_proc *f, uint64_t jump)
{
    bool any = false;
    for (size_t k = 0; k < f->ntables; k++) {
        const cfg_table *t = &f->tables[k];
        if (t->jump != jump)
            continue;
        any = true;
        uint64_t lo = t->table, hi = lo + (uint64_t)t->count * t->entsize;
        for (size_t i = 0; i < cx->prog->nprocs; i++)
            for (size_t j = 0; j < cx->prog->procs[i].ntables; j++) {
                const cfg_table *o = &cx->prog->procs[i].tables[j];
                if (o->jump != jump && o->table < hi && o->table + (uint64_t)o->count * o->entsize > lo)
                    return false;
            }
    }
    return any;
}

/* A jump table whose edges need different code: each edge's code goes to
 * the start of its target when only this table leads there, else (with
 * stubs) into a stub after the jump, where the table's entries for that
 * target are redirected. */
static int table_snips(plan_st *ps, const cfg_proc *f, const cfg_paths *pp, const cfg_live *lv,
                       uint32_t bi, uint32_t ip)
{
    const cfg_block *b = &f->blocks[bi];
    int priv = -1;
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
        bool shared = false;
        for (uint32_t j = 0; j < tb->nin; j++) {
            const cfg_edge *x = &f->edges[f->in_edges[tb->first_in + j]];
            shared |= x->kind == CFG_EDGE_TABLE && x->from != bi;
        }
        rw_snip sn = { .at = tb->start, .where = RW_SN_INCOMING, .first = (uint32_t)ps->in->nops };
        if (!edge_ops(ps, pp, f, e, ip))
            return RW_NOINS_N;
        sn.nt = (uint32_t)ps->in->nops - sn.first;
        if (!sn.nt)
            continue;
        if (shared) {
            if (priv < 0)
                priv = ps->stubs && private_tables(ps->cx, f, b->end - 4);
            if (!priv)
                return RW_NOINS_TABLE;
            sn.at = b->end - 4;
            sn.where = RW_SN_STUB;
            sn.to = tb->start;
        }
        /* A stub runs between the jump and the target: the target's
         * registers are the ones in use. */
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
    /* `br REG, next` finds its own address, the base of a GP-displacement
     * pair that the rewriter patches (glibc's _start with gp,
     * __syscall_error with t1): fine as long as its edge needs no code. */
    bool gplink = links && fl == FLOW_BRANCH && alpha_branch_target(&li, last) == last + 4;
    if (fl == FLOW_COROUTINE || (links && fl != FLOW_CALL && !gplink))
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
        if (gplink && sn.nt) {
            in->nops = sn.first;
            return RW_NOINS_LINK;
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

/* For the calling context tree: before each call of f, the number of its
 * call site (from 1, in address order) goes to the running slot; after
 * it, 0. */
static int site_snips(plan_st *ps, const cfg_proc *f, const cfg_live *lv, uint32_t ip)
{
    rw_ctx *cx = ps->cx;
    rw_instr *in = ps->in;
    in->ip[ip].site0 = (uint32_t)in->nsites;
    for (uint32_t bi = 0; bi < f->nblocks; bi++) {
        const cfg_block *b = &f->blocks[bi];
        if (b->flags & CFG_BF_UNREACH)
            continue;
        for (uint64_t a = b->start; a < b->end; a += 4) {
            alpha_insn ci;
            alpha_decode(word_at(cx, a), &ci);
            if (alpha_flow_of(&ci) != FLOW_CALL || ci.ra == REG_ZERO)
                continue;
            if (!room(&in->sites, &in->capsites, in->nsites, sizeof *in->sites))
                return RW_NOINS_N;
            in->sites[in->nsites++] = a;
            uint32_t k = (uint32_t)(in->nsites - in->ip[ip].site0);
            rw_snip sn = { .at = a, .where = RW_SN_BEFORE, .first = (uint32_t)in->nops, .nt = 1 };
            regs_for(cfg_live_before(cx->prog, f, lv, bi, a), &sn, in);
            if (!add_op(ps, RW_OP_SITE, k, 0, ip) || !add_snip(ps, &sn))
                return RW_NOINS_N;
            /* Back from the call, the activation is in no call (a signal
             * handler starting here is entered from site 0). */
            rw_snip un = { .at = a, .where = RW_SN_AFTER, .first = (uint32_t)in->nops, .nt = 1 };
            regs_for(a + 4 < b->end ? cfg_live_before(cx->prog, f, lv, bi, a + 4) : lv->out[bi], &un, in);
            if (!add_op(ps, RW_OP_SITE, 0, 0, ip) || !add_snip(ps, &un))
                return RW_NOINS_N;
        }
    }
    in->ip[ip].nsites = (uint32_t)(in->nsites - in->ip[ip].site0);
    return -1;
}

/* Does f raise the stack pointer without ever lowering it (a thread's
 * first routine popping what clone left it)?  Its activation runs above
 * the stack pointer it entered with, which the check for slots a longjmp
 * left (snippet.c, top) would take for a sign of its slot being stale. */
static bool raises_sp(const rw_ctx *cx, const cfg_proc *f)
{
    bool up = false;
    for (uint64_t a = f->start; a < f->end; a += 4) {
        alpha_insn li;
        alpha_decode(word_at(cx, a), &li);
        if (!li.op)
            continue;
        int64_t d = 0;
        if (!strcmp(li.op->name, "lda") && li.ra == REG_SP && li.rb == REG_SP)
            d = li.disp;
        else if (li.islit && li.ra == REG_SP && li.rc == REG_SP && !strcmp(li.op->name, "addq"))
            d = li.lit;
        else if (li.islit && li.ra == REG_SP && li.rc == REG_SP && !strcmp(li.op->name, "subq"))
            d = -(int64_t)li.lit;
        if (d < 0)
            return false;
        up |= d > 0;
    }
    return up;
}

/* Heads of the entry blocks and the edge code of every block of f;
 * returns a RW_NOINS_* reason, or -1 when its paths will be counted. */
static int plan_paths(plan_st *ps, const cfg_proc *f, uint32_t ip, bool tables_on_tree)
{
    rw_ctx *cx = ps->cx;
    char err[256];
    cfg_paths pp;
    cfg_live lv;
    /* Path numbers do not depend on the spanning tree, increments do:
     * with jump-table edges on the tree (weighed above everything, the
     * others as cfg_paths_build weighs them by default), their
     * increments are 0 and the table needs no code at its targets,
     * which another table may share (a chord's code could go nowhere
     * only the table reaches).  Only where that fails is it tried. */
    double *w = NULL;
    ps->stubs = tables_on_tree;
    if (tables_on_tree) {
        if (!(w = malloc((f->nedges ? f->nedges : 1) * sizeof *w)))
            return RW_NOINS_N;
        for (size_t e = 0; e < f->nedges; e++)
            w[e] = f->edges[e].kind == CFG_EDGE_TABLE ? 1e300 : cfg_paths_depth_weight(f, (uint32_t)e);
    }
    bool built = cfg_paths_build(f, w, &pp, err, sizeof err);
    free(w);
    if (!built)
        return RW_NOINS_PATHS;

    if (!cfg_live_build(cx->prog, f, &lv, err, sizeof err)) {
        cfg_paths_free(&pp);
        return RW_NOINS_PATHS;
    }
    ps->in->ip[ip].npaths = pp.npaths;
    ps->in->ip[ip].raises_sp = raises_sp(cx, f);
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
    if (why < 0 && ps->in->cct)
        why = site_snips(ps, f, &lv, ip);
    cfg_live_free(&lv);
    cfg_paths_free(&pp);
    return why;
}

/* Is sym the function fn, maybe with a version ("fn@GLIBC_2.34")? */
static bool names(const char *sym, const char *fn)
{
    size_t n = strlen(fn);
    return !strncmp(sym, fn, n) && (sym[n] == 0 || sym[n] == '@');
}

/* A dynamic program creates threads and forks in libc, where no hook
 * sees the clone: where the program loads the address of pthread_create
 * (or C11's thrd_create) from its GOT, it notes that the counts are
 * shared; after its call to fork, the child clears its counters. */
static bool plan_thread_marks(plan_st *ps)
{
    rw_ctx *cx = ps->cx;
    const image *img = cx->img;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *rs = &img->relsecs[i];
        for (size_t k = 0; !rs->dynamic && k < rs->count; k++) {
            const image_reloc *r = &rs->relocs[k];
            if (r->type != R_ALPHA_LITERAL || !r->symname)
                continue;
            bool thread = names(r->symname, "pthread_create") || names(r->symname, "thrd_create");
            bool fork = img->ndyn && (names(r->symname, "fork") || names(r->symname, "_Fork"));
            if (!thread && !fork)
                continue;
            const cfg_proc *f = rw_proc_of(cx, r->offset);
            if (!f || cx->procs[f - cx->prog->procs].reason != RW_MOVED ||
                cx->procs[f - cx->prog->procs].rigid)
                continue;
            uint32_t b = cfg_block_at(f, r->offset);
            cfg_live lv;
            char err[256];
            rw_snip sn = { .at = r->offset, .where = RW_SN_BEFORE, .first = (uint32_t)ps->in->nops, .nt = 1 };
            if (fork) {
                /* After the call the address goes to: the child clears. */
                uint64_t a = r->offset;
                for (; b != CFG_NONE && a < f->blocks[b].end; a += 4) {
                    alpha_insn ci;
                    alpha_decode(word_at(cx, a), &ci);
                    if (alpha_flow_of(&ci) == FLOW_CALL && ci.ra == REG_RA)
                        break;
                }
                if (b == CFG_NONE || a >= f->blocks[b].end)
                    continue;
                sn.at = a;
                sn.where = RW_SN_AFTER;
                if (!add_op(ps, RW_OP_CHILD, 0, 0, 0) || !add_snip(ps, &sn))
                    return false;
                continue;
            }
            if (b == CFG_NONE || !cfg_live_build(cx->prog, f, &lv, err, sizeof err))
                continue;
            regs_for(cfg_live_before(cx->prog, f, &lv, b, r->offset), &sn, ps->in);
            cfg_live_free(&lv);
            if (!add_op(ps, RW_OP_THREAD, 0, 0, 0) || !add_snip(ps, &sn))
                return false;
        }
    }
    return true;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Increments too large for an ldah/lda pair (procedures with more than
 * 2^31 paths) are loaded from a pool in the region, sorted, each once. */
static bool plan_pool(rw_instr *in)
{
    in->pool = malloc((2 * in->nops + 1) * sizeof *in->pool);
    if (!in->pool)
        return false;
    for (size_t i = 0; i < in->nops; i++) {
        int64_t k[2] = { in->ops[i].k, in->ops[i].k2 };
        for (int j = 0; j < 2; j++)
            if (k[j] < -(1ll << 31) || k[j] >= (1ll << 31) - (1ll << 15))
                in->pool[in->npool++] = (uint64_t)k[j];
    }
    qsort(in->pool, in->npool, sizeof *in->pool, by_value);
    size_t n = 0;
    for (size_t i = 0; i < in->npool; i++)
        if (!n || in->pool[n - 1] != in->pool[i])
            in->pool[n++] = in->pool[i];
    in->npool = n;
    return true;
}

static int by_place(const void *a, const void *b)
{
    const rw_snip *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->where != y->where)
        return x->where < y->where ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);      /* stubs, by target */
}

/* A procedure not counted after all: its snippets from sn0 and sites
 * from site0 go, but its system-call hooks. */
static void drop_snips(rw_instr *in, size_t sn0, size_t site0)
{
    size_t k = sn0;
    for (size_t j = sn0; j < in->nsnips; j++)
        if (in->ops[in->snips[j].first].kind == RW_OP_HOOK)
            in->snips[k++] = in->snips[j];
    in->nsnips = k;
    in->nsites = site0;
}

/* Procedure i's counting code (it moves freely): its paths and, with a
 * tree, its contexts; with both, a procedure whose paths cannot be
 * counted still gets its contexts.  False when out of memory. */
static bool plan_counting(plan_st *ps, size_t i)
{
    rw_ctx *cx = ps->cx;
    rw_instr *in = ps->in;
    const cfg_proc *f = &cx->prog->procs[i];
    size_t sn0 = in->nsnips, site0 = in->nsites;
    uint32_t ip = (uint32_t)in->nip;
    in->ip[ip] = (rw_iproc){ .proc = (uint32_t)i };
    int why = plan_paths(ps, f, ip, false);
    if (why == RW_NOINS_TABLE) {    /* a jump table needing code: keep its edges code-free */
        drop_snips(in, sn0, site0);
        why = plan_paths(ps, f, ip, true);
    }
    if (why == RW_NOINS_N)
        return false;
    if (why >= 0) {
        drop_snips(in, sn0, site0);
        in->noins[why]++;
        if (cx->opt->log)
            fprintf(cx->opt->log, "paths not counted: %s 0x%llx: %s%s\n", f->name,
                    (unsigned long long)f->start, rw_noins_name((unsigned)why),
                    in->cct && !in->nopaths ? " (its calling contexts are, if they can be)" : "");
        /* With a tree, its contexts need less: entries, exits and calls
         * (a procedure missing from the tree would fold recursion
         * differently from axp's). */
        in->ip[ip].nopaths = true;
        if (!in->cct || in->nopaths || (why = plan_paths(ps, f, ip, false)) >= 0) {
            drop_snips(in, sn0, site0);
            return why != RW_NOINS_N;
        }
    }
    in->ins_proc[i] = 1;
    in->ip[ip].counts = in->counters;
    /* More paths than a dense table holds: a hashed one, as PP's (seed
     * 004) for large path spaces; only the paths that run take an entry. */
    if (in->nopaths || in->ip[ip].nopaths)
        in->ip[ip].npaths = 0;      /* the writer shows no paths */
    in->ip[ip].hcap = in->ip[ip].npaths > MAX_DENSE ? HASHED : 0;
    in->hashed += in->ip[ip].hcap != 0;
    in->counters += in->ip[ip].hcap ? 24ull * HASHED : 16 * in->ip[ip].npaths;
    in->nip++;
    return true;
}

bool rw_instr_plan(rw_ctx *cx)
{
    rw_instr *in = calloc(1, sizeof *in);
    if (!in)
        return rw_fail(cx, "out of memory");
    cx->ins = in;
    in->nopaths = !(cx->opt->instrument & RW_INSTRUMENT_PATHS);
    in->cct = (cx->opt->instrument & RW_INSTRUMENT_CCT) != 0;
    for (size_t i = 0; i < cx->img->nsymbols; i++)
        in->threads |= names(cx->img->symbols[i].name, "pthread_create") ||
                       names(cx->img->symbols[i].name, "thrd_create");
    if (!rw_rt_size())
        return rw_fail(cx, "this build of optimize-image has no runtime to instrument with "
                           "(it needs %s)", "alpha-linux-gnu-gcc at build time");
    const cfg_program *prog = cx->prog;
    plan_st ps = { cx, in, 0, 0, false };
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
        if (!plan_counting(&ps, i))
            return rw_fail(cx, "out of memory");
    }
    if (!plan_thread_marks(&ps))
        return rw_fail(cx, "out of memory");
    if (!plan_pool(in))
        return rw_fail(cx, "out of memory");
    qsort(in->snips, in->nsnips, sizeof *in->snips, by_place);
    /* Branches reach 4 MB: beyond 3 MB of code and inserted words (and
     * the layout's alignment and added branches), the inserted code calls
     * the runtime through a register. */
    uint64_t text = 0;
    for (size_t i = 0; i < prog->nprocs; i++)
        text += prog->procs[i].end - prog->procs[i].start;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t words = 0;
        for (size_t j = 0; j < in->nsnips; j++) {
            uint32_t cond = 0;
            if (in->snips[j].split)
                cfg_word(prog, in->snips[j].at, &cond);
            in->snips[j].nwords = rw_snip_words(in, &in->snips[j], cond, 0, NULL);
            words += in->snips[j].nwords;
        }
        if (in->far || text + 4 * words + rw_rt_size() < (3u << 20))
            break;
        in->far = true;
    }
    in->blob_size = (rw_rt_size() + 31) & ~(uint64_t)31;
    if (!rw_instr_build_region(cx))
        return false;
    for (size_t j = 0; j < in->nsnips; j++) {
        uint32_t cond = 0;
        if (in->snips[j].split)
            cfg_word(prog, in->snips[j].at, &cond);
        if (rw_snip_words(in, &in->snips[j], cond, 0, NULL) != in->snips[j].nwords)
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
    free(in->sites);
    free(in->pool);
    free(in->data);
    free(in);
    cx->ins = NULL;
}

uint32_t rw_snip_bytes(const rw_snip *s)
{
    return 4 * s->nwords;
}

bool rw_snip_is_head(const rw_snip *s)
{
    return s->where == RW_SN_HEAD;
}

/* Emitted after its instruction: code after it, or a stub. */
bool rw_snip_is_after(const rw_snip *s)
{
    return s->where >= RW_SN_AFTER;
}

uint64_t rw_snip_stub(const rw_snip *s)
{
    return s->where == RW_SN_STUB ? s->to : 0;
}

/* Where the jump-table entry at `where`, which went to `to`, now goes
 * when it goes to a stub (table_snips); else 0. */
uint64_t rw_table_stub(const rw_ctx *cx, uint64_t where, uint64_t to)
{
    const cfg_proc *f = cx->ins && cx->ins->nsnips ? rw_proc_of(cx, to) : NULL;
    for (size_t k = 0; f && k < f->ntables; k++) {
        const cfg_table *t = &f->tables[k];
        if (where < t->table || where >= t->table + (uint64_t)t->count * t->entsize)
            continue;
        if (!rw_moved(cx, t->jump))
            return 0;
        size_t n;
        const rw_snip *s = rw_snips_at(cx, t->jump, &n);
        uint64_t a = rw_insn_addr(cx, t->jump) + 4;
        for (size_t j = 0; j < n; j++) {
            if (rw_snip_stub(&s[j]) == to)
                return a;
            if (rw_snip_is_after(&s[j]))
                a += rw_snip_bytes(&s[j]);
        }
        return 0;
    }
    return 0;
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
    st->hashed = in->hashed;
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
        if (!rw_snip_is_after(&s[j]))
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

