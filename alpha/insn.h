/*
 * alpha/insn.h: the Alpha instruction set as data.
 *
 * One table (alpha/optable.c) describes every instruction: its encoding,
 * the roles of its register fields, the EV5 pipe and latency class, the kind
 * of control flow, and the assembler name.  Decoding, encoding, disassembly,
 * register def/use sets and every client (machine, cfg, scheduler, rewriter)
 * read that table; nobody keeps a second list of opcodes.
 */
#ifndef ALPHA_INSN_H
#define ALPHA_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Instruction formats (Alpha Architecture Handbook, ch. 3). */
typedef enum {
    AF_PAL,      /* CALL_PAL: function in bits 25:0 */
    AF_MEM,      /* Ra, disp16(Rb) */
    AF_MFC,      /* opcode 0x18: function in the displacement field */
    AF_JMP,      /* opcode 0x1A: Ra, (Rb), 2-bit kind in 15:14, hint 13:0 */
    AF_BRA,      /* Ra, 21-bit word displacement */
    AF_OPR,      /* integer operate: Ra, Rb or 8-bit literal, Rc; 7-bit func */
    AF_FPOPR,    /* floating operate: Fa, Fb, Fc; 11-bit func */
    AF_RESERVED  /* PAL-reserved and unassigned opcodes */
} alpha_format;

/* What a register field means for this instruction. */
typedef enum {
    RR_NONE = 0,  /* field unused (should be 31) */
    RR_IR,        /* integer register read */
    RR_IW,        /* integer register written */
    RR_IRW,       /* integer register read and written (STx_C) */
    RR_FR,        /* FP register read */
    RR_FW,        /* FP register written */
    RR_FRW,       /* FP register read and written (FCMOV keeps the old Fc) */
    RR_IGNORED    /* field present but architecturally ignored */
} alpha_regrole;

/* Kinds of control transfer, for the CFG builder and the machine. */
typedef enum {
    FLOW_NONE = 0,
    FLOW_CBRANCH,  /* conditional branch (integer or FP) */
    FLOW_BRANCH,   /* BR: unconditional PC-relative */
    FLOW_CALL,     /* BSR (PC-relative) or JSR (register) */
    FLOW_JUMP,     /* JMP: indirect, no link expected */
    FLOW_RETURN,   /* RET */
    FLOW_COROUTINE,/* JSR_COROUTINE */
    FLOW_PAL       /* CALL_PAL: traps to PALcode and comes back (mostly) */
} alpha_flow;

/* Architecture subsets, as AMASK names them (plus the float families). */
typedef enum {
    ISET_BASE = 0, ISET_BWX, ISET_CIX, ISET_MVI, ISET_FIX,
    ISET_IEEE, ISET_VAX, ISET_PALRES
} alpha_iset;

/* EV5 issue pipes an instruction may use (alpha-facts.md "Pipes"). */
typedef enum {
    PIPE_NONE = 0,
    PIPE_E0,    /* E0 only: stores, shifts, byte ops, multiply, misc */
    PIPE_E1,    /* E1 only: integer branches, jumps, CALL_PAL */
    PIPE_E01,   /* either integer pipe: loads, LDA, add, logic, compare, CMOV */
    PIPE_FA,    /* FP add pipe: FP branches, add, compare, convert, divide */
    PIPE_FM,    /* FP multiply pipe */
    PIPE_FAM    /* either FP pipe: CPYS */
} alpha_pipe;

/* EV5 latency classes; the cycle counts live in alpha/ev5.c. */
typedef enum {
    LAT_NONE = 0,
    LAT_IADD,     /* add, sub, LDA, S4ADD ... */
    LAT_ILOGIC,   /* logical ops (0 cycles to a same-cycle branch/CMOV) */
    LAT_ICMP,     /* integer compares (ditto) */
    LAT_SHIFT,    /* shifts and byte manipulation */
    LAT_CMOV,
    LAT_IMULL, LAT_IMULQ, LAT_UMULH,
    LAT_LOAD,     /* integer and FP loads */
    LAT_STORE,
    LAT_LDL,      /* LDx_L */
    LAT_STC,      /* STx_C */
    LAT_BRANCH,   /* conditional and unconditional branches */
    LAT_JUMP,     /* JMP/JSR/RET */
    LAT_FADD,     /* FP add/sub/compare/convert, CPYS, FCMOV */
    LAT_FMUL,
    LAT_FDIVS, LAT_FDIVT,
    LAT_FSQRTS, LAT_FSQRTT,
    LAT_ITOF,     /* ITOFx/FTOIx and friends */
    LAT_MISC,     /* MB, TRAPB, RPCC, FETCH ... */
    LAT_PAL,
    LAT_MVI,      /* MVI and CIX counts */
    LAT_COUNT
} alpha_latclass;

/* Operand-shape flags of a table entry. */
enum {
    OPF_LOAD      = 1u << 0,
    OPF_STORE     = 1u << 1,
    OPF_UNALIGNED = 1u << 2,  /* LDQ_U/STQ_U: address & ~7 */
    OPF_LOCKED    = 1u << 3,  /* LDx_L / STx_C */
    OPF_LDAH      = 1u << 4,  /* displacement scaled by 65536 */
    OPF_ADDR      = 1u << 5,  /* LDA/LDAH: computes an address, no access */
    OPF_FPMEM     = 1u << 6,  /* Ra is an FP register */
    OPF_NOARG     = 1u << 7,  /* prints no operands (trapb, mb, ...) */
    OPF_FP_CMP    = 1u << 8,
    OPF_PREFETCH  = 1u << 9,  /* FETCH/WH64: Rb used, no Ra */
    OPF_TRAPS     = 1u << 10, /* may raise an arithmetic trap */
    OPF_NOLIT     = 1u << 11, /* no literal form: a literal word is invalid */
    OPF_BARRIER   = 1u << 12, /* MB/WMB: waits until the write buffer is empty */
    OPF_UNOP      = 1u << 13  /* with Ra = R31 it is UNOP: no access, no result */
};

/* How the FP function field's trap and rounding bits may be set, and how
 * objdump spells them.  See alpha/optable.c. */
typedef enum {
    FPQ_NONE = 0,   /* function must match exactly */
    FPQ_IEEE,       /* rounding {c,m,normal,d} x trap {-,u,su,sui} */
    FPQ_IEEE_CMP,   /* trap {-,su}, normal rounding only */
    FPQ_IEEE_CVTTQ, /* rounding x trap {-,v,sv,svi} */
    FPQ_IEEE_CVTQ,  /* rounding x trap {-,sui} */
    FPQ_VAX,        /* rounding {c,normal} x trap {-,u,s,su} */
    FPQ_VAX_CMP,    /* trap {-,s} */
    FPQ_VAX_CVTGQ,  /* rounding {c,normal} x trap {-,v,s,sv} */
    FPQ_VAX_CVTQ,   /* rounding {c,normal} only */
    FPQ_CVTQL       /* trap {-,v,sv} */
} alpha_fpqual;

/* One row of the instruction table. */
typedef struct alpha_opdef {
    const char *name;       /* assembler mnemonic without qualifiers */
    uint8_t  opcode;        /* bits 31:26 */
    uint8_t  format;        /* alpha_format */
    uint32_t func;          /* function: OPR 7 bits, FPOPR 11 bits (base,
                               default qualifiers), MFC 16 bits, JMP 2 bits,
                               PAL 26 bits; unused otherwise */
    uint8_t  ra, rb, rc;    /* alpha_regrole of each field */
    uint8_t  iset;          /* alpha_iset */
    uint8_t  flow;          /* alpha_flow */
    uint8_t  pipe;          /* alpha_pipe */
    uint8_t  lat;           /* alpha_latclass */
    uint8_t  size;          /* bytes accessed by a load or store, else 0 */
    uint8_t  fpqual;        /* alpha_fpqual, for AF_FPOPR */
    uint16_t flags;         /* OPF_* */
} alpha_opdef;

/* A decoded instruction.  encode(decode(w)) == w for every word: fields
 * that are "should be zero" in the architecture but set in the word are
 * kept in `extra` so nothing is lost. */
typedef struct alpha_insn {
    uint32_t word;
    const alpha_opdef *op;  /* NULL: not an instruction we know */
    uint16_t id;            /* index of op in alpha_optable, or 0xffff */
    uint8_t  opcode;
    uint8_t  ra, rb, rc;    /* register numbers (0..31) */
    bool     islit;         /* operate format with literal */
    uint8_t  lit;           /* the 8-bit literal */
    int32_t  disp;          /* MEM: signed 16-bit; BRA: signed 21-bit word
                               displacement; JMP: signed 14-bit hint */
    uint32_t func;          /* the full function field as encoded */
    uint32_t extra;         /* SBZ bits (OPR 15:13 when Rb is a register) */
} alpha_insn;

extern const alpha_opdef alpha_optable[];
extern const size_t alpha_optable_len;

/* Decoding never fails: an unknown word gives op == NULL. */
void alpha_decode(uint32_t word, alpha_insn *out);
uint32_t alpha_encode(const alpha_insn *insn);

/* Build an instruction from its table entry (found by name, e.g. "br",
 * "addq", "addt/su" is NOT accepted: qualifiers go in func).  Returns -1 if
 * no such mnemonic. */
int alpha_lookup(const char *name);

/* Qualifier suffix (e.g. "/su") for an FP operate instruction, "" if none,
 * NULL if the qualifier bits are not valid for that instruction. */
const char *alpha_fp_suffix(const alpha_insn *insn);

/* ---- control flow ---------------------------------------------------- */

static inline alpha_flow alpha_flow_of(const alpha_insn *i)
{
    return i->op ? (alpha_flow)i->op->flow : FLOW_NONE;
}
/* LDQ_U into R31: the architecture's UNOP, which touches no memory. */
static inline bool alpha_is_unop(const alpha_insn *i)
{
    return i->op && (i->op->flags & OPF_UNOP) && i->ra == 31;
}
/* True for BR, BSR and conditional branches (PC-relative, 21-bit). */
bool alpha_is_pcrel_branch(const alpha_insn *i);
/* Target of a PC-relative branch at address pc. */
uint64_t alpha_branch_target(const alpha_insn *i, uint64_t pc);
/* Predicted target of JMP/JSR from its 14-bit hint (low 16 bits only are
 * architecturally meaningful; we return the full PC + 4 + 4*hint). */
uint64_t alpha_hint_target(const alpha_insn *i, uint64_t pc);
/* Set the displacement so a branch at pc goes to target.  Returns false
 * (and leaves the word alone) when out of range or misaligned. */
bool alpha_set_branch_target(uint32_t *word, uint64_t pc, uint64_t target);
/* Set a JMP/JSR hint to point at target; false if not a JMP/JSR.  Hints
 * that do not fit in 14 bits are truncated as the hardware does (only the
 * low bits of the predicted target matter); *exact tells whether it fit. */
bool alpha_set_hint_target(uint32_t *word, uint64_t pc, uint64_t target, bool *exact);
/* Set a memory-format 16-bit displacement; false when out of range. */
bool alpha_set_mem_disp(uint32_t *word, int64_t disp);
/* Invert a conditional branch's condition (BEQ<->BNE, BLBC<->BLBS, ...). */
bool alpha_invert_branch(uint32_t *word);

/* ---- registers ------------------------------------------------------- */

/* Register sets: bits 0..31 integer registers, 32..63 FP registers.
 * R31 and F31 never appear (they read as zero and writes vanish). */
typedef uint64_t alpha_regset;
#define ALPHA_FREG(n) ((unsigned)(n) + 32u)
void alpha_regs(const alpha_insn *i, alpha_regset *uses, alpha_regset *defs);

/* Software names as objdump prints them: v0 t0..t7 s0..s5 fp a0..a5
 * t8..t11 ra t12 at gp sp zero. */
extern const char *const alpha_ireg_names[32];

enum {
    REG_V0 = 0, REG_T0 = 1, REG_S0 = 9, REG_FP = 15, REG_A0 = 16,
    REG_A3 = 19, REG_A4 = 20, REG_A5 = 21, REG_T12 = 27, REG_PV = 27,
    REG_RA = 26, REG_AT = 28, REG_GP = 29, REG_SP = 30, REG_ZERO = 31
};

/* ---- disassembly ----------------------------------------------------- */

/* Callback naming an address ("main+0x28"); returns false if none. */
typedef bool (*alpha_symbolizer)(void *ctx, uint64_t addr, char *buf, size_t size);

/* Mnemonic and operands in objdump's syntax, separated by one tab
 * ("ldq\tt12,-32752(gp)", "br\t120000500").  If sym is given, branch and
 * hint targets are followed by " <name>".  Returns the length written. */
int alpha_disasm(const alpha_insn *i, uint64_t pc, char *buf, size_t size,
                 alpha_symbolizer sym, void *ctx);
enum {
    PAL_HALT = 0x00, PAL_BPT = 0x80, PAL_BUGCHK = 0x81, PAL_CALLSYS = 0x83,
    PAL_IMB = 0x86, PAL_RDUNIQ = 0x9e, PAL_WRUNIQ = 0x9f, PAL_GENTRAP = 0xaa
};

#endif
