/*
 * common/le.h: little-endian integers in byte buffers, whatever the host.
 *
 * Alpha images, profiles, address maps and the driver's shared memory are
 * little-endian by definition; reading them byte by byte keeps the code
 * free of alignment and host-order assumptions.
 */
#ifndef COMMON_LE_H
#define COMMON_LE_H

#include <stdint.h>

static inline uint16_t le_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le_get64(const uint8_t *p)
{
    return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

static inline void le_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void le_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
    le_put32(p, (uint32_t)v);
    le_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
