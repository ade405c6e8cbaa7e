/*
 * collector/cpod_log.c: the daemon's log, one timestamped line per event.
 *
 * Lines are formatted whole and written with one write() under a mutex, so
 * the merge thread and the main thread never interleave, and SIGHUP's
 * reopen (after a rotation) never races a writer onto a closed descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "collector/cpod_internal.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = 2;
static char log_path[CPOD_PATH_MAX];

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

bool cpod_log_open(const char *path, char *msg, size_t msg_size)
{
    if (!path) {
        log_path[0] = '\0';
        log_fd = 2;
        return true;
    }
    if (strlen(path) >= sizeof log_path) {
        cpod_msg(msg, msg_size, "%s: log path too long", path);
        return false;
    }
    int fd = open_log(path);
    if (fd < 0) {
        cpod_msg(msg, msg_size, "%s: cannot open the log: %s", path, strerror(errno));
        return false;
    }
    pthread_mutex_lock(&log_mu);
    snprintf(log_path, sizeof log_path, "%s", path);
    log_fd = fd;
    pthread_mutex_unlock(&log_mu);
    return true;
}

bool cpod_log_reopen(void)
{
    bool ok = true;
    pthread_mutex_lock(&log_mu);
    if (log_path[0]) {
        int fd = open_log(log_path);
        if (fd >= 0) {
            if (log_fd > 2)
                close(log_fd);
            log_fd = fd;
        } else {
            ok = false;   /* keep writing to the old file rather than nowhere */
        }
    }
    pthread_mutex_unlock(&log_mu);
    return ok;
}

void cpod_log_close(void)
{
    pthread_mutex_lock(&log_mu);
    if (log_fd > 2)
        close(log_fd);
    log_fd = 2;
    log_path[0] = '\0';
    pthread_mutex_unlock(&log_mu);
}

void cpod_log(const char *fmt, ...)
{
    char line[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    time_t t = tv.tv_sec;
    gmtime_r(&t, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - n, ".%03dZ cpod[%d]: ", (int)(tv.tv_usec / 1000),
                  (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    n += m;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    pthread_mutex_lock(&log_mu);
    for (const char *p = line; n > 0;) {
        ssize_t w = write(log_fd, p, (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;   /* a full disk must not stop the daemon */
        p += w;
        n -= (int)w;
    }
    pthread_mutex_unlock(&log_mu);
}

void cpod_msg(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);   /* messages may be cut short; that is fine */
    va_end(ap);
}
