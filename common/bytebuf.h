/*
 * common/bytebuf.h: a byte buffer that grows as it is written, with
 * LEB128 numbers (unwind tables, stack profiles).  A failed allocation
 * sets oom and makes every later write a no-op, so a writer checks once
 * at the end.
 */
#ifndef COMMON_BYTEBUF_H
#define COMMON_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bytebuf {
    uint8_t *b;
    size_t n, cap;
    bool oom;
} bytebuf;

void bytebuf_put(bytebuf *o, const void *p, size_t n);
void bytebuf_uleb(bytebuf *o, uint64_t v);
void bytebuf_sleb(bytebuf *o, int64_t v);

#endif
