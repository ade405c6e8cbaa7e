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
 *
 * A static image has no PT_GNU_EH_FRAME (gcc links it without
 * --eh-frame-hdr): its crtbeginT registers the old .eh_frame with
 * __register_frame_info, which knows only the old addresses.  libgcc looks
 * there first, then through dl_iterate_phdr for a PT_GNU_EH_FRAME, so the
 * output gets one for the new table; without it, unwinding through moved
 * code finds no FDE and aborts.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/outfile.h"
#include "rewriter/internal.h"
#include "rewriter/undo.h"

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

static bool has_eh_hdr_segment(const image *img)
{
    for (size_t i = 0; i < img->nsegments; i++)
        if (img->segments[i].type == PT_GNU_EH_FRAME)
            return true;
    return false;
}

size_t rw_phnum(const image *img)
{
    const image_section *eh = image_section_by_name(img, ".eh_frame");
    bool new_eh = eh && eh->data && eh->size;   /* as rw_eh_analyse decides */
    return img->nsegments + 1 + (new_eh && !has_eh_hdr_segment(img));
}

bool rw_elf_plan(rw_ctx *cx)
{
    const image *img = cx->img;
    const Elf64_Ehdr *eh = ehdr(cx);
    if (img->file_size < sizeof *eh || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum >= SHN_LORESERVE ||
        eh->e_phnum != img->nsegments ||
        eh->e_shstrndx >= eh->e_shnum)
        return rw_fail(cx, "%s: unusual ELF header (entry sizes, section or segment count): not supported",
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
    cx->phnum = rw_phnum(img);
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

bool rw_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
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

/* The output file's headers as they are being put together. */
typedef struct elfw {
    Elf64_Ehdr eh;
    const Elf64_Shdr *oshdr;     /* the input's section headers */
    size_t nsec, ns;             /* input sections; output sections */
    Elf64_Phdr *ph;
    Elf64_Shdr *sh;
    strtab names;
    uint8_t *note, *amap, *undo;
    size_t notesz, undosz;
    uint64_t segsz, aend, off, note_off, undo_off, names_off;
    uint64_t memsz;              /* the new segment's, with the zero pages */
    /* The symbol table and its strings with the cold parts' symbols added
     * (cold_symbols); symsec 0: unchanged. */
    size_t symsec, strsec;
    uint8_t *sym, *str;
    uint64_t symsz, strsz;
} elfw;

/* The input's program headers with PHDR and the unwind table's moved, the
 * new segment after the last PT_LOAD, and PT_GNU_EH_FRAME last if the input
 * had none. */
static void program_headers(const rw_ctx *cx, elfw *w)
{
    const Elf64_Phdr *oph = (const Elf64_Phdr *)(cx->img->file + w->eh.e_phoff);
    size_t last_load = 0, k = 0;
    for (size_t i = 0; i < w->eh.e_phnum; i++)
        if (oph[i].p_type == PT_LOAD)
            last_load = i;
    for (size_t i = 0; i < w->eh.e_phnum; i++) {
        Elf64_Phdr p = oph[i];
        if (p.p_type == PT_PHDR) {
            p.p_offset = cx->seg_off;
            p.p_vaddr = p.p_paddr = cx->seg_addr;
            p.p_filesz = p.p_memsz = cx->phnum * sizeof *w->ph;
        } else if (p.p_type == PT_GNU_EH_FRAME && cx->ehhdr) {
            p.p_offset = cx->seg_off + (cx->ehhdr_addr - cx->seg_addr);
            p.p_vaddr = p.p_paddr = cx->ehhdr_addr;
            p.p_filesz = p.p_memsz = cx->ehhdr_size;
        }
        w->ph[k++] = p;
        if (i == last_load) {
            uint64_t al = p.p_align > 0x2000 ? p.p_align : 0x2000;
            /* Instrumented: the counters and the shadow stack live in it too. */
            uint32_t fl = cx->ins ? PF_R | PF_W | PF_X : PF_R | PF_X;
            w->ph[k++] = (Elf64_Phdr){ PT_LOAD, fl, cx->seg_off, cx->seg_addr, cx->seg_addr,
                                       w->segsz, w->memsz, al };
        }
    }
    if (k < cx->phnum && cx->ehhdr)
        w->ph[k++] = (Elf64_Phdr){ PT_GNU_EH_FRAME, PF_R, cx->seg_off + (cx->ehhdr_addr - cx->seg_addr),
                                   cx->ehhdr_addr, cx->ehhdr_addr, cx->ehhdr_size,
                                   cx->ehhdr_size, 4 };
}

/* Where the loaded part of the input ends. */
static void loaded_end(const rw_ctx *cx, elfw *w)
{
    const image *img = cx->img;
    w->aend = 0;
    for (size_t i = 0; i < img->nsegments; i++)
        if (img->segments[i].type == PT_LOAD && img->segments[i].offset + img->segments[i].filesz > w->aend)
            w->aend = img->segments[i].offset + img->segments[i].filesz;
    for (size_t i = 0; i < w->nsec; i++)
        if ((w->oshdr[i].sh_flags & SHF_ALLOC) && w->oshdr[i].sh_type != SHT_NOBITS &&
            w->oshdr[i].sh_offset + w->oshdr[i].sh_size > w->aend)
            w->aend = w->oshdr[i].sh_offset + w->oshdr[i].sh_size;
}

static bool moves(const elfw *w, size_t i)
{
    return undo_section_moves(&w->oshdr[i], i, w->aend, w->eh.e_shstrndx);
}

/* The name of procedure k if it gets a cold symbol: split in two, named. */
static const char *cold_name(const rw_ctx *cx, size_t k)
{
    const cfg_proc *f = &cx->prog->procs[k];
    return cx->procs[k].hot_n && cx->procs[k].cold_n && f->name && !(f->flags & CFG_PF_NOSYM) ? f->name : NULL;
}

/* A symbol NAME.cold for the cold part of each procedure split in two (as
 * gcc names its own), so that profiles of the new image name the procedure
 * there rather than whatever symbol came before it.  They go at the end of
 * the table, after its globals, so they are global too (hidden: nothing
 * links against an executable's .symtab).  Only when the table and its
 * strings move after the new segment anyway; false when memory runs out. */
static bool cold_symbols(const rw_ctx *cx, elfw *w, uint16_t text_shndx)
{
    size_t ss = 0;
    for (size_t i = 1; i < w->nsec && !ss; i++)
        if (w->oshdr[i].sh_type == SHT_SYMTAB)
            ss = i;
    if (!ss || w->oshdr[ss].sh_link >= w->nsec || !moves(w, ss) || !moves(w, w->oshdr[ss].sh_link) ||
        w->oshdr[ss].sh_entsize != sizeof(Elf64_Sym))
        return true;
    size_t st = w->oshdr[ss].sh_link, n = 0, names = 0;
    const cfg_program *prog = cx->prog;
    for (size_t k = 0; k < prog->nprocs; k++)
        if (cold_name(cx, k)) {
            n++;
            names += strlen(cold_name(cx, k)) + sizeof ".cold";
        }
    if (!n)
        return true;
    uint64_t osym = w->oshdr[ss].sh_size, ostr = w->oshdr[st].sh_size;
    w->sym = malloc(osym + n * sizeof(Elf64_Sym));
    w->str = malloc(ostr + names);
    if (!w->sym || !w->str)
        return false;
    memcpy(w->sym, cx->out + w->oshdr[ss].sh_offset, osym);
    memcpy(w->str, cx->out + w->oshdr[st].sh_offset, ostr);
    w->symsz = osym;
    w->strsz = ostr;
    for (size_t k = 0; k < prog->nprocs; k++) {
        const rw_proc *p = &cx->procs[k];
        const char *name = cold_name(cx, k);
        if (!name)
            continue;
        Elf64_Sym sym = { (uint32_t)w->strsz, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), STV_HIDDEN, text_shndx,
                          p->cold_start, p->cold_end - p->cold_start };
        memcpy(w->sym + w->symsz, &sym, sizeof sym);
        w->symsz += sizeof sym;
        w->strsz += (uint64_t)sprintf((char *)w->str + w->strsz, "%s.cold", name) + 1;
    }
    w->symsec = ss;
    w->strsec = st;
    return true;
}

/* Sections not loaded move after the new segment, in file order. */
static void move_unloaded(const rw_ctx *cx, elfw *w)
{
    w->off = cx->seg_off + w->segsz;
    for (size_t i = 0; i < w->nsec; i++) {
        Elf64_Shdr *sh = &w->sh[i];
        *sh = w->oshdr[i];
        if (w->symsec && i == w->symsec)
            sh->sh_size = w->symsz;
        else if (w->symsec && i == w->strsec)
            sh->sh_size = w->strsz;
        if (moves(w, i)) {
            w->off = align_up(w->off, sh->sh_addralign ? sh->sh_addralign : 1);
            sh->sh_offset = w->off;
            w->off += sh->sh_size;
        }
    }
}

/* Names: the old unwind tables are kept, renamed; the new sections added. */
static void new_sections(const rw_ctx *cx, elfw *w)
{
    const Elf64_Shdr *so = &w->oshdr[w->eh.e_shstrndx];
    const char *oldnames = (const char *)cx->img->file + so->sh_offset;
    str_add(&w->names, "");
    for (size_t i = 0; i < w->nsec; i++) {
        const char *n = w->oshdr[i].sh_name < so->sh_size ? oldnames + w->oshdr[i].sh_name : "";
        if (cx->eh && !strcmp(n, ".eh_frame"))
            n = ".cpo.orig.eh_frame";
        else if (cx->ehhdr && !strcmp(n, ".eh_frame_hdr"))
            n = ".cpo.orig.eh_frame_hdr";
        w->sh[i].sh_name = i ? str_add(&w->names, n) : 0;
    }
    w->ns = w->nsec;
    w->sh[w->ns++] = (Elf64_Shdr){ str_add(&w->names, ".cpo.text"), SHT_PROGBITS,
                                   SHF_ALLOC | SHF_EXECINSTR, cx->text_addr,
                                   cx->seg_off + (cx->text_addr - cx->seg_addr), cx->text_size, 0, 0,
                                   32, 0 };
    if (cx->eh) {
        w->sh[w->ns++] = (Elf64_Shdr){ str_add(&w->names, ".eh_frame"), SHT_PROGBITS, SHF_ALLOC,
                                       cx->eh_addr, cx->seg_off + (cx->eh_addr - cx->seg_addr),
                                       cx->eh_size, 0, 0, 8, 0 };
        w->sh[w->ns++] = (Elf64_Shdr){ str_add(&w->names, ".eh_frame_hdr"), SHT_PROGBITS, SHF_ALLOC,
                                       cx->ehhdr_addr, cx->seg_off + (cx->ehhdr_addr - cx->seg_addr),
                                       cx->ehhdr_size, 0, 0, 4, 0 };
    }
    if (cx->gxt_size)
        w->sh[w->ns++] = (Elf64_Shdr){ str_add(&w->names, ".cpo.gcc_except_table"), SHT_PROGBITS,
                                       SHF_ALLOC, cx->gxt_addr,
                                       cx->seg_off + (cx->gxt_addr - cx->seg_addr), cx->gxt_size, 0,
                                       0, 8, 0 };
}

/* The address map as one note section, the undo record (undo.c), then the
 * section names and where the section headers go. */
static bool note_and_names(rw_ctx *cx, elfw *w)
{
    size_t amsz;
    if (!(w->amap = addrmap_encode(&cx->am, &amsz)))
        return false;
    w->notesz = 12 + 4 + ((amsz + 3) & ~(size_t)3);
    if (!(w->note = calloc(1, w->notesz)))
        return false;
    rw_put32(w->note, sizeof ADDRMAP_NOTE_NAME);
    rw_put32(w->note + 4, (uint32_t)amsz);
    rw_put32(w->note + 8, ADDRMAP_NOTE_TYPE);
    memcpy(w->note + 12, ADDRMAP_NOTE_NAME, sizeof ADDRMAP_NOTE_NAME);
    memcpy(w->note + 16, w->amap, amsz);
    w->off = align_up(w->off, 8);
    w->note_off = w->off;
    w->sh[w->ns++] = (Elf64_Shdr){ str_add(&w->names, ADDRMAP_SECTION), SHT_NOTE, 0, 0, w->note_off,
                                   w->notesz, 0, 0, 4, 0 };
    w->off += w->notesz;
    if (!(w->undo = undo_encode(cx->img->file, cx->out, cx->img->file_size, w->aend, &w->undosz)))
        return false;
    w->off = align_up(w->off, 8);
    w->undo_off = w->off;
    w->sh[w->ns++] = (Elf64_Shdr){ str_add(&w->names, UNDO_SECTION), SHT_PROGBITS, 0, 0, w->undo_off,
                                   w->undosz, 0, 0, 8, 0 };
    w->off += w->undosz;
    uint32_t shstr_name = str_add(&w->names, ".shstrtab");
    if (!w->names.s || shstr_name == UINT32_MAX)
        return false;
    Elf64_Shdr *ss = &w->sh[w->eh.e_shstrndx];
    ss->sh_name = shstr_name;
    ss->sh_offset = w->off;
    ss->sh_size = w->names.n;
    w->names_off = w->off;
    w->off = align_up(w->off + w->names.n, 8);
    w->eh.e_phoff = cx->seg_off;
    w->eh.e_phnum = (uint16_t)cx->phnum;
    w->eh.e_shoff = w->off;
    w->eh.e_shnum = (uint16_t)w->ns;
    return true;
}

static bool write_parts(const rw_ctx *cx, const elfw *w, int fd)
{
    uint64_t at = cx->seg_off - cx->seg_addr;   /* file offset of a segment address */
    bool ok = rw_pwrite_all(fd, cx->out, w->aend, 0) &&
              rw_pwrite_all(fd, w->ph, cx->phnum * sizeof *w->ph, cx->seg_off) &&
              rw_pwrite_all(fd, cx->text, cx->text_size, cx->text_addr + at);
    if (ok && cx->eh)
        ok = rw_pwrite_all(fd, cx->eh, cx->eh_size, cx->eh_addr + at) &&
             rw_pwrite_all(fd, cx->ehhdr, cx->ehhdr_size, cx->ehhdr_addr + at);
    if (ok && cx->gxt_size)
        ok = rw_pwrite_all(fd, cx->gxt, cx->gxt_size, cx->gxt_addr + at);
    if (ok && cx->ins)
        ok = rw_instr_write(cx, fd, at);
    for (size_t i = 1; ok && i < w->nsec; i++) {
        const uint8_t *from = cx->out + w->oshdr[i].sh_offset;
        if (w->symsec && (i == w->symsec || i == w->strsec))
            from = i == w->symsec ? w->sym : w->str;
        if (w->sh[i].sh_offset != w->oshdr[i].sh_offset && i != w->eh.e_shstrndx)
            ok = rw_pwrite_all(fd, from, w->sh[i].sh_size, w->sh[i].sh_offset);
    }
    return ok && rw_pwrite_all(fd, w->note, w->notesz, w->note_off) &&
           rw_pwrite_all(fd, w->undo, w->undosz, w->undo_off) &&
           rw_pwrite_all(fd, w->names.s, w->names.n, w->names_off) &&
           rw_pwrite_all(fd, w->sh, w->ns * sizeof *w->sh, w->eh.e_shoff) &&
           rw_pwrite_all(fd, &w->eh, sizeof w->eh, 0);
}

/* Write next to the target, then rename: never a half-written file. */
static bool write_file(rw_ctx *cx, const elfw *w, const char *path)
{
    if (outfile_is(path, cx->img->path))
        return rw_fail(cx, "%s: output is the input image; write to a new file", path);
    outfile of;
    char oerr[512];
    if (!outfile_open(&of, path, 0755, oerr, sizeof oerr))
        return rw_fail(cx, "%s", oerr);
    if (!write_parts(cx, w, of.fd)) {
        rw_fail(cx, "%s: cannot write: %s", path, strerror(errno));
        outfile_abort(&of);
        return false;
    }
    if (!outfile_commit(&of, oerr, sizeof oerr))
        return rw_fail(cx, "%s", oerr);
    return true;
}

bool rw_elf_write(rw_ctx *cx, const char *path)
{
    const image *img = cx->img;
    elfw w = { 0 };
    memcpy(&w.eh, cx->out, sizeof w.eh);      /* e_entry already patched */
    w.nsec = w.eh.e_shnum;
    w.oshdr = (const Elf64_Shdr *)(img->file + w.eh.e_shoff);
    if (w.eh.e_shoff + w.nsec * sizeof(Elf64_Shdr) > img->file_size)
        return rw_fail(cx, "%s: section headers beyond the end of the file", img->path);

    /* The new segment: program headers, code, unwind tables. */
    uint64_t seg_end = cx->text_addr + cx->text_size;
    if (cx->eh)
        seg_end = cx->ehhdr_addr + cx->ehhdr_size;
    if (cx->gxt_size)
        seg_end = cx->gxt_addr + cx->gxt_size;
    w.segsz = w.memsz = seg_end - cx->seg_addr;
    if (cx->ins) {
        uint64_t region = align_up(seg_end, 8192);
        rw_instr_place(cx, region);
        rw_instr_blob(cx, cx->text);
        w.segsz = region + rw_instr_filesz(cx) - cx->seg_addr;
        /* Whole 64 KB: the heap starts after the segment, and malloc
         * wants the break aligned. */
        w.memsz = align_up(region + rw_instr_memsz(cx), 0x10000) - cx->seg_addr;
    }
    cx->st->seg_size = w.segsz;

    w.ph = calloc(cx->phnum, sizeof *w.ph);
    w.sh = calloc(w.nsec + 6, sizeof *w.sh);
    bool ok = w.ph && w.sh;
    if (ok) {
        program_headers(cx, &w);
        loaded_end(cx, &w);
        ok = cold_symbols(cx, &w, (uint16_t)w.nsec);
    }
    if (ok) {
        move_unloaded(cx, &w);
        new_sections(cx, &w);
        ok = note_and_names(cx, &w);
    }
    if (!ok)
        rw_fail(cx, "out of memory writing %s", path);
    else
        ok = write_file(cx, &w, path);
    free(w.ph);
    free(w.sh);
    free(w.names.s);
    free(w.note);
    free(w.amap);
    free(w.undo);
    free(w.sym);
    free(w.str);
    return ok;
}
