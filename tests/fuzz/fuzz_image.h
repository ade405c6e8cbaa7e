/*
 * tests/fuzz/fuzz_image.h: for targets whose reader looks up one section of
 * an image, an image named "fuzz" with that section alone (index 1) over
 * the fuzzer's bytes; the caller owns sec[2] and fills in what else its
 * reader needs (the file's bytes, the section's flags or address).
 */
#ifndef FUZZ_IMAGE_H
#define FUZZ_IMAGE_H

#include <string.h>

#include "image/image.h"

static void fuzz_image(image *img, image_section sec[2], const char *name, unsigned type,
                       const uint8_t *data, size_t size)
{
    memset(img, 0, sizeof *img);
    memset(sec, 0, 2 * sizeof *sec);
    sec[1] = (image_section){ .name = name, .index = 1, .type = type, .size = size, .data = data };
    img->path = (char *)"fuzz";
    img->nsections = 2;
    img->sections = sec;
}

#endif
