/*
 * rewriter/cfi.c: writing DWARF call-frame programs (the rows they must
 * produce come from image/cfi.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/cfi.h"

static void put1(cfi_out *o, uint8_t v)
{
    cfi_put(o, &v, 1);
}

bool cfi_emit_advance(cfi_out *o, const cfi_cie_info *ci, uint64_t delta)
{
    if (!ci->code_align || delta % ci->code_align || delta / ci->code_align > UINT32_MAX)
        return false;   /* an advance cannot say it */
    uint64_t d = delta / ci->code_align;
    if (!d)
        return true;
    if (d < 0x40) {
        put1(o, (uint8_t)(0x40 | d));
    } else if (d <= 0xff) {
        put1(o, 0x02);
        put1(o, (uint8_t)d);
    } else if (d <= 0xffff) {
        uint8_t b[3] = { 0x03, (uint8_t)d, (uint8_t)(d >> 8) };
        cfi_put(o, b, 3);
    } else {
        uint8_t b[5] = { 0x04, (uint8_t)d, (uint8_t)(d >> 8), (uint8_t)(d >> 16), (uint8_t)(d >> 24) };
        cfi_put(o, b, 5);
    }
    return true;
}

bool cfi_emit_delta(cfi_out *o, const cfi_cie_info *ci, const cfi_row *init,
                    const cfi_row *from, const cfi_row *to)
{
    if (from->cfa_reg != to->cfa_reg || from->cfa_off != to->cfa_off) {
        if (to->cfa_off >= 0) {
            put1(o, 0x0c);
            cfi_uleb(o, to->cfa_reg);
            cfi_uleb(o, (uint64_t)to->cfa_off);
        } else {
            if (to->cfa_off % ci->data_align)
                return false;
            put1(o, 0x12);
            cfi_uleb(o, to->cfa_reg);
            cfi_sleb(o, to->cfa_off / ci->data_align);
        }
    }
    if (from->args_size != to->args_size) {
        put1(o, 0x2e);
        cfi_uleb(o, to->args_size);
    }
    for (unsigned i = 0; i < CFI_NREGS; i++) {
        const cfi_rule *t = &to->r[i];
        if (cfi_rule_eq(&from->r[i], t))
            continue;
        if (cfi_rule_eq(&init->r[i], t)) {
            if (i < 64) {
                put1(o, (uint8_t)(0xc0 | i));
            } else {
                put1(o, 0x06);
                cfi_uleb(o, i);
            }
            continue;
        }
        switch (t->kind) {
        case CFI_UNDEF: case CFI_SAME:
            put1(o, t->kind == CFI_UNDEF ? 0x07 : 0x08);
            cfi_uleb(o, i);
            break;
        case CFI_OFFSET: case CFI_VALOFF:
            if (t->val % ci->data_align)
                return false;
            put1(o, t->kind == CFI_OFFSET ? 0x11 : 0x15);
            cfi_uleb(o, i);
            cfi_sleb(o, t->val / ci->data_align);
            break;
        case CFI_REG:
            put1(o, 0x09);
            cfi_uleb(o, i);
            cfi_uleb(o, (uint64_t)t->val);
            break;
        default:
            return false;     /* "unspecified" that the CIE did not start with */
        }
    }
    return !o->oom;
}
