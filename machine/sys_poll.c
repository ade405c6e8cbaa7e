/*
 * machine/sys_poll.c: poll, ppoll, select, pselect6.  The host polls the
 * host descriptors without waiting; when nothing is ready the thread parks
 * with its set, and the scheduler polls it again (or waits in the host on
 * it when the whole machine is idle) until something is or the timeout,
 * in guest time, passes.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "machine/sys.h"

/* Poll the guest's set without blocking; n ready, or park until ready or
 * the deadline.  The set is kept in t->wdata while parked. */
static long poll_common(thread *t, uint64_t fdsva, uint64_t nfds, int64_t timeout_ns)
{
    if (nfds > 4096)
        return -A_EINVAL;
    struct { int fd; short ev, rev; } *g = malloc((nfds ? nfds : 1) * 8);
    if (nfds && mem_read(t->mm, fdsva, g, nfds * 8)) {
        free(g);
        return -A_EFAULT;
    }
    struct pollfd *h = malloc((nfds ? nfds : 1) * sizeof *h);
    for (uint64_t i = 0; i < nfds; i++) {
        gfile *f = g[i].fd >= 0 ? fd_get(t->p, g[i].fd) : NULL;
        h[i].fd = f ? f->host : -1;
        h[i].events = g[i].ev;    /* POLLIN etc. have generic values */
        h[i].revents = 0;
    }
    int n = poll(h, (nfds_t)nfds, 0);
    long r;
    if (n < 0) {
        r = -xerrno(errno);
    } else {
        int ready = 0;
        for (uint64_t i = 0; i < nfds; i++) {
            if (g[i].fd >= 0 && h[i].fd < 0)
                h[i].revents = POLLNVAL;
            g[i].rev = h[i].revents;
            if (g[i].rev)
                ready++;
        }
        int64_t now = vtime_ns(t->m);
        if (ready || timeout_ns == 0 || (t->wdeadline >= 0 && now >= t->wdeadline)) {
            r = nfds && mem_write(t->mm, fdsva, g, nfds * 8) ? -A_EFAULT : ready;
        } else {
            if (t->wkind != W_POLL)
                t->wdeadline = timeout_ns > 0 ? now + timeout_ns : -1;
            t->wkind = W_POLL;
            t->waddr = nfds;
            free(t->wdata);
            t->wdata = h;
            free(g);
            return SYS_BLOCK;
        }
    }
    free(h);
    free(g);
    return r;
}

SYS(poll)
{
    int ms = (int)a[2];
    return poll_common(t, a[0], a[1], ms < 0 ? -1 : (int64_t)ms * 1000000);
}

SYS(ppoll)
{
    int64_t to = -1;
    if (a[2]) {
        int64_t ts[2];
        if (mem_read(t->mm, a[2], ts, 16))
            return -A_EFAULT;
        to = ts[0] * 1000000000 + ts[1];
    }
    return poll_common(t, a[0], a[1], to);
}

/* select over poll: fd_set is a bit array of longs on both sides. */
static long select_common(thread *t, const uint64_t *a, int64_t to)
{
    int n = (int)a[0];
    if (n < 0 || n > 4096)
        return -A_EINVAL;
    size_t bytes = (size_t)((n + 63) / 64) * 8;
    uint64_t sets[3][64];
    memset(sets, 0, sizeof sets);
    for (int k = 0; k < 3; k++)
        if (a[1 + k] && bytes && mem_read(t->mm, a[1 + k], sets[k], bytes))
            return -A_EFAULT;
    int cnt = 0;
    struct pollfd *h = malloc((size_t)(n ? n : 1) * sizeof *h);
    int *map = malloc((size_t)(n ? n : 1) * sizeof *map);
    for (int fd = 0; fd < n; fd++) {
        short ev = 0;
        if (sets[0][fd / 64] >> (fd % 64) & 1) ev |= POLLIN;
        if (sets[1][fd / 64] >> (fd % 64) & 1) ev |= POLLOUT;
        if (sets[2][fd / 64] >> (fd % 64) & 1) ev |= POLLPRI;
        if (!ev)
            continue;
        gfile *f = fd_get(t->p, fd);
        if (!f) {
            free(h);
            free(map);
            return -A_EBADF;
        }
        h[cnt].fd = f->host;
        h[cnt].events = ev;
        h[cnt].revents = 0;
        map[cnt++] = fd;
    }
    int r = poll(h, (nfds_t)cnt, 0);
    if (r < 0) {
        free(h);
        free(map);
        return -xerrno(errno);
    }
    int64_t now = vtime_ns(t->m);
    if (r == 0 && to != 0 && !(t->wdeadline >= 0 && now >= t->wdeadline)) {
        if (t->wkind != W_POLL)
            t->wdeadline = to > 0 ? now + to : -1;
        t->wkind = W_POLL;
        t->waddr = (uint64_t)cnt;
        free(t->wdata);
        t->wdata = h;
        free(map);
        return SYS_BLOCK;
    }
    uint64_t out[3][64];
    memset(out, 0, sizeof out);
    int ready = 0;
    for (int i = 0; i < cnt; i++) {
        int fd = map[i];
        short rv = h[i].revents;
        if ((rv & (POLLIN | POLLHUP | POLLERR)) && (h[i].events & POLLIN)) { out[0][fd / 64] |= 1ULL << (fd % 64); ready++; }
        if ((rv & (POLLOUT | POLLERR)) && (h[i].events & POLLOUT)) { out[1][fd / 64] |= 1ULL << (fd % 64); ready++; }
        if ((rv & POLLPRI) && (h[i].events & POLLPRI)) { out[2][fd / 64] |= 1ULL << (fd % 64); ready++; }
    }
    free(h);
    free(map);
    for (int k = 0; k < 3; k++)
        if (a[1 + k] && bytes && mem_write(t->mm, a[1 + k], out[k], bytes))
            return -A_EFAULT;
    return ready;
}

SYS(select)
{
    int64_t to = -1;
    if (a[4]) {
        int64_t tv[2];
        if (mem_read(t->mm, a[4], tv, 16))
            return -A_EFAULT;
        to = tv[0] * 1000000000 + tv[1] * 1000;
    }
    return select_common(t, a, to);
}

SYS(pselect6)
{
    int64_t to = -1;
    if (a[4]) {
        int64_t ts[2];
        if (mem_read(t->mm, a[4], ts, 16))
            return -A_EFAULT;
        to = ts[0] * 1000000000 + ts[1];
    }
    return select_common(t, a, to);
}
