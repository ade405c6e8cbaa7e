/*
 * rewriter/addrmap.c: the address map: building, encoding as an ELF note
 * descriptor, reading back, and lookups.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/addrmap.h"

bool addrmap_add(addrmap *m, uint64_t new_addr, uint64_t orig, uint32_t len, unsigned kind)
{
    if (!len)
        return true;
    if (m->n) {
        addrmap_entry *p = &m->e[m->n - 1];
        if (p->kind == AM_CODE && kind == AM_CODE && p->new_addr + p->len == new_addr &&
            p->orig + p->len == orig) {
            p->len += len;
            return true;
        }
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        addrmap_entry *e = realloc(m->e, cap * sizeof *e);
        if (!e)
            return false;
        m->e = e;
        m->cap = cap;
    }
    m->e[m->n++] = (addrmap_entry){ new_addr, orig, len, kind };
    return true;
}

void addrmap_free(addrmap *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}

static int by_new(const void *a, const void *b)
{
    const addrmap_entry *x = a, *y = b;
    return x->new_addr < y->new_addr ? -1 : x->new_addr > y->new_addr;
}

void addrmap_sort(addrmap *m)
{
    qsort(m->e, m->n, sizeof *m->e, by_new);
}

uint64_t addrmap_lookup(const addrmap *m, uint64_t addr, int *kind)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].new_addr + m->e[mid].len <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n && m->e[lo].new_addr <= addr) {
        const addrmap_entry *e = &m->e[lo];
        if (kind)
            *kind = (int)e->kind;
        return e->kind == AM_CODE ? e->orig + (addr - e->new_addr) : e->orig;
    }
    if (kind)
        *kind = -1;
    return addr;
}

uint64_t addrmap_forward(const addrmap *m, uint64_t orig)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].kind == AM_CODE && orig >= m->e[i].orig && orig - m->e[i].orig < m->e[i].len)
            return m->e[i].new_addr + (orig - m->e[i].orig);
    return 0;
}

/* ---- the note descriptor ----------------------------------------------
 * u32 version, u32 count, u32 build-id length, u32 reserved,
 * build-id bytes padded to 8, then count entries of
 * { u64 new, u64 orig, u32 len, u32 kind }, all little-endian. */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

#define ENTRY_SIZE 24

uint8_t *addrmap_encode(const addrmap *m, size_t *size)
{
    size_t idlen = (m->build_id_len + 7) & ~(size_t)7;
    size_t n = 16 + idlen + m->n * ENTRY_SIZE;
    uint8_t *b = calloc(1, n);
    if (!b)
        return NULL;
    put32(b, ADDRMAP_VERSION);
    put32(b + 4, (uint32_t)m->n);
    put32(b + 8, (uint32_t)m->build_id_len);
    memcpy(b + 16, m->build_id, m->build_id_len);
    uint8_t *p = b + 16 + idlen;
    for (size_t i = 0; i < m->n; i++, p += ENTRY_SIZE) {
        put64(p, m->e[i].new_addr);
        put64(p + 8, m->e[i].orig);
        put32(p + 16, m->e[i].len);
        put32(p + 20, m->e[i].kind);
    }
    *size = n;
    return b;
}

bool addrmap_decode(const uint8_t *d, size_t size, addrmap *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (size < 16) {
        snprintf(err, errlen, "address map: %zu bytes, shorter than its header", size);
        return false;
    }
    uint32_t ver = get32(d), n = get32(d + 4), idlen = get32(d + 8);
    if (ver != ADDRMAP_VERSION) {
        snprintf(err, errlen, "address map: version %u, expected %d", ver, ADDRMAP_VERSION);
        return false;
    }
    size_t pad = ((size_t)idlen + 7) & ~(size_t)7;
    if (idlen > sizeof m->build_id || 16 + pad > size ||
        (size - 16 - pad) / ENTRY_SIZE < n || (size - 16 - pad) % ENTRY_SIZE) {
        snprintf(err, errlen, "address map: %u entries do not fit its %zu bytes", n, size);
        return false;
    }
    memcpy(m->build_id, d + 16, idlen);
    m->build_id_len = idlen;
    m->e = malloc((n ? n : 1) * sizeof *m->e);
    if (!m->e) {
        snprintf(err, errlen, "address map: out of memory");
        return false;
    }
    m->cap = n;
    const uint8_t *p = d + 16 + pad;
    for (uint32_t i = 0; i < n; i++, p += ENTRY_SIZE) {
        addrmap_entry e = { get64(p), get64(p + 8), get32(p + 16), get32(p + 20) };
        if (e.kind > AM_INSTR || !e.len || e.new_addr + e.len < e.new_addr ||
            (i && m->e[i - 1].new_addr + m->e[i - 1].len > e.new_addr)) {
            snprintf(err, errlen, "address map: entry %u (0x%llx) is out of order or invalid",
                     i, (unsigned long long)e.new_addr);
            addrmap_free(m);
            return false;
        }
        m->e[m->n++] = e;
    }
    return true;
}

bool addrmap_read(const image *img, addrmap *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const image_section *s = image_section_by_name(img, ADDRMAP_SECTION);
    if (!s || !s->data) {
        snprintf(err, errlen, "%s: no address map (section %s): not a rewritten image",
                 img->path, ADDRMAP_SECTION);
        return false;
    }
    /* One ELF note: namesz, descsz, type, name padded to 4, descriptor. */
    if (s->size < 12) {
        snprintf(err, errlen, "%s: %s is too short", img->path, ADDRMAP_SECTION);
        return false;
    }
    uint32_t namesz = get32(s->data), descsz = get32(s->data + 4), type = get32(s->data + 8);
    size_t off = 12 + (((size_t)namesz + 3) & ~(size_t)3);
    if (namesz != sizeof ADDRMAP_NOTE_NAME || type != ADDRMAP_NOTE_TYPE || off > s->size ||
        memcmp(s->data + 12, ADDRMAP_NOTE_NAME, namesz) || descsz > s->size - off) {
        snprintf(err, errlen, "%s: %s is not a cpo address-map note", img->path, ADDRMAP_SECTION);
        return false;
    }
    char e2[200];
    if (!addrmap_decode(s->data + off, descsz, m, e2, sizeof e2)) {
        snprintf(err, errlen, "%s: %s", img->path, e2);
        return false;
    }
    return true;
}
