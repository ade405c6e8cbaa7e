/*
 * rewriter/runtime/rt.c: the instrumented image's profile writer, run at
 * exit_group and execve.  Freestanding: raw system calls, no globals, no
 * constants in memory (everything it prints comes from the region the
 * rewriter filled in), so the blob needs no relocation.
 */
#include "rt.h"

typedef unsigned long u64;

#define F(r, off) (*(u64 *)((r) + (off)))

static long sys3(long n, long a, long b, long c)
{
    register long v0 __asm__("$0") = n;
    register long a0 __asm__("$16") = a;
    register long a1 __asm__("$17") = b;
    register long a2 __asm__("$18") = c;
    register long a3 __asm__("$19");
    __asm__ volatile("callsys"
                     : "+r"(v0), "+r"(a0), "+r"(a1), "+r"(a2), "=r"(a3)
                     :
                     : "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$20", "$21", "$22",
                       "$23", "$24", "$25", "$27", "$28", "memory");
    return a3 ? -1 : v0;
}

#define SYS_WRITE 4
#define SYS_CLOSE 6
#define SYS_GETXPID 20
#define SYS_OPEN 45
#define O_WRONLY 1
#define O_CREAT 01000
#define O_EXCL 04000

typedef struct out {
    long fd;
    u64 n;
    char b[4096];
} out;

static void flush(out *o)
{
    u64 done = 0;
    while (done < o->n) {
        long w = sys3(SYS_WRITE, o->fd, (long)(o->b + done), (long)(o->n - done));
        if (w <= 0)
            break;
        done += (u64)w;
    }
    o->n = 0;
}

static void put(out *o, const char *s, u64 len)
{
    for (u64 i = 0; i < len; i++) {
        if (o->n == sizeof o->b)
            flush(o);
        o->b[o->n++] = s[i];
    }
}

static void put_ch(out *o, char c)
{
    put(o, &c, 1);
}

/* Division by 10 bit by bit: gcc would multiply by a constant it keeps in
 * .rodata, which the blob cannot have. */
static u64 div10(u64 v, u64 *rem)
{
    u64 q = 0, r = 0;
    for (int i = 63; i >= 0; i--) {
        r = (r << 1) | ((v >> i) & 1);
        if (r >= 10) {
            r -= 10;
            q |= 1ul << i;
        }
    }
    *rem = r;
    return q;
}

static u64 fmt_u64(char *d, u64 v)
{
    char t[24];
    u64 n = 0, k = 0, r;
    do {
        v = div10(v, &r);
        t[n++] = (char)('0' + r);
    } while (v);
    while (n)
        d[k++] = t[--n];
    return k;
}

static void put_u64(out *o, u64 v)
{
    char d[24];
    put(o, d, fmt_u64(d, v));
}

/* The value of the variable the region names, or 0. */
static const char *env_value(char *r)
{
    char **e = (char **)F(r, RT_ENVP);
    const char *name = r + F(r, RT_ENVNAME);
    u64 len = F(r, RT_ENVLEN);
    for (; e && *e; e++) {
        u64 i = 0;
        while (i < len && (*e)[i] == name[i])
            i++;
        if (i == len)
            return *e + len;
    }
    return 0;
}

/* "cpo: cannot write the path profile NAME" on stderr. */
static void complain(char *r, const char *path, u64 n)
{
    out o;
    o.fd = 2;
    o.n = 0;
    put(&o, r + F(r, RT_ERRMSG), F(r, RT_ERRLEN));
    put(&o, path, n);
    put_ch(&o, '\n');
    flush(&o);
}

void rt_write(char *r)
{
    const char *path = env_value(r);
    if (!path || !*path)
        return;
    if (F(r, RT_THREADED)) {
        sys3(SYS_WRITE, 2, (long)(r + F(r, RT_MSG)), (long)F(r, RT_MSGLEN));
        return;
    }
    u64 pid = (u64)sys3(SYS_GETXPID, 0, 0, 0);
    if (pid != F(r, RT_PID) && F(r, RT_VFORK))
        return;     /* a vfork child: the counts are its parent's */
    /* No file is ever overwritten: the first write of a run takes PATH,
     * the others PATH.PID, then PATH.PID.2, PATH.PID.3... (a process writes
     * twice when an execve fails; an exec'd image keeps the pid). */
    char fn[1024];
    u64 n = 0;
    while (path[n] && n < sizeof fn - 48) {
        fn[n] = path[n];
        n++;
    }
    fn[n] = 0;
    if (path[n]) {      /* too long: never a file of another name */
        complain(r, path, n);
        return;
    }
    out o;
    o.n = 0;
    o.fd = sys3(SYS_OPEN, (long)fn, O_WRONLY | O_CREAT | O_EXCL, 0644);
    for (u64 k = 1; o.fd < 0 && k < 1000; k++) {
        u64 m = n;
        fn[m++] = '.';
        m += fmt_u64(fn + m, pid);
        if (k > 1) {
            fn[m++] = '.';
            m += fmt_u64(fn + m, k);
        }
        fn[m] = 0;
        o.fd = sys3(SYS_OPEN, (long)fn, O_WRONLY | O_CREAT | O_EXCL, 0644);
    }
    if (o.fd < 0) {
        complain(r, path, n);
        return;
    }
    put(&o, r + F(r, RT_HEAD), F(r, RT_HEADLEN));
    char *pt = r + F(r, RT_PROCS);
    for (u64 i = 0; i < F(r, RT_NPROCS); i++, pt += RT_PSIZE) {
        u64 *c = (u64 *)(r + F(pt, RT_P_COUNTS));
        u64 np = F(pt, RT_P_NPATHS);
        int shown = 0;
        for (u64 k = 0; k < np; k++) {
            if (!c[2 * k])
                continue;
            if (!shown)
                put(&o, r + F(pt, RT_P_LINE), F(pt, RT_P_LINELEN));
            shown = 1;
            put_ch(&o, 'p');
            put_ch(&o, 'a');
            put_ch(&o, 't');
            put_ch(&o, 'h');
            put_ch(&o, ' ');
            put_u64(&o, k);
            put_ch(&o, ' ');
            put_u64(&o, c[2 * k]);
            put_ch(&o, ' ');
            put_u64(&o, c[2 * k + 1]);
            put_ch(&o, '\n');
        }
    }
    /* The tail ("outside ...", "end") lies between the head and the
     * variable's name. */
    put(&o, r + F(r, RT_HEAD) + F(r, RT_HEADLEN), F(r, RT_ENVNAME) - F(r, RT_HEAD) - F(r, RT_HEADLEN));
    flush(&o);
    sys3(SYS_CLOSE, o.fd, 0, 0);
    /* What is written is not counted again: an execve that fails, then an
     * exit, writes only what ran in between. */
    u64 *c = (u64 *)(r + F(r, RT_COUNTERS));
    for (u64 k = 0; k < F(r, RT_COUNTLEN) / 8; k++)
        c[k] = 0;
}
