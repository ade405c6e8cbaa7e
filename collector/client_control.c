/*
 * collector/client_control.c: one request to the daemon and its reply.
 *
 * Whether a daemon runs is decided by its lock, not by the socket file: a
 * daemon killed with SIGKILL leaves the socket behind, and connecting to
 * it fails with ECONNREFUSED, which is reported as "no daemon" too.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/client.h"
#include "collector/cpod_internal.h"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cpod_request(const char *db_dir, const char *request, int timeout_ms, char **reply, char *msg,
                 size_t msg_size)
{
    *reply = NULL;
    char state[CPOD_PATH_MAX], why[512];
    if (!cpod_state_dir(db_dir, false, state, why, sizeof why)) {
        cpod_msg(msg, msg_size, "no cpod is running for %s (%s)", db_dir, why);
        return CPOD_NO_DAEMON;
    }
    int pid = 0;
    bool running = cpod_running(db_dir, &pid);
    struct sockaddr_un sa;
    socklen_t len;
    int dirfd = cpod_control_addr(state, &sa, &len);
    if (dirfd == -2) {
        cpod_msg(msg, msg_size, "%s: %s", state, strerror(errno));
        return CPOD_FAILED;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        cpod_msg(msg, msg_size, "socket: %s", strerror(errno));
        if (dirfd >= 0)
            close(dirfd);
        return CPOD_FAILED;
    }
    int rc = connect(fd, (struct sockaddr *)&sa, len);
    int e = errno;
    if (dirfd >= 0)
        close(dirfd);
    if (rc != 0) {
        close(fd);
        if (!running || e == ENOENT || e == ECONNREFUSED) {
            if (running)
                cpod_msg(msg, msg_size, "cpod pid %d holds %s/lock but does not answer on "
                         "%s/control (%s)", pid, state, state, strerror(e));
            else
                cpod_msg(msg, msg_size, "no cpod is running for %s (start one with: cpod --db %s)",
                         db_dir, db_dir);
            return running ? CPOD_FAILED : CPOD_NO_DAEMON;
        }
        cpod_msg(msg, msg_size, "%s/control: cannot connect: %s", state, strerror(e));
        return CPOD_FAILED;
    }
    size_t rl = strlen(request);
    char line[256];
    if (rl + 2 > sizeof line) {
        close(fd);
        cpod_msg(msg, msg_size, "request too long");
        return CPOD_FAILED;
    }
    snprintf(line, sizeof line, "%s\n", request);
    if (send(fd, line, rl + 1, MSG_NOSIGNAL) != (ssize_t)(rl + 1)) {
        cpod_msg(msg, msg_size, "%s/control: cannot send: %s", state, strerror(errno));
        close(fd);
        return CPOD_FAILED;
    }
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    long long end = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    int status = CPOD_FAILED;
    cpod_msg(msg, msg_size, "cpod%s%.0d exited before replying to '%s'", pid ? " pid " : "", pid,
             request);
    while (buf) {
        int wait = -1;
        if (end) {
            long long left = end - now_ms();
            if (left <= 0) {
                cpod_msg(msg, msg_size, "cpod did not reply to '%s' within %d ms", request,
                         timeout_ms);
                break;
            }
            wait = (int)left;
        }
        struct pollfd pfd = { fd, POLLIN, 0 };
        int pr = poll(&pfd, 1, wait);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        if (n + 1024 > cap) {
            char *b2 = realloc(buf, cap *= 2);
            if (!b2)
                break;
            buf = b2;
        }
        ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = '\0';
        /* The reply ends with its status line. */
        if (n && buf[n - 1] == '\n') {
            buf[n - 1] = '\0';
            char *last = strrchr(buf, '\n');
            last = last ? last + 1 : buf;
            if (!strcmp(last, "ok")) {
                *last = '\0';
                *reply = buf;
                buf = NULL;
                status = CPOD_REPLY_OK;
                break;
            }
            if (!strncmp(last, "error: ", 7)) {
                cpod_msg(msg, msg_size, "%s", last + 7);
                *last = '\0';
                *reply = buf;
                buf = NULL;
                status = CPOD_REPLY_ERROR;
                break;
            }
            buf[n - 1] = '\n';
        }
    }
    free(buf);
    close(fd);
    return status;
}
