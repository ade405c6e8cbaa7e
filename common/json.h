/*
 * common/json.h: writing JSON strings.
 */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdio.h>

/* s as a JSON string literal, quotes included: '"' and '\\' escaped,
 * newline and tab as \n and \t, other control characters as \u00XX; other
 * bytes pass through (paths and symbol names are UTF-8 or ASCII).  NULL is
 * written as "". */
void json_string(FILE *f, const char *s);

#endif
