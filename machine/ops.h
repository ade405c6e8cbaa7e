/*
 * machine/ops.h: the executor's handlers, each named after the alpha/ table
 * row it implements.  translate.c maps rows to handlers at start-up by
 * looking each name up with alpha_lookup(); the executors build their jump
 * tables from the same lists, so a handler without code fails to compile.
 *
 * OPR handlers come in pairs: H_x takes Rb, H_x_i the 8-bit literal.
 */
#ifndef MACHINE_OPS_H
#define MACHINE_OPS_H

#define OPR_OPS(X)                                                            \
    X(addl, "addl") X(s4addl, "s4addl") X(subl, "subl") X(s4subl, "s4subl")   \
    X(cmpbge, "cmpbge") X(s8addl, "s8addl") X(s8subl, "s8subl")               \
    X(cmpult, "cmpult") X(addq, "addq") X(s4addq, "s4addq") X(subq, "subq")   \
    X(s4subq, "s4subq") X(cmpeq, "cmpeq") X(s8addq, "s8addq")                 \
    X(s8subq, "s8subq") X(cmpule, "cmpule") X(addlv, "addl/v")                \
    X(sublv, "subl/v") X(cmplt, "cmplt") X(addqv, "addq/v") X(subqv, "subq/v") \
    X(cmple, "cmple")                                                         \
    X(and, "and") X(bic, "bic") X(cmovlbs, "cmovlbs") X(cmovlbc, "cmovlbc")   \
    X(bis, "bis") X(cmoveq, "cmoveq") X(cmovne, "cmovne") X(ornot, "ornot")   \
    X(xor, "xor") X(cmovlt, "cmovlt") X(cmovge, "cmovge") X(eqv, "eqv")       \
    X(amask, "amask") X(cmovle, "cmovle") X(cmovgt, "cmovgt")                 \
    X(implver, "implver")                                                     \
    X(mskbl, "mskbl") X(extbl, "extbl") X(insbl, "insbl") X(mskwl, "mskwl")   \
    X(extwl, "extwl") X(inswl, "inswl") X(mskll, "mskll") X(extll, "extll")   \
    X(insll, "insll") X(zap, "zap") X(zapnot, "zapnot") X(mskql, "mskql")     \
    X(srl, "srl") X(extql, "extql") X(sll, "sll") X(insql, "insql")           \
    X(sra, "sra") X(mskwh, "mskwh") X(inswh, "inswh") X(extwh, "extwh")       \
    X(msklh, "msklh") X(inslh, "inslh") X(extlh, "extlh") X(mskqh, "mskqh")   \
    X(insqh, "insqh") X(extqh, "extqh")                                       \
    X(mull, "mull") X(mulq, "mulq") X(umulh, "umulh") X(mullv, "mull/v")      \
    X(mulqv, "mulq/v")                                                        \
    X(sextb, "sextb") X(sextw, "sextw") X(ctpop, "ctpop") X(perr, "perr")     \
    X(ctlz, "ctlz") X(cttz, "cttz") X(unpkbw, "unpkbw") X(unpkbl, "unpkbl")   \
    X(pkwb, "pkwb") X(pklb, "pklb") X(minsb8, "minsb8") X(minsw4, "minsw4")   \
    X(minub8, "minub8") X(minuw4, "minuw4") X(maxub8, "maxub8")               \
    X(maxuw4, "maxuw4") X(maxsb8, "maxsb8") X(maxsw4, "maxsw4")

#define ONE_OPS(X)                                                            \
    X(lda, "lda") X(ldah, "ldah") X(ldbu, "ldbu") X(ldq_u, "ldq_u")           \
    X(ldwu, "ldwu") X(stw, "stw") X(stb, "stb") X(stq_u, "stq_u")             \
    X(lds, "lds") X(ldt, "ldt") X(sts, "sts") X(stt, "stt")                   \
    X(ldl, "ldl") X(ldq, "ldq") X(ldl_l, "ldl_l") X(ldq_l, "ldq_l")           \
    X(stl, "stl") X(stq, "stq") X(stl_c, "stl_c") X(stq_c, "stq_c")           \
    X(trapb, "trapb") X(excb, "excb") X(mb, "mb") X(wmb, "wmb")               \
    X(fetch, "fetch") X(fetch_m, "fetch_m") X(rpcc, "rpcc") X(rc, "rc")       \
    X(ecb, "ecb") X(rs, "rs") X(wh64, "wh64") X(wh64en, "wh64en")             \
    X(jmp, "jmp") X(jsr, "jsr") X(ret, "ret") X(jsr_coroutine, "jsr_coroutine") \
    X(br, "br") X(bsr, "bsr")                                                 \
    X(blbc, "blbc") X(beq, "beq") X(blt, "blt") X(ble, "ble")                 \
    X(blbs, "blbs") X(bne, "bne") X(bge, "bge") X(bgt, "bgt")                 \
    X(fbeq, "fbeq") X(fblt, "fblt") X(fble, "fble") X(fbne, "fbne")           \
    X(fbge, "fbge") X(fbgt, "fbgt")                                           \
    X(callsys, "callsys") X(bpt, "bpt") X(bugchk, "bugchk") X(imb, "imb")     \
    X(rduniq, "rduniq") X(wruniq, "wruniq") X(gentrap, "gentrap")             \
    X(adds, "adds") X(subs, "subs") X(muls, "muls") X(divs, "divs")           \
    X(addt, "addt") X(subt, "subt") X(mult, "mult") X(divt, "divt")           \
    X(cmptun, "cmptun") X(cmpteq, "cmpteq") X(cmptlt, "cmptlt")               \
    X(cmptle, "cmptle") X(cvtts, "cvtts") X(cvttq, "cvttq") X(cvtqs, "cvtqs") \
    X(cvtqt, "cvtqt") X(cvtst, "cvtst") X(cvtsts, "cvtst/s")                  \
    X(sqrts, "sqrts") X(sqrtt, "sqrtt")                                       \
    X(cvtlq, "cvtlq") X(cpys, "cpys") X(cpysn, "cpysn") X(cpyse, "cpyse")     \
    X(mt_fpcr, "mt_fpcr") X(mf_fpcr, "mf_fpcr")                               \
    X(fcmoveq, "fcmoveq") X(fcmovne, "fcmovne") X(fcmovlt, "fcmovlt")         \
    X(fcmovge, "fcmovge") X(fcmovle, "fcmovle") X(fcmovgt, "fcmovgt")         \
    X(cvtql, "cvtql") X(itofs, "itofs") X(itoft, "itoft") X(ftoit, "ftoit")   \
    X(ftois, "ftois")

#define OPS_ENUM2(h, n) H_##h, H_##h##_i,
#define OPS_ENUM1(h, n) H_##h,
enum {
    H_NOP, H_ILL, H_SEQEND,   /* SEQEND: sentinel after a block that falls through */
    H_LDI, H_MOV,             /* lda/bis with r31: load a constant, copy a register */
    H_PREF,                   /* a load into r31/f31: only its address matters (to the cycle model) */
    OPR_OPS(OPS_ENUM2)
    ONE_OPS(OPS_ENUM1)
    H_COUNT
};

#endif
