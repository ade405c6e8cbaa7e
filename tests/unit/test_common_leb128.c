/*
 * tests/unit/test_common_leb128.c: common/leb128.h against DWARF's own
 * examples, truncated input and overlong encodings.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/leb128.h"

Test(leb128, reads_what_dwarf_writes)
{
    static const uint8_t u[] = { 0xe5, 0x8e, 0x26 }, s[] = { 0xc0, 0xbb, 0x78 }, m1[] = { 0x7f };
    const uint8_t *p = u;
    uint64_t v;
    int64_t w;
    cr_assert(leb128_read_u(&p, u + sizeof u, &v));
    cr_expect_eq(v, 624485);
    cr_expect_eq(p, u + 3);
    p = s;
    cr_assert(leb128_read_s(&p, s + sizeof s, &w));
    cr_expect_eq(w, -123456);
    p = m1;
    cr_assert(leb128_read_s(&p, m1 + 1, &w));
    cr_expect_eq(w, -1);
}

Test(leb128, refuses_truncated_and_overlong)
{
    static const uint8_t cut[] = { 0x80, 0x80 };
    uint8_t longer[12];
    memset(longer, 0x80, sizeof longer);
    longer[11] = 0x01;
    const uint8_t *p = cut;
    uint64_t v;
    int64_t w;
    cr_expect(!leb128_read_u(&p, cut + sizeof cut, &v));
    p = longer;
    cr_expect(!leb128_read_u(&p, longer + sizeof longer, &v));
    p = longer;
    cr_expect(!leb128_read_s(&p, longer + sizeof longer, &w));
    static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    p = max;
    cr_assert(leb128_read_u(&p, max + sizeof max, &v));
    cr_expect_eq(v, UINT64_MAX);
}
