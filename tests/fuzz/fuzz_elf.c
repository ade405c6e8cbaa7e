/*
 * Fuzz target for image/: any bytes either open as an image or fail with a
 * message naming the input; an opened image must survive every query.
 * Seeds: tests/fuzz/seeds/elf-*.elf (recipe in docs/image.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"

/* libbfd 2.40's DWARF reader leaks one small string per opened image (in
 * its line tables, freed by nothing); that is not ours to fix. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libbfd\n";
}

static volatile uint64_t sink;

static void walk(image *img)
{
    char buf[160];
    image_build_id_hex(img, buf, sizeof buf);
    image_build_id_hex(img, buf, 7);
    sink += img->entry + img->gp + (img->interp ? strlen(img->interp) : 0);
    sink += image_gp_count(img) + (image_gp_source(img) != NULL);
    for (size_t i = 0; i < img->nsegments; i++)
        sink += img->segments[i].vaddr;
    for (size_t i = 0; i < img->ndyn; i++)
        sink += img->dyn[i].val;
    for (size_t i = 0; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        sink += strlen(s->name);
        if (s->data && s->size)
            sink += s->data[0] + s->data[s->size - 1];
        image_section_by_name(img, s->name);
        const image_section *at = image_section_at(img, s->addr);
        if (at)
            image_bytes_at(img, at->addr, at->size);
        image_bytes_at(img, s->addr + s->size - 1, 4);
    }
    for (size_t i = 0; i < img->nsymbols; i++) {
        const image_symbol *y = &img->symbols[i];
        sink += strlen(y->name);
        if (i % 17 == 0) {
            image_symbol_by_name(img, y->name);
            image_symbolize(img, y->value + 4, buf, sizeof buf);
            image_symbolize_from(img, y->value - 4, image_section_at(img, y->value), buf, sizeof buf);
        }
    }
    const image_symbol *const *f;
    size_t n = image_functions(img, &f);
    for (size_t i = 0; i < n; i++) {
        image_function_at(img, f[i]->value);
        image_function_at(img, f[i]->value + f[i]->size);
        if (i < 8)
            image_symbolize(img, f[i]->value + 8, buf, sizeof buf);
    }
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *r = &img->relsecs[i];
        sink += strlen(r->name) + r->target;
        for (size_t k = 0; k < r->count; k++) {
            const image_reloc *x = &r->relocs[k];
            const char *t = image_reloc_name(x->type);
            sink += x->offset + x->addend + x->symvalue + strlen(x->symname) + (t ? strlen(t) : 0);
        }
    }
    image_error err;
    if (!image_require_relocs(img, &err) && strncmp(err.msg, "fuzz: ", 6))
        abort();
    image_symbolize(img, 0, buf, sizeof buf);
    image_symbolize(img, UINT64_MAX, buf, sizeof buf);
    image_function_at(img, UINT64_MAX);

    const char *file, *fn;
    unsigned line;
    image_source_line(img, img->entry, &file, &line, &fn);
    if (n)
        image_source_line(img, f[0]->value + 4, &file, &line, &fn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    image_error err;
    image *img = image_open_mem(data, size, "fuzz", &err);
    if (!img) {
        if (err.code == IMG_OK || strncmp(err.msg, "fuzz: ", 6))
            abort();
        return 0;
    }
    walk(img);
    image_close(img);
    return 0;
}
