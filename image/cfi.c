/*
 * image/cfi.c: running DWARF call-frame programs into tables of rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/cfi.h"

static bool push(cfi_rows *out, const cfi_row *row)
{
    if (out->n && out->row[out->n - 1].loc == row->loc) {
        out->row[out->n - 1] = *row;      /* several changes at one address */
        return true;
    }
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 16;
        cfi_row *r = realloc(out->row, cap * sizeof *r);
        if (!r)
            return false;
        out->row = r;
        out->cap = cap;
    }
    out->row[out->n++] = *row;
    return true;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)
/* v * align into *out, false when it does not fit (hostile input). */
static bool scaled(int64_t v, int64_t align, int64_t *out)
{
    return !__builtin_mul_overflow(v, align, out);
}
#define SCALED(v, align, out) do { if (!scaled((v), (align), (out))) FAIL("offset out of range"); } while (0)
#define STACK 16

bool cfi_run(const uint8_t *prog, size_t len, const cfi_cie_info *ci, const cfi_row *init,
             uint64_t loc, uint64_t pc_addr_of_prog, cfi_row *cur, cfi_rows *out,
             char *err, size_t errlen)
{
    const uint8_t *p = prog, *end = len ? prog + len : prog;
    cfi_row *stack = malloc(STACK * sizeof *stack);
    size_t sp = 0;
    if (!stack) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    cur->loc = loc;
    while (p < end) {
        uint8_t op = *p++;
        uint64_t reg = 0, u = 0, delta = 0;
        int64_t s = 0;
        bool advance = false;
        switch (op >> 6) {
        case 1:
            delta = (uint64_t)(op & 0x3f) * ci->code_align;
            advance = true;
            break;
        case 2:
            reg = op & 0x3f;
            if (!leb128_read_u(&p, end, &u))
                FAIL("truncated DW_CFA_offset");
            if (reg >= CFI_NREGS)
                FAIL("register %llu out of range", (unsigned long long)reg);
            int64_t off;
            SCALED((int64_t)u, ci->data_align, &off);
            cur->r[reg] = (cfi_rule){ CFI_OFFSET, off };
            continue;
        case 3:
            reg = op & 0x3f;
            if (reg >= CFI_NREGS)
                FAIL("register %llu out of range", (unsigned long long)reg);
            cur->r[reg] = init->r[reg];
            continue;
        default:
            break;
        }
        if (!advance) {
            switch (op) {
            case 0x00:                   /* nop */
                continue;
            case 0x01: {                 /* set_loc: only absolute 8-byte forms */
                if ((ci->fde_enc & 0x7f) != 0 && (ci->fde_enc & 0x7f) != 0x04)
                    FAIL("DW_CFA_set_loc with pointer encoding 0x%x", ci->fde_enc);
                if (end - p < 8)
                    FAIL("truncated DW_CFA_set_loc");
                uint64_t a = 0;
                for (int i = 7; i >= 0; i--)
                    a = a << 8 | p[i];
                p += 8;
                (void)pc_addr_of_prog;
                if (a < cur->loc)
                    FAIL("DW_CFA_set_loc goes backwards");
                delta = a - cur->loc;
                advance = true;
                break;
            }
            case 0x02: case 0x03: case 0x04: {
                size_t n = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
                if ((size_t)(end - p) < n)
                    FAIL("truncated DW_CFA_advance_loc");
                for (size_t i = n; i-- > 0;)
                    delta = delta << 8 | p[i];
                p += n;
                delta *= ci->code_align;
                advance = true;
                break;
            }
            case 0x05: case 0x14:        /* offset_extended, val_offset */
                if (!leb128_read_u(&p, end, &reg) || !leb128_read_u(&p, end, &u))
                    FAIL("truncated register rule");
                if (reg >= CFI_NREGS)
                    FAIL("register %llu out of range", (unsigned long long)reg);
                int64_t off5;
                SCALED((int64_t)u, ci->data_align, &off5);
                cur->r[reg] = (cfi_rule){ op == 0x05 ? CFI_OFFSET : CFI_VALOFF, off5 };
                continue;
            case 0x11: case 0x15: case 0x2f: /* *_sf, GNU_negative_offset_extended */
                if (!leb128_read_u(&p, end, &reg))
                    FAIL("truncated register rule");
                if (op == 0x2f) {
                    if (!leb128_read_u(&p, end, &u))
                        FAIL("truncated register rule");
                    if (u > INT64_MAX)
                        FAIL("offset out of range");
                    s = -(int64_t)u;
                } else if (!leb128_read_s(&p, end, &s)) {
                    FAIL("truncated register rule");
                }
                if (reg >= CFI_NREGS)
                    FAIL("register %llu out of range", (unsigned long long)reg);
                int64_t off11;
                SCALED(s, ci->data_align, &off11);
                cur->r[reg] = (cfi_rule){ op == 0x15 ? CFI_VALOFF : CFI_OFFSET, off11 };
                continue;
            case 0x06: case 0x07: case 0x08: /* restore_extended, undefined, same_value */
                if (!leb128_read_u(&p, end, &reg))
                    FAIL("truncated register rule");
                if (reg >= CFI_NREGS)
                    FAIL("register %llu out of range", (unsigned long long)reg);
                cur->r[reg] = op == 0x06 ? init->r[reg]
                            : (cfi_rule){ op == 0x07 ? CFI_UNDEF : CFI_SAME, 0 };
                continue;
            case 0x09:                   /* register */
                if (!leb128_read_u(&p, end, &reg) || !leb128_read_u(&p, end, &u))
                    FAIL("truncated DW_CFA_register");
                if (reg >= CFI_NREGS)
                    FAIL("register %llu out of range", (unsigned long long)reg);
                cur->r[reg] = (cfi_rule){ CFI_REG, (int64_t)u };
                continue;
            case 0x0a:                   /* remember_state */
                if (sp == STACK)
                    FAIL("DW_CFA_remember_state nested too deep");
                stack[sp++] = *cur;
                continue;
            case 0x0b: {                 /* restore_state keeps the location */
                if (!sp)
                    FAIL("DW_CFA_restore_state without remember_state");
                uint64_t l = cur->loc;
                *cur = stack[--sp];
                cur->loc = l;
                continue;
            }
            case 0x0c:                   /* def_cfa */
                if (!leb128_read_u(&p, end, &reg) || !leb128_read_u(&p, end, &u))
                    FAIL("truncated DW_CFA_def_cfa");
                cur->cfa_reg = (uint32_t)reg;
                cur->cfa_off = (int64_t)u;
                continue;
            case 0x12:                   /* def_cfa_sf */
                if (!leb128_read_u(&p, end, &reg) || !leb128_read_s(&p, end, &s))
                    FAIL("truncated DW_CFA_def_cfa_sf");
                cur->cfa_reg = (uint32_t)reg;
                SCALED(s, ci->data_align, &cur->cfa_off);
                continue;
            case 0x0d:                   /* def_cfa_register */
                if (!leb128_read_u(&p, end, &reg))
                    FAIL("truncated DW_CFA_def_cfa_register");
                cur->cfa_reg = (uint32_t)reg;
                continue;
            case 0x0e:                   /* def_cfa_offset */
                if (!leb128_read_u(&p, end, &u))
                    FAIL("truncated DW_CFA_def_cfa_offset");
                cur->cfa_off = (int64_t)u;
                continue;
            case 0x13:                   /* def_cfa_offset_sf */
                if (!leb128_read_s(&p, end, &s))
                    FAIL("truncated DW_CFA_def_cfa_offset_sf");
                SCALED(s, ci->data_align, &cur->cfa_off);
                continue;
            case 0x2e:                   /* GNU_args_size */
                if (!leb128_read_u(&p, end, &u))
                    FAIL("truncated DW_CFA_GNU_args_size");
                cur->args_size = u;
                continue;
            default:
                FAIL("unsupported call-frame instruction 0x%02x", op);
            }
        }
        /* An advance: the row so far holds from cur->loc. */
        if (delta > UINT64_MAX - cur->loc)
            FAIL("advance past the end of the address space");
        if (out && !push(out, cur))
            FAIL("out of memory");
        cur->loc += delta;
    }
    if (out && !push(out, cur))
        FAIL("out of memory");
    free(stack);
    return true;
fail:
    free(stack);
    return false;
}

const cfi_row *cfi_at(const cfi_rows *rows, uint64_t addr)
{
    size_t lo = 0, hi = rows->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows->row[mid].loc <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return &rows->row[lo];
}

bool cfi_rule_eq(const cfi_rule *a, const cfi_rule *b)
{
    return a->kind == b->kind && (a->kind < CFI_OFFSET || a->val == b->val);
}

bool cfi_same(const cfi_row *a, const cfi_row *b)
{
    if (a->cfa_reg != b->cfa_reg || a->cfa_off != b->cfa_off || a->args_size != b->args_size)
        return false;
    for (int i = 0; i < CFI_NREGS; i++)
        if (!cfi_rule_eq(&a->r[i], &b->r[i]))
            return false;
    return true;
}
