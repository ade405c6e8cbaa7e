/*
 * cpo addrmap IMAGE [ADDR...]
 *
 * For each ADDR of a rewritten image, the original address it came from:
 * "NEW ORIG KIND" with KIND one of code, branch (added by the rewriter),
 * pad (alignment), same (not moved).  Without ADDR, the whole map.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/addrmap.h"
#include "tools/cpo/commands.h"

static const char *const kinds[] = { "code", "branch", "pad" };

int cmd_addrmap(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: cpo addrmap IMAGE [ADDR...]\n");
        return 2;
    }
    image_error ierr;
    image *img = image_open(argv[1], &ierr);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", ierr.msg);
        return 1;
    }
    addrmap m;
    char err[256];
    if (!addrmap_read(img, &m, err, sizeof err)) {
        fprintf(stderr, "cpo: %s\n", err);
        image_close(img);
        return 1;
    }
    int rc = 0;
    if (argc == 2) {
        for (size_t i = 0; i < m.n; i++)
            printf("0x%" PRIx64 "-0x%" PRIx64 " 0x%" PRIx64 " %s\n", m.e[i].new_addr,
                   m.e[i].new_addr + m.e[i].len, m.e[i].orig, kinds[m.e[i].kind]);
    }
    for (int i = 2; i < argc; i++) {
        char *end;
        uint64_t a = strtoull(argv[i], &end, 0);
        if (!*argv[i] || *end) {
            fprintf(stderr, "cpo: '%s' is not an address\n", argv[i]);
            rc = 2;
            continue;
        }
        int kind;
        uint64_t o = addrmap_lookup(&m, a, &kind);
        printf("0x%" PRIx64 " 0x%" PRIx64 " %s\n", a, o, kind < 0 ? "same" : kinds[kind]);
    }
    addrmap_free(&m);
    image_close(img);
    return rc;
}
