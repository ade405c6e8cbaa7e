/*
 * machine/exec_body.h: one block executor, included by exec.c with
 * EXEC_NAME and EXEC_TIMED defined.  Not a header of its own.
 *
 * Registers live in the thread (t->r, t->f); the handler for instruction d
 * of block b runs, then control goes to the next instruction's handler.
 * The last instruction of a block picks the next block: through the
 * block's successor links for direct branches, through the code cache for
 * register jumps.  Guest faults longjmp back to the setjmp below.
 */

static void EXEC_INNER(thread *t, int64_t budget)
{
    /* Handler addresses as offsets from L_NOP: the functional executor's
     * are copied into each dinsn (one load less per dispatch). */
#define XL2(h, n) [H_##h] = &&L_##h - &&L_NOP, [H_##h##_i] = &&L_##h##_i - &&L_NOP,
#define XL1(h, n) [H_##h] = &&L_##h - &&L_NOP,
    static const int32_t OFF[H_COUNT] = {
        [H_NOP] = 0, [H_ILL] = &&L_ILL - &&L_NOP, [H_SEQEND] = &&L_SEQEND - &&L_NOP,
        [H_LDI] = &&L_LDI - &&L_NOP, [H_MOV] = &&L_MOV - &&L_NOP, [H_PREF] = &&L_PREF - &&L_NOP,
        OPR_OPS(XL2) ONE_OPS(XL1)
    };
#undef XL1
#undef XL2
    if (!t) {               /* start-up: publish the offsets */
        if (!EXEC_TIMED)
            memcpy(exec_handler_offsets, OFF, sizeof OFF);
        return;
    }
    machine *const m = t->m;
    const bool slow = m->slow_blocks;
    uint64_t *const R = t->r;
    uint64_t *const F = t->f;
    mm *x;
    tlbent *tlb;
    codecache *cc;
    block *b;
    const dinsn *d;
    uint64_t npc;
    int slot;
#if EXEC_TIMED
    /* the cycle model of this CPU, tagging caches with this process */
    cycles_core *const core = m->curcpu ? m->curcpu->core : NULL;
    if (core) {
        /* (the model's front end runs on this thread either way) */
        cycles_front_asn(m->curcpu->front, (uint32_t)t->p->pid);
        if (m->tt)
            tthread_asn(m->tt, m->curcpu->id, (uint32_t)t->p->pid);
        else
            timing_asn(m, m->curcpu->id, (uint32_t)t->p->pid);
    }
    uint64_t *const eas = t->ea;
#endif

#define PCOF(dd) (b->pc + ((uint64_t)((dd) - b->ins) << 2))
#if EXEC_VALUES
/* In a value-sampling run each instruction also leaves what it wrote in
 * vres[] (integer, then FP), the last one at the block's end. */
    uint64_t *const vres = t->vres;
#define BLOCK_RETIRED(np) (KEEP(d), retire_block_values(t, b, b->n, (np)))
#define MEMEA(ea) (eas[d - b->ins] = (ea))
#define KEEP(dd) (vres[(dd) - b->ins] = R[(dd)->c], vres[BLOCK_MAX + ((dd) - b->ins)] = F[(dd)->c])
#elif EXEC_TIMED
/* Loads and stores note their addresses in eas[]; at its end the whole
 * block goes to the cycle model and the retire hook (retire_block). */
#define BLOCK_RETIRED(np) retire_block(t, b, b->n, (np))
#define MEMEA(ea) (eas[d - b->ins] = (ea))
#define KEEP(dd) ((void)0)
#else
#define BLOCK_RETIRED(np) ((void)0)
#define MEMEA(ea) ((void)0)
#define KEEP(dd) ((void)0)
#endif
#if EXEC_TIMED
#define DISPATCH() goto *(&&L_NOP + OFF[d->h])
#else
#define DISPATCH() goto *(&&L_NOP + d->off)
#endif
#define NEXT do { KEEP(d); d++; DISPATCH(); } while (0)
#define TLBE(ea) (&tlb[((ea) >> PG_SHIFT) & (TLB_N - 1)])
#define LOAD(fn, sz, eax) ({                                                  \
        uint64_t ea_ = (eax);                                                 \
        const tlbent *e_ = TLBE(ea_);                                         \
        MEMEA(ea_);                                                           \
        likely((ea_ & (~PG_MASK | (sz - 1))) == e_->rtag)                     \
            ? fn(e_->add + (intptr_t)ea_) : mem_load_slow(t, b, d, ea_, sz);  \
    })
#define STORE(fn, sz, eax, v) do {                                            \
        uint64_t ea_ = (eax);                                                 \
        const tlbent *e_ = TLBE(ea_);                                         \
        MEMEA(ea_);                                                           \
        if (likely((ea_ & (~PG_MASK | (sz - 1))) == e_->wtag))                \
            fn(e_->add + (intptr_t)ea_, (v));                                 \
        else                                                                  \
            mem_store_slow(t, b, d, ea_, (v), sz);                            \
    } while (0)

reload:
    x = t->mm;
    tlb = x->tlb;
    cc = &x->cc;
    b = code_get(t, t->pc);
enter:
    if (unlikely(budget <= 0)) {
        t->pc = b->pc;
        goto leave;
    }
    /* a values interrupt started a run, or the run is over: the other
     * executor goes on (exec.c) */
    if (unlikely(EXEC_VALUES ? !t->vleft : t->vleft != 0) && EXEC_TIMED) {
        t->vswitch = true;
        t->pc = b->pc;
        goto leave;
    }
    budget -= b->n;
    t->icount += b->n;
    if (unlikely(slow))
        block_enter_slow(t, b);
#if EXEC_TIMED
    if (unlikely(m->hook))      /* the hook sees 0 for what is not a load or store */
        memset(eas, 0, b->n * sizeof *eas);
#endif
    d = b->ins;
    DISPATCH();

    /* ---- integer operate ---------------------------------------------- */
#define OPR(h, expr)                                                          \
    L_##h: { const uint64_t A = R[d->a], B = R[d->b]; (void)A; (void)B; R[d->c] = (expr); NEXT; } \
    L_##h##_i: { const uint64_t A = R[d->a], B = (uint64_t)(uint32_t)d->imm; (void)A; (void)B; R[d->c] = (expr); NEXT; }
#define CMOV(h, cond)                                                         \
    L_##h: { const uint64_t A = R[d->a]; R[d->c] = (cond) ? R[d->b] : R[d->c]; NEXT; } \
    L_##h##_i: { const uint64_t A = R[d->a]; R[d->c] = (cond) ? (uint64_t)(uint32_t)d->imm : R[d->c]; NEXT; }
#define OPRV(h, expr, ovf)                                                    \
    L_##h: { const uint64_t A = R[d->a], B = R[d->b]; uint64_t V; bool O = (ovf); R[d->c] = (expr); \
             (unlikely(O) ? guest_fault(t, b, d, A_SIGFPE, A_FPE_INTOVF, PCOF(d), true) : (void)0); NEXT; } \
    L_##h##_i: { const uint64_t A = R[d->a], B = (uint64_t)(uint32_t)d->imm; uint64_t V; bool O = (ovf); R[d->c] = (expr); \
             (unlikely(O) ? guest_fault(t, b, d, A_SIGFPE, A_FPE_INTOVF, PCOF(d), true) : (void)0); NEXT; }

    OPR(addl, sext32(A + B))
    OPR(s4addl, sext32(A * 4 + B))
    OPR(subl, sext32(A - B))
    OPR(s4subl, sext32(A * 4 - B))
    OPR(cmpbge, cmpbge(A, B))
    OPR(s8addl, sext32(A * 8 + B))
    OPR(s8subl, sext32(A * 8 - B))
    OPR(cmpult, A < B)
    OPR(addq, A + B)
    OPR(s4addq, A * 4 + B)
    OPR(subq, A - B)
    OPR(s4subq, A * 4 - B)
    OPR(cmpeq, A == B)
    OPR(s8addq, A * 8 + B)
    OPR(s8subq, A * 8 - B)
    OPR(cmpule, A <= B)
    OPRV(addlv, V, ({ int32_t r_; bool o_ = __builtin_add_overflow((int32_t)A, (int32_t)B, &r_); V = sext32((uint64_t)(uint32_t)r_); o_; }))
    OPRV(sublv, V, ({ int32_t r_; bool o_ = __builtin_sub_overflow((int32_t)A, (int32_t)B, &r_); V = sext32((uint64_t)(uint32_t)r_); o_; }))
    OPR(cmplt, (int64_t)A < (int64_t)B)
    OPRV(addqv, V, ({ int64_t r_; bool o_ = __builtin_add_overflow((int64_t)A, (int64_t)B, &r_); V = (uint64_t)r_; o_; }))
    OPRV(subqv, V, ({ int64_t r_; bool o_ = __builtin_sub_overflow((int64_t)A, (int64_t)B, &r_); V = (uint64_t)r_; o_; }))
    OPR(cmple, (int64_t)A <= (int64_t)B)

    OPR(and, A & B)
    OPR(bic, A & ~B)
    CMOV(cmovlbs, A & 1)
    CMOV(cmovlbc, !(A & 1))
    OPR(bis, A | B)
    CMOV(cmoveq, A == 0)
    CMOV(cmovne, A != 0)
    OPR(ornot, A | ~B)
    OPR(xor, A ^ B)
    CMOV(cmovlt, (int64_t)A < 0)
    CMOV(cmovge, (int64_t)A >= 0)
    OPR(eqv, A ^ ~B)
    OPR(amask, B)              /* a 21164: no extension is announced */
    CMOV(cmovle, (int64_t)A <= 0)
    CMOV(cmovgt, (int64_t)A > 0)
    OPR(implver, 1)            /* EV5 */

    OPR(mskbl, msk_l(A, B, 0x01))
    OPR(extbl, ext_l(A, B, 0x01))
    OPR(insbl, ins_l(A, B, 0x01))
    OPR(mskwl, msk_l(A, B, 0x03))
    OPR(extwl, ext_l(A, B, 0x03))
    OPR(inswl, ins_l(A, B, 0x03))
    OPR(mskll, msk_l(A, B, 0x0f))
    OPR(extll, ext_l(A, B, 0x0f))
    OPR(insll, ins_l(A, B, 0x0f))
    OPR(zap, zapnot(A, ~(unsigned)B))
    OPR(zapnot, zapnot(A, (unsigned)B))
    OPR(mskql, msk_l(A, B, 0xff))
    OPR(srl, A >> (B & 63))
    OPR(extql, ext_l(A, B, 0xff))
    OPR(sll, A << (B & 63))
    OPR(insql, ins_l(A, B, 0xff))
    OPR(sra, (uint64_t)((int64_t)A >> (B & 63)))
    OPR(mskwh, msk_h(A, B, 0x03))
    OPR(inswh, ins_h(A, B, 0x03))
    OPR(extwh, ext_h(A, B, 0x03))
    OPR(msklh, msk_h(A, B, 0x0f))
    OPR(inslh, ins_h(A, B, 0x0f))
    OPR(extlh, ext_h(A, B, 0x0f))
    OPR(mskqh, msk_h(A, B, 0xff))
    OPR(insqh, ins_h(A, B, 0xff))
    OPR(extqh, ext_h(A, B, 0xff))

    OPR(mull, sext32(A * B))
    OPR(mulq, A * B)
    OPR(umulh, umulh(A, B))
    OPRV(mullv, V, ({ int64_t p_ = (int64_t)(int32_t)A * (int64_t)(int32_t)B; V = sext32((uint64_t)p_); p_ != (int64_t)(int32_t)p_; }))
    OPRV(mulqv, V, ({ int64_t r_; bool o_ = __builtin_mul_overflow((int64_t)A, (int64_t)B, &r_); V = (uint64_t)r_; o_; }))

    OPR(sextb, sext8(B))
    OPR(sextw, sext16(B))
    OPR(ctpop, (uint64_t)__builtin_popcountll(B))
    OPR(perr, perr(A, B))
    OPR(ctlz, B ? (uint64_t)__builtin_clzll(B) : 64)
    OPR(cttz, B ? (uint64_t)__builtin_ctzll(B) : 64)
    OPR(unpkbw, unpkbw(B))
    OPR(unpkbl, unpkbl(B))
    OPR(pkwb, pkwb(B))
    OPR(pklb, pklb(B))
    OPR(minsb8, minmax(A, B, 8, true, false))
    OPR(minsw4, minmax(A, B, 16, true, false))
    OPR(minub8, minmax(A, B, 8, false, false))
    OPR(minuw4, minmax(A, B, 16, false, false))
    OPR(maxub8, minmax(A, B, 8, false, true))
    OPR(maxuw4, minmax(A, B, 16, false, true))
    OPR(maxsb8, minmax(A, B, 8, true, true))
    OPR(maxsw4, minmax(A, B, 16, true, true))

    /* ---- memory ----------------------------------------------------- */
#define EA (R[d->b] + (uint64_t)(int64_t)d->imm)
    L_lda: R[d->c] = EA; NEXT;
    L_LDI: R[d->c] = (uint64_t)(int64_t)d->imm; NEXT;
    L_MOV: R[d->c] = R[d->b]; NEXT;
    L_ldah: R[d->c] = EA; NEXT;
    L_ldbu: R[d->c] = LOAD(ld8, 1, EA); NEXT;
    L_ldwu: R[d->c] = LOAD(ld16, 2, EA); NEXT;
    L_ldl: R[d->c] = sext32(LOAD(ld32, 4, EA)); NEXT;
    L_ldq: R[d->c] = LOAD(ld64, 8, EA); NEXT;
    L_ldq_u: R[d->c] = LOAD(ld64, 8, EA & ~7ULL); NEXT;
    L_stb: STORE(st8, 1, EA, R[d->a]); NEXT;
    L_stw: STORE(st16, 2, EA, R[d->a]); NEXT;
    L_stl: STORE(st32, 4, EA, R[d->a]); NEXT;
    L_stq: STORE(st64, 8, EA, R[d->a]); NEXT;
    L_stq_u: STORE(st64, 8, EA & ~7ULL, R[d->a]); NEXT;
    L_lds: F[d->c] = fp_s_to_reg((uint32_t)LOAD(ld32, 4, EA)); NEXT;
    L_ldt: F[d->c] = LOAD(ld64, 8, EA); NEXT;
    L_sts: STORE(st32, 4, EA, fp_reg_to_s(F[d->a])); NEXT;
    L_stt: STORE(st64, 8, EA, F[d->a]); NEXT;
    L_ldl_l: {
        uint64_t ea = EA;
        if (unlikely(ea & 3))
            guest_fault(t, b, d, A_SIGBUS, A_BUS_ADRALN, ea, false);
        R[d->c] = sext32(LOAD(ld32, 4, ea));
        t->lock = true;
        t->lock_addr = ea & ~15ULL;
        NEXT;
    }
    L_ldq_l: {
        uint64_t ea = EA;
        if (unlikely(ea & 7))
            guest_fault(t, b, d, A_SIGBUS, A_BUS_ADRALN, ea, false);
        R[d->c] = LOAD(ld64, 8, ea);
        t->lock = true;
        t->lock_addr = ea & ~15ULL;
        NEXT;
    }
    L_stl_c: {
        uint64_t ea = EA, v = R[d->a];
        if (unlikely(ea & 3))
            guest_fault(t, b, d, A_SIGBUS, A_BUS_ADRALN, ea, false);
        bool ok = t->lock && t->lock_addr == (ea & ~15ULL);
        MEMEA(ea);          /* the cycle model sees a failed one as a store too */
        if (ok)
            STORE(st32, 4, ea, v);
        t->lock = false;
        R[d->c] = ok;
        NEXT;
    }
    L_stq_c: {
        uint64_t ea = EA, v = R[d->a];
        if (unlikely(ea & 7))
            guest_fault(t, b, d, A_SIGBUS, A_BUS_ADRALN, ea, false);
        bool ok = t->lock && t->lock_addr == (ea & ~15ULL);
        MEMEA(ea);          /* the cycle model sees a failed one as a store too */
        if (ok)
            STORE(st64, 8, ea, v);
        t->lock = false;
        R[d->c] = ok;
        NEXT;
    }
#undef EA

    /* ---- opcode 0x18 ------------------------------------------------ */
    L_NOP: L_trapb: L_excb: L_mb: L_wmb:
        NEXT;
    /* Prefetches change nothing but the caches: the cycle model needs
     * their address.  FETCH and WH64 name it in Rb alone. */
    L_PREF: MEMEA(R[d->b] + (uint64_t)(int64_t)d->imm); NEXT;
    L_fetch: L_fetch_m: L_ecb: L_wh64: L_wh64en: MEMEA(R[d->b]); NEXT;
    L_rpcc: R[d->c] = vcycles(m) & 0xffffffffULL; NEXT;
    L_rc: R[d->c] = t->rx; t->rx = false; NEXT;
    L_rs: R[d->c] = t->rx; t->rx = true; NEXT;

    /* ---- floating point ------------------------------------------- */
#define FPOP(h, op) L_##h: {                                                  \
        uint64_t ex_ = 0, v_ = fp_ieee(t, op, d->q, F[d->a], F[d->b], &ex_);  \
        F[d->c] = v_;                                                         \
        if (unlikely(ex_))                                                    \
            fp_raise(t, b, d, d->q, ex_);                                     \
        NEXT;                                                                 \
    }
    FPOP(adds, FO_ADDS) FPOP(subs, FO_SUBS) FPOP(muls, FO_MULS) FPOP(divs, FO_DIVS)
    FPOP(addt, FO_ADDT) FPOP(subt, FO_SUBT) FPOP(mult, FO_MULT) FPOP(divt, FO_DIVT)
    FPOP(cmptun, FO_CMPTUN) FPOP(cmpteq, FO_CMPTEQ) FPOP(cmptlt, FO_CMPTLT)
    FPOP(cmptle, FO_CMPTLE) FPOP(cvtts, FO_CVTTS) FPOP(cvttq, FO_CVTTQ)
    FPOP(cvtqs, FO_CVTQS) FPOP(cvtqt, FO_CVTQT) FPOP(cvtst, FO_CVTST)
    FPOP(cvtsts, FO_CVTST) FPOP(sqrts, FO_SQRTS) FPOP(sqrtt, FO_SQRTT)
    FPOP(cvtql, FO_CVTQL)
#undef FPOP
    L_cvtlq: {
        uint64_t v = F[d->b];
        F[d->c] = (uint64_t)(((int64_t)v >> 32) & ~0x3fffffffLL) | ((v >> 29) & 0x3fffffff);
        NEXT;
    }
#define SIGN (1ULL << 63)
    L_cpys: F[d->c] = (F[d->a] & SIGN) | (F[d->b] & ~SIGN); NEXT;
    L_cpysn: F[d->c] = (~F[d->a] & SIGN) | (F[d->b] & ~SIGN); NEXT;
    L_cpyse: F[d->c] = (F[d->a] & 0xfff0000000000000ULL) | (F[d->b] & 0x000fffffffffffffULL); NEXT;
    L_mt_fpcr: fp_set_fpcr(t, F[d->a]); NEXT;
    L_mf_fpcr: F[d->c] = t->fpcr; NEXT;
    /* FP tests look at the bits; -0 counts as zero */
#define FZ(v) (((v) << 1) == 0)
#define FNEG(v) ((int64_t)(v) < 0 && !FZ(v))
    L_fcmoveq: F[d->c] = (FZ(F[d->a])) ? F[d->b] : F[d->c]; NEXT;
    L_fcmovne: F[d->c] = (!FZ(F[d->a])) ? F[d->b] : F[d->c]; NEXT;
    L_fcmovlt: F[d->c] = (FNEG(F[d->a])) ? F[d->b] : F[d->c]; NEXT;
    L_fcmovge: F[d->c] = (!FNEG(F[d->a])) ? F[d->b] : F[d->c]; NEXT;
    L_fcmovle: F[d->c] = (FNEG(F[d->a]) || FZ(F[d->a])) ? F[d->b] : F[d->c]; NEXT;
    L_fcmovgt: F[d->c] = (!FNEG(F[d->a]) && !FZ(F[d->a])) ? F[d->b] : F[d->c]; NEXT;
    L_itofs: F[d->c] = fp_s_to_reg((uint32_t)R[d->a]); NEXT;
    L_itoft: F[d->c] = R[d->a]; NEXT;
    L_ftoit: R[d->c] = F[d->a]; NEXT;
    L_ftois: R[d->c] = sext32(fp_reg_to_s(F[d->a])); NEXT;

    /* ---- branches: always the last instruction of a block ------------ */
#define COND(h, cond) L_##h: { const uint64_t A = R[d->a]; if (cond) goto taken; goto fall; }
#define FCOND(h, cond) L_##h: { const uint64_t A = F[d->a]; if (cond) goto taken; goto fall; }
    COND(beq, A == 0) COND(bne, A != 0) COND(blt, (int64_t)A < 0)
    COND(ble, (int64_t)A <= 0) COND(bge, (int64_t)A >= 0) COND(bgt, (int64_t)A > 0)
    COND(blbc, !(A & 1)) COND(blbs, A & 1)
    FCOND(fbeq, FZ(A)) FCOND(fbne, !FZ(A)) FCOND(fblt, FNEG(A))
    FCOND(fbge, !FNEG(A)) FCOND(fble, FNEG(A) || FZ(A)) FCOND(fbgt, !FNEG(A) && !FZ(A))
#undef COND
#undef FCOND
    L_br: L_bsr:
        R[d->c] = b->end;
        goto taken;
    L_SEQEND:               /* fell off a block that ends without a branch */
        d--;
        npc = b->end;
        slot = 1;
        goto chain;
    L_jmp: L_jsr: L_ret: L_jsr_coroutine:
        npc = R[d->b] & ~3ULL;
        R[d->c] = b->end;
        BLOCK_RETIRED(npc);
        goto indirect;

taken:
    npc = b->target;
    slot = 0;
    goto chain;
fall:
    npc = b->end;
    slot = 1;
chain:
    BLOCK_RETIRED(npc);
    if (unlikely(slow && m->x))
        exact_leave(t, b, npc, slot == 0);
    if (b->gen == cc->gen) {
        block *nb = b->succ[slot];
        if (nb) {
            b = nb;
            goto enter;
        }
    } else {
        b->succ[0] = b->succ[1] = NULL;
        b->gen = cc->gen;
    }
    {
        block *nb = code_get(t, npc);
        b->succ[slot] = nb;
        b = nb;
    }
    goto enter;
indirect:
    if (unlikely(slow && m->x))
        exact_leave(t, b, npc, true);
    b = cc->jc[(npc >> 2) & (JC_N - 1)];
    if (unlikely(!b || b->pc != npc))
        b = code_get(t, npc);
    goto enter;

    /* ---- PAL calls ---------------------------------------------------- */
    L_callsys:
        t->pc = b->end;
        BLOCK_RETIRED(b->end);
        if (unlikely(slow && m->x))
            exact_leave(t, b, b->end, true);
        if (syscall_do(t) != SC_CONT)
            goto leave;
        goto reload;
    L_imb:
        BLOCK_RETIRED(b->end);
        if (unlikely(slow && m->x))
            exact_leave(t, b, b->end, true);
        t->pc = b->end;
        code_flush(x);
        goto reload;
    L_rduniq: R[0] = t->uniq; NEXT;
    L_wruniq: t->uniq = R[16]; NEXT;
    L_bpt: L_bugchk:
        guest_fault(t, b, d, A_SIGTRAP, A_TRAP_BRKPT, PCOF(d), false);
    L_gentrap: {
        int si, sig = gentrap_sig((int64_t)R[16], &si);
        guest_fault(t, b, d, sig, si, PCOF(d), true);
    }
    L_ILL:
        guest_fault(t, b, d, A_SIGILL, A_ILL_ILLOPC, PCOF(d), false);

leave:
    return;

#undef NEXT
#undef DISPATCH
#undef BLOCK_RETIRED
#undef MEMEA
#undef KEEP
#undef PCOF
#undef TLBE
#undef LOAD
#undef STORE
#undef OPR
#undef OPRV
#undef CMOV
#undef FZ
#undef FNEG
#undef SIGN
}

/* Guest faults longjmp here, out of any depth of the executor. */
uint64_t EXEC_NAME(thread *t, int64_t budget)
{
    const uint64_t start = t->icount;
    jmp_buf jb;
    if (setjmp(jb) == 0) {
        t->trap = &jb;
        EXEC_INNER(t, budget);
    }
    t->trap = NULL;
    return t->icount - start;
}
