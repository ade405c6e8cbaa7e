/*
 * Fuzz target for the value-profile reader (profdb/values.c): any bytes
 * either decode into lists that obey every invariant and re-encode to the
 * same bytes, or fail with a message naming the input.  Each input is
 * also tried with its checksum recomputed, which takes random bytes past
 * the checksum test.  Seeds: tests/fuzz/seeds/values-*.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/values.h"
#include "tests/fuzz/fuzz_sealed.h"

static void check(const uint8_t *data, size_t size)
{
    profdb_vlist *v;
    size_t n;
    profdb_error err;
    if (!profdb_values_decode(data, size, "fuzz", &v, &n, &err)) {
        if (err.code == PROFDB_OK || strncmp(err.msg, "fuzz: ", 6))
            abort();
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (hotlist_check(&v[i].h) || !profdb_vkind_name(v[i].kind) ||
            (i && (v[i].offset < v[i - 1].offset || (v[i].offset == v[i - 1].offset && v[i].kind <= v[i - 1].kind))))
            abort();
    uint8_t *enc;
    size_t len;
    if (!profdb_values_encode(v, n, &enc, &len, &err) || len != size || memcmp(enc, data, size))
        abort();
    free(enc);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_sealed(data, size, check);
    return 0;
}
