/*
 * common/hash.h: FNV-1a, 64 bits.
 *
 * Used where a hash must be the same in every build and on every host
 * (profile keys, journal checksums, derived names), never where an attacker
 * chooses the input to make collisions matter.
 */
#ifndef COMMON_HASH_H
#define COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_INIT 0xcbf29ce484222325ull

/* Continues hash h over n bytes (start with FNV1A_INIT). */
static inline uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Continues hash h over a NUL-terminated string, without the NUL. */
static inline uint64_t fnv1a_str(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

#endif
