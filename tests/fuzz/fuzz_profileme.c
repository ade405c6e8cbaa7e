/*
 * Fuzz target for the ProfileMe-profile reader (profdb/profileme.c) and
 * the driver's ProfileMe record decoder (collector/driver_pm.c): any
 * bytes either decode into entries that obey every invariant and
 * re-encode to the same bytes, or fail with a message naming the input;
 * each input is also tried with its checksum recomputed, which takes
 * random bytes past the checksum test.  The first 48 bytes, as a ring
 * record's six words, either decode into a record within its ranges or
 * are refused.  Seeds: tests/fuzz/seeds/profileme-*.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/driver_stacks.h"
#include "common/le.h"
#include "profdb/profileme.h"
#include "tests/fuzz/fuzz_sealed.h"

static void check(const uint8_t *data, size_t size)
{
    profdb_pm *v;
    size_t n;
    profdb_error err;
    if (!profdb_pm_decode(data, size, "fuzz", &v, &n, &err)) {
        if (err.code == PROFDB_OK || strncmp(err.msg, "fuzz: ", 6))
            abort();
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (hotlist_check(&v[i].paths) || (i && v[i].offset <= v[i - 1].offset) ||
            v[i].c[PDPM_DMISS] > v[i].c[PDPM_SAMPLES])
            abort();
    uint8_t *enc;
    size_t len;
    if (!profdb_pm_encode(v, n, &enc, &len, &err) || len != size || memcmp(enc, data, size))
        abort();
    free(enc);
    free(v);
}

static void record(const uint8_t *data, size_t size)
{
    uint64_t w[DRV_PM_WORDS];
    if (size < sizeof w)
        return;
    for (unsigned i = 0; i < DRV_PM_WORDS; i++)
        w[i] = le_get64(data + 8 * i);
    drv_stack_rec r = { .event = DRV_PM_EVENT, .end = DRV_PM_VERSION, .n = DRV_PM_WORDS, .pc = w };
    drv_pm p;
    if (!drv_pm_decode(&r, &p))
        return;
    uint64_t again[DRV_PM_WORDS];
    drv_pm_encode(&p, again);
    if (p.hist_len > 16 || p.level > 3 || p.distance > p.window || !isfinite(p.period) ||
        memcmp(again, w, sizeof w))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_sealed(data, size, check);
    record(data, size);
    return 0;
}
