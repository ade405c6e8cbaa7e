/*
 * cfg/relocs.c: the sorted table of static relocations.
 */
#include <elf.h>
#include <stdlib.h>

#include "cfg/relocs.h"

/* Sorting (where, sequence) pairs keeps relocations at one address in file
 * order, which qsort alone would not. */
struct keyed { cfg_rel r; size_t seq; };

static int by_where(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->r.where != y->r.where)
        return x->r.where < y->r.where ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

bool cfg_relocs_build(const image *img, cfg_relocs *out)
{
    size_t n = 0;
    out->n = 0;
    out->r = NULL;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *rs = &img->relsecs[i];
        if (rs->dynamic || rs->target >= img->nsections ||
            !(img->sections[rs->target].flags & SHF_ALLOC))
            continue;
        n += rs->count;
    }
    if (!n)
        return true;
    struct keyed *k = malloc(n * sizeof *k);
    if (!k)
        return false;
    size_t m = 0;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *rs = &img->relsecs[i];
        if (rs->dynamic || rs->target >= img->nsections ||
            !(img->sections[rs->target].flags & SHF_ALLOC))
            continue;
        /* .symtab's entries come first in img->symbols. */
        uint32_t link = rs->index < img->nsections ? img->sections[rs->index].link : 0;
        bool symtab = link && link < img->nsections && img->sections[link].type == SHT_SYMTAB;
        for (size_t j = 0; j < rs->count; j++, m++) {
            const image_reloc *r = &rs->relocs[j];
            bool sec = symtab && r->sym && r->sym < img->nsymbols &&
                       !img->symbols[r->sym].dynamic && img->symbols[r->sym].type == STT_SECTION;
            k[m].r = (cfg_rel){ r->offset, r->symvalue + (uint64_t)r->addend,
                                r->addend, r->type, r->sym, sec };
            k[m].seq = m;
        }
    }
    qsort(k, m, sizeof *k, by_where);
    out->r = malloc(m * sizeof *out->r);
    if (!out->r) {
        free(k);
        return false;
    }
    for (size_t i = 0; i < m; i++)
        out->r[i] = k[i].r;
    out->n = m;
    free(k);
    return true;
}

void cfg_relocs_free(cfg_relocs *rs)
{
    free(rs->r);
    rs->r = NULL;
    rs->n = 0;
}

size_t cfg_relocs_from(const cfg_relocs *rs, uint64_t addr)
{
    size_t lo = 0, hi = rs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->r[mid].where < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const cfg_rel *cfg_reloc_find(const cfg_relocs *rs, uint64_t addr, uint32_t type)
{
    for (size_t i = cfg_relocs_from(rs, addr); i < rs->n && rs->r[i].where == addr; i++)
        if (rs->r[i].type == type)
            return &rs->r[i];
    return NULL;
}
