/*
 * collector/cpod_control.c: the daemon's end of the control socket.
 *
 * Requests are read without blocking the main loop; "status" is answered
 * at once, "flush", "epoch" and "quit" when the merge they started has
 * finished.  A client that disconnects while waiting is simply dropped;
 * the merge goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/cpod_internal.h"


bool cpod_control_listen(cpod *d, char *msg, size_t msg_size)
{
    struct sockaddr_un sa;
    socklen_t len;
    int dirfd = cpod_control_addr(d->state, &sa, &len);
    if (dirfd == -2) {
        cpod_msg(msg, msg_size, "%s: %s", d->state, strerror(errno));
        return false;
    }
    if ((size_t)snprintf(d->sock_path, sizeof d->sock_path, "%.4000s/control", d->state) >=
        sizeof d->sock_path) {
        cpod_msg(msg, msg_size, "%s: path too long", d->state);
        return false;
    }
    unlink(d->sock_path);   /* a killed daemon's; we hold the lock */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, len) == 0 &&
              chmod(d->sock_path, 0600) == 0 && listen(fd, SOMAXCONN) == 0;
    int e = errno;
    struct stat st;
    if (ok && stat(d->sock_path, &st) == 0) {
        d->sock_dev = st.st_dev;
        d->sock_ino = st.st_ino;
    }
    if (dirfd >= 0)
        close(dirfd);
    if (!ok) {
        cpod_msg(msg, msg_size, "%s: cannot listen: %s", d->sock_path, strerror(e));
        if (fd >= 0)
            close(fd);
        return false;
    }
    d->listen_fd = fd;
    return true;
}

static size_t nclients(const cpod *d)
{
    size_t n = 0;
    for (const cpod_client *c = d->clients; c; c = c->next)
        n++;
    return n;
}

void cpod_control_accept(cpod *d)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (nclients(d) >= CPOD_MAX_CLIENTS) {
            static const char busy[] = "error: too many clients waiting; try again\n";
            if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
                {}
            /* closing on an unread request would reset the connection
             * and lose the refusal: take what has come, say we are done */
            char junk[256];
            while (recv(fd, junk, sizeof junk, MSG_DONTWAIT) > 0)
                {}
            shutdown(fd, SHUT_WR);
            close(fd);
            continue;
        }
        cpod_client *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->since = cpod_now_ms();
        c->next = d->clients;
        d->clients = c;
    }
}

void cpod_client_close(cpod *d, cpod_client *c)
{
    for (cpod_client **pp = &d->clients; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    close(c->fd);
    free(c);
}

/* Replies are a few hundred bytes, far below a socket's buffer; a client
 * that does not read them loses them rather than stalling the daemon. */
void cpod_client_reply(cpod *d, cpod_client *c, const char *text)
{
    size_t n = strlen(text);
    const char *p = text;
    while (n) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        n -= (size_t)w;
    }
    cpod_client_close(d, c);
}

static void status(cpod *d, cpod_client *c)
{
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    if (!f) {
        cpod_client_reply(d, c, "error: out of memory\n");
        return;
    }
    char epoch[PROFDB_EPOCH_MAX];
    profdb_error err;
    fprintf(f, "pid %d\ndatabase %s\nstate %s\nregions %s\n", (int)getpid(), d->db_dir, d->state,
            d->regions_dir);
    if (profdb_current_epoch(d->db, epoch, &err))
        fprintf(f, "epoch %s\n", epoch);
    fprintf(f, "merged generation %llu%s\n", (unsigned long long)d->merged_gen,
            d->retry ? " (a merge is waiting for the database)" : "");
    unsigned attached = 0;
    for (cpod_region *r = d->regions; r; r = r->next) {
        drv_counters k;
        cpod_region_counters(r, &k);
        fprintf(f, "machine %s: %u CPUs, %llu samples taken, %llu unknown, %llu dropped, "
                "%zu processes%s%s\n", r->label, r->ncpus, (unsigned long long)r->samples,
                (unsigned long long)r->unknown, (unsigned long long)k.dropped, r->procs.n,
                r->gone ? ", gone" : "", r->broken ? ", damaged" : "");
        attached += !r->gone;
    }
    fprintf(f, "machines %u attached, %u gone\n", attached, d->machines_gone);
    fprintf(f, "samples %llu since start, %llu unknown, %llu in memory\n",
            (unsigned long long)d->samples, (unsigned long long)d->unknown,
            (unsigned long long)d->live.samples);
    fprintf(f, "ok\n");
    fclose(f);
    cpod_client_reply(d, c, out ? out : "error: out of memory\n");
    free(out);
}

void cpod_control_read(cpod *d, cpod_client *c)
{
    for (;;) {
        ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (r == 0 && c->waiting) {
            /* Half-closed after its request (shutdown(SHUT_WR)): it still
             * gets its answer; stop polling what can only say EOF again. */
            c->eof = true;
            return;
        }
        if (r <= 0) {   /* gone */
            cpod_client_close(d, c);
            return;
        }
        if (c->waiting)
            continue;   /* nothing more is expected; ignore it */
        c->len += (size_t)r;
        c->buf[c->len] = '\0';
        char *nl = strchr(c->buf, '\n');
        if (!nl) {
            if (c->len >= sizeof c->buf - 1) {
                cpod_client_reply(d, c, "error: request too long\n");
                return;
            }
            continue;
        }
        *nl = '\0';
        if (nl > c->buf && nl[-1] == '\r')
            nl[-1] = '\0';
        const char *cmd = c->buf;
        if (!strcmp(cmd, "status")) {
            status(d, c);
            return;
        }
        if (!strcmp(cmd, "flush") || !strcmp(cmd, "epoch") || !strcmp(cmd, "quit")) {
            snprintf(c->cmd, sizeof c->cmd, "%.8s", cmd);
            c->waiting = true;
            c->ticket = 0;
            cpod_request_merge(d, !strcmp(cmd, "epoch"), !strcmp(cmd, "quit"));
            return;
        }
        char reply[sizeof c->buf + 96];
        cpod_msg(reply, sizeof reply, "error: unknown request '%.64s' (flush, epoch, quit, status)\n",
                 cmd);
        cpod_client_reply(d, c, reply);
        return;
    }
}
