/*
 * image/ehframe.c: reading an .eh_frame section into its CIEs and FDEs, and
 * an FDE's program into rows (image/cfi.c).  The rewriter rebuilds unwind
 * tables from this; the machine's stack walker unwinds with it.  Every
 * length, offset and pointer is checked against the section, which may be
 * hostile.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "image/ehframe.h"

static bool efail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool efail(char *err, size_t errlen, const char *fmt, ...)
{
    int n = snprintf(err, errlen, ".eh_frame: ");
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

size_t eh_enc_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case PE_ABS: case PE_U8: case PE_S8: return 8;
    case PE_U4: case PE_S4: return 4;
    case PE_U2: case PE_S2: return 2;
    default: return 0;           /* LEB forms: not for pointers we rewrite */
    }
}

bool eh_read_ptr(const eh_frame *e, size_t off, uint8_t enc, bool apply, uint64_t *v)
{
    size_t n = eh_enc_size(enc);
    if (!n || off + n > e->size || (apply && (enc & 0x70) != 0 && (enc & 0x70) != PE_PCREL))
        return false;
    uint64_t x = 0;
    for (size_t i = n; i-- > 0;)
        x = x << 8 | e->d[off + i];
    if ((enc & 0x0f) == PE_S4)
        x = (uint64_t)(int64_t)(int32_t)x;
    else if ((enc & 0x0f) == PE_S2)
        x = (uint64_t)(int64_t)(int16_t)x;
    if (apply && (enc & 0x70) == PE_PCREL && x)
        x += e->addr + off;
    *v = x;
    return true;
}

static bool parse_cie(eh_frame *e, size_t off, size_t size, eh_cie *c, char *err, size_t errlen)
{
    const uint8_t *p = e->d + off + 8, *end = e->d + off + size;
    memset(c, 0, sizeof *c);
    c->off = off;
    c->size = size;
    c->lsda_enc = c->pers_enc = PE_OMIT;
    c->ci.fde_enc = PE_ABS;
    if (p >= end)
        return efail(err, errlen, "CIE at 0x%zx truncated", off);
    uint8_t ver = *p++;
    const char *aug = (const char *)p;
    size_t alen = strnlen(aug, (size_t)(end - p));
    if (p + alen >= end || (ver != 1 && ver != 3))
        return efail(err, errlen, "CIE at 0x%zx: version %u or augmentation not understood",
                       off, ver);
    p += alen + 1;
    uint64_t ra;
    int64_t da;
    if (!leb128_read_u(&p, end, &c->ci.code_align) || !leb128_read_s(&p, end, &da) ||
        !c->ci.code_align || !da)
        return efail(err, errlen, "CIE at 0x%zx truncated", off);
    c->ci.data_align = da;
    if (ver == 1) {
        if (p >= end)
            return efail(err, errlen, "CIE at 0x%zx truncated", off);
        ra = *p++;
    } else if (!leb128_read_u(&p, end, &ra)) {
        return efail(err, errlen, "CIE at 0x%zx truncated", off);
    }
    c->ra_reg = ra > UINT32_MAX ? UINT32_MAX : (uint32_t)ra;   /* checked by its users */
    const uint8_t *augend = NULL;
    for (size_t i = 0; i < alen; i++) {
        switch (aug[i]) {
        case 'z': {
            uint64_t l;
            if (i || !leb128_read_u(&p, end, &l) || l > (uint64_t)(end - p))
                return efail(err, errlen, "CIE at 0x%zx: bad augmentation", off);
            c->z = true;
            augend = p + l;
            break;
        }
        case 'R':
            if (p >= end)
                goto bad;
            c->ci.fde_enc = *p++;
            break;
        case 'L':
            if (p >= end)
                goto bad;
            c->lsda_enc = *p++;
            break;
        case 'P':
            if (p >= end)
                goto bad;
            c->pers_enc = *p++;
            c->pers_off = (size_t)(p - e->d);
            if (!eh_enc_size(c->pers_enc) || p + eh_enc_size(c->pers_enc) > end)
                goto bad;
            p += eh_enc_size(c->pers_enc);
            break;
        case 'S':
            c->sig = true;
            break;
        default:
            if (!c->z)
                goto bad;
            break;      /* unknown letter after z: skip via the length */
        }
    }
    if (augend)
        p = augend;
    if (!eh_enc_size(c->ci.fde_enc) || p > end)
        goto bad;
    c->init_off = (size_t)(p - e->d);
    c->init_len = (size_t)(end - p);
    memset(&c->init, 0, sizeof c->init);
    cfi_row cur;
    memset(&cur, 0, sizeof cur);
    char e2[160];
    if (!cfi_run(p, c->init_len, &c->ci, &cur, 0, 0, &cur, NULL, e2, sizeof e2))
        return efail(err, errlen, "CIE at 0x%zx: %s", off, e2);
    c->init = cur;
    return true;
bad:
    return efail(err, errlen, "CIE at 0x%zx: augmentation \"%s\" not understood",
                   off, aug);
}

bool eh_frame_parse(eh_frame *e, char *err, size_t errlen)
{
    size_t cap_c = 0, cap_f = 0;
    for (size_t off = 0; off + 4 <= e->size;) {
        uint32_t len = le_get32(e->d + off);
        if (!len)
            break;                          /* terminator */
        if (len == 0xffffffffu || len > e->size - off - 4 || len < 4)
            return efail(err, errlen, "record at 0x%zx has length 0x%x",
                           off, len);
        size_t size = 4 + (size_t)len;
        uint32_t id = le_get32(e->d + off + 4);
        if (!id) {
            if (e->ncie == cap_c) {
                cap_c = cap_c ? 2 * cap_c : 16;
                eh_cie *c = realloc(e->cie, cap_c * sizeof *c);
                if (!c)
                    return efail(err, errlen, "out of memory");
                e->cie = c;
            }
            if (!parse_cie(e, off, size, &e->cie[e->ncie], err, errlen))
                return false;
            e->ncie++;
        } else {
            size_t cieoff = off + 4 - id;
            uint32_t ci = 0;
            while (ci < e->ncie && e->cie[ci].off != cieoff)
                ci++;
            if (id > off + 4 || ci == e->ncie)
                return efail(err, errlen, "FDE at 0x%zx points to no CIE", off);
            const eh_cie *c = &e->cie[ci];
            if (e->nfde == cap_f) {
                cap_f = cap_f ? 2 * cap_f : 64;
                eh_fde *f = realloc(e->fde, cap_f * sizeof *f);
                if (!f)
                    return efail(err, errlen, "out of memory");
                e->fde = f;
            }
            eh_fde *f = &e->fde[e->nfde];
            memset(f, 0, sizeof *f);
            f->off = off;
            f->size = size;
            f->cie = ci;
            size_t q = off + 8, n = eh_enc_size(c->ci.fde_enc);
            if (!eh_read_ptr(e, q, c->ci.fde_enc, true, &f->begin) ||
                !eh_read_ptr(e, q + n, c->ci.fde_enc & 0x0f, false, &f->range))
                return efail(err, errlen, "FDE at 0x%zx: pointer encoding 0x%x not handled",
                               off, c->ci.fde_enc);
            q += 2 * n;
            if (q > off + size)
                return efail(err, errlen, "FDE at 0x%zx truncated", off);
            const uint8_t *p = e->d + q, *end = e->d + off + size;
            if (c->z) {
                uint64_t l;
                if (!leb128_read_u(&p, end, &l) || l > (uint64_t)(end - p))
                    return efail(err, errlen, "FDE at 0x%zx truncated", off);
                f->aug_off = (size_t)(p - e->d);
                f->aug_len = (size_t)l;
                if (c->lsda_enc != PE_OMIT) {
                    f->lsda_off = f->aug_off;
                    if (!eh_read_ptr(e, f->lsda_off, c->lsda_enc, true, &f->lsda))
                        return efail(err, errlen, "FDE at 0x%zx: LSDA encoding 0x%x not handled",
                                       off, c->lsda_enc);
                }
                p += l;
            }
            f->prog_off = (size_t)(p - e->d);
            f->prog_len = (size_t)(end - p);
            e->nfde++;
        }
        off += size;
    }
    return true;
}

bool eh_frame_rows(const eh_frame *e, size_t i, cfi_rows *rows, char *err, size_t errlen)
{
    const eh_fde *f = &e->fde[i];
    const eh_cie *c = &e->cie[f->cie];
    cfi_row cur = c->init;
    rows->n = 0;
    return cfi_run(e->d + f->prog_off, f->prog_len, &c->ci, &c->init, f->begin, 0, &cur, rows,
                   err, errlen);
}

void eh_frame_release(eh_frame *e)
{
    if (!e)
        return;
    free(e->cie);
    free(e->fde);
    free(e);
}
