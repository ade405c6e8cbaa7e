/* forkexec: fork, exec, pipes and wait.
 *
 * Run as `forkexec` (argv[0] must be a path to this program: the children
 * re-execute it).  The parent
 *   1. creates two pipes, forks; the child connects them to its stdin and
 *      stdout and re-executes argv[0] as `forkexec child 3`.  The parent
 *      writes numbers into the child's stdin, reads the child's output from
 *      the pipe, and waits: exit status 3 expected;
 *   2. forks a child that kills itself with SIGTERM: WIFSIGNALED expected;
 *   3. forks a child that execs a path that does not exist: the exec fails
 *      with ENOENT and the child exits 127.
 * In child mode (`forkexec child N`) the program reads integers from stdin,
 * prints their count, sum and a few derived lines, and exits with status N.
 * Exit status 0 when every check passes, 1 otherwise.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_mode(int status)
{
    long x, n = 0, sum = 0, max = 0;
    while (scanf("%ld", &x) == 1) {
        n++;
        sum += x;
        if (x > max)
            max = x;
    }
    printf("child: read %ld numbers, sum %ld, max %ld\n", n, sum, max);
    for (long i = 1; i <= 3; i++)
        printf("child: line %ld of 3, %ld * %ld = %ld\n", i, i, sum, i * sum);
    return status;
}

static int failures;

static void expect(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok)
        failures++;
}

static void report_status(const char *who, int st)
{
    if (WIFEXITED(st))
        printf("%s: exited with status %d\n", who, WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        printf("%s: killed by signal %d (%s)\n", who, WTERMSIG(st),
               WTERMSIG(st) == SIGTERM ? "SIGTERM" : "other");
    else
        printf("%s: status %#x\n", who, st);
}

static void exec_child(const char *self)
{
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]); close(to_child[1]);
        close(from_child[0]); close(from_child[1]);
        execl(self, self, "child", "3", (char *)NULL);
        fprintf(stderr, "forkexec: exec %s: %s\n", self, strerror(errno));
        _exit(126);
    }
    close(to_child[0]);
    close(from_child[1]);

    /* If the exec failed the child is gone: get EPIPE, not a SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    FILE *w = fdopen(to_child[1], "w");
    for (int i = 1; i <= 100; i++)
        fprintf(w, "%d%c", i * i, i % 10 ? ' ' : '\n');
    fclose(w);                    /* EOF for the child */

    char buf[4096];
    size_t got = 0;
    ssize_t r;
    while ((r = read(from_child[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(from_child[0]);
    printf("parent: read %zu bytes from the child:\n%s", got, buf);

    int st;
    expect(waitpid(pid, &st, 0) == pid, "waitpid returned the child");
    report_status("exec child", st);
    expect(WIFEXITED(st) && WEXITSTATUS(st) == 3, "exec child exited with 3");
}

static void signal_child(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        kill(getpid(), SIGTERM);
        _exit(0);                 /* not reached */
    }
    int st;
    expect(waitpid(pid, &st, 0) == pid, "waitpid returned the child");
    report_status("signal child", st);
    expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "child killed by SIGTERM");
}

static void missing_child(void)
{
    int errpipe[2];
    if (pipe(errpipe) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(errpipe[0]);
        execl("/nonexistent/forkexec-missing", "missing", (char *)NULL);
        int e = errno;
        if (write(errpipe[1], &e, sizeof e) != (ssize_t)sizeof e)
            _exit(126);
        _exit(127);
    }
    close(errpipe[1]);
    int e = 0;
    ssize_t r = read(errpipe[0], &e, sizeof e);
    close(errpipe[0]);
    int st;
    expect(waitpid(pid, &st, 0) == pid, "waitpid returned the child");
    report_status("missing child", st);
    expect(r == (ssize_t)sizeof e && e == ENOENT, "exec of a missing file failed with ENOENT");
    expect(WIFEXITED(st) && WEXITSTATUS(st) == 127, "missing child exited with 127");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child_mode(atoi(argv[2]));
    if (argc != 1 || !strchr(argv[0], '/')) {
        fprintf(stderr, "usage: run forkexec by a path, with no arguments\n");
        return 2;
    }
    exec_child(argv[0]);
    signal_child();
    missing_child();
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
