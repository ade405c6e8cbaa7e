/*
 * image/cfi.h: DWARF call-frame programs as tables of rows.
 *
 * An FDE's program says, address by address, where the caller's frame (the
 * CFA) is and where each register was saved.  When blocks move, the program
 * has to be written anew for the new order (rewriter/cfi.h), and a stack
 * walk at a sample needs the row in force at one address: both run the
 * program into a list of rows, one per address where something changes.
 * Expression rules are not handled: the rewriter leaves their procedures in
 * place and a stack walk stops there.
 */
#ifndef IMAGE_CFI_H
#define IMAGE_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/leb128.h"

#define CFI_NREGS 80             /* Alpha: 0-31 integer, 32-63 FP, 64.. */

typedef enum {
    CFI_UNSPEC = 0, CFI_UNDEF, CFI_SAME, CFI_OFFSET, CFI_VALOFF, CFI_REG
} cfi_rule_kind;

typedef struct cfi_rule {
    uint8_t kind;
    int64_t val;                 /* offset from the CFA, or a register */
} cfi_rule;

typedef struct cfi_row {
    uint64_t loc;                /* first address the row holds for */
    uint32_t cfa_reg;
    int64_t  cfa_off;
    uint64_t args_size;          /* DW_CFA_GNU_args_size */
    cfi_rule r[CFI_NREGS];
} cfi_row;

typedef struct cfi_cie_info {
    uint64_t code_align;
    int64_t  data_align;
    uint8_t  fde_enc;            /* pointer encoding for DW_CFA_set_loc */
} cfi_cie_info;

typedef struct cfi_rows {
    size_t n, cap;
    cfi_row *row;                /* by increasing loc */
} cfi_rows;

/* Run a program from `init` starting at loc.  Appends rows to out (the row
 * in force at the start first).  Returns false with a message on an
 * unsupported or malformed instruction.  `cur` returns the final row. */
bool cfi_run(const uint8_t *prog, size_t len, const cfi_cie_info *ci, const cfi_row *init,
             uint64_t loc, uint64_t pc_addr_of_prog, cfi_row *cur, cfi_rows *out,
             char *err, size_t errlen);
/* The row in force at addr (rows must be non-empty and sorted). */
const cfi_row *cfi_at(const cfi_rows *rows, uint64_t addr);
bool cfi_same(const cfi_row *a, const cfi_row *b);
bool cfi_rule_eq(const cfi_rule *a, const cfi_rule *b);

/* LEB128 readers: common/leb128.h. */

#endif
