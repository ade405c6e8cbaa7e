/*
 * paths/lines.h: reading the line-oriented text of path profiles and
 * calling context trees: a cursor over the text, words split on blanks,
 * numbers checked for range, every error naming the file and line.
 */
#ifndef PATHS_LINES_H
#define PATHS_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINES_MAX_WORDS 48

typedef struct lines {
    const char *p, *end;
    const char *name;
    size_t lineno;
    char buf[4096];                  /* the current line, split in place */
    char *w[LINES_MAX_WORDS];
    size_t n;                        /* words on it */
    char *err;
    size_t errlen;
} lines;

void lines_init(lines *l, const char *text, size_t len, const char *name, char *err, size_t errlen);
/* The next non-empty line into l->w; false at the end (err untouched) or
 * on an over-long line (err set: check lines_failed). */
bool lines_next(lines *l);
bool lines_failed(const lines *l);
/* Sets err to "NAME:LINE: fmt..." and returns false. */
bool lines_error(lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Word i as an unsigned number (decimal, or hex with 0x); false with err set. */
bool lines_u64(lines *l, size_t i, uint64_t *v);

#endif
