/*
 * image/relocs.c: every SHT_RELA and SHT_REL section, resolved against its
 * symbol table.
 *
 * Static relocations (kept by -Wl,--emit-relocs, sections without
 * SHF_ALLOC) are what the rewriter needs: without those for .text it cannot
 * move code safely, and image_require_relocs says so.  Dynamic ones
 * (.rela.dyn, .rela.plt: SHF_ALLOC) are read the same way.
 */
#include <elf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "image/internal.h"

bool img_read_relocs(image *img, Elf *elf, image_error *err)
{
    const struct image_private *pv = img->priv;
    size_t n = 0;
    for (size_t i = 1; i < img->nsections; i++)
        n += img->sections[i].type == SHT_RELA || img->sections[i].type == SHT_REL;
    img->relsecs = calloc(n ? n : 1, sizeof *img->relsecs);
    if (!img->relsecs)
        return img_fail(err, IMG_ENOMEM, img->path, "out of memory");
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if (s->type != SHT_RELA && s->type != SHT_REL)
            continue;
        bool rela = s->type == SHT_RELA;
        size_t es = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
        if (s->entsize != es || s->size % es)
            return img_fail(err, IMG_ECORRUPT, img->path, "relocation section %s: entry size %llu, size %llu (entries are %zu bytes)",
                            s->name, (unsigned long long)s->entsize, (unsigned long long)s->size, es);
        if (s->info >= img->nsections)
            return img_fail(err, IMG_ECORRUPT, img->path, "relocation section %s: target section %u out of range (%zu sections)",
                            s->name, s->info, img->nsections);
        size_t base = 0, nsym = 0;
        if (s->link) {
            const image_section *t = &img->sections[s->link];   /* link < nsections: open.c */
            if (t->type != SHT_SYMTAB && t->type != SHT_DYNSYM)
                return img_fail(err, IMG_ECORRUPT, img->path, "relocation section %s: link %u (%s) is not a symbol table",
                                s->name, s->link, t->name);
            base = pv->symbase[s->link];
            nsym = t->size / sizeof(Elf64_Sym);
        }
        image_relsec *r = &img->relsecs[img->nrelsecs++];
        r->name = s->name;
        r->index = i;
        r->target = s->info;
        r->dynamic = (s->flags & SHF_ALLOC) != 0;
        size_t cnt = s->size / es;
        if (!cnt)
            continue;
        Elf_Data *d = elf_getdata(elf_getscn(elf, i), NULL);
        if (!d || d->d_size < s->size)
            return img_fail(err, IMG_ECORRUPT, img->path, "relocation section %s: %s", s->name, elf_errmsg(-1));
        r->relocs = calloc(cnt, sizeof *r->relocs);
        if (!r->relocs)
            return img_fail(err, IMG_ENOMEM, img->path, "out of memory for %zu relocations", cnt);
        r->count = cnt;
        for (size_t k = 0; k < cnt; k++) {
            uint64_t off, info;
            int64_t add = 0;
            if (rela) {
                GElf_Rela e;
                if (!gelf_getrela(d, k, &e))
                    return img_fail(err, IMG_ECORRUPT, img->path, "relocation %zu of %s: %s", k, s->name, elf_errmsg(-1));
                off = e.r_offset, info = e.r_info, add = e.r_addend;
            } else {
                GElf_Rel e;
                if (!gelf_getrel(d, k, &e))
                    return img_fail(err, IMG_ECORRUPT, img->path, "relocation %zu of %s: %s", k, s->name, elf_errmsg(-1));
                off = e.r_offset, info = e.r_info;
            }
            image_reloc *x = &r->relocs[k];
            x->offset = off;
            x->type = GELF_R_TYPE(info);
            x->sym = GELF_R_SYM(info);
            x->addend = add;
            x->symname = "";
            if (x->sym) {
                if (x->sym >= nsym)
                    return img_fail(err, IMG_ECORRUPT, img->path,
                                    "relocation %zu of %s: symbol index %u out of range (%zu symbols)",
                                    k, s->name, x->sym, nsym);
                const image_symbol *y = &img->symbols[base + x->sym];
                x->symvalue = y->value;
                x->symname = y->name;
            }
        }
    }
    return true;
}

bool image_has_text_relocs(const image *img)
{
    const image_section *text = image_section_by_name(img, ".text");
    for (size_t i = 0; i < img->nrelsecs; i++) {
        const image_relsec *r = &img->relsecs[i];
        if (r->dynamic || !r->count || r->target >= img->nsections)
            continue;
        const image_section *t = &img->sections[r->target];
        if (text ? t == text : (t->flags & SHF_EXECINSTR) != 0)
            return true;
    }
    return false;
}

bool image_require_relocs(const image *img, image_error *err)
{
    if (image_has_text_relocs(img))
        return true;
    /* strip removes the relocations --emit-relocs kept, with the symbols. */
    if (!image_section_by_name(img, ".symtab"))
        return img_fail(err, IMG_ENORELOCS, img->path,
                        "no relocations for .text and no symbol table (stripped?): link with "
                        "-Wl,--emit-relocs and keep the symbols");
    return img_fail(err, IMG_ENORELOCS, img->path, "no relocations for .text: link with -Wl,--emit-relocs");
}

const char *image_reloc_name(uint32_t type)
{
    static const char *const names[] = {
        [R_ALPHA_NONE] = "NONE", [R_ALPHA_REFLONG] = "REFLONG", [R_ALPHA_REFQUAD] = "REFQUAD",
        [R_ALPHA_GPREL32] = "GPREL32", [R_ALPHA_LITERAL] = "LITERAL", [R_ALPHA_LITUSE] = "LITUSE",
        [R_ALPHA_GPDISP] = "GPDISP", [R_ALPHA_BRADDR] = "BRADDR", [R_ALPHA_HINT] = "HINT",
        [R_ALPHA_SREL16] = "SREL16", [R_ALPHA_SREL32] = "SREL32", [R_ALPHA_SREL64] = "SREL64",
        [R_ALPHA_GPRELHIGH] = "GPRELHIGH", [R_ALPHA_GPRELLOW] = "GPRELLOW",
        [R_ALPHA_GPREL16] = "GPREL16", [R_ALPHA_COPY] = "COPY", [R_ALPHA_GLOB_DAT] = "GLOB_DAT",
        [R_ALPHA_JMP_SLOT] = "JMP_SLOT", [R_ALPHA_RELATIVE] = "RELATIVE", [R_ALPHA_BRSGP] = "BRSGP",
        [R_ALPHA_TLSGD] = "TLSGD", [R_ALPHA_TLSLDM] = "TLSLDM", [R_ALPHA_DTPMOD64] = "DTPMOD64",
        [R_ALPHA_GOTDTPREL] = "GOTDTPREL", [R_ALPHA_DTPREL64] = "DTPREL64",
        [R_ALPHA_DTPRELHI] = "DTPRELHI", [R_ALPHA_DTPRELLO] = "DTPRELLO",
        [R_ALPHA_DTPREL16] = "DTPREL16", [R_ALPHA_GOTTPREL] = "GOTTPREL",
        [R_ALPHA_TPREL64] = "TPREL64", [R_ALPHA_TPRELHI] = "TPRELHI", [R_ALPHA_TPRELLO] = "TPRELLO",
        [R_ALPHA_TPREL16] = "TPREL16",
    };
    return type < sizeof names / sizeof names[0] ? names[type] : NULL;
}
