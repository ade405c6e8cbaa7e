/*
 * image/open.c: reading an Alpha ELF64 image into plain arrays.
 *
 * Every offset and count in the headers is checked against the file size
 * here, before libelf sees the bytes: libelf trusts some of them, and a
 * fuzzed file must give an error naming what is wrong, never a crash.
 * libelf then walks the validated tables; the image keeps one private copy
 * of the file, and section data pointers point into it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hex.h"
#include "image/internal.h"

bool img_fail(image_error *err, image_err code, const char *name, const char *fmt, ...)
{
    if (!err)
        return false;
    err->code = code;
    int n = snprintf(err->msg, sizeof err->msg, "%s: ", name ? name : "(image)");
    if (n < 0 || (size_t)n >= sizeof err->msg)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - n, fmt, ap);
    va_end(ap);
    return false;
}

static const char *machine_name(unsigned m)
{
    switch (m) {
    case EM_386: return "i386";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_MIPS: return "MIPS";
    case EM_PPC: return "PowerPC";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "S/390";
    case EM_SPARC: return "SPARC";
    case EM_SPARCV9: return "SPARC v9";
    case EM_SH: return "SuperH";
    case EM_IA_64: return "IA-64";
    case EM_PARISC: return "PA-RISC";
    case EM_68K: return "m68k";
    case EM_RISCV: return "RISC-V";
    case EM_LOONGARCH: return "LoongArch";
    case 41: return "Alpha (unofficial number 41, not the Linux one)";
    default: return NULL;
    }
}

static const char *type_name(unsigned t)
{
    switch (t) {
    case ET_NONE: return "ET_NONE, no file type";
    case ET_REL: return "ET_REL, a relocatable object";
    case ET_CORE: return "ET_CORE, a core dump";
    default: return "unknown type";
    }
}

static uint16_t rd16(const uint8_t *p, bool le) { return le ? p[0] | p[1] << 8 : p[0] << 8 | p[1]; }

/* [off, off+len) lies inside a file of `size` bytes, without overflow. */
static bool in_file(uint64_t off, uint64_t len, size_t size)
{
    return off <= size && len <= size - off;
}

/* The header checks that decide IMG_ENOTELF, IMG_ENOTALPHA and IMG_ETYPE,
 * in the order a user would want to hear about them. */
static bool check_ident(const uint8_t *b, size_t size, const char *name, image_error *err)
{
    if (size < SELFMAG || memcmp(b, ELFMAG, SELFMAG) != 0)
        return img_fail(err, IMG_ENOTELF, name, "not an ELF file (%s)",
                        size < SELFMAG ? "shorter than the ELF magic number" : "no ELF magic number");
    if (size < EI_NIDENT)
        return img_fail(err, IMG_ETRUNC, name, "ELF identification truncated (%zu of %d bytes)",
                        size, EI_NIDENT);
    unsigned cls = b[EI_CLASS], data = b[EI_DATA];
    if (data != ELFDATA2LSB && data != ELFDATA2MSB)
        return img_fail(err, IMG_ENOTALPHA, name, "not an Alpha image: unknown ELF data encoding %u", data);
    if (cls != ELFCLASS32 && cls != ELFCLASS64)
        return img_fail(err, IMG_ENOTALPHA, name, "not an Alpha image: unknown ELF class %u", cls);
    /* e_machine sits at offset 18 in both classes. */
    if (size < 20)
        return img_fail(err, IMG_ETRUNC, name, "ELF header truncated (%zu bytes)", size);
    unsigned m = rd16(b + 18, data == ELFDATA2LSB);
    const char *mn = machine_name(m);
    if (m != EM_ALPHA || cls != ELFCLASS64 || data != ELFDATA2LSB) {
        char what[96];
        if (m == EM_ALPHA)
            snprintf(what, sizeof what, "Alpha machine number but %s", cls != ELFCLASS64 ?
                     "32-bit class" : "big-endian data");
        else if (mn)
            snprintf(what, sizeof what, "machine %u (%s)", m, mn);
        else
            snprintf(what, sizeof what, "machine %u", m);
        return img_fail(err, IMG_ENOTALPHA, name, "not an Alpha image: ELF%d %s-endian, %s",
                        cls == ELFCLASS64 ? 64 : 32, data == ELFDATA2LSB ? "little" : "big", what);
    }
    if (size < sizeof(Elf64_Ehdr))
        return img_fail(err, IMG_ETRUNC, name, "ELF header truncated (%zu of %zu bytes)",
                        size, sizeof(Elf64_Ehdr));
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
        return img_fail(err, IMG_ETYPE, name, "not an executable or shared object (%s)",
                        type_name(eh.e_type));
    return true;
}

/* Section and program header tables: counts, entry sizes, bounds.  Fills
 * *shnum, *shstrndx and *phnum with the real values (extended numbering
 * resolved). */
static bool check_tables(const uint8_t *b, size_t size, const char *name, image_error *err,
                         size_t *shnum, size_t *shstrndx, size_t *phnum)
{
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    if (eh.e_shoff == 0)
        return img_fail(err, IMG_ENOSHDR, name, "no section headers (e_shoff is 0)");
    if (eh.e_shentsize != sizeof(Elf64_Shdr))
        return img_fail(err, IMG_ECORRUPT, name, "section header size %u, expected %zu",
                        eh.e_shentsize, sizeof(Elf64_Shdr));
    if (!in_file(eh.e_shoff, sizeof(Elf64_Shdr), size))
        return img_fail(err, IMG_ETRUNC, name, "section headers at 0x%llx lie past the end of the file (%zu bytes)",
                        (unsigned long long)eh.e_shoff, size);
    Elf64_Shdr s0;
    memcpy(&s0, b + eh.e_shoff, sizeof s0);
    uint64_t n = eh.e_shnum ? eh.e_shnum : s0.sh_size;
    if (n == 0)
        return img_fail(err, IMG_ENOSHDR, name, "no section headers (count is 0)");
    if (n > size / sizeof(Elf64_Shdr) || !in_file(eh.e_shoff, n * sizeof(Elf64_Shdr), size))
        return img_fail(err, IMG_ETRUNC, name, "%llu section headers at 0x%llx run past the end of the file (%zu bytes)",
                        (unsigned long long)n, (unsigned long long)eh.e_shoff, size);
    uint64_t sx = eh.e_shstrndx == SHN_XINDEX ? s0.sh_link : eh.e_shstrndx;
    if (sx == SHN_UNDEF || sx >= n)
        return img_fail(err, IMG_ECORRUPT, name, "section name table index %llu out of range (%llu sections)",
                        (unsigned long long)sx, (unsigned long long)n);
    uint64_t pn = eh.e_phnum == PN_XNUM ? s0.sh_info : eh.e_phnum;
    if (pn) {
        if (eh.e_phentsize != sizeof(Elf64_Phdr))
            return img_fail(err, IMG_ECORRUPT, name, "program header size %u, expected %zu",
                            eh.e_phentsize, sizeof(Elf64_Phdr));
        if (pn > size / sizeof(Elf64_Phdr) || !in_file(eh.e_phoff, pn * sizeof(Elf64_Phdr), size))
            return img_fail(err, IMG_ETRUNC, name, "%llu program headers at 0x%llx run past the end of the file (%zu bytes)",
                            (unsigned long long)pn, (unsigned long long)eh.e_phoff, size);
    }
    *shnum = n;
    *shstrndx = sx;
    *phnum = pn;
    return true;
}

static bool shnum_in_header(const image *img)
{
    Elf64_Ehdr eh;
    memcpy(&eh, img->file, sizeof eh);
    return eh.e_shnum != 0;
}

static bool read_sections(image *img, Elf *elf, size_t shnum, size_t shstrndx, image_error *err)
{
    const char *name = img->path;
    img->sections = calloc(shnum, sizeof *img->sections);
    if (!img->sections)
        return img_fail(err, IMG_ENOMEM, name, "out of memory for %zu sections", shnum);
    img->nsections = shnum;
    for (size_t i = 0; i < shnum; i++) {
        GElf_Shdr sh;
        Elf_Scn *scn = elf_getscn(elf, i);
        if (!scn || !gelf_getshdr(scn, &sh))
            return img_fail(err, IMG_ECORRUPT, name, "cannot read section header %zu: %s", i, elf_errmsg(-1));
        image_section *s = &img->sections[i];
        s->index = i;
        s->type = sh.sh_type;
        s->flags = sh.sh_flags;
        s->addr = sh.sh_addr;
        s->offset = sh.sh_offset;
        s->size = sh.sh_size;
        s->entsize = sh.sh_entsize;
        s->align = sh.sh_addralign;
        s->link = sh.sh_link;
        s->info = sh.sh_info;
        s->name = "";
        if (i == 0) {
            /* Only a sizeless placeholder, but libbfd checks it too; its
             * size is the section count under extended numbering. */
            if (!in_file(sh.sh_offset, shnum_in_header(img) ? sh.sh_size : 0, img->file_size))
                return img_fail(err, IMG_ETRUNC, name, "section 0: offset 0x%llx lies past the end of the file (%zu bytes)",
                                (unsigned long long)sh.sh_offset, img->file_size);
            continue;
        }
        /* Inactive (SHT_NULL) entries are checked too: libbfd, which reads
         * the same file for source lines, warns about them on stderr. */
        if (sh.sh_type != SHT_NOBITS) {
            if (!in_file(sh.sh_offset, sh.sh_size, img->file_size))
                return img_fail(err, IMG_ETRUNC, name,
                                "section %zu: data at 0x%llx+0x%llx lies past the end of the file (%zu bytes)",
                                i, (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size,
                                img->file_size);
            if (sh.sh_type != SHT_NULL)
                s->data = img->file + sh.sh_offset;
        }
    }
    /* Names need the name table itself checked first. */
    const image_section *st = &img->sections[shstrndx];
    if (st->type != SHT_STRTAB || !st->data)
        return img_fail(err, IMG_ECORRUPT, name, "section name table (section %zu) is not a string table", shstrndx);
    if (st->size == 0 || st->data[st->size - 1] != '\0')
        return img_fail(err, IMG_ECORRUPT, name, "section name table (section %zu) is not NUL-terminated", shstrndx);
    for (size_t i = 1; i < shnum; i++) {
        GElf_Shdr sh;
        gelf_getshdr(elf_getscn(elf, i), &sh);
        if (sh.sh_name >= st->size)
            return img_fail(err, IMG_ECORRUPT, name, "section %zu: name offset 0x%x outside the section name table",
                            i, sh.sh_name);
        img->sections[i].name = (const char *)st->data + sh.sh_name;
        if (sh.sh_link >= shnum)
            return img_fail(err, IMG_ECORRUPT, name, "section %zu (%s): link %u out of range (%zu sections)",
                            i, img->sections[i].name, sh.sh_link, shnum);
    }
    return true;
}

static bool read_segments(image *img, Elf *elf, size_t phnum, image_error *err)
{
    if (!phnum)
        return true;
    img->segments = calloc(phnum, sizeof *img->segments);
    if (!img->segments)
        return img_fail(err, IMG_ENOMEM, img->path, "out of memory for %zu program headers", phnum);
    img->nsegments = phnum;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, i, &ph))
            return img_fail(err, IMG_ECORRUPT, img->path, "cannot read program header %zu: %s", i, elf_errmsg(-1));
        image_segment *g = &img->segments[i];
        *g = (image_segment){ ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz, ph.p_align };
        if (!in_file(ph.p_offset, ph.p_filesz, img->file_size))
            return img_fail(err, IMG_ETRUNC, img->path,
                            "program header %zu: contents at 0x%llx+0x%llx lie past the end of the file (%zu bytes)",
                            i, (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz, img->file_size);
        if (ph.p_align & (ph.p_align - 1))
            return img_fail(err, IMG_ECORRUPT, img->path, "program header %zu: alignment 0x%llx is not a power of two",
                            i, (unsigned long long)ph.p_align);
        if (ph.p_type == PT_INTERP && !img->interp) {
            const char *p = (const char *)img->file + ph.p_offset;
            img->interp = strndup(p, ph.p_filesz);
            if (!img->interp)
                return img_fail(err, IMG_ENOMEM, img->path, "out of memory");
        }
    }
    return true;
}

/* GNU build-id from the first NT_GNU_BUILD_ID note of any note section. */
static bool read_build_id(image *img, image_error *err)
{
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if (s->type != SHT_NOTE || !s->data)
            continue;
        uint64_t al = s->align == 8 ? 8 : 4;
        uint64_t off = 0;
        while (s->size - off >= 12) {
            const uint8_t *p = s->data + off;
            uint64_t nsz = img_le32(p), dsz = img_le32(p + 4);
            uint32_t type = img_le32(p + 8);
            uint64_t nal = (nsz + al - 1) & ~(al - 1), dal = (dsz + al - 1) & ~(al - 1);
            if (nal > s->size - off - 12 || dsz > s->size - off - 12 - nal)
                return img_fail(err, IMG_ECORRUPT, img->path, "note section %zu (%s): note at offset 0x%llx overruns the section",
                                i, s->name, (unsigned long long)off);
            if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + 12, "GNU", 4)) {
                if (dsz > sizeof img->build_id)
                    return img_fail(err, IMG_ECORRUPT, img->path, "build-id of %llu bytes (at most %zu expected)",
                                    (unsigned long long)dsz, sizeof img->build_id);
                if (!img->build_id_len) {
                    memcpy(img->build_id, p + 12 + nal, dsz);
                    img->build_id_len = dsz;
                }
            }
            if (dal > s->size - off - 12 - nal)
                break;
            off += 12 + nal + dal;
        }
    }
    return true;
}

static bool read_dynamic(image *img, Elf *elf, image_error *err)
{
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if (s->type != SHT_DYNAMIC || !s->data)
            continue;
        if (s->entsize != sizeof(Elf64_Dyn) || s->size % sizeof(Elf64_Dyn))
            return img_fail(err, IMG_ECORRUPT, img->path, "dynamic section %zu (%s): entry size %llu, size %llu (entries are %zu bytes)",
                            i, s->name, (unsigned long long)s->entsize, (unsigned long long)s->size, sizeof(Elf64_Dyn));
        size_t n = s->size / sizeof(Elf64_Dyn);
        Elf_Data *d = elf_getdata(elf_getscn(elf, i), NULL);
        if (!d)
            return img_fail(err, IMG_ECORRUPT, img->path, "dynamic section %zu: %s", i, elf_errmsg(-1));
        img->dyn = calloc(n ? n : 1, sizeof *img->dyn);
        if (!img->dyn)
            return img_fail(err, IMG_ENOMEM, img->path, "out of memory");
        for (size_t k = 0; k < n; k++) {
            GElf_Dyn dy;
            if (!gelf_getdyn(d, k, &dy))
                return img_fail(err, IMG_ECORRUPT, img->path, "dynamic entry %zu: %s", k, elf_errmsg(-1));
            if (dy.d_tag == DT_NULL)
                break;
            img->dyn[img->ndyn++] = (image_dyn){ dy.d_tag, dy.d_un.d_val };
        }
        break;
    }
    return true;
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static void elf_init(void) { elf_version(EV_CURRENT); }

/* An empty image owning buf (malloc'd, size bytes; freed on failure). */
static image *new_image(uint8_t *buf, size_t size, const char *name, image_error *err)
{
    image *img = calloc(1, sizeof *img);
    struct image_private *pv = calloc(1, sizeof *pv);
    char *path = strdup(name);
    if (!img || !pv || !path) {
        free(img), free(pv), free(path), free(buf);
        img_fail(err, IMG_ENOMEM, name, "out of memory");
        return NULL;
    }
    img->path = path;
    img->priv = pv;
    img->file = buf;
    img->file_size = size;
    return img;
}

/* Takes ownership of buf (malloc'd, size bytes). */
static image *open_owned(uint8_t *buf, size_t size, const char *name, image_error *err)
{
    size_t shnum = 0, shstrndx = 0, phnum = 0;
    if (!check_ident(buf, size, name, err) ||
        !check_tables(buf, size, name, err, &shnum, &shstrndx, &phnum)) {
        free(buf);
        return NULL;
    }
    image *img = new_image(buf, size, name, err);
    if (!img)
        return NULL;

    pthread_once(&elf_once, elf_init);
    Elf *elf = elf_memory((char *)buf, size);
    bool ok = elf != NULL;
    if (!ok)
        img_fail(err, IMG_ECORRUPT, name, "libelf cannot read it: %s", elf_errmsg(-1));
    if (ok) {
        GElf_Ehdr eh;
        size_t n1 = 0, n2 = 0, n3 = 0;
        if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &n1) ||
            elf_getshdrstrndx(elf, &n2) || elf_getphdrnum(elf, &n3) ||
            n1 != shnum || n2 != shstrndx || n3 != phnum) {
            ok = img_fail(err, IMG_ECORRUPT, name, "inconsistent ELF header (%s)", elf_errmsg(-1));
        } else {
            img->type = eh.e_type;
            img->entry = eh.e_entry;
            img->phoff = eh.e_phoff;
        }
    }
    ok = ok && read_sections(img, elf, shnum, shstrndx, err) && read_segments(img, elf, phnum, err) &&
         read_build_id(img, err) && read_dynamic(img, elf, err) && img_read_symbols(img, elf, err) &&
         img_read_relocs(img, elf, err) && img_index_symbols(img, err);
    if (elf)
        elf_end(elf);
    if (!ok) {
        image_close(img);
        return NULL;
    }
    img_find_gp(img);
    return img;
}

/* Build-id from PT_NOTE segments: what an image without sections has. */
static void segment_build_id(image *img)
{
    for (size_t i = 0; i < img->nsegments && !img->build_id_len; i++) {
        const image_segment *g = &img->segments[i];
        if (g->type != PT_NOTE)
            continue;
        const uint8_t *b = img->file + g->offset;
        uint64_t off = 0, al = g->align == 8 ? 8 : 4;
        while (g->filesz - off >= 12) {
            const uint8_t *p = b + off;
            uint64_t nsz = img_le32(p), dsz = img_le32(p + 4);
            uint64_t nal = (nsz + al - 1) & ~(al - 1), dal = (dsz + al - 1) & ~(al - 1);
            if (nal > g->filesz - off - 12 || dal > g->filesz - off - 12 - nal)
                break;
            if (img_le32(p + 8) == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + 12, "GNU", 4) &&
                dsz <= sizeof img->build_id) {
                memcpy(img->build_id, p + 12 + nal, dsz);
                img->build_id_len = dsz;
                break;
            }
            off += 12 + nal + dal;
        }
    }
}

/* What the kernel reads to run an image: the ELF header and the program
 * headers, nothing of the sections (they may be absent or damaged in an
 * image that runs: stripped, or with broken debug sections). */
static image *open_segments(uint8_t *buf, size_t size, const char *name, image_error *err)
{
    if (!check_ident(buf, size, name, err)) {
        free(buf);
        return NULL;
    }
    Elf64_Ehdr eh;
    memcpy(&eh, buf, sizeof eh);
    /* binfmt_elf's limits: at least one header, at most 64 KB of them. */
    if (eh.e_phnum < 1 || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > 65536 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) ||
        !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size)) {
        free(buf);
        img_fail(err, IMG_ECORRUPT, name, "program headers: %u of %u bytes at 0x%llx (Linux would not run it)",
                 eh.e_phnum, eh.e_phentsize, (unsigned long long)eh.e_phoff);
        return NULL;
    }
    image *img = new_image(buf, size, name, err);
    if (!img)
        return NULL;
    img->type = eh.e_type;
    img->entry = eh.e_entry;
    img->phoff = eh.e_phoff;
    img->segments = calloc(eh.e_phnum, sizeof *img->segments);
    bool ok = img->segments != NULL, load = false;
    if (!ok)
        img_fail(err, IMG_ENOMEM, name, "out of memory");
    for (size_t i = 0; ok && i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, buf + eh.e_phoff + i * sizeof ph, sizeof ph);
        img->segments[img->nsegments++] = (image_segment){ ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr,
                                                           ph.p_filesz, ph.p_memsz, ph.p_align };
        if (!in_file(ph.p_offset, ph.p_filesz, size) || ph.p_filesz > ph.p_memsz)
            ok = img_fail(err, IMG_ETRUNC, name, "program header %zu: contents at 0x%llx+0x%llx lie past the end of the file",
                          i, (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz);
        else if (ph.p_type == PT_INTERP && !img->interp && !(img->interp = strndup((const char *)buf + ph.p_offset, ph.p_filesz)))
            ok = img_fail(err, IMG_ENOMEM, name, "out of memory");
        load |= ph.p_type == PT_LOAD;
    }
    if (ok && !load)
        ok = img_fail(err, IMG_ECORRUPT, name, "no loadable segment");
    if (!ok) {
        image_close(img);
        return NULL;
    }
    segment_build_id(img);
    return img;
}

image *image_open_mem(const void *data, size_t size, const char *name, image_error *err)
{
    if (!name)
        name = "(memory)";
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        img_fail(err, IMG_ENOMEM, name, "out of memory for %zu bytes", size);
        return NULL;
    }
    if (size)
        memcpy(buf, data, size);
    return open_owned(buf, size, name, err);
}

static uint8_t *read_whole(const char *path, size_t *sizep, image_error *err);

image *image_open(const char *path, image_error *err)
{
    size_t size;
    uint8_t *buf = read_whole(path, &size, err);
    return buf ? open_owned(buf, size, path, err) : NULL;
}

image *image_open_for_running(const char *path, image_error *err)
{
    size_t size;
    uint8_t *buf = read_whole(path, &size, err);
    if (!buf)
        return NULL;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        free(buf);
        img_fail(err, IMG_ENOMEM, path, "out of memory for %zu bytes", size);
        return NULL;
    }
    memcpy(copy, buf, size);
    image_error full;
    image *img = open_owned(buf, size, path, &full);
    if (img) {
        free(copy);
        /* Linux's limits hold whatever the sections say. */
        bool load = false;
        for (size_t i = 0; i < img->nsegments; i++)
            load |= img->segments[i].type == PT_LOAD;
        if (!load || img->nsegments * sizeof(Elf64_Phdr) > 65536) {
            img_fail(err, IMG_ECORRUPT, path, "%s (Linux would not run it)",
                     load ? "more than 64 KB of program headers" : "no loadable segment");
            image_close(img);
            return NULL;
        }
        return img;
    }
    if (full.code == IMG_EIO || full.code == IMG_ENOMEM || full.code == IMG_ENOTELF ||
        full.code == IMG_ENOTALPHA) {
        free(copy);
        *err = full;
        return NULL;
    }
    /* The sections are missing or damaged: run it as the kernel would. */
    return open_segments(copy, size, path, err);
}

static uint8_t *read_whole(const char *path, size_t *sizep, image_error *err)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer, and
     * a profile's image path may since have become one. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        img_fail(err, IMG_EIO, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        img_fail(err, IMG_EIO, path, "cannot read: %s", strerror(e));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        img_fail(err, IMG_EIO, path, "cannot read: %s", S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        return NULL;
    }
    size_t size = st.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        img_fail(err, IMG_ENOMEM, path, "out of memory for %zu bytes", size);
        return NULL;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            close(fd);
            free(buf);
            img_fail(err, IMG_EIO, path, "cannot read: %s", e ? strerror(e) : "file shrank while reading");
            return NULL;
        }
        got += r;
    }
    close(fd);
    *sizep = size;
    return buf;
}

void image_close(image *img)
{
    if (!img)
        return;
    struct image_private *pv = img->priv;
    if (pv) {
        img_close_lines(img);
        free(pv->symbase);
        free(pv->funcs);
        free(pv->byname);
        free(pv->labels);
        free(pv);
    }
    for (size_t i = 0; i < img->nrelsecs; i++)
        free(img->relsecs[i].relocs);
    free(img->relsecs);
    free(img->symbols);
    free(img->sections);
    free(img->segments);
    free(img->dyn);
    free(img->interp);
    free(img->path);
    free(img->file);
    free(img);
}

const char *image_build_id_hex(const image *img, char *buf, size_t size)
{
    return hex_bytes(img->build_id, img->build_id_len, buf, size);
}

const image_section *image_section_by_name(const image *img, const char *name)
{
    for (size_t i = 1; i < img->nsections; i++)
        if (!strcmp(img->sections[i].name, name))
            return &img->sections[i];
    return NULL;
}

const char *image_dyn_str(const image *img, size_t i)
{
    const image_section *ds = image_section_by_name(img, ".dynstr");
    if (i >= img->ndyn || !ds || !ds->data || img->dyn[i].val >= ds->size ||
        !memchr(ds->data + img->dyn[i].val, 0, ds->size - img->dyn[i].val))
        return NULL;
    return (const char *)ds->data + img->dyn[i].val;
}

/* .tbss occupies no address space of its own: it overlaps what follows. */
static bool occupies(const image_section *s)
{
    return (s->flags & SHF_ALLOC) && s->size && !(s->type == SHT_NOBITS && (s->flags & SHF_TLS));
}

const image_section *image_section_at(const image *img, uint64_t addr)
{
    for (size_t i = 1; i < img->nsections; i++) {
        const image_section *s = &img->sections[i];
        if (occupies(s) && addr >= s->addr && addr - s->addr < s->size)
            return s;
    }
    return NULL;
}

const uint8_t *image_bytes_at(const image *img, uint64_t addr, size_t len)
{
    const image_section *s = image_section_at(img, addr);
    if (!s || !s->data || len > s->size - (addr - s->addr))
        return NULL;
    return s->data + (addr - s->addr);
}
