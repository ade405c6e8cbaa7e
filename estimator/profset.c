/*
 * estimator/profset.c: selection options and SET names (estimator/profset.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "estimator/profset.h"

/* An epoch's name as profdb spells it: YYYYMMDDTHHMMSSZ, then -001 ...
 * -999 for later epochs started in the same second. */
static bool epoch_shaped(const char *s)
{
    size_t n = strlen(s);
    if (n != 16 && n != 20)
        return false;
    for (size_t i = 0; i < 16; i++)
        if (i == 8 ? s[i] != 'T' : i == 15 ? s[i] != 'Z' : !isdigit((unsigned char)s[i]))
            return false;
    if (n == 20)
        for (size_t i = 16; i < 20; i++)
            if (i == 16 ? s[i] != '-' : !isdigit((unsigned char)s[i]))
                return false;
    return true;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool est_parse_set(const char *text, est_setspec *out, est_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text) {
        if (err)
            snprintf(err->msg, sizeof err->msg, "an empty SET (want DIR, DIR@EPOCH or DIR@all)");
        return false;
    }
    const char *at = strrchr(text, '@');
    size_t dirlen = strlen(text);
    const char *suffix = NULL;
    if (at && !is_dir(text)) {
        dirlen = (size_t)(at - text);
        suffix = at + 1;
        if (!dirlen) {
            if (err)
                snprintf(err->msg, sizeof err->msg,
                         "bad SET '%s': no database directory before '@'", text);
            return false;
        }
        if (strcmp(suffix, "all") && strcmp(suffix, "current") && !epoch_shaped(suffix)) {
            if (err)
                snprintf(err->msg, sizeof err->msg,
                         "bad SET '%s': '%s' is not an epoch name (YYYYMMDDTHHMMSSZ[-NNN]), "
                         "'all' or 'current'", text, suffix);
            return false;
        }
    }
    out->text = strdup(text);
    out->db = strndup(text, dirlen);
    if (suffix && !strcmp(suffix, "all"))
        out->all_epochs = true;
    else if (suffix && strcmp(suffix, "current"))
        out->epoch = strdup(suffix);
    if (!out->text || !out->db || (suffix && !out->all_epochs && strcmp(suffix, "current") &&
                                   !out->epoch)) {
        est_setspec_free(out);
        if (err)
            snprintf(err->msg, sizeof err->msg, "out of memory");
        return false;
    }
    return true;
}

void est_setspec_free(est_setspec *spec)
{
    free(spec->text);
    free(spec->db);
    free(spec->epoch);
    memset(spec, 0, sizeof *spec);
}

void est_setspec_select(const est_setspec *spec, est_selection *sel)
{
    sel->db = spec->db;
    sel->epoch = spec->epoch;
    sel->all_epochs = spec->all_epochs;
}
