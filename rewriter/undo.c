/*
 * rewriter/undo.c: the undo record, and the original recovered from it.
 *
 * A rewritten image is its original file patched in place below the end of
 * what is loaded, then the new segment, then the unloaded sections moved
 * after it (elfout.c).  So the original is: the rewritten file's loaded
 * part, each moved section copied back to where it was, and over that the
 * original bytes of every piece the rewriter patched and of whatever past
 * the loaded part no moved section holds (the old section headers and
 * names).  The record keeps those pieces, the ELF header, and a checksum of
 * the whole original, so a recovery that went wrong says so instead of
 * handing back another program.
 *
 * Layout (little-endian): version u32, piece count u32, original size u64,
 * loaded end u64, checksum u64 (FNV-1a of the file), the ELF header (64
 * bytes); then per piece its offset u64, length u32, zero u32 and its bytes
 * padded to 8.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytebuf.h"
#include "common/hash.h"
#include "common/le.h"
#include "rewriter/undo.h"

#define HEAD 96             /* header with the ELF header */
/* What a record that does not fit its image says. */
#define CHANGED_WHY "the image was changed after it was rewritten (stripped?), or its record is damaged"
#define CHANGED "the undo record (" UNDO_SECTION ") does not fit the image: " CHANGED_WHY
#define GAP 16              /* equal bytes that do not end a piece */

typedef struct ubuf {
    bytebuf out;
    uint32_t pieces;
} ubuf;

static void piece(ubuf *u, uint64_t off, const uint8_t *bytes, uint32_t len)
{
    uint8_t h[16] = { 0 }, zero[8] = { 0 };
    le_put64(h, off);
    le_put32(h + 8, len);
    bytebuf_put(&u->out, h, sizeof h);
    bytebuf_put(&u->out, bytes, len);
    bytebuf_put(&u->out, zero, (8 - len % 8) % 8);
    u->pieces++;
}

/* Pieces of o over [lo, hi) where its bytes differ from p's (p NULL: where
 * they are not zero), runs joined across fewer than GAP bytes that do not. */
static void scan(ubuf *u, const uint8_t *o, const uint8_t *p, uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo; i < hi;) {
        if (p ? o[i] == p[i] : !o[i]) {
            i++;
            continue;
        }
        uint64_t last = i;
        for (uint64_t j = i + 1; j < hi && j - last <= GAP; j++)
            if (p ? o[j] != p[j] : o[j] != 0)
                last = j;
        for (uint64_t s = i; s <= last; s += UINT32_MAX)
            piece(u, s, o + s, (uint32_t)(last + 1 - s < UINT32_MAX ? last + 1 - s : UINT32_MAX));
        i = last + 1;
    }
}

bool undo_section_moves(const void *shp, size_t i, uint64_t aend, size_t shstrndx)
{
    const Elf64_Shdr *sh = shp;
    return i && !(sh->sh_flags & SHF_ALLOC) && sh->sh_type != SHT_NOBITS && sh->sh_offset >= aend &&
           i != shstrndx;
}

typedef struct range {
    uint64_t lo, hi;
    size_t index;       /* the section's */
} range;

static int by_lo(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The file ranges of f's sections that move (by f's own ELF header and
 * section table), sorted; NULL with *n 0 when none (or the table is not in
 * the file: then nothing moves).  The writer and the recovery both ask. */
static range *moving(const uint8_t *f, size_t size, uint64_t aend, size_t *n, bool *oom)
{
    Elf64_Ehdr eh;
    memcpy(&eh, f, sizeof eh);
    *n = 0;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
        (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff || !eh.e_shnum)
        return NULL;
    range *r = malloc(eh.e_shnum * sizeof *r);
    if (!r) {
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, f + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (undo_section_moves(&sh, i, aend, eh.e_shstrndx) && sh.sh_offset <= size &&
            sh.sh_size <= size - sh.sh_offset)
            r[(*n)++] = (range){ sh.sh_offset, sh.sh_offset + sh.sh_size, i };
    }
    qsort(r, *n, sizeof *r, by_lo);
    return r;
}

uint8_t *undo_encode(const uint8_t *orig, const uint8_t *patched, size_t n, uint64_t aend, size_t *size)
{
    if (n < sizeof(Elf64_Ehdr) || aend > n)
        return NULL;
    ubuf u = { 0 };
    uint8_t h[HEAD - sizeof(Elf64_Ehdr)] = { 0 };
    bytebuf_put(&u.out, h, sizeof h);
    bytebuf_put(&u.out, orig, sizeof(Elf64_Ehdr));
    size_t nr;
    range *r = moving(orig, n, aend, &nr, &u.out.oom);
    /* What the rewriter patched: below aend, and in the moving sections. */
    scan(&u, orig, patched, sizeof(Elf64_Ehdr), aend);
    for (size_t i = 0; i < nr; i++)
        scan(&u, orig, patched, r[i].lo, r[i].hi);
    /* Past aend outside them: their gaps, the names, the section headers. */
    uint64_t at = aend;
    for (size_t i = 0; i <= nr; i++) {
        uint64_t lo = i < nr ? r[i].lo : n;
        if (lo > at)
            scan(&u, orig, NULL, at, lo);
        if (i < nr && r[i].hi > at)
            at = r[i].hi;
    }
    free(r);
    if (u.out.oom) {
        free(u.out.b);
        return NULL;
    }
    uint8_t *b = u.out.b;
    le_put32(b, UNDO_VERSION);
    le_put32(b + 4, u.pieces);
    le_put64(b + 8, n);
    le_put64(b + 16, aend);
    le_put64(b + 24, fnv1a(FNV1A_INIT, orig, n));
    *size = u.out.n;
    return b;
}

static bool fail(char *err, size_t errlen, const image *img, const char *what)
{
    snprintf(err, errlen, "%s: %s", img->path, what);
    return false;
}

/* Put every piece of the record into buf; false when one does not fit. */
static bool apply(const uint8_t *rec, size_t recsz, uint32_t npieces, uint8_t *buf, uint64_t size)
{
    uint64_t at = HEAD;
    for (uint32_t k = 0; k < npieces; k++) {
        if (recsz - at < 16)
            return false;
        uint64_t off = le_get64(rec + at), len = le_get32(rec + at + 8);
        uint64_t padded = (len + 7) & ~(uint64_t)7;
        if (off > size || len > size - off || padded > recsz - at - 16)
            return false;
        memcpy(buf + off, rec + at + 16, len);
        at += 16 + padded;
    }
    return at == recsz;
}

bool undo_recover(const image *img, uint8_t **bufp, size_t *sizep, char *err, size_t errlen)
{
    const image_section *s = image_section_by_name(img, UNDO_SECTION);
    if (!s)
        return fail(err, errlen, img,
                    "a rewritten image without an undo record (" UNDO_SECTION "): its original "
                    "cannot be recovered from it; optimize the original image");
    const uint8_t *rec = s->data;
    if (!rec || s->size < HEAD || le_get32(rec) != UNDO_VERSION)
        return fail(err, errlen, img, "the undo record (" UNDO_SECTION ") is damaged or of another version");
    uint32_t npieces = le_get32(rec + 4);
    uint64_t size = le_get64(rec + 8), aend = le_get64(rec + 16), sum = le_get64(rec + 24);
    Elf64_Ehdr eh;
    memcpy(&eh, rec + 32, sizeof eh);
    /* Pieces are at least 16 bytes, so the count is bounded by the record.
     * The original is its loaded part, the moved sections and the record's
     * pieces, with alignment gaps between: twice the file bounds it. */
    if (aend > size || size < sizeof eh || npieces > s->size / 16)
        return fail(err, errlen, img, "the undo record (" UNDO_SECTION ") is damaged: sizes out of range");
    if (aend > img->file_size || size > 2 * (uint64_t)img->file_size + s->size)
        return fail(err, errlen, img, CHANGED);
    uint8_t *buf = calloc(size, 1);
    if (!buf)
        return fail(err, errlen, img, "out of memory for the original");
    /* The loaded part under the original's ELF header (no piece touches
     * it), whose section table the pieces bring back. */
    memcpy(buf, img->file, aend);
    memcpy(buf, &eh, sizeof eh);
    bool ok = apply(rec, s->size, npieces, buf, size), oom = false;
    size_t nr = 0;
    range *r = ok ? moving(buf, size, aend, &nr, &oom) : NULL;
    /* The moved sections, from where the rewritten image keeps them. */
    for (size_t i = 0; ok && i < nr; i++) {
        const image_section *now = r[i].index < img->nsections ? &img->sections[r[i].index] : NULL;
        uint64_t len = r[i].hi - r[i].lo;
        ok = now && now->size >= len && now->offset <= img->file_size && len <= img->file_size - now->offset;
        if (ok)
            memcpy(buf + r[i].lo, img->file + now->offset, len);
    }
    free(r);
    ok = ok && !oom && apply(rec, s->size, npieces, buf, size);
    if (!ok) {
        free(buf);
        return fail(err, errlen, img, oom ? "out of memory for the original" : CHANGED);
    }
    if (fnv1a(FNV1A_INIT, buf, size) != sum) {
        free(buf);
        return fail(err, errlen, img, "what the undo record rebuilds is not the original (checksum "
                    "differs): " CHANGED_WHY);
    }
    *bufp = buf;
    *sizep = size;
    return true;
}
