/*
 * cpo info IMAGE
 *
 * What a user needs before profiling or optimizing an image: its type,
 * entry, GP (and how it was found), interpreter, build-id, whether it kept
 * its relocations, then the segments and sections.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "image/image.h"
#include "tools/cpo/commands.h"

static const char *seg_type(uint32_t t, char *buf)
{
    switch (t) {
    case PT_NULL: return "NULL";
    case PT_LOAD: return "LOAD";
    case PT_DYNAMIC: return "DYNAMIC";
    case PT_INTERP: return "INTERP";
    case PT_NOTE: return "NOTE";
    case PT_PHDR: return "PHDR";
    case PT_TLS: return "TLS";
    case PT_GNU_EH_FRAME: return "GNU_EH_FRAME";
    case PT_GNU_STACK: return "GNU_STACK";
    case PT_GNU_RELRO: return "GNU_RELRO";
    case PT_GNU_PROPERTY: return "GNU_PROPERTY";
    default: snprintf(buf, 16, "0x%x", t); return buf;
    }
}

static const char *sec_type(uint32_t t, char *buf)
{
    static const char *const names[] = {
        "NULL", "PROGBITS", "SYMTAB", "STRTAB", "RELA", "HASH", "DYNAMIC", "NOTE",
        "NOBITS", "REL", "SHLIB", "DYNSYM", "<12>", "<13>", "INIT_ARRAY", "FINI_ARRAY",
        "PREINIT_ARRAY", "GROUP", "SYMTAB_SHNDX",
    };
    if (t < sizeof names / sizeof names[0])
        return names[t];
    switch (t) {
    case SHT_GNU_HASH: return "GNU_HASH";
    case SHT_GNU_versym: return "VERSYM";
    case SHT_GNU_verneed: return "VERNEED";
    case SHT_GNU_verdef: return "VERDEF";
    default: snprintf(buf, 16, "0x%x", t); return buf;
    }
}

static void sec_flags(uint64_t f, char *buf)
{
    static const struct { uint64_t bit; char c; } fl[] = {
        { SHF_WRITE, 'W' }, { SHF_ALLOC, 'A' }, { SHF_EXECINSTR, 'X' }, { SHF_MERGE, 'M' },
        { SHF_STRINGS, 'S' }, { SHF_INFO_LINK, 'I' }, { SHF_LINK_ORDER, 'L' }, { SHF_GROUP, 'G' },
        { SHF_TLS, 'T' }, { SHF_COMPRESSED, 'C' },
    };
    char *p = buf;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (f & fl[i].bit)
            *p++ = fl[i].c;
    *p = '\0';
}

int cmd_info(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: cpo info IMAGE\n");
        return 2;
    }
    image_error err;
    image *img = image_open(argv[1], &err);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        return 1;
    }
    char buf[160];
    printf("file:      %s (%zu bytes)\n", img->path, img->file_size);
    printf("type:      %s\n", img->type == ET_EXEC ? "EXEC (executable)" : "DYN (shared object or PIE)");
    bool named = image_symbolize(img, img->entry, buf, sizeof buf);
    printf("entry:     0x%" PRIx64 "%s%s%s\n", img->entry, named ? " <" : "", named ? buf : "", named ? ">" : "");
    if (img->has_gp)
        printf("gp:        0x%" PRIx64 " (%s; %zu distinct value%s in GPDISP pairs)\n", img->gp,
               image_gp_source(img), image_gp_count(img), image_gp_count(img) == 1 ? "" : "s");
    else
        printf("gp:        unknown\n");
    printf("interp:    %s\n", img->interp ? img->interp : "(none: static)");
    printf("build-id:  %s\n", img->build_id_len ? image_build_id_hex(img, buf, sizeof buf) : "(none)");

    size_t nstatic = 0, nstatic_secs = 0, ndyn = 0;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        if (img->relsecs[i].dynamic)
            ndyn += img->relsecs[i].count;
        else
            nstatic += img->relsecs[i].count, nstatic_secs++;
    }
    printf("relocs:    %zu static in %zu sections, %zu dynamic; .text %s\n", nstatic, nstatic_secs, ndyn,
           image_has_text_relocs(img) ? "has its relocations" : "has none (link with -Wl,--emit-relocs)");
    size_t nsym = 0, ndsym = 0;
    for (size_t i = 0; i < img->nsymbols; i++)
        img->symbols[i].dynamic ? ndsym++ : nsym++;
    const image_symbol *const *funcs;
    printf("symbols:   %zu in .symtab, %zu in .dynsym, %zu functions\n", nsym, ndsym, image_functions(img, &funcs));
    for (size_t i = 0; i < img->ndyn; i++) {
        if (img->dyn[i].tag != DT_NEEDED)
            continue;
        const char *name = image_dyn_str(img, i);
        if (name)
            printf("needed:    %s\n", name);
    }

    printf("\nsegments:\n  %-13s %-10s %-18s %-10s %-10s %-3s %s\n", "Type", "Offset", "VirtAddr", "FileSiz",
           "MemSiz", "Flg", "Align");
    for (size_t i = 0; i < img->nsegments; i++) {
        const image_segment *g = &img->segments[i];
        char tb[16];
        printf("  %-13s 0x%08" PRIx64 " 0x%016" PRIx64 " 0x%08" PRIx64 " 0x%08" PRIx64 " %c%c%c 0x%" PRIx64 "\n",
               seg_type(g->type, tb), g->offset, g->vaddr, g->filesz, g->memsz, g->flags & PF_R ? 'R' : ' ',
               g->flags & PF_W ? 'W' : ' ', g->flags & PF_X ? 'E' : ' ', g->align);
    }
    printf("\nsections:\n  %-4s %-24s %-13s %-16s %-8s %-8s %-5s\n", "[Nr]", "Name", "Type", "Address", "Offset",
           "Size", "Flags");
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        char tb[16], fb[16];
        sec_flags(s->flags, fb);
        printf("  [%2zu] %-24s %-13s %016" PRIx64 " %08" PRIx64 " %08" PRIx64 " %s\n", i, s->name,
               sec_type(s->type, tb), s->addr, s->offset, s->size, fb);
    }
    image_close(img);
    return 0;
}
