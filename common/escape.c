/*
 * common/escape.c: one word per name (see escape.h).
 */
#include <ctype.h>
#include <string.h>

#include "common/escape.h"

void escape_write(FILE *f, const char *s)
{
    if (!*s) {
        fputc('%', f);      /* an empty name is the word "%" alone */
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c == '%' || c == 0x7f)
            fprintf(f, "%%%02X", c);
        else
            fputc(c, f);
    }
}

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

bool escape_decode(char *s)
{
    if (!strcmp(s, "%")) {
        *s = 0;
        return true;
    }
    char *o = s;
    for (; *s; s++) {
        if (*s != '%') {
            *o++ = *s;
            continue;
        }
        int h = hexval((unsigned char)s[1]), l = h < 0 ? -1 : hexval((unsigned char)s[2]);
        if (h < 0 || l < 0 || (h | l) == 0)
            return false;
        *o++ = (char)(h << 4 | l);
        s += 2;
    }
    *o = 0;
    return true;
}
