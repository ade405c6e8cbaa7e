/*
 * rewriter/ehframe.h: a parsed .eh_frame section (rewriter/ehframe.c), for
 * the rewriter and for checking a rewritten image against its original.
 */
#ifndef REWRITER_EHFRAME_H
#define REWRITER_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rewriter/cfi.h"

enum {
    PE_ABS = 0x00, PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
    PE_SLEB = 0x09, PE_S2 = 0x0a, PE_S4 = 0x0b, PE_S8 = 0x0c,
    PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff
};

typedef struct eh_cie {
    size_t off, size;            /* the whole record in the old section */
    cfi_cie_info ci;
    bool z, sig;
    uint8_t lsda_enc;            /* PE_OMIT when no 'L' */
    uint8_t pers_enc;            /* PE_OMIT when no 'P' */
    size_t pers_off;             /* offset of the personality pointer */
    size_t init_off, init_len;   /* initial instructions */
    cfi_row init;                /* the row they produce */
    uint64_t new_addr;
} eh_cie;

typedef struct eh_fde {
    size_t off, size;
    uint32_t cie;
    uint64_t begin, range;
    size_t aug_off, aug_len;     /* augmentation data */
    size_t lsda_off;             /* offset of the LSDA pointer, 0 if none */
    uint64_t lsda;
    size_t prog_off, prog_len;
    bool bad;                    /* program not understood */
} eh_fde;

struct rw_eh {
    const uint8_t *d;            /* old section bytes */
    uint64_t addr;
    size_t size;
    size_t ncie, nfde;
    eh_cie *cie;
    eh_fde *fde;
};

/* Parse e->d[0..size) at address e->addr into e->cie / e->fde. */
bool rw_eh_parse(struct rw_eh *e, char *err, size_t errlen);
/* The rows of FDE i. */
bool rw_eh_rows(const struct rw_eh *e, size_t i, cfi_rows *rows, char *err, size_t errlen);
/* Free a parse made with calloc'd e. */
void rw_eh_release(struct rw_eh *e);

#endif
