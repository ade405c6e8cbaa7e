/*
 * common/hex.h: bytes as lowercase hex (build-ids, keys).
 */
#ifndef COMMON_HEX_H
#define COMMON_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The n bytes at b as 2n lowercase hex digits into buf (size bytes, NUL
 * included; cut short at a whole byte when it is too small).  Returns buf. */
static inline const char *hex_bytes(const uint8_t *b, size_t n, char *buf, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    size_t i = 0;
    for (; i < n && 2 * i + 2 < size; i++) {
        buf[2 * i] = digits[b[i] >> 4];
        buf[2 * i + 1] = digits[b[i] & 15];
    }
    if (size)
        buf[2 * i] = '\0';
    return buf;
}

#endif
