/*
 * alpha/optable.c: THE Alpha instruction table.
 *
 * One row per architectural instruction (pseudo-ops such as mov, nop, br,
 * fmov are spellings chosen by the disassembler, not rows).  Encodings follow
 * the Alpha Architecture Handbook v4; pipe and latency classes follow the
 * EV5 facts in shared alpha-facts.md.  Where an instruction does not exist on
 * the 21164 (BWX, CIX, MVI, FIX), its pipe is our assumption, documented in
 * docs/alpha.md.
 *
 * FP operate rows give the unqualified function code; the trap and rounding
 * bits allowed on top of it are named by the row's fpqual class
 * (alpha/decode.c expands them).
 */
#include "alpha/insn.h"

#define ROW(n, op, fmt, f, ra, rb, rc, is, fl, pi, la, sz, q, flags) \
    { n, op, fmt, f, ra, rb, rc, is, fl, pi, la, sz, q, flags }

/* memory format */
#define LD(n, op, sz, is, fl) ROW(n, op, AF_MEM, 0, RR_IW, RR_IR, RR_NONE, is, FLOW_NONE, PIPE_E01, LAT_LOAD, sz, 0, OPF_LOAD | (fl))
#define FLD(n, op, sz, is) ROW(n, op, AF_MEM, 0, RR_FW, RR_IR, RR_NONE, is, FLOW_NONE, PIPE_E01, LAT_LOAD, sz, 0, OPF_LOAD | OPF_FPMEM)
#define ST(n, op, sz, is, fl) ROW(n, op, AF_MEM, 0, RR_IR, RR_IR, RR_NONE, is, FLOW_NONE, PIPE_E0, LAT_STORE, sz, 0, OPF_STORE | (fl))
#define FST(n, op, sz, is) ROW(n, op, AF_MEM, 0, RR_FR, RR_IR, RR_NONE, is, FLOW_NONE, PIPE_E0, LAT_STORE, sz, 0, OPF_STORE | OPF_FPMEM)
/* integer operate: Ra, Rb/literal, Rc */
#define OP3(n, op, f, pi, la) ROW(n, op, AF_OPR, f, RR_IR, RR_IR, RR_IW, ISET_BASE, FLOW_NONE, pi, la, 0, 0, 0)
#define OP3T(n, op, f, pi, la) ROW(n, op, AF_OPR, f, RR_IR, RR_IR, RR_IW, ISET_BASE, FLOW_NONE, pi, la, 0, 0, OPF_TRAPS)
#define CMOV(n, f) ROW(n, 0x11, AF_OPR, f, RR_IR, RR_IR, RR_IRW, ISET_BASE, FLOW_NONE, PIPE_E01, LAT_CMOV, 0, 0, 0)
#define OPX(n, op, f, ra, rb, rc, is, pi, la, flags) ROW(n, op, AF_OPR, f, ra, rb, rc, is, FLOW_NONE, pi, la, 0, 0, flags)
/* opcode 0x1C has no literal forms */
#define OPN(n, f, ra, rb, rc, is, pi, la) OPX(n, 0x1c, f, ra, rb, rc, is, pi, la, OPF_NOLIT)
/* FP operate: Fa, Fb, Fc */
#define FP3(n, op, f, q, is, pi, la) ROW(n, op, AF_FPOPR, f, RR_FR, RR_FR, RR_FW, is, FLOW_NONE, pi, la, 0, q, OPF_TRAPS)
#define FP2(n, op, f, q, is, pi, la) ROW(n, op, AF_FPOPR, f, RR_NONE, RR_FR, RR_FW, is, FLOW_NONE, pi, la, 0, q, OPF_TRAPS)
#define FPX(n, op, f, ra, rb, rc, is, pi, la, flags) ROW(n, op, AF_FPOPR, f, ra, rb, rc, is, FLOW_NONE, pi, la, 0, FPQ_NONE, flags)
/* branches */
#define BRI(n, op, fl) ROW(n, op, AF_BRA, 0, RR_IR, RR_NONE, RR_NONE, ISET_BASE, fl, PIPE_E1, LAT_BRANCH, 0, 0, 0)
#define BRF(n, op) ROW(n, op, AF_BRA, 0, RR_FR, RR_NONE, RR_NONE, ISET_BASE, FLOW_CBRANCH, PIPE_FA, LAT_BRANCH, 0, 0, 0)
/* opcode 0x18 */
#define MFC(n, f, ra, rb, pi, flags) ROW(n, 0x18, AF_MFC, f, ra, rb, RR_NONE, ISET_BASE, FLOW_NONE, pi, LAT_MISC, 0, 0, flags)
/* CALL_PAL */
#define PAL(n, f) ROW(n, 0x00, AF_PAL, f, RR_NONE, RR_NONE, RR_NONE, ISET_BASE, FLOW_PAL, PIPE_E1, LAT_PAL, 0, 0, 0)
#define RES(n, op) ROW(n, op, AF_RESERVED, 0, RR_NONE, RR_NONE, RR_NONE, ISET_PALRES, FLOW_NONE, PIPE_NONE, LAT_NONE, 0, 0, 0)

const alpha_opdef alpha_optable[] = {
    /* ---- PALcode: the unprivileged functions, then the rest ---------- */
    PAL("halt", 0x0000),
    PAL("draina", 0x0002),
    PAL("bpt", PAL_BPT),
    PAL("bugchk", PAL_BUGCHK),
    PAL("callsys", PAL_CALLSYS),
    PAL("imb", PAL_IMB),
    PAL("rduniq", PAL_RDUNIQ),
    PAL("wruniq", PAL_WRUNIQ),
    PAL("gentrap", PAL_GENTRAP),
    PAL("call_pal", 0xffffffff),   /* any other function */

    /* ---- PAL-reserved opcodes (privileged hw_* on real parts) -------- */
    RES("pal19", 0x19), RES("pal1b", 0x1b), RES("pal1d", 0x1d),
    RES("pal1e", 0x1e), RES("pal1f", 0x1f),

    /* ---- memory format ------------------------------------------------ */
    ROW("lda", 0x08, AF_MEM, 0, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_NONE, PIPE_E01, LAT_IADD, 0, 0, OPF_ADDR),
    ROW("ldah", 0x09, AF_MEM, 0, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_NONE, PIPE_E01, LAT_IADD, 0, 0, OPF_ADDR | OPF_LDAH),
    LD("ldbu", 0x0a, 1, ISET_BWX, 0),
    LD("ldq_u", 0x0b, 8, ISET_BASE, OPF_UNALIGNED | OPF_UNOP),
    LD("ldwu", 0x0c, 2, ISET_BWX, 0),
    ST("stw", 0x0d, 2, ISET_BWX, 0),
    ST("stb", 0x0e, 1, ISET_BWX, 0),
    ST("stq_u", 0x0f, 8, ISET_BASE, OPF_UNALIGNED),
    FLD("ldf", 0x20, 4, ISET_VAX),
    FLD("ldg", 0x21, 8, ISET_VAX),
    FLD("lds", 0x22, 4, ISET_BASE),
    FLD("ldt", 0x23, 8, ISET_BASE),
    FST("stf", 0x24, 4, ISET_VAX),
    FST("stg", 0x25, 8, ISET_VAX),
    FST("sts", 0x26, 4, ISET_BASE),
    FST("stt", 0x27, 8, ISET_BASE),
    LD("ldl", 0x28, 4, ISET_BASE, 0),
    LD("ldq", 0x29, 8, ISET_BASE, 0),
    ROW("ldl_l", 0x2a, AF_MEM, 0, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_NONE, PIPE_E0, LAT_LDL, 4, 0, OPF_LOAD | OPF_LOCKED),
    ROW("ldq_l", 0x2b, AF_MEM, 0, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_NONE, PIPE_E0, LAT_LDL, 8, 0, OPF_LOAD | OPF_LOCKED),
    ST("stl", 0x2c, 4, ISET_BASE, 0),
    ST("stq", 0x2d, 8, ISET_BASE, 0),
    ROW("stl_c", 0x2e, AF_MEM, 0, RR_IRW, RR_IR, RR_NONE, ISET_BASE, FLOW_NONE, PIPE_E0, LAT_STC, 4, 0, OPF_STORE | OPF_LOCKED),
    ROW("stq_c", 0x2f, AF_MEM, 0, RR_IRW, RR_IR, RR_NONE, ISET_BASE, FLOW_NONE, PIPE_E0, LAT_STC, 8, 0, OPF_STORE | OPF_LOCKED),

    /* ---- opcode 0x18: function in the displacement --------------------- */
    MFC("trapb", 0x0000, RR_IGNORED, RR_IGNORED, PIPE_E0, OPF_NOARG),
    MFC("excb", 0x0400, RR_IGNORED, RR_IGNORED, PIPE_E0, OPF_NOARG),
    MFC("mb", 0x4000, RR_IGNORED, RR_IGNORED, PIPE_E0, OPF_NOARG | OPF_BARRIER),
    MFC("wmb", 0x4400, RR_IGNORED, RR_IGNORED, PIPE_E0, OPF_NOARG | OPF_BARRIER),
    MFC("fetch", 0x8000, RR_NONE, RR_IR, PIPE_E0, OPF_PREFETCH),
    MFC("fetch_m", 0xa000, RR_NONE, RR_IR, PIPE_E0, OPF_PREFETCH),
    MFC("rpcc", 0xc000, RR_IW, RR_IGNORED, PIPE_E0, 0),
    MFC("rc", 0xe000, RR_IW, RR_IGNORED, PIPE_E0, 0),
    MFC("ecb", 0xe800, RR_NONE, RR_IR, PIPE_E0, OPF_PREFETCH),
    MFC("rs", 0xf000, RR_IW, RR_IGNORED, PIPE_E0, 0),
    MFC("wh64", 0xf800, RR_NONE, RR_IR, PIPE_E0, OPF_PREFETCH),
    MFC("wh64en", 0xfc00, RR_NONE, RR_IR, PIPE_E0, OPF_PREFETCH),

    /* ---- opcode 0x1A: jumps; func is the 2-bit kind ------------------- */
    ROW("jmp", 0x1a, AF_JMP, 0, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_JUMP, PIPE_E1, LAT_JUMP, 0, 0, 0),
    ROW("jsr", 0x1a, AF_JMP, 1, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_CALL, PIPE_E1, LAT_JUMP, 0, 0, 0),
    ROW("ret", 0x1a, AF_JMP, 2, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_RETURN, PIPE_E1, LAT_JUMP, 0, 0, 0),
    ROW("jsr_coroutine", 0x1a, AF_JMP, 3, RR_IW, RR_IR, RR_NONE, ISET_BASE, FLOW_COROUTINE, PIPE_E1, LAT_JUMP, 0, 0, 0),

    /* ---- branches ------------------------------------------------------ */
    ROW("br", 0x30, AF_BRA, 0, RR_IW, RR_NONE, RR_NONE, ISET_BASE, FLOW_BRANCH, PIPE_E1, LAT_BRANCH, 0, 0, 0),
    BRF("fbeq", 0x31), BRF("fblt", 0x32), BRF("fble", 0x33),
    ROW("bsr", 0x34, AF_BRA, 0, RR_IW, RR_NONE, RR_NONE, ISET_BASE, FLOW_CALL, PIPE_E1, LAT_BRANCH, 0, 0, 0),
    BRF("fbne", 0x35), BRF("fbge", 0x36), BRF("fbgt", 0x37),
    BRI("blbc", 0x38, FLOW_CBRANCH), BRI("beq", 0x39, FLOW_CBRANCH),
    BRI("blt", 0x3a, FLOW_CBRANCH), BRI("ble", 0x3b, FLOW_CBRANCH),
    BRI("blbs", 0x3c, FLOW_CBRANCH), BRI("bne", 0x3d, FLOW_CBRANCH),
    BRI("bge", 0x3e, FLOW_CBRANCH), BRI("bgt", 0x3f, FLOW_CBRANCH),

    /* ---- 0x10: integer arithmetic -------------------------------------- */
    OP3("addl", 0x10, 0x00, PIPE_E01, LAT_IADD),
    OP3("s4addl", 0x10, 0x02, PIPE_E01, LAT_IADD),
    OP3("subl", 0x10, 0x09, PIPE_E01, LAT_IADD),
    OP3("s4subl", 0x10, 0x0b, PIPE_E01, LAT_IADD),
    OP3("cmpbge", 0x10, 0x0f, PIPE_E01, LAT_ICMP),
    OP3("s8addl", 0x10, 0x12, PIPE_E01, LAT_IADD),
    OP3("s8subl", 0x10, 0x1b, PIPE_E01, LAT_IADD),
    OP3("cmpult", 0x10, 0x1d, PIPE_E01, LAT_ICMP),
    OP3("addq", 0x10, 0x20, PIPE_E01, LAT_IADD),
    OP3("s4addq", 0x10, 0x22, PIPE_E01, LAT_IADD),
    OP3("subq", 0x10, 0x29, PIPE_E01, LAT_IADD),
    OP3("s4subq", 0x10, 0x2b, PIPE_E01, LAT_IADD),
    OP3("cmpeq", 0x10, 0x2d, PIPE_E01, LAT_ICMP),
    OP3("s8addq", 0x10, 0x32, PIPE_E01, LAT_IADD),
    OP3("s8subq", 0x10, 0x3b, PIPE_E01, LAT_IADD),
    OP3("cmpule", 0x10, 0x3d, PIPE_E01, LAT_ICMP),
    OP3T("addl/v", 0x10, 0x40, PIPE_E01, LAT_IADD),
    OP3T("subl/v", 0x10, 0x49, PIPE_E01, LAT_IADD),
    OP3("cmplt", 0x10, 0x4d, PIPE_E01, LAT_ICMP),
    OP3T("addq/v", 0x10, 0x60, PIPE_E01, LAT_IADD),
    OP3T("subq/v", 0x10, 0x69, PIPE_E01, LAT_IADD),
    OP3("cmple", 0x10, 0x6d, PIPE_E01, LAT_ICMP),

    /* ---- 0x11: logical, conditional move, AMASK, IMPLVER --------------- */
    OP3("and", 0x11, 0x00, PIPE_E01, LAT_ILOGIC),
    OP3("bic", 0x11, 0x08, PIPE_E01, LAT_ILOGIC),
    CMOV("cmovlbs", 0x14), CMOV("cmovlbc", 0x16),
    OP3("bis", 0x11, 0x20, PIPE_E01, LAT_ILOGIC),
    CMOV("cmoveq", 0x24), CMOV("cmovne", 0x26),
    OP3("ornot", 0x11, 0x28, PIPE_E01, LAT_ILOGIC),
    OP3("xor", 0x11, 0x40, PIPE_E01, LAT_ILOGIC),
    CMOV("cmovlt", 0x44), CMOV("cmovge", 0x46),
    OP3("eqv", 0x11, 0x48, PIPE_E01, LAT_ILOGIC),
    OPX("amask", 0x11, 0x61, RR_NONE, RR_IR, RR_IW, ISET_BASE, PIPE_E01, LAT_ILOGIC, 0),
    CMOV("cmovle", 0x64), CMOV("cmovgt", 0x66),
    OPX("implver", 0x11, 0x6c, RR_NONE, RR_IR, RR_IW, ISET_BASE, PIPE_E01, LAT_ILOGIC, 0),

    /* ---- 0x12: shifts and byte manipulation ---------------------------- */
    OP3("mskbl", 0x12, 0x02, PIPE_E0, LAT_SHIFT), OP3("extbl", 0x12, 0x06, PIPE_E0, LAT_SHIFT),
    OP3("insbl", 0x12, 0x0b, PIPE_E0, LAT_SHIFT), OP3("mskwl", 0x12, 0x12, PIPE_E0, LAT_SHIFT),
    OP3("extwl", 0x12, 0x16, PIPE_E0, LAT_SHIFT), OP3("inswl", 0x12, 0x1b, PIPE_E0, LAT_SHIFT),
    OP3("mskll", 0x12, 0x22, PIPE_E0, LAT_SHIFT), OP3("extll", 0x12, 0x26, PIPE_E0, LAT_SHIFT),
    OP3("insll", 0x12, 0x2b, PIPE_E0, LAT_SHIFT), OP3("zap", 0x12, 0x30, PIPE_E0, LAT_SHIFT),
    OP3("zapnot", 0x12, 0x31, PIPE_E0, LAT_SHIFT), OP3("mskql", 0x12, 0x32, PIPE_E0, LAT_SHIFT),
    OP3("srl", 0x12, 0x34, PIPE_E0, LAT_SHIFT), OP3("extql", 0x12, 0x36, PIPE_E0, LAT_SHIFT),
    OP3("sll", 0x12, 0x39, PIPE_E0, LAT_SHIFT), OP3("insql", 0x12, 0x3b, PIPE_E0, LAT_SHIFT),
    OP3("sra", 0x12, 0x3c, PIPE_E0, LAT_SHIFT), OP3("mskwh", 0x12, 0x52, PIPE_E0, LAT_SHIFT),
    OP3("inswh", 0x12, 0x57, PIPE_E0, LAT_SHIFT), OP3("extwh", 0x12, 0x5a, PIPE_E0, LAT_SHIFT),
    OP3("msklh", 0x12, 0x62, PIPE_E0, LAT_SHIFT), OP3("inslh", 0x12, 0x67, PIPE_E0, LAT_SHIFT),
    OP3("extlh", 0x12, 0x6a, PIPE_E0, LAT_SHIFT), OP3("mskqh", 0x12, 0x72, PIPE_E0, LAT_SHIFT),
    OP3("insqh", 0x12, 0x77, PIPE_E0, LAT_SHIFT), OP3("extqh", 0x12, 0x7a, PIPE_E0, LAT_SHIFT),

    /* ---- 0x13: multiply (E0, not pipelined on the 21164) --------------- */
    OP3("mull", 0x13, 0x00, PIPE_E0, LAT_IMULL),
    OP3("mulq", 0x13, 0x20, PIPE_E0, LAT_IMULQ),
    OP3("umulh", 0x13, 0x30, PIPE_E0, LAT_UMULH),
    OP3T("mull/v", 0x13, 0x40, PIPE_E0, LAT_IMULL),
    OP3T("mulq/v", 0x13, 0x60, PIPE_E0, LAT_IMULQ),

    /* ---- 0x1C: BWX sign extension, CIX counts, MVI, FIX moves ---------- */
    OPN("sextb", 0x00, RR_NONE, RR_IR, RR_IW, ISET_BWX, PIPE_E0, LAT_SHIFT),
    OPN("sextw", 0x01, RR_NONE, RR_IR, RR_IW, ISET_BWX, PIPE_E0, LAT_SHIFT),
    OPN("ctpop", 0x30, RR_NONE, RR_IR, RR_IW, ISET_CIX, PIPE_E0, LAT_MVI),
    OPN("perr", 0x31, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI),
    OPN("ctlz", 0x32, RR_NONE, RR_IR, RR_IW, ISET_CIX, PIPE_E0, LAT_MVI),
    OPN("cttz", 0x33, RR_NONE, RR_IR, RR_IW, ISET_CIX, PIPE_E0, LAT_MVI),
    OPN("unpkbw", 0x34, RR_NONE, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI),
    OPN("unpkbl", 0x35, RR_NONE, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI),
    OPN("pkwb", 0x36, RR_NONE, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI),
    OPN("pklb", 0x37, RR_NONE, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI),
    OPX("minsb8", 0x1c, 0x38, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("minsw4", 0x1c, 0x39, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("minub8", 0x1c, 0x3a, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("minuw4", 0x1c, 0x3b, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("maxub8", 0x1c, 0x3c, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("maxuw4", 0x1c, 0x3d, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("maxsb8", 0x1c, 0x3e, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPX("maxsw4", 0x1c, 0x3f, RR_IR, RR_IR, RR_IW, ISET_MVI, PIPE_E0, LAT_MVI, 0),
    OPN("ftoit", 0x70, RR_FR, RR_NONE, RR_IW, ISET_FIX, PIPE_FA, LAT_ITOF),
    OPN("ftois", 0x78, RR_FR, RR_NONE, RR_IW, ISET_FIX, PIPE_FA, LAT_ITOF),

    /* ---- 0x14: FIX: integer-to-FP moves and square roots --------------- */
    FPX("itofs", 0x14, 0x004, RR_IR, RR_NONE, RR_FW, ISET_FIX, PIPE_E0, LAT_ITOF, 0),
    FPX("itoff", 0x14, 0x014, RR_IR, RR_NONE, RR_FW, ISET_FIX, PIPE_E0, LAT_ITOF, 0),
    FPX("itoft", 0x14, 0x024, RR_IR, RR_NONE, RR_FW, ISET_FIX, PIPE_E0, LAT_ITOF, 0),
    FP2("sqrtf", 0x14, 0x08a, FPQ_VAX, ISET_FIX, PIPE_FA, LAT_FSQRTS),
    FP2("sqrts", 0x14, 0x08b, FPQ_IEEE, ISET_FIX, PIPE_FA, LAT_FSQRTS),
    FP2("sqrtg", 0x14, 0x0aa, FPQ_VAX, ISET_FIX, PIPE_FA, LAT_FSQRTT),
    FP2("sqrtt", 0x14, 0x0ab, FPQ_IEEE, ISET_FIX, PIPE_FA, LAT_FSQRTT),

    /* ---- 0x15: VAX floating point -------------------------------------- */
    FP3("addf", 0x15, 0x080, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("subf", 0x15, 0x081, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("mulf", 0x15, 0x082, FPQ_VAX, ISET_VAX, PIPE_FM, LAT_FMUL),
    FP3("divf", 0x15, 0x083, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FDIVS),
    FP2("cvtdg", 0x15, 0x09e, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("addg", 0x15, 0x0a0, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("subg", 0x15, 0x0a1, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("mulg", 0x15, 0x0a2, FPQ_VAX, ISET_VAX, PIPE_FM, LAT_FMUL),
    FP3("divg", 0x15, 0x0a3, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FDIVT),
    FP3("cmpgeq", 0x15, 0x0a5, FPQ_VAX_CMP, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("cmpglt", 0x15, 0x0a6, FPQ_VAX_CMP, ISET_VAX, PIPE_FA, LAT_FADD),
    FP3("cmpgle", 0x15, 0x0a7, FPQ_VAX_CMP, ISET_VAX, PIPE_FA, LAT_FADD),
    FP2("cvtgf", 0x15, 0x0ac, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP2("cvtgd", 0x15, 0x0ad, FPQ_VAX, ISET_VAX, PIPE_FA, LAT_FADD),
    FP2("cvtgq", 0x15, 0x0af, FPQ_VAX_CVTGQ, ISET_VAX, PIPE_FA, LAT_FADD),
    FP2("cvtqf", 0x15, 0x0bc, FPQ_VAX_CVTQ, ISET_VAX, PIPE_FA, LAT_FADD),
    FP2("cvtqg", 0x15, 0x0be, FPQ_VAX_CVTQ, ISET_VAX, PIPE_FA, LAT_FADD),

    /* ---- 0x16: IEEE floating point ------------------------------------- */
    FP3("adds", 0x16, 0x080, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("subs", 0x16, 0x081, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("muls", 0x16, 0x082, FPQ_IEEE, ISET_IEEE, PIPE_FM, LAT_FMUL),
    FP3("divs", 0x16, 0x083, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FDIVS),
    FP3("addt", 0x16, 0x0a0, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("subt", 0x16, 0x0a1, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("mult", 0x16, 0x0a2, FPQ_IEEE, ISET_IEEE, PIPE_FM, LAT_FMUL),
    FP3("divt", 0x16, 0x0a3, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FDIVT),
    FP3("cmptun", 0x16, 0x0a4, FPQ_IEEE_CMP, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("cmpteq", 0x16, 0x0a5, FPQ_IEEE_CMP, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("cmptlt", 0x16, 0x0a6, FPQ_IEEE_CMP, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP3("cmptle", 0x16, 0x0a7, FPQ_IEEE_CMP, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP2("cvtts", 0x16, 0x0ac, FPQ_IEEE, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP2("cvttq", 0x16, 0x0af, FPQ_IEEE_CVTTQ, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP2("cvtqs", 0x16, 0x0bc, FPQ_IEEE_CVTQ, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP2("cvtqt", 0x16, 0x0be, FPQ_IEEE_CVTQ, ISET_IEEE, PIPE_FA, LAT_FADD),
    /* CVTST lives in trap-qualifier space CVTTS never uses: exact codes. */
    FP2("cvtst", 0x16, 0x2ac, FPQ_NONE, ISET_IEEE, PIPE_FA, LAT_FADD),
    FP2("cvtst/s", 0x16, 0x6ac, FPQ_NONE, ISET_IEEE, PIPE_FA, LAT_FADD),

    /* ---- 0x17: datatype-independent FP --------------------------------- */
    FP2("cvtlq", 0x17, 0x010, FPQ_NONE, ISET_BASE, PIPE_FA, LAT_FADD),
    FPX("cpys", 0x17, 0x020, RR_FR, RR_FR, RR_FW, ISET_BASE, PIPE_FAM, LAT_FADD, 0),
    FPX("cpysn", 0x17, 0x021, RR_FR, RR_FR, RR_FW, ISET_BASE, PIPE_FAM, LAT_FADD, 0),
    FPX("cpyse", 0x17, 0x022, RR_FR, RR_FR, RR_FW, ISET_BASE, PIPE_FAM, LAT_FADD, 0),
    FPX("mt_fpcr", 0x17, 0x024, RR_FR, RR_IGNORED, RR_IGNORED, ISET_BASE, PIPE_FA, LAT_MISC, 0),
    FPX("mf_fpcr", 0x17, 0x025, RR_FW, RR_IGNORED, RR_IGNORED, ISET_BASE, PIPE_FA, LAT_MISC, 0),
    FPX("fcmoveq", 0x17, 0x02a, RR_FR, RR_FR, RR_FRW, ISET_BASE, PIPE_FA, LAT_FADD, 0),
    FPX("fcmovne", 0x17, 0x02b, RR_FR, RR_FR, RR_FRW, ISET_BASE, PIPE_FA, LAT_FADD, 0),
    FPX("fcmovlt", 0x17, 0x02c, RR_FR, RR_FR, RR_FRW, ISET_BASE, PIPE_FA, LAT_FADD, 0),
    FPX("fcmovge", 0x17, 0x02d, RR_FR, RR_FR, RR_FRW, ISET_BASE, PIPE_FA, LAT_FADD, 0),
    FPX("fcmovle", 0x17, 0x02e, RR_FR, RR_FR, RR_FRW, ISET_BASE, PIPE_FA, LAT_FADD, 0),
    FPX("fcmovgt", 0x17, 0x02f, RR_FR, RR_FR, RR_FRW, ISET_BASE, PIPE_FA, LAT_FADD, 0),
    FP2("cvtql", 0x17, 0x030, FPQ_CVTQL, ISET_BASE, PIPE_FA, LAT_FADD),
};

const size_t alpha_optable_len = sizeof alpha_optable / sizeof alpha_optable[0];
