/*
 * image/image.h: Alpha ELF64 executables (EXEC or DYN) as read-only data.
 *
 * An image is opened once, read completely through libelf into plain arrays,
 * and closed; callers never see libelf types.  Every failure is reported as a
 * message naming the file and what is wrong, plus an error code callers can
 * test (the rewriter must tell "no relocations" apart from "corrupt").
 */
#ifndef IMAGE_IMAGE_H
#define IMAGE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    IMG_OK = 0,
    IMG_EIO,         /* cannot open or read the file */
    IMG_ENOTELF,     /* not an ELF file */
    IMG_ENOTALPHA,   /* ELF, but not 64-bit little-endian Alpha */
    IMG_ETYPE,       /* not an executable or shared object */
    IMG_ETRUNC,      /* a header, table or section lies beyond the file end */
    IMG_ENOSHDR,     /* no section headers */
    IMG_ECORRUPT,    /* inconsistent tables (bad indices, sizes, links) */
    IMG_ENORELOCS,   /* no relocations: link with -Wl,--emit-relocs */
    IMG_ENOMEM
} image_err;

typedef struct image_error {
    image_err code;
    char msg[512];   /* "FILE: what is wrong" */
} image_error;

typedef struct image_segment {      /* one program header */
    uint32_t type, flags;           /* PT_*, PF_* */
    uint64_t offset, vaddr, filesz, memsz, align;
} image_segment;

typedef struct image_section {
    const char *name;
    uint32_t index;                 /* ELF section index */
    uint32_t type;                  /* SHT_* */
    uint64_t flags;                 /* SHF_* */
    uint64_t addr, offset, size, entsize, align;
    uint32_t link, info;
    const uint8_t *data;            /* file bytes (NULL for NOBITS) */
} image_section;

typedef struct image_symbol {
    const char *name;
    uint64_t value, size;
    uint8_t  type, bind;            /* STT_*, STB_* */
    uint8_t  other;                 /* st_other: visibility + STO_ALPHA_* */
    uint16_t shndx;                 /* section index (SHN_* values kept) */
    bool     dynamic;               /* from .dynsym rather than .symtab */
} image_symbol;

/* STO_ALPHA_* bits of st_other (binutils include/elf/alpha.h). */
#define IMAGE_STO_ALPHA_NOPV        0x80
#define IMAGE_STO_ALPHA_STD_GPLOAD  0x88
#define IMAGE_STO_ALPHA_MASK        0x88

typedef struct image_reloc {
    uint64_t offset;                /* r_offset: an address in the image */
    uint32_t type;                  /* R_ALPHA_* */
    uint32_t sym;                   /* symbol index in the section's symtab */
    int64_t  addend;
    uint64_t symvalue;              /* value of that symbol (0 if none) */
    const char *symname;            /* its name ("" if none) */
} image_reloc;

typedef struct image_relsec {       /* one SHT_RELA / SHT_REL section */
    const char *name;               /* e.g. ".rela.text" */
    uint32_t index;
    uint32_t target;                /* section index it applies to (sh_info) */
    bool dynamic;                   /* applies at run time (.rela.dyn, .rela.plt) */
    size_t count;
    image_reloc *relocs;
} image_relsec;

typedef struct image_dyn {
    int64_t tag;
    uint64_t val;
} image_dyn;

/* The most build-id bytes an image keeps (GNU tools write 20). */
#define IMAGE_MAX_BUILD_ID 64

typedef struct image {
    char *path;
    uint16_t type;                  /* ET_EXEC or ET_DYN */
    uint64_t entry;
    uint64_t phoff;                 /* file offset of the program headers */
    uint64_t gp;                    /* the GP value (symbol _gp, or derived) */
    bool     has_gp;
    char    *interp;                /* PT_INTERP string, NULL for static */
    uint8_t  build_id[IMAGE_MAX_BUILD_ID];
    size_t   build_id_len;          /* 0 when the image has none */

    size_t nsegments;   image_segment *segments;
    size_t nsections;   image_section *sections;  /* indexed by ELF index */
    size_t nsymbols;    image_symbol  *symbols;   /* .symtab then .dynsym */
    size_t nrelsecs;    image_relsec  *relsecs;
    size_t ndyn;        image_dyn     *dyn;

    /* Private: the file's bytes, sorted function list, libbfd handle. */
    uint8_t *file;
    size_t   file_size;
    struct image_private *priv;
} image;

/* Open and read an image.  On failure returns NULL and fills *err. */
image *image_open(const char *path, image_error *err);
/* Same, from bytes in memory (for the fuzzer and tests); the bytes are
 * copied.  `name` is used in error messages. */
image *image_open_mem(const void *data, size_t size, const char *name, image_error *err);
/* For running it, as the kernel reads it: the whole image when it can be
 * read, else (sections missing or damaged: a stripped image, one without
 * section headers, broken debug sections) its ELF header and program
 * headers alone, with no sections or symbols.  Refused as Linux refuses:
 * no program headers, more than 64 KB of them, no loadable segment. */
image *image_open_for_running(const char *path, image_error *err);
void image_close(image *img);

/* Lowercase hex of the build-id into buf (at least 129 bytes); "" if none. */
const char *image_build_id_hex(const image *img, char *buf, size_t size);

/* The section with that name, or NULL. */
const image_section *image_section_by_name(const image *img, const char *name);
/* The string in .dynstr that dynamic entry i's value names (DT_NEEDED,
 * DT_SONAME, ...), or NULL when it names none. */
const char *image_dyn_str(const image *img, size_t i);
/* The allocated section containing addr, or NULL. */
const image_section *image_section_at(const image *img, uint64_t addr);
/* Pointer to the file bytes backing [addr, addr+len) if all of it lies in
 * one section with contents; NULL otherwise. */
const uint8_t *image_bytes_at(const image *img, uint64_t addr, size_t len);

/* Function symbols (STT_FUNC, defined, from .symtab, else .dynsym),
 * sorted by address, duplicates at one address folded (global wins). */
size_t image_functions(const image *img, const image_symbol *const **out);
/* The function symbol whose [value, value+size) covers addr (or, for
 * size-0 symbols, the nearest one below within the same section). */
const image_symbol *image_function_at(const image *img, uint64_t addr);
/* A defined symbol by name (functions and objects), or NULL. */
const image_symbol *image_symbol_by_name(const image *img, const char *name);
/* Format "name+0x1c" (or "name") for addr the way objdump labels targets:
 * the nearest preceding symbol in the same section.  false if none.
 * (All of objdump's rules are followed, docs/image.md: e.g. with no symbol
 * before addr it names the next one, "sym-0x270".) */
bool image_symbolize(const image *img, uint64_t addr, char *buf, size_t size);
/* The same for a reference made from section `from` (the section being
 * disassembled; NULL for none): objdump prefers that section's symbols. */
bool image_symbolize_from(const image *img, uint64_t addr, const image_section *from,
                          char *buf, size_t size);

/* How img->gp was found ("_gp symbol", "GPDISP pair at the entry point",
 * ...; docs/image.md), NULL when has_gp is false.  image_gp_count is the
 * number of distinct GP values the image's GPDISP pairs compute (more than
 * one when the linker made several GOTs; 0 without relocations). */
const char *image_gp_source(const image *img);
size_t image_gp_count(const image *img);

/* True when the image carries static relocations for its text
 * (linked with --emit-relocs).  image_require_relocs fills err with
 * IMG_ENORELOCS and a message telling how to fix it. */
bool image_has_text_relocs(const image *img);
bool image_require_relocs(const image *img, image_error *err);

/* Source file and line for addr through libbfd's DWARF reader.  Returns
 * false when the image has no line information for addr.  *file points into
 * storage owned by the image. */
bool image_source_line(image *img, uint64_t addr, const char **file,
                       unsigned *line, const char **function);

/* Name of a relocation type ("GPDISP"), or NULL if unknown. */
const char *image_reloc_name(uint32_t type);

/* R_ALPHA_* numbers (alpha-facts.md, binutils include/elf/alpha.h).
 * glibc's <elf.h> defines most of them as macros; when it came first, the
 * enum would not compile, so only the two it lacks are added. */
#ifndef R_ALPHA_NONE
enum {
    R_ALPHA_NONE = 0, R_ALPHA_REFLONG = 1, R_ALPHA_REFQUAD = 2,
    R_ALPHA_GPREL32 = 3, R_ALPHA_LITERAL = 4, R_ALPHA_LITUSE = 5,
    R_ALPHA_GPDISP = 6, R_ALPHA_BRADDR = 7, R_ALPHA_HINT = 8,
    R_ALPHA_SREL16 = 9, R_ALPHA_SREL32 = 10, R_ALPHA_SREL64 = 11,
    R_ALPHA_GPRELHIGH = 17, R_ALPHA_GPRELLOW = 18, R_ALPHA_GPREL16 = 19,
    R_ALPHA_COPY = 24, R_ALPHA_GLOB_DAT = 25, R_ALPHA_JMP_SLOT = 26,
    R_ALPHA_RELATIVE = 27, R_ALPHA_BRSGP = 28, R_ALPHA_TLSGD = 29,
    R_ALPHA_TLSLDM = 30, R_ALPHA_DTPMOD64 = 31, R_ALPHA_GOTDTPREL = 32,
    R_ALPHA_DTPREL64 = 33, R_ALPHA_DTPRELHI = 34, R_ALPHA_DTPRELLO = 35,
    R_ALPHA_DTPREL16 = 36, R_ALPHA_GOTTPREL = 37, R_ALPHA_TPREL64 = 38,
    R_ALPHA_TPRELHI = 39, R_ALPHA_TPRELLO = 40, R_ALPHA_TPREL16 = 41
};
#else
#define R_ALPHA_BRSGP  28
#define R_ALPHA_TLSLDM 30
#endif

#endif
