/*
 * profdb/stacks_format.c: one stack profile's bytes (docs/profile-format.md
 * "Stack profiles"): header, checksums, the varint payload, zstd.  The
 * decoder checks everything; the encoder wants the canonical form.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "common/bytebuf.h"
#include "common/le.h"
#include "common/leb128.h"
#include "profdb/internal.h"
#include "profdb/stacks.h"

#define MAGIC     "CPOSTAK\n"
#define HDR_FIXED 76
#define HDR_MAX   (1u << 22)
#define MAX_STACKS (1u << 26)

static uint32_t crc(const void *p, size_t n) { return (uint32_t)crc32_z(0, p, n); }

/* ---- encoding ------------------------------------------------------------ */

static void str16(bytebuf *o, const char *s)
{
    uint8_t l[2];
    le_put16(l, (uint16_t)strlen(s));
    bytebuf_put(o, l, 2);
    bytebuf_put(o, s, strlen(s));
}

bool profdb_stacks_encode(const profdb_stacks *s, uint8_t **data, size_t *size, profdb_error *err)
{
    bytebuf pl = { 0 }, h = { 0 };
    for (size_t i = 0; i < s->n; i++) {
        bytebuf_uleb(&pl, s->s[i].count);
        bytebuf_uleb(&pl, s->s[i].end);
        bytebuf_uleb(&pl, s->s[i].n);
        for (uint32_t j = 0; j < s->s[i].n; j++) {
            bytebuf_uleb(&pl, s->s[i].f[j].image);
            bytebuf_uleb(&pl, s->s[i].f[j].offset);
        }
    }
    uint8_t fixed[HDR_FIXED] = { 0 };
    bytebuf_put(&h, fixed, sizeof fixed);
    bytebuf_put(&h, s->event, strlen(s->event));
    bytebuf_put(&h, s->host, strlen(s->host));
    for (size_t i = 0; i < s->nimages; i++) {
        str16(&h, s->img[i].key);
        str16(&h, s->img[i].path);
    }
    bytebuf_put(&h, fixed, 4);
    size_t bound = ZSTD_compressBound(pl.n);
    uint8_t *z = pl.n ? malloc(bound) : NULL;
    if (pl.oom || h.oom || (pl.n && !z) || h.n > HDR_MAX) {
        free(pl.b);
        free(h.b);
        free(z);
        return pd_fail(err, h.n > HDR_MAX ? PROFDB_EINVAL : PROFDB_ENOMEM,
                       "stacks: %s", h.n > HDR_MAX ? "image table too large" : "out of memory");
    }
    size_t zn = 0;
    if (pl.n) {
        zn = ZSTD_compress(z, bound, pl.b, pl.n, 9);
        if (ZSTD_isError(zn)) {
            free(pl.b);
            free(h.b);
            free(z);
            return pd_fail(err, PROFDB_ENOMEM, "stacks: zstd: %s", ZSTD_getErrorName(zn));
        }
    }
    uint8_t *d = h.b;
    memcpy(d, MAGIC, 8);
    le_put16(d + 8, PROFDB_STACKS_VERSION);
    le_put16(d + 10, 0);
    le_put32(d + 12, (uint32_t)h.n);
    le_put64(d + 16, s->total);
    le_put64(d + 24, s->n);
    le_put64(d + 32, (uint64_t)s->created);
    le_put64(d + 40, (uint64_t)s->updated);
    le_put64(d + 48, zn);
    le_put64(d + 56, pl.n);
    le_put32(d + 64, zn ? crc(z, zn) : 0);
    le_put16(d + 68, (uint16_t)s->nimages);
    le_put16(d + 70, (uint16_t)strlen(s->event));
    le_put16(d + 72, (uint16_t)strlen(s->host));
    le_put32(d + h.n - 4, crc(d, h.n - 4));
    bytebuf_put(&h, z, zn);
    free(z);
    free(pl.b);
    if (h.oom) {
        free(h.b);
        return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    }
    *data = h.b;
    *size = h.n;
    return true;
}

/* ---- decoding ------------------------------------------------------------ */

#define BAD(code, ...) do { pd_fail(err, code, __VA_ARGS__); goto fail; } while (0)

static char *dupn(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

static bool name_ok(const uint8_t *p, size_t n)
{
    if (!n || n > PROFDB_MAX_NAME)
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 || p[i] == 0x7f)
            return false;
    return true;
}

static bool decode_header(const uint8_t *d, size_t size, const char *name, profdb_stacks *out,
                          size_t *hlen, profdb_error *err)
{
    if (!size)
        return pd_fail(err, PROFDB_ETRUNC, "%s: empty file (truncated stack profile)", name);
    if (memcmp(d, MAGIC, size < 8 ? size : 8))
        return pd_fail(err, PROFDB_EMAGIC, "%s: not a cpo stack profile (bad magic)", name);
    if (size < 10)
        return pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the header (%zu bytes of at least %d)",
                       name, size, HDR_FIXED);
    if (le_get16(d + 8) != PROFDB_STACKS_VERSION)
        return pd_fail(err, PROFDB_EVERSION, "%s: stack format version %u, this build reads version %d",
                       name, le_get16(d + 8), PROFDB_STACKS_VERSION);
    if (size < HDR_FIXED + 4)
        return pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the header (%zu bytes of at least %d)",
                       name, size, HDR_FIXED + 4);
    size_t h = le_get32(d + 12);
    if (h < HDR_FIXED + 4 || h > HDR_MAX)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (header length %zu)", name, h);
    if (h > size)
        return pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the header (%zu bytes of %zu)", name, size, h);
    if (crc(d, h - 4) != le_get32(d + h - 4))
        return pd_fail(err, PROFDB_ECHECKSUM, "%s: header checksum mismatch", name);
    if (le_get16(d + 10))
        return pd_fail(err, PROFDB_EVERSION, "%s: uses format features this build lacks (flags 0x%x)",
                       name, le_get16(d + 10));
    size_t ni = le_get16(d + 68), ne = le_get16(d + 70), nh = le_get16(d + 72);
    if (!ni || ni > PROFDB_STACK_MAX_IMAGES || HDR_FIXED + ne + nh > h - 4 ||
        !name_ok(d + HDR_FIXED, ne) || !name_ok(d + HDR_FIXED + ne, nh))
        return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (image count, event or host name)", name);
    out->event = dupn(d + HDR_FIXED, ne);
    out->host = dupn(d + HDR_FIXED + ne, nh);
    out->img = calloc(ni, sizeof *out->img);
    if (!out->event || !out->host || !out->img)
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
    out->nimages = ni;
    size_t p = HDR_FIXED + ne + nh;
    for (size_t i = 0; i < ni; i++) {
        size_t kl, pl;
        if (p + 2 > h - 4 || !(kl = le_get16(d + p)) || kl >= PROFDB_KEY_MAX || p + 2 + kl + 2 > h - 4 ||
            !(pl = le_get16(d + p + 2 + kl)) || pl > PROFDB_MAX_PATH || p + 4 + kl + pl > h - 4)
            return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (image %zu of %zu)", name, i, ni);
        out->img[i].key = dupn(d + p + 2, kl);
        out->img[i].path = dupn(d + p + 4 + kl, pl);
        if (!out->img[i].key || !out->img[i].path)
            return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
        if (!pd_key_valid(out->img[i].key) || memchr(out->img[i].path, 0, pl) ||
            (i && strcmp(out->img[i - 1].key, out->img[i].key) >= 0))
            return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (image %zu: key not valid or "
                           "not in order)", name, i);
        p += 4 + kl + pl;
    }
    if (p != h - 4)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (%zu bytes left over)", name, h - 4 - p);
    *hlen = h;
    return true;
}

bool profdb_stacks_decode(const void *data, size_t size, const char *name, profdb_stacks *out,
                          profdb_error *err)
{
    const uint8_t *d = data;
    uint8_t *pl = NULL;
    size_t h = 0;
    memset(out, 0, sizeof *out);
    if (!decode_header(d, size, name, out, &h, err))
        goto fail;
    out->total = le_get64(d + 16);
    out->n = le_get64(d + 24);
    out->created = (int64_t)le_get64(d + 32);
    out->updated = (int64_t)le_get64(d + 40);
    uint64_t zn = le_get64(d + 48), en = le_get64(d + 56);
    if (zn != size - h)
        BAD(zn > size - h ? PROFDB_ETRUNC : PROFDB_ECORRUPT, "%s: payload is %zu bytes, header says %llu",
            name, size - h, (unsigned long long)zn);
    if (out->n > MAX_STACKS || en < 5 * out->n || en > out->n * (15 + 20ull * PROFDB_STACK_MAX_FRAMES) ||
        (!out->n) != (!zn))
        BAD(PROFDB_ECORRUPT, "%s: corrupt header (%llu stacks in %llu bytes)", name,
            (unsigned long long)out->n, (unsigned long long)en);
    if (zn && crc(d + h, zn) != le_get32(d + 64))
        BAD(PROFDB_ECHECKSUM, "%s: payload checksum mismatch", name);
    if (!out->n)
        return out->total ? pd_fail(err, PROFDB_ECORRUPT, "%s: no stacks but %llu samples", name,
                                    (unsigned long long)out->total), profdb_stacks_free(out), false
                          : true;
    if (ZSTD_getFrameContentSize(d + h, zn) != en)
        BAD(PROFDB_ECORRUPT, "%s: payload size does not match the header", name);
    if (!(pl = malloc(en)) || !(out->s = calloc(out->n, sizeof *out->s)))
        BAD(PROFDB_ENOMEM, "%s: out of memory", name);
    size_t got = ZSTD_decompress(pl, en, d + h, zn);
    if (ZSTD_isError(got) || got != en)
        BAD(PROFDB_ECORRUPT, "%s: payload does not decompress", name);
    /* frames: at most en / 2 of them (two bytes each at least) */
    if (!(out->frames = malloc((en / 2 + 1) * sizeof *out->frames)))
        BAD(PROFDB_ENOMEM, "%s: out of memory", name);
    const uint8_t *p = pl, *end = pl + en;
    size_t nf = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < out->n; i++) {
        uint64_t c, e, n;
        if (!leb128_read_u(&p, end, &c) || !leb128_read_u(&p, end, &e) || !leb128_read_u(&p, end, &n) ||
            !c || e > 255 || !n || n > PROFDB_STACK_MAX_FRAMES || nf + n > en / 2 + 1)
            BAD(PROFDB_ECORRUPT, "%s: corrupt payload (stack %zu)", name, i);
        profdb_stack *s = &out->s[i];
        *s = (profdb_stack){ c, (uint32_t)e, (uint32_t)n, out->frames + nf };
        for (uint64_t j = 0; j < n; j++) {
            uint64_t im, off;
            if (!leb128_read_u(&p, end, &im) || !leb128_read_u(&p, end, &off) || im >= out->nimages)
                BAD(PROFDB_ECORRUPT, "%s: corrupt payload (stack %zu, frame %llu)", name, i,
                    (unsigned long long)j);
            out->frames[nf++] = (profdb_frame){ (uint32_t)im, off };
        }
        out->nframes = nf;
        if (i && pd_stack_cmp(&out->s[i - 1], s) >= 0)
            BAD(PROFDB_ECORRUPT, "%s: corrupt payload (stack %zu out of order)", name, i);
        if (total + c < total)
            BAD(PROFDB_ECORRUPT, "%s: counts add up to more than 2^64-1", name);
        total += c;
    }
    if (p != end || total != out->total)
        BAD(PROFDB_ECORRUPT, "%s: corrupt payload (%s)", name,
            p != end ? "bytes after the last stack" : "counts do not add up to the total");
    free(pl);
    return true;
fail:
    free(pl);
    profdb_stacks_free(out);
    return false;
}

bool profdb_stacks_read_file(const char *path, profdb_stacks *out, profdb_error *err)
{
    uint8_t *d;
    size_t n;
    memset(out, 0, sizeof *out);
    if (!pd_slurp(path, &d, &n, err))
        return false;
    bool ok = profdb_stacks_decode(d, n, path, out, err);
    free(d);
    if (ok && !(out->file = strdup(path))) {
        profdb_stacks_free(out);
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", path);
    }
    return ok;
}
