/*
 * Fuzz target for alpha/'s static scheduler: any run of instruction words,
 * at any address and with any issue width, is scheduled without a crash,
 * and the schedule keeps its own rules: issue cycles never go back, M_i is
 * the step from the predecessor (0 exactly when it dual-issues), the stall
 * is M_i - 1, culprits are earlier instructions, and the M_i add up to the
 * run's cycles.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/sched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static alpha_sched *s[4];
    unsigned width = 1 + (data[0] & 3);
    if (!s[width - 1]) {
        ev5_params p;
        char err[128];
        ev5_defaults(&p);
        p.issue_width = width;
        if (!(s[width - 1] = alpha_sched_new(&p, err, sizeof err)))
            abort();
    }
    uint64_t pc = 0x120000000ULL + 4 * (uint64_t)data[1];
    uint32_t n = (uint32_t)((size - 2) / 4);
    if (n > 512)
        n = 512;
    uint32_t w[512];
    memcpy(w, data + 2, 4 * (size_t)n);
    alpha_sched_slot out[512];
    uint32_t cycles = alpha_sched_words(s[width - 1], w, n, pc, out), sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        const alpha_sched_slot *o = &out[k];
        uint32_t prev = k ? out[k - 1].issue : 0;
        if (o->issue < prev || o->m != (k ? o->issue - prev : 1) || o->stall != (o->m > 1 ? o->m - 1 : 0) ||
            (o->m == 0) != (o->reason == ASR_DUAL) || o->reason >= ASR_COUNT || o->culprit >= (int32_t)k ||
            o->culprit < -1)
            abort();
        sum += o->m;
    }
    if (sum != cycles || (n && cycles != out[n - 1].issue + 1))
        abort();
    return 0;
}
