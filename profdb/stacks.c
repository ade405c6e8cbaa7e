/*
 * profdb/stacks.c: stack profiles: the file format (docs/profile-format.md
 * "Stack profiles"), merging into the database, and reading a selection
 * back as one table of stacks.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common/hash.h"
#include "common/le.h"
#include "common/leb128.h"
#include "profdb/internal.h"
#include "profdb/stacks.h"

#define MAGIC     "CPOSTAK\n"
#define HDR_FIXED 76
#define HDR_MAX   (1u << 22)
#define MAX_STACKS (1u << 26)

static uint32_t crc(const void *p, size_t n) { return (uint32_t)crc32_z(0, p, n); }

void profdb_stacks_free(profdb_stacks *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nimages; i++) {
        free(s->img[i].key);
        free(s->img[i].path);
    }
    free(s->img);
    free(s->s);
    free(s->frames);
    free(s->file);
    free(s->event);
    free(s->host);
    memset(s, 0, sizeof *s);
}

/* ---- canonical form ----------------------------------------------------- */

static int cmp_stack(const void *a, const void *b)
{
    const profdb_stack *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    for (uint32_t i = 0; i < x->n; i++) {
        if (x->f[i].image != y->f[i].image)
            return x->f[i].image < y->f[i].image ? -1 : 1;
        if (x->f[i].offset != y->f[i].offset)
            return x->f[i].offset < y->f[i].offset ? -1 : 1;
    }
    return 0;
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
    const profdb_stack_image *img = ctx;
    const uint32_t *x = a, *y = b;
    int c = strcmp(img[*x].key, img[*y].key);
    return c ? c : (*x > *y) - (*x < *y);
}

bool profdb_stacks_normalise(profdb_stacks *s, profdb_error *err)
{
    /* images by key, duplicates folded; frames follow their image */
    size_t ni = s->nimages;
    uint32_t *idx = malloc((ni ? ni : 1) * sizeof *idx);
    uint32_t *map = malloc((ni ? ni : 1) * sizeof *map);
    profdb_stack_image *sorted = malloc((ni ? ni : 1) * sizeof *sorted);
    size_t nframes = 0;
    for (size_t i = 0; i < s->n; i++)
        nframes += s->s[i].n;
    profdb_frame *fr = malloc((nframes ? nframes : 1) * sizeof *fr);
    if (!idx || !map || !sorted || !fr) {
        free(idx);
        free(map);
        free(sorted);
        free(fr);
        return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    }
    for (size_t i = 0; i < ni; i++)
        idx[i] = (uint32_t)i;
    if (ni > 1)
        qsort_r(idx, ni, sizeof *idx, cmp_key, s->img);
    size_t nu = 0;
    for (size_t k = 0; k < ni; k++) {
        profdb_stack_image *im = &s->img[idx[k]];
        if (nu && !strcmp(sorted[nu - 1].key, im->key)) {
            free(im->key);
            free(im->path);
        } else {
            sorted[nu++] = *im;
        }
        map[idx[k]] = (uint32_t)(nu - 1);
    }
    free(idx);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        profdb_stack *st = &s->s[i];
        for (uint32_t j = 0; j < st->n; j++)
            fr[k + j] = (profdb_frame){ map[st->f[j].image], st->f[j].offset };
        st->f = fr + k;
        k += st->n;
    }
    free(map);
    free(s->img);
    free(s->frames);
    s->img = sorted;
    s->nimages = nu;
    s->frames = fr;
    s->nframes = nframes;
    if (s->n > 1)
        qsort(s->s, s->n, sizeof *s->s, cmp_stack);
    size_t m = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (m && !cmp_stack(&s->s[m - 1], &s->s[i])) {
            if (s->s[m - 1].count + s->s[i].count < s->s[i].count)
                return pd_fail(err, PROFDB_EOVERFLOW, "stacks: a count exceeds 2^64-1");
            s->s[m - 1].count += s->s[i].count;
        } else {
            s->s[m++] = s->s[i];
        }
        if (total + s->s[i].count < total)
            return pd_fail(err, PROFDB_EOVERFLOW, "stacks: more than 2^64-1 samples");
        total += s->s[i].count;
    }
    s->n = m;
    s->total = total;
    return true;
}

/* ---- encoding ------------------------------------------------------------ */

typedef struct buf {
    uint8_t *b;
    size_t n, cap;
    bool oom;
} buf;

static void put(buf *o, const void *p, size_t n)
{
    if (o->oom)
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

static void uleb(buf *o, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n] = v & 0x7f;
        v >>= 7;
        t[n++] |= v ? 0x80 : 0;
    } while (v);
    put(o, t, n);
}

static void str16(buf *o, const char *s)
{
    uint8_t l[2];
    le_put16(l, (uint16_t)strlen(s));
    put(o, l, 2);
    put(o, s, strlen(s));
}

bool profdb_stacks_encode(const profdb_stacks *s, uint8_t **data, size_t *size, profdb_error *err)
{
    buf pl = { 0 }, h = { 0 };
    for (size_t i = 0; i < s->n; i++) {
        uleb(&pl, s->s[i].count);
        uleb(&pl, s->s[i].end);
        uleb(&pl, s->s[i].n);
        for (uint32_t j = 0; j < s->s[i].n; j++) {
            uleb(&pl, s->s[i].f[j].image);
            uleb(&pl, s->s[i].f[j].offset);
        }
    }
    uint8_t fixed[HDR_FIXED] = { 0 };
    put(&h, fixed, sizeof fixed);
    put(&h, s->event, strlen(s->event));
    put(&h, s->host, strlen(s->host));
    for (size_t i = 0; i < s->nimages; i++) {
        str16(&h, s->img[i].key);
        str16(&h, s->img[i].path);
    }
    put(&h, fixed, 4);
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
    put(&h, z, zn);
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
        if (i && cmp_stack(&out->s[i - 1], s) >= 0)
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

/* ---- adding ---------------------------------------------------------------- */

/* Append b's images and stacks to a (not normalised afterwards). */
static bool append(profdb_stacks *a, const size_t nimages, const char *const *keys,
                   const char *const *paths, const profdb_stack *s, size_t n, profdb_error *err)
{
    size_t nf = 0, af = 0;
    for (size_t i = 0; i < n; i++)
        nf += s[i].n;
    for (size_t i = 0; i < a->n; i++)
        af += a->s[i].n;
    profdb_stack_image *img = realloc(a->img, (a->nimages + nimages + 1) * sizeof *img);
    if (img)
        a->img = img;
    profdb_stack *st = realloc(a->s, (a->n + n + 1) * sizeof *st);
    if (st)
        a->s = st;
    profdb_frame *fr = malloc((af + nf + 1) * sizeof *fr);
    if (!img || !st || !fr) {
        free(fr);
        return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++) {
        memcpy(fr + k, a->s[i].f, a->s[i].n * sizeof *fr);
        a->s[i].f = fr + k;
        k += a->s[i].n;
    }
    uint32_t base = (uint32_t)a->nimages;
    for (size_t i = 0; i < nimages; i++) {
        a->img[a->nimages].key = strdup(keys[i]);
        a->img[a->nimages].path = strdup(paths[i]);
        if (!a->img[a->nimages].key || !a->img[a->nimages].path) {
            free(a->img[a->nimages].key);
            free(a->img[a->nimages].path);
            free(a->frames);
            a->frames = fr;
            a->nframes = k;
            return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
        }
        a->nimages++;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < s[i].n; j++)
            fr[k + j] = (profdb_frame){ base + s[i].f[j].image, s[i].f[j].offset };
        a->s[a->n] = s[i];
        a->s[a->n++].f = fr + k;
        k += s[i].n;
    }
    free(a->frames);
    a->frames = fr;
    a->nframes = k;
    return true;
}

static bool append_stacks(profdb_stacks *a, const profdb_stacks *b, profdb_error *err)
{
    const char **keys = malloc((b->nimages + 1) * sizeof *keys);
    const char **paths = malloc((b->nimages + 1) * sizeof *paths);
    bool ok = keys && paths;
    for (size_t i = 0; ok && i < b->nimages; i++) {
        keys[i] = b->img[i].key;
        paths[i] = b->img[i].path;
    }
    ok = ok ? append(a, b->nimages, keys, paths, b->s, b->n, err)
            : pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    free(keys);
    free(paths);
    return ok;
}

/* ---- the database ---------------------------------------------------------- */

/* stacks-HASH.EVENT.stk: HASH over the image set's sorted keys. */
static bool file_name(const profdb_stacks *s, char *out, size_t size)
{
    uint64_t h = FNV1A_INIT;
    for (size_t i = 0; i < s->nimages; i++) {
        h = fnv1a_str(h, s->img[i].key);
        h = fnv1a(h, "\n", 1);
    }
    char ev[3 * PROFDB_MAX_NAME + 1];
    pd_escape(s->event, false, ev, sizeof ev);
    return (size_t)snprintf(out, size, "stacks-%016llx.%s" PROFDB_STACKS_SUFFIX, (unsigned long long)h, ev) < size;
}

static bool check_input(const profdb_stacks_input *in, profdb_error *err)
{
    if (!pd_check_name(in->event, "event", err) || (in->host && !pd_check_name(in->host, "host", err)))
        return false;
    if (!in->nimages || in->nimages > PROFDB_STACK_MAX_IMAGES || !in->keys || !in->paths ||
        (in->n && !in->s))
        return pd_fail(err, PROFDB_EINVAL, "stacks: 1 to %d images and a stack array needed",
                       PROFDB_STACK_MAX_IMAGES);
    for (size_t i = 0; i < in->nimages; i++)
        if (!in->keys[i] || !pd_key_valid(in->keys[i]) || !in->paths[i] || !*in->paths[i] ||
            strlen(in->paths[i]) > PROFDB_MAX_PATH)
            return pd_fail(err, PROFDB_EINVAL, "stacks: image %zu: bad key or path", i);
    for (size_t i = 0; i < in->n; i++) {
        const profdb_stack *s = &in->s[i];
        if (!s->count || !s->n || s->n > PROFDB_STACK_MAX_FRAMES || s->end > 255 || !s->f)
            return pd_fail(err, PROFDB_EINVAL, "stacks: stack %zu: bad count, end or frames", i);
        for (uint32_t j = 0; j < s->n; j++)
            if (s->f[j].image >= in->nimages)
                return pd_fail(err, PROFDB_EINVAL, "stacks: stack %zu: frame %u names no image", i, j);
    }
    return true;
}

static bool merge_one(profdb *db, const char *hostdir, const char *host, const profdb_stacks_input *in,
                      profdb_error *err)
{
    profdb_stacks add = { 0 };
    char fname[64 + 3 * PROFDB_MAX_NAME];
    bool ok = false;
    uint8_t *enc = NULL;
    size_t size;
    char *path = NULL;
    if (!append(&add, in->nimages, in->keys, in->paths, in->s, in->n, err) ||
        !profdb_stacks_normalise(&add, err))
        goto out;
    if (!(add.event = strdup(in->event)) || !(add.host = strdup(host))) {
        pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
        goto out;
    }
    if (!add.n) {
        ok = true;
        goto out;
    }
    file_name(&add, fname, sizeof fname);
    if (!(path = pd_join(hostdir, fname, NULL, err)))
        goto out;
    profdb_stacks old;
    profdb_error e;
    add.created = add.updated = time(NULL);
    if (profdb_stacks_read_file(path, &old, &e)) {
        add.created = old.created;
        bool merged = append_stacks(&add, &old, err) && profdb_stacks_normalise(&add, err);
        profdb_stacks_free(&old);
        if (!merged)
            goto out;
    } else if (e.code == PROFDB_EVERSION || e.code == PROFDB_ENOMEM ||
               (e.code == PROFDB_EIO && e.sys_errno != ENOENT)) {
        if (err)
            *err = e;
        goto out;
    } else if (e.code != PROFDB_ENOENT && !(e.code == PROFDB_EIO && e.sys_errno == ENOENT)) {
        /* damaged: set aside, as profiles are, and start anew */
        char aside[PATH_MAX];
        snprintf(aside, sizeof aside, "%s.corrupt-%lld", path, (long long)time(NULL));
        if (rename(path, aside) < 0) {
            pd_fail_sys(err, path, "cannot set a damaged stack profile aside");
            goto out;
        }
        pd_warn(db, "%s; set aside as %s", e.msg, aside);
    }
    ok = profdb_stacks_encode(&add, &enc, &size, err) &&
         pd_write_atomic(hostdir, fname, enc, size, false, err);
out:
    free(enc);
    free(path);
    profdb_stacks_free(&add);
    return ok;
}

size_t profdb_stacks_merge(profdb *db, const profdb_stacks_input *in, size_t n, profdb_error *err)
{
    profdb_error scratch;
    if (!err)
        err = &scratch;
    memset(err, 0, sizeof *err);
    if (!n)
        return 0;
    char epoch[PROFDB_EPOCH_MAX], myhost[PROFDB_MAX_NAME + 2];
    if (!pd_hostname(myhost, sizeof myhost, err) || !pd_current_or_create(db, epoch, err))
        return 0;
    char *edir = pd_join(db->dir, epoch, NULL, err);
    if (!edir || !pd_mkdir(edir, true, err)) {
        free(edir);
        return 0;
    }
    size_t done = 0;
    char *hostdir = NULL;
    int lockfd = -1;
    const char *lockedhost = NULL;
    for (; done < n; done++) {
        if (!check_input(&in[done], err))
            break;
        const char *host = in[done].host ? in[done].host : myhost;
        if (!lockedhost || strcmp(lockedhost, host)) {
            if (hostdir && !pd_fsync_dir(hostdir, err))
                break;
            if (lockfd >= 0)
                close(lockfd);
            lockfd = -1;
            free(hostdir);
            char esc[3 * PROFDB_MAX_NAME + 1];
            pd_escape(host, true, esc, sizeof esc);
            hostdir = pd_join(edir, esc, NULL, err);
            if (!hostdir || !pd_mkdir(hostdir, true, err) ||
                (lockfd = pd_lock_dir(db, hostdir, "two writers with this host name would lose each "
                                      "other's updates", err)) == -1)
                break;
            lockedhost = host;
        }
        if (!merge_one(db, hostdir, host, &in[done], err))
            break;
    }
    profdb_error e2;
    if (hostdir && lockfd != -1 && !pd_fsync_dir(hostdir, &e2) && !err->code)
        *err = e2;
    if (lockfd >= 0)
        close(lockfd);
    free(hostdir);
    free(edir);
    return done;
}

/* ---- reading a selection ---------------------------------------------------- */

static bool has_image(const profdb_stacks *s, const char *key)
{
    for (size_t i = 0; i < s->nimages; i++)
        if (!strcmp(s->img[i].key, key))
            return true;
    return false;
}

static bool select_host(const char *hdir, const char *event, const char *key, profdb_stacks *out,
                        profdb_error *err)
{
    DIR *d = opendir(hdir);
    if (!d)
        return errno == ENOENT || errno == ENOTDIR || pd_fail_sys(err, hdir, "cannot read directory");
    struct dirent *de;
    bool ok = true;
    size_t sl = strlen(PROFDB_STACKS_SUFFIX);
    while (ok && (errno = 0, de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || strncmp(de->d_name, "stacks-", 7) || l <= sl ||
            strcmp(de->d_name + l - sl, PROFDB_STACKS_SUFFIX))
            continue;
        char *path = pd_join(hdir, de->d_name, NULL, err);
        profdb_stacks s;
        if (!path || !profdb_stacks_read_file(path, &s, err)) {
            free(path);
            ok = false;
            break;
        }
        free(path);
        if ((!event || !strcmp(s.event, event)) && (!key || has_image(&s, key))) {
            if (!out->event)
                out->event = strdup(event ? event : s.event);
            ok = append_stacks(out, &s, err);
        }
        profdb_stacks_free(&s);
    }
    closedir(d);
    return ok;
}

bool profdb_stacks_select(profdb *db, const char *epoch, const char *host, const char *event,
                          const char *key, profdb_stacks *out, profdb_error *err)
{
    memset(out, 0, sizeof *out);
    char **epochs = NULL;
    size_t ne = 0;
    if (epoch) {
        if (!(epochs = calloc(2, sizeof *epochs)) || !(epochs[0] = strdup(epoch))) {
            free(epochs);
            return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
        }
        ne = 1;
    } else if (!profdb_epochs(db, &epochs, &ne, err)) {
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < ne; i++) {
        char *edir = pd_join(db->dir, epochs[i], NULL, err);
        if (!edir) {
            ok = false;
            break;
        }
        if (host) {
            char esc[3 * PROFDB_MAX_NAME + 1];
            pd_escape(host, true, esc, sizeof esc);
            char *hdir = pd_join(edir, esc, NULL, err);
            ok = hdir && select_host(hdir, event, key, out, err);
            free(hdir);
        } else {
            DIR *d = opendir(edir);
            struct dirent *de;
            if (!d)
                ok = errno == ENOENT || pd_fail_sys(err, edir, "cannot read epoch");
            while (ok && d && (errno = 0, de = readdir(d))) {
                if (de->d_name[0] == '.')
                    continue;
                char *hdir = pd_join(edir, de->d_name, NULL, err);
                ok = hdir && select_host(hdir, event, key, out, err);
                free(hdir);
            }
            if (d)
                closedir(d);
        }
        free(edir);
    }
    profdb_strv_free(epochs);
    if (ok)
        ok = profdb_stacks_normalise(out, err);
    if (!ok)
        profdb_stacks_free(out);
    return ok;
}
