/*
 * common/escape.h: names and paths as single words in the text formats:
 * bytes that are blanks, controls, '%' or DEL are written %XX.
 */
#ifndef COMMON_ESCAPE_H
#define COMMON_ESCAPE_H

#include <stdbool.h>
#include <stdio.h>

void escape_write(FILE *f, const char *s);
/* Decodes in place; false on a bad %XX or a %00. */
bool escape_decode(char *s);

#endif
