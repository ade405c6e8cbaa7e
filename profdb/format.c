/*
 * profdb/format.c: one profile file's bytes (docs/profile-format.md).
 *
 * A plain header with its own checksum, so listings read a few hundred
 * bytes per profile, then a zstd frame holding the entries as two columns
 * of LEB128 varints: every offset delta, then every count.  Columns keep
 * bytes of one kind together, which zstd's entropy stage rewards.
 *
 * The decoder trusts nothing: each length is checked against the bytes
 * present before use, the payload is decompressed in fixed-size pieces
 * (a small file cannot make us allocate what its header merely claims),
 * and the decoded entries must agree with every header field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "common/le.h"
#include "profdb/internal.h"

static const uint8_t MAGIC[8] = { 'C', 'P', 'O', 'P', 'R', 'O', 'F', '\n' };

#define get16 le_get16   /* common/le.h */
#define get32 le_get32
#define get64 le_get64
#define put16 le_put16
#define put32 le_put32
#define put64 le_put64

static uint32_t crc(const void *p, size_t n) { return (uint32_t)crc32_z(0, p, n); }

double profdb_mean_period(const profdb_info *info)
{
    return info->total ? (double)info->period_sum / (double)info->total : 0.0;
}

void profdb_info_free(profdb_info *info)
{
    free(info->file);
    free(info->event);
    free(info->host);
    for (unsigned i = 0; i < info->npaths; i++)
        free(info->paths[i]);
    memset(info, 0, sizeof *info);
}

void profdb_profile_free(profdb_profile *p)
{
    profdb_info_free(&p->info);
    free(p->e);
    p->e = NULL;
    p->n = 0;
}

static char *field(const uint8_t *p, size_t n, const char *name, const char *what,
                   profdb_error *err)
{
    if (memchr(p, 0, n)) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: %s contains a NUL byte", name, what);
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* `avail` bytes of the file are at data; the file has `fsize` bytes. */
bool pd_decode_header(const uint8_t *d, size_t avail, uint64_t fsize, const char *name,
                      profdb_info *h, profdb_error *err)
{
    memset(h, 0, sizeof *h);
    if (fsize == 0)
        return pd_fail(err, PROFDB_ETRUNC, "%s: empty file (truncated profile)", name);
    if (memcmp(d, MAGIC, avail < 8 ? avail : 8))
        return pd_fail(err, PROFDB_EMAGIC, "%s: not a cpo profile (bad magic)", name);
    if (avail < 10)
        return pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the header (%zu bytes)", name, avail);
    h->version = get16(d + 8);
    if (h->version != PROFDB_VERSION)
        return pd_fail(err, PROFDB_EVERSION, "%s: format version %u, this build reads version %d",
                       name, h->version, PROFDB_VERSION);
    if (avail < PROFDB_HDR_FIXED)
        return pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the header (%zu bytes of at least %d)",
                       name, avail, PROFDB_HDR_FIXED);
    uint32_t hlen = get32(d + 12);
    if (hlen < PROFDB_HDR_FIXED + 4 || hlen > PROFDB_HDR_MAX)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (header length %u)", name, hlen);
    if (avail < hlen)
        return pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the header (%zu bytes of %u)",
                       name, avail, hlen);
    if (crc(d, hlen - 4) != get32(d + hlen - 4))
        return pd_fail(err, PROFDB_ECHECKSUM, "%s: header checksum mismatch", name);
    uint16_t flags = get16(d + 10);
    if (flags)
        return pd_fail(err, PROFDB_EVERSION, "%s: uses format features this build lacks (flags 0x%x)",
                       name, flags);

    h->total = get64(d + 16);
    h->nentries = get64(d + 24);
    h->period_sum = get64(d + 32);
    h->created = (int64_t)get64(d + 40);
    h->updated = (int64_t)get64(d + 48);
    h->payload_len = get64(d + 56);
    h->encoded_len = get64(d + 64);
    h->build_id_len = d[76];
    h->npaths = 0;
    unsigned npaths = d[77];
    size_t evlen = get16(d + 78), hostlen = get16(d + 80);
    if (h->build_id_len > PROFDB_MAX_BUILD_ID || npaths < 1 || npaths > PROFDB_MAX_PATHS ||
        evlen < 1 || evlen > PROFDB_MAX_NAME || hostlen < 1 || hostlen > PROFDB_MAX_NAME)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (field lengths)", name);

    size_t pos = PROFDB_HDR_FIXED, end = hlen - 4;
    if (pos + h->build_id_len + evlen + hostlen > end)
        return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (fields overrun it)", name);
    memcpy(h->build_id, d + pos, h->build_id_len);
    pos += h->build_id_len;
    if (!(h->event = field(d + pos, evlen, name, "event name", err)))
        goto bad;
    pos += evlen;
    if (!(h->host = field(d + pos, hostlen, name, "host name", err)))
        goto bad;
    pos += hostlen;
    profdb_error why;
    if (!pd_check_name(h->event, "event", &why) || !pd_check_name(h->host, "host", &why)) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (%s)", name, why.msg);
        goto bad;
    }
    for (unsigned i = 0; i < npaths; i++) {
        size_t n = pos + 2 <= end ? get16(d + pos) : 0;
        if (pos + 2 > end || n < 1 || n > PROFDB_MAX_PATH || pos + 2 + n > end) {
            pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (image path %u)", name, i + 1);
            goto bad;
        }
        if (!(h->paths[i] = field(d + pos + 2, n, name, "image path", err)))
            goto bad;
        h->npaths++;
        pos += 2 + n;
    }
    if (pos != end) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (%zu unused bytes)", name, end - pos);
        goto bad;
    }
    if (h->nentries > PROFDB_MAX_ENTRIES) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: %llu entries, more than the limit %u", name,
                (unsigned long long)h->nentries, PROFDB_MAX_ENTRIES);
        goto bad;
    }
    if (h->nentries ? h->encoded_len < 2 * h->nentries || h->encoded_len > 20 * h->nentries ||
                          h->payload_len == 0 || h->total < h->nentries
                    : h->encoded_len || h->payload_len || h->total) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt header (%llu entries, %llu samples, "
                "%llu encoded bytes, %llu payload bytes)", name,
                (unsigned long long)h->nentries, (unsigned long long)h->total,
                (unsigned long long)h->encoded_len, (unsigned long long)h->payload_len);
        goto bad;
    }
    if (fsize - hlen < h->payload_len) {
        pd_fail(err, PROFDB_ETRUNC, "%s: truncated in the payload (%llu bytes of %llu)", name,
                (unsigned long long)(fsize - hlen), (unsigned long long)h->payload_len);
        goto bad;
    }
    if (fsize - hlen > h->payload_len) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: %llu stray bytes after the payload", name,
                (unsigned long long)(fsize - hlen - h->payload_len));
        goto bad;
    }
    profdb_key(h->build_id, h->build_id_len, h->paths[0], h->key);
    return true;
bad:
    profdb_info_free(h);
    return false;
}

bool profdb_decode_header(const void *data, size_t size, const char *name,
                          profdb_info *out, profdb_error *err)
{
    return pd_decode_header(data, size, size, name, out, err);
}

/* Decode state for the two varint columns, fed in pieces. */
typedef struct {
    profdb_entry *e;
    size_t n, cap, want;   /* values done in this column, capacity, entries */
    int column;            /* 0: offset deltas, 1: counts */
    uint64_t acc, total;
    unsigned shift;
} dstate;

static bool feed(dstate *s, const uint8_t *p, size_t len, const char *name, profdb_error *err)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t b = p[i];
        if (s->shift == 63 && b > 1)
            return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (varint too long)", name);
        s->acc |= (uint64_t)(b & 0x7f) << s->shift;
        if (b & 0x80) {
            s->shift += 7;
            continue;
        }
        uint64_t v = s->acc;
        s->acc = 0;
        s->shift = 0;
        if (s->column == 2)
            return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (more values than entries)", name);
        if (s->column == 0) {
            if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 1024;
                if (cap > s->want)
                    cap = s->want;
                profdb_entry *ne = realloc(s->e, cap * sizeof *ne);
                if (!ne)
                    return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
                s->e = ne;
                s->cap = cap;
            }
            if (s->n == 0) {
                s->e[0].offset = v;
            } else {
                uint64_t prev = s->e[s->n - 1].offset;
                if (v == 0 || prev + v < prev)
                    return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (offsets out of order "
                                   "at entry %zu)", name, s->n);
                s->e[s->n].offset = prev + v;
            }
        } else {
            if (v == 0 || s->total + v < s->total)
                return pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (count %llu at entry %zu)",
                               name, (unsigned long long)v, s->n);
            s->e[s->n].count = v;
            s->total += v;
        }
        if (++s->n == s->want) {
            s->column++;
            s->n = 0;
        }
    }
    return true;
}

bool profdb_decode(const void *data, size_t size, const char *name,
                   profdb_profile *out, profdb_error *err)
{
    memset(out, 0, sizeof *out);
    profdb_info *h = &out->info;
    if (!pd_decode_header(data, size, size, name, h, err))
        return false;
    const uint8_t *pl = (const uint8_t *)data + (size - h->payload_len);
    if (h->nentries == 0)
        return true;
    if (crc(pl, h->payload_len) != get32((const uint8_t *)data + 72)) {
        pd_fail(err, PROFDB_ECHECKSUM, "%s: payload checksum mismatch", name);
        goto bad;
    }
    unsigned long long csize = ZSTD_getFrameContentSize(pl, h->payload_len);
    if (csize != h->encoded_len) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (not a zstd frame of %llu bytes)", name,
                (unsigned long long)h->encoded_len);
        goto bad;
    }

    dstate s = { .want = h->nentries };
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    uint8_t *buf = malloc(ZSTD_DStreamOutSize());
    if (!dc || !buf) {
        ZSTD_freeDCtx(dc);
        free(buf);
        pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
        goto bad;
    }
    ZSTD_inBuffer in = { pl, h->payload_len, 0 };
    uint64_t produced = 0;
    size_t r = 1;
    bool ok = true;
    while (ok && r != 0) {
        ZSTD_outBuffer o = { buf, ZSTD_DStreamOutSize(), 0 };
        r = ZSTD_decompressStream(dc, &o, &in);
        if (ZSTD_isError(r)) {
            ok = pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (zstd: %s)", name,
                         ZSTD_getErrorName(r));
            break;
        }
        produced += o.pos;
        if (produced > h->encoded_len)
            ok = pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (longer than %llu bytes)", name,
                         (unsigned long long)h->encoded_len);
        else
            ok = feed(&s, buf, o.pos, name, err);
        if (ok && r != 0 && in.pos == in.size && o.pos == 0)
            ok = pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (zstd frame cut short)", name);
    }
    ZSTD_freeDCtx(dc);
    free(buf);
    out->e = s.e;
    if (!ok)
        goto bad;
    if (in.pos != in.size || produced != h->encoded_len || s.column != 2 || s.shift) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: corrupt payload (%s)", name,
                in.pos != in.size ? "bytes after the zstd frame" :
                s.column != 2 ? "fewer values than entries" : "length differs from the header");
        goto bad;
    }
    if (s.total != h->total) {
        pd_fail(err, PROFDB_ECORRUPT, "%s: counts sum to %llu, header says %llu samples", name,
                (unsigned long long)s.total, (unsigned long long)h->total);
        goto bad;
    }
    out->n = h->nentries;
    return true;
bad:
    profdb_profile_free(out);
    return false;
}

static uint8_t *varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

bool profdb_encode(const profdb_profile *p, int level, uint8_t **data, size_t *size,
                   profdb_error *err)
{
    const profdb_info *h = &p->info;
    const char *name = h->file ? h->file : "profile";
    *data = NULL;
    *size = 0;
    if (h->build_id_len > PROFDB_MAX_BUILD_ID || h->npaths < 1 || h->npaths > PROFDB_MAX_PATHS)
        return pd_fail(err, PROFDB_EINVAL, "%s: bad build-id length or path count", name);
    if (!pd_check_name(h->event, "event", err) || !pd_check_name(h->host, "host", err))
        return false;
    size_t hlen = PROFDB_HDR_FIXED + h->build_id_len + strlen(h->event) + strlen(h->host) + 4;
    for (unsigned i = 0; i < h->npaths; i++) {
        size_t n = h->paths[i] ? strlen(h->paths[i]) : 0;
        if (n < 1 || n > PROFDB_MAX_PATH)
            return pd_fail(err, PROFDB_EINVAL, "%s: image path %u is empty or longer than %d bytes",
                           name, i + 1, PROFDB_MAX_PATH);
        hlen += 2 + n;
    }
    if (p->n > PROFDB_MAX_ENTRIES)
        return pd_fail(err, PROFDB_EINVAL, "%s: %zu entries, more than the limit %u", name, p->n,
                       PROFDB_MAX_ENTRIES);
    uint64_t total = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->e[i].count == 0 || (i && p->e[i].offset <= p->e[i - 1].offset))
            return pd_fail(err, PROFDB_EINVAL, "%s: entry %zu: zero count or offsets not increasing",
                           name, i);
        if (total + p->e[i].count < total)
            return pd_fail(err, PROFDB_EOVERFLOW, "%s: more than 2^64-1 samples", name);
        total += p->e[i].count;
    }

    uint8_t *enc = malloc(p->n * 20 + 1), *q = enc;
    size_t bound = ZSTD_compressBound(p->n * 20);
    uint8_t *out = malloc(hlen + bound);
    if (!enc || !out) {
        free(enc);
        free(out);
        return pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
    }
    for (size_t i = 0; i < p->n; i++)
        q = varint(q, i ? p->e[i].offset - p->e[i - 1].offset : p->e[i].offset);
    for (size_t i = 0; i < p->n; i++)
        q = varint(q, p->e[i].count);
    size_t enclen = (size_t)(q - enc), plen = 0;
    if (p->n) {
        plen = ZSTD_compress(out + hlen, bound, enc, enclen, level ? level : 9);
        if (ZSTD_isError(plen)) {
            free(enc);
            free(out);
            return pd_fail(err, PROFDB_ENOMEM, "%s: zstd: %s", name, ZSTD_getErrorName(plen));
        }
    }
    free(enc);

    uint8_t *d = out;
    memset(d, 0, PROFDB_HDR_FIXED);
    memcpy(d, MAGIC, 8);
    put16(d + 8, PROFDB_VERSION);
    put32(d + 12, (uint32_t)hlen);
    put64(d + 16, total);
    put64(d + 24, p->n);
    put64(d + 32, h->period_sum);
    put64(d + 40, (uint64_t)h->created);
    put64(d + 48, (uint64_t)h->updated);
    put64(d + 56, plen);
    put64(d + 64, p->n ? enclen : 0);
    put32(d + 72, p->n ? crc(out + hlen, plen) : 0);
    d[76] = (uint8_t)h->build_id_len;
    d[77] = (uint8_t)h->npaths;
    put16(d + 78, (uint16_t)strlen(h->event));
    put16(d + 80, (uint16_t)strlen(h->host));
    size_t pos = PROFDB_HDR_FIXED;
    memcpy(d + pos, h->build_id, h->build_id_len);
    pos += h->build_id_len;
    memcpy(d + pos, h->event, strlen(h->event));
    pos += strlen(h->event);
    memcpy(d + pos, h->host, strlen(h->host));
    pos += strlen(h->host);
    for (unsigned i = 0; i < h->npaths; i++) {
        size_t n = strlen(h->paths[i]);
        put16(d + pos, (uint16_t)n);
        memcpy(d + pos + 2, h->paths[i], n);
        pos += 2 + n;
    }
    put32(d + pos, crc(d, pos));
    *data = out;
    *size = hlen + plen;
    return true;
}
