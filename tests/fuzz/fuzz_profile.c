/*
 * Fuzz target for the profile reader: any bytes either decode into a
 * profile that obeys every invariant and re-encodes to the same thing, or
 * fail with a message naming the input.
 *
 * Random bytes almost never carry valid checksums, which would keep the
 * fuzzer at the checksum tests; so each input is also tried with both
 * checksums recomputed, which takes it on to the payload decoder.
 * Seeds: tests/fuzz/seeds/profile-* (docs/profile-format.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/le.h"

#include "profdb/profdb.h"

static void check(const uint8_t *data, size_t size)
{
    profdb_profile p;
    profdb_error err;
    profdb_info h;
    bool hok = profdb_decode_header(data, size, "fuzz", &h, &err);
    if (hok)
        profdb_info_free(&h);
    else if (err.code == PROFDB_OK || strncmp(err.msg, "fuzz: ", 6))
        abort();
    if (!profdb_decode(data, size, "fuzz", &p, &err)) {
        if (err.code == PROFDB_OK || strncmp(err.msg, "fuzz: ", 6))
            abort();
        return;
    }
    if (!hok || p.n != p.info.nentries)
        abort();
    uint64_t total = 0;
    for (size_t i = 0; i < p.n; i++) {
        if (!p.e[i].count || (i && p.e[i].offset <= p.e[i - 1].offset))
            abort();
        total += p.e[i].count;
    }
    if (total != p.info.total || !p.info.npaths || !p.info.event[0] || !p.info.host[0])
        abort();
    uint8_t *enc;
    size_t n;
    if (!profdb_encode(&p, 1, &enc, &n, &err))
        abort();
    profdb_profile q;
    if (!profdb_decode(enc, n, "again", &q, &err) || q.n != p.n ||
        (p.n && memcmp(q.e, p.e, p.n * sizeof *p.e)) || q.info.period_sum != p.info.period_sum ||
        strcmp(q.info.key, p.info.key) || strcmp(q.info.host, p.info.host))
        abort();
    profdb_profile_free(&q);
    free(enc);
    profdb_profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size);
    if (size < 90)
        return 0;
    uint32_t hlen = le_get32(data + 12);
    if (hlen < 86 || hlen > size)
        return 0;
    uint8_t *b = malloc(size);
    memcpy(b, data, size);
    le_put32(b + 72, (uint32_t)crc32_z(0, b + hlen, size - hlen));
    le_put32(b + hlen - 4, (uint32_t)crc32_z(0, b, hlen - 4));
    check(b, size);
    free(b);
    return 0;
}
