/*
 * paths/grow.c: growing the room's arrays (internal.h).
 */
#include <stdlib.h>

#include "paths/internal.h"

bool paths_grow(void *arr, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 16;
    void *na = realloc(*(void **)arr, nc * sz);
    if (!na)
        return false;
    *(void **)arr = na;
    *cap = nc;
    return true;
}
