/*
 * common/leb128.h: reading DWARF's LEB128 numbers (unwind tables, LSDAs).
 *
 * Both readers stop at the end of the buffer and refuse an encoding longer
 * than a 64-bit value needs (ten bytes): a corrupt table must not send a
 * reader scanning on, nor wrap a value silently.
 */
#ifndef COMMON_LEB128_H
#define COMMON_LEB128_H

#include <stdbool.h>
#include <stdint.h>

#define LEB128_MAX_BYTES 10

/* The unsigned number at *p (before end); *p moves past it.  False when it
 * runs past end or over ten bytes. */
static inline bool leb128_read_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < LEB128_MAX_BYTES && *p < end; i++) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* The signed number at *p, likewise. */
static inline bool leb128_read_s(const uint8_t **p, const uint8_t *end, int64_t *v)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < LEB128_MAX_BYTES && *p < end; i++) {
        uint8_t b = *(*p)++;
        unsigned shift = 7 * i;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (shift + 7 < 64 && (b & 0x40))
                r |= ~(uint64_t)0 << (shift + 7);
            *v = (int64_t)r;
            return true;
        }
    }
    return false;
}

#endif
