/*
 * tools/cpo/origin.c: the rewriter's address map as the estimator's
 * est_origin (estimator/diff.h): how cpo diff, the stack views and the
 * calling context tree carry a rewritten image's addresses back to its
 * original.  The estimator cannot read the map itself (the rewriter is
 * above it), so the tools hand it over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/addrmap.h"
#include "tools/cpo/commands.h"

static uint64_t map_lookup(const void *map, uint64_t offset)
{
    int kind;
    return addrmap_lookup(map, offset, &kind);
}

static void map_free(void *map)
{
    addrmap_free(map);
    free(map);
}

/* An image without the note is simply not a rewritten one; a damaged note
 * is reported and the image taken as it is. */
bool cpo_origin_of(void *ctx, const image *img, est_origin *out)
{
    (void)ctx;
    if (!image_section_by_name(img, ADDRMAP_SECTION))
        return false;
    addrmap *m = calloc(1, sizeof *m);
    char err[512];
    if (!m)
        return false;
    if (!addrmap_read(img, m, err, sizeof err)) {
        fprintf(stderr, "cpo: warning: %s; the image is compared as it is\n", err);
        free(m);
        return false;
    }
    memcpy(out->build_id, m->build_id, m->build_id_len);
    out->build_id_len = m->build_id_len;
    out->map = m;
    out->lookup = map_lookup;
    out->free = map_free;
    return true;
}
