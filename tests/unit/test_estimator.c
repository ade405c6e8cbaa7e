/*
 * estimator/: samples per image, procedure and instruction from a profile
 * database built here through profdb's writing API; SET names and
 * selection options; statistics across sets; differences (with a stand-in
 * address map); the protobuf encoder and the pprof export, decoded back.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <sys/stat.h>
#include <zlib.h>

#include "estimator/diff.h"
#include "estimator/freq.h"
#include "report/pprof.h"
#include "estimator/profset.h"
#include "report/protobuf.h"
#include "estimator/samples.h"
#include "estimator/stats.h"
#include "tests/profdb/testutil.h"

/* ---- fixtures ------------------------------------------------------------ */

static char *dir;
static char dbdir[1024];
static void setup(void)
{
    dir = tu_tmpdir();
    cr_assert(dir);
    snprintf(dbdir, sizeof dbdir, "%s/db", dir);
}
static void teardown(void) { tu_rmrf(dir); free(dir); }

/* A real program (absolute path: profiles record absolute paths). */
static image *program(const char *name, char *path, size_t size)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char rel[512];
    snprintf(rel, sizeof rel, "%s/programs/%s", build, name);
    if (!realpath(rel, path))
        cr_skip_test("%s missing: run `make programs`", rel);
    (void)size;
    image_error err;
    image *img = image_open(path, &err);
    cr_assert(img, "%s", err.msg);
    return img;
}

static uint64_t sym(const image *img, const char *name)
{
    const image_symbol *s = image_symbol_by_name(img, name);
    cr_assert(s, "no symbol %s", name);
    return s->value;
}

static profdb *open_db(void)
{
    profdb_error err;
    profdb *db = profdb_open(dbdir, PROFDB_CREATE, &err);
    cr_assert(db, "%s", err.msg);
    return db;
}

static void merge(profdb *db, const char *path, const uint8_t *bid, size_t bidlen, const char *event,
                  const char *host, const profdb_entry *e, size_t n)
{
    profdb_input in = { .path = path, .build_id = bid, .build_id_len = bidlen, .event = event,
                        .mean_period = 1000, .host = host, .samples = e, .nsamples = n };
    profdb_error err;
    cr_assert_eq(profdb_merge(db, &in, 1, &err), 1, "%s", err.msg);
}

static char warned[4096];
static void catch_warn(void *ctx, const char *msg)
{
    (void)ctx;
    size_t n = strlen(warned);
    snprintf(warned + n, sizeof warned - n, "%s\n", msg);
}

static void load(est_set *s, const char *epoch, bool all, const char *const *events, size_t nev)
{
    est_selection sel = { .db = dbdir, .epoch = epoch, .all_epochs = all, .events = events,
                          .nevents = nev, .warn = catch_warn };
    est_error err;
    warned[0] = '\0';
    cr_assert(est_load(&sel, s, &err), "%s", err.msg);
}

static const est_row *row(const est_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].name && !strcmp(r[i].name, name))
            return &r[i];
    cr_assert_fail("no row %s", name);
    return NULL;
}

/* intloop-dyn sampled on two hosts for two events, plus the unknown
 * profile and a per-process profile that must not be counted again. */
typedef struct {
    image *img;
    char path[4096];
    uint64_t main_, loop, third, plt;
} world;

static void build_world(world *w)
{
    w->img = program("intloop-dyn", w->path, sizeof w->path);
    w->main_ = sym(w->img, "main");
    w->loop = sym(w->img, "loop1000");
    w->third = sym(w->img, "third");
    const image_section *plt = image_section_by_name(w->img, ".plt");
    cr_assert(plt);
    w->plt = plt->addr;
    profdb *db = open_db();
    const uint8_t *bid = w->img->build_id;
    size_t bl = w->img->build_id_len;
    profdb_entry c1[] = { { w->main_, 10 }, { w->main_ + 4, 5 }, { w->loop, 100 },
                          { w->loop + 16, 50 }, { w->third, 30 }, { w->plt, 7 } };
    profdb_entry c2[] = { { w->loop, 20 } };
    profdb_entry i1[] = { { w->main_, 3 }, { w->loop, 1 } };
    profdb_entry u[] = { { 0x4000, 9 } };
    profdb_entry pp[] = { { w->loop, 999 } };
    merge(db, w->path, bid, bl, "cycles", "alpha1", c1, 6);
    merge(db, w->path, bid, bl, "cycles", "alpha2", c2, 1);
    merge(db, w->path, bid, bl, "imiss", "alpha1", i1, 2);
    merge(db, PROFDB_UNKNOWN_PATH, NULL, 0, "cycles", "alpha1", u, 1);
    merge(db, w->path, bid, bl, "cycles@pid-42", "alpha1", pp, 1);
    profdb_close(db);
}

/* ---- loading and per-procedure sums ----------------------------------------- */

Test(estimator, samples_procedures_and_images, .init = setup, .fini = teardown)
{
    world w;
    build_world(&w);
    est_set s;
    load(&s, NULL, false, NULL, 0);
    cr_assert_eq(s.nevents, 2);
    cr_assert_str_eq(s.events[0], "cycles");   /* cycles first; cycles@pid-42 left out */
    cr_assert_str_eq(s.events[1], "imiss");
    cr_assert_eq(s.totals[0], 10 + 5 + 100 + 50 + 30 + 7 + 20 + 9);
    cr_assert_eq(s.totals[1], 4);
    cr_assert_eq(s.nimages, 2);
    cr_assert_str_eq(warned, "");

    est_row *r;
    size_t n;
    est_error err;
    cr_assert(est_procedures(&s, &r, &n, &err), "%s", err.msg);
    est_rows_sort(&s, r, n, 0);
    cr_assert_eq(n, 5);
    const char *order[] = { "loop1000", "third", "main", EST_UNKNOWN_NAME, "[.plt]" };
    uint64_t cyc[] = { 170, 30, 15, 9, 7 }, im[] = { 1, 0, 3, 0, 0 };
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(r[i].name, order[i], "row %zu: %s", i, r[i].name);
        cr_assert_eq(r[i].counts[0], cyc[i], "%s cycles", order[i]);
        cr_assert_eq(r[i].counts[1], im[i], "%s imiss", order[i]);
    }
    cr_assert_eq(row(r, n, "loop1000")->start, w.loop);
    cr_assert_eq(row(r, n, "loop1000")->end, w.loop + image_symbol_by_name(w.img, "loop1000")->size);
    /* by imiss: main first */
    est_rows_sort(&s, r, n, 1);
    cr_assert_str_eq(r[0].name, "main");
    est_rows_free(r, n);

    cr_assert(est_images(&s, &r, &n, &err), "%s", err.msg);
    est_rows_sort(&s, r, n, 0);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(s.images[r[0].image].path, w.path);
    cr_assert_eq(r[0].counts[0], 222);
    cr_assert_eq(s.images[r[1].image].status, EST_IMAGE_UNKNOWN);
    cr_assert_eq(r[1].counts[0], 9);
    est_rows_free(r, n);

    /* instructions */
    const est_image *ii = NULL;
    for (size_t i = 0; i < s.nimages; i++)
        if (s.images[i].status == EST_IMAGE_READ)
            ii = &s.images[i];
    const uint64_t *c = est_counts_at(ii, w.loop);
    cr_assert(ii);
    cr_assert(c);
    cr_assert_eq(c[0], 120);
    cr_assert_eq(c[1], 1);
    cr_assert_null(est_counts_at(ii, w.loop + 4));
    size_t first, last;
    est_offsets_in(ii, w.loop, w.loop + 64, &first, &last);
    cr_assert_eq(last - first, 2);
    est_free(&s);
    image_close(w.img);
}

Test(estimator, samples_chosen_events_and_epochs, .init = setup, .fini = teardown)
{
    world w;
    build_world(&w);
    profdb *db = open_db();
    profdb_error perr;
    char old[PROFDB_EPOCH_MAX], neu[PROFDB_EPOCH_MAX];
    cr_assert(profdb_current_epoch(db, old, &perr), "%s", perr.msg);
    cr_assert(profdb_new_epoch(db, neu, &perr), "%s", perr.msg);
    profdb_entry e[] = { { w.third + 8, 40 } };
    merge(db, w.path, w.img->build_id, w.img->build_id_len, "cycles", "alpha1", e, 1);
    profdb_close(db);

    const char *ev[] = { "imiss", "dmiss" };
    est_set s;
    load(&s, old, false, ev, 2);
    cr_assert_eq(s.nevents, 2);
    cr_assert_str_eq(s.events[0], "imiss");
    cr_assert_eq(s.totals[0], 4);
    cr_assert_eq(s.totals[1], 0);          /* absent: zero, the caller decides */
    est_free(&s);

    load(&s, NULL, false, NULL, 0);        /* current: only the new epoch */
    cr_assert_str_eq(s.epoch, neu);
    cr_assert_eq(s.nevents, 1);
    cr_assert_eq(s.totals[0], 40);
    est_free(&s);

    const char *cyc[] = { "cycles" };
    load(&s, NULL, true, cyc, 1);
    cr_assert_eq(s.totals[0], 231 + 40);
    est_row *r;
    size_t n;
    est_error err;
    cr_assert(est_procedures(&s, &r, &n, &err));
    cr_assert_eq(row(r, n, "third")->counts[0], 70);
    est_rows_free(r, n);
    est_free(&s);

    est_selection sel = { .db = dbdir, .epoch = "20200101T000000Z", .warn = catch_warn };
    cr_assert_not(est_load(&sel, &s, &err));
    cr_assert(strstr(err.msg, "20200101T000000Z"), "%s", err.msg);
    image_close(w.img);
}

Test(estimator, samples_images_not_read, .init = setup, .fini = teardown)
{
    world w;
    build_world(&w);
    profdb *db = open_db();
    uint8_t other[20] = { 1, 2, 3 };
    profdb_entry e[] = { { w.loop, 11 }, { w.loop + 4, 1 } };
    /* the right path, another build-id: the file there is another program */
    merge(db, w.path, other, sizeof other, "cycles", "alpha1", e, 2);
    char gone[4200];
    snprintf(gone, sizeof gone, "%s/no/such/program", dir);
    merge(db, gone, NULL, 0, "cycles", "alpha1", e, 1);
    profdb_close(db);

    est_set s;
    profdb_error perr;
    load(&s, NULL, false, NULL, 0);
    cr_assert(strstr(warned, "has build-id"), "%s", warned);
    cr_assert(strstr(warned, w.path), "%s", warned);
    cr_assert(strstr(warned, gone), "%s", warned);
    size_t mismatch = 0, missing = 0;
    for (size_t i = 0; i < s.nimages; i++) {
        mismatch += s.images[i].status == EST_IMAGE_MISMATCH;
        missing += s.images[i].status == EST_IMAGE_MISSING;
    }
    cr_assert_eq(mismatch, 1);
    cr_assert_eq(missing, 1);
    est_row *r;
    size_t n;
    est_error err;
    cr_assert(est_procedures(&s, &r, &n, &err));
    est_rows_sort(&s, r, n, 0);
    size_t whole = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(r[i].name, EST_NOT_READ_NAME)) {
            whole++;
            cr_assert(r[i].counts[0] == 12 || r[i].counts[0] == 11, "%" PRIu64, r[i].counts[0]);
        }
    }
    cr_assert_eq(whole, 2);
    est_rows_free(r, n);
    est_free(&s);

    /* The file given first, by build-id, wins over a missing path. */
    db = open_db();
    cr_assert(profdb_new_epoch(db, NULL, &perr), "%s", perr.msg);
    merge(db, gone, w.img->build_id, w.img->build_id_len, "cycles", "alpha1", e, 2);
    profdb_close(db);
    const char *files[] = { w.path };
    est_selection sel = { .db = dbdir, .image_files = files, .nimage_files = 1, .warn = catch_warn };
    warned[0] = '\0';
    cr_assert(est_load(&sel, &s, &err), "%s", err.msg);
    cr_assert_eq(s.nimages, 1);
    cr_assert_eq(s.images[0].status, EST_IMAGE_READ);
    cr_assert_str_eq(warned, "");
    est_free(&s);
    image_close(w.img);
}

Test(estimator, samples_outside_symbols_and_sections, .init = setup, .fini = teardown)
{
    world w;
    w.img = program("intloop-dyn", w.path, sizeof w.path);
    char buf[300];
    uint64_t st, en;
    const image_section *plt = image_section_by_name(w.img, ".plt");
    cr_assert_str_eq(est_procedure_at(w.img, plt->addr, buf, sizeof buf, &st, &en), "[.plt]");
    cr_assert_eq(st, 0);
    cr_assert_str_eq(est_procedure_at(w.img, 0x10, buf, sizeof buf, &st, &en), EST_NO_SECTION_NAME);
    uint64_t m = sym(w.img, "main");
    cr_assert_str_eq(est_procedure_at(w.img, m + 8, buf, sizeof buf, &st, &en), "main");
    cr_assert_eq(st, m);
    cr_assert_eq(en, m + image_symbol_by_name(w.img, "main")->size);
    /* a size-0 function runs to the next function or its section's end */
    const image_symbol *init = image_symbol_by_name(w.img, "_init");
    if (init && init->size == 0) {
        est_function_extent(w.img, init, &st, &en);
        const image_section *sec = image_section_at(w.img, init->value);
        cr_assert_eq(st, init->value);
        cr_assert(en > st && en <= sec->addr + sec->size);
    }
    image_close(w.img);
}

Test(estimator, samples_damaged_profile_named, .init = setup, .fini = teardown)
{
    world w;
    build_world(&w);
    profdb_info *v;
    size_t n;
    profdb_error perr;
    profdb *db = open_db();
    cr_assert(profdb_list(db, NULL, &v, &n, &perr));
    char victim[4200];
    snprintf(victim, sizeof victim, "%s", v[0].file);
    profdb_infos_free(v, n);
    profdb_close(db);
    FILE *f = fopen(victim, "r+b");
    cr_assert(f);
    fseek(f, -3, SEEK_END);
    fputc(0x55, f);
    fclose(f);
    est_selection sel = { .db = dbdir, .warn = catch_warn };
    est_set s;
    est_error err;
    cr_assert_not(est_load(&sel, &s, &err));
    cr_assert(strstr(err.msg, victim), "%s", err.msg);

    est_selection none = { .db = "/nonexistent/db/dir" };
    cr_assert_not(est_load(&none, &s, &err));
    cr_assert(strstr(err.msg, "/nonexistent/db/dir"), "%s", err.msg);
    image_close(w.img);
}

/* ---- SETs and options ---------------------------------------------------------- */

Test(estimator, profset_sets, .init = setup, .fini = teardown)
{
    est_setspec sp;
    est_error err;
    cr_assert(est_parse_set("db", &sp, &err));
    cr_assert_str_eq(sp.db, "db");
    cr_assert_null(sp.epoch);
    cr_assert_not(sp.all_epochs);
    est_setspec_free(&sp);
    cr_assert(est_parse_set("a/db@20261120T231500Z-002", &sp, &err));
    cr_assert_str_eq(sp.db, "a/db");
    cr_assert_str_eq(sp.epoch, "20261120T231500Z-002");
    est_setspec_free(&sp);
    cr_assert(est_parse_set("x@y@all", &sp, &err));
    cr_assert_str_eq(sp.db, "x@y");
    cr_assert(sp.all_epochs);
    est_setspec_free(&sp);
    cr_assert(est_parse_set("db@current", &sp, &err));
    cr_assert_null(sp.epoch);
    cr_assert_not(sp.all_epochs);
    est_setspec_free(&sp);
    /* a directory named with an '@' is itself */
    char odd[1100];
    snprintf(odd, sizeof odd, "%s/run@2", dir);
    cr_assert_eq(mkdir(odd, 0755), 0);
    cr_assert(est_parse_set(odd, &sp, &err), "%s", err.msg);
    cr_assert_str_eq(sp.db, odd);
    est_setspec_free(&sp);

    const char *bad[] = { "db@yesterday", "@all", "", "db@2026112T231500Z", "db@20261120T231500Z-1" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_not(est_parse_set(bad[i], &sp, &err), "%s accepted", bad[i]);
        if (*bad[i])
            cr_assert(strstr(err.msg, bad[i]), "%s", err.msg);
    }
}

/* ---- statistics ------------------------------------------------------------------ */

Test(estimator, stats_across_sets, .init = setup, .fini = teardown)
{
    char path[4096];
    image *img = program("intloop-dyn", path, sizeof path);
    uint64_t loop = sym(img, "loop1000"), third = sym(img, "third");
    profdb *db = open_db();
    /* loop1000: 10, 20, 60 in three epochs; third only in the second. */
    uint64_t loops[3] = { 10, 20, 60 };
    for (int k = 0; k < 3; k++) {
        profdb_error perr;
        if (k)
            cr_assert(profdb_new_epoch(db, NULL, &perr), "%s", perr.msg);
        profdb_entry e[2] = { { loop, loops[k] }, { third, 5 } };
        merge(db, path, img->build_id, img->build_id_len, "cycles", "alpha1", e, k == 1 ? 2 : 1);
    }
    char **names;
    size_t ne;
    profdb_error perr;
    cr_assert(profdb_epochs(db, &names, &ne, &perr), "%s", perr.msg);
    cr_assert_eq(ne, 3);
    profdb_close(db);
    est_set sets[3];
    const char *cyc[] = { "cycles" };
    for (int k = 0; k < 3; k++)
        load(&sets[k], names[k], false, cyc, 1);
    est_stats st;
    est_error err;
    cr_assert(est_stats_compute(sets, 3, "cycles", &st, &err), "%s", err.msg);
    cr_assert_eq(st.nsets, 3);
    cr_assert_eq(st.total, 95);
    cr_assert_eq(st.set_totals[1], 25);
    cr_assert_eq(st.nrows, 2);
    /* third: 0, 5, 0 -> range 5/5 = 100%, first */
    cr_assert_str_eq(st.rows[0].procedure, "third");
    cr_assert_eq(st.rows[0].present, 1);
    cr_assert_float_eq(st.rows[0].range_pct, 100.0, 1e-9);
    const est_stat_row *r = &st.rows[1];
    cr_assert_str_eq(r->procedure, "loop1000");
    cr_assert_str_eq(r->image, path);
    cr_assert_eq(r->sum, 90);
    cr_assert_eq(r->min, 10);
    cr_assert_eq(r->max, 60);
    cr_assert_eq(r->present, 3);
    cr_assert_float_eq(r->mean, 30.0, 1e-9);
    cr_assert_float_eq(r->stddev, sqrt((400.0 + 100.0 + 900.0) / 2.0), 1e-9);
    cr_assert_float_eq(r->range_pct, 100.0 * 50 / 90, 1e-9);
    cr_assert_float_eq(r->sum_pct, 100.0 * 90 / 95, 1e-9);
    est_stats_free(&st);
    for (int k = 0; k < 3; k++)
        est_free(&sets[k]);
    profdb_strv_free(names);
    image_close(img);
}

/* ---- differences ------------------------------------------------------------------ */

/* A stand-in for a rewritten image: bigloop-dyn plays the rewritten
 * intloop-dyn, its main mapping onto intloop's third. */
typedef struct {
    uint8_t rewritten_id[64], orig_id[64];
    size_t rlen, olen;
    uint64_t from, to;
} fake_map;

static uint64_t fake_lookup(const void *m, uint64_t off)
{
    const fake_map *f = m;
    return off - f->from + f->to;
}

static bool fake_origin(void *ctx, const image *img, est_origin *out)
{
    fake_map *f = ctx;
    if (img->build_id_len != f->rlen || memcmp(img->build_id, f->rewritten_id, f->rlen))
        return false;
    memcpy(out->build_id, f->orig_id, f->olen);
    out->build_id_len = f->olen;
    out->map = f;
    out->lookup = fake_lookup;
    out->free = NULL;
    return true;
}

static const est_diff_row *drow(const est_diff_row *v, size_t n, const char *proc)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].procedure && !strcmp(v[i].procedure, proc))
            return &v[i];
    return NULL;
}

Test(estimator, diff_two_epochs_and_a_rewritten_image, .init = setup, .fini = teardown)
{
    char path[4096], rpath[4096];
    image *img = program("intloop-dyn", path, sizeof path);
    image *rimg = program("bigloop-dyn", rpath, sizeof rpath);
    uint64_t loop = sym(img, "loop1000"), third = sym(img, "third"), rmain = sym(rimg, "main");
    profdb *db = open_db();
    profdb_entry a[] = { { loop, 60 }, { third, 40 } };
    merge(db, path, img->build_id, img->build_id_len, "cycles", "alpha1", a, 2);
    profdb_error perr;
    cr_assert(profdb_new_epoch(db, NULL, &perr), "%s", perr.msg);
    profdb_entry b[] = { { loop, 30 } };
    merge(db, path, img->build_id, img->build_id_len, "cycles", "alpha1", b, 1);
    profdb_entry rb[] = { { rmain, 50 }, { rmain + 4, 20 } };
    merge(db, rpath, rimg->build_id, rimg->build_id_len, "cycles", "alpha1", rb, 2);
    char **names;
    size_t ne;
    cr_assert(profdb_epochs(db, &names, &ne, &perr), "%s", perr.msg);
    profdb_close(db);

    est_set sa, sb;
    const char *cyc[] = { "cycles" };
    load(&sa, names[0], false, cyc, 1);
    load(&sb, names[1], false, cyc, 1);

    /* As they are: bigloop is an image of its own. */
    est_diff d;
    est_error err;
    est_diff_options plain = { .event = "cycles", .warn = catch_warn };
    cr_assert(est_diff_compute(&sa, &sb, &plain, &d, &err), "%s", err.msg);
    cr_assert_eq(d.total_a, 100);
    cr_assert_eq(d.total_b, 100);
    cr_assert_eq(d.nimages, 2);
    const est_diff_row *t = drow(d.procs, d.nprocs, "third");
    cr_assert(t);
    cr_assert_eq(t->a, 40);
    cr_assert_eq(t->b, 0);
    cr_assert_float_eq(t->b_pct - t->a_pct, -40.0, 1e-9);
    cr_assert_str_eq(drow(d.procs, d.nprocs, "main")->image, rpath);
    est_diff_free(&d);

    /* Through the map: bigloop's samples land in intloop's third. */
    fake_map f = { .rlen = rimg->build_id_len, .olen = img->build_id_len, .from = rmain, .to = third };
    memcpy(f.rewritten_id, rimg->build_id, f.rlen);
    memcpy(f.orig_id, img->build_id, f.olen);
    est_diff_options mapped = { .event = "cycles", .origin = fake_origin, .origin_ctx = &f,
                                .warn = catch_warn };
    warned[0] = '\0';
    cr_assert(est_diff_compute(&sa, &sb, &mapped, &d, &err), "%s", err.msg);
    cr_assert_str_eq(warned, "");
    cr_assert_eq(d.nimages, 1);
    cr_assert_eq(d.images[0].a, 100);
    cr_assert_eq(d.images[0].b, 100);
    cr_assert_str_eq(d.images[0].image, path);
    t = drow(d.procs, d.nprocs, "third");
    cr_assert_eq(t->a, 40);
    cr_assert_eq(t->b, 70);
    const est_diff_row *l = drow(d.procs, d.nprocs, "loop1000");
    cr_assert_eq(l->a, 60);
    cr_assert_eq(l->b, 30);
    cr_assert_null(drow(d.procs, d.nprocs, "main"));
    /* equal changes in share (+30, -30): the order falls to the names */
    cr_assert_str_eq(d.procs[0].procedure, "loop1000");
    est_diff_free(&d);

    est_free(&sa);
    est_free(&sb);
    profdb_strv_free(names);
    image_close(img);
    image_close(rimg);
}

/* ---- protobuf and pprof -------------------------------------------------------------- */

Test(estimator, protobuf_varints)
{
    pb_buf b = { 0 };
    uint64_t v[] = { 0, 1, 127, 128, 300, UINT64_MAX };
    const char *want[] = { "00", "01", "7f", "8001", "ac02", "ffffffffffffffffff01" };
    for (size_t i = 0; i < 6; i++) {
        pb_reset(&b);
        pb_varint(&b, v[i]);
        char hexs[32] = "";
        for (size_t k = 0; k < b.len; k++)
            sprintf(hexs + 2 * k, "%02x", b.data[k]);
        cr_assert_str_eq(hexs, want[i]);
    }
    pb_reset(&b);
    pb_uint(&b, 1, 150);           /* the protobuf documentation's example */
    cr_assert_eq(b.len, 3);
    cr_assert_eq(b.data[0], 0x08);
    cr_assert_eq(b.data[1], 0x96);
    cr_assert_eq(b.data[2], 0x01);
    pb_reset(&b);
    pb_string(&b, 2, "testing");
    cr_assert_eq(b.len, 9);
    cr_assert_eq(b.data[0], 0x12);
    cr_assert_eq(b.data[1], 7);
    pb_free(&b);
}

/* A decoder for the test: (field, wire, value or bytes) one at a time. */
typedef struct {
    const uint8_t *p, *end;
} rd;

static bool rd_varint(rd *r, uint64_t *v)
{
    *v = 0;
    for (int s = 0; s < 70 && r->p < r->end; s += 7) {
        uint8_t c = *r->p++;
        *v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            return true;
    }
    return false;
}

typedef struct {
    unsigned field, wire;
    uint64_t v;
    const uint8_t *data;
    size_t len;
} fld;

static bool rd_field(rd *r, fld *f)
{
    uint64_t key;
    if (r->p >= r->end || !rd_varint(r, &key))
        return false;
    f->field = (unsigned)(key >> 3);
    f->wire = key & 7;
    if (f->wire == 0)
        return rd_varint(r, &f->v);
    cr_assert_eq(f->wire, 2, "unexpected wire type %u", f->wire);
    uint64_t n;
    cr_assert(rd_varint(r, &n));
    cr_assert(n <= (uint64_t)(r->end - r->p));
    f->data = r->p;
    f->len = n;
    r->p += n;
    return true;
}

/* Values of one varint field of a message (packed or not). */
static size_t ints(const uint8_t *p, size_t n, unsigned field, uint64_t *out, size_t max)
{
    rd r = { p, p + n };
    fld f;
    size_t k = 0;
    while (rd_field(&r, &f)) {
        if (f.field != field)
            continue;
        if (f.wire == 0) {
            if (k < max)
                out[k] = f.v;
            k++;
        } else {
            rd q = { f.data, f.data + f.len };
            uint64_t v;
            while (q.p < q.end && rd_varint(&q, &v)) {
                if (k < max)
                    out[k] = v;
                k++;
            }
        }
    }
    return k;
}

static const uint8_t *sub(const uint8_t *p, size_t n, unsigned field, size_t *len)
{
    rd r = { p, p + n };
    fld f;
    while (rd_field(&r, &f))
        if (f.field == field && f.wire == 2) {
            *len = f.len;
            return f.data;
        }
    return NULL;
}

Test(estimator, pprof_decodes_back, .init = setup, .fini = teardown)
{
    world w;
    build_world(&w);
    est_set s;
    load(&s, NULL, false, NULL, 0);
    char file[1100];
    snprintf(file, sizeof file, "%s/out.pb.gz", dir);
    est_error err;
    cr_assert(est_pprof_write(&s, file, &err), "%s", err.msg);

    /* gunzip */
    gzFile gz = gzopen(file, "rb");
    cr_assert(gz);
    size_t cap = 1 << 20, n = 0;
    uint8_t *d = malloc(cap);
    int k;
    while ((k = gzread(gz, d + n, (unsigned)(cap - n))) > 0)
        n += (size_t)k;
    gzclose(gz);
    cr_assert(n > 0 && n < cap);

    /* strings */
    char *strs[256];
    size_t nstr = 0;
    rd r = { d, d + n };
    fld f;
    while (rd_field(&r, &f))
        if (f.field == 6) {
            cr_assert(nstr < 256);
            strs[nstr++] = strndup((const char *)f.data, f.len);
        }
    cr_assert(nstr > 3);
    cr_assert_str_eq(strs[0], "");

    /* sample types: cycles, imiss; unit count */
    uint64_t types[8];
    size_t nt = 0;
    r = (rd){ d, d + n };
    while (rd_field(&r, &f)) {
        if (f.field != 1)
            continue;
        uint64_t t, u;
        cr_assert_eq(ints(f.data, f.len, 1, &t, 1), 1);
        cr_assert_eq(ints(f.data, f.len, 2, &u, 1), 1);
        cr_assert_str_eq(strs[u], "count");
        types[nt++] = t;
    }
    cr_assert_eq(nt, 2);
    cr_assert_str_eq(strs[types[0]], "cycles");
    cr_assert_str_eq(strs[types[1]], "imiss");

    /* functions: id -> name */
    const char *fname[64] = { 0 };
    r = (rd){ d, d + n };
    while (rd_field(&r, &f)) {
        if (f.field != 5)
            continue;
        uint64_t id, nm;
        cr_assert_eq(ints(f.data, f.len, 1, &id, 1), 1);
        cr_assert_eq(ints(f.data, f.len, 2, &nm, 1), 1);
        cr_assert(id > 0 && id < 64 && nm < nstr);
        fname[id] = strs[nm];
    }
    /* locations: id -> (mapping, address, function) */
    uint64_t lmap[64] = { 0 }, laddr[64] = { 0 }, lfunc[64] = { 0 };
    r = (rd){ d, d + n };
    while (rd_field(&r, &f)) {
        if (f.field != 4)
            continue;
        uint64_t id;
        cr_assert_eq(ints(f.data, f.len, 1, &id, 1), 1);
        cr_assert(id > 0 && id < 64);
        cr_assert_eq(ints(f.data, f.len, 2, &lmap[id], 1), 1);
        cr_assert_eq(ints(f.data, f.len, 3, &laddr[id], 1), 1);
        size_t ll;
        const uint8_t *line = sub(f.data, f.len, 4, &ll);
        cr_assert(line);
        cr_assert_eq(ints(line, ll, 1, &lfunc[id], 1), 1);
    }
    /* mappings: build-id of the program */
    size_t nmaps = 0;
    bool found_bid = false;
    char bidhex[200];
    image_build_id_hex(w.img, bidhex, sizeof bidhex);
    r = (rd){ d, d + n };
    while (rd_field(&r, &f)) {
        if (f.field != 3)
            continue;
        nmaps++;
        uint64_t b, fn;
        cr_assert_eq(ints(f.data, f.len, 6, &b, 1), 1);
        cr_assert_eq(ints(f.data, f.len, 5, &fn, 1), 1);
        if (!strcmp(strs[b], bidhex)) {
            found_bid = true;
            cr_assert_str_eq(strs[fn], w.path);
        }
    }
    cr_assert_eq(nmaps, 2);
    cr_assert(found_bid);

    /* samples: per procedure sums equal the rows of est_procedures */
    uint64_t sum_loop[2] = { 0, 0 }, sum_unknown = 0, total[2] = { 0, 0 };
    size_t nsamples = 0;
    r = (rd){ d, d + n };
    while (rd_field(&r, &f)) {
        if (f.field != 2)
            continue;
        nsamples++;
        uint64_t loc, v[2];
        cr_assert_eq(ints(f.data, f.len, 1, &loc, 1), 1);
        cr_assert_eq(ints(f.data, f.len, 2, v, 2), 2);
        cr_assert(loc > 0 && loc < 64 && fname[lfunc[loc]]);
        total[0] += v[0];
        total[1] += v[1];
        if (!strcmp(fname[lfunc[loc]], "loop1000")) {
            sum_loop[0] += v[0];
            sum_loop[1] += v[1];
            cr_assert(laddr[loc] >= w.loop && laddr[loc] < w.loop + 64);
        }
        if (!strcmp(fname[lfunc[loc]], EST_UNKNOWN_NAME)) {
            sum_unknown += v[0];
            cr_assert_eq(laddr[loc], 0x4000);
        }
    }
    cr_assert_eq(nsamples, 7);   /* distinct (image, offset) pairs */
    cr_assert_eq(sum_loop[0], 170);
    cr_assert_eq(sum_loop[1], 1);
    cr_assert_eq(sum_unknown, 9);
    cr_assert_eq(total[0], s.totals[0]);
    cr_assert_eq(total[1], s.totals[1]);
    uint64_t period;
    cr_assert_eq(ints(d, n, 12, &period, 1), 1);
    cr_assert_eq(period, 1000);

    char bad[1200];
    snprintf(bad, sizeof bad, "%s/no/dir/out.pb.gz", dir);
    cr_assert_not(est_pprof_write(&s, bad, &err));
    cr_assert(strstr(err.msg, bad), "%s", err.msg);

    for (size_t i = 0; i < nstr; i++)
        free(strs[i]);
    free(d);
    est_free(&s);
    image_close(w.img);
}

/* ---- kinds of process ------------------------------------------------------- */

/* Three processes of intloop-dyn with profiles of their own: two ran
 * loop1000 alone, one ran third alone.  The summed estimate (every block
 * and edge 1 here) splits into two kinds, each with the executions of
 * the code it ran and none of the other's. */
Test(estimator, runs_split_the_estimate_by_kind_of_process, .init = setup, .fini = teardown)
{
    world w;
    w.img = program("intloop-dyn", w.path, sizeof w.path);
    w.loop = sym(w.img, "loop1000");
    w.third = sym(w.img, "third");
    profdb *db = open_db();
    const uint8_t *bid = w.img->build_id;
    size_t bl = w.img->build_id_len;
    profdb_entry a[] = { { w.loop, 40 } }, b[] = { { w.loop, 50 } }, c[] = { { w.third, 30 } };
    merge(db, w.path, bid, bl, "cycles", "alpha1", a, 1);
    merge(db, w.path, bid, bl, "cycles@pid-7", "alpha1", a, 1);
    merge(db, w.path, bid, bl, "cycles@pid-8", "alpha1", c, 1);
    merge(db, w.path, bid, bl, "cycles@pid-9", "alpha1", b, 1);
    profdb_close(db);
    char err[256];
    cfg_program *cfg = cfg_build(w.img, err, sizeof err);
    cr_assert(cfg, "%s", err);
    est_freq *sum = est_freq_new(cfg);
    cr_assert(sum);
    for (size_t i = 0; i < cfg->nprocs; i++) {
        for (size_t k = 0; k < cfg->procs[i].nblocks; k++)
            sum->procs[i].block[k] = 1;
        for (size_t k = 0; k < cfg->procs[i].nedges; k++)
            sum->procs[i].edge[k] = 1;
    }
    est_selection sel = { .db = dbdir, .warn = catch_warn };
    est_run *runs;
    size_t n;
    cr_assert(est_freq_runs(&sel, cfg, sum, &runs, &n, err, sizeof err), "%s", err);
    cr_assert_eq(n, 2);
    const est_run *lp = runs[0].processes == 2 ? &runs[0] : &runs[1], *th = lp == runs ? &runs[1] : &runs[0];
    cr_assert_eq(lp->processes, 2);
    cr_assert_eq(th->processes, 1);
    cr_assert_float_eq(lp->share, 90.0 / 120, 1e-9);
    const cfg_proc *pl = cfg_proc_at(cfg, w.loop), *pt = cfg_proc_at(cfg, w.third);
    size_t il = (size_t)(pl - cfg->procs), it = (size_t)(pt - cfg->procs);
    uint32_t bl0 = cfg_block_at(pl, w.loop), bt0 = cfg_block_at(pt, w.third);
    cr_assert_float_eq(lp->freq->procs[il].block[bl0], 1, 1e-9);
    cr_assert_float_eq(th->freq->procs[il].block[bl0], 0, 1e-9);
    cr_assert_float_eq(th->freq->procs[it].block[bt0], 1, 1e-9);
    cr_assert_float_eq(lp->freq->procs[it].block[bt0], 0, 1e-9);
    est_runs_free(runs, n);
    /* without per-process profiles there is nothing to split */
    tu_rmrf(dbdir);
    db = open_db();
    merge(db, w.path, bid, bl, "cycles", "alpha1", a, 1);
    profdb_close(db);
    cr_assert(est_freq_runs(&sel, cfg, sum, &runs, &n, err, sizeof err), "%s", err);
    cr_assert_eq(n, 0);
    est_freq_free(sum);
    cfg_free(cfg);
    image_close(w.img);
}
