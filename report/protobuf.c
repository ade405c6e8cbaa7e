/*
 * estimator/protobuf.c: the protocol-buffers wire format, writing only
 * (report/protobuf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "report/protobuf.h"

static bool reserve(pb_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (b->len + more <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *nd = realloc(b->data, cap);
    if (!nd) {
        b->failed = true;
        return false;
    }
    b->data = nd;
    b->cap = cap;
    return true;
}

static void put(pb_buf *b, const void *p, size_t n)
{
    if (n && reserve(b, n)) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

void pb_varint(pb_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    put(b, tmp, n);
}

void pb_key(pb_buf *b, unsigned field, unsigned wire)
{
    pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(pb_buf *b, unsigned field, uint64_t v)
{
    pb_key(b, field, PB_VARINT);
    pb_varint(b, v);
}

void pb_bytes(pb_buf *b, unsigned field, const void *p, size_t n)
{
    pb_key(b, field, PB_LEN);
    pb_varint(b, n);
    put(b, p, n);
}

void pb_string(pb_buf *b, unsigned field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

void pb_message(pb_buf *b, unsigned field, const pb_buf *sub)
{
    if (sub->failed)
        b->failed = true;
    pb_bytes(b, field, sub->data, sub->len);
}

void pb_packed(pb_buf *b, unsigned field, const uint64_t *v, size_t n)
{
    pb_buf tmp = { 0 };
    for (size_t i = 0; i < n; i++)
        pb_varint(&tmp, v[i]);
    pb_message(b, field, &tmp);
    pb_free(&tmp);
}

void pb_reset(pb_buf *b)
{
    b->len = 0;
    b->failed = false;
}

void pb_free(pb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
