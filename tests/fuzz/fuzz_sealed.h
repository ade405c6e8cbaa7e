/*
 * tests/fuzz/fuzz_sealed.h: for targets whose files carry a 40-byte
 * header ending in an FNV-1a checksum of the rest (value and ProfileMe
 * profiles): check each input as it is, and again with its checksum
 * recomputed, which takes random bytes past the checksum test.
 */
#ifndef FUZZ_SEALED_H
#define FUZZ_SEALED_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/le.h"

static void fuzz_sealed(const uint8_t *data, size_t size, void (*check)(const uint8_t *data, size_t size))
{
    check(data, size);
    if (size < 40)
        return;
    uint8_t *b = malloc(size);
    if (!b)
        abort();
    memcpy(b, data, size);
    le_put64(b + 32, fnv1a(FNV1A_INIT, b + 40, size - 40));
    check(b, size);
    free(b);
}

#endif
