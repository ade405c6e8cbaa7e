/*
 * report/protobuf.h: just enough of the protocol-buffers wire format to
 * write pprof profiles: varints and length-delimited fields into a
 * growing buffer.  A nested message is built in a buffer of its own and
 * appended whole, which costs a copy but keeps the encoder trivially
 * correct (lengths are known before they are written).
 */
#ifndef REPORT_PROTOBUF_H
#define REPORT_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_LEN = 2 };

typedef struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;       /* an allocation failed: the contents are incomplete */
} pb_buf;

void pb_varint(pb_buf *b, uint64_t v);
void pb_key(pb_buf *b, unsigned field, unsigned wire);
/* A varint field (uint64, int64 as two's complement, bool). */
void pb_uint(pb_buf *b, unsigned field, uint64_t v);
void pb_bytes(pb_buf *b, unsigned field, const void *p, size_t n);
void pb_string(pb_buf *b, unsigned field, const char *s);
void pb_message(pb_buf *b, unsigned field, const pb_buf *sub);
/* A packed repeated varint field. */
void pb_packed(pb_buf *b, unsigned field, const uint64_t *v, size_t n);
void pb_reset(pb_buf *b);   /* empty, keeping the memory */
void pb_free(pb_buf *b);

#endif
