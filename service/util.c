/*
 * service/util.c: paths, the log, child processes and file copies for the
 * service.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/outfile.h"
#include "image/image.h"
#include "service/internal.h"

extern char **environ;

char *svc_format(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

char *svc_join(const char *dir, const char *name)
{
    return svc_format("%s/%s", dir, name);
}

char *svc_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* ---- the log ---- */

static FILE *log_file;

bool svc_log_open(const char *state_dir, char *err, size_t errlen)
{
    char *path = svc_join(state_dir, "serve.log");
    log_file = path ? fopen(path, "a") : NULL;
    if (!log_file)
        snprintf(err, errlen, "%s: %s", path ? path : state_dir, path ? strerror(errno) : "out of memory");
    free(path);
    return log_file != NULL;
}

void svc_log_close(void)
{
    if (log_file)
        fclose(log_file);
    log_file = NULL;
}

void svc_log(const char *fmt, ...)
{
    char msg[2048], stamp[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    time_t t = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
    fprintf(stderr, "cpo serve: %s\n", msg);
    if (log_file) {
        fprintf(log_file, "%s %s\n", stamp, msg);
        fflush(log_file);
    }
}

/* ---- children ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char **with_env(char *const extra[])
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    while (extra && extra[k])
        k++;
    char **v = malloc((n + k + 1) * sizeof *v);
    if (!v)
        return NULL;
    memcpy(v, environ, n * sizeof *v);
    memcpy(v + n, extra, k * sizeof *v);
    v[n + k] = NULL;
    return v;
}

/* The child: its own process group (so a timeout kills all of it), output
 * to the file, nothing on stdin. */
static void child(char *const argv[], const char *cmd, char **env, int fd)
{
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0)
        dup2(in, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (argv)
        execve(argv[0], argv, env);
    else
        execve("/bin/sh", (char *const[]){ "sh", "-c", (char *)cmd, NULL }, env);
    dprintf(fd, "cannot run %s: %s\n", argv ? argv[0] : "/bin/sh", strerror(errno));
    _exit(127);
}

int svc_run(char *const argv[], const char *cmd, char *const env[], const char *out_path,
            double timeout, char *err, size_t errlen)
{
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char **e = with_env(env);
    if (fd < 0 || !e) {
        snprintf(err, errlen, "%s: %s", out_path, fd < 0 ? strerror(errno) : "out of memory");
        if (fd >= 0)
            close(fd);
        free(e);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        child(argv, cmd, e, fd);
    close(fd);
    free(e);
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    double end = now() + timeout;
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR) {
            snprintf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
        if (now() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            snprintf(err, errlen, "still running after %.0f s: killed", timeout);
            return -1;
        }
        usleep(20000);
    }
}

/* ---- files ---- */

bool svc_copy(const char *src, const char *dst, unsigned mode, char *err, size_t errlen)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        snprintf(err, errlen, "%s: %s", src, strerror(errno));
        return false;
    }
    outfile o;
    if (!outfile_open(&o, dst, mode, err, errlen)) {
        close(in);
        return false;
    }
    char buf[65536];
    ssize_t n;
    bool ok = true;
    while (ok && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "%s: %s", src, strerror(errno));
            ok = false;
            break;
        }
        for (ssize_t off = 0; ok && off < n;) {
            ssize_t w = write(o.fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                snprintf(err, errlen, "%s: %s", dst, strerror(errno));
                ok = false;
            } else {
                off += w;
            }
        }
    }
    close(in);
    if (!ok) {
        outfile_abort(&o);
        return false;
    }
    /* outfile honours the umask; an executable must stay executable */
    fchmod(o.fd, mode);
    return outfile_commit(&o, err, errlen);
}

bool svc_same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    bool same = x && y;
    while (same) {
        int c = getc(x), d = getc(y);
        if (c != d)
            same = false;
        if (c == EOF || d == EOF)
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

bool svc_build_id(const char *path, char hex[129], char *err, size_t errlen)
{
    image_error ie;
    image *img = image_open(path, &ie);
    if (!img) {
        snprintf(err, errlen, "%s", ie.msg);
        return false;
    }
    image_build_id_hex(img, hex, 129);
    image_close(img);
    return true;
}

void svc_remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char *p = svc_join(path, e->d_name);
            if (p && unlink(p) && errno == EISDIR)
                svc_remove_tree(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(path);
}
