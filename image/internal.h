/*
 * image/internal.h: what the image/ files share and callers never see.
 *
 * open.c reads and validates the file; symbols.c, relocs.c, gp.c and
 * symbolize.c each build one part of the image from the validated tables;
 * lines.c talks to libbfd lazily.  All of them report through img_fail.
 */
#ifndef IMAGE_INTERNAL_H
#define IMAGE_INTERNAL_H

#include "common/le.h"
#include "image/image.h"

/* One candidate label for image_symbolize (objdump's sorted_syms). */
typedef struct img_label {
    uint64_t value;
    const image_symbol *sym;
} img_label;

struct image_private {
    /* Per ELF section index: where that symbol table's entries start in
     * img->symbols, or SIZE_MAX when the section is not a symbol table. */
    size_t *symbase;
    size_t symtab_count;          /* entries of .symtab (0 when absent) */

    const image_symbol **funcs;   /* image_functions */
    size_t nfuncs;
    const image_symbol **byname;  /* defined symbols sorted by name */
    size_t nbyname;
    img_label *labels;            /* image_symbolize candidates, sorted */
    size_t nlabels;
    bool static_relocs;           /* objdump's HAS_RELOC: --emit-relocs kind */

    const char *gp_source;        /* how img->gp was found */
    size_t gp_distinct;           /* distinct GP values seen in GPDISP pairs */

    struct bfd *abfd;             /* opened on first image_source_line */
    void **bfd_syms;
    bool bfd_tried;
};

/* Fill *err ("NAME: message") and return false; err may be NULL. */
bool img_fail(image_error *err, image_err code, const char *name,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Build steps run by image_open_mem after the headers are validated. */
struct Elf;
bool img_read_symbols(image *img, struct Elf *elf, image_error *err);
bool img_read_relocs(image *img, struct Elf *elf, image_error *err);
bool img_index_symbols(image *img, image_error *err);
bool img_build_labels(image *img, image_error *err);
void img_find_gp(image *img);
void img_close_lines(image *img);

/* True when the symbol's shndx names a real section of the image. */
static inline bool img_sym_in_section(const image *img, const image_symbol *s)
{
    return s->shndx != 0 && s->shndx < 0xff00 && s->shndx < img->nsections;
}

#define img_le32 le_get32   /* common/le.h */

#endif
