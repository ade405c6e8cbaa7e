/*
 * alpha/decode.c: word <-> alpha_insn, driven by alpha_optable.
 *
 * At start-up the table is folded into direct lookup arrays: one row per
 * opcode for the memory and branch formats, 128 functions for each integer
 * operate opcode, and 2048 function codes for each FP operate opcode with
 * every valid trap/rounding qualifier expanded.  Decoding is then a couple
 * of array reads, which matters because the machine decodes every page of
 * code it runs.
 */
#include <string.h>

#include "alpha/insn.h"

#define NONE 0xffff

/* How each FP qualifier class spells its trap and rounding bits.  NULL
 * means "not allowed"; these follow the Architecture Handbook's qualifier
 * tables and the spellings binutils' objdump prints. */
typedef struct {
    const char *trap[8];   /* function bits 10:8 */
    const char *rnd[4];    /* function bits 7:6 */
} fpq_spelling;

static const fpq_spelling fpq_spell[] = {
    [FPQ_NONE] = { { 0 }, { 0 } },
    [FPQ_IEEE] = { { "", "u", 0, 0, 0, "su", 0, "sui" }, { "c", "m", "", "d" } },
    [FPQ_IEEE_CMP] = { { "", 0, 0, 0, 0, "su", 0, 0 }, { 0, 0, "", 0 } },
    [FPQ_IEEE_CVTTQ] = { { "", "v", 0, 0, 0, "sv", 0, "svi" }, { "c", "m", "", "d" } },
    [FPQ_IEEE_CVTQ] = { { "", 0, 0, 0, 0, 0, 0, "sui" }, { "c", "m", "", "d" } },
    [FPQ_VAX] = { { "", "u", 0, 0, "s", "su", 0, 0 }, { "c", 0, "", 0 } },
    [FPQ_VAX_CMP] = { { "", 0, 0, 0, "s", 0, 0, 0 }, { 0, 0, "", 0 } },
    [FPQ_VAX_CVTGQ] = { { "", "v", 0, 0, "s", "sv", 0, 0 }, { "c", 0, "", 0 } },
    [FPQ_VAX_CVTQ] = { { "", 0, 0, 0, 0, 0, 0, 0 }, { "c", 0, "", 0 } },
    [FPQ_CVTQL] = { { "", "v", 0, 0, 0, "sv", 0, 0 }, { "", 0, 0, 0 } },
};

static uint16_t by_opcode[64];      /* MEM, BRA, RESERVED: one row */
static uint16_t fp_rows[4][2048];   /* opcodes 0x14..0x17 */
static uint16_t jmp_rows[4];
static uint16_t pal_generic = NONE;
static uint8_t  opr_slot[64];       /* opcode -> row block in opr_rows (1-based) */
static uint16_t opr_block[6][128];
/* Qualifier suffixes ("/sui"), spelled once so lookups are thread-safe. */
static char fp_suffix[FPQ_CVTQL + 1][8][4][8];

static void set_fp(unsigned opc, unsigned func, uint16_t row)
{
    if (fp_rows[opc - 0x14][func] == NONE)
        fp_rows[opc - 0x14][func] = row;
}

__attribute__((constructor)) static void build_tables(void)
{
    static const uint8_t opr_opcodes[] = { 0x10, 0x11, 0x12, 0x13, 0x1c };
    memset(by_opcode, 0xff, sizeof by_opcode);
    memset(opr_block, 0xff, sizeof opr_block);
    memset(fp_rows, 0xff, sizeof fp_rows);
    memset(jmp_rows, 0xff, sizeof jmp_rows);
    for (unsigned k = 0; k < sizeof opr_opcodes; k++)
        opr_slot[opr_opcodes[k]] = (uint8_t)(k + 1);

    /* Exact FP codes first, so they win over qualifier expansions. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < alpha_optable_len; i++) {
            const alpha_opdef *d = &alpha_optable[i];
            uint16_t row = (uint16_t)i;
            if (d->format != AF_FPOPR || (pass == 0) != (d->fpqual == FPQ_NONE))
                continue;
            if (d->fpqual == FPQ_NONE) {
                set_fp(d->opcode, d->func, row);
                continue;
            }
            const fpq_spelling *q = &fpq_spell[d->fpqual];
            for (unsigned t = 0; t < 8; t++)
                for (unsigned r = 0; r < 4; r++)
                    if (q->trap[t] && q->rnd[r]) {
                        set_fp(d->opcode, (t << 8) | (r << 6) | (d->func & 0x3f), row);
                        char *b = fp_suffix[d->fpqual][t][r];
                        if (*q->trap[t] || *q->rnd[r]) {
                            b[0] = '/';
                            strcpy(b + 1, q->trap[t]);
                            strcat(b, q->rnd[r]);
                        }
                    }
        }
    }
    for (size_t i = 0; i < alpha_optable_len; i++) {
        const alpha_opdef *d = &alpha_optable[i];
        uint16_t row = (uint16_t)i;
        switch (d->format) {
        case AF_MEM: case AF_BRA: case AF_RESERVED:
            by_opcode[d->opcode] = row;
            break;
        case AF_OPR:
            opr_block[opr_slot[d->opcode]][d->func] = row;
            break;
        case AF_JMP:
            jmp_rows[d->func] = row;
            break;
        case AF_PAL:
            if (d->func == 0xffffffff)
                pal_generic = row;
            break;
        default:
            break;
        }
    }
}

static inline int32_t sext(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (int32_t)((v ^ m) - m);
}

static uint16_t find_row(const alpha_insn *in)
{
    uint32_t w = in->word;
    unsigned opc = in->opcode;
    switch (opc) {
    case 0x00: {
        for (size_t i = 0; i < alpha_optable_len && alpha_optable[i].format == AF_PAL; i++)
            if (alpha_optable[i].func == in->func)
                return (uint16_t)i;
        return pal_generic;
    }
    case 0x10: case 0x11: case 0x12: case 0x13: case 0x1c: {
        uint16_t row = opr_block[opr_slot[opc]][in->func];
        if (row != NONE && in->islit && (alpha_optable[row].flags & OPF_NOLIT))
            return NONE;
        return row;
    }
    case 0x14: case 0x15: case 0x16: case 0x17:
        return fp_rows[opc - 0x14][in->func];
    case 0x18:
        for (size_t i = 0; i < alpha_optable_len; i++)
            if (alpha_optable[i].format == AF_MFC && alpha_optable[i].func == (w & 0xffff))
                return (uint16_t)i;
        return NONE;
    case 0x1a:
        return jmp_rows[in->func];
    default:
        return by_opcode[opc];
    }
}

void alpha_decode(uint32_t w, alpha_insn *in)
{
    memset(in, 0, sizeof *in);
    in->word = w;
    in->opcode = (uint8_t)(w >> 26);
    in->ra = (w >> 21) & 31;
    in->rb = (w >> 16) & 31;
    switch (in->opcode) {
    case 0x00: case 0x19: case 0x1b: case 0x1d: case 0x1e: case 0x1f:
        in->func = w & 0x3ffffff;
        in->ra = in->rb = 31;
        break;
    case 0x10: case 0x11: case 0x12: case 0x13: case 0x1c:
        in->rc = w & 31;
        in->func = (w >> 5) & 0x7f;
        if (w & 0x1000) {
            in->islit = true;
            in->lit = (uint8_t)(w >> 13);
            in->rb = 31;
        } else {
            in->extra = (w >> 13) & 7;
        }
        break;
    case 0x14: case 0x15: case 0x16: case 0x17:
        in->rc = w & 31;
        in->func = (w >> 5) & 0x7ff;
        break;
    case 0x18:
        in->func = w & 0xffff;
        break;
    case 0x1a:
        in->func = (w >> 14) & 3;
        in->disp = sext(w & 0x3fff, 14);
        break;
    default:
        if (in->opcode >= 0x30) {
            in->disp = sext(w & 0x1fffff, 21);
            in->rb = 31;
        } else {
            in->disp = sext(w & 0xffff, 16);
        }
        break;
    }
    uint16_t row = find_row(in);
    in->id = row;
    in->op = row == NONE ? NULL : &alpha_optable[row];
}

uint32_t alpha_encode(const alpha_insn *in)
{
    if (!in->op)
        return in->word;
    uint32_t w = (uint32_t)in->op->opcode << 26;
    uint32_t ra = (uint32_t)(in->ra & 31) << 21, rb = (uint32_t)(in->rb & 31) << 16;
    switch (in->op->format) {
    case AF_PAL: case AF_RESERVED:
        return w | (in->func & 0x3ffffff);
    case AF_MEM:
        return w | ra | rb | ((uint32_t)in->disp & 0xffff);
    case AF_MFC:
        return w | ra | rb | (in->func & 0xffff);
    case AF_JMP:
        return w | ra | rb | ((in->func & 3) << 14) | ((uint32_t)in->disp & 0x3fff);
    case AF_BRA:
        return w | ra | ((uint32_t)in->disp & 0x1fffff);
    case AF_OPR:
        w |= ra | ((in->func & 0x7f) << 5) | (in->rc & 31);
        if (in->islit)
            return w | ((uint32_t)in->lit << 13) | 0x1000;
        return w | rb | ((in->extra & 7) << 13);
    case AF_FPOPR:
        return w | ra | rb | ((in->func & 0x7ff) << 5) | (in->rc & 31);
    }
    return in->word;
}

int alpha_lookup(const char *name)
{
    for (size_t i = 0; i < alpha_optable_len; i++)
        if (!strcmp(alpha_optable[i].name, name))
            return (int)i;
    return -1;
}

const char *alpha_fp_suffix(const alpha_insn *in)
{
    if (!in->op || in->op->format != AF_FPOPR)
        return NULL;
    if (in->op->fpqual == FPQ_NONE)
        return "";
    const fpq_spelling *q = &fpq_spell[in->op->fpqual];
    unsigned t = (in->func >> 8) & 7, r = (in->func >> 6) & 3;
    if (!q->trap[t] || !q->rnd[r])
        return NULL;
    return fp_suffix[in->op->fpqual][t][r];
}
