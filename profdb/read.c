/*
 * profdb/read.c: the reading API every tool uses.
 *
 * Readers take no lock: each profile file is replaced whole by a rename,
 * so whatever a reader opens is a complete version.  Sums over hosts and
 * epochs are plain additions of such versions.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/le.h"
#include "profdb/internal.h"

bool profdb_read_file(const char *path, profdb_profile *out, profdb_error *err)
{
    uint8_t *data;
    size_t size;
    memset(out, 0, sizeof *out);
    if (!pd_slurp(path, &data, &size, err))
        return false;
    bool ok = profdb_decode(data, size, path, out, err);
    free(data);
    if (ok && !(out->info.file = pd_strdup(path, err))) {
        profdb_profile_free(out);
        ok = false;
    }
    return ok;
}

bool profdb_read_header(const char *path, profdb_info *out, profdb_error *err)
{
    uint8_t *data;
    size_t got;
    uint64_t fsize;
    memset(out, 0, sizeof *out);
    /* Headers are a few hundred bytes; read more only when one says so. */
    if (!pd_slurp_head(path, 4096, &data, &got, &fsize, err))
        return false;
    uint32_t hlen = got >= 16 ? le_get32(data + 12) : 0;
    if (hlen > got && hlen <= PROFDB_HDR_MAX && fsize >= hlen) {
        free(data);
        if (!pd_slurp_head(path, hlen, &data, &got, &fsize, err))
            return false;
    }
    bool ok = pd_decode_header(data, got, fsize, path, out, err);
    free(data);
    if (ok && !(out->file = pd_strdup(path, err))) {
        profdb_info_free(out);
        ok = false;
    }
    return ok;
}

/* ---- walking the tree ------------------------------------------------- */

typedef bool (*visit_fn)(profdb *db, const char *epoch, const char *file, void *ctx,
                         profdb_error *err);

static bool is_dir(DIR *d, const struct dirent *de)
{
    if (de->d_type == DT_DIR)
        return true;
    if (de->d_type != DT_UNKNOWN)
        return false;
    struct stat st;
    return fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && !strcmp(s + n - m, suf);
}

/* Profiles of one host directory: the file `fname` only, or every
 * profile whose name starts with `prefix` (NULL: all). */
static bool walk_host(profdb *db, const char *epoch, const char *hdir, const char *fname,
                      const char *prefix, visit_fn fn, void *ctx, profdb_error *err)
{
    if (fname) {
        char *path = pd_join(hdir, fname, NULL, err);
        if (!path)
            return false;
        struct stat st;
        bool ok = stat(path, &st) < 0 && errno == ENOENT ? true : fn(db, epoch, path, ctx, err);
        free(path);
        return ok;
    }
    DIR *d = opendir(hdir);
    if (!d)
        return errno == ENOENT || pd_fail_sys(err, hdir, "cannot read directory");
    struct dirent *de;
    bool ok = true;
    while (ok && (errno = 0, de = readdir(d))) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, PROFDB_SUFFIX) ||
            (prefix && strncmp(de->d_name, prefix, strlen(prefix))))
            continue;
        char *path = pd_join(hdir, de->d_name, NULL, err);
        ok = path && fn(db, epoch, path, ctx, err);
        free(path);
    }
    if (ok && errno)
        ok = pd_fail_sys(err, hdir, "cannot read directory");
    closedir(d);
    return ok;
}

static bool walk_epoch(profdb *db, const char *epoch, const char *host, const char *fname,
                       const char *prefix, visit_fn fn, void *ctx, profdb_error *err)
{
    char *edir = pd_join(db->dir, epoch, NULL, err);
    if (!edir)
        return false;
    bool ok = true;
    if (host) {
        char esc[3 * PROFDB_MAX_NAME + 1];
        pd_escape(host, true, esc, sizeof esc);
        char *hdir = pd_join(edir, esc, NULL, err);
        ok = hdir && walk_host(db, epoch, hdir, fname, prefix, fn, ctx, err);
        free(hdir);
        free(edir);
        return ok;
    }
    DIR *d = opendir(edir);
    if (!d) {
        pd_fail_sys(err, edir, "cannot read epoch");
        free(edir);
        return false;
    }
    struct dirent *de;
    while (ok && (errno = 0, de = readdir(d))) {
        if (de->d_name[0] == '.' || !is_dir(d, de))
            continue;
        char *hdir = pd_join(edir, de->d_name, NULL, err);
        ok = hdir && walk_host(db, epoch, hdir, fname, prefix, fn, ctx, err);
        free(hdir);
    }
    if (ok && errno)
        ok = pd_fail_sys(err, edir, "cannot read epoch");
    closedir(d);
    free(edir);
    return ok;
}

static bool walk(profdb *db, const char *epoch, const char *host, const char *fname,
                 const char *prefix, visit_fn fn, void *ctx, profdb_error *err)
{
    if (host && !pd_check_name(host, "host", err))
        return false;
    if (epoch) {
        struct stat st;
        char *edir = pd_join(db->dir, epoch, NULL, err);
        bool there = edir && pd_epoch_valid(epoch) && stat(edir, &st) == 0 && S_ISDIR(st.st_mode);
        free(edir);
        if (!there)
            return pd_fail(err, PROFDB_ENOENT, "%s: no epoch \"%s\"", db->dir, epoch);
        return walk_epoch(db, epoch, host, fname, prefix, fn, ctx, err);
    }
    char **v;
    size_t n;
    if (!profdb_epochs(db, &v, &n, err))
        return false;
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = walk_epoch(db, v[i], host, fname, prefix, fn, ctx, err);
    profdb_strv_free(v);
    return ok;
}

/* A file that fails to read: fatal, or skipped in tolerant mode.  One
 * that vanished between listing and opening was set aside by a writer. */
static bool bad_file(profdb *db, const profdb_error *e, profdb_error *err)
{
    if (e->code == PROFDB_ENOENT)
        return true;
    if (db->flags & PROFDB_TOLERANT && e->code != PROFDB_ENOMEM) {
        pd_warn(db, "skipped: %s", e->msg);
        return true;
    }
    if (err)
        *err = *e;
    return false;
}

/* A file's name must be the one its header's key and event give: readers
 * find a profile by its name and report it by its header, so a file
 * renamed by hand would be listed as one image and summed as another. */
static bool check_name(const char *file, const profdb_info *h, profdb_error *err)
{
    char want[PROFDB_KEY_MAX + 3 * PROFDB_MAX_NAME + 16];
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (pd_profile_name(h->key, h->event, want, sizeof want) && !strcmp(base, want))
        return true;
    return pd_fail(err, PROFDB_ECORRUPT, "%s: its header's key does not match its name (the header says %s, "
                   "renamed by hand?)", file, want);
}

/* ---- listing ---------------------------------------------------------- */

typedef struct {
    profdb_info *v;
    size_t n, cap;
} infovec;

static bool visit_list(profdb *db, const char *epoch, const char *file, void *ctx,
                       profdb_error *err)
{
    infovec *iv = ctx;
    profdb_info h;
    profdb_error e;
    if (!profdb_read_header(file, &h, &e))
        return bad_file(db, &e, err);
    if (!check_name(file, &h, &e)) {
        profdb_info_free(&h);
        return bad_file(db, &e, err);
    }
    snprintf(h.epoch, sizeof h.epoch, "%s", epoch);
    if (iv->n == iv->cap) {
        size_t cap = iv->cap ? 2 * iv->cap : 32;
        profdb_info *nv = realloc(iv->v, cap * sizeof *nv);
        if (!nv) {
            profdb_info_free(&h);
            return pd_fail(err, PROFDB_ENOMEM, "out of memory");
        }
        iv->v = nv;
        iv->cap = cap;
    }
    iv->v[iv->n++] = h;
    return true;
}

static int cmp_info(const void *a, const void *b)
{
    const profdb_info *x = a, *y = b;
    int c = strcmp(x->epoch, y->epoch);
    if (!c)
        c = strcmp(x->key, y->key);
    if (!c)
        c = strcmp(x->event, y->event);
    if (!c)
        c = strcmp(x->host, y->host);
    return c;
}

void profdb_infos_free(profdb_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        profdb_info_free(&v[i]);
    free(v);
}

bool profdb_list(profdb *db, const char *epoch, profdb_info **out, size_t *n,
                 profdb_error *err)
{
    infovec iv = { 0 };
    *out = NULL;
    *n = 0;
    if (!walk(db, epoch, NULL, NULL, NULL, visit_list, &iv, err)) {
        profdb_infos_free(iv.v, iv.n);
        return false;
    }
    if (iv.n)
        qsort(iv.v, iv.n, sizeof *iv.v, cmp_info);
    *out = iv.v;
    *n = iv.n;
    return true;
}

/* ---- summing ---------------------------------------------------------- */

typedef struct {
    profdb_profile *sum;
    size_t nfiles;
    int64_t newest;        /* updated time of the profile paths[0] came from */
    bool hosts_differ;
} sumctx;

/* Paths of `from` join `to`, the newer profile's names first. */
static bool union_paths(profdb_info *to, const profdb_info *from, bool from_newer,
                        profdb_error *err)
{
    char *v[2 * PROFDB_MAX_PATHS];
    unsigned n = 0;
    const profdb_info *first = from_newer ? from : to, *second = from_newer ? to : from;
    const profdb_info *srcs[2] = { first, second };
    for (int s = 0; s < 2; s++)
        for (unsigned i = 0; i < srcs[s]->npaths && n < PROFDB_MAX_PATHS; i++) {
            bool dup = false;
            for (unsigned k = 0; k < n && !dup; k++)
                dup = !strcmp(v[k], srcs[s]->paths[i]);
            if (!dup && !(v[n++] = pd_strdup(srcs[s]->paths[i], err))) {
                for (n--; n; )
                    free(v[--n]);
                return false;
            }
        }
    for (unsigned i = 0; i < to->npaths; i++)
        free(to->paths[i]);
    memcpy(to->paths, v, n * sizeof *v);
    to->npaths = n;
    return true;
}

static bool add_into(profdb_profile *to, const profdb_profile *from, const char *name,
                     profdb_error *err)
{
    if (to->info.total + from->info.total < to->info.total ||
        to->info.period_sum + from->info.period_sum < to->info.period_sum)
        return pd_fail(err, PROFDB_EOVERFLOW, "%s: sum exceeds 2^64-1", name);
    profdb_entry *v = malloc((to->n + from->n + 1) * sizeof *v);
    if (!v)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    size_t i = 0, j = 0, k = 0;
    while (i < to->n || j < from->n) {
        if (j == from->n || (i < to->n && to->e[i].offset < from->e[j].offset))
            v[k++] = to->e[i++];
        else if (i == to->n || from->e[j].offset < to->e[i].offset)
            v[k++] = from->e[j++];
        else {
            v[k] = to->e[i++];
            v[k++].count += from->e[j++].count;
        }
    }
    free(to->e);
    to->e = v;
    to->n = k;
    to->info.total += from->info.total;
    to->info.period_sum += from->info.period_sum;
    to->info.nentries = k;
    return true;
}

static bool visit_sum(profdb *db, const char *epoch, const char *file, void *ctx,
                      profdb_error *err)
{
    sumctx *c = ctx;
    profdb_profile p;
    profdb_error e;
    if (!profdb_read_file(file, &p, &e))
        return bad_file(db, &e, err);
    if (!check_name(file, &p.info, &e)) {
        profdb_profile_free(&p);
        return bad_file(db, &e, err);
    }
    profdb_profile *s = c->sum;
    profdb_info *h = &s->info;
    bool ok;
    if (c->nfiles == 0) {
        free(s->e);
        *s = p;
        snprintf(h->epoch, sizeof h->epoch, "%s", epoch);
        free(h->file);
        h->file = NULL;
        c->newest = h->updated;
        c->nfiles = 1;
        return true;
    }
    if (strcmp(h->epoch, epoch))
        h->epoch[0] = '\0';
    if (strcmp(h->host, p.info.host))
        c->hosts_differ = true;
    bool newer = p.info.updated > c->newest;
    ok = add_into(s, &p, file, err) && union_paths(h, &p.info, newer, err);
    if (ok) {
        if (newer)
            c->newest = p.info.updated;
        if (p.info.created < h->created)
            h->created = p.info.created;
        if (p.info.updated > h->updated)
            h->updated = p.info.updated;
        if (!h->build_id_len) {
            memcpy(h->build_id, p.info.build_id, p.info.build_id_len);
            h->build_id_len = p.info.build_id_len;
        }
        c->nfiles++;
    }
    profdb_profile_free(&p);
    return ok;
}

bool profdb_sum(profdb *db, const char *epoch, const char *host, const char *key,
                const char *event, profdb_profile *out, size_t *nfiles, profdb_error *err)
{
    memset(out, 0, sizeof *out);
    if (nfiles)
        *nfiles = 0;
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key (a build-id in hex, "
                       "\"path-\" and 16 hex digits, or \"%s\")", key ? key : "", PROFDB_UNKNOWN_KEY);
    if (!pd_check_name(event, "event", err))
        return false;
    char fname[PROFDB_KEY_MAX + 3 * PROFDB_MAX_NAME + 16];
    pd_profile_name(key, event, fname, sizeof fname);
    sumctx c = { .sum = out };
    if (!walk(db, epoch, host, fname, NULL, visit_sum, &c, err)) {
        profdb_profile_free(out);
        return false;
    }
    if (c.nfiles == 0)
        return pd_fail(err, PROFDB_ENOENT, "%s: no %s profile for %s%s%s%s%s", db->dir, event, key,
                       epoch ? " in epoch " : "", epoch ? epoch : "", host ? " from host " : "",
                       host ? host : "");
    if (c.hosts_differ)
        out->info.host[0] = '\0';
    if (nfiles)
        *nfiles = c.nfiles;
    return true;
}

/* ---- images and totals ------------------------------------------------ */

typedef struct {
    profdb_image *img;
    profdb_info *seen;     /* headers, for ordering the paths by recency */
    size_t n, cap;
} lookctx;

static bool visit_lookup(profdb *db, const char *epoch, const char *file, void *ctx,
                         profdb_error *err)
{
    lookctx *c = ctx;
    profdb_info h;
    profdb_error e;
    if (!profdb_read_header(file, &h, &e))
        return bad_file(db, &e, err);
    if (strcmp(h.key, c->img->key)) {   /* renamed by hand: not this image */
        profdb_info_free(&h);
        return true;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        profdb_info *nv = realloc(c->seen, cap * sizeof *nv);
        if (!nv) {
            profdb_info_free(&h);
            return pd_fail(err, PROFDB_ENOMEM, "out of memory");
        }
        c->seen = nv;
        c->cap = cap;
    }
    (void)epoch;
    c->seen[c->n++] = h;
    return true;
}

static int cmp_updated_desc(const void *a, const void *b)
{
    const profdb_info *x = a, *y = b;
    return x->updated < y->updated ? 1 : x->updated > y->updated ? -1 : 0;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append s to a NULL-terminated vector unless present. */
static bool strv_add(char ***v, size_t *n, const char *s, profdb_error *err)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], s))
            return true;
    char **nv = realloc(*v, (*n + 2) * sizeof **v);
    if (!nv)
        return pd_fail(err, PROFDB_ENOMEM, "out of memory");
    *v = nv;
    if (!(nv[*n] = pd_strdup(s, err)))
        return false;
    nv[++*n] = NULL;
    return true;
}

void profdb_image_free(profdb_image *img)
{
    profdb_strv_free(img->paths);
    profdb_strv_free(img->events);
    memset(img, 0, sizeof *img);
}

bool profdb_lookup(profdb *db, const char *key, profdb_image *out, profdb_error *err)
{
    memset(out, 0, sizeof *out);
    if (!key || !pd_key_valid(key))
        return pd_fail(err, PROFDB_EINVAL, "\"%s\" is not a profile key", key ? key : "");
    snprintf(out->key, sizeof out->key, "%s", key);
    char prefix[PROFDB_KEY_MAX + 1];
    snprintf(prefix, sizeof prefix, "%s.", key);
    lookctx c = { .img = out };
    bool ok = walk(db, NULL, NULL, NULL, prefix, visit_lookup, &c, err);
    if (ok && c.n == 0)
        ok = pd_fail(err, PROFDB_ENOENT, "%s: no profiles for %s", db->dir, key);
    if (ok) {
        qsort(c.seen, c.n, sizeof *c.seen, cmp_updated_desc);
        size_t np = 0, ne = 0;
        for (size_t i = 0; ok && i < c.n; i++) {
            for (unsigned k = 0; ok && k < c.seen[i].npaths; k++)
                ok = strv_add(&out->paths, &np, c.seen[i].paths[k], err);
            ok = ok && strv_add(&out->events, &ne, c.seen[i].event, err);
            out->total += c.seen[i].total;
            if (c.seen[i].updated > out->last_seen)
                out->last_seen = c.seen[i].updated;
        }
        if (ok)
            qsort(out->events, ne, sizeof *out->events, cmp_cstr);
    }
    profdb_infos_free(c.seen, c.n);
    if (!ok)
        profdb_image_free(out);
    return ok;
}

void profdb_totals_free(profdb_total *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].event);
    free(v);
}

static int cmp_total(const void *a, const void *b)
{
    return strcmp(((const profdb_total *)a)->event, ((const profdb_total *)b)->event);
}

bool profdb_totals(profdb *db, const char *epoch, profdb_total **out, size_t *n,
                   profdb_error *err)
{
    profdb_info *v;
    size_t nv;
    *out = NULL;
    *n = 0;
    if (!profdb_list(db, epoch, &v, &nv, err))
        return false;
    profdb_total *t = NULL;
    size_t nt = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < nv; i++) {
        size_t k = 0;
        while (k < nt && strcmp(t[k].event, v[i].event))
            k++;
        if (k == nt) {
            profdb_total *nt2 = realloc(t, (nt + 1) * sizeof *t);
            if (!nt2 || !(nt2[nt].event = pd_strdup(v[i].event, err))) {
                if (nt2)
                    t = nt2;
                ok = pd_fail(err, PROFDB_ENOMEM, "out of memory");
                break;
            }
            t = nt2;
            t[nt].total = t[nt].period_sum = 0;
            t[nt].nprofiles = 0;
            nt++;
        }
        t[k].total += v[i].total;
        t[k].period_sum += v[i].period_sum;
        t[k].nprofiles++;
    }
    profdb_infos_free(v, nv);
    if (!ok) {
        profdb_totals_free(t, nt);
        return false;
    }
    if (nt)
        qsort(t, nt, sizeof *t, cmp_total);
    *out = t;
    *n = nt;
    return true;
}

/* For the other kinds of file kept beside the profiles (values.c): visit
 * the file `fname` in every host directory of an epoch (NULL: all). */
bool pd_walk_named(profdb *db, const char *epoch, const char *host, const char *fname,
                   bool (*fn)(profdb *db, const char *epoch, const char *file, void *ctx, profdb_error *err),
                   void *ctx, profdb_error *err)
{
    return walk(db, epoch, host, fname, NULL, fn, ctx, err);
}
