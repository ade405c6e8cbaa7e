/*
 * cpo relocs IMAGE
 *
 * Every relocation section, in file order, one line per relocation: the
 * address it patches, its type, the symbol index and value, and
 * "name + addend".  Static sections (kept by --emit-relocs) and dynamic
 * ones (applied at load time) are labelled as such.
 */
#include <inttypes.h>
#include <stdio.h>

#include "image/image.h"
#include "tools/cpo/commands.h"

int cmd_relocs(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: cpo relocs IMAGE\n");
        return 2;
    }
    image_error err;
    image *img = image_open(argv[1], &err);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        return 1;
    }
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *r = &img->relsecs[i];
        const char *tname = r->target && r->target < img->nsections ? img->sections[r->target].name : "-";
        printf("Relocation section %s (section %u) for %s: %zu entries, %s\n", r->name, r->index, tname,
               r->count, r->dynamic ? "dynamic" : "static");
        printf("  %-16s  %-10s %6s  %-16s  %s\n", "Offset", "Type", "Sym", "Value", "Name + Addend");
        for (size_t k = 0; k < r->count; k++) {
            const image_reloc *x = &r->relocs[k];
            const char *t = image_reloc_name(x->type);
            char tb[24];
            if (!t)
                snprintf(tb, sizeof tb, "TYPE_%u", x->type), t = tb;
            printf("  %016" PRIx64 "  %-10s %6u  %016" PRIx64 "  %s %c 0x%" PRIx64 "\n", x->offset, t,
                   x->sym, x->symvalue, x->sym && x->symname[0] ? x->symname : "-", x->addend < 0 ? '-' : '+',
                   x->addend < 0 ? -(uint64_t)x->addend : (uint64_t)x->addend);
        }
        printf("\n");
    }
    image_close(img);
    return 0;
}
