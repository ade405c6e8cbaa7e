/*
 * cpo list PROC [--db DIR] [-e EVENT]... [--epoch E | --all-epochs] [--image IMAGE] [--source]
 *
 * One procedure instruction by instruction: address, one sample count per
 * event, the instruction, and with --source the source line each run of
 * instructions came from; with --profileme, each instruction's ProfileMe
 * columns (cpo profileme) after the counts (docs/profile-tools.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/le.h"
#include "alpha/insn.h"
#include "estimator/profset.h"
#include "estimator/profileme.h"
#include "estimator/samples.h"
#include "tools/cpo/commands.h"

#ifndef STT_FUNC
#define STT_FUNC 2
#endif

static const char USAGE[] =
    "usage: cpo list PROC [--db DIR] [-e EVENT]... [--epoch E | --all-epochs] [--image IMAGE] "
    "[--source] [--profileme] [--paths[=ADDR]]\n";

static bool symbolize(void *ctx, uint64_t addr, char *buf, size_t size)
{
    return image_symbolize(ctx, addr, buf, size);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Does IMAGE (as given to --image) name this image: its recorded path,
 * that path's file name, or its key (a build-id, or a prefix of one)? */
static bool names_image(const est_image *im, const char *want, const char *want_key)
{
    if (want_key)
        return !strcmp(im->key, want_key);
    size_t n = strlen(want);
    return !strcmp(im->path, want) || !strcmp(base_name(im->path), want) ||
           (n >= 8 && !strncmp(im->key, want, n));
}

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

typedef struct list_opts {
    bool with_source, pm, paths;
    uint64_t paths_at;          /* --paths=ADDR, 0: the most sampled instruction */
} list_opts;

static int list_one(const est_set *s, const est_image *im, const image_symbol *sym, const list_opts *o)
{
    bool with_source = o->with_source, pm = o->pm || o->paths;
    image *img = im->img;
    uint64_t start, end;
    est_function_extent(img, sym, &start, &end);
    const uint8_t *bytes = image_bytes_at(img, start, end - start);
    if (!bytes) {
        fprintf(stderr, "cpo: %s: procedure '%s' has no code in the file\n", img->path, sym->name);
        return 1;
    }
    size_t nev = s->nevents, first, last, npm = 0;
    profdb_pm *pme = NULL;
    if (pm && !cpo_pm_load(s, im, &pme, &npm))
        return 1;
    uint64_t *sum = calloc(nev ? nev : 1, sizeof *sum);
    int *w = calloc(nev ? nev : 1, sizeof *w);
    if (!sum || !w) {
        free(sum);
        free(w);
        free(pme);
        fprintf(stderr, "cpo: out of memory\n");
        return 1;
    }
    est_offsets_in(im, start, end, &first, &last);
    for (size_t i = first; i < last; i++)
        for (size_t e = 0; e < nev; e++)
            sum[e] += im->counts[i * nev + e];
    for (size_t e = 0; e < nev; e++) {
        w[e] = (int)strlen(s->events[e]);
        if (digits(sum[e]) > w[e])
            w[e] = digits(sum[e]);
    }

    printf("Database %s, %s%s\n", s->db, s->all_epochs ? "all epochs" : "epoch ",
           s->all_epochs ? "" : s->epoch);
    printf("Procedure %s in %s, 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " instructions)\n", sym->name,
           im->path, start, end, (end - start) / 4);
    printf("Samples:");
    for (size_t e = 0; e < nev; e++)
        printf("%s %s %" PRIu64 " (%.2f%% of the image, %.2f%% of all)", e ? "," : "", s->events[e],
               sum[e], im->totals[e] ? 100.0 * (double)sum[e] / (double)im->totals[e] : 0.0,
               s->totals[e] ? 100.0 * (double)sum[e] / (double)s->totals[e] : 0.0);
    printf("%s\n\n", nev ? "" : " none");

    printf("%-10s", "address");
    for (size_t e = 0; e < nev; e++)
        printf("  %*s", w[e], s->events[e]);
    if (pm)
        cpo_pm_header();
    printf("  instruction\n");
    cpo_source src = { 0 };
    bool any_line = false;
    for (uint64_t pc = start; pc + 4 <= end; pc += 4) {
        if (with_source)
            any_line |= cpo_source_heading(&src, img, pc);
        const uint8_t *p = bytes + (pc - start);
        uint32_t word = le_get32(p);
        alpha_insn in;
        alpha_decode(word, &in);
        char text[320];
        alpha_disasm(&in, pc, text, sizeof text, symbolize, img);
        char *tab = strchr(text, '\t');
        if (tab)
            *tab = '\0';
        const uint64_t *c = est_counts_at(im, pc);
        printf("%-10" PRIx64, pc);
        for (size_t e = 0; e < nev; e++)
            printf("  %*" PRIu64, w[e], c ? c[e] : 0);
        if (pm)
            cpo_pm_columns(est_pm_at(pme, npm, pc));
        if (tab)
            printf("  %-8s %s\n", text, tab + 1);
        else
            printf("  %s\n", text);
    }
    if (with_source && !any_line)
        printf("(no source lines: %s has no line information for %s)\n", img->path, sym->name);
    if (pm && !npm)
        printf("(no ProfileMe samples of %s)\n", im->path);
    int rc = o->paths && npm ? cpo_pm_paths(im, pme, npm, start, end, o->paths_at, 10) : 0;
    cpo_source_free(&src);
    free(sum);
    free(w);
    free(pme);
    return rc;
}

int cmd_list(int argc, char **argv)
{
    est_selection sel = { 0 };
    est_error err;
    const char *proc = NULL, *want = NULL;
    list_opts lo = { 0 };
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int k = cpo_selection_arg(&sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: list: %s\n%s", err.msg, USAGE);
            rc = 2;
            break;
        }
        if (k)
            continue;
        char *end;
        if (!strcmp(argv[i], "--source")) {
            lo.with_source = true;
        } else if (!strcmp(argv[i], "--profileme")) {
            lo.pm = true;
        } else if (!strcmp(argv[i], "--paths")) {
            lo.paths = true;
        } else if (!strncmp(argv[i], "--paths=", 8)) {
            lo.paths = true;
            lo.paths_at = strtoull(argv[i] + 8, &end, 16);
            if (*end || !argv[i][8]) {
                fprintf(stderr, "cpo: list: --paths=ADDR: '%s' is not an address\n%s", argv[i] + 8, USAGE);
                rc = 2;
                break;
            }
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            want = argv[++i];
        } else if (argv[i][0] != '-' && !proc) {
            proc = argv[i];
        } else {
            fprintf(stderr, "cpo: list: unexpected argument '%s'\n%s", argv[i], USAGE);
            rc = 2;
            break;
        }
    }
    if (rc == 0 && !proc) {
        fprintf(stderr, "cpo: list: which procedure?\n%s", USAGE);
        rc = 2;
    }
    if ((rc = cpo_selection_finish("list", &sel, rc)))
        return rc;
    /* An --image that is a file is read for its build-id: it names the
     * image, and is also where its symbols come from if it moved. */
    char want_key[PROFDB_KEY_MAX] = "";
    const char *files[1];
    struct stat st;
    if (want && stat(want, &st) == 0 && S_ISREG(st.st_mode)) {
        image_error ierr;
        image *img = image_open(want, &ierr);
        if (!img) {
            fprintf(stderr, "cpo: %s\n", ierr.msg);
            cpo_selection_release(&sel);
            return 1;
        }
        if (img->build_id_len) {
            image_build_id_hex(img, want_key, sizeof want_key);
            files[0] = want;
            sel.image_files = files;
            sel.nimage_files = 1;
        }
        image_close(img);
    }
    est_set s;
    if (!est_load(&sel, &s, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        cpo_selection_release(&sel);
        return 1;
    }
    const est_image *found[16];
    const image_symbol *syms[16];
    size_t nfound = 0, unread = 0, named = 0;
    for (size_t i = 0; i < s.nimages; i++) {
        const est_image *im = &s.images[i];
        if (want && !names_image(im, want, want_key[0] ? want_key : NULL))
            continue;
        named++;
        if (im->status != EST_IMAGE_READ) {
            unread += im->status != EST_IMAGE_UNKNOWN;
            continue;
        }
        const image_symbol *sym = image_symbol_by_name(im->img, proc);
        if (sym && sym->type == STT_FUNC && nfound < 16) {
            found[nfound] = im;
            syms[nfound++] = sym;
        }
    }
    if (want && !named) {
        fprintf(stderr, "cpo: %s: no samples of an image named '%s' in %s%s\n", s.db, want,
                s.all_epochs ? "any epoch" : "epoch ", s.all_epochs ? "" : s.epoch);
        rc = 1;
    } else if (!nfound) {
        fprintf(stderr, "cpo: %s: no procedure named '%s' in the sampled images of %s%s", s.db, proc,
                s.all_epochs ? "any epoch" : "epoch ", s.all_epochs ? "" : s.epoch);
        if (unread)
            fprintf(stderr, " (%zu image%s could not be read)", unread, unread == 1 ? "" : "s");
        fprintf(stderr, "\n");
        rc = 1;
    } else if (nfound > 1) {
        fprintf(stderr, "cpo: '%s' is a procedure of %zu sampled images; choose one with --image:\n",
                proc, nfound);
        for (size_t i = 0; i < nfound; i++)
            fprintf(stderr, "  %s (build-id %s)\n", found[i]->path, found[i]->key);
        rc = 1;
    } else {
        rc = list_one(&s, found[0], syms[0], &lo);
    }
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        perror("cpo: list: stdout");
        rc = 1;
    }
    est_free(&s);
    cpo_selection_release(&sel);
    return rc;
}
