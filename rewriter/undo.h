/*
 * rewriter/undo.h: the undo record a rewritten image carries, from which
 * its original file is recovered byte for byte (docs/address-map.md,
 * "The undo record").
 *
 * A user who redeployed the optimized binary may no longer have the
 * original; every round of optimization is a rewrite of the original, so
 * optimize-image given a rewritten image recovers the original from it.
 */
#ifndef REWRITER_UNDO_H
#define REWRITER_UNDO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"

#define UNDO_SECTION ".cpo.undo"
#define UNDO_VERSION 1

/* The record's bytes (malloc'd, *size; NULL when memory runs out) for an
 * original file orig of n bytes whose copy the rewriter patched in place
 * into patched (n bytes too): the pieces of orig that patched changed in
 * its loaded part (below aend) and in the sections that move (by orig's
 * own section headers), the bytes past aend outside those sections, the
 * ELF header and a checksum of the whole. */
uint8_t *undo_encode(const uint8_t *orig, const uint8_t *patched, size_t n, uint64_t aend,
                     size_t *size);

/* The original file of the rewritten image img, into *buf (malloc'd,
 * *size bytes), checked against the checksum the record keeps.  False with
 * a message naming img when it has no undo record, the record is damaged,
 * or what it rebuilds is not the original. */
bool undo_recover(const image *img, uint8_t **buf, size_t *size, char *err, size_t errlen);

/* Does the rewriter move section i (its input header sh) after the new
 * segment?  Unloaded sections with contents that lie past the loaded part
 * (aend), except the section names, which are written anew.  Both the
 * writer and undo_recover decide by this. */
bool undo_section_moves(const void *sh, size_t i, uint64_t aend, size_t shstrndx);

#endif
