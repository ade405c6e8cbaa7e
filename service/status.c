/*
 * service/status.c: cpo status, what the service is doing and has done,
 * read from its state directory without changing anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "service/internal.h"

#define HISTORY_SHOWN 12

/* "running (pid N)" when a serve holds the lock, else "not running". */
static void service_line(const svc_config *c, FILE *out)
{
    char *path = svc_join(c->state, "serve.pid");
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    char buf[32] = "";
    if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK) {
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = 0;
        buf[strcspn(buf, "\n")] = 0;
        fprintf(out, "cpo serve: running (pid %s), state in %s\n", buf, c->state);
    } else {
        fprintf(out, "cpo serve: not running, state in %s\n", c->state);
    }
    if (fd >= 0)
        close(fd);
    free(path);
}

int svc_status(const svc_config *c, FILE *out)
{
    service_line(c, out);
    int status = 0;
    for (size_t i = 0; i < c->nprograms; i++) {
        const svc_program *p = &c->programs[i];
        char *path = svc_format("%s/%s/state", c->state, p->name), err[512];
        svc_state st = { .stale = -1, .reference = -1 };
        if (!path || !svc_state_read(path, &st, err, sizeof err)) {
            fprintf(out, "\n%s: %s\n", p->name,
                    path && errno == ENOENT ? "not started yet" : (path ? err : "out of memory"));
            if (path && errno != ENOENT)
                status = 1;
            free(path);
            continue;
        }
        free(path);
        fprintf(out, "\n%s: version %u deployed at %s, %s", p->name, st.deployed, p->deploy, st.phase);
        if (!strcmp(st.phase, SVC_PHASE_JUDGING))
            fprintf(out, " against version %u", st.previous);
        if (!strcmp(st.phase, SVC_PHASE_DEPLOYING))
            fprintf(out, " version %u", st.target);
        svc_prog g = { .p = p, .dir = svc_join(c->state, p->name), .st = st };
        if (strcmp(st.phase, SVC_PHASE_DEPLOYING) && g.dir && !svc_deploy_holds(&g))
            fprintf(out, "\n  but %s no longer holds version %u: replaced or removed", p->deploy, st.deployed);
        free(g.dir);
        fprintf(out, "\n  base version %u (build-id %.16s), next version %u, profile used through %s\n",
                st.base, st.build, st.next, st.through[0] ? st.through : "-");
        if (st.stale >= 0)
            fprintf(out, "  carrying over the profile of version %d, an older build\n", st.stale);
        size_t from = st.nhistory > HISTORY_SHOWN ? st.nhistory - HISTORY_SHOWN : 0;
        for (size_t k = from; k < st.nhistory; k++)
            fprintf(out, "  %s\n", st.history[k]);
        svc_state_free(&st);
    }
    return status;
}
