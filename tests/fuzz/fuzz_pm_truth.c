/*
 * Fuzz target for the reader of axp's --profileme-truth files
 * (profdb/pm_truth.c): any input is refused with a message naming the
 * file, or read into records sorted by pc whose histories fit their
 * lengths and whose runs are well formed, the first ending right after pc.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/pm_truth.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    profdb_error err;
    profdb_pm_truth *t = profdb_pm_truth_read(path, &err);
    if (!t) {
        if (strncmp(err.msg, path, strlen(path)))
            abort();
        return 0;
    }
    for (size_t i = 0; i < t->n; i++) {
        const profdb_pmt *e = &t->e[i];
        if ((i && e->pc < t->e[i - 1].pc) || !e->count || e->len > 16 || (e->hist >> e->len))
            abort();
        if (!e->nruns || e->nruns > PROFDB_PMT_RUNS || e->run[0].end != e->pc + 4 || e->run[0].start > e->pc)
            abort();
        for (uint32_t k = 0; k < e->nruns; k++)
            if (e->run[k].start >= e->run[k].end || ((e->run[k].start | e->run[k].end) & 3))
                abort();
    }
    profdb_pm_truth_free(t);
    return 0;
}
