/*
 * collector/cpod_images.c: the images samples are attributed to.
 *
 * An image is known by its build-id (else by its path) and carries what
 * turns a pc into a profile offset: the file ranges and link-time
 * addresses of its PT_LOAD segments, read once from the file.  Profile
 * offsets are link-time addresses, as in exact counts and the analysis
 * tools, so a library's profile does not depend on where it was mapped.
 * When the file cannot be read, or is no longer the file the machine
 * loaded (another build-id), offsets fall back to file offsets, with a
 * warning in the log.
 *
 * Images are referenced by mappings and by profiles; an unreferenced one
 * stays in a small cache (a shell running the same programs all day
 * should not reread them at every exec), beyond which it is freed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hash.h"
#include "collector/cpod_internal.h"
#include "image/image.h"

static uint64_t hash_key(const char *s)
{
    return fnv1a_str(FNV1A_INIT, s);
}

void cpod_images_init(cpod_images *im, const char *const *per_process, size_t n)
{
    memset(im, 0, sizeof *im);
    im->pp = calloc(2 * n + 1, sizeof *im->pp);
    for (size_t i = 0; im->pp && i < n; i++) {
        char real[PATH_MAX];
        im->pp[im->npp++] = strdup(per_process[i]);
        if (strchr(per_process[i], '/') && realpath(per_process[i], real))
            im->pp[im->npp++] = strdup(real);
    }
}

static void image_free(cpod_image *img)
{
    free(img->path);
    free(img->seg);
    free(img);
}

void cpod_images_free(cpod_images *im)
{
    for (size_t b = 0; b < im->nb; b++)
        for (cpod_image *img = im->tab[b], *next; img; img = next) {
            next = img->next;
            image_free(img);
        }
    free(im->tab);
    for (size_t i = 0; i < im->npp; i++)
        free(im->pp[i]);
    free(im->pp);
    memset(im, 0, sizeof *im);
}

static bool wants_per_process(const cpod_images *im, const cpod_image *img)
{
    const char *base = strrchr(img->path, '/');
    base = base ? base + 1 : img->path;
    char real[PATH_MAX];
    bool have_real = false;
    for (size_t i = 0; i < im->npp; i++) {
        const char *a = im->pp[i];
        if (!a)
            continue;
        if (!strcmp(a, img->key) || !strcmp(a, img->path))
            return true;
        if (!strchr(a, '/')) {
            if (!strcmp(a, base))
                return true;
        } else {
            if (!have_real)
                have_real = realpath(img->path, real) != NULL;
            if (have_real && !strcmp(a, real))
                return true;
        }
    }
    return false;
}

static void read_segments(cpod_image *img)
{
    image_error err;
    if (img->path[0] != '/') {
        cpod_log("%s: not an absolute path (machines must report where the host file is); its "
                 "profile offsets are file offsets", img->path);
        return;
    }
    /* image_open blocks on a FIFO; a machine may name anything. */
    struct stat st;
    if (stat(img->path, &st) != 0) {
        cpod_log("%s: cannot read its program headers (%s); its profile offsets are file offsets",
                 img->path, strerror(errno));
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        cpod_log("%s: not a regular file; its profile offsets are file offsets", img->path);
        return;
    }
    image *f = image_open(img->path, &err);
    if (!f) {
        cpod_log("%s: cannot read its program headers (%s); its profile offsets are file offsets",
                 img->path, err.msg);
        return;
    }
    if (img->bidlen && (f->build_id_len != img->bidlen || memcmp(f->build_id, img->bid, img->bidlen))) {
        cpod_log("%s: the file's build-id is not the one the machine loaded (%s; replaced since?); "
                 "its profile offsets are file offsets", img->path, img->key);
        image_close(f);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < f->nsegments; i++)
        n += f->segments[i].type == 1;   /* PT_LOAD */
    img->seg = calloc(n ? n : 1, sizeof *img->seg);
    if (img->seg) {
        for (size_t i = 0; i < f->nsegments; i++) {
            const image_segment *s = &f->segments[i];
            if (s->type != 1)
                continue;
            cpod_seg *g = &img->seg[img->nseg++];
            g->lo = s->offset & ~(uint64_t)(CPOD_PAGE - 1);
            g->hi = s->offset + s->filesz;
            g->delta = s->vaddr - s->offset;
        }
        img->xlate = true;
    }
    image_close(f);
}

static bool grow(cpod_images *im)
{
    size_t nb = im->nb ? im->nb * 2 : 64;
    cpod_image **tab = calloc(nb, sizeof *tab);
    if (!tab)
        return false;
    for (size_t b = 0; b < im->nb; b++)
        for (cpod_image *img = im->tab[b], *next; img; img = next) {
            next = img->next;
            size_t k = hash_key(img->key) & (nb - 1);
            img->next = tab[k];
            tab[k] = img;
        }
    free(im->tab);
    im->tab = tab;
    im->nb = nb;
    return true;
}

static void lru_unlink(cpod_images *im, cpod_image *img)
{
    if (img->lru_prev)
        img->lru_prev->lru_next = img->lru_next;
    else
        im->lru_head = img->lru_next;
    if (img->lru_next)
        img->lru_next->lru_prev = img->lru_prev;
    else
        im->lru_tail = img->lru_prev;
    img->lru_prev = img->lru_next = NULL;
    im->nlru--;
}

cpod_image *cpod_image_get(cpod_images *im, const char *path, const uint8_t *bid, size_t bidlen)
{
    char key[PROFDB_KEY_MAX];
    if (!path || !*path)
        path = "[anonymous]";
    if (bidlen > PROFDB_MAX_BUILD_ID)
        bidlen = PROFDB_MAX_BUILD_ID;
    profdb_key(bid, bidlen, path, key);
    if (im->n >= im->nb && !grow(im))
        return NULL;
    size_t b = hash_key(key) & (im->nb - 1);
    for (cpod_image *img = im->tab[b]; img; img = img->next) {
        if (strcmp(img->key, key))
            continue;
        if (img->refs++ == 0)
            lru_unlink(im, img);
        if (strcmp(img->path, path)) {   /* the latest name wins, as in profdb */
            char *p = strdup(path);
            if (p) {
                free(img->path);
                img->path = p;
            }
        }
        return img;
    }
    cpod_image *img = calloc(1, sizeof *img);
    if (!img || !(img->path = strdup(path))) {
        free(img);
        return NULL;
    }
    memcpy(img->key, key, sizeof key);
    if (bidlen)
        memcpy(img->bid, bid, bidlen);
    img->bidlen = bidlen;
    img->refs = 1;
    read_segments(img);
    img->per_process = wants_per_process(im, img);
    img->next = im->tab[b];
    im->tab[b] = img;
    im->n++;
    return img;
}

void cpod_image_ref(cpod_image *img)
{
    img->refs++;
}

void cpod_image_unref(cpod_images *im, cpod_image *img)
{
    if (!img || --img->refs)
        return;
    img->lru_next = im->lru_head;
    if (im->lru_head)
        im->lru_head->lru_prev = img;
    else
        im->lru_tail = img;
    im->lru_head = img;
    im->nlru++;
    while (im->nlru > CPOD_IMAGE_CACHE) {
        cpod_image *old = im->lru_tail;
        lru_unlink(im, old);
        cpod_image **pp = &im->tab[hash_key(old->key) & (im->nb - 1)];
        while (*pp != old)
            pp = &(*pp)->next;
        *pp = old->next;
        im->n--;
        image_free(old);
    }
}

uint64_t cpod_image_adj(const cpod_image *img, uint64_t base, uint64_t size, uint64_t foff)
{
    const cpod_seg *best = NULL;
    uint64_t best_overlap = 0;
    for (size_t i = 0; img->xlate && i < img->nseg; i++) {
        const cpod_seg *s = &img->seg[i];
        uint64_t lo = foff > s->lo ? foff : s->lo;
        uint64_t end = foff + size < foff ? UINT64_MAX : foff + size;
        uint64_t hi = end < s->hi ? end : s->hi;
        if (hi > lo && hi - lo > best_overlap) {
            best = s;
            best_overlap = hi - lo;
        }
    }
    return foff + (best ? best->delta : 0) - base;
}
