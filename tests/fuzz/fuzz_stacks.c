/*
 * Fuzz target for the stack-profile reader (profdb/stacks_format.c): any bytes
 * either decode into stacks that obey every invariant and re-encode to the
 * same bytes, or fail with a message naming the input.  Each input is
 * also tried with both checksums recomputed, to reach the payload decoder.
 * Seeds: tests/fuzz/seeds/stacks-* (docs/profile-format.md "Stack
 * profiles").
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/le.h"

#include "profdb/stacks.h"

static void check(const uint8_t *data, size_t size)
{
    profdb_stacks s;
    profdb_error err;
    if (!profdb_stacks_decode(data, size, "fuzz", &s, &err)) {
        if (err.code == PROFDB_OK || strncmp(err.msg, "fuzz: ", 6))
            abort();
        return;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (!s.s[i].count || !s.s[i].n || s.s[i].n > PROFDB_STACK_MAX_FRAMES)
            abort();
        for (uint32_t j = 0; j < s.s[i].n; j++)
            if (s.s[i].f[j].image >= s.nimages)
                abort();
        total += s.s[i].count;
    }
    if (total != s.total || !s.nimages)
        abort();
    uint8_t *enc;
    size_t n;
    if (!profdb_stacks_encode(&s, &enc, &n, &err))
        abort();
    profdb_stacks q;
    if (!profdb_stacks_decode(enc, n, "again", &q, &err) || q.n != s.n || q.total != s.total ||
        q.nimages != s.nimages || strcmp(q.event, s.event) || strcmp(q.host, s.host))
        abort();
    for (size_t i = 0; i < s.n; i++)
        if (q.s[i].count != s.s[i].count || q.s[i].n != s.s[i].n || q.s[i].end != s.s[i].end ||
            memcmp(q.s[i].f, s.s[i].f, s.s[i].n * sizeof *s.s[i].f))
            abort();
    profdb_stacks_free(&q);
    free(enc);
    profdb_stacks_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    if (size < 80)
        return 0;
    uint32_t hlen = le_get32(data + 12);
    if (hlen < 80 || hlen > size)
        return 0;
    uint8_t *b = malloc(size);
    memcpy(b, data, size);
    le_put32(b + 64, (uint32_t)crc32_z(0, b + hlen, size - hlen));
    le_put32(b + hlen - 4, (uint32_t)crc32_z(0, b, hlen - 4));
    check(b, size);
    free(b);
    return 0;
}
