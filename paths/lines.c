/*
 * paths/lines.c: the text reader shared by the path-profile and CCT
 * formats.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths/lines.h"

void lines_init(lines *l, const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->p = text;
    l->end = text + len;
    l->name = name;
    l->err = err;
    l->errlen = errlen;
    if (errlen)
        err[0] = 0;
}

bool lines_failed(const lines *l) { return l->errlen && l->err[0]; }

bool lines_error(lines *l, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(l->err, l->errlen, "%s:%zu: %s", l->name, l->lineno, msg);
    return false;
}

bool lines_next(lines *l)
{
    while (l->p < l->end) {
        const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
        const char *e = nl ? nl : l->end;
        size_t len = (size_t)(e - l->p);
        l->lineno++;
        if (len >= sizeof l->buf)
            return lines_error(l, "line longer than %zu bytes", sizeof l->buf - 1);
        memcpy(l->buf, l->p, len);
        l->buf[len] = 0;
        l->p = nl ? nl + 1 : l->end;
        if (!nl && len)     /* every writer ends its lines: this one was cut */
            return lines_error(l, "the file ends in the middle of a line (truncated)");
        if (memchr(l->buf, 0, len))
            return lines_error(l, "a NUL byte in the text");
        l->n = 0;
        for (char *s = l->buf; *s;) {
            while (*s == ' ' || *s == '\t' || *s == '\r')
                *s++ = 0;
            if (!*s)
                break;
            if (l->n == LINES_MAX_WORDS)
                return lines_error(l, "more than %d words on a line", LINES_MAX_WORDS);
            l->w[l->n++] = s;
            while (*s && *s != ' ' && *s != '\t' && *s != '\r')
                s++;
        }
        if (l->n)
            return true;
    }
    return false;
}

bool lines_u64(lines *l, size_t i, uint64_t *v)
{
    if (i >= l->n)
        return lines_error(l, "a number is missing (word %zu)", i + 1);
    const char *s = l->w[i];
    if (*s == '-' || *s == '+')
        return lines_error(l, "'%s' is not an unsigned number", s);
    char *e;
    errno = 0;
    unsigned long long x = strtoull(s, &e, 0);
    if (e == s || *e)
        return lines_error(l, "'%s' is not a number", s);
    if (errno == ERANGE)
        return lines_error(l, "'%s' does not fit in 64 bits", s);
    *v = x;
    return true;
}
