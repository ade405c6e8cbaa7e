/*
 * image/: every error code, from real programs damaged in memory.  Each
 * error must come back with its own code and a message that starts with
 * the name given; nothing may crash (the ASan build runs these too).
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image.h"
#include "tests/unit/scratch.h"

typedef struct {
    uint8_t *b;
    size_t n;
} blob;

static blob load(const char *prog)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[512];
    snprintf(path, sizeof path, "%s/programs/%s", build, prog);
    FILE *f = fopen(path, "rb");
    if (!f)
        cr_skip_test("%s missing: run `make programs`", path);
    fseek(f, 0, SEEK_END);
    blob x = { malloc(ftell(f)), ftell(f) };
    rewind(f);
    cr_assert_eq(fread(x.b, 1, x.n, f), x.n);
    fclose(f);
    return x;
}

static Elf64_Ehdr ehdr(const blob *x)
{
    Elf64_Ehdr e;
    memcpy(&e, x->b, sizeof e);
    return e;
}

static void put_ehdr(blob *x, const Elf64_Ehdr *e) { memcpy(x->b, e, sizeof *e); }

static Elf64_Shdr shdr(const blob *x, size_t i)
{
    Elf64_Shdr s;
    memcpy(&s, x->b + ehdr(x).e_shoff + i * sizeof s, sizeof s);
    return s;
}

static void put_shdr(blob *x, size_t i, const Elf64_Shdr *s)
{
    memcpy(x->b + ehdr(x).e_shoff + i * sizeof *s, s, sizeof *s);
}

static size_t find_section(const blob *x, const char *name)
{
    Elf64_Ehdr e = ehdr(x);
    Elf64_Shdr st = shdr(x, e.e_shstrndx);
    for (size_t i = 1; i < e.e_shnum; i++)
        if (!strcmp((const char *)x->b + st.sh_offset + shdr(x, i).sh_name, name))
            return i;
    cr_assert_fail("no section %s", name);
    return 0;
}

/* Opens the bytes, expects failure with `code` and a message naming the
 * image and containing `text` (when not NULL). */
static void expect(const blob *x, size_t n, image_err code, const char *text)
{
    image_error err = { 0 };
    image *img = image_open_mem(x->b, n, "bad.elf", &err);
    cr_assert_null(img, "opened, expected error %d", code);
    cr_assert_eq(err.code, code, "code %d, expected %d: %s", err.code, code, err.msg);
    cr_assert(!strncmp(err.msg, "bad.elf: ", 9), "message \"%s\" does not name the image", err.msg);
    if (text)
        cr_assert(strstr(err.msg, text), "message \"%s\" lacks \"%s\"", err.msg, text);
}

Test(image_errors, cannot_open)
{
    image_error err;
    cr_assert_null(image_open("no/such/file.elf", &err));
    cr_assert_eq(err.code, IMG_EIO);
    cr_assert(strstr(err.msg, "no/such/file.elf: cannot open"), "%s", err.msg);
    cr_assert_null(image_open(".", &err));
    cr_assert_eq(err.code, IMG_EIO);
    cr_assert(strstr(err.msg, "directory"), "%s", err.msg);
    cr_assert_null(image_open("no/such/file.elf", NULL));   /* err is optional */
}

/* A FIFO where an image was: refused at once, not waited on for a writer
 * (the timeout turns a hang into a failure). */
Test(image_errors, fifo_is_refused_without_waiting, .timeout = 10, .init = scratch_make,
     .fini = scratch_remove)
{
    char path[80];
    snprintf(path, sizeof path, "%s/prog", scratch_dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    image_error err;
    image *img = image_open(path, &err);
    cr_assert_null(img);
    cr_assert_eq(err.code, IMG_EIO);
    cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
}

Test(image_errors, not_elf)
{
    blob x = { (uint8_t *)"#!/bin/sh\necho hello\n", 21 };
    expect(&x, x.n, IMG_ENOTELF, "not an ELF file");
    expect(&x, 0, IMG_ENOTELF, NULL);
    blob y = { (uint8_t *)"\177EL", 3 };
    expect(&y, 3, IMG_ENOTELF, NULL);
}

Test(image_errors, not_alpha)
{
    blob x = load("alu-dyn");
    Elf64_Ehdr e = ehdr(&x);
    e.e_machine = EM_X86_64;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ENOTALPHA, "x86-64");
    e.e_machine = 0x1234;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ENOTALPHA, "machine 4660");
    e.e_machine = EM_ALPHA;
    put_ehdr(&x, &e);
    x.b[EI_CLASS] = ELFCLASS32;
    expect(&x, x.n, IMG_ENOTALPHA, "32-bit");
    x.b[EI_CLASS] = ELFCLASS64;
    x.b[EI_DATA] = ELFDATA2MSB;
    expect(&x, x.n, IMG_ENOTALPHA, NULL);
    free(x.b);
}

Test(image_errors, wrong_type)
{
    blob x = load("alu-dyn");
    Elf64_Ehdr e = ehdr(&x);
    e.e_type = ET_REL;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ETYPE, "relocatable");
    e.e_type = ET_CORE;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ETYPE, "core");
    free(x.b);
}

Test(image_errors, truncated)
{
    blob x = load("alu-dyn");
    Elf64_Ehdr e = ehdr(&x);
    expect(&x, 10, IMG_ETRUNC, "identification");
    expect(&x, 40, IMG_ETRUNC, "ELF header");
    expect(&x, e.e_shoff + 100, IMG_ETRUNC, "section headers");
    /* Section data beyond the end. */
    size_t t = find_section(&x, ".text");
    Elf64_Shdr s = shdr(&x, t);
    s.sh_offset = x.n - 8;
    put_shdr(&x, t, &s);
    expect(&x, x.n, IMG_ETRUNC, "past the end");
    s.sh_offset = UINT64_MAX - 4;     /* offset + size overflows */
    put_shdr(&x, t, &s);
    expect(&x, x.n, IMG_ETRUNC, "past the end");
    free(x.b);

    x = load("alu-dyn");
    e = ehdr(&x);
    e.e_phoff = x.n - 60;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ETRUNC, "program headers");
    free(x.b);
}

Test(image_errors, no_section_headers)
{
    blob x = load("alu-dyn");
    Elf64_Ehdr e = ehdr(&x);
    Elf64_Ehdr keep = e;
    e.e_shoff = 0;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ENOSHDR, "no section headers");
    e = keep;
    e.e_shnum = 0;                    /* and section 0's sh_size is 0 */
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ENOSHDR, NULL);
    free(x.b);
}

/* One damage at a time, each restored before the next. */
Test(image_errors, corrupt_tables)
{
    blob x = load("alu-dyn");
    Elf64_Ehdr e0 = ehdr(&x), e = e0;
    size_t symtab = find_section(&x, ".symtab"), text = find_section(&x, ".text");
    size_t rela = find_section(&x, ".rela.text"), note = find_section(&x, ".note.gnu.build-id");

    e.e_shentsize = 40;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ECORRUPT, "section header size");
    e = e0, e.e_shstrndx = e0.e_shnum + 5;
    put_ehdr(&x, &e);
    expect(&x, x.n, IMG_ECORRUPT, "name table index");
    put_ehdr(&x, &e0);

#define DAMAGE(idx, field, value, text) do { \
        Elf64_Shdr s0 = shdr(&x, idx), s = s0; \
        s.field = value; \
        put_shdr(&x, idx, &s); \
        expect(&x, x.n, IMG_ECORRUPT, text); \
        put_shdr(&x, idx, &s0); \
    } while (0)
    DAMAGE(symtab, sh_link, e0.e_shnum + 3, "link");
    DAMAGE(symtab, sh_link, text, "not a string table");
    DAMAGE(symtab, sh_entsize, 23, "entry size");
    DAMAGE(symtab, sh_size, shdr(&x, symtab).sh_size - 5, "entry size");
    DAMAGE(rela, sh_entsize, 16, "entry size");
    DAMAGE(rela, sh_info, 9999, "target section");
    DAMAGE(rela, sh_link, text, "not a symbol table");
    DAMAGE(1, sh_name, 0xfffffff, "name offset");
    DAMAGE(e0.e_shstrndx, sh_type, SHT_PROGBITS, "not a string table");

    /* Bytes inside tables. */
    Elf64_Shdr st = shdr(&x, e0.e_shstrndx);
    uint8_t keep = x.b[st.sh_offset + st.sh_size - 1];
    x.b[st.sh_offset + st.sh_size - 1] = 'x';
    expect(&x, x.n, IMG_ECORRUPT, "NUL-terminated");
    x.b[st.sh_offset + st.sh_size - 1] = keep;

    Elf64_Shdr sy = shdr(&x, symtab);
    Elf64_Sym sym0, sym;
    memcpy(&sym0, x.b + sy.sh_offset + sizeof sym, sizeof sym);
    sym = sym0, sym.st_name = 0xffffff;
    memcpy(x.b + sy.sh_offset + sizeof sym, &sym, sizeof sym);
    expect(&x, x.n, IMG_ECORRUPT, "name offset");
    sym = sym0, sym.st_shndx = 0xfe00;
    memcpy(x.b + sy.sh_offset + sizeof sym, &sym, sizeof sym);
    expect(&x, x.n, IMG_ECORRUPT, "section index");
    memcpy(x.b + sy.sh_offset + sizeof sym, &sym0, sizeof sym);

    Elf64_Shdr rs = shdr(&x, rela);
    Elf64_Rela r0, r;
    memcpy(&r0, x.b + rs.sh_offset, sizeof r);
    r = r0, r.r_info = ELF64_R_INFO(0xffffff, R_ALPHA_BRADDR);
    memcpy(x.b + rs.sh_offset, &r, sizeof r);
    expect(&x, x.n, IMG_ECORRUPT, "symbol index");
    memcpy(x.b + rs.sh_offset, &r0, sizeof r);

    Elf64_Shdr ns = shdr(&x, note);
    uint32_t dsz = 0x1000, keepd;
    memcpy(&keepd, x.b + ns.sh_offset + 4, 4);
    memcpy(x.b + ns.sh_offset + 4, &dsz, 4);
    expect(&x, x.n, IMG_ECORRUPT, "overruns");
    memcpy(x.b + ns.sh_offset + 4, &keepd, 4);

    /* Everything restored: it opens again. */
    image_error err;
    image *img = image_open_mem(x.b, x.n, "good.elf", &err);
    cr_assert_not_null(img, "%s", err.msg);
    image_close(img);
    free(x.b);
}

/* strip renumbers the sections but not the indices in the loaded .dynsym:
 * a stale index (out of range, or naming a section that does not hold the
 * symbol) gives way to the section at the symbol's address, or to SHN_ABS
 * when none holds it; in .symtab the same is an error (corrupt_tables). */
Test(image_errors, stale_dynsym_indices)
{
    blob x = load("alu-dyn");
    size_t dyn = find_section(&x, ".dynsym"), comment = find_section(&x, ".comment");
    Elf64_Shdr ds = shdr(&x, dyn);
    size_t n = ds.sh_size / sizeof(Elf64_Sym), k = 0;
    Elf64_Sym sym;
    for (size_t i = 1; i < n && !k; i++) {
        memcpy(&sym, x.b + ds.sh_offset + i * sizeof sym, sizeof sym);
        if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE && sym.st_value)
            k = i;
    }
    cr_assert(k, "no defined symbol in .dynsym");
    uint16_t home = sym.st_shndx, far = (uint16_t)(ehdr(&x).e_shnum + 5);
    uint16_t stale[] = { far, (uint16_t)comment, far };
    for (size_t v = 0; v < 3; v++) {
        Elf64_Sym y = sym;
        y.st_shndx = stale[v];
        if (v == 2)
            y.st_value = 0x7000000000;    /* in no section */
        memcpy(x.b + ds.sh_offset + k * sizeof y, &y, sizeof y);
        image_error err = { 0 };
        image *img = image_open_mem(x.b, x.n, "stripped.elf", &err);
        cr_assert_not_null(img, "%s", err.msg);
        const image_symbol *got = &img->symbols[img->nsymbols - n + k];
        cr_assert(got->dynamic && got->value == y.st_value);
        cr_assert_eq(got->shndx, v < 2 ? home : SHN_ABS, "case %zu: section %u", v, got->shndx);
        image_close(img);
    }
    free(x.b);
}

Test(image_errors, no_relocations)
{
    blob x = load("alu-dyn");
    Elf64_Ehdr e = ehdr(&x);
    for (size_t i = 1; i < e.e_shnum; i++) {
        Elf64_Shdr s = shdr(&x, i);
        if (s.sh_type == SHT_RELA && !(s.sh_flags & SHF_ALLOC)) {
            s.sh_type = SHT_PROGBITS;
            put_shdr(&x, i, &s);
        }
    }
    image_error err = { 0 };
    image *img = image_open_mem(x.b, x.n, "norel.elf", &err);
    cr_assert_not_null(img, "%s", err.msg);
    cr_assert(!image_has_text_relocs(img));
    cr_assert(!image_require_relocs(img, &err));
    cr_assert_eq(err.code, IMG_ENORELOCS);
    cr_assert_str_eq(err.msg, "norel.elf: no relocations for .text: link with -Wl,--emit-relocs");
    /* GP still comes from the entry point's code. */
    cr_assert(img->has_gp);
    cr_assert_eq(image_gp_count(img), 0);
    image *orig = image_open_mem(x.b, 0, "x", NULL);
    cr_assert_null(orig);
    image_close(img);
    free(x.b);
}

/* Cut and scramble a real file many ways: errors, never crashes. */
static void exercise(const image *img)
{
    char buf[256];
    const image_symbol *const *f;
    size_t n = image_functions(img, &f);
    for (size_t i = 0; i < n && i < 50; i++) {
        image_symbolize(img, f[i]->value + 4, buf, sizeof buf);
        image_function_at(img, f[i]->value + 4);
    }
    image_symbolize(img, img->entry, buf, sizeof buf);
    image_symbol_by_name(img, "main");
    image_has_text_relocs(img);
}

Test(image_errors, truncation_sweep)
{
    blob x = load("alu-static");
    size_t step = x.n / 997 + 1;
    for (size_t n = 0; n < x.n; n += step) {
        image_error err;
        image *img = image_open_mem(x.b, n, "cut.elf", &err);
        if (img) {
            exercise(img);
            image_close(img);
        } else {
            cr_assert_neq(err.code, IMG_OK);
            cr_assert(!strncmp(err.msg, "cut.elf: ", 9), "%s", err.msg);
        }
    }
    free(x.b);
}

Test(image_errors, byte_flips)
{
    blob x = load("alu-dyn");
    uint8_t *work = malloc(x.n);
    uint32_t seed = 12345;
    Elf64_Ehdr e = ehdr(&x);
    size_t opened = 0;
    for (int round = 0; round < 400; round++) {
        memcpy(work, x.b, x.n);
        for (int k = 0; k < 8; k++) {
            seed = seed * 1103515245 + 12345;
            size_t at;
            /* Aim half the flips at the headers, where they matter most. */
            if (k & 1)
                at = e.e_shoff + (seed >> 8) % (e.e_shnum * sizeof(Elf64_Shdr));
            else
                at = (seed >> 8) % x.n;
            work[at] ^= (uint8_t)(1u << (seed >> 4) % 8);
        }
        image_error err;
        image *img = image_open_mem(work, x.n, "flip.elf", &err);
        if (img) {
            exercise(img);
            opened++;
            image_close(img);
        } else {
            cr_assert(!strncmp(err.msg, "flip.elf: ", 9), "%s", err.msg);
        }
    }
    cr_assert_gt(opened, 0);
    free(work);
    free(x.b);
}
