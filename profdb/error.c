/* profdb/error.c: error and warning messages, small string helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/internal.h"

bool pd_fail(profdb_error *err, profdb_err code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        err->sys_errno = 0;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* Uses errno as the failing call left it. */
bool pd_fail_sys(profdb_error *err, const char *path, const char *what)
{
    int e = errno;
    pd_fail(err, e == ENOENT ? PROFDB_ENOENT : e == ENOMEM ? PROFDB_ENOMEM : PROFDB_EIO,
            "%s: %s: %s", path, what, strerror(e));
    if (err)
        err->sys_errno = e;
    errno = e;
    return false;
}

void pd_warn(profdb *db, const char *fmt, ...)
{
    char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (db && db->warn)
        db->warn(db->warn_ctx, buf);
    else
        fprintf(stderr, "profdb: warning: %s\n", buf);
}

char *pd_strdup(const char *s, profdb_error *err)
{
    char *d = strdup(s);
    if (!d)
        pd_fail(err, PROFDB_ENOMEM, "out of memory");
    return d;
}

char *pd_join(const char *a, const char *b, const char *c, profdb_error *err)
{
    size_t la = strlen(a), lb = strlen(b), lc = c ? strlen(c) : 0;
    char *s = malloc(la + lb + lc + 3);
    if (!s) {
        pd_fail(err, PROFDB_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb);
    if (c) {
        s[la + 1 + lb] = '/';
        memcpy(s + la + 2 + lb, c, lc);
        s[la + 2 + lb + lc] = '\0';
    } else {
        s[la + 1 + lb] = '\0';
    }
    return s;
}
