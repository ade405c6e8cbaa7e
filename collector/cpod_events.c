/*
 * collector/cpod_events.c: what event numbers mean.
 *
 * The driver carries an 8-bit event number per sample; profiles are named
 * by event.  A machine says what its numbers mean, and the mean sampling
 * period of each, in NAME.meta next to its region (written by cpod_attach
 * before the region appears); numbers it names nothing for get the
 * standard names, or "eventN".  Names are interned, so profiles compare
 * them by pointer.
 *
 * NAME.meta is text:
 *   cpod-machine 1
 *   name axp pid 4242
 *   pid 4242
 *   ncpus 4
 *   event 0 cycles 62000
 *   event 1 imiss 1000
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/cpod_internal.h"

static const char *const std_names[CPOD_NSTD_EVENTS] = {
    "cycles", "imiss", "dmiss", "branchmp", "dtbmiss", "itbmiss", "replaytrap",
    "scmiss", "bcmiss", "issues",
};

const char *cpod_std_event_name(unsigned id)
{
    return id < CPOD_NSTD_EVENTS ? std_names[id] : NULL;
}

bool cpod_event_name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > CPOD_MAX_EVENT_NAME)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
            return false;
    return true;
}

/* The interned names: few (a machine has at most 256 events, and most use
 * the standard ones), so a list searched linearly; bounded so that a stream
 * of machines with ever new names cannot grow it without limit. */
static char *names[CPOD_EVNAME_MAX];
static size_t nnames;

const char *cpod_intern_event(const char *name)
{
    for (size_t i = 0; i < nnames; i++)
        if (!strcmp(names[i], name))
            return names[i];
    if (nnames == CPOD_EVNAME_MAX)
        return NULL;
    char *s = strdup(name);
    if (!s)
        return NULL;
    return names[nnames++] = s;
}

void cpod_intern_free(void)
{
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    nnames = 0;
}

void cpod_meta_event(const cpod_meta *m, unsigned id, cpod_evdef *out)
{
    char buf[32];
    const char *name = m && m->evname[id & 255][0] ? m->evname[id & 255] : cpod_std_event_name(id);
    if (!name) {
        snprintf(buf, sizeof buf, "event%u", id);
        name = buf;
    }
    out->name = cpod_intern_event(name);
    if (!out->name)
        out->name = cpod_intern_event("event-other");
    out->period = m ? m->period[id & 255] : 0;
}

bool cpod_meta_read(const char *path, cpod_meta *m, char *msg, size_t msg_size)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "re");
    if (!f) {
        cpod_msg(msg, msg_size, "%s: %s", path, strerror(errno));
        return false;
    }
    char line[512];
    unsigned ln = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        ln++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        else if (!feof(f)) {
            cpod_msg(msg, msg_size, "%s:%u: line too long", path, ln);
            ok = false;
            break;
        }
        if (ln == 1) {
            if (strcmp(line, "cpod-machine 1")) {
                cpod_msg(msg, msg_size, "%s:1: not a machine description (want \"cpod-machine 1\")",
                         path);
                ok = false;
            }
            continue;
        }
        if (!strncmp(line, "name ", 5)) {
            cpod_msg(m->name, sizeof m->name, "%s", line + 5);
        } else if (!strncmp(line, "pid ", 4)) {
            m->pid = strtol(line + 4, NULL, 10);
        } else if (!strncmp(line, "ncpus ", 6)) {
            m->ncpus = (unsigned)strtoul(line + 6, NULL, 10);
        } else if (!strncmp(line, "event ", 6)) {
            char name[CPOD_MAX_EVENT_NAME + 2], *end;
            unsigned long id = strtoul(line + 6, &end, 10);
            double period = 0;
            int k = sscanf(end, " %64s %lf", name, &period);
            if (end == line + 6 || id > 255 || k < 1 || !cpod_event_name_ok(name) ||
                (k == 2 && !(period >= 0 && isfinite(period)))) {
                cpod_msg(msg, msg_size, "%s:%u: want \"event ID NAME [PERIOD]\" with ID 0..255, "
                         "NAME of [A-Za-z0-9_.-] and PERIOD >= 0", path, ln);
                ok = false;
                break;
            }
            memcpy(m->evname[id], name, strlen(name) + 1);   /* checked: at most 63 bytes */
            m->period[id] = period;
        }
        /* other keys: a newer machine's; ignored */
    }
    if (ok && ln == 0) {
        cpod_msg(msg, msg_size, "%s: empty", path);
        ok = false;
    }
    fclose(f);
    return ok;
}

bool cpod_meta_write(const char *path, const cpod_machine *m, char *msg, size_t msg_size)
{
    size_t n = strlen(path);
    char tmp[CPOD_PATH_MAX + 16];
    if (n + 8 >= sizeof tmp) {
        cpod_msg(msg, msg_size, "%s: path too long", path);
        return false;
    }
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        cpod_msg(msg, msg_size, "%s: cannot create: %s", tmp, strerror(errno));
        return false;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        cpod_msg(msg, msg_size, "%s: %s", tmp, strerror(errno));
        return false;
    }
    char name[128];
    if (m->name)
        snprintf(name, sizeof name, "%s", m->name);
    else
        snprintf(name, sizeof name, "pid %d", (int)getpid());
    for (char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    fprintf(f, "cpod-machine 1\nname %s\npid %d\nncpus %u\n", name, (int)getpid(), m->ncpus);
    for (size_t i = 0; i < m->nevents; i++)
        fprintf(f, "event %u %s %.17g\n", m->events[i].id, m->events[i].name,
                m->events[i].mean_period);
    bool ok = fflush(f) == 0 && !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    if (!ok || rename(tmp, path) != 0) {
        cpod_msg(msg, msg_size, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return false;
    }
    return true;
}
