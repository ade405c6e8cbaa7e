/*
 * common/readfile.c: whole files into memory (common/readfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/readfile.h"

/* Closes fd, frees buf and leaves errno as e: close may change errno, and
 * callers classify the failure by it. */
static void *fail(int fd, void *buf, int e)
{
    if (fd >= 0)
        close(fd);
    free(buf);
    errno = e;
    return NULL;
}

/* Up to max bytes of path; more than max is refused when whole is set, cut
 * off otherwise. */
static void *read_upto(const char *path, size_t max, bool whole, size_t *got, uint64_t *file_size,
                       char *err, size_t errlen)
{
    *got = 0;
    *file_size = 0;
    int fd, e;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        e = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        return fail(-1, NULL, e);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        e = errno;
        snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(e));
        return fail(fd, NULL, e);
    }
    if (!S_ISREG(st.st_mode)) {
        bool dir = S_ISDIR(st.st_mode);
        snprintf(err, errlen, "%s: %snot a regular file", path, dir ? "a directory, " : "");
        return fail(fd, NULL, dir ? EISDIR : EINVAL);
    }
    uint64_t fsize = (uint64_t)st.st_size;
    /* one byte of the address space is kept for the NUL */
    if (max > SIZE_MAX - 1)
        max = SIZE_MAX - 1;
    if (whole && fsize > max) {
        snprintf(err, errlen, "%s: %" PRIu64 " bytes, more than the %zu this reader takes", path,
                 fsize, max);
        fail(fd, NULL, EFBIG);
        *got = fsize < SIZE_MAX ? (size_t)fsize : SIZE_MAX;
        return NULL;
    }
    size_t want = fsize < max ? (size_t)fsize : max;
    uint8_t *buf = malloc(want + 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return fail(fd, NULL, ENOMEM);
    }
    size_t n = 0;
    while (n < want) {
        ssize_t r = read(fd, buf + n, want - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            e = errno;
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
            return fail(fd, buf, e);
        }
        if (r == 0)
            break;   /* shrunk since the fstat */
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *got = n;
    *file_size = n < want ? n : fsize;
    return buf;
}

void *readfile(const char *path, size_t max, size_t *size, char *err, size_t errlen)
{
    uint64_t file_size;
    return read_upto(path, max, true, size, &file_size, err, errlen);
}

void *readfile_head(const char *path, size_t max, size_t *got, uint64_t *file_size, char *err,
                    size_t errlen)
{
    return read_upto(path, max, false, got, file_size, err, errlen);
}
