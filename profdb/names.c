/*
 * profdb/names.c: the names of epochs, host directories and profile files.
 *
 * Names on disk only locate profiles; the header inside each file holds the
 * true image path, event and host.  So a name must be unique and safe on
 * any filesystem (NFS included), not pretty: anything outside [A-Za-z0-9_-]
 * is written %XX, which also keeps '/' and leading dots out.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/hash.h"
#include "profdb/internal.h"

bool pd_check_name(const char *s, const char *what, profdb_error *err)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0)
        return pd_fail(err, PROFDB_EINVAL, "empty %s name", what);
    if (n > PROFDB_MAX_NAME)
        return pd_fail(err, PROFDB_EINVAL, "%s name longer than %d bytes", what, PROFDB_MAX_NAME);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return pd_fail(err, PROFDB_EINVAL, "%s name has a control character", what);
    return true;
}

/* out needs 3 * strlen(s) + 1 bytes. */
void pd_escape(const char *s, bool dot_ok, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; s[i] && o + 4 <= size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '_' || c == '-' || (c == '.' && dot_ok && i > 0)) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

/* YYYYMMDDTHHMMSSZ, optionally followed by -001 .. -999. */
bool pd_epoch_valid(const char *name)
{
    size_t n = strlen(name);
    if (n != 16 && n != 20)
        return false;
    for (size_t i = 0; i < 16; i++) {
        char c = name[i];
        if (i == 8 ? c != 'T' : i == 15 ? c != 'Z' : !isdigit((unsigned char)c))
            return false;
    }
    if (n == 20) {
        if (name[16] != '-' || !isdigit((unsigned char)name[17]) ||
            !isdigit((unsigned char)name[18]) || !isdigit((unsigned char)name[19]) ||
            !strcmp(name + 17, "000"))
            return false;
    }
    return true;
}

/* The spelling sorts by time: "...Z" precedes "...Z-001". */
int pd_epoch_cmp(const char *a, const char *b)
{
    return strcmp(a, b);
}

bool pd_key_valid(const char *key)
{
    size_t n = strlen(key);
    if (!strcmp(key, PROFDB_UNKNOWN_KEY))
        return true;
    const char *hex = key;
    if (!strncmp(key, "path-", 5)) {
        hex = key + 5;
        if (n != 5 + 16)
            return false;
    } else if (n == 0 || n % 2 || n > 2 * PROFDB_MAX_BUILD_ID) {
        return false;
    }
    for (const char *p = hex; *p; p++)
        if (!isdigit((unsigned char)*p) && !(*p >= 'a' && *p <= 'f'))
            return false;
    return true;
}

const char *profdb_key(const uint8_t *build_id, size_t len, const char *path,
                       char buf[PROFDB_KEY_MAX])
{
    static const char hex[] = "0123456789abcdef";
    if (len > PROFDB_MAX_BUILD_ID)
        len = PROFDB_MAX_BUILD_ID;
    if (len) {
        for (size_t i = 0; i < len; i++) {
            buf[2 * i] = hex[build_id[i] >> 4];
            buf[2 * i + 1] = hex[build_id[i] & 15];
        }
        buf[2 * len] = '\0';
        return buf;
    }
    if (!path || !strcmp(path, PROFDB_UNKNOWN_PATH)) {
        strcpy(buf, PROFDB_UNKNOWN_KEY);
        return buf;
    }
    uint64_t h = fnv1a_str(FNV1A_INIT, path);   /* stable across builds */
    snprintf(buf, PROFDB_KEY_MAX, "path-%016" PRIx64, h);
    return buf;
}

bool pd_profile_name(const char *key, const char *event, char *out, size_t size)
{
    char ev[3 * PROFDB_MAX_NAME + 1];
    pd_escape(event, false, ev, sizeof ev);
    return (size_t)snprintf(out, size, "%s.%s" PROFDB_SUFFIX, key, ev) < size;
}

bool pd_hostname(char *buf, size_t size, profdb_error *err)
{
    if (gethostname(buf, size) < 0)
        return pd_fail_sys(err, "gethostname", "cannot get the host name");
    buf[size - 1] = '\0';
    if (!buf[0])
        snprintf(buf, size, "localhost");
    return true;
}
