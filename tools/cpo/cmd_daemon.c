/*
 * cpo flush|epoch|quit --db DIR [--timeout SECONDS]
 *
 * Steer the cpod daemon serving DIR: flush (drain every machine and merge
 * into the database), epoch (flush into the current epoch, then start a
 * new one), quit (flush, then exit).  Each waits for the daemon's reply
 * and prints its report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/client.h"
#include "collector/cpod.h"
#include "tools/cpo/commands.h"

static int steer(const char *cmd, int argc, char **argv)
{
    const char *db = NULL;
    long long timeout_ms = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            if (!cpod_parse_interval(argv[++i], &timeout_ms) || timeout_ms > 86400000) {
                fprintf(stderr, "cpo %s: bad --timeout '%s'\n", cmd, argv[i]);
                return 2;
            }
        } else {
            db = NULL;
            break;
        }
    }
    if (!db) {
        fprintf(stderr, "usage: cpo %s --db DIR [--timeout INTERVAL]\n", cmd);
        return 2;
    }
    char *reply = NULL, msg[1024];
    int rc = cpod_request(db, cmd, (int)timeout_ms, &reply, msg, sizeof msg);
    if (reply && *reply)
        fputs(reply, stdout);
    free(reply);
    if (!strcmp(cmd, "quit")) {
        /* The reply comes after the last merge; the lock goes a moment
         * later.  Wait for it, so a new daemon can start right after,
         * also when the reply was a failed merge's: the daemon exits. */
        for (int i = 0; i < 1000 && cpod_running(db, NULL); i++)
            nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
    }
    if (rc != CPOD_REPLY_OK) {
        fprintf(stderr, "cpo %s: %s\n", cmd, msg);
        return 1;
    }
    return 0;
}

int cmd_flush(int argc, char **argv) { return steer("flush", argc, argv); }
int cmd_epoch(int argc, char **argv) { return steer("epoch", argc, argv); }
int cmd_quit(int argc, char **argv) { return steer("quit", argc, argv); }
