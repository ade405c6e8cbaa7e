/*
 * Fuzz target for the .eh_frame reader and the call-frame interpreter
 * (image/ehframe.c, image/cfi.c): any bytes, read as an .eh_frame
 * section, are either rejected with a message or parsed into CIEs and FDEs
 * whose programs either fail with a message or run into rows.  The rows are
 * then written back as a program the way the rewriter writes moved code's
 * (rewriter/cfi.c: cfi_emit_delta, cfi_emit_advance), which must run again into the same
 * rules at every row's address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/ehframe.h"
#include "rewriter/cfi.h"

#define EH_ADDR 0x120010000ULL

/* Write rows as one program from the CIE's initial row, run it, compare. */
static void round_trip(const eh_cie *c, const eh_fde *f, const cfi_rows *rows)
{
    cfi_out o = { 0 };
    cfi_row cur = c->init;
    uint64_t loc = f->begin;
    for (size_t i = 0; i < rows->n; i++) {
        const cfi_row *want = &rows->row[i];
        if (want->loc < loc || (want->loc - loc) / c->ci.code_align > UINT32_MAX)
            goto out;       /* not a layout the rewriter writes */
        if (cfi_same(&cur, want))
            continue;
        if (!cfi_emit_advance(&o, &c->ci, want->loc - loc))
            goto out;       /* a row no advance can reach: refused */
        loc = want->loc;
        if (!cfi_emit_delta(&o, &c->ci, &c->init, &cur, want))
            goto out;       /* refused with a reason: fine */
        cur = *want;
    }
    if (o.oom)
        abort();
    cfi_rows again = { 0 };
    cfi_row run = c->init;
    char err[200];
    if (!cfi_run(o.b, o.n, &c->ci, &c->init, f->begin, 0, &run, &again, err, sizeof err))
        abort();            /* we cannot read what we wrote */
    for (size_t i = 0; i < rows->n; i++)
        if (!cfi_same(cfi_at(&again, rows->row[i].loc), &rows->row[i]))
            abort();
    free(again.row);
out:
    free(o.b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eh_frame e = { .d = data, .addr = EH_ADDR, .size = size };
    char err[256];
    if (!eh_frame_parse(&e, err, sizeof err)) {
        if (strncmp(err, ".eh_frame: ", 11))
            abort();        /* every error names the section */
        free(e.cie);
        free(e.fde);
        return 0;
    }
    cfi_rows rows = { 0 };
    for (size_t i = 0; i < e.nfde && i < 256; i++) {
        const eh_fde *f = &e.fde[i];
        if (f->prog_off + f->prog_len > size || f->cie >= e.ncie)
            abort();
        if (!eh_frame_rows(&e, i, &rows, err, sizeof err)) {
            if (!err[0])
                abort();
            continue;
        }
        if (!rows.n || rows.row[0].loc != f->begin)
            abort();
        for (size_t k = 1; k < rows.n; k++)
            if (rows.row[k].loc <= rows.row[k - 1].loc)
                abort();    /* cfi_at needs them sorted */
        cfi_at(&rows, f->begin + f->range / 2);
        round_trip(&e.cie[f->cie], f, &rows);
    }
    free(rows.row);
    free(e.cie);
    free(e.fde);
    return 0;
}
