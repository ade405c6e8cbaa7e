/*
 * image/symbols.c: .symtab and .dynsym, and the lookups built on them.
 *
 * img->symbols holds every entry of both tables, null entries included, so
 * that ELF symbol index i of a table is img->symbols[base + i]: relocations
 * resolve without a second map.  Names point into the image's copy of the
 * file; a section symbol (empty name) takes its section's name, as readelf
 * prints it.
 */
#include <elf.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/internal.h"

/* The string table a symbol table links to, checked whole once so that any
 * in-range offset yields a terminated string. */
static bool check_strtab(const image *img, const image_section *symsec, image_error *err)
{
    if (symsec->link == 0 || symsec->link >= img->nsections)
        return img_fail(err, IMG_ECORRUPT, img->path, "symbol table %s: string table link %u out of range",
                        symsec->name, symsec->link);
    const image_section *st = &img->sections[symsec->link];
    if (st->type != SHT_STRTAB || !st->data)
        return img_fail(err, IMG_ECORRUPT, img->path, "symbol table %s: link %u (%s) is not a string table",
                        symsec->name, symsec->link, st->name);
    if (st->size && st->data[st->size - 1] != '\0')
        return img_fail(err, IMG_ECORRUPT, img->path, "string table %s is not NUL-terminated", st->name);
    return true;
}

/* The section of a defined .dynsym symbol.  strip renumbers the sections
 * it keeps but leaves the indices in the loaded .dynsym, which tell the
 * dynamic linker only defined or not; so where the index names a section
 * that does not hold the address, the section at the address is the one,
 * and with none there (a bound like _end past the last) SHN_ABS. */
static uint16_t dynsym_section(const image *img, const GElf_Sym *es)
{
    uint16_t i = es->st_shndx;
    if (i == SHN_UNDEF || i >= SHN_LORESERVE)
        return i;
    if (i < img->nsections) {
        const image_section *s = &img->sections[i];
        if (es->st_value >= s->addr && es->st_value - s->addr <= s->size && (s->flags & SHF_ALLOC))
            return i;
    }
    const image_section *at = image_section_at(img, es->st_value);
    return at ? (uint16_t)(at - img->sections) : SHN_ABS;
}

bool img_read_symbols(image *img, Elf *elf, image_error *err)
{
    struct image_private *pv = img->priv;
    size_t tabs[2] = { 0, 0 }, total = 0;   /* section index of .symtab, .dynsym */
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if (s->type != SHT_SYMTAB && s->type != SHT_DYNSYM)
            continue;
        size_t *slot = &tabs[s->type == SHT_DYNSYM];
        if (*slot)
            return img_fail(err, IMG_ECORRUPT, img->path, "more than one %s section (%zu and %zu)",
                            s->type == SHT_SYMTAB ? "SHT_SYMTAB" : "SHT_DYNSYM", *slot, i);
        if (s->entsize != sizeof(Elf64_Sym) || s->size % sizeof(Elf64_Sym))
            return img_fail(err, IMG_ECORRUPT, img->path, "symbol table %s: entry size %llu, size %llu (entries are %zu bytes)",
                            s->name, (unsigned long long)s->entsize, (unsigned long long)s->size, sizeof(Elf64_Sym));
        if (!s->data)
            return img_fail(err, IMG_ECORRUPT, img->path, "symbol table %s has no contents", s->name);
        if (!check_strtab(img, s, err))
            return false;
        *slot = i;
        total += s->size / sizeof(Elf64_Sym);
    }
    pv->symbase = malloc(img->nsections * sizeof *pv->symbase);
    img->symbols = calloc(total ? total : 1, sizeof *img->symbols);
    if (!pv->symbase || !img->symbols)
        return img_fail(err, IMG_ENOMEM, img->path, "out of memory for %zu symbols", total);
    for (size_t i = 0; i < img->nsections; i++)
        pv->symbase[i] = SIZE_MAX;

    for (int t = 0; t < 2; t++) {
        if (!tabs[t])
            continue;
        const image_section *s = &img->sections[tabs[t]];
        const image_section *st = &img->sections[s->link];
        size_t n = s->size / sizeof(Elf64_Sym);
        Elf_Data *d = elf_getdata(elf_getscn(elf, tabs[t]), NULL);
        if (n && (!d || d->d_size < s->size))
            return img_fail(err, IMG_ECORRUPT, img->path, "symbol table %s: %s", s->name, elf_errmsg(-1));
        pv->symbase[tabs[t]] = img->nsymbols;
        if (t == 0)
            pv->symtab_count = n;
        for (size_t k = 0; k < n; k++) {
            GElf_Sym es;
            if (!gelf_getsym(d, k, &es))
                return img_fail(err, IMG_ECORRUPT, img->path, "symbol %zu of %s: %s", k, s->name, elf_errmsg(-1));
            image_symbol *y = &img->symbols[img->nsymbols++];
            if (es.st_name && es.st_name >= st->size)
                return img_fail(err, IMG_ECORRUPT, img->path, "symbol %zu of %s: name offset 0x%x outside %s (0x%llx bytes)",
                                k, s->name, es.st_name, st->name, (unsigned long long)st->size);
            if (t == 0 && es.st_shndx != SHN_UNDEF && es.st_shndx < SHN_LORESERVE && es.st_shndx >= img->nsections)
                return img_fail(err, IMG_ECORRUPT, img->path, "symbol %zu of %s: section index %u out of range (%zu sections)",
                                k, s->name, es.st_shndx, img->nsections);
            if (t == 1)
                es.st_shndx = dynsym_section(img, &es);
            y->name = st->size ? (const char *)st->data + es.st_name : "";
            y->value = es.st_value;
            y->size = es.st_size;
            y->type = GELF_ST_TYPE(es.st_info);
            y->bind = GELF_ST_BIND(es.st_info);
            y->other = es.st_other;
            y->shndx = es.st_shndx;
            y->dynamic = t == 1;
            if (y->type == STT_SECTION && !y->name[0] && img_sym_in_section(img, y))
                y->name = img->sections[y->shndx].name;
        }
    }
    return true;
}

/* ---- functions ----------------------------------------------------------- */

static int bind_rank(const image_symbol *s)
{
    switch (s->bind) {
    case STB_GLOBAL: case STB_GNU_UNIQUE: return 0;
    case STB_WEAK: return 1;
    default: return 2;
    }
}

/* Address order; at one address the symbol that should name it first. */
static int cmp_func(const void *a, const void *b)
{
    const image_symbol *x = *(const image_symbol *const *)a, *y = *(const image_symbol *const *)b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (bind_rank(x) != bind_rank(y))
        return bind_rank(x) - bind_rank(y);
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_name(const void *a, const void *b)
{
    const image_symbol *x = *(const image_symbol *const *)a, *y = *(const image_symbol *const *)b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    if (x->dynamic != y->dynamic)
        return x->dynamic - y->dynamic;
    if (bind_rank(x) != bind_rank(y))
        return bind_rank(x) - bind_rank(y);
    return x < y ? -1 : x > y;
}

static bool is_code_sym(const image *img, const image_symbol *s)
{
    return (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) && img_sym_in_section(img, s);
}

bool img_index_symbols(image *img, image_error *err)
{
    struct image_private *pv = img->priv;
    /* .symtab when it has anything beyond the null entry, else .dynsym. */
    size_t lo = 0, hi = pv->symtab_count;
    if (hi <= 1)
        lo = hi, hi = img->nsymbols;
    pv->funcs = malloc((hi - lo + 1) * sizeof *pv->funcs);
    pv->byname = malloc((img->nsymbols + 1) * sizeof *pv->byname);
    if (!pv->funcs || !pv->byname)
        return img_fail(err, IMG_ENOMEM, img->path, "out of memory");
    size_t n = 0;
    for (size_t i = lo; i < hi; i++)
        if (is_code_sym(img, &img->symbols[i]))
            pv->funcs[n++] = &img->symbols[i];
    qsort(pv->funcs, n, sizeof *pv->funcs, cmp_func);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || pv->funcs[m - 1]->value != pv->funcs[i]->value)
            pv->funcs[m++] = pv->funcs[i];
    pv->nfuncs = m;

    n = 0;
    for (size_t i = 0; i < img->nsymbols; i++) {
        const image_symbol *s = &img->symbols[i];
        if (s->shndx != SHN_UNDEF && s->name[0] && s->type != STT_SECTION && s->type != STT_FILE)
            pv->byname[n++] = s;
    }
    qsort(pv->byname, n, sizeof *pv->byname, cmp_name);
    pv->nbyname = n;
    return img_build_labels(img, err);
}

size_t image_functions(const image *img, const image_symbol *const **out)
{
    *out = img->priv->funcs;
    return img->priv->nfuncs;
}

const image_symbol *image_function_at(const image *img, uint64_t addr)
{
    const struct image_private *pv = img->priv;
    size_t lo = 0, hi = pv->nfuncs;
    while (lo < hi) {               /* first function above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (pv->funcs[mid]->value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const image_symbol *f = pv->funcs[lo - 1];
    if (f->size ? addr - f->value < f->size : image_section_at(img, addr) == &img->sections[f->shndx])
        return f;
    /* A sized symbol may sit inside a larger one (an alternate entry
     * point); look a little further back for one that covers addr. */
    for (size_t i = lo - 1, k = 0; i-- > 0 && k < 16; k++) {
        const image_symbol *g = pv->funcs[i];
        if (g->size && addr - g->value < g->size)
            return g;
    }
    return NULL;
}

const image_symbol *image_symbol_by_name(const image *img, const char *name)
{
    const struct image_private *pv = img->priv;
    size_t lo = 0, hi = pv->nbyname;
    while (lo < hi) {               /* first entry not below name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(pv->byname[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < pv->nbyname && !strcmp(pv->byname[lo]->name, name))
        return pv->byname[lo];
    /* ld writes "name@VERSION" into .symtab for versioned symbols. */
    size_t len = strlen(name);
    for (size_t i = lo; i < pv->nbyname && !strncmp(pv->byname[i]->name, name, len); i++)
        if (pv->byname[i]->name[len] == '@')
            return pv->byname[i];
    return NULL;
}
