/*
 * tools/axp/paths.c: the path tracker on the machine's hooks.
 */
#include <stdlib.h>

#include "paths/track.h"
#include "tools/axp/paths.h"

struct axp_paths {
    track *t;
    axp_image_hook prev;        /* the collector's, when it listens too */
    void *prev_ctx;
};

static void on_image(void *ctx, const axp_image_event *e)
{
    axp_paths *p = ctx;
    if (p->prev)
        p->prev(p->prev_ctx, e);
    track_image(p->t, e);
}

axp_paths *axp_paths_start(axp_machine *m, int want_paths, int want_cct, char *err, size_t errlen)
{
    axp_paths *p = calloc(1, sizeof *p);
    if (!p || !(p->t = track_new(want_paths, want_cct))) {
        free(p);
        snprintf(err, errlen, "out of memory starting the path tracker");
        return NULL;
    }
    axp_get_image_hook(m, &p->prev, &p->prev_ctx);
    axp_set_image_hook(m, on_image, p);
    axp_set_retire_hook(m, track_retire, p->t);
    axp_want_costs(m);
    return p;
}

int axp_paths_cct_only(axp_paths *p, const char *file, char *err, size_t errlen)
{
    cct *only = cct_read(file, err, errlen);
    if (!only)
        return -1;
    bool ok = track_cct_only(p->t, only);
    cct_free(only);
    if (!ok)
        snprintf(err, errlen, "out of memory");
    return ok ? 0 : -1;
}

int axp_paths_finish(axp_paths *p, char *err, size_t errlen)
{
    return track_finish(p->t, err, errlen) ? 0 : -1;
}

int axp_paths_write_paths(axp_paths *p, FILE *f)
{
    return pathprof_write(track_paths(p->t), f) ? 0 : -1;
}

int axp_paths_write_cct(axp_paths *p, FILE *f)
{
    return cct_write(track_cct(p->t), f) ? 0 : -1;
}

void axp_paths_free(axp_paths *p)
{
    if (p)
        track_free(p->t);
    free(p);
}
