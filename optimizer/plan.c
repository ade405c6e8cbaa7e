/*
 * optimizer/plan.c: reading and writing layout plans (docs/layout-plan.md).
 *
 * The reader is strict: every line is one directive with exactly its
 * arguments, numbers are checked for range, and the first mistake stops it
 * with the line number.  Checks that need the image (is this address a
 * block?) are the rewriter's, which reports them with the same line numbers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/plan.h"

void plan_init(plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->cold_align = 16;
    pl->name = "plan";
}

void plan_free(plan *pl)
{
    for (size_t i = 0; i < pl->nprocs; i++)
        free(pl->procs[i].blocks);
    free(pl->procs);
    free(pl->inverts);
    free(pl->pins);
    free(pl->hints);
    const char *name = pl->name;
    plan_init(pl);
    pl->name = name;
}

/* Grow *arr (of n elements of size sz) so one more fits. */
static bool grow(void **arr, size_t n, size_t sz)
{
    if (n & (n - 1))               /* capacity is the next power of two */
        return true;
    void *p = realloc(*arr, (n ? 2 * n : 1) * sz);
    if (!p)
        return false;
    *arr = p;
    return true;
}

plan_proc *plan_add_proc(plan *pl, uint64_t addr, uint32_t align)
{
    if (!grow((void **)&pl->procs, pl->nprocs, sizeof *pl->procs))
        return NULL;
    plan_proc *pp = &pl->procs[pl->nprocs++];
    *pp = (plan_proc){ .addr = addr, .align = align, .split = PLAN_NOSPLIT };
    return pp;
}

bool plan_add_block(plan_proc *pp, uint64_t addr, uint32_t align)
{
    if (!grow((void **)&pp->blocks, pp->nblocks, sizeof *pp->blocks))
        return false;
    pp->blocks[pp->nblocks++] = (plan_block){ addr, align, 0 };
    return true;
}

void plan_set_split(plan_proc *pp)
{
    pp->split = pp->nblocks;
}

size_t plan_cold_start(const plan_proc *pp)
{
    return pp->split < pp->nblocks ? pp->split : pp->nblocks;
}

static bool add_addr(plan_addr **arr, size_t *n, uint64_t addr, uint32_t line)
{
    if (!grow((void **)arr, *n, sizeof **arr))
        return false;
    (*arr)[(*n)++] = (plan_addr){ addr, line };
    return true;
}

bool plan_add_invert(plan *pl, uint64_t addr)
{
    return add_addr(&pl->inverts, &pl->ninverts, addr, 0);
}

bool plan_add_pin(plan *pl, uint64_t addr)
{
    return add_addr(&pl->pins, &pl->npins, addr, 0);
}

bool plan_add_hint(plan *pl, uint64_t jump, uint64_t target)
{
    if (!grow((void **)&pl->hints, pl->nhints, sizeof *pl->hints))
        return false;
    pl->hints[pl->nhints++] = (plan_hint){ jump, target, 0 };
    return true;
}

/* ---- reading --------------------------------------------------------- */

/* Every address the plan names, by what it names it as, with its line: so a
 * repeat is found in constant time however long the plan (a scan of the
 * earlier lines made a 2-million-line plan quadratic). */
enum { SEEN_PROC, SEEN_INVERT, SEEN_PIN, SEEN_HINT, SEEN_BLOCK };  /* block: + proc index */

typedef struct seen_ent {
    uint64_t addr;
    uint32_t tag;           /* SEEN_*; 0 line marks an empty slot */
    uint32_t line;
} seen_ent;

typedef struct seen_set {
    seen_ent *e;
    size_t cap, n;          /* cap a power of two, at most half full */
} seen_set;

static size_t seen_slot(const seen_set *s, uint64_t addr, uint32_t tag)
{
    uint64_t h = (addr ^ ((uint64_t)tag << 40)) * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) & (s->cap - 1);
    while (s->e[i].line && (s->e[i].addr != addr || s->e[i].tag != tag))
        i = (i + 1) & (s->cap - 1);
    return i;
}

/* Line where (addr, tag) was seen, 0 if never. */
static uint32_t seen_find(const seen_set *s, uint64_t addr, uint32_t tag)
{
    return s->cap ? s->e[seen_slot(s, addr, tag)].line : 0;
}

static bool seen_add(seen_set *s, uint64_t addr, uint32_t tag, uint32_t line)
{
    if (2 * (s->n + 1) > s->cap) {
        seen_set g = { calloc(s->cap ? 2 * s->cap : 1024, sizeof *g.e), s->cap ? 2 * s->cap : 1024, 0 };
        if (!g.e)
            return false;
        for (size_t i = 0; i < s->cap; i++)
            if (s->e[i].line)
                g.e[seen_slot(&g, s->e[i].addr, s->e[i].tag)] = s->e[i];
        g.n = s->n;
        free(s->e);
        *s = g;
    }
    s->e[seen_slot(s, addr, tag)] = (seen_ent){ addr, tag, line };
    s->n++;
    return true;
}

typedef struct reader {
    const char *name;
    unsigned line;
    char *err;
    size_t errlen;
    seen_set seen;
} reader;

static bool fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(reader *r, const char *fmt, ...)
{
    int n = snprintf(r->err, r->errlen, "%s:%u: ", r->name, r->line);
    if (n < 0 || (size_t)n >= r->errlen)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static bool parse_addr(reader *r, const char *tok, uint64_t *out)
{
    if (strncmp(tok, "0x", 2) || !tok[2] || strlen(tok) > 18)
        return fail(r, "'%s' is not an address (0x followed by up to 16 hex digits)", tok);
    for (const char *p = tok + 2; *p; p++)
        if (!strchr("0123456789abcdefABCDEF", *p))
            return fail(r, "'%s' is not an address (0x followed by up to 16 hex digits)", tok);
    *out = strtoull(tok + 2, NULL, 16);
    if (*out & 3)
        return fail(r, "address %s is not a multiple of 4", tok);
    return true;
}

static bool parse_uint(reader *r, const char *tok, uint32_t max, uint32_t *out)
{
    char *end;
    if (!*tok || *tok == '-' || *tok == '+')
        return fail(r, "'%s' is not a number", tok);
    errno = 0;
    unsigned long v = strtoul(tok, &end, 10);
    if (*end || errno || v > max)
        return fail(r, "'%s' is not a number up to %u", tok, max);
    *out = (uint32_t)v;
    return true;
}

static bool parse_align(reader *r, const char *tok, uint32_t *out)
{
    if (!parse_uint(r, tok, 32, out))
        return false;
    if (*out != 4 && *out != 8 && *out != 16 && *out != 32)
        return fail(r, "alignment %s must be 4, 8, 16 or 32", tok);
    return true;
}

/* Optional "align N" after the address. */
static bool opt_align(reader *r, char **tok, int ntok, int at, uint32_t *align)
{
    *align = 0;
    if (ntok == at)
        return true;
    if (ntok != at + 2 || strcmp(tok[at], "align"))
        return fail(r, "%s: expected at most 'align N' after the address", tok[0]);
    return parse_align(r, tok[at + 1], align);
}

/* A proc's optional "align N" and "gap N", each at most once, in either
 * order. */
static bool proc_attrs(reader *r, char **tok, int ntok, uint32_t *align, uint32_t *gap)
{
    bool sa = false, sg = false;
    *align = *gap = 0;
    for (int at = 2; at < ntok; at += 2) {
        bool isa = !strcmp(tok[at], "align"), isg = !strcmp(tok[at], "gap");
        if (at + 1 >= ntok || (!isa && !isg) || (isa && sa) || (isg && sg))
            return fail(r, "proc: expected at most 'align N' and 'gap N' after the address");
        if (isa) {
            sa = true;
            if (!parse_align(r, tok[at + 1], align))
                return false;
        } else {
            sg = true;
            if (!parse_uint(r, tok[at + 1], PLAN_MAX_GAP, gap))
                return false;
            if (*gap % 4)
                return fail(r, "gap %s is not a multiple of 4", tok[at + 1]);
        }
    }
    return true;
}

#define MAXTOK 8

bool plan_parse(const char *text, size_t len, const char *name, plan *out,
                char *err, size_t errlen)
{
    reader r = { name ? name : "plan", 0, err, errlen, { 0 } };
    plan_init(out);
    out->name = r.name;
    bool have_header = false, ok = true;
    plan_proc *cur = NULL;
    bool seen_split = false;
    uint32_t offset_line = 0;       /* where cold-offset was given */
    char buf[512];
    size_t pos = 0;
    while (ok && pos < len) {
        size_t e = pos;
        while (e < len && text[e] != '\n')
            e++;
        r.line++;
        size_t ll = e - pos;
        if (ll >= sizeof buf) {
            ok = fail(&r, "line longer than %zu characters", sizeof buf - 1);
            break;
        }
        memcpy(buf, text + pos, ll);
        buf[ll] = 0;
        pos = e + 1;
        if (memchr(buf, 0, ll)) {
            ok = fail(&r, "NUL byte in the plan");
            break;
        }
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char *tok[MAXTOK + 1];
        int ntok = 0;
        for (char *s = strtok(buf, " \t\r"); s; s = strtok(NULL, " \t\r")) {
            if (ntok == MAXTOK) {
                ok = fail(&r, "too many words");
                break;
            }
            tok[ntok++] = s;
        }
        if (!ok || !ntok)
            continue;
        const char *d = tok[0];
        if (!have_header) {
            uint32_t v;
            if (strcmp(d, "cpo-layout") || ntok != 2) {
                ok = fail(&r, "a plan starts with 'cpo-layout %d'", PLAN_VERSION);
            } else if ((ok = parse_uint(&r, tok[1], 1000, &v)) && v != PLAN_VERSION) {
                ok = fail(&r, "plan version %u; this rewriter reads version %d", v, PLAN_VERSION);
            }
            have_header = true;
            continue;
        }
        uint64_t a, t;
        uint32_t al, gap;
        if (!strcmp(d, "build-id")) {
            size_t n = ntok == 2 ? strlen(tok[1]) : 0;
            if (ntok != 2 || !n || n > 128 || (n & 1) || strspn(tok[1], "0123456789abcdef") != n)
                ok = fail(&r, "build-id takes one lowercase hex string");
            else if (out->build_id[0])
                ok = fail(&r, "build-id given twice");
            else if (out->nprocs)
                ok = fail(&r, "build-id must come before the procedures");
            else
                memcpy(out->build_id, tok[1], n + 1);
        } else if (!strcmp(d, "cold-align")) {
            uint32_t v = 0;
            if (ntok != 2)
                ok = fail(&r, "cold-align takes one number");
            else if ((ok = parse_uint(&r, tok[1], 65536, &v)) && (v < 4 || (v & (v - 1))))
                ok = fail(&r, "cold-align %u must be a power of two from 4 to 65536", v);
            else
                out->cold_align = v;
        } else if (!strcmp(d, "cold-offset")) {
            uint32_t v = 0;
            if (ntok != 2)
                ok = fail(&r, "cold-offset takes one number");
            else if ((ok = parse_uint(&r, tok[1], 65535, &v)) && (v & 3))
                ok = fail(&r, "cold-offset %u is not a multiple of 4", v);
            else {
                out->cold_offset = v;
                offset_line = r.line;
            }
        } else if (!strcmp(d, "proc")) {
            if (ntok < 2)
                ok = fail(&r, "proc takes an address");
            else if ((ok = parse_addr(&r, tok[1], &a) && proc_attrs(&r, tok, ntok, &al, &gap))) {
                uint32_t l;
                if ((l = seen_find(&r.seen, a, SEEN_PROC)))
                    ok = fail(&r, "procedure 0x%llx already listed on line %u",
                              (unsigned long long)a, l);
                else if ((l = seen_find(&r.seen, a, SEEN_PIN)))
                    ok = fail(&r, "procedure 0x%llx is pinned on line %u and cannot also be placed",
                              (unsigned long long)a, l);
                else if (!seen_add(&r.seen, a, SEEN_PROC, r.line) ||
                         !(cur = plan_add_proc(out, a, al)))
                    ok = fail(&r, "out of memory");
                if (ok) {
                    cur->line = r.line;
                    cur->gap = gap;
                }
                seen_split = false;
            }
        } else if (!strcmp(d, "block")) {
            if (!cur)
                ok = fail(&r, "block outside a proc");
            else if (ntok < 2)
                ok = fail(&r, "block takes an address");
            else if ((ok = parse_addr(&r, tok[1], &a) && opt_align(&r, tok, ntok, 2, &al))) {
                uint32_t l, tag = SEEN_BLOCK + (uint32_t)(out->nprocs - 1);
                if ((l = seen_find(&r.seen, a, tag)))
                    ok = fail(&r, "block 0x%llx already listed on line %u",
                              (unsigned long long)a, l);
                else if (!seen_add(&r.seen, a, tag, r.line) || !plan_add_block(cur, a, al))
                    ok = fail(&r, "out of memory");
                if (ok)
                    cur->blocks[cur->nblocks - 1].line = r.line;
            }
        } else if (!strcmp(d, "split")) {
            if (!cur)
                ok = fail(&r, "split outside a proc");
            else if (seen_split)
                ok = fail(&r, "a procedure has at most one split");
            else if (ntok != 1)
                ok = fail(&r, "split takes no arguments");
            else {
                plan_set_split(cur);
                seen_split = true;
            }
        } else if (!strcmp(d, "invert") || !strcmp(d, "pin")) {
            bool inv = d[0] == 'i';
            uint32_t tag = inv ? SEEN_INVERT : SEEN_PIN, l;
            if (ntok != 2)
                ok = fail(&r, "%s takes one address", d);
            else if ((ok = parse_addr(&r, tok[1], &a))) {
                if ((l = seen_find(&r.seen, a, tag)))
                    ok = fail(&r, "%s 0x%llx already given on line %u", d,
                              (unsigned long long)a, l);
                else if (!inv && (l = seen_find(&r.seen, a, SEEN_PROC)))
                    ok = fail(&r, "procedure 0x%llx is placed on line %u and cannot also be pinned",
                              (unsigned long long)a, l);
                else if (!seen_add(&r.seen, a, tag, r.line) ||
                         !(inv ? add_addr(&out->inverts, &out->ninverts, a, r.line)
                               : add_addr(&out->pins, &out->npins, a, r.line)))
                    ok = fail(&r, "out of memory");
            }
        } else if (!strcmp(d, "hint")) {
            if (ntok != 3)
                ok = fail(&r, "hint takes a jump address and a target address");
            else if ((ok = parse_addr(&r, tok[1], &a) && parse_addr(&r, tok[2], &t))) {
                uint32_t l;
                if ((l = seen_find(&r.seen, a, SEEN_HINT)))
                    ok = fail(&r, "hint for 0x%llx already given on line %u",
                              (unsigned long long)a, l);
                else if (!seen_add(&r.seen, a, SEEN_HINT, r.line) || !plan_add_hint(out, a, t))
                    ok = fail(&r, "out of memory");
                if (ok)
                    out->hints[out->nhints - 1].line = r.line;
            }
        } else {
            ok = fail(&r, "unknown directive '%s'", d);
        }
    }
    if (ok && !have_header) {
        r.line = 1;
        ok = fail(&r, "empty plan: a plan starts with 'cpo-layout %d'", PLAN_VERSION);
    }
    if (ok && out->cold_offset >= out->cold_align) {
        r.line = offset_line;
        ok = fail(&r, "cold-offset %u is not below cold-align %u", out->cold_offset, out->cold_align);
    }
    free(r.seen.e);
    if (!ok) {
        plan_free(out);
        out->name = r.name;
    }
    return ok;
}

bool plan_read_file(const char *path, plan *out, char *err, size_t errlen)
{
    plan_init(out);
    out->name = path;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else {
            buf = nb;
        }
    }
    bool rd = buf && !ferror(f);
    fclose(f);
    if (!rd) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read the plan", path);
        return false;
    }
    bool ok = plan_parse(buf, n, path, out, err, errlen);
    free(buf);
    return ok;
}

/* ---- writing --------------------------------------------------------- */

bool plan_write(FILE *f, const plan *pl)
{
    fprintf(f, "cpo-layout %d\n", PLAN_VERSION);
    if (pl->build_id[0])
        fprintf(f, "build-id %s\n", pl->build_id);
    if (pl->cold_align != 16)
        fprintf(f, "cold-align %u\n", pl->cold_align);
    if (pl->cold_offset)
        fprintf(f, "cold-offset %u\n", pl->cold_offset);
    for (size_t i = 0; i < pl->npins; i++)
        fprintf(f, "pin 0x%llx\n", (unsigned long long)pl->pins[i].addr);
    for (size_t i = 0; i < pl->nprocs; i++) {
        const plan_proc *pp = &pl->procs[i];
        fprintf(f, "proc 0x%llx", (unsigned long long)pp->addr);
        if (pp->align)
            fprintf(f, " align %u", pp->align);
        if (pp->gap)
            fprintf(f, " gap %u", pp->gap);
        fputc('\n', f);
        for (size_t b = 0; b < pp->nblocks; b++) {
            if (b == pp->split)
                fprintf(f, "split\n");
            fprintf(f, "block 0x%llx", (unsigned long long)pp->blocks[b].addr);
            if (pp->blocks[b].align)
                fprintf(f, " align %u", pp->blocks[b].align);
            fputc('\n', f);
        }
    }
    for (size_t i = 0; i < pl->ninverts; i++)
        fprintf(f, "invert 0x%llx\n", (unsigned long long)pl->inverts[i].addr);
    for (size_t i = 0; i < pl->nhints; i++)
        fprintf(f, "hint 0x%llx 0x%llx\n", (unsigned long long)pl->hints[i].jump,
                (unsigned long long)pl->hints[i].target);
    return !ferror(f);
}
