/*
 * estimator/pprof.c: writing a selection as pprof's profile.proto
 * (report/pprof.h).  Field numbers are those of profile.proto.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/hex.h"
#include "common/hash.h"
#include "common/outfile.h"
#include "report/pprof.h"
#include "report/protobuf.h"

enum {
    /* Profile */
    P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
    P_STRING_TABLE = 6, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_COMMENT = 13,
    P_DEFAULT_SAMPLE_TYPE = 14,
    /* ValueType */
    VT_TYPE = 1, VT_UNIT = 2,
    /* Sample */
    S_LOCATION_ID = 1, S_VALUE = 2,
    /* Mapping */
    M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILENAME = 5, M_BUILD_ID = 6,
    M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES = 8, M_HAS_LINE_NUMBERS = 9,
    /* Location */
    L_ID = 1, L_MAPPING_ID = 2, L_ADDRESS = 3, L_LINE = 4,
    /* Line */
    LN_FUNCTION_ID = 1, LN_LINE = 2,
    /* Function */
    F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4, F_START_LINE = 5
};

#ifndef PT_LOAD
#define PT_LOAD 1
#endif

/* Strings to numbers: the string table's indices, and function ids keyed
 * by (image, start, name).  Open addressing, FNV-1a. */
typedef struct {
    char **keys;
    uint64_t *vals;
    size_t cap, n;
} strmap;

static uint64_t fnv(const char *s)
{
    return fnv1a_str(FNV1A_INIT, s);
}

static bool map_grow(strmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    char **k = calloc(cap, sizeof *k);
    uint64_t *v = calloc(cap, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = fnv(m->keys[i]) & (cap - 1);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = cap;
    return true;
}

/* The value of key; a new key gets `fresh` and *added is set. */
static bool map_get(strmap *m, const char *key, uint64_t fresh, uint64_t *val, bool *added)
{
    if ((m->n + 1) * 2 > m->cap && !map_grow(m))
        return false;
    size_t j = fnv(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (!strcmp(m->keys[j], key)) {
            *val = m->vals[j];
            *added = false;
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    if (!(m->keys[j] = strdup(key)))
        return false;
    m->vals[j] = fresh;
    m->n++;
    *val = fresh;
    *added = true;
    return true;
}

static void map_free(strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
}

typedef struct {
    strmap strings;
    pb_buf table;        /* the string table, already encoded */
    uint64_t nstrings;
    strmap funcs;
    uint64_t nfuncs;
    strmap locs;         /* "IMAGE:OFFSET" -> location id */
    uint64_t nlocs;
    const bool *stacked; /* per event: its samples come from stacks */
    pb_buf functions;    /* encoded Function messages */
    pb_buf tmp;
    bool failed;
} builder;

static uint64_t str(builder *b, const char *s)
{
    uint64_t id;
    bool added;
    if (!map_get(&b->strings, s, b->nstrings, &id, &added)) {
        b->failed = true;
        return 0;
    }
    if (added) {
        b->nstrings++;
        pb_string(&b->table, P_STRING_TABLE, s);
    }
    return id;
}

static uint64_t function(builder *b, size_t image_ix, uint64_t start, const char *name,
                         const char *file, uint64_t start_line)
{
    char key[600];
    snprintf(key, sizeof key, "%zu:%" PRIx64 ":%s", image_ix, start, name);
    uint64_t id;
    bool added;
    if (!map_get(&b->funcs, key, b->nfuncs + 1, &id, &added)) {
        b->failed = true;
        return 0;
    }
    if (added) {
        b->nfuncs++;
        pb_buf f = { 0 };
        pb_uint(&f, F_ID, id);
        pb_uint(&f, F_NAME, str(b, name));
        pb_uint(&f, F_SYSTEM_NAME, str(b, name));
        pb_uint(&f, F_FILENAME, str(b, file));
        if (start_line)
            pb_uint(&f, F_START_LINE, start_line);
        pb_message(&b->functions, P_FUNCTION, &f);
        pb_free(&f);
    }
    return id;
}

static uint64_t clamp(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : v;
}

/* One mapping's addresses: the image's loadable segments, widened to hold
 * every sampled offset (a sample outside them still needs a mapping). */
static void extent(const est_image *im, uint64_t *lo, uint64_t *hi, uint64_t *file_off)
{
    *lo = UINT64_MAX;
    *hi = 0;
    *file_off = 0;
    if (im->status == EST_IMAGE_READ) {
        for (size_t i = 0; i < im->img->nsegments; i++) {
            const image_segment *sg = &im->img->segments[i];
            if (sg->type != PT_LOAD)
                continue;
            if (sg->vaddr < *lo) {
                *lo = sg->vaddr;
                *file_off = sg->offset;
            }
            if (sg->vaddr + sg->memsz > *hi)
                *hi = sg->vaddr + sg->memsz;
        }
    }
    if (im->n) {
        if (im->offsets[0] < *lo) {
            *lo = im->offsets[0];
            *file_off = 0;
        }
        if (im->offsets[im->n - 1] + 1 > *hi)
            *hi = im->offsets[im->n - 1] + 1;
    }
    if (*lo > *hi)
        *lo = *hi = 0;
}

/* The location of (image ii, offset), made on first use. */
static uint64_t location(builder *b, pb_buf *out, const est_set *s, size_t ii, uint64_t off, bool *any_line)
{
    const est_image *im = &s->images[ii];
    char key[64], buf[300];
    snprintf(key, sizeof key, "%zu:%" PRIx64, ii, off);
    uint64_t loc, fid;
    bool added;
    if (!map_get(&b->locs, key, b->nlocs + 1, &loc, &added)) {
        b->failed = true;
        return 0;
    }
    if (!added)
        return loc;
    b->nlocs++;
    unsigned line = 0;
    if (im->status == EST_IMAGE_READ) {
        uint64_t start, end;
        const char *name = est_procedure_at(im->img, off, buf, sizeof buf, &start, &end);
        const char *file = im->path, *sfile, *sfunc;
        unsigned sline = 0;
        if (start && image_source_line(im->img, start, &sfile, &sline, &sfunc) && sfile)
            file = sfile;
        else
            sline = 0;
        fid = function(b, ii, start, name, file, sline);
        if (image_source_line(im->img, off, &sfile, &line, &sfunc) && sfile)
            *any_line = true;
        else
            line = 0;
    } else {
        fid = function(b, ii, 0, im->status == EST_IMAGE_UNKNOWN ? EST_UNKNOWN_NAME : EST_NOT_READ_NAME,
                       im->path, 0);
    }
    pb_buf *t = &b->tmp, ln = { 0 };
    pb_reset(t);
    pb_uint(t, L_ID, loc);
    pb_uint(t, L_MAPPING_ID, ii + 1);
    pb_uint(t, L_ADDRESS, off);
    pb_uint(&ln, LN_FUNCTION_ID, fid);
    if (line)
        pb_uint(&ln, LN_LINE, line);
    pb_message(t, L_LINE, &ln);
    pb_free(&ln);
    pb_message(out, P_LOCATION, t);
    return loc;
}

static void encode_image(builder *b, pb_buf *out, const est_set *s, size_t ii, bool *any_line)
{
    const est_image *im = &s->images[ii];
    size_t nev = s->nevents;
    uint64_t *vals = calloc(nev ? nev : 1, sizeof *vals);
    if (!vals) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < im->n; i++) {
        uint64_t loc = location(b, out + 1, s, ii, im->offsets[i], &any_line[ii]);
        bool some = false;
        for (size_t e = 0; e < nev; e++) {
            /* an event whose samples come with stacks is written there */
            vals[e] = b->stacked && b->stacked[e] ? 0 : clamp(im->counts[i * nev + e]);
            some |= vals[e] != 0;
        }
        if (!some)
            continue;
        pb_buf *t = &b->tmp;
        pb_reset(t);
        pb_packed(t, S_LOCATION_ID, &loc, 1);
        pb_packed(t, S_VALUE, vals, nev);
        pb_message(out + 0, P_SAMPLE, t);
    }
    free(vals);
}

/* A frame in an image with no samples in the selection: a location of no
 * mapping, named as the stacks name it. */
static uint64_t stray_location(builder *b, pb_buf *out, const char *key, uint64_t off, const char *name)
{
    char k[PROFDB_KEY_MAX + 40];
    snprintf(k, sizeof k, "%s:%" PRIx64 ":stray", key, off);
    uint64_t loc;
    bool added;
    if (!map_get(&b->locs, k, b->nlocs + 1, &loc, &added)) {
        b->failed = true;
        return 0;
    }
    if (added) {
        b->nlocs++;
        uint64_t fid = function(b, SIZE_MAX, 0, name, key, 0);
        pb_buf *t = &b->tmp, ln = { 0 };
        pb_reset(t);
        pb_uint(t, L_ID, loc);
        pb_uint(t, L_ADDRESS, off);
        pb_uint(&ln, LN_FUNCTION_ID, fid);
        pb_message(t, L_LINE, &ln);
        pb_free(&ln);
        pb_message(out, P_LOCATION, t);
    }
    return loc;
}

/* Event e's samples as stacks: one Sample per stack, leaf first. */
static void encode_stacks(builder *b, pb_buf *out, const est_set *s, size_t e, const est_stacks *k,
                          bool *any_line)
{
    size_t nev = s->nevents;
    size_t *ix = malloc((k->st.nimages + 1) * sizeof *ix);
    uint64_t *vals = calloc(nev, sizeof *vals);
    uint64_t *locs = malloc(PROFDB_STACK_MAX_FRAMES * sizeof *locs);
    if (!ix || !vals || !locs) {
        b->failed = true;
        goto out;
    }
    for (size_t i = 0; i < k->st.nimages; i++) {
        ix[i] = SIZE_MAX;
        for (size_t j = 0; j < s->nimages; j++)
            if (!strcmp(s->images[j].key, k->st.img[i].key))
                ix[i] = j;
    }
    for (size_t i = 0; i < k->st.n && !b->failed; i++) {
        const profdb_stack *st = &k->st.s[i];
        for (uint32_t j = 0; j < st->n; j++) {
            const profdb_frame *f = &st->f[j];
            locs[j] = ix[f->image] != SIZE_MAX
                      ? location(b, out + 1, s, ix[f->image], f->offset, &any_line[ix[f->image]])
                      : stray_location(b, out + 1, k->st.img[f->image].key, f->offset,
                                       k->name[(size_t)(f - k->st.frames)]);
        }
        vals[e] = clamp(st->count);
        pb_buf *t = &b->tmp;
        pb_reset(t);
        pb_packed(t, S_LOCATION_ID, locs, st->n);
        pb_packed(t, S_VALUE, vals, nev);
        pb_message(out + 0, P_SAMPLE, t);
    }
out:
    free(ix);
    free(vals);
    free(locs);
}

static void encode_mapping(builder *b, pb_buf *out, const est_set *s, size_t ii, bool any_line)
{
    const est_image *im = &s->images[ii];
    uint64_t lo, hi, file_off;
    extent(im, &lo, &hi, &file_off);
    char idbuf[2 * PROFDB_MAX_BUILD_ID + 1];
    hex_bytes(im->build_id, im->build_id_len, idbuf, sizeof idbuf);
    pb_buf *t = &b->tmp;
    pb_reset(t);
    pb_uint(t, M_ID, ii + 1);
    pb_uint(t, M_START, lo);
    pb_uint(t, M_LIMIT, hi);
    pb_uint(t, M_OFFSET, file_off);
    pb_uint(t, M_FILENAME, str(b, im->path));
    pb_uint(t, M_BUILD_ID, str(b, idbuf));
    pb_uint(t, M_HAS_FUNCTIONS, im->status == EST_IMAGE_READ);
    pb_uint(t, M_HAS_FILENAMES, any_line);
    pb_uint(t, M_HAS_LINE_NUMBERS, any_line);
    pb_message(out + 2, P_MAPPING, t);
}

bool est_pprof_encode(const est_set *s, uint8_t **out, size_t *size, est_error *err)
{
    return est_pprof_encode_stacks(s, NULL, out, size, err);
}

bool est_pprof_encode_stacks(const est_set *s, const est_stacks *const *stk, uint8_t **out, size_t *size,
                             est_error *err)
{
    builder b = { 0 };
    bool *stacked = calloc(s->nevents + 1, sizeof *stacked);
    bool *any_line = calloc(s->nimages + 1, sizeof *any_line);
    if (!stacked || !any_line)
        b.failed = true;
    for (size_t e = 0; stk && stacked && e < s->nevents; e++)
        stacked[e] = stk[e] && stk[e]->samples == s->totals[e];
    b.stacked = stacked;
    pb_buf parts[3] = { { 0 } };   /* samples, locations, mappings */
    pb_buf head = { 0 };
    str(&b, "");                   /* index 0 is always the empty string */
    uint64_t count = str(&b, "count");
    for (size_t e = 0; e < s->nevents; e++) {
        pb_reset(&b.tmp);
        pb_uint(&b.tmp, VT_TYPE, str(&b, s->events[e]));
        pb_uint(&b.tmp, VT_UNIT, count);
        pb_message(&head, P_SAMPLE_TYPE, &b.tmp);
    }
    for (size_t i = 0; i < s->nimages && !b.failed; i++)
        encode_image(&b, parts, s, i, any_line);
    for (size_t e = 0; e < s->nevents && !b.failed; e++)
        if (stacked[e])
            encode_stacks(&b, parts, s, e, stk[e], any_line);
    for (size_t i = 0; i < s->nimages && !b.failed; i++)
        encode_mapping(&b, parts, s, i, any_line[i]);
    if (s->nevents) {
        double period = est_mean_period(s->period_sums[0], s->totals[0]);
        pb_reset(&b.tmp);
        pb_uint(&b.tmp, VT_TYPE, str(&b, s->events[0]));
        pb_uint(&b.tmp, VT_UNIT, count);
        pb_message(&head, P_PERIOD_TYPE, &b.tmp);
        if (period >= 1)
            pb_uint(&head, P_PERIOD, (uint64_t)(period + 0.5));
        pb_uint(&head, P_DEFAULT_SAMPLE_TYPE, str(&b, s->events[0]));
    }
    char comment[PROFDB_EPOCH_MAX + 4200];
    snprintf(comment, sizeof comment, "cpo: database %s, %s%s", s->db,
             s->all_epochs ? "all epochs" : "epoch ", s->all_epochs ? "" : s->epoch);
    pb_uint(&head, P_COMMENT, str(&b, comment));

    pb_buf all = { 0 };
    const pb_buf *order[] = { &head, &parts[0], &parts[2], &parts[1], &b.functions, &b.table };
    size_t total = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        if (order[i]->failed)
            b.failed = true;
        total += order[i]->len;
    }
    if (!b.failed && (all.data = malloc(total ? total : 1))) {
        for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
            if (order[i]->len)
                memcpy(all.data + all.len, order[i]->data, order[i]->len);
            all.len += order[i]->len;
        }
    } else {
        b.failed = true;
    }
    for (int i = 0; i < 3; i++)
        pb_free(&parts[i]);
    pb_free(&head);
    pb_free(&b.table);
    pb_free(&b.functions);
    pb_free(&b.tmp);
    map_free(&b.strings);
    map_free(&b.funcs);
    map_free(&b.locs);
    free(stacked);
    free(any_line);
    if (b.failed) {
        free(all.data);
        if (err)
            snprintf(err->msg, sizeof err->msg, "out of memory");
        return false;
    }
    *out = all.data;
    *size = all.len;
    return true;
}

static bool gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *outn)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip header and trailer around the deflate stream. */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    uint8_t *buf = malloc(cap);
    bool ok = buf != NULL;
    size_t done = 0;
    z.next_in = (Bytef *)in;
    while (ok) {
        size_t chunk = n - done > (1u << 30) ? (1u << 30) : n - done;
        z.next_in = (Bytef *)in + done;
        z.avail_in = (uInt)chunk;
        z.next_out = buf + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        int flush = done + chunk == n ? Z_FINISH : Z_NO_FLUSH;
        int r = deflate(&z, flush);
        done += chunk - z.avail_in;
        if (r == Z_STREAM_END)
            break;
        if (r != Z_OK && r != Z_BUF_ERROR)
            ok = false;
        if (z.avail_out == 0)
            ok = false;   /* deflateBound is a promise; never more than it */
    }
    *outn = z.total_out;
    deflateEnd(&z);
    if (!ok) {
        free(buf);
        return false;
    }
    *out = buf;
    return true;
}

bool est_pprof_write(const est_set *s, const char *file, est_error *err)
{
    return est_pprof_write_stacks(s, NULL, file, err);
}

bool est_pprof_write_stacks(const est_set *s, const est_stacks *const *stk, const char *file,
                            est_error *err)
{
    uint8_t *raw, *gz;
    size_t n, gn;
    if (!est_pprof_encode_stacks(s, stk, &raw, &n, err))
        return false;
    bool ok = gzip(raw, n, &gz, &gn);
    free(raw);
    if (!ok) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot compress the profile", file);
        return false;
    }
    /* A temporary renamed over the file: a failed export keeps the old one. */
    outfile of;
    if (!outfile_open(&of, file, 0666, err->msg, sizeof err->msg)) {
        free(gz);
        return false;
    }
    size_t done = 0;
    while (ok && done < gn) {
        ssize_t w = write(of.fd, gz + done, gn - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err->msg, sizeof err->msg, "%s: cannot write: %s", file,
                     w < 0 ? strerror(errno) : "no progress");
            ok = false;
        } else {
            done += (size_t)w;
        }
    }
    if (ok)
        ok = outfile_commit(&of, err->msg, sizeof err->msg);
    else
        outfile_abort(&of);
    free(gz);
    return ok;
}
