/*
 * machine/cycles_front.c: the cycle model's front end (see cycles.h).
 *
 * Whether an instruction's fetch misses the ITB or the I-cache, and
 * whether a load or store misses the DTB, depends only on the
 * instructions and addresses that came before it on the same CPU, never
 * on when anything issued: these structures change on every access, in
 * access order, and nothing timed touches them (the S-cache behind the
 * I-cache does depend on time, through the write buffer, and stays with
 * the rest of the model).  So this part can run ahead of the rest, on
 * the executor's thread when the model has a thread of its own, and hand
 * over only what it found.  Run inline it gives exactly what the model
 * computed when it did these lookups itself.
 */
#include <stdlib.h>
#include <string.h>

#include "machine/cycles_int.h"

bool front_init(cycles_front *f, const ev5_params *p)
{
    memset(f, 0, sizeof *f);
    f->akey = CKEY(0, 0);
    f->page_shift = clog2(p->page_size);
    return ccache_init(&f->ic, p->icache.size, p->icache.line, p->icache.ways, false) &&
           ctlb_init(&f->itb, p->itb_entries) && ctlb_init(&f->dtb, p->dtb_entries);
}

void front_free(cycles_front *f)
{
    ccache_free(&f->ic);
    ctlb_free(&f->itb);
    ctlb_free(&f->dtb);
}

cycles_front *cycles_front_of(cycles_core *c) { return c->front; }

void cycles_front_asn(cycles_front *f, uint32_t asn) { f->akey = CKEY(asn, 0); }

/* A new I-cache line at pc: the ITB when the page changes too, then the
 * I-cache itself.  Returns FB_* bits. */
static unsigned new_line(cycles_front *f, uint64_t pc, uint64_t key)
{
    unsigned bits = 0;
    uint64_t pg = f->akey | pc >> f->page_shift;
    if (pg != f->ipage) {
        f->ipage = pg;
        if (!ctlb_access(&f->itb, pg))
            bits |= FB_ITB;
    }
    f->iline = key;
    bool hit;
    ccache_access(&f->ic, pc >> f->ic.line_shift, key, &hit);
    return hit ? bits : bits | FB_IMISS;
}

uint32_t cycles_front_block(cycles_front *f, const cycles_insn *ins, uint64_t pc, uint32_t n, const uint64_t *ea,
                            uint16_t *out)
{
    uint32_t nf = 0;
    const uint32_t ls = f->ic.line_shift, ps = f->page_shift;
    /* Per instruction, two tests that seldom pass: the line changed (a
     * taken branch, or a line's first instruction), a load or store left
     * the page the DTB last translated.  (ea[] is read for every
     * instruction, and used only for loads and stores.) */
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = pc + 4 * i, lk = f->akey | a >> ls, dk = f->akey | ea[i] >> ps;
        unsigned bits = 0;
        if (unlikely(lk != f->iline))
            bits = new_line(f, a, lk);
        if (unlikely(ins[i].mem & (dk != f->dtb.last)) && !ctlb_access(&f->dtb, dk))
            bits |= FB_DTB;
        if (unlikely(bits))
            out[nf++] = (uint16_t)(i << FB_SHIFT | bits);
    }
    return nf;
}
