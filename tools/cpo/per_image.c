/*
 * tools/cpo/per_image.c: what cpo values and cpo profileme share: the
 * selection and the options that pick images and a procedure, the
 * database opened, each image of the selection that --image names handed
 * to the command's own report, within the procedure's range when PROC is
 * given, the JSON array around it, and what to say when nothing showed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cpo/commands.h"

#ifndef STT_FUNC
#define STT_FUNC 2
#endif

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

bool cpo_image_named(const est_image *im, const char *want)
{
    size_t n = strlen(want);
    return !strcmp(im->path, want) || !strcmp(base_name(im->path), base_name(want)) ||
           (n >= 8 && !strncmp(im->key, want, n));
}

static int parse(int argc, char **argv, est_selection *sel, cpo_report *r)
{
    est_error err;
    for (int i = 1; i < argc; i++) {
        int k = cpo_selection_arg(sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: %s: %s\n%s", r->cmd, err.msg, r->usage);
            return 2;
        }
        if (k)
            continue;
        if (!strcmp(argv[i], "--json")) {
            r->json = true;
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            r->want = argv[++i];
        } else if (r->option && (k = r->option(r, argc, argv, &i)) != 0) {
            if (k < 0)
                return 2;
        } else if (argv[i][0] != '-' && !r->proc) {
            r->proc = argv[i];
        } else {
            fprintf(stderr, "cpo: %s: unexpected argument '%s'\n%s", r->cmd, argv[i], r->usage);
            return 2;
        }
    }
    return 0;
}

/* PROC's range in im; false when im has no such procedure. */
static bool range_of(const est_image *im, const cpo_report *r, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    if (!r->proc)
        return true;
    const image_symbol *sym = im->img ? image_symbol_by_name(im->img, r->proc) : NULL;
    if (!sym || sym->type != STT_FUNC)
        return false;
    *lo = sym->value;
    *hi = sym->value + sym->size;
    return true;
}

typedef struct {
    void *items;
    size_t n;
    bool shown;         /* read: named by --image and holding PROC */
} part;

int cpo_report_images(int argc, char **argv, cpo_report *r)
{
    est_selection sel = { 0 };
    int rc = parse(argc, argv, &sel, r);
    if ((rc = cpo_selection_finish(r->cmd, &sel, rc)))
        return rc;
    est_set s;
    est_error err;
    if (!est_load(&sel, &s, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        cpo_selection_release(&sel);
        return 1;
    }
    profdb_error perr;
    profdb *db = profdb_open(s.db, 0, &perr);
    part *pt = db ? calloc(s.nimages + 1, sizeof *pt) : NULL;
    if (!pt) {
        fprintf(stderr, "cpo: %s\n", db ? "out of memory" : perr.msg);
        profdb_close(db);
        est_free(&s);
        cpo_selection_release(&sel);
        return 1;
    }
    /* Every image read before anything is printed: a damaged file ends
     * the command with no report from partial data (docs/profile-tools.md). */
    size_t named = 0, shown = 0;
    uint64_t lo, hi;
    for (size_t i = 0; i < s.nimages; i++) {
        const est_image *im = &s.images[i];
        if (im->status == EST_IMAGE_UNKNOWN || (r->want && !cpo_image_named(im, r->want)))
            continue;
        named++;
        if (range_of(im, r, &lo, &hi) && !(pt[i].shown = r->load(r, db, &s, im, &pt[i].items, &pt[i].n))) {
            rc = 1;
            goto out;
        }
    }
    bool first = true;
    if (r->json)
        printf("[");
    else
        printf("Database %s, %s%s\n", s.db, s.all_epochs ? "all epochs" : "epoch ", s.all_epochs ? "" : s.epoch);
    for (size_t i = 0; i < s.nimages; i++)
        if (pt[i].shown && range_of(&s.images[i], r, &lo, &hi))
            shown += r->show(r, &s.images[i], pt[i].items, pt[i].n, lo, hi, &first);
    if (r->json)
        printf("%s]\n", first ? "" : "\n");
    if (r->want && !named) {
        fprintf(stderr, "cpo: %s: no image %s in the selection\n", r->cmd, r->want);
        rc = 1;
    } else if (!shown && !r->json) {
        printf("(no %s%s%s)\n", r->nothing, r->proc ? " in " : "", r->proc ? r->proc : "");
    }
out:
    for (size_t i = 0; i < s.nimages; i++)
        free(pt[i].items);
    free(pt);
    profdb_close(db);
    est_free(&s);
    cpo_selection_release(&sel);
    return rc;
}
