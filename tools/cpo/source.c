/*
 * tools/cpo/source.c: the text of source lines, for the commands that
 * show them beside instructions (cpo list --source, cpo calc).
 *
 * Consecutive instructions mostly come from one file, so one file is kept
 * in memory at a time and read again only when the file changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cpo/commands.h"

void cpo_source_free(cpo_source *s)
{
    free(s->name);
    free(s->text);
    free(s->lines);
    memset(s, 0, sizeof *s);
}

/* Reads file into s; a file that cannot be read leaves s->missing set, so
 * its lines show without text rather than failing the command. */
static void load(cpo_source *s, const char *file)
{
    cpo_source_free(s);
    s->name = strdup(file);
    s->missing = true;
    FILE *f = fopen(file, "r");
    if (!f)
        return;
    size_t cap = 0, len = 0, k;
    char buf[8192];
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + k + 1 > cap) {
            cap = 2 * (len + k + 1);
            char *nt = realloc(s->text, cap);
            if (!nt)
                break;
            s->text = nt;
        }
        memcpy(s->text + len, buf, k);
        len += k;
    }
    fclose(f);
    if (!s->text)
        return;
    s->text[len] = '\0';
    s->missing = false;
    for (char *p = s->text; p && *p;) {
        char **nl = realloc(s->lines, (s->n + 1) * sizeof *nl);
        if (!nl)
            break;
        s->lines = nl;
        s->lines[s->n++] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = '\0';
    }
}

const char *cpo_source_line(cpo_source *s, const char *file, unsigned line)
{
    if (!s->name || strcmp(s->name, file))
        load(s, file);
    return !s->missing && line >= 1 && line <= s->n ? s->lines[line - 1] : NULL;
}

bool cpo_source_heading(cpo_source *s, image *img, uint64_t pc)
{
    const char *file, *func;
    unsigned line;
    if (!image_source_line(img, pc, &file, &line, &func) || !file)
        return false;
    if (!s->last_file || strcmp(file, s->last_file) || line != s->last_line) {
        const char *text = cpo_source_line(s, file, line);
        printf("%s:%u%s%s\n", file, line, text ? ":  " : "", text ? text : "");
        s->last_file = file;
        s->last_line = line;
    }
    return true;
}
