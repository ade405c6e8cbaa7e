/*
 * Fuzz target for the LSDA reader (rewriter/lsda.c): the input, after an
 * 8-byte procedure offset, is the section holding one LSDA.  It is either
 * rejected with a message naming its address or read into call sites in
 * order; the sites written again with lsda_write (as the rewriter writes a
 * piece of moved code's table) must read back the same.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/lsda.h"
#include "tests/fuzz/fuzz_image.h"

#define SEC_ADDR 0x120020000ULL

/* An image with one allocated section, enough for lsda_read. */
static void fake(image *img, image_section sec[2], const uint8_t *d, size_t n, uint64_t addr)
{
    fuzz_image(img, sec, ".gcc_except_table", SHT_PROGBITS, d, n);
    sec[1].flags = SHF_ALLOC;
    sec[1].addr = addr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9)
        return 0;
    uint64_t func = 0;
    memcpy(&func, data, 8);
    func = SEC_ADDR - 0x10000 + (func & 0xffff);
    data += 8, size -= 8;

    image img;
    image_section sec[2];
    fake(&img, sec, data, size, SEC_ADDR);
    lsda l;
    char err[256];
    if (!lsda_read(&img, SEC_ADDR, func, &l, err, sizeof err)) {
        if (!strstr(err, "LSDA at 0x") && strcmp(err, "out of memory"))
            abort();
        if (l.sites || l.nsites)
            abort();
        return 0;
    }
    if (l.actions < data || l.actions + l.actions_len > data + size)
        abort();
    for (size_t i = 0; i < l.nsites; i++) {
        const lsda_site *s = &l.sites[i];
        if (i && s->start < l.sites[i - 1].end)
            abort();
        if (s->start < s->end && lsda_at(&l, s->start) != s)
            abort();
    }
    lsda_at(&l, 0);
    lsda_at(&l, UINT64_MAX);

    /* Written as the rewriter writes it (sites relative to the first, pads
     * absolute), it reads back the same.  Pads are relative to LPStart 0, so
     * a pad at address 0 would read as none: the rewriter never has one. */
    bool writable = l.nsites && l.sites[0].start >= func;
    for (size_t i = 0; i < l.nsites && writable; i++)
        writable = l.sites[i].end >= l.sites[i].start;
    if (writable) {
        uint64_t start = l.sites[0].start;
        cfi_out o = { 0 };
        lsda_write(&o, start, l.sites, l.nsites, l.actions, l.actions_len);
        if (o.oom)
            abort();
        image img2;
        image_section sec2[2];
        fake(&img2, sec2, o.b, o.n, SEC_ADDR);
        lsda m;
        if (!lsda_read(&img2, SEC_ADDR, start, &m, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            abort();
        }
        if (m.nsites != l.nsites || m.actions_len != l.actions_len ||
            memcmp(m.actions, l.actions, l.actions_len))
            abort();
        for (size_t i = 0; i < l.nsites; i++)
            if (m.sites[i].start != l.sites[i].start || m.sites[i].end != l.sites[i].end ||
                m.sites[i].lp != l.sites[i].lp || m.sites[i].action != l.sites[i].action)
                abort();
        lsda_free(&m);
        free(o.b);
    }
    lsda_free(&l);
    return 0;
}
