/* tests/profdb/testutil.h: scratch directories and deterministic profiles
 * for the profdb unit tests and test drivers. */
#ifndef TESTS_PROFDB_TESTUTIL_H
#define TESTS_PROFDB_TESTUTIL_H

#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profdb/profdb.h"

static inline char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    size_t n = strlen(base) + 32;
    char *p = malloc(n);
    if (!p)
        return NULL;
    snprintf(p, n, "%s/profdb-test-XXXXXX", base);
    return mkdtemp(p) ? p : (free(p), (char *)NULL);
}

static inline int tu_rm1(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st; (void)flag; (void)f;
    remove(path);
    return 0;
}

static inline void tu_rmrf(const char *path)
{
    nftw(path, tu_rm1, 16, FTW_DEPTH | FTW_PHYS);
}

/* How many damaged copies of path a writer set aside (path.corrupt-*),
 * with the inode of the first in *ino. */
static inline size_t tu_set_aside(const char *path, ino_t *ino)
{
    char pat[4200];
    glob_t g;
    struct stat st;
    snprintf(pat, sizeof pat, "%s.corrupt-*", path);
    if (glob(pat, 0, NULL, &g) != 0)
        return 0;
    size_t n = g.gl_pathc;
    *ino = stat(g.gl_pathv[0], &st) == 0 ? st.st_ino : 0;
    globfree(&g);
    return n;
}

/* xorshift64*: the same stream on every machine. */
static inline uint64_t tu_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* n samples at 4-byte aligned offsets below `span`, counts skewed toward
 * small values, offsets possibly repeated. */
static inline profdb_entry *tu_samples(uint64_t seed, size_t n, uint64_t span)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    profdb_entry *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i].offset = (tu_rand(&s) % (span / 4)) * 4;
        uint64_t r = tu_rand(&s);
        v[i].count = 1 + (r % 64 < 40 ? r % 3 : r % 64 < 60 ? r % 50 : r % 5000);
    }
    return v;
}

static inline uint64_t tu_total(const profdb_entry *v, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += v[i].count;
    return t;
}

#endif
