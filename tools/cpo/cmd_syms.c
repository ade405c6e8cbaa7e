/*
 * cpo syms IMAGE [--labels]
 *
 * Every symbol table of the image, one line per entry, in readelf's
 * vocabulary (types, bindings, visibility, UND/ABS/COM) plus the Alpha
 * st_other flags, so that the two can be compared line by line.
 *
 * --labels reads addresses from stdin instead, one per line ("ADDR" or
 * "FROM ADDR" in hex, FROM being the address of the referring instruction)
 * and prints the label objdump would print for each, or "?".
 */
#include <elf.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"
#include "tools/cpo/commands.h"

static const char *type_str(unsigned t, char *buf)
{
    static const char *const names[] = { "NOTYPE", "OBJECT", "FUNC", "SECTION", "FILE", "COMMON", "TLS" };
    if (t < sizeof names / sizeof names[0])
        return names[t];
    if (t == STT_GNU_IFUNC)
        return "IFUNC";
    sprintf(buf, "<%u>", t);
    return buf;
}

static const char *bind_str(unsigned b, char *buf)
{
    static const char *const names[] = { "LOCAL", "GLOBAL", "WEAK" };
    if (b < 3)
        return names[b];
    if (b == STB_GNU_UNIQUE)
        return "UNIQUE";
    sprintf(buf, "<%u>", b);
    return buf;
}

static const char *ndx_str(unsigned n, char *buf)
{
    if (n == SHN_UNDEF) return "UND";
    if (n == SHN_ABS) return "ABS";
    if (n == SHN_COMMON) return "COM";
    sprintf(buf, "%u", n);
    return buf;
}

static const char *sto_str(unsigned other)
{
    switch (other & IMAGE_STO_ALPHA_MASK) {
    case IMAGE_STO_ALPHA_STD_GPLOAD: return "STD_GPLOAD";
    case IMAGE_STO_ALPHA_NOPV: return "NOPV";
    default: return "-";
    }
}

static void print_table(const image *img, bool dynamic)
{
    static const char *const vis[] = { "DEFAULT", "INTERNAL", "HIDDEN", "PROTECTED" };
    const char *secname = NULL;
    for (size_t i = 1; i < img->nsections; i++)
        if (img->sections[i].type == (dynamic ? SHT_DYNSYM : SHT_SYMTAB))
            secname = img->sections[i].name;
    size_t n = 0;
    for (size_t i = 0; i < img->nsymbols; i++)
        n += img->symbols[i].dynamic == dynamic;
    if (!secname)
        return;
    printf("Symbol table %s: %zu entries\n", secname, n);
    printf("%7s  %-16s %8s %-7s %-6s %-9s %-10s %5s  %s\n", "Num", "Value", "Size", "Type", "Bind",
           "Vis", "Alpha", "Ndx", "Name");
    size_t k = 0;
    for (size_t i = 0; i < img->nsymbols; i++) {
        const image_symbol *s = &img->symbols[i];
        if (s->dynamic != dynamic)
            continue;
        char tb[16], bb[16], nb[16];
        printf("%6zu:  %016" PRIx64 " %8" PRIu64 " %-7s %-6s %-9s %-10s %5s  %s\n", k++, s->value,
               s->size, type_str(s->type, tb), bind_str(s->bind, bb), vis[s->other & 3],
               sto_str(s->other), ndx_str(s->shndx, nb), s->name);
    }
    printf("\n");
}

static int labels(const image *img)
{
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        char *end;
        uint64_t a = strtoull(line, &end, 16), from;
        char *end2;
        uint64_t b = strtoull(end, &end2, 16);
        bool two = end2 != end;
        if (end == line) {
            printf("?\n");
            continue;
        }
        from = a;
        if (two)
            a = b;
        char buf[512];
        const image_section *sec = image_section_at(img, from);
        if (image_symbolize_from(img, a, sec, buf, sizeof buf))
            printf("%s\n", buf);
        else
            printf("?\n");
    }
    return 0;
}

int cmd_syms(int argc, char **argv)
{
    static const struct option opts[] = { { "labels", no_argument, 0, 'l' }, { 0, 0, 0, 0 } };
    bool want_labels = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "l", opts, NULL)) != -1) {
        if (c != 'l') {
            fprintf(stderr, "usage: cpo syms IMAGE [--labels]\n");
            return 2;
        }
        want_labels = true;
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: cpo syms IMAGE [--labels]\n");
        return 2;
    }
    image_error err;
    image *img = image_open(argv[optind], &err);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        return 1;
    }
    if (want_labels) {
        labels(img);
    } else {
        print_table(img, true);
        print_table(img, false);
    }
    image_close(img);
    return 0;
}
