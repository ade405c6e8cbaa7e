/*
 * profdb/exact.c: the reader of axp's exact counts (profdb/exact.h).
 *
 * One pass over the text, a record per line.  Images must be declared (in
 * order 0, 1, ...) before a record names them, as axp writes them; records
 * of code outside any image (image "-") carry no image to attach to and are
 * skipped, which is also what every user of the counts wants.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/exact.h"
#include "profdb/internal.h"

#define MAX_WORDS 8
#define MAX_IMAGES 65536

typedef struct parser {
    const char *name;
    size_t line;
    profdb_exact *ex;
    profdb_error *err;
} parser;

static bool bad(parser *p, const char *what)
{
    return pd_fail(p->err, PROFDB_ECORRUPT, "%s:%zu: %s", p->name, p->line, what);
}

/* Grows *arr, which holds n elements of size sz, to hold one more: capacity
 * 16, then doubling whenever n reaches a power of two. */
static bool grow(void **arr, size_t n, size_t sz, parser *p)
{
    if (n != 0 && (n < 16 || (n & (n - 1))))
        return true;
    size_t cap = n ? 2 * n : 16;
    void *np = realloc(*arr, cap * sz);
    if (!np)
        return pd_fail(p->err, PROFDB_ENOMEM, "%s:%zu: out of memory", p->name, p->line);
    *arr = np;
    return true;
}

#define PUSH(p, arr, n, val)                                                  \
    (grow((void **)&(arr), (n), sizeof *(arr), (p)) ? ((arr)[(n)++] = (val), true) : false)

static bool num(const char *s, uint64_t *v, bool hex)
{
    if (hex) {
        if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
            return false;
        s += 2;
    }
    if (!*s || strlen(s) > (hex ? 16u : 20u))
        return false;
    uint64_t r = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (hex && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (hex && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        uint64_t base = hex ? 16 : 10;
        if (r > (UINT64_MAX - d) / base)
            return false;
        r = r * base + d;
    }
    *v = r;
    return true;
}

/* An image number: -1 for "-", else an index of a declared image. */
static bool image_ref(parser *p, const char *s, long *img)
{
    uint64_t v;
    if (!strcmp(s, "-")) {
        *img = -1;
        return true;
    }
    if (!num(s, &v, false) || v >= p->ex->nimages)
        return bad(p, "image number not declared by an earlier 'image' line");
    *img = (long)v;
    return true;
}

static bool addr(parser *p, const char *s, uint64_t *v)
{
    return num(s, v, true) ? true : bad(p, "bad address (want 0x and hex digits)");
}

static bool count(parser *p, const char *s, uint64_t *v)
{
    return num(s, v, false) ? true : bad(p, "bad count (want a decimal number)");
}

static bool image_line(parser *p, char *rest)
{
    char *id = strtok_r(rest, " \t", &rest);
    char *idstr = strtok_r(NULL, " \t", &rest);
    while (rest && (*rest == ' ' || *rest == '\t'))
        rest++;
    uint64_t n;
    if (!id || !idstr || !rest || !*rest)
        return bad(p, "image: want 'image N BUILD-ID PATH'");
    if (!num(id, &n, false) || n != p->ex->nimages)
        return bad(p, "image: numbers must run 0, 1, 2, ... in order");
    if (n >= MAX_IMAGES)
        return bad(p, "image: too many images");
    profdb_exact_image im = { 0 };
    if (strcmp(idstr, "-")) {
        size_t len = strlen(idstr);
        if (len % 2 || len / 2 > PROFDB_MAX_BUILD_ID)
            return bad(p, "image: build-id must be an even number of hex digits, at most 128");
        static const char hexd[] = "0123456789abcdef";
        for (size_t i = 0; i < len; i++)
            if (!strchr(hexd, idstr[i]))
                return bad(p, "image: build-id is not lowercase hex");
        for (size_t i = 0; i < len / 2; i++)
            im.build_id[i] = (uint8_t)((strchr(hexd, idstr[2 * i]) - hexd) << 4 |
                                       (strchr(hexd, idstr[2 * i + 1]) - hexd));
        im.build_id_len = len / 2;
    }
    if (!(im.path = strdup(rest)))
        return pd_fail(p->err, PROFDB_ENOMEM, "%s:%zu: out of memory", p->name, p->line);
    if (!PUSH(p, p->ex->images, p->ex->nimages, im)) {
        free(im.path);
        return false;
    }
    return true;
}

static bool edge_kind(char k)
{
    return k && strchr("TNBCSJROPF", k);
}

static bool jump_line(parser *p, profdb_exact_image *im, char **w, int nw)
{
    profdb_exact_jump j = { 0 };
    if (nw < 5)
        return bad(p, "jump: want 'jump N PC KIND COUNT M:TO=C ...'");
    if (!addr(p, w[2], &j.pc) || !count(p, w[4], &j.count))
        return false;
    if (strlen(w[3]) >= sizeof j.kind)
        return bad(p, "jump: unknown kind");
    strcpy(j.kind, w[3]);
    j.first = im->ntargets;
    for (int k = 5; k < nw; k++) {
        char *colon = strchr(w[k], ':'), *eq = colon ? strchr(colon, '=') : NULL;
        if (!colon || !eq)
            return bad(p, "jump: a target must be M:TO=COUNT");
        *colon = *eq = 0;
        long img;
        profdb_exact_target t = { 0 };
        if (!image_ref(p, w[k], &img) || !addr(p, colon + 1, &t.to) || !count(p, eq + 1, &t.count))
            return false;
        t.image = img < 0 ? PROFDB_EXACT_NOIMAGE : (uint32_t)img;
        if (!PUSH(p, im->targets, im->ntargets, t))
            return false;
    }
    j.ntargets = im->ntargets - j.first;
    return PUSH(p, im->jumps, im->njumps, j);
}

/* One record line, split into words (the extra jump words are not limited
 * by MAX_WORDS: a jump has its own split). */
static bool record(parser *p, char *line)
{
    char *save, *w[MAX_WORDS + 1];
    int nw = 0;
    if (!strncmp(line, "image", 5) && (line[5] == ' ' || line[5] == '\t'))
        return image_line(p, line + 6);
    bool isjump = !strncmp(line, "jump", 4) && (line[4] == ' ' || line[4] == '\t');
    char **jw = NULL;
    int jcap = 0;
    for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (isjump) {
            if (nw == jcap) {
                jcap = jcap ? 2 * jcap : 16;
                char **nj = realloc(jw, (size_t)jcap * sizeof *nj);
                if (!nj) {
                    free(jw);
                    return pd_fail(p->err, PROFDB_ENOMEM, "%s:%zu: out of memory", p->name, p->line);
                }
                jw = nj;
            }
            jw[nw++] = t;
        } else {
            if (nw == MAX_WORDS)
                return bad(p, "too many words for the record");
            w[nw++] = t;
        }
    }
    char **ws = isjump ? jw : w;
    long img;
    bool ok;
    if (nw < 2) {
        free(jw);
        return bad(p, "incomplete record");
    }
    static const char *const kinds[] = { "block", "entry", "edge", "exit", "branch", "jump", "call" };
    size_t k = 0;
    while (k < sizeof kinds / sizeof kinds[0] && strcmp(ws[0], kinds[k]))
        k++;
    if (k == sizeof kinds / sizeof kinds[0]) {
        free(jw);
        return bad(p, "unknown record (want image, block, entry, edge, exit, branch, jump or call)");
    }
    if (!image_ref(p, ws[1], &img)) {
        free(jw);
        return false;
    }
    if (img < 0) {                    /* run-time code: nothing to attach to */
        free(jw);
        return true;
    }
    profdb_exact_image *im = &p->ex->images[img];
    const char *kind = ws[0];
    if (isjump) {
        ok = jump_line(p, im, jw, nw);
        free(jw);
        return ok;
    }
    if (!strcmp(kind, "block")) {
        profdb_exact_run r;
        if (nw != 5)
            return bad(p, "block: want 'block N START END COUNT'");
        if (!addr(p, w[2], &r.start) || !addr(p, w[3], &r.end) || !count(p, w[4], &r.count))
            return false;
        if (r.end <= r.start || (r.start | r.end) & 3)
            return bad(p, "block: END must be above START, both multiples of 4");
        return PUSH(p, im->runs, im->nruns, r);
    }
    if (!strcmp(kind, "entry")) {
        profdb_exact_entry e;
        if (nw != 4)
            return bad(p, "entry: want 'entry N ADDR COUNT'");
        if (!addr(p, w[2], &e.addr) || !count(p, w[3], &e.count))
            return false;
        return PUSH(p, im->entries, im->nentries, e);
    }
    if (!strcmp(kind, "edge")) {
        profdb_exact_edge e;
        long to;
        if (nw != 7)
            return bad(p, "edge: want 'edge N FROM KIND M TO COUNT'");
        if (!addr(p, w[2], &e.from) || !image_ref(p, w[4], &to) || !addr(p, w[5], &e.to) ||
            !count(p, w[6], &e.count))
            return false;
        if (strlen(w[3]) != 1 || !edge_kind(w[3][0]))
            return bad(p, "edge: unknown kind (want one of T N B C S J R O P F)");
        e.kind = w[3][0];
        e.to_image = to < 0 ? PROFDB_EXACT_NOIMAGE : (uint32_t)to;
        return PUSH(p, im->edges, im->nedges, e);
    }
    if (!strcmp(kind, "exit")) {
        profdb_exact_exit e;
        if (nw != 5)
            return bad(p, "exit: want 'exit N ADDR KIND COUNT'");
        if (!addr(p, w[2], &e.addr) || !count(p, w[4], &e.count))
            return false;
        if (strlen(w[3]) != 1 || !(edge_kind(w[3][0]) || w[3][0] == 'X'))
            return bad(p, "exit: unknown kind");
        e.kind = w[3][0];
        return PUSH(p, im->exits, im->nexits, e);
    }
    if (!strcmp(kind, "branch")) {
        profdb_exact_branch b;
        if (nw != 6)
            return bad(p, "branch: want 'branch N PC TARGET TAKEN NOTTAKEN'");
        if (!addr(p, w[2], &b.pc) || !addr(p, w[3], &b.target) || !count(p, w[4], &b.taken) ||
            !count(p, w[5], &b.not_taken))
            return false;
        return PUSH(p, im->branches, im->nbranches, b);
    }
    if (!strcmp(kind, "call")) {
        profdb_exact_call c;
        if (nw != 4)
            return bad(p, "call: want 'call N PC COUNT'");
        if (!addr(p, w[2], &c.pc) || !count(p, w[3], &c.count))
            return false;
        return PUSH(p, im->calls, im->ncalls, c);
    }
    return bad(p, "unknown record (want image, block, entry, edge, exit, branch, jump or call)");
}

profdb_exact *profdb_exact_parse(const char *text, size_t len, const char *name,
                                 profdb_error *err)
{
    parser p = { .name = name, .err = err };
    if (!(p.ex = calloc(1, sizeof *p.ex)) || !(p.ex->name = strdup(name))) {
        free(p.ex);
        pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0;
    bool ok = true, any = false, runs = false;
    for (size_t at = 0; at < len && ok;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = (nl ? (size_t)(nl - text) : len) - at;
        p.line++;
        if (n + 1 > cap) {
            char *nb = realloc(buf, cap = n + 1);
            if (!nb) {
                ok = pd_fail(err, PROFDB_ENOMEM, "%s:%zu: out of memory", name, p.line);
                break;
            }
            buf = nb;
        }
        memcpy(buf, text + at, n);
        buf[n] = 0;
        at += n + 1;
        if (memchr(buf, 0, n)) {
            ok = bad(&p, "a NUL byte in the text");
            break;
        }
        if (n && buf[n - 1] == '\r')
            buf[--n] = 0;
        char *s = buf + strspn(buf, " \t");
        if (!*s || *s == '#')
            continue;
        any = true;
        runs = runs || !strncmp(s, "block", 5);
        ok = record(&p, s);
    }
    free(buf);
    if (ok && !any)
        ok = pd_fail(err, PROFDB_ECORRUPT, "%s: no records: not an exact-counts file", name);
    /* Every run executes a block: image lines alone are a file cut short,
     * which would read as counts of zero. */
    if (ok && !runs)
        ok = pd_fail(err, PROFDB_ECORRUPT, "%s: no counts for any image (only image lines: cut short?)", name);
    if (!ok) {
        profdb_exact_free(p.ex);
        return NULL;
    }
    return p.ex;
}

profdb_exact *profdb_exact_read(const char *file, profdb_error *err)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        pd_fail_sys(err, file, "cannot open");
        return NULL;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            char *nt = realloc(text, cap = cap ? 2 * cap : 1 << 16);
            if (!nt) {
                free(text);
                fclose(f);
                pd_fail(err, PROFDB_ENOMEM, "%s: out of memory", file);
                return NULL;
            }
            text = nt;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(text);
        pd_fail_sys(err, file, "cannot read");
        return NULL;
    }
    profdb_exact *ex = profdb_exact_parse(text, len, file, err);
    free(text);
    return ex;
}

void profdb_exact_free(profdb_exact *ex)
{
    if (!ex)
        return;
    for (size_t i = 0; i < ex->nimages; i++) {
        profdb_exact_image *im = &ex->images[i];
        free(im->path);
        free(im->runs);
        free(im->entries);
        free(im->edges);
        free(im->exits);
        free(im->branches);
        free(im->jumps);
        free(im->targets);
        free(im->calls);
    }
    free(ex->images);
    free(ex->name);
    free(ex);
}

const profdb_exact_image *profdb_exact_find(const profdb_exact *ex, const uint8_t *build_id,
                                            size_t len)
{
    for (size_t i = 0; ex && len && i < ex->nimages; i++)
        if (ex->images[i].build_id_len == len && !memcmp(ex->images[i].build_id, build_id, len))
            return &ex->images[i];
    return NULL;
}

const profdb_exact_image *profdb_exact_find_path(const profdb_exact *ex, const char *path)
{
    for (size_t i = 0; ex && i < ex->nimages; i++)
        if (!strcmp(ex->images[i].path, path))
            return &ex->images[i];
    return NULL;
}

const profdb_exact_image *profdb_exact_counts(const profdb_exact *ex, const uint8_t *build_id, size_t len,
                                              const char *path, profdb_error *err)
{
    const profdb_exact_image *im = len ? profdb_exact_find(ex, build_id, len) : profdb_exact_find_path(ex, path);
    if (!im)
        pd_fail(err, PROFDB_ENOENT, "%s: no image %s", ex->name, path);
    else if (!im->nruns)    /* entries, edges and exits all come with runs */
        pd_fail(err, PROFDB_ECORRUPT, "%s: no counts for %s", ex->name, path);
    return im && im->nruns ? im : NULL;
}
