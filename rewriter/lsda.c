/*
 * rewriter/lsda.c: reading and writing call-site tables (rewriter/lsda.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/lsda.h"

enum { PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
       PE_S4 = 0x0b, PE_S8 = 0x0c, PE_PCREL = 0x10, PE_OMIT = 0xff };

typedef struct rd {
    const uint8_t *p, *end;
    uint64_t addr;               /* address of p */
} rd;

static bool rd_u8(rd *r, uint8_t *v)
{
    if (r->p >= r->end)
        return false;
    *v = *r->p++;
    r->addr++;
    return true;
}

static bool rd_uleb(rd *r, uint64_t *v)
{
    const uint8_t *s = r->p;
    if (!leb128_read_u(&r->p, r->end, v))
        return false;
    r->addr += (uint64_t)(r->p - s);
    return true;
}

static bool rd_sleb(rd *r, int64_t *v)
{
    const uint8_t *s = r->p;
    if (!leb128_read_s(&r->p, r->end, v))
        return false;
    r->addr += (uint64_t)(r->p - s);
    return true;
}

/* A value in one of the encodings gcc uses in LSDAs. */
static bool rd_enc(rd *r, uint8_t enc, uint64_t *v)
{
    uint64_t field = r->addr, x = 0;
    size_t n;
    switch (enc & 0x0f) {
    case PE_ULEB:
        if (!rd_uleb(r, &x))
            return false;
        goto apply;
    case PE_U2: n = 2; break;
    case PE_U4: case PE_S4: n = 4; break;
    case PE_ABSPTR: case PE_U8: case PE_S8: n = 8; break;
    default: return false;
    }
    if ((size_t)(r->end - r->p) < n)
        return false;
    for (size_t i = n; i-- > 0;)
        x = x << 8 | r->p[i];
    if ((enc & 0x0f) == PE_S4)
        x = (uint64_t)(int64_t)(int32_t)x;
    r->p += n;
    r->addr += n;
apply:
    if ((enc & 0x70) == PE_PCREL && x)
        x += field;
    else if ((enc & 0x70) != 0 && (enc & 0x70) != PE_PCREL)
        return false;
    *v = x;
    return true;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)

bool lsda_read(const image *img, uint64_t addr, uint64_t func, lsda *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const image_section *s = image_section_at(img, addr);
    if (!s || !s->data)
        FAIL("LSDA at 0x%llx is not in the file", (unsigned long long)addr);
    rd r = { s->data + (addr - s->addr), s->data + s->size, addr };
    uint8_t lpenc, ttenc, csenc;
    uint64_t lpstart = func, cslen;
    if (!rd_u8(&r, &lpenc) || (lpenc != PE_OMIT && !rd_enc(&r, lpenc, &lpstart)))
        FAIL("LSDA at 0x%llx: bad landing-pad base", (unsigned long long)addr);
    if (!rd_u8(&r, &ttenc))
        FAIL("LSDA at 0x%llx truncated", (unsigned long long)addr);
    if (ttenc != PE_OMIT)
        FAIL("LSDA at 0x%llx has a type table", (unsigned long long)addr);
    if (!rd_u8(&r, &csenc) || !rd_uleb(&r, &cslen) || cslen > (uint64_t)(r.end - r.p))
        FAIL("LSDA at 0x%llx: bad call-site table", (unsigned long long)addr);
    rd cs = { r.p, r.p + cslen, r.addr };
    const uint8_t *actions = r.p + cslen;
    size_t cap = 0, maxact = 0;
    while (cs.p < cs.end) {
        uint64_t st, len, lp, act;
        if (!rd_enc(&cs, csenc, &st) || !rd_enc(&cs, csenc, &len) || !rd_enc(&cs, csenc, &lp) ||
            !rd_uleb(&cs, &act))
            FAIL("LSDA at 0x%llx: bad call-site record", (unsigned long long)addr);
        /* Sites are in address order and do not overlap or wrap: the
         * personality routine searches them in order. */
        if (func + st + len < func + st ||
            (out->nsites && func + st < out->sites[out->nsites - 1].end))
            FAIL("LSDA at 0x%llx: call sites out of order", (unsigned long long)addr);
        if (out->nsites == cap) {
            cap = cap ? 2 * cap : 16;
            lsda_site *n = realloc(out->sites, cap * sizeof *n);
            if (!n)
                FAIL("out of memory");
            out->sites = n;
        }
        out->sites[out->nsites++] = (lsda_site){ func + st, func + st + len, lp ? lpstart + lp : 0, act };
        /* Follow the action chain to learn how long the action table is. */
        for (uint64_t off = act, hops = 0; off; hops++) {
            if (hops > 1000 || off - 1 >= (uint64_t)(r.end - actions))
                FAIL("LSDA at 0x%llx: bad action record", (unsigned long long)addr);
            rd a = { actions + off - 1, r.end, 0 };
            int64_t filter, next;
            if (!rd_sleb(&a, &filter))
                FAIL("LSDA at 0x%llx: bad action record", (unsigned long long)addr);
            const uint8_t *nextp = a.p;
            if (!rd_sleb(&a, &next))
                FAIL("LSDA at 0x%llx: bad action record", (unsigned long long)addr);
            if ((size_t)(a.p - actions) > maxact)
                maxact = (size_t)(a.p - actions);
            if (!next)
                break;
            int64_t to;
            if (__builtin_add_overflow((int64_t)(nextp - actions), next, &to) || to < 0)
                FAIL("LSDA at 0x%llx: bad action chain", (unsigned long long)addr);
            off = (uint64_t)to + 1;
        }
    }
    for (size_t i = 1; i < out->nsites; i++)
        if (out->sites[i].start < out->sites[i - 1].end)
            FAIL("LSDA at 0x%llx: call sites out of order", (unsigned long long)addr);
    out->actions = actions;
    out->actions_len = maxact;
    return true;
fail:
    lsda_free(out);
    return false;
}

void lsda_free(lsda *l)
{
    free(l->sites);
    memset(l, 0, sizeof *l);
}

const lsda_site *lsda_at(const lsda *l, uint64_t addr)
{
    size_t lo = 0, hi = l->nsites;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->sites[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->nsites && l->sites[lo].start <= addr ? &l->sites[lo] : NULL;
}

void lsda_write(cfi_out *o, uint64_t start, const lsda_site *sites, size_t n,
                const uint8_t *actions, size_t actions_len)
{
    /* LPStart 0, absolute: landing pads may lie in another piece. */
    static const uint8_t head[10] = { PE_ABSPTR, 0, 0, 0, 0, 0, 0, 0, 0, PE_OMIT };
    cfi_put(o, head, sizeof head);
    cfi_out cs = { 0 };
    for (size_t i = 0; i < n; i++) {
        cfi_uleb(&cs, sites[i].start - start);
        cfi_uleb(&cs, sites[i].end - sites[i].start);
        cfi_uleb(&cs, sites[i].lp);
        cfi_uleb(&cs, sites[i].action);
    }
    uint8_t enc = PE_ULEB;
    cfi_put(o, &enc, 1);
    cfi_uleb(o, cs.n);
    cfi_put(o, cs.b, cs.n);
    cfi_put(o, actions, actions_len);
    o->oom |= cs.oom;
    free(cs.b);
}
