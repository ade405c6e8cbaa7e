/*
 * collector/cpod_attach.c: the machine's side of meeting the daemon.
 *
 * Each machine gets a region of its own (the driver was written so that a
 * region is one producer's): REGIONS/mPID-K.drv, K the first number free.
 * Its description (events, periods, a name for the log) is written first,
 * as REGIONS/mPID-K.meta, so the daemon finds it complete when the region
 * appears.  The daemon watches the directory; there is no handshake, so a
 * machine runs the same whether a daemon is up, late or restarting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/cpod_internal.h"

static drv *fail(drv_error *err, int code, const char *msg)
{
    if (err) {
        err->code = code;
        cpod_msg(err->msg, sizeof err->msg, "%s", msg);
    }
    return NULL;
}

drv *cpod_attach(const char *db_dir, const cpod_machine *m, char *path_out, size_t path_size,
                 drv_error *err)
{
    char msg[sizeof err->msg];
    if (!m || !m->ncpus || m->ncpus > DRV_MAX_CPUS)
        return fail(err, DRV_EINVAL, "cpod_attach: ncpus must be 1..1024");
    for (size_t i = 0; i < m->nevents; i++) {
        const cpod_event *e = &m->events[i];
        if (e->id > DRV_MAX_EVENT || !cpod_event_name_ok(e->name) || !(e->mean_period >= 0)) {
            cpod_msg(msg, sizeof msg, "cpod_attach: event %zu: id 0..255, a name of 1..63 "
                     "[A-Za-z0-9_.-] and a period >= 0 wanted", i);
            return fail(err, DRV_EINVAL, msg);
        }
        for (size_t k = 0; k < i; k++)
            if (m->events[k].id == e->id) {
                cpod_msg(msg, sizeof msg, "cpod_attach: event id %u named twice", e->id);
                return fail(err, DRV_EINVAL, msg);
            }
    }
    char state[CPOD_PATH_MAX], regions[CPOD_PATH_MAX];
    if (!cpod_state_dir(db_dir, true, state, msg, sizeof msg) ||
        !cpod_regions_dir(state, true, regions, msg, sizeof msg))
        return fail(err, DRV_EIO, msg);

    char base[CPOD_PATH_MAX + 64], drvp[CPOD_PATH_MAX + 80], metap[CPOD_PATH_MAX + 80];
    struct stat st;
    for (unsigned k = 0;; k++) {
        snprintf(base, sizeof base, "%s/m%d-%u", regions, (int)getpid(), k);
        snprintf(drvp, sizeof drvp, "%s.drv", base);
        snprintf(metap, sizeof metap, "%s.meta", base);
        if (lstat(drvp, &st) != 0 && errno == ENOENT && lstat(metap, &st) != 0 && errno == ENOENT)
            break;
        if (k > 100000)
            return fail(err, DRV_EIO, "cpod_attach: no free region name");
    }
    if (!cpod_meta_write(metap, m, msg, sizeof msg))
        return fail(err, DRV_EIO, msg);
    drv_params p = m->drv;
    p.ncpus = m->ncpus;
    drv *d = drv_open(drvp, &p, err);
    if (!d) {
        unlink(metap);
        return NULL;
    }
    if (path_out && path_size)
        snprintf(path_out, path_size, "%s", drvp);
    return d;
}

bool cpod_running(const char *db_dir, int *pid)
{
    char state[CPOD_PATH_MAX], msg[256], path[CPOD_PATH_MAX + 8];
    if (!cpod_state_dir(db_dir, false, state, msg, sizeof msg))
        return false;
    snprintf(path, sizeof path, "%s/lock", state);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    bool held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    if (held && pid) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        *pid = atoi(buf);
    }
    close(fd);
    return held;
}
