/*
 * image/ehframe.h: a parsed .eh_frame section (image/ehframe.c), for the
 * rewriter, for checking a rewritten image against its original, and for
 * the machine's stack walks.
 */
#ifndef IMAGE_EHFRAME_H
#define IMAGE_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/cfi.h"

enum {
    PE_ABS = 0x00, PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
    PE_SLEB = 0x09, PE_S2 = 0x0a, PE_S4 = 0x0b, PE_S8 = 0x0c,
    PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff
};

typedef struct eh_cie {
    size_t off, size;            /* the whole record in the section */
    cfi_cie_info ci;
    uint32_t ra_reg;             /* the return address column, as read: may be out of range */
    bool z, sig;                 /* 'z' augmentation; 'S': a signal frame */
    uint8_t lsda_enc;            /* PE_OMIT when no 'L' */
    uint8_t pers_enc;            /* PE_OMIT when no 'P' */
    size_t pers_off;             /* offset of the personality pointer */
    size_t init_off, init_len;   /* initial instructions */
    cfi_row init;                /* the row they produce */
    uint64_t new_addr;           /* the rewriter's: where it was copied */
} eh_cie;

typedef struct eh_fde {
    size_t off, size;
    uint32_t cie;
    uint64_t begin, range;
    size_t aug_off, aug_len;     /* augmentation data */
    size_t lsda_off;             /* offset of the LSDA pointer, 0 if none */
    uint64_t lsda;
    size_t prog_off, prog_len;
    bool bad;                    /* the rewriter's: program not understood */
} eh_fde;

typedef struct eh_frame {
    const uint8_t *d;            /* section bytes */
    uint64_t addr;
    size_t size;
    size_t ncie, nfde;
    eh_cie *cie;
    eh_fde *fde;
} eh_frame;

/* Parse e->d[0..size) at address e->addr into e->cie / e->fde.  Errors
 * start with ".eh_frame: ". */
bool eh_frame_parse(eh_frame *e, char *err, size_t errlen);
/* The rows of FDE i. */
bool eh_frame_rows(const eh_frame *e, size_t i, cfi_rows *rows, char *err, size_t errlen);
/* Free a parse made with calloc'd e. */
void eh_frame_release(eh_frame *e);

/* Bytes of a pointer in encoding enc; 0 for the LEB forms. */
size_t eh_enc_size(uint8_t enc);
/* Read a pointer at section offset off; apply: add the field's address for
 * PC-relative forms.  False if the encoding is one we do not handle. */
bool eh_read_ptr(const eh_frame *e, size_t off, uint8_t enc, bool apply, uint64_t *v);

#endif
