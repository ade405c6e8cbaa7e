/*
 * procself: a guest that pokes at its own /proc as a hostile program would.
 * Opens, reads and reads the link of every /proc/self entry Linux has (and
 * the thread-self, PID and /dev/fd spellings, and a symbolic link to
 * /proc/self/mem), tries to write through /proc/self/mem into a buffer of
 * its own, resolves "/.." at the root, and re-executes itself through
 * /proc/self/exe.  What it reads differs between systems, so it prints only
 * what holds on every one: the machine running it must stay alive, and the
 * checks below must pass.  (qemu-alpha without binfmt_misc cannot exec
 * /proc/self/exe: it prints "child status 99" there.)
 *
 * `procself hostile` goes further, for tests/integration/axp_guest.sh
 * only: it zeroes every writable region its /proc/self/maps lists through
 * /proc/self/mem, which kills any process that really owns both files; under
 * axp the guest must only hurt itself, and axp must not die of it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const entries[] = {
    "attr/current", "auxv", "cgroup", "clear_refs", "cmdline", "comm", "coredump_filter",
    "cpuset", "cwd", "environ", "exe", "fd", "fd/0", "fd/1", "fd/2", "fd/3", "fd/9",
    "fdinfo/0", "io", "limits", "loginuid", "map_files", "maps", "mem", "mountinfo",
    "mounts", "mountstats", "net/dev", "ns/mnt", "oom_adj", "oom_score", "oom_score_adj",
    "pagemap", "personality", "root", "sched", "schedstat", "sessionid", "setgroups",
    "smaps", "smaps_rollup", "stack", "stat", "statm", "status", "syscall", "task",
    "timerslack_ns", "uid_map", "gid_map", "wchan",
};

static char sink[65536];

static void poke(const char *path)
{
    char lk[256];
    (void)!readlink(path, lk, sizeof lk);
    if (strstr(path, "fd/") || strstr(path, "/dev/std"))
        return;                 /* reading our own stdout pipe would block */
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        for (int i = 0; i < 16 && read(fd, sink, sizeof sink) > 0; i++)
            ;
        close(fd);
    }
    DIR *d = opendir(path);
    if (d) {
        while (readdir(d))
            ;
        closedir(d);
    }
    /* writes: junk into every entry that accepts it, except mem, which
     * gets its own buffer below (natively anything else would hurt us),
     * and the program's own file */
    if (!strstr(path, "mem") && !strstr(path, "clear_refs") && !strstr(path, "fd/") &&
        !strstr(path, "exe")) {
        fd = open(path, O_WRONLY);
        if (fd >= 0) {
            (void)!write(fd, "0\n", 2);
            close(fd);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "again")) {
        printf("exec /proc/self/exe: ok\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "hostile")) {
        static char zero[65536];
        FILE *m = fopen("/proc/self/smaps", "r");
        int mem = open("/proc/self/mem", O_RDWR);
        char line[512];
        while (m && mem >= 0 && fgets(line, sizeof line, m)) {
            unsigned long lo, hi;
            char perm[8];
            if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && perm[1] == 'w')
                for (unsigned long a = lo; a < hi && a - lo < (1ul << 24); a += sizeof zero)
                    (void)!pwrite(mem, zero, sizeof zero, (off_t)a);
        }
        printf("hostile: survived\n");
        return 0;
    }
    char buf[300];
    const char *bases[] = { "/proc/self", "/proc/thread-self", NULL };
    char pidbase[64];
    snprintf(pidbase, sizeof pidbase, "/proc/%d", (int)getpid());
    bases[2] = pidbase;
    for (int b = 0; b < 3; b++)
        for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
            snprintf(buf, sizeof buf, "%s/%s", bases[b], entries[i]);
            poke(buf);
        }
    poke("/dev/fd/0");
    poke("/dev/stdin");
    poke("/proc/self/task/self/mem");

    /* /proc/self/mem, directly and through a link: only our own buffer */
    static char target[16] = "untouched";
    (void)!symlink("/proc/self/mem", "memlink");
    const char *mems[] = { "/proc/self/mem", "memlink" };
    for (int k = 0; k < 2; k++) {
        int fd = open(mems[k], O_RDWR);
        if (fd >= 0) {
            (void)!pwrite(fd, "untouched", 9, (off_t)(unsigned long)target);
            close(fd);
        }
    }
    unlink("memlink");
    printf("buffer: %s\n", target);

    /* "/.." at the root is the root */
    char cwd[256];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    FILE *f = fopen("here", "w");
    if (!f)
        return 1;
    fputs("x", f);
    fclose(f);
    snprintf(buf, sizeof buf, "/..%s/here", cwd);
    printf("/..%s: %s\n", "/here", access(buf, F_OK) == 0 ? "ok" : "missing");
    /* a descriptor reopened through /proc/self/fd */
    int hf = open("here", O_RDONLY);
    snprintf(buf, sizeof buf, "/proc/self/fd/%d", hf);
    int rf = open(buf, O_RDONLY);
    char ch = 0;
    printf("fd reopen: %s\n", rf >= 0 && read(rf, &ch, 1) == 1 && ch == 'x' ? "ok" : "failed");
    close(rf);
    close(hf);
    unlink("here");

    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execl("/proc/self/exe", argv[0], "again", (char *)NULL);
        _exit(99);
    }
    int st;
    waitpid(c, &st, 0);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    printf("procself: done\n");
    return 0;
}
