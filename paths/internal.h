/*
 * paths/internal.h: what the paths room's files share, for this room alone.
 */
#ifndef PATHS_INTERNAL_H
#define PATHS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Make room in the array *arr (of *cap elements of sz bytes) for element
 * n, doubling it; false, leaving it as it was, when out of memory. */
bool paths_grow(void *arr, size_t *cap, size_t n, size_t sz);

#endif
