/*
 * limits: asks for 64 MB of memory a megabyte at a time (each touched),
 * then starts 32 children that wait on a pipe.  Run normally both fit, and
 * it prints so.  tests/integration/axp_guest.sh runs it under
 * `axp run --mem-limit 32`, where malloc must fail with ENOMEM, and under
 * `--max-threads 8`, where fork must fail with EAGAIN: the guest's own
 * errors, and axp carries on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int mb = 0;
    for (; mb < 64; mb++) {
        char *p = malloc(1 << 20);
        if (!p)
            break;
        memset(p, 1, 1 << 20);
    }
    printf("memory: %s\n", mb == 64 ? "64 MB" : errno == ENOMEM ? "ENOMEM" : "failed otherwise");
    int fds[2];
    if (pipe(fds))
        return 1;
    int n = 0, err = 0;
    for (; n < 32; n++) {
        pid_t c = fork();
        if (c < 0) {
            err = errno;
            break;
        }
        if (c == 0) {
            char b;
            close(fds[1]);
            (void)!read(fds[0], &b, 1);
            _exit(0);
        }
    }
    close(fds[1]);
    while (wait(NULL) > 0)
        ;
    printf("processes: %s\n", n == 32 ? "32 children" : err == EAGAIN ? "EAGAIN"
                                : err == ENOMEM ? "ENOMEM" : "failed otherwise");
    return 0;
}
