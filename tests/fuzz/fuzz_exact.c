/*
 * Fuzz target for the exact-counts reader (profdb/exact.h): any bytes
 * either parse into records whose references hold (every jump's targets
 * inside its image's target array, every edge's image declared or "none")
 * or fail with a message naming the input and, past the first line, the
 * line.  Seeds: tests/fuzz/seeds/exact-*.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/exact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    profdb_error err = { 0 };
    profdb_exact *ex = profdb_exact_parse((const char *)data, size, "fuzz", &err);
    if (!ex) {
        if (err.code == PROFDB_OK || strncmp(err.msg, "fuzz", 4))
            abort();
        return 0;
    }
    for (size_t i = 0; i < ex->nimages; i++) {
        const profdb_exact_image *im = &ex->images[i];
        if (!im->path)
            abort();
        for (size_t j = 0; j < im->njumps; j++)
            if (im->jumps[j].first + im->jumps[j].ntargets > im->ntargets)
                abort();
        for (size_t j = 0; j < im->nedges; j++)
            if (im->edges[j].to_image >= ex->nimages && im->edges[j].to_image != PROFDB_EXACT_NOIMAGE)
                abort();
        for (size_t j = 0; j < im->nruns; j++)
            if (im->runs[j].end <= im->runs[j].start)
                abort();
    }
    profdb_exact_free(ex);
    return 0;
}
