/*
 * image/lines.c: source lines through libbfd's DWARF reader.
 *
 * libbfd is opened on the first query only (most users never ask), and
 * reads the image's private copy through bfd_openr_iovec, so images opened
 * from memory work too and the file on disk may change meanwhile.  Its
 * error messages would go to stderr; we keep it quiet and report "no line"
 * instead.
 */
#include <bfd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image/internal.h"

static void quiet(const char *fmt, va_list ap) { (void)fmt, (void)ap; }

static pthread_once_t bfd_once = PTHREAD_ONCE_INIT;
static bool bfd_ok;
static void init_bfd(void)
{
    bfd_ok = bfd_init() == BFD_INIT_MAGIC;
    bfd_set_error_handler(quiet);
}

static void *io_open(bfd *abfd, void *closure) { (void)abfd; return closure; }

static file_ptr io_pread(bfd *abfd, void *stream, void *buf, file_ptr n, file_ptr off)
{
    (void)abfd;
    const image *img = stream;
    if (off < 0 || n < 0 || (uint64_t)off >= img->file_size)
        return 0;
    if ((uint64_t)n > img->file_size - off)
        n = img->file_size - off;
    memcpy(buf, img->file + off, n);
    return n;
}

static int io_close(bfd *abfd, void *stream) { (void)abfd, (void)stream; return 0; }

static int io_stat(bfd *abfd, void *stream, struct stat *sb)
{
    (void)abfd;
    memset(sb, 0, sizeof *sb);
    sb->st_size = ((const image *)stream)->file_size;
    sb->st_mode = S_IFREG | 0444;
    return 0;
}

static bfd *open_bfd(image *img)
{
    struct image_private *pv = img->priv;
    if (pv->bfd_tried)
        return pv->abfd;
    pv->bfd_tried = true;
    pthread_once(&bfd_once, init_bfd);
    if (!bfd_ok)
        return NULL;
    bfd *abfd = bfd_openr_iovec(img->path, "elf64-alpha", io_open, img, io_pread, io_close, io_stat);
    if (!abfd)
        return NULL;
    if (!bfd_check_format(abfd, bfd_object)) {
        bfd_close(abfd);
        return NULL;
    }
    /* Symbols let bfd name functions that DWARF does not describe. */
    long need = bfd_get_symtab_upper_bound(abfd);
    if (need > 0) {
        asymbol **syms = malloc(need);
        if (syms && bfd_canonicalize_symtab(abfd, syms) >= 0)
            pv->bfd_syms = (void **)syms;
        else
            free(syms);
    }
    pv->abfd = abfd;
    return abfd;
}

bool image_source_line(image *img, uint64_t addr, const char **file, unsigned *line,
                       const char **function)
{
    const char *f = NULL, *fn = NULL;
    unsigned l = 0;
    bfd *abfd = open_bfd(img);
    if (!abfd)
        return false;
    asection *sec;
    for (sec = abfd->sections; sec; sec = sec->next) {
        if (!(bfd_section_flags(sec) & SEC_ALLOC))
            continue;
        bfd_vma vma = bfd_section_vma(sec);
        if (addr >= vma && addr - vma < bfd_section_size(sec))
            break;
    }
    if (!sec || !bfd_find_nearest_line(abfd, sec, (asymbol **)img->priv->bfd_syms,
                                       addr - bfd_section_vma(sec), &f, &fn, &l))
        return false;
    if (!f || !*f || !l)
        return false;
    if (file)
        *file = f;
    if (line)
        *line = l;
    if (function)
        *function = fn && *fn ? fn : NULL;
    return true;
}

void img_close_lines(image *img)
{
    struct image_private *pv = img->priv;
    if (pv->abfd)
        bfd_close(pv->abfd);
    free(pv->bfd_syms);
    pv->abfd = NULL;
    pv->bfd_syms = NULL;
}
