/*
 * collector/client.h: talking to the cpod daemon of a database.
 *
 * The daemon listens on a unix socket in its state directory
 * (DB/.cpod/HOST/control).  A request is one line ("flush", "epoch",
 * "quit", "status"); the reply is lines of text ending with a line "ok" or
 * "error: MESSAGE", after which the daemon closes the connection.  The
 * protocol is in docs/cpod.md.
 */
#ifndef COLLECTOR_CLIENT_H
#define COLLECTOR_CLIENT_H

#include <stddef.h>

enum {
    CPOD_REPLY_OK = 0,       /* the daemon did it; *reply holds its report */
    CPOD_REPLY_ERROR = 1,    /* the daemon answered with an error; msg holds it */
    CPOD_NO_DAEMON = 2,      /* no daemon serves the database on this host */
    CPOD_FAILED = 3,         /* the exchange failed (the daemon died, a timeout, ...) */
};

/* Send request to the daemon serving db_dir and wait for its reply,
 * timeout_ms at most (<= 0: no limit).  *reply (malloc'd, may be empty)
 * gets the report lines, without the final "ok" line; msg a one-line
 * explanation otherwise. */
int cpod_request(const char *db_dir, const char *request, int timeout_ms, char **reply, char *msg,
                 size_t msg_size);

#endif
