/*
 * Fuzz target for the reader of axp's --truth files (profdb/truth.c): any
 * input is refused with a message naming the file, or read into rows whose
 * pcs ascend and whose cycles are not negative.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/truth.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    profdb_error err;
    profdb_truth *t = profdb_truth_read(path, &err);
    if (!t) {
        if (strncmp(err.msg, path, strlen(path)))
            abort();
        return 0;
    }
    for (size_t i = 0; i < t->n; i++) {
        if ((i && t->pc[i] <= t->pc[i - 1]) || !(t->head[i] >= 0))
            abort();
        if (profdb_truth_find(t, t->pc[i]) != (long)i)
            abort();
        for (size_t c = 0; c < t->ncauses; c++)
            if (!(t->stall[i * t->ncauses + c] >= 0))
                abort();
    }
    profdb_truth_free(t);
    return 0;
}
