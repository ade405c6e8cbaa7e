/*
 * escape: tries to read files outside its working directory in every way
 * a path can be spelled: absolute, "..", "/.." at the root, through
 * symbolic links (absolute and relative, to a file and to a directory),
 * through /proc (the host's root and cwd links, another process), through
 * a directory descriptor and *at() calls, and by renaming and linking out.
 * Each line says "open" when the spelling reached a file with the secret
 * tag argv[1] names, "closed" otherwise.  Run normally every spelling is
 * open; tests/integration/axp_guest.sh runs it under `axp run --sandbox`,
 * where every one must be closed.  Without arguments it only checks that
 * it runs (the tests/programs convention).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tag;

static const char *look(int fd)
{
    char b[256];
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return "closed";
    b[n] = 0;
    return strstr(b, tag) ? "open" : "closed";
}

static void try(const char *what, const char *path)
{
    printf("%-28s %s\n", what, look(open(path, O_RDONLY)));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        printf("escape: needs SECRET-FILE TAG WORKDIR\n");
        return 0;
    }
    const char *secret = argv[1];     /* absolute host path of a file outside */
    tag = argv[2];
    char b[4096];
    try("absolute", secret);
    snprintf(b, sizeof b, "/../../..%s", secret);
    try("dotdot at root", b);
    snprintf(b, sizeof b, "../../../../../../../..%s", secret);
    try("dotdot relative", b);
    (void)!symlink(secret, "abs-link");
    try("absolute symlink", "abs-link");
    snprintf(b, sizeof b, "../../../../../../../..%s", secret);
    (void)!symlink(b, "rel-link");
    try("relative symlink", "rel-link");
    (void)!symlink("/", "root-link");
    snprintf(b, sizeof b, "root-link%s", secret);
    try("symlink to /", b);
    (void)!symlink("..", "up-link");
    snprintf(b, sizeof b, "up-link/up-link/../../../../../../..%s", secret);
    try("symlink chain up", b);
    snprintf(b, sizeof b, "/proc/1/root%s", secret);
    try("/proc/1/root", b);
    snprintf(b, sizeof b, "/proc/self/root%s", secret);
    try("/proc/self/root", b);
    snprintf(b, sizeof b, "/proc/self/cwd/../../../../../../..%s", secret);
    try("/proc/self/cwd", b);
    int d = open("/", O_RDONLY | O_DIRECTORY);
    printf("%-28s %s\n", "openat on /", look(openat(d, secret + 1, O_RDONLY)));
    int dot = open(".", O_RDONLY | O_DIRECTORY);
    snprintf(b, sizeof b, "../../../../../../../..%s", secret);
    printf("%-28s %s\n", "openat dotdot", look(openat(dot, b, O_RDONLY)));
    printf("%-28s %s\n", "link out", link(secret, "hard") == 0 ? look(open("hard", O_RDONLY)) : "closed");
    struct stat st;
    printf("%-28s %s\n", "stat", stat(secret, &st) == 0 ? "open" : "closed");
    printf("%-28s %s\n", "stat through link", stat("abs-link", &st) == 0 ? "open" : "closed");
    (void)!chdir("/");
    snprintf(b, sizeof b, "..%s", secret);
    try("chdir / then relative", b);
    (void)!chdir(argv[3] ? argv[3] : ".");
    printf("%-28s %s\n", "rename in", rename(secret, "moved") == 0 ? "open" : "closed");
    return 0;
}
