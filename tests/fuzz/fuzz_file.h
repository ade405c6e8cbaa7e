/*
 * tests/fuzz/fuzz_file.h: for targets whose reader takes a path, the input
 * written to one temporary file made on the first call and reused.
 */
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *fuzz_file(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) {
        strcpy(path, "/tmp/fuzz-input-XXXXXX");
        int fd = mkstemp(path);
        if (fd < 0)
            abort();
        close(fd);
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f))
        abort();
    return path;
}

#endif
