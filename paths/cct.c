/*
 * paths/cct.c: calling context trees in memory and as text (docs/paths.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paths/cct.h"
#include "common/escape.h"
#include "common/readfile.h"
#include "paths/lines.h"

/* (parent, site, image, proc) -> node, open addressing; rebuilt on growth. */
typedef struct cct_slot {
    uint32_t from, to;        /* to == CCT_NONE: empty */
    int32_t image;
    uint32_t back;            /* into t->back, or CCT_NONE for a child */
    uint64_t site, proc;
} cct_slot;

struct cct_hash {
    size_t cap, n;
    cct_slot *s;
};

static uint64_t slot_hash(uint32_t from, uint64_t site, int32_t image, uint64_t proc)
{
    uint64_t h = (uint64_t)from * 0x9e3779b97f4a7c15ULL ^ site * 0xc2b2ae3d27d4eb4fULL;
    h ^= (uint64_t)(uint32_t)image * 0x165667b19e3779f9ULL ^ proc * 0x27d4eb2f165667c5ULL;
    return h ^ h >> 29;
}

static cct_slot *hash_find(struct cct_hash *h, uint32_t from, uint64_t site, int32_t image, uint64_t proc)
{
    size_t i = slot_hash(from, site, image, proc) & (h->cap - 1);
    for (;; i = (i + 1) & (h->cap - 1)) {
        cct_slot *s = &h->s[i];
        if (s->to == CCT_NONE || (s->from == from && s->site == site && s->image == image && s->proc == proc))
            return s;
    }
}

static bool hash_grow(struct cct_hash *h)
{
    size_t nc = h->cap ? h->cap * 2 : 1024;
    cct_slot *ns = malloc(nc * sizeof *ns);
    if (!ns)
        return false;
    for (size_t i = 0; i < nc; i++)
        ns[i].to = CCT_NONE;
    struct cct_hash nh = { nc, h->n, ns };
    for (size_t i = 0; i < h->cap; i++)
        if (h->s[i].to != CCT_NONE)
            *hash_find(&nh, h->s[i].from, h->s[i].site, h->s[i].image, h->s[i].proc) = h->s[i];
    free(h->s);
    *h = nh;
    return true;
}

static uint32_t add_node(cct *t, uint32_t parent, int32_t image, uint64_t proc, uint64_t site, const char *name)
{
    if (t->nnodes == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        cct_node *nn = realloc(t->nodes, nc * sizeof *nn);
        if (!nn)
            return CCT_NONE;
        t->nodes = nn;
        uint64_t *nm = realloc(t->metrics, nc * (t->nmetrics ? t->nmetrics : 1) * sizeof *nm);
        if (!nm)
            return CCT_NONE;
        t->metrics = nm;
        t->cap = nc;
    }
    char *nm = strdup(name ? name : "");
    if (!nm)
        return CCT_NONE;
    uint32_t id = (uint32_t)t->nnodes++;
    t->nodes[id] = (cct_node){ parent, image, proc, site, nm, CCT_NONE, CCT_NONE };
    memset(cct_metrics(t, id), 0, t->nmetrics * sizeof(uint64_t));
    if (parent != CCT_NONE) {   /* children are kept in the order they appeared */
        uint32_t *p = &t->nodes[parent].first_child;
        while (*p != CCT_NONE)
            p = &t->nodes[*p].next_sibling;
        *p = id;
    }
    return id;
}

cct *cct_new(const char *const *metrics, size_t n)
{
    if (n > CCT_MAX_METRICS)
        return NULL;
    cct *t = calloc(1, sizeof *t);
    if (!t || !(t->hash = calloc(1, sizeof *t->hash)))
        goto oom;
    for (size_t i = 0; i < n; i++)
        if (!(t->metric[t->nmetrics++] = strdup(metrics[i])))
            goto oom;
    if (add_node(t, CCT_NONE, CCT_NOIMAGE, 0, 0, "[root]") == CCT_NONE)
        goto oom;
    return t;
oom:
    cct_free(t);
    return NULL;
}

void cct_free(cct *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nnodes; i++)
        free(t->nodes[i].name);
    for (size_t i = 0; i < t->nimages; i++) {
        free(t->images[i].path);
        free(t->images[i].build_id);
    }
    for (size_t i = 0; i < t->nmetrics; i++)
        free(t->metric[i]);
    if (t->hash)
        free(t->hash->s);
    free(t->hash);
    free(t->nodes);
    free(t->metrics);
    free(t->back);
    free(t->images);
    free(t);
}

int cct_metric(const cct *t, const char *name)
{
    for (size_t i = 0; i < t->nmetrics; i++)
        if (!strcmp(t->metric[i], name))
            return (int)i;
    return -1;
}

int cct_image_add(cct *t, const char *path, const char *build_id)
{
    for (size_t i = 0; i < t->nimages; i++)
        if (!strcmp(t->images[i].path, path) && !strcmp(t->images[i].build_id, build_id))
            return (int)i;
    if (t->nimages == t->imcap) {
        size_t nc = t->imcap ? t->imcap * 2 : 8;
        cct_image *ni = realloc(t->images, nc * sizeof *ni);
        if (!ni)
            return -1;
        t->images = ni;
        t->imcap = nc;
    }
    cct_image *im = &t->images[t->nimages];
    im->path = strdup(path);
    im->build_id = strdup(build_id);
    if (!im->path || !im->build_id) {
        free(im->path);
        free(im->build_id);
        return -1;
    }
    return (int)t->nimages++;
}

static uint32_t add_back(cct *t, uint32_t from, uint32_t to, uint64_t site)
{
    if (t->nback == t->backcap) {
        size_t nc = t->backcap ? t->backcap * 2 : 16;
        cct_back *nb = realloc(t->back, nc * sizeof *nb);
        if (!nb)
            return CCT_NONE;
        t->back = nb;
        t->backcap = nc;
    }
    t->back[t->nback] = (cct_back){ from, to, site, 0 };
    return (uint32_t)t->nback++;
}

uint32_t cct_call(cct *t, uint32_t from, uint64_t site, int32_t image, uint64_t proc, const char *name)
{
    struct cct_hash *h = t->hash;
    if ((h->n + 1) * 4 > h->cap * 3 && !hash_grow(h))
        return CCT_NONE;
    cct_slot *s = hash_find(h, from, site, image, proc);
    if (s->to != CCT_NONE) {
        if (s->back != CCT_NONE)
            t->back[s->back].count++;
        return s->to;
    }
    /* first call of this kind: recursion goes back to the ancestor
     * (a node is its own ancestor), anything else makes a child */
    uint32_t to = CCT_NONE, back = CCT_NONE;
    for (uint32_t a = from; a != CCT_NONE && a != CCT_ROOT; a = t->nodes[a].parent)
        if (t->nodes[a].image == image && t->nodes[a].proc == proc) {
            to = a;
            break;
        }
    if (to != CCT_NONE) {
        if ((back = add_back(t, from, to, site)) == CCT_NONE)
            return CCT_NONE;
        t->back[back].count = 1;
    } else if ((to = add_node(t, from, image, proc, site, name)) == CCT_NONE) {
        return CCT_NONE;
    }
    *s = (cct_slot){ from, to, image, back, site, proc };
    h->n++;
    return to;
}

uint64_t *cct_inclusive(const cct *t)
{
    size_t nm = t->nmetrics;
    uint64_t *in = malloc((t->nnodes ? t->nnodes : 1) * (nm ? nm : 1) * sizeof *in);
    if (!in)
        return NULL;
    memcpy(in, t->metrics, t->nnodes * nm * sizeof *in);
    /* parents come before children: add each node into its parent, last first */
    for (size_t i = t->nnodes; i-- > 1;) {
        uint32_t p = t->nodes[i].parent;
        for (size_t q = 0; q < nm; q++)
            in[p * nm + q] += in[i * nm + q];
    }
    return in;
}

/* ---- text ---------------------------------------------------------------- */

bool cct_write(const cct *t, FILE *f)
{
    fputs("cpo-cct 1\nmetrics", f);
    for (size_t i = 0; i < t->nmetrics; i++)
        fprintf(f, " %s", t->metric[i]);
    fputc('\n', f);
    for (size_t i = 0; i < t->nimages; i++) {
        fprintf(f, "image %zu %s ", i, t->images[i].build_id[0] ? t->images[i].build_id : "-");
        escape_write(f, t->images[i].path);
        fputc('\n', f);
    }
    for (size_t i = 1; i < t->nnodes; i++) {
        const cct_node *n = &t->nodes[i];
        fprintf(f, "node %zu %u ", i, n->parent);
        if (n->image == CCT_NOIMAGE)
            fputc('-', f);
        else
            fprintf(f, "%d", n->image);
        fprintf(f, " 0x%llx 0x%llx ", (unsigned long long)n->proc, (unsigned long long)n->site);
        escape_write(f, n->name);
        const uint64_t *m = cct_metrics(t, (uint32_t)i);
        for (size_t q = 0; q < t->nmetrics; q++)
            fprintf(f, " %llu", (unsigned long long)m[q]);
        fputc('\n', f);
    }
    const uint64_t *rm = cct_metrics(t, CCT_ROOT);
    fputs("root", f);
    for (size_t q = 0; q < t->nmetrics; q++)
        fprintf(f, " %llu", (unsigned long long)rm[q]);
    fputc('\n', f);
    for (size_t i = 0; i < t->nback; i++)
        fprintf(f, "back %u %u 0x%llx %llu\n", t->back[i].from, t->back[i].to,
                (unsigned long long)t->back[i].site, (unsigned long long)t->back[i].count);
    fputs("end\n", f);
    return !ferror(f);
}

static bool parse_metrics(lines *l, size_t from, cct *t, uint32_t node)
{
    if (l->n != from + t->nmetrics)
        return lines_error(l, "%zu metric values expected, %zu found", t->nmetrics,
                           l->n > from ? l->n - from : 0);
    for (size_t q = 0; q < t->nmetrics; q++)
        if (!lines_u64(l, from + q, &cct_metrics(t, node)[q]))
            return false;
    return true;
}

static bool parse_node(lines *l, cct *t)
{
    uint64_t id, parent, image = 0, proc, site;
    if (l->n < 7)
        return lines_error(l, "a node line is 'node ID PARENT IMAGE PROC SITE NAME METRICS...'");
    if (!lines_u64(l, 1, &id) || !lines_u64(l, 2, &parent))
        return false;
    bool noimg = !strcmp(l->w[3], "-");
    if ((!noimg && !lines_u64(l, 3, &image)) || !lines_u64(l, 4, &proc) || !lines_u64(l, 5, &site))
        return false;
    if (id != t->nnodes)
        return lines_error(l, "node %llu out of order (%zu expected)", (unsigned long long)id, t->nnodes);
    if (parent >= id)
        return lines_error(l, "node %llu's parent %llu does not come before it", (unsigned long long)id,
                           (unsigned long long)parent);
    if (!noimg && image >= t->nimages)
        return lines_error(l, "node %llu names image %llu, which has no image line", (unsigned long long)id,
                           (unsigned long long)image);
    if (!escape_decode(l->w[6]))
        return lines_error(l, "bad %%XX in the name '%s'", l->w[6]);
    int32_t im = noimg ? CCT_NOIMAGE : (int32_t)image;
    uint32_t n = add_node(t, (uint32_t)parent, im, proc, site, l->w[6]);
    if (n == CCT_NONE)
        return lines_error(l, "out of memory");
    /* reading also fills the builder's table, so a read tree can grow */
    struct cct_hash *h = t->hash;
    if ((h->n + 1) * 4 > h->cap * 3 && !hash_grow(h))
        return lines_error(l, "out of memory");
    cct_slot *s = hash_find(h, (uint32_t)parent, site, im, proc);
    if (s->to == CCT_NONE) {
        *s = (cct_slot){ (uint32_t)parent, n, im, CCT_NONE, site, proc };
        h->n++;
    }
    return parse_metrics(l, 7, t, n);
}

static bool parse_line(lines *l, cct *t)
{
    const char *k = l->w[0];
    if (!strcmp(k, "image")) {
        uint64_t i;
        if (l->n != 4 || !lines_u64(l, 1, &i) || !escape_decode(l->w[3]))
            return lines_failed(l) ? false : lines_error(l, "an image line is 'image N BUILD-ID PATH'");
        if (i != t->nimages)
            return lines_error(l, "image %llu out of order", (unsigned long long)i);
        if (cct_image_add(t, l->w[3], strcmp(l->w[2], "-") ? l->w[2] : "") != (int)i)
            return lines_error(l, "image %llu repeats an earlier one, or out of memory", (unsigned long long)i);
        return true;
    }
    if (!strcmp(k, "node"))
        return parse_node(l, t);
    if (!strcmp(k, "root"))
        return parse_metrics(l, 1, t, CCT_ROOT);
    if (!strcmp(k, "back")) {
        uint64_t from, to, site, count;
        if (l->n != 5 || !lines_u64(l, 1, &from) || !lines_u64(l, 2, &to) || !lines_u64(l, 3, &site) ||
            !lines_u64(l, 4, &count))
            return lines_failed(l) ? false : lines_error(l, "a back line is 'back FROM TO SITE COUNT'");
        if (from >= t->nnodes || to >= t->nnodes || to > from)
            return lines_error(l, "back edge %llu -> %llu does not go to an earlier node", (unsigned long long)from,
                               (unsigned long long)to);
        uint32_t b = add_back(t, (uint32_t)from, (uint32_t)to, site);
        if (b == CCT_NONE)
            return lines_error(l, "out of memory");
        t->back[b].count = count;
        return true;
    }
    return lines_error(l, "unknown line '%s'", k);
}

cct *cct_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    lines l;
    lines_init(&l, text, len, name, err, errlen);
    cct *t = NULL;
    if (!lines_next(&l) || l.n != 2 || strcmp(l.w[0], "cpo-cct")) {
        if (!lines_failed(&l))
            lines_error(&l, "not a calling context tree (no 'cpo-cct 1' line)");
        return NULL;
    }
    if (strcmp(l.w[1], "1")) {
        lines_error(&l, "calling context tree version %s; this build reads version 1", l.w[1]);
        return NULL;
    }
    if (!lines_next(&l) || strcmp(l.w[0], "metrics")) {
        if (!lines_failed(&l))
            lines_error(&l, "the 'metrics' line is missing");
        return NULL;
    }
    if (l.n - 1 > CCT_MAX_METRICS) {
        lines_error(&l, "more than %d metrics", CCT_MAX_METRICS);
        return NULL;
    }
    if (!(t = cct_new((const char *const *)&l.w[1], l.n - 1))) {
        lines_error(&l, "out of memory");
        return NULL;
    }
    bool ended = false;
    while (lines_next(&l)) {
        if (ended) {
            lines_error(&l, "text after 'end'");
            goto fail;
        }
        if (!strcmp(l.w[0], "end") && l.n == 1)
            ended = true;
        else if (!parse_line(&l, t))
            goto fail;
    }
    if (lines_failed(&l))
        goto fail;
    if (!ended) {
        lines_error(&l, "the tree ends early (no 'end' line)");
        goto fail;
    }
    return t;
fail:
    cct_free(t);
    return NULL;
}

cct *cct_read(const char *file, char *err, size_t errlen)
{
    size_t len;
    char *text = readfile(file, SIZE_MAX, &len, err, errlen);
    if (!text)
        return NULL;
    cct *t = cct_parse(text, len, file, err, errlen);
    free(text);
    return t;
}
