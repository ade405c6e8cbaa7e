/*
 * Fuzz target for the path-profile and calling-context-tree readers
 * (paths/pathprof.h, paths/cct.h): any bytes either fail with a message
 * naming the input, or parse into a profile or tree that writes out and
 * reads back to the same thing.  Seeds: tests/fuzz/seeds/paths-*, cct-*.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths/cct.h"
#include "paths/pathprof.h"

static char *dump(bool (*write)(const void *, FILE *), const void *x, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f || !write(x, f))
        abort();
    fclose(f);
    return buf;
}

static bool write_pp(const void *x, FILE *f) { return pathprof_write(x, f); }
static bool write_cct(const void *x, FILE *f) { return cct_write(x, f); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    pathprof *pp = pathprof_parse((const char *)data, size, "fuzz", err, sizeof err);
    if (!pp && strncmp(err, "fuzz:", 5))
        abort();
    if (pp) {
        size_t n;
        char *a = dump(write_pp, pp, &n);
        pathprof *again = pathprof_parse(a, n, "again", err, sizeof err);
        if (!again)
            abort();
        size_t m;
        char *b = dump(write_pp, again, &m);
        if (m != n || memcmp(a, b, n))
            abort();
        free(a);
        free(b);
        pathprof_free(again);
        pathprof_free(pp);
    }
    cct *t = cct_parse((const char *)data, size, "fuzz", err, sizeof err);
    if (!t && strncmp(err, "fuzz:", 5))
        abort();
    if (t) {
        uint64_t *incl = cct_inclusive(t);
        if (!incl)
            abort();
        free(incl);
        size_t n;
        char *a = dump(write_cct, t, &n);
        cct *again = cct_parse(a, n, "again", err, sizeof err);
        if (!again)
            abort();
        size_t m;
        char *b = dump(write_cct, again, &m);
        if (m != n || memcmp(a, b, n))
            abort();
        free(a);
        free(b);
        cct_free(again);
        cct_free(t);
    }
    return 0;
}
