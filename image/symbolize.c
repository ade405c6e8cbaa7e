/*
 * image/symbolize.c: "name+0x1c" labels exactly as objdump -d prints them
 * after a branch target.
 *
 * objdump (binutils 2.40, objdump.c) takes .symtab, or .dynsym when .symtab
 * is empty; drops unnamed, undefined and common symbols and section and
 * file symbols (except sections named .plt* or .got*); sorts the rest by
 * value and, at one value, by a fixed preference (below).  For a target it
 * takes the group of symbols with the greatest value not above it (or the
 * lowest group when none is below), preferring a symbol of the section being
 * disassembled.  When the file has static relocations (our --emit-relocs
 * images do) and the target lies inside the section being disassembled, it
 * insists on a symbol of that section, searching backwards and then
 * forwards.  We reproduce those rules; the test compares with objdump.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/internal.h"

static bool significant(const char *n)
{
    return !strncmp(n, ".plt", 4) || !strncmp(n, ".got", 4);
}

static bool compiled_marker(const char *n)
{
    return strstr(n, "gnu_compiled") || strstr(n, "gcc2_compiled");
}

static bool file_like(const image_symbol *s)
{
    size_t l = strlen(s->name);
    return s->type == STT_FILE || (l > 2 && s->name[l - 2] == '.' &&
                                   (s->name[l - 1] == 'o' || s->name[l - 1] == 'a'));
}

/* objdump's order at one value, each rule a tie-break for the previous:
 * compiler markers last, file-like names last, debugging (section, file)
 * last, section symbols last, functions first, objects first, locals last,
 * globals first, larger size first, names starting with '.' last, name. */
static int cmp_label(const void *pa, const void *pb)
{
    const img_label *la = pa, *lb = pb;
    if (la->value != lb->value)
        return la->value < lb->value ? -1 : 1;
    const image_symbol *a = la->sym, *b = lb->sym;
    int d;
#define PREFER_FALSE(expr_a, expr_b) \
    if ((d = (int)!!(expr_a) - (int)!!(expr_b)) != 0) return d
    PREFER_FALSE(compiled_marker(a->name), compiled_marker(b->name));
    PREFER_FALSE(file_like(a), file_like(b));
    PREFER_FALSE(a->type == STT_SECTION || a->type == STT_FILE, b->type == STT_SECTION || b->type == STT_FILE);
    PREFER_FALSE(a->type == STT_SECTION, b->type == STT_SECTION);
    PREFER_FALSE(a->type != STT_FUNC, b->type != STT_FUNC);
    PREFER_FALSE(a->type != STT_OBJECT && a->type != STT_COMMON, b->type != STT_OBJECT && b->type != STT_COMMON);
    PREFER_FALSE(a->bind == STB_LOCAL, b->bind == STB_LOCAL);
    PREFER_FALSE(a->bind != STB_GLOBAL, b->bind != STB_GLOBAL);
#undef PREFER_FALSE
    uint64_t as = a->type == STT_SECTION ? 0 : a->size, bs = b->type == STT_SECTION ? 0 : b->size;
    if (as != bs)
        return as > bs ? -1 : 1;
    if ((a->name[0] == '.') != (b->name[0] == '.'))
        return a->name[0] == '.' ? 1 : -1;
    d = strcmp(a->name, b->name);
    if (d)
        return d;
    return a < b ? -1 : a > b;
}

bool img_build_labels(image *img, image_error *err)
{
    struct image_private *pv = img->priv;
    size_t lo = 0, hi = pv->symtab_count;
    if (hi <= 1)
        lo = hi, hi = img->nsymbols;
    pv->labels = malloc((hi - lo + 1) * sizeof *pv->labels);
    if (!pv->labels)
        return img_fail(err, IMG_ENOMEM, img->path, "out of memory");
    size_t n = 0;
    for (size_t i = lo + 1; i < hi; i++) {    /* entry 0 of a table is null */
        const image_symbol *s = &img->symbols[i];
        if (!s->name[0] || s->shndx == SHN_UNDEF || s->shndx == SHN_COMMON)
            continue;
        if ((s->type == STT_SECTION || s->type == STT_FILE) && !significant(s->name))
            continue;
        pv->labels[n++] = (img_label){ s->value, s };
    }
    qsort(pv->labels, n, sizeof *pv->labels, cmp_label);
    pv->nlabels = n;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *r = &img->relsecs[i];
        uint32_t link = img->sections[r->index].link;
        if (!r->dynamic && link < img->nsections && img->sections[link].type == SHT_SYMTAB &&
            r->target && r->target < img->nsections &&
            img->sections[r->target].type != SHT_REL && img->sections[r->target].type != SHT_RELA)
            pv->static_relocs = true;
    }
    return true;
}

static bool in_sec(const img_label *l, const image_section *sec)
{
    return sec && l->sym->shndx == sec->index;
}

/* objdump's find_symbol_for_address. */
static const img_label *find_label(const image *img, uint64_t addr, const image_section *sec)
{
    const struct image_private *pv = img->priv;
    const img_label *L = pv->labels;
    size_t n = pv->nlabels;
    if (!n)
        return NULL;
    size_t lo = 0, hi = n;          /* first label above addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L[mid].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t place = lo ? lo - 1 : 0;
    while (place > 0 && L[place - 1].value == L[place].value)
        place--;
    size_t end = place;
    for (; end < n && L[end].value == L[place].value; end++)
        if (in_sec(&L[end], sec))
            return &L[end];
    bool want = pv->static_relocs && sec && addr >= sec->addr && addr - sec->addr < sec->size;
    if (!want)
        return &L[place];
    size_t found = SIZE_MAX;
    for (size_t i = end; i-- > 0;) {
        if (!in_sec(&L[i], sec))
            continue;
        if (found != SIZE_MAX && L[i].value != L[found].value)
            break;
        found = i;
    }
    if (found != SIZE_MAX)
        return &L[found];
    for (size_t i = place + 1; i < n; i++)
        if (in_sec(&L[i], sec))
            return &L[i];
    return NULL;
}

bool image_symbolize_from(const image *img, uint64_t addr, const image_section *from,
                          char *buf, size_t size)
{
    const img_label *l = find_label(img, addr, from);
    if (!l || !size)
        return false;
    int w;
    if (l->value == addr)
        w = snprintf(buf, size, "%s", l->sym->name);
    else if (l->value > addr)
        w = snprintf(buf, size, "%s-0x%" PRIx64, l->sym->name, l->value - addr);
    else
        w = snprintf(buf, size, "%s+0x%" PRIx64, l->sym->name, addr - l->value);
    return w >= 0 && (size_t)w < size;
}

bool image_symbolize(const image *img, uint64_t addr, char *buf, size_t size)
{
    return image_symbolize_from(img, addr, image_section_at(img, addr), buf, size);
}
