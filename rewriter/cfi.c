/*
 * rewriter/cfi.c: running and writing DWARF call-frame programs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/cfi.h"

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

static bool rule_eq(const cfi_rule *a, const cfi_rule *b)
{
    return a->kind == b->kind && (a->kind < CFI_OFFSET || a->val == b->val);
}

bool cfi_same(const cfi_row *a, const cfi_row *b)
{
    if (a->cfa_reg != b->cfa_reg || a->cfa_off != b->cfa_off || a->args_size != b->args_size)
        return false;
    for (int i = 0; i < CFI_NREGS; i++)
        if (!rule_eq(&a->r[i], &b->r[i]))
            return false;
    return true;
}

/* ---- writing ------------------------------------------------------------ */

void cfi_put(cfi_out *o, const void *p, size_t n)
{
    if (o->oom || !n)
        return;
    if (o->n + n > o->cap) {
        size_t cap = (o->cap + n) * 2;
        uint8_t *b = realloc(o->b, cap);
        if (!b) {
            o->oom = true;
            return;
        }
        o->b = b;
        o->cap = cap;
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put1(cfi_out *o, uint8_t v)
{
    cfi_put(o, &v, 1);
}

void cfi_uleb(cfi_out *o, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        put1(o, (uint8_t)(b | (v ? 0x80 : 0)));
    } while (v);
}

void cfi_sleb(cfi_out *o, int64_t v)
{
    for (;;) {
        uint8_t b = v & 0x7f;
        v >>= 7;    /* arithmetic on every compiler we build with */
        bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
        put1(o, (uint8_t)(b | (done ? 0 : 0x80)));
        if (done)
            return;
    }
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
        if (rule_eq(&from->r[i], t))
            continue;
        if (rule_eq(&init->r[i], t)) {
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
