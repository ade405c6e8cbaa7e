/*
 * profdb/stacks_read.c: the stacks of a selection (epochs, hosts, event,
 * image) read and added into one table.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profdb/internal.h"
#include "profdb/stacks.h"

/* ---- reading a selection ---------------------------------------------------- */

static bool has_image(const profdb_stacks *s, const char *key)
{
    for (size_t i = 0; i < s->nimages; i++)
        if (!strcmp(s->img[i].key, key))
            return true;
    return false;
}

static bool select_host(const char *hdir, const char *event, const char *key, profdb_stacks *out,
                        profdb_error *err)
{
    DIR *d = opendir(hdir);
    if (!d)
        return errno == ENOENT || errno == ENOTDIR || pd_fail_sys(err, hdir, "cannot read directory");
    struct dirent *de;
    bool ok = true;
    size_t sl = strlen(PROFDB_STACKS_SUFFIX);
    while (ok && (errno = 0, de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || strncmp(de->d_name, "stacks-", 7) || l <= sl ||
            strcmp(de->d_name + l - sl, PROFDB_STACKS_SUFFIX))
            continue;
        char *path = pd_join(hdir, de->d_name, NULL, err);
        profdb_stacks s;
        if (!path || !profdb_stacks_read_file(path, &s, err)) {
            free(path);
            ok = false;
            break;
        }
        free(path);
        if ((!event || !strcmp(s.event, event)) && (!key || has_image(&s, key))) {
            if (!out->event)
                out->event = strdup(event ? event : s.event);
            ok = pd_stacks_add(out, &s, err);
        }
        profdb_stacks_free(&s);
    }
    closedir(d);
    return ok;
}

bool profdb_stacks_select(profdb *db, const char *epoch, const char *host, const char *event,
                          const char *key, profdb_stacks *out, profdb_error *err)
{
    memset(out, 0, sizeof *out);
    char **epochs = NULL;
    size_t ne = 0;
    if (epoch) {
        /* As walk() in read.c: a name that is no epoch could climb out of
         * the database, and a missing one is no "no stacks". */
        struct stat st;
        char *edir = pd_join(db->dir, epoch, NULL, err);
        if (!edir)
            return false;
        bool there = pd_epoch_valid(epoch) && stat(edir, &st) == 0 && S_ISDIR(st.st_mode);
        free(edir);
        if (!there)
            return pd_fail(err, PROFDB_ENOENT, "%s: no epoch \"%s\"", db->dir, epoch);
        if (!(epochs = calloc(2, sizeof *epochs)) || !(epochs[0] = strdup(epoch))) {
            free(epochs);
            return pd_fail(err, PROFDB_ENOMEM, "stacks: out of memory");
        }
        ne = 1;
    } else if (!profdb_epochs(db, &epochs, &ne, err)) {
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < ne; i++) {
        char *edir = pd_join(db->dir, epochs[i], NULL, err);
        if (!edir) {
            ok = false;
            break;
        }
        if (host) {
            char esc[3 * PROFDB_MAX_NAME + 1];
            pd_escape(host, true, esc, sizeof esc);
            char *hdir = pd_join(edir, esc, NULL, err);
            ok = hdir && select_host(hdir, event, key, out, err);
            free(hdir);
        } else {
            DIR *d = opendir(edir);
            struct dirent *de;
            if (!d)
                ok = errno == ENOENT || pd_fail_sys(err, edir, "cannot read epoch");
            while (ok && d && (errno = 0, de = readdir(d))) {
                if (de->d_name[0] == '.')
                    continue;
                char *hdir = pd_join(edir, de->d_name, NULL, err);
                ok = hdir && select_host(hdir, event, key, out, err);
                free(hdir);
            }
            if (d)
                closedir(d);
        }
        free(edir);
    }
    profdb_strv_free(epochs);
    if (ok)
        ok = profdb_stacks_normalise(out, err);
    if (!ok)
        profdb_stacks_free(out);
    return ok;
}
