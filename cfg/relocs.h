/*
 * cfg/relocs.h: an image's static relocations (the ones --emit-relocs keeps),
 * flattened and sorted by the address they patch.
 *
 * The CFG builder reads them to find jump tables and code addresses taken in
 * data; the rewriter reads them to find every field that refers to code.
 * Dynamic relocations (.rela.dyn, .rela.plt) and relocations of sections
 * that are not loaded (debug info) are left out.
 */
#ifndef CFG_RELOCS_H
#define CFG_RELOCS_H

#include <stddef.h>
#include <stdint.h>

#include "image/image.h"

typedef struct cfg_rel {
    uint64_t where;          /* r_offset: the address patched */
    uint64_t target;         /* what the field refers to (see below) */
    int64_t  addend;
    uint32_t type;           /* R_ALPHA_* */
    uint32_t sym;
    bool     secsym;         /* against a section symbol */
} cfg_rel;

/* `target` starts as S + A.  With --emit-relocs, Alpha's ld leaves the
 * addend of a relocation against a section symbol relative to the *input*
 * section, so S + A is wrong for those.  cfg_build therefore recomputes
 * every target from the field the linker filled in (cfg/targets.c): the
 * stored pointer, GP + offset, the branch displacement, the GOT slot. */

typedef struct cfg_relocs {
    size_t n;
    cfg_rel *r;              /* sorted by where; same-address order kept */
} cfg_relocs;

/* Collect and sort; false only when out of memory. */
bool cfg_relocs_build(const image *img, cfg_relocs *out);
void cfg_relocs_free(cfg_relocs *rs);
/* Index of the first relocation at or after addr (n if none). */
size_t cfg_relocs_from(const cfg_relocs *rs, uint64_t addr);
/* The first relocation of that type at addr, or NULL. */
const cfg_rel *cfg_reloc_find(const cfg_relocs *rs, uint64_t addr, uint32_t type);

#endif
