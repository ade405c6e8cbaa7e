/*
 * Fuzz target for the undo record (rewriter/undo.c).  Any bytes read as the
 * .cpo.undo section of an image made of those bytes are either rejected
 * with a message naming the image or rebuild a file whose checksum the
 * record holds.  And the bytes taken as an original file (its section table
 * dropped, so that nothing moves), patched at places they choose, encode to
 * a record from which the patched copy gives the original back exactly.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/le.h"
#include "rewriter/undo.h"
#include "tests/fuzz/fuzz_image.h"

static image fake(uint8_t *file, size_t n, const uint8_t *rec, size_t recsz, image_section *sec)
{
    image img;
    fuzz_image(&img, sec, UNDO_SECTION, SHT_PROGBITS, rec, recsz);
    img.file = file;
    img.file_size = n;
    return img;
}

static void as_record(const uint8_t *data, size_t size)
{
    image_section sec[2];
    uint8_t *file = malloc(size ? size : 1);
    if (!file)
        return;
    memcpy(file, data, size);
    image img = fake(file, size, data, size, sec);
    char err[300];
    uint8_t *buf = NULL;
    size_t n = 0;
    if (!undo_recover(&img, &buf, &n, err, sizeof err)) {
        if (strncmp(err, "fuzz: ", 6) || buf)
            abort();    /* every error names the image, and nothing is left */
    } else if (n < sizeof(Elf64_Ehdr) || fnv1a(FNV1A_INIT, buf, n) != le_get64(data + 24)) {
        abort();    /* only what the checksum vouches for comes back */
    }
    free(buf);
    free(file);
}

static void round_trip(const uint8_t *data, size_t size)
{
    if (size < sizeof(Elf64_Ehdr))
        return;
    uint8_t *orig = malloc(size), *patched = malloc(size);
    if (!orig || !patched)
        goto out;
    memcpy(orig, data, size);
    Elf64_Ehdr eh;
    memcpy(&eh, orig, sizeof eh);
    eh.e_shnum = 0;
    memcpy(orig, &eh, sizeof eh);
    memcpy(patched, orig, size);
    /* Patches where the bytes say, the loaded part where the first says. */
    uint64_t aend = data[0] * (uint64_t)size / 256;
    for (size_t i = 1; i + 1 < size && i < 64; i += 2)
        patched[(data[i] * 251u + data[i + 1]) % size] ^= 0x5a;
    size_t recsz;
    uint8_t *rec = undo_encode(orig, patched, size, aend, &recsz);
    if (!rec)
        abort();
    image_section sec[2];
    image img = fake(patched, size, rec, recsz, sec);
    uint8_t *buf = NULL;
    size_t n = 0;
    char err[300];
    if (!undo_recover(&img, &buf, &n, err, sizeof err) || n != size || memcmp(buf, orig, size))
        abort();
    free(buf);
    free(rec);
out:
    free(orig);
    free(patched);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_record(data, size);
    round_trip(data, size);
    return 0;
}
