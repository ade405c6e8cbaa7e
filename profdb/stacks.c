/*
 * profdb/stacks.c: stack profiles in memory (profdb/stacks.h): freeing,
 * the canonical form (images by key, stacks distinct and in order), and
 * adding one set of stacks to another.  The file format is
 * stacks_format.c, merging into the database stacks_merge.c, reading a
 * selection stacks_read.c.
 */
#include <stdlib.h>
#include <string.h>

#include "profdb/internal.h"
#include "profdb/stacks.h"

void profdb_stacks_free(profdb_stacks *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nimages; i++) {
        free(s->img[i].key);
        free(s->img[i].path);
    }
    free(s->img);
    free(s->s);
    free(s->frames);
    free(s->file);
    free(s->event);
    free(s->host);
    memset(s, 0, sizeof *s);
}

/* ---- canonical form ----------------------------------------------------- */

int pd_stack_cmp(const void *a, const void *b)
{
    const profdb_stack *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    for (uint32_t i = 0; i < x->n; i++) {
        if (x->f[i].image != y->f[i].image)
            return x->f[i].image < y->f[i].image ? -1 : 1;
        if (x->f[i].offset != y->f[i].offset)
            return x->f[i].offset < y->f[i].offset ? -1 : 1;
    }
    return 0;
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
    const profdb_stack_image *img = ctx;
    const uint32_t *x = a, *y = b;
    int c = strcmp(img[*x].key, img[*y].key);
    return c ? c : (*x > *y) - (*x < *y);
}

bool profdb_stacks_normalise(profdb_stacks *s, profdb_error *err)
{
    /* images by key, duplicates folded; frames follow their image */
    size_t ni = s->nimages;
    uint32_t *idx = malloc((ni ? ni : 1) * sizeof *idx);
    uint32_t *map = malloc((ni ? ni : 1) * sizeof *map);
    profdb_stack_image *sorted = malloc((ni ? ni : 1) * sizeof *sorted);
    size_t nframes = 0;
    for (size_t i = 0; i < s->n; i++)
        nframes += s->s[i].n;
    profdb_frame *fr = malloc((nframes ? nframes : 1) * sizeof *fr);
    if (!idx || !map || !sorted || !fr) {
        free(idx);
        free(map);
        free(sorted);
        free(fr);
        return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    }
    for (size_t i = 0; i < ni; i++)
        idx[i] = (uint32_t)i;
    if (ni > 1)
        qsort_r(idx, ni, sizeof *idx, cmp_key, s->img);
    size_t nu = 0;
    for (size_t k = 0; k < ni; k++) {
        profdb_stack_image *im = &s->img[idx[k]];
        if (nu && !strcmp(sorted[nu - 1].key, im->key)) {
            free(im->key);
            free(im->path);
        } else {
            sorted[nu++] = *im;
        }
        map[idx[k]] = (uint32_t)(nu - 1);
    }
    free(idx);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        profdb_stack *st = &s->s[i];
        for (uint32_t j = 0; j < st->n; j++)
            fr[k + j] = (profdb_frame){ map[st->f[j].image], st->f[j].offset };
        st->f = fr + k;
        k += st->n;
    }
    free(map);
    free(s->img);
    free(s->frames);
    s->img = sorted;
    s->nimages = nu;
    s->frames = fr;
    s->nframes = nframes;
    if (s->n > 1)
        qsort(s->s, s->n, sizeof *s->s, pd_stack_cmp);
    size_t m = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (m && !pd_stack_cmp(&s->s[m - 1], &s->s[i])) {
            if (s->s[m - 1].count + s->s[i].count < s->s[i].count)
                return pd_fail(err, PROFDB_EOVERFLOW, "stacks: a count exceeds 2^64-1");
            s->s[m - 1].count += s->s[i].count;
        } else {
            s->s[m++] = s->s[i];
        }
        if (total + s->s[i].count < total)
            return pd_fail(err, PROFDB_EOVERFLOW, "stacks: more than 2^64-1 samples");
        total += s->s[i].count;
    }
    s->n = m;
    s->total = total;
    return true;
}

/* ---- adding ---------------------------------------------------------------- */

bool pd_stacks_append(profdb_stacks *a, size_t nimages, const char *const *keys,
                   const char *const *paths, const profdb_stack *s, size_t n, profdb_error *err)
{
    size_t nf = 0, af = 0;
    for (size_t i = 0; i < n; i++)
        nf += s[i].n;
    for (size_t i = 0; i < a->n; i++)
        af += a->s[i].n;
    profdb_stack_image *img = realloc(a->img, (a->nimages + nimages + 1) * sizeof *img);
    if (img)
        a->img = img;
    profdb_stack *st = realloc(a->s, (a->n + n + 1) * sizeof *st);
    if (st)
        a->s = st;
    profdb_frame *fr = malloc((af + nf + 1) * sizeof *fr);
    if (!img || !st || !fr) {
        free(fr);
        return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++) {
        memcpy(fr + k, a->s[i].f, a->s[i].n * sizeof *fr);
        a->s[i].f = fr + k;
        k += a->s[i].n;
    }
    uint32_t base = (uint32_t)a->nimages;
    for (size_t i = 0; i < nimages; i++) {
        a->img[a->nimages].key = strdup(keys[i]);
        a->img[a->nimages].path = strdup(paths[i]);
        if (!a->img[a->nimages].key || !a->img[a->nimages].path) {
            free(a->img[a->nimages].key);
            free(a->img[a->nimages].path);
            free(a->frames);
            a->frames = fr;
            a->nframes = k;
            return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
        }
        a->nimages++;
    }
    for (size_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < s[i].n; j++)
            fr[k + j] = (profdb_frame){ base + s[i].f[j].image, s[i].f[j].offset };
        a->s[a->n] = s[i];
        a->s[a->n++].f = fr + k;
        k += s[i].n;
    }
    free(a->frames);
    a->frames = fr;
    a->nframes = k;
    return true;
}

bool pd_stacks_add(profdb_stacks *a, const profdb_stacks *b, profdb_error *err)
{
    const char **keys = malloc((b->nimages + 1) * sizeof *keys);
    const char **paths = malloc((b->nimages + 1) * sizeof *paths);
    bool ok = keys && paths;
    for (size_t i = 0; ok && i < b->nimages; i++) {
        keys[i] = b->img[i].key;
        paths[i] = b->img[i].path;
    }
    ok = ok ? pd_stacks_append(a, b->nimages, keys, paths, b->s, b->n, err)
            : pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
    free(keys);
    free(paths);
    return ok;
}
