/*
 * rewriter/elfout.c: writing the new executable.
 *
 * We write the ELF bytes ourselves rather than through libelf: the output is
 * the input file, patched in place, plus one new loadable segment and a few
 * sections, and libelf's layout engine would want to move what must stay
 * put.  The new segment goes above everything the image maps (so brk still
 * starts after it), holds a new program-header table, the new code and the
 * rebuilt unwind tables, and is mapped congruently with the first segment
 * (vaddr - offset equal): loaders that compute AT_PHDR as load address plus
 * e_phoff, as older kernels and qemu do, then find the new table.  Sections
 * that are not loaded (symbols, debug information) move after the segment.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"
#include "rewriter/internal.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return a > 1 ? (v + a - 1) & ~(a - 1) : v;
}

static const Elf64_Ehdr *ehdr(const rw_ctx *cx)
{
    return (const Elf64_Ehdr *)cx->img->file;
}

/* End of the file bytes something loaded lives in. */
static uint64_t alloc_end(const rw_ctx *cx)
{
    uint64_t end = 0;
    const image *img = cx->img;
    for (size_t i = 0; i < img->nsegments; i++)
        if (img->segments[i].type == PT_LOAD && img->segments[i].offset + img->segments[i].filesz > end)
            end = img->segments[i].offset + img->segments[i].filesz;
    for (size_t i = 0; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if ((s->flags & SHF_ALLOC) && s->type != SHT_NOBITS && s->offset + s->size > end)
            end = s->offset + s->size;
    }
    return end;
}

bool rw_elf_plan(rw_ctx *cx)
{
    const image *img = cx->img;
    const Elf64_Ehdr *eh = ehdr(cx);
    if (img->file_size < sizeof *eh || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum >= SHN_LORESERVE ||
        eh->e_shstrndx >= eh->e_shnum)
        return rw_fail(cx, "%s: unusual ELF header (entry sizes, section count): not supported",
                       img->path);
    uint64_t base = UINT64_MAX, top = 0, align = 0x2000;
    for (size_t i = 0; i < img->nsegments; i++) {
        const image_segment *s = &img->segments[i];
        if (s->type != PT_LOAD)
            continue;
        if (s->vaddr - s->offset < base)
            base = s->vaddr - s->offset;
        if (s->vaddr + s->memsz > top)
            top = s->vaddr + s->memsz;
        if (s->align > align)
            align = s->align;
    }
    if (base == UINT64_MAX)
        return rw_fail(cx, "%s: no loadable segment", img->path);
    cx->base = base;
    cx->seg_addr = align_up(top, align);
    cx->seg_off = cx->seg_addr - base;
    if (cx->seg_off < alloc_end(cx))
        return rw_fail(cx, "%s: loadable contents lie above their addresses: not supported", img->path);
    cx->phnum = (size_t)eh->e_phnum + 1;
    cx->text_addr = align_up(cx->seg_addr + cx->phnum * sizeof(Elf64_Phdr), 32);
    return true;
}

/* ---- section names ------------------------------------------------------- */

typedef struct strtab {
    char *s;
    size_t n, cap;
} strtab;

static uint32_t str_add(strtab *t, const char *name)
{
    size_t len = strlen(name) + 1;
    if (t->n + len > t->cap) {
        size_t cap = (t->cap + len) * 2;
        char *s = realloc(t->s, cap);
        if (!s)
            return UINT32_MAX;
        t->s = s;
        t->cap = cap;
    }
    memcpy(t->s + t->n, name, len);
    t->n += len;
    return (uint32_t)(t->n - len);
}

static bool pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
    return true;
}

bool rw_elf_write(rw_ctx *cx, const char *path)
{
    const image *img = cx->img;
    Elf64_Ehdr eh;
    memcpy(&eh, cx->out, sizeof eh);      /* e_entry already patched */
    size_t nsec = eh.e_shnum;
    const Elf64_Shdr *oshdr = (const Elf64_Shdr *)(img->file + eh.e_shoff);
    if (eh.e_shoff + nsec * sizeof(Elf64_Shdr) > img->file_size)
        return rw_fail(cx, "%s: section headers beyond the end of the file", img->path);

    /* The new segment: program headers, code, unwind tables. */
    uint64_t seg_end = cx->text_addr + cx->text_size;
    if (cx->eh)
        seg_end = cx->ehhdr_addr + cx->ehhdr_size;
    if (cx->gxt_size)
        seg_end = cx->gxt_addr + cx->gxt_size;
    uint64_t segsz = seg_end - cx->seg_addr;
    cx->st->seg_size = segsz;

    Elf64_Phdr *ph = calloc(cx->phnum, sizeof *ph);
    Elf64_Shdr *sh = calloc(nsec + 5, sizeof *sh);
    strtab names = { 0 };
    uint8_t *note = NULL, *amap = NULL;
    int fd = -1;
    bool ok = false;
    if (!ph || !sh)
        goto oom;
    const Elf64_Phdr *oph = (const Elf64_Phdr *)(img->file + eh.e_phoff);
    size_t last_load = 0, k = 0;
    for (size_t i = 0; i < eh.e_phnum; i++)
        if (oph[i].p_type == PT_LOAD)
            last_load = i;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr p = oph[i];
        if (p.p_type == PT_PHDR) {
            p.p_offset = cx->seg_off;
            p.p_vaddr = p.p_paddr = cx->seg_addr;
            p.p_filesz = p.p_memsz = cx->phnum * sizeof *ph;
        } else if (p.p_type == PT_GNU_EH_FRAME && cx->ehhdr) {
            p.p_offset = cx->seg_off + (cx->ehhdr_addr - cx->seg_addr);
            p.p_vaddr = p.p_paddr = cx->ehhdr_addr;
            p.p_filesz = p.p_memsz = cx->ehhdr_size;
        }
        ph[k++] = p;
        if (i == last_load) {
            uint64_t al = p.p_align > 0x2000 ? p.p_align : 0x2000;
            ph[k++] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, cx->seg_off, cx->seg_addr, cx->seg_addr,
                                    segsz, segsz, al };
        }
    }

    /* Non-loaded sections move after the segment, in file order. */
    uint64_t aend = 0;
    for (size_t i = 0; i < img->nsegments; i++)
        if (img->segments[i].type == PT_LOAD && img->segments[i].offset + img->segments[i].filesz > aend)
            aend = img->segments[i].offset + img->segments[i].filesz;
    for (size_t i = 0; i < nsec; i++)
        if ((oshdr[i].sh_flags & SHF_ALLOC) && oshdr[i].sh_type != SHT_NOBITS &&
            oshdr[i].sh_offset + oshdr[i].sh_size > aend)
            aend = oshdr[i].sh_offset + oshdr[i].sh_size;
    uint64_t off = cx->seg_off + segsz;
    for (size_t i = 0; i < nsec; i++) {
        sh[i] = oshdr[i];
        if (i && !(sh[i].sh_flags & SHF_ALLOC) && sh[i].sh_type != SHT_NOBITS &&
            sh[i].sh_offset >= aend && i != eh.e_shstrndx) {
            off = align_up(off, sh[i].sh_addralign ? sh[i].sh_addralign : 1);
            sh[i].sh_offset = off;
            off += sh[i].sh_size;
        }
    }
    /* Names: the old unwind tables are kept, renamed; new sections added. */
    const char *oldnames = (const char *)img->file + oshdr[eh.e_shstrndx].sh_offset;
    uint64_t oldnsz = oshdr[eh.e_shstrndx].sh_size;
    str_add(&names, "");
    for (size_t i = 0; i < nsec; i++) {
        const char *n = oshdr[i].sh_name < oldnsz ? oldnames + oshdr[i].sh_name : "";
        if (cx->eh && !strcmp(n, ".eh_frame"))
            n = ".cpo.orig.eh_frame";
        else if (cx->ehhdr && !strcmp(n, ".eh_frame_hdr"))
            n = ".cpo.orig.eh_frame_hdr";
        sh[i].sh_name = i ? str_add(&names, n) : 0;
    }
    size_t ns = nsec;
    sh[ns++] = (Elf64_Shdr){ str_add(&names, ".cpo.text"), SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
                             cx->text_addr, cx->seg_off + (cx->text_addr - cx->seg_addr),
                             cx->text_size, 0, 0, 32, 0 };
    if (cx->eh) {
        sh[ns++] = (Elf64_Shdr){ str_add(&names, ".eh_frame"), SHT_PROGBITS, SHF_ALLOC, cx->eh_addr,
                                 cx->seg_off + (cx->eh_addr - cx->seg_addr), cx->eh_size, 0, 0, 8, 0 };
        sh[ns++] = (Elf64_Shdr){ str_add(&names, ".eh_frame_hdr"), SHT_PROGBITS, SHF_ALLOC,
                                 cx->ehhdr_addr, cx->seg_off + (cx->ehhdr_addr - cx->seg_addr),
                                 cx->ehhdr_size, 0, 0, 4, 0 };
    }
    if (cx->gxt_size)
        sh[ns++] = (Elf64_Shdr){ str_add(&names, ".cpo.gcc_except_table"), SHT_PROGBITS, SHF_ALLOC,
                                 cx->gxt_addr, cx->seg_off + (cx->gxt_addr - cx->seg_addr),
                                 cx->gxt_size, 0, 0, 8, 0 };
    /* The address map, as one note. */
    size_t amsz;
    amap = addrmap_encode(&cx->am, &amsz);
    if (!amap)
        goto oom;
    size_t notesz = 12 + 4 + ((amsz + 3) & ~(size_t)3);
    note = calloc(1, notesz);
    if (!note)
        goto oom;
    rw_put32(note, sizeof ADDRMAP_NOTE_NAME);
    rw_put32(note + 4, (uint32_t)amsz);
    rw_put32(note + 8, ADDRMAP_NOTE_TYPE);
    memcpy(note + 12, ADDRMAP_NOTE_NAME, sizeof ADDRMAP_NOTE_NAME);
    memcpy(note + 16, amap, amsz);
    off = align_up(off, 8);
    uint64_t note_off = off;
    sh[ns++] = (Elf64_Shdr){ str_add(&names, ADDRMAP_SECTION), SHT_NOTE, 0, 0, note_off, notesz,
                             0, 0, 4, 0 };
    off += notesz;
    uint32_t shstr_name = str_add(&names, ".shstrtab");
    if (!names.s || shstr_name == UINT32_MAX)
        goto oom;
    sh[eh.e_shstrndx].sh_name = shstr_name;
    sh[eh.e_shstrndx].sh_offset = off;
    sh[eh.e_shstrndx].sh_size = names.n;
    uint64_t names_off = off;
    off = align_up(off + names.n, 8);
    eh.e_phoff = cx->seg_off;
    eh.e_phnum = (uint16_t)cx->phnum;
    eh.e_shoff = off;
    eh.e_shnum = (uint16_t)ns;

    /* Write next to the target, then rename: never a half-written file. */
    struct stat in_st, out_st;
    if (stat(path, &out_st) == 0 && stat(img->path, &in_st) == 0 &&
        in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino) {
        rw_fail(cx, "%s: output is the input image; write to a new file", path);
        goto out;
    }
    outfile of;
    char oerr[512];
    if (!outfile_open(&of, path, 0755, oerr, sizeof oerr)) {
        rw_fail(cx, "%s", oerr);
        goto out;
    }
    fd = of.fd;
    bool w = pwrite_all(fd, cx->out, aend, 0) &&
             pwrite_all(fd, ph, cx->phnum * sizeof *ph, cx->seg_off) &&
             pwrite_all(fd, cx->text, cx->text_size, cx->seg_off + (cx->text_addr - cx->seg_addr));
    if (w && cx->eh)
        w = pwrite_all(fd, cx->eh, cx->eh_size, cx->seg_off + (cx->eh_addr - cx->seg_addr)) &&
            pwrite_all(fd, cx->ehhdr, cx->ehhdr_size, cx->seg_off + (cx->ehhdr_addr - cx->seg_addr));
    if (w && cx->gxt_size)
        w = pwrite_all(fd, cx->gxt, cx->gxt_size, cx->seg_off + (cx->gxt_addr - cx->seg_addr));
    for (size_t i = 1; w && i < nsec; i++)
        if (sh[i].sh_offset != oshdr[i].sh_offset && i != eh.e_shstrndx)
            w = pwrite_all(fd, cx->out + oshdr[i].sh_offset, sh[i].sh_size, sh[i].sh_offset);
    w = w && pwrite_all(fd, note, notesz, note_off) &&
        pwrite_all(fd, names.s, names.n, names_off) &&
        pwrite_all(fd, sh, ns * sizeof *sh, eh.e_shoff) &&
        pwrite_all(fd, &eh, sizeof eh, 0);
    fd = -1;
    if (!w) {
        rw_fail(cx, "%s: cannot write: %s", path, strerror(errno));
        outfile_abort(&of);
        goto out;
    }
    if (!outfile_commit(&of, oerr, sizeof oerr)) {
        rw_fail(cx, "%s", oerr);
        goto out;
    }
    ok = true;
    goto out;
oom:
    rw_fail(cx, "out of memory writing %s", path);
out:
    free(ph);
    free(sh);
    free(names.s);
    free(note);
    free(amap);
    return ok;
}
