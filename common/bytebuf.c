/*
 * common/bytebuf.c: the growing byte buffer (bytebuf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/bytebuf.h"

void bytebuf_put(bytebuf *o, const void *p, size_t n)
{
    if (o->oom || !n)
        return;
    if (o->n + n > o->cap) {
        size_t cap = (o->cap + n) * 2;
        uint8_t *b = realloc(o->b, cap);
        if (!b) {
            o->oom = true;
            return;
        }
        o->b = b;
        o->cap = cap;
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

void bytebuf_uleb(bytebuf *o, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n] = v & 0x7f;
        v >>= 7;
        t[n++] |= v ? 0x80 : 0;
    } while (v);
    bytebuf_put(o, t, n);
}

void bytebuf_sleb(bytebuf *o, int64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    for (;;) {
        uint8_t b = v & 0x7f;
        v >>= 7;    /* arithmetic on every compiler we build with */
        bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
        t[n++] = (uint8_t)(b | (done ? 0 : 0x80));
        if (done)
            break;
    }
    bytebuf_put(o, t, n);
}
