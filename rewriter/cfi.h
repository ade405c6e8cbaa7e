/*
 * rewriter/cfi.h: writing DWARF call-frame programs.  When blocks move, an
 * FDE's rows (image/cfi.h) are looked up for each moved instruction and a
 * program producing those rows at the new addresses is emitted.
 */
#ifndef REWRITER_CFI_H
#define REWRITER_CFI_H

#include "common/bytebuf.h"
#include "image/cfi.h"

/* An output program under construction. */
typedef bytebuf cfi_out;

/* Emit what turns row `from` into row `to` (init gives the CIE's rules,
 * for DW_CFA_restore).  Returns false when `to` cannot be expressed. */
bool cfi_emit_delta(cfi_out *o, const cfi_cie_info *ci, const cfi_row *init,
                    const cfi_row *from, const cfi_row *to);
/* Advance by delta bytes; false when delta is not a multiple of the code
 * alignment factor or too far for one advance. */
bool cfi_emit_advance(cfi_out *o, const cfi_cie_info *ci, uint64_t delta);
static inline void cfi_put(cfi_out *o, const void *p, size_t n) { bytebuf_put(o, p, n); }
static inline void cfi_uleb(cfi_out *o, uint64_t v) { bytebuf_uleb(o, v); }
static inline void cfi_sleb(cfi_out *o, int64_t v) { bytebuf_sleb(o, v); }

#endif
