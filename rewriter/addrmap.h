/*
 * rewriter/addrmap.h: the address map a rewritten image carries, from new
 * code addresses back to the original ones (docs/address-map.md).
 */
#ifndef REWRITER_ADDRMAP_H
#define REWRITER_ADDRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"

#define ADDRMAP_SECTION ".note.cpo.addrmap"
#define ADDRMAP_NOTE_NAME "cpo"
#define ADDRMAP_NOTE_TYPE 1
#define ADDRMAP_VERSION 1

typedef enum {
    AM_CODE = 0,     /* [new, new+len) is [orig, orig+len) moved */
    AM_BRANCH = 1,   /* a branch the rewriter added: all of it is orig */
    AM_PAD = 2,      /* alignment padding: all of it is orig */
    AM_INSTR = 3     /* code an instrumenter inserted at orig: all of it is orig */
} addrmap_kind;

typedef struct addrmap_entry {
    uint64_t new_addr, orig;
    uint32_t len;    /* bytes */
    uint32_t kind;   /* addrmap_kind */
} addrmap_entry;

typedef struct addrmap {
    size_t n, cap;
    addrmap_entry *e;             /* sorted by new_addr, not overlapping */
    uint8_t build_id[IMAGE_MAX_BUILD_ID];   /* the original image's build-id */
    size_t build_id_len;
} addrmap;

/* Append, merging with the previous entry when it continues it. */
bool addrmap_add(addrmap *m, uint64_t new_addr, uint64_t orig, uint32_t len, unsigned kind);
void addrmap_free(addrmap *m);
/* Sort by new address (after adding out of order). */
void addrmap_sort(addrmap *m);

/* The original address of addr.  Addresses the map does not cover were not
 * moved and map to themselves (*kind = -1 then). */
uint64_t addrmap_lookup(const addrmap *m, uint64_t addr, int *kind);
/* The new address an original instruction address now has, or 0 when the
 * map does not move it (linear search over the entries: for tools). */
uint64_t addrmap_forward(const addrmap *m, uint64_t orig);

/* The note's descriptor bytes (malloc'd) and back. */
uint8_t *addrmap_encode(const addrmap *m, size_t *size);
bool addrmap_decode(const uint8_t *desc, size_t size, addrmap *m, char *err, size_t errlen);
/* Find and decode the map of a rewritten image.  Returns false with a
 * message when there is none or it is damaged. */
bool addrmap_read(const image *img, addrmap *m, char *err, size_t errlen);

#endif
