/*
 * Fuzz target for the address-map decoder (rewriter/addrmap.c): any bytes,
 * read as the .note.cpo.addrmap section of a rewritten image, are either
 * rejected with a message naming the image or decoded into a sorted map that
 * encodes back to a descriptor decoding to the same map, and answers every
 * lookup from inside its entries.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/addrmap.h"
#include "tests/fuzz/fuzz_image.h"

static void check_lookups(const addrmap *m)
{
    for (size_t i = 0; i < m->n && i < 64; i++) {
        const addrmap_entry *e = &m->e[i];
        if (i && m->e[i - 1].new_addr + m->e[i - 1].len > e->new_addr)
            abort();    /* decoded maps are sorted and do not overlap */
        int kind;
        uint64_t o = addrmap_lookup(m, e->new_addr, &kind);
        if (kind != (int)e->kind || (e->kind == AM_CODE && o != e->orig))
            abort();
        o = addrmap_lookup(m, e->new_addr + e->len - 1, &kind);
        if (kind != (int)e->kind)
            abort();
        if (e->kind == AM_CODE && e->len >= 4 && !(e->orig & 3))
            addrmap_forward(m, e->orig);
    }
    int kind;
    addrmap_lookup(m, 0, &kind);
    addrmap_lookup(m, UINT64_MAX, &kind);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    image_section sec[2];
    image img;
    fuzz_image(&img, sec, ADDRMAP_SECTION, SHT_NOTE, data, size);

    addrmap m;
    char err[300];
    if (!addrmap_read(&img, &m, err, sizeof err)) {
        if (strncmp(err, "fuzz: ", 6))
            abort();    /* every error names the image */
        if (m.e || m.n)
            abort();    /* and leaves nothing behind */
        return 0;
    }
    check_lookups(&m);

    size_t n;
    uint8_t *desc = addrmap_encode(&m, &n);
    if (!desc)
        abort();
    addrmap again;
    if (!addrmap_decode(desc, n, &again, err, sizeof err))
        abort();
    if (again.n != m.n || again.build_id_len != m.build_id_len ||
        memcmp(again.build_id, m.build_id, m.build_id_len) ||
        (m.n && memcmp(again.e, m.e, m.n * sizeof *m.e)))
        abort();
    free(desc);
    addrmap_free(&again);
    addrmap_free(&m);
    return 0;
}
