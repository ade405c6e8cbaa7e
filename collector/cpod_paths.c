/*
 * collector/cpod_paths.c: where the daemon of a database keeps its state,
 * and where machines put their regions.
 *
 * The state directory is DB/.cpod/HOST: a database may be shared by hosts
 * (docs/profdb.md), each with its own daemon, so each keeps its lock,
 * socket and journal apart.  Regions are written at sample rate and belong
 * on a tmpfs, so STATE/regions is a symbolic link to a private directory on
 * /dev/shm with a fresh unpredictable name (mkdtemp), made when the link is
 * missing: a database removed and made again at the same path gets regions
 * of its own, so a daemon left over from the old one can never drain the
 * new one's machines.  Machines and daemon
 * both go through the link, so neither needs to derive anything.  After a
 * reboot the link dangles and is made good again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/cpod_internal.h"

#define SHM_DIR "/dev/shm"

static bool fail(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return false;
}

static bool mkdir_ok(const char *path, mode_t mode, char *msg, size_t size)
{
    if (mkdir(path, mode) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return true;
        return fail(msg, size, "%s: %s", path, errno == EEXIST ? "not a directory" : strerror(errno));
    }
    return fail(msg, size, "%s: cannot create: %s", path, strerror(errno));
}

/* Host names may hold anything; as in profdb, only [A-Za-z0-9_.-] (no
 * leading dot) is kept, the rest written %XX. */
static void escape_host(const char *s, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; s[i] && o + 4 <= size; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '-' || (c == '.' && i > 0)) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

bool cpod_state_dir(const char *db_dir, bool create, char out[CPOD_PATH_MAX], char *msg,
                    size_t msg_size)
{
    char host[PROFDB_MAX_NAME + 2], esc[3 * PROFDB_MAX_NAME + 8];
    if (gethostname(host, sizeof host) < 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    escape_host(host, esc, sizeof esc);
    if (!db_dir || !*db_dir)
        return fail(msg, msg_size, "no database directory given");
    int n = snprintf(out, CPOD_PATH_MAX, "%s/.cpod", db_dir);
    if (n < 0 || n + strlen(esc) + 64 >= CPOD_PATH_MAX)
        return fail(msg, msg_size, "%s: path too long", db_dir);
    if (create && (!mkdir_ok(db_dir, 0777, msg, msg_size) || !mkdir_ok(out, 0777, msg, msg_size)))
        return false;
    snprintf(out + n, CPOD_PATH_MAX - n, "/%s", esc);
    if (create && !mkdir_ok(out, 0755, msg, msg_size))
        return false;
    if (!create) {
        struct stat st;
        if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
            return fail(msg, msg_size, "%s: no cpod state here (%s)", out,
                        errno == ENOENT ? "no daemon has served this database on this host"
                                        : strerror(errno));
    }
    return true;
}

/* A directory we may keep regions in: ours, and no one else's to write. */
static bool private_dir(const char *path, char *msg, size_t size)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return fail(msg, size, "%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return fail(msg, size, "%s: not a directory", path);
    if (st.st_uid != getuid())
        return fail(msg, size, "%s: owned by another user; remove it", path);
    if (st.st_mode & 022)
        return fail(msg, size, "%s: writable by others; remove it or make it 0700", path);
    return true;
}

bool cpod_regions_dir(const char *state_dir, bool create, char out[CPOD_PATH_MAX], char *msg,
                      size_t msg_size)
{
    char link[CPOD_PATH_MAX];
    if (strlen(state_dir) + sizeof "/regions" > sizeof link)
        return fail(msg, msg_size, "%s: path too long", state_dir);
    snprintf(link, sizeof link, "%.4000s/regions", state_dir);
    struct stat st;
    if (lstat(link, &st) == 0 && S_ISDIR(st.st_mode)) {
        memcpy(out, link, sizeof link);
        return true;
    }
    if (lstat(link, &st) == 0 && S_ISLNK(st.st_mode)) {
        ssize_t k = readlink(link, out, CPOD_PATH_MAX - 1);
        if (k <= 0)
            return fail(msg, msg_size, "%s: %s", link, strerror(errno));
        out[k] = '\0';
        if (create && mkdir(out, 0700) != 0 && errno != EEXIST)
            return fail(msg, msg_size, "%s: cannot create: %s", out, strerror(errno));
        return private_dir(out, msg, msg_size);
    }
    if (!create)
        return fail(msg, msg_size, "%s: no regions directory (%s)", link,
                    errno == ENOENT ? "no daemon or machine has used this database yet"
                                    : strerror(errno));
    struct stat shm;
    if (stat(SHM_DIR, &shm) == 0 && S_ISDIR(shm.st_mode) && access(SHM_DIR, W_OK | X_OK) == 0) {
        /* A fresh, unpredictable directory for this database.  symlink()
         * fails if the link exists, so of racing creators one wins and the
         * others take its directory and remove their own. */
        snprintf(out, CPOD_PATH_MAX, SHM_DIR "/cpod-%u-XXXXXX", (unsigned)getuid());
        if (!mkdtemp(out))
            return fail(msg, msg_size, "%s: cannot create: %s", out, strerror(errno));
        if (!private_dir(out, msg, msg_size)) {
            rmdir(out);
            return false;
        }
        if (symlink(out, link) == 0)
            return true;
        int e = errno;
        rmdir(out);
        if (e != EEXIST)
            return fail(msg, msg_size, "%s: cannot create the link: %s", link, strerror(e));
        ssize_t k = readlink(link, out, CPOD_PATH_MAX - 1);
        if (k <= 0)
            return fail(msg, msg_size, "%s: %s", link, strerror(errno));
        out[k] = '\0';
        return private_dir(out, msg, msg_size);
    }
    if (!mkdir_ok(link, 0700, msg, msg_size))
        return false;
    memcpy(out, link, sizeof link);
    return true;
}

bool cpod_parse_interval(const char *s, long long *ms)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0))
        return false;
    double scale = 1000;
    if (!strcmp(end, "ms"))
        scale = 1;
    else if (!strcmp(end, "") || !strcmp(end, "s"))
        scale = 1000;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        scale = 60000;
    else if (!strcmp(end, "h"))
        scale = 3600000;
    else if (!strcmp(end, "d"))
        scale = 86400000;
    else
        return false;
    double r = v * scale;
    if (r < 1 || r > 1e15)
        return false;
    *ms = (long long)r;
    return true;
}

int cpod_control_addr(const char *state_dir, struct sockaddr_un *sa, socklen_t *len)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    int dirfd = -1;
    if (strlen(state_dir) + sizeof "/control" <= sizeof sa->sun_path) {
        snprintf(sa->sun_path, sizeof sa->sun_path, "%s/control", state_dir);
    } else {
        /* sun_path holds 108 bytes; a deep database reaches its socket
         * through the process's own handle on the directory. */
        dirfd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
            return -2;
        snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/control", dirfd);
    }
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
    return dirfd;
}
