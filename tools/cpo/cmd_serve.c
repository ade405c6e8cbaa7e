/*
 * cpo serve --config FILE [--once] [--for SECONDS]
 * cpo status --config FILE
 *
 * The continuous-optimization service of service/ (docs/service.md): serve
 * runs it until SIGTERM (SIGHUP re-reads the configuration); --once makes
 * one pass over the programs, --for stops after that many seconds.  status
 * prints what it is doing and has done.  The optimizer and axp are taken
 * from this program's own directory.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/service.h"
#include "tools/cpo/commands.h"

static const char SERVE_USAGE[] = "usage: cpo serve --config FILE [--once] [--for SECONDS]\n";
static const char STATUS_USAGE[] = "usage: cpo status --config FILE\n";

/* The directory this program was run from: optimize-image and axp sit
 * beside it. */
static void tools_dir(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = 0;
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(buf, size, ".");
}

int cmd_serve(int argc, char **argv)
{
    const char *config = NULL;
    svc_options o = { 0 };
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (!strcmp(argv[i], "--once")) {
            o.once = true;
        } else if (!strcmp(argv[i], "--for") && i + 1 < argc) {
            char *end;
            o.max_seconds = strtod(argv[++i], &end);
            if (*end || !(o.max_seconds > 0)) {
                fprintf(stderr, "cpo serve: --for '%s' is not a number of seconds\n", argv[i]);
                return 2;
            }
        } else {
            fputs(SERVE_USAGE, stderr);
            return 2;
        }
    }
    if (!config) {
        fputs(SERVE_USAGE, stderr);
        return 2;
    }
    char tools[PATH_MAX];
    tools_dir(tools, sizeof tools);
    return svc_serve(config, tools, &o);
}

int cmd_status(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--config")) {
        fputs(STATUS_USAGE, stderr);
        return 2;
    }
    char tools[PATH_MAX], err[1024];
    tools_dir(tools, sizeof tools);
    svc_config c;
    if (!svc_config_load(argv[2], tools, &c, err, sizeof err)) {
        fprintf(stderr, "cpo status: %s\n", err);
        return 1;
    }
    int rc = svc_status(&c, stdout);
    svc_config_free(&c);
    return rc;
}
