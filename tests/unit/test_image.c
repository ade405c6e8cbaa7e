/*
 * image/: reading real Alpha programs (build/programs/, made by
 * `make programs`; the tests skip when they are missing).  The figures
 * checked are the ones readelf and objdump agree on; the integration test
 * image_readelf.sh compares whole tables.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"

static image *open_program(const char *name)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[512];
    snprintf(path, sizeof path, "%s/programs/%s", build, name);
    image_error err;
    image *img = image_open(path, &err);
    if (!img) {
        if (err.code == IMG_EIO)
            cr_skip_test("%s missing: run `make programs`", path);
        cr_assert_fail("%s", err.msg);
    }
    return img;
}

static uint32_t word(const image *img, uint64_t addr)
{
    const uint8_t *p = image_bytes_at(img, addr, 4);
    cr_assert_not_null(p, "no bytes at %llx", (unsigned long long)addr);
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

Test(image, dynamic_program)
{
    image *img = open_program("alu-dyn");
    cr_assert_eq(img->type, ET_EXEC);
    cr_assert_str_eq(img->interp, "/lib/ld-linux.so.2");
    cr_assert_eq(img->build_id_len, 20);
    char hex[129];
    cr_assert_eq(strlen(image_build_id_hex(img, hex, sizeof hex)), 40);

    const image_symbol *start = image_symbol_by_name(img, "_start");
    cr_assert_not_null(start);
    cr_assert_eq(start->value, img->entry);
    cr_assert_eq(start->other & IMAGE_STO_ALPHA_MASK, IMAGE_STO_ALPHA_NOPV);
    const image_symbol *m = image_symbol_by_name(img, "main");
    cr_assert_not_null(m);
    cr_assert_eq(m->type, STT_FUNC);
    cr_assert_eq(m->bind, STB_GLOBAL);
    cr_assert_eq(m->other & IMAGE_STO_ALPHA_MASK, IMAGE_STO_ALPHA_STD_GPLOAD);
    cr_assert(!m->dynamic);
    cr_assert_str_eq(img->sections[m->shndx].name, ".text");
    cr_assert_null(image_symbol_by_name(img, "no_such_symbol"));

    /* main starts with ldah gp,hi(pv); lda gp,lo(gp): GP must agree. */
    uint32_t hi = word(img, m->value), lo = word(img, m->value + 4);
    cr_assert_eq(hi >> 26, 0x09);
    cr_assert_eq(lo >> 26, 0x08);
    uint64_t gp = m->value + (int64_t)(int16_t)hi * 65536 + (int16_t)lo;
    cr_assert(img->has_gp);
    cr_assert_eq(img->gp, gp, "gp %llx, main computes %llx", (unsigned long long)img->gp, (unsigned long long)gp);
    cr_assert_not_null(image_gp_source(img));
    cr_assert_eq(image_gp_count(img), 1);

    bool needed = false;
    for (size_t i = 0; i < img->ndyn; i++)
        needed |= img->dyn[i].tag == DT_NEEDED;
    cr_assert(needed);
    cr_assert_gt(img->nsegments, 2);
    image_close(img);
}

Test(image, sections_and_bytes)
{
    image *img = open_program("alu-dyn");
    for (size_t i = 0; i < img->nsections; i++)
        cr_assert_eq(img->sections[i].index, i);
    const image_section *text = image_section_by_name(img, ".text");
    cr_assert_not_null(text);
    cr_assert_eq(image_section_at(img, text->addr), text);
    cr_assert_eq(image_section_at(img, text->addr + text->size - 1), text);
    cr_assert_neq(image_section_at(img, text->addr + text->size), text);
    cr_assert_eq(image_bytes_at(img, text->addr, text->size), text->data);
    cr_assert_null(image_bytes_at(img, text->addr, text->size + 1));
    cr_assert_null(image_section_at(img, 0));
    cr_assert_null(image_section_by_name(img, ".nonexistent"));
    const image_section *bss = image_section_by_name(img, ".sbss");
    if (bss && bss->type == SHT_NOBITS) {
        cr_assert_null(bss->data);
        cr_assert_null(image_bytes_at(img, bss->addr, 1));
    }
    image_close(img);
}

Test(image, functions)
{
    image *img = open_program("alu-static");
    const image_symbol *const *f;
    size_t n = image_functions(img, &f);
    cr_assert_gt(n, 100);
    for (size_t i = 0; i < n; i++) {
        cr_assert(f[i]->type == STT_FUNC || f[i]->type == STT_GNU_IFUNC);
        cr_assert_neq(f[i]->shndx, SHN_UNDEF);
        if (i)
            cr_assert_gt(f[i]->value, f[i - 1]->value, "functions not sorted/unique at %zu", i);
        if (f[i]->size)
            cr_assert_eq(image_function_at(img, f[i]->value + f[i]->size - 1), f[i], "%s", f[i]->name);
        cr_assert_eq(image_function_at(img, f[i]->value), f[i], "%s", f[i]->name);
    }
    const image_symbol *loop = image_symbol_by_name(img, "alu_loop");
    cr_assert_not_null(loop);
    cr_assert_eq(loop->bind, STB_LOCAL);
    cr_assert_eq(image_function_at(img, loop->value + 8), loop);
    cr_assert_null(image_function_at(img, 0x1000));
    image_close(img);
}

Test(image, symbolize)
{
    image *img = open_program("alu-dyn");
    const image_symbol *m = image_symbol_by_name(img, "main");
    char buf[128];
    cr_assert(image_symbolize(img, m->value, buf, sizeof buf));
    cr_assert_str_eq(buf, "main");
    cr_assert(image_symbolize(img, m->value + 0x28, buf, sizeof buf));
    cr_assert_str_eq(buf, "main+0x28");
    /* _start and __start share an address: objdump names the global one. */
    cr_assert(image_symbolize(img, img->entry + 4, buf, sizeof buf));
    cr_assert_str_eq(buf, "_start+0x4");
    /* Too small a buffer is reported, not overrun. */
    cr_assert(!image_symbolize(img, m->value + 0x28, buf, 5));
    image_close(img);
}

Test(image, relocations)
{
    image *img = open_program("alu-static");
    cr_assert(image_has_text_relocs(img));
    image_error err = { 0 };
    cr_assert(image_require_relocs(img, &err));
    const image_section *text = image_section_by_name(img, ".text");
    size_t gpdisp = 0, total = 0;
    bool found = false;
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *r = &img->relsecs[i];
        cr_assert_lt(r->target, img->nsections);
        if (r->target != text->index)
            continue;
        found = true;
        cr_assert_str_eq(r->name, ".rela.text");
        cr_assert(!r->dynamic);
        for (size_t k = 0; k < r->count; k++) {
            const image_reloc *x = &r->relocs[k];
            cr_assert_not_null(image_reloc_name(x->type), "type %u", x->type);
            cr_assert_not_null(x->symname);
            if (x->type == R_ALPHA_GPDISP) {
                gpdisp++;
                cr_assert_eq(word(img, x->offset) >> 26, 0x09, "GPDISP not on an ldah at %llx",
                             (unsigned long long)x->offset);
            }
            if (x->type == R_ALPHA_BRADDR && x->sym && img->symbols[x->sym].type != STT_SECTION) {
                /* The branch displacement must reach S + A.  (Not for
                 * section symbols: ld leaves their addends relative to the
                 * input section; docs/image.md.) */
                uint32_t w = word(img, x->offset);
                int64_t d = (int64_t)((w & 0x1fffff) ^ 0x100000) - 0x100000;
                cr_assert_eq(x->offset + 4 + 4 * d, x->symvalue + x->addend);
            }
        }
        total += r->count;
    }
    cr_assert(found);
    cr_assert_gt(gpdisp, 100);
    cr_assert_gt(total, 1000);
    cr_assert_null(img->interp);
    cr_assert(img->has_gp);
    image_close(img);
}

Test(image, reloc_names)
{
    static const uint32_t all[] = {
        R_ALPHA_NONE, R_ALPHA_REFLONG, R_ALPHA_REFQUAD, R_ALPHA_GPREL32, R_ALPHA_LITERAL,
        R_ALPHA_LITUSE, R_ALPHA_GPDISP, R_ALPHA_BRADDR, R_ALPHA_HINT, R_ALPHA_SREL16,
        R_ALPHA_SREL32, R_ALPHA_SREL64, R_ALPHA_GPRELHIGH, R_ALPHA_GPRELLOW, R_ALPHA_GPREL16,
        R_ALPHA_COPY, R_ALPHA_GLOB_DAT, R_ALPHA_JMP_SLOT, R_ALPHA_RELATIVE, R_ALPHA_BRSGP,
        R_ALPHA_TLSGD, R_ALPHA_TLSLDM, R_ALPHA_DTPMOD64, R_ALPHA_GOTDTPREL, R_ALPHA_DTPREL64,
        R_ALPHA_DTPRELHI, R_ALPHA_DTPRELLO, R_ALPHA_DTPREL16, R_ALPHA_GOTTPREL, R_ALPHA_TPREL64,
        R_ALPHA_TPRELHI, R_ALPHA_TPRELLO, R_ALPHA_TPREL16,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cr_assert_not_null(image_reloc_name(all[i]), "type %u", all[i]);
    cr_assert_str_eq(image_reloc_name(R_ALPHA_GPDISP), "GPDISP");
    cr_assert_str_eq(image_reloc_name(R_ALPHA_BRSGP), "BRSGP");
    cr_assert_str_eq(image_reloc_name(R_ALPHA_TPREL16), "TPREL16");
    cr_assert_null(image_reloc_name(12));
    cr_assert_null(image_reloc_name(42));
    cr_assert_null(image_reloc_name(0xffffffff));
}

Test(image, source_lines)
{
    image *img = open_program("alu-dyn");
    const image_symbol *m = image_symbol_by_name(img, "main");
    const char *file = NULL, *fn = NULL;
    unsigned line = 0;
    cr_assert(image_source_line(img, m->value + 8, &file, &line, &fn));
    cr_assert_gt(line, 0);
    size_t len = strlen(file);
    cr_assert(len >= 5 && !strcmp(file + len - 5, "alu.c"), "file %s", file);
    cr_assert_str_eq(fn, "main");
    /* A second query reuses the open handle. */
    cr_assert(image_source_line(img, m->value, &file, &line, NULL));
    cr_assert(!image_source_line(img, 0x10, &file, &line, &fn));
    image_close(img);
}

Test(image, open_mem_matches_open)
{
    image *a = open_program("alu-dyn");
    image_error err;
    image *b = image_open_mem(a->file, a->file_size, "copy", &err);
    cr_assert_not_null(b, "%s", err.msg);
    cr_assert_eq(a->nsymbols, b->nsymbols);
    cr_assert_eq(a->nrelsecs, b->nrelsecs);
    cr_assert_eq(a->gp, b->gp);
    cr_assert_str_eq(b->path, "copy");
    cr_assert_neq(a->file, b->file);
    const char *file;
    unsigned line;
    cr_assert(image_source_line(b, image_symbol_by_name(b, "main")->value, &file, &line, NULL));
    image_close(a);
    image_close(b);
}
