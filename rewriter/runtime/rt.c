/*
 * rewriter/runtime/rt.c: the instrumented image's start-up, the calling
 * context tree's slow lookup, and the profile writer, run at exit_group
 * and execve.  Freestanding: raw system calls, no globals, no
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

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long v0 __asm__("$0") = n;
    register long a0 __asm__("$16") = a;
    register long a1 __asm__("$17") = b;
    register long a2 __asm__("$18") = c;
    register long a3 __asm__("$19") = d;
    register long a4 __asm__("$20") = e;
    register long a5 __asm__("$21") = f;
    __asm__ volatile("callsys"
                     : "+r"(v0), "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5)
                     :
                     : "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$22", "$23", "$24", "$25",
                       "$27", "$28", "memory");
    return a3 ? -1 : v0;
}

#define SYS_WRITE 4
#define SYS_CLOSE 6
#define SYS_GETXPID 20
#define SYS_OPEN 45
#define SYS_MPROTECT 74
#define SYS_MMAP 71
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

static u64 slot_size(char *r)
{
    return (F(r, RT_MODE) & RT_M_CCT) ? RT_CSLOT : RT_SLOT;
}

static u64 rpcc(void)
{
    u64 c;
    __asm__ volatile("rpcc %0" : "=r"(c));
    return c & 0xffffffffu;
}

u64 rt_tblock(char *r, u64 id);

/* The runtime's lock: threads change the tree (and hashed tables) one at
 * a time.  The inserted code only reads the tree's links, which are
 * written after what they point to (mb). */
static void lock(char *r)
{
    if (!F(r, RT_TCAP))
        return;             /* one thread only */
    u64 *p = (u64 *)(r + RT_LOCK), t, ok;
    do {
        __asm__ volatile("ldq_l %0, 0(%2)\n"
                         "lda %1, 1($31)\n"
                         "bne %0, 1f\n"
                         "stq_c %1, 0(%2)\n"
                         "br 2f\n"
                         "1: mov $31, %1\n"
                         "2:\n"
                         : "=&r"(t), "=&r"(ok) : "r"(p) : "memory");
    } while (!ok);
    __asm__ volatile("mb" ::: "memory");
}

static void unlock(char *r)
{
    if (!F(r, RT_TCAP))
        return;
    __asm__ volatile("mb" ::: "memory");
    F(r, RT_LOCK) = 0;
}

/* The running thread's unique value (its thread pointer). */
static u64 rduniq(void)
{
    register u64 v0 __asm__("$0");
    __asm__ volatile("call_pal 0x9e" : "=r"(v0));
    return v0;
}

/* At start-up: the shadow stack's first slot is below every frame; with
 * a calling context tree, it and the slack slots below it (reached only
 * by unbalanced pops) are in the root's context, and the root has a
 * child slot for every site index any procedure has.  The cycle counter
 * starts being read here. */
void rt_start(char *r)
{
    char *first = (char *)F(r, RT_SSP);
    F(first, RT_S_SP) = ~0ul >> 1;
    F(r, RT_TB) = (u64)r;
    F(r, RT_LAST) = rpcc();
    if (!(F(r, RT_MODE) & RT_M_CCT))
        return;
    char *root = r + F(r, RT_ARENA);
    u64 most = 0;
    char *pt = r + F(r, RT_PROCS);
    for (u64 i = 0; i < F(r, RT_NPROCS); i++, pt += RT_PSIZE)
        if (F(pt, RT_P_NSITES) > most)
            most = F(pt, RT_P_NSITES);
    F(root, RT_N_NSL) = most + 1;
    F(r, RT_AFREE) = F(r, RT_ARENA) + RT_N_CHILD + 8 * (most + 1);
    F(r, RT_NNODES) = 1;
    for (u64 k = 0; k <= RT_SLACK; k++)
        F(first - k * RT_CSLOT, RT_S_NODE) = (u64)root;
}

/* A new record of size bytes in the arena, or 0 when no memory is left.
 * The arena starts in the region and grows by mapped chunks; the end of
 * each keeps room for a link record to the next (RT_AEND is short of the
 * chunk's end by that much).  Offsets from the region wrap around where a
 * chunk lies below it. */
static char *arena_take(char *r, u64 size)
{
    if (F(r, RT_AFREE) + size > F(r, RT_AEND)) {
        u64 len = size + RT_LINK_SIZE > RT_CHUNK ? size + RT_LINK_SIZE : RT_CHUNK;
        len = (len + 8191) & ~8191ul;
        long m = sys6(SYS_MMAP, 0, (long)len, 3 /* PROT_READ|WRITE */, 0x12 /* PRIVATE|ANON */, -1, 0);
        if (m == -1) {
            F(r, RT_CUT) = 1;
            return 0;
        }
        char *link = r + F(r, RT_AFREE);
        F(link, RT_N_ID) = RT_LINK_TAG;
        F(link, RT_N_PARENT) = (u64)m;
        F(r, RT_AFREE) = (u64)m - (u64)r;
        F(r, RT_AEND) = F(r, RT_AFREE) + len - RT_LINK_SIZE;
    }
    char *p = r + F(r, RT_AFREE);
    F(r, RT_AFREE) += size;
    return p;
}

/* Procedure id (its index in the table + 1) is entered from the running
 * activation's slot, which the snippet found (past slots a longjmp left).
 * Its context: the child of the slot's node for the slot's call site,
 * made when new, or the ancestor running the same procedure (recursion,
 * the back edge counted).  Then the activation's slot is pushed.  The
 * snippet's own lookup handles a first record at the site that is the
 * procedure's node; everything else comes here. */
static char *context(char *r, char *parent, u64 k, u64 id);

void rt_enter(char *r, u64 id, u64 sp)
{
    char *tb = F(r, RT_TB) ? r : (char *)rt_tblock(r, 0);
    char *slot = (char *)F(tb, RT_SSP);
    lock(r);
    char *to = context(r, (char *)F(slot, RT_S_NODE), F(slot, RT_S_SITE), id);
    unlock(r);
    slot += RT_CSLOT;
    F(slot, RT_S_NODE) = (u64)to;
    F(slot, RT_S_SITE) = 0;
    F(slot, RT_S_SP) = sp;
    F(tb, RT_SSP) = (u64)slot;
}

/* The context procedure id enters from site k of parent: a child of
 * parent, made when new, or the ancestor running the same procedure
 * (recursion, the back edge counted).  Its calls grow. */
static char *context(char *r, char *parent, u64 k, u64 id)
{
    if (k >= F(parent, RT_N_NSL))
        k = 0;
    char **head = (char **)(parent + RT_N_CHILD + 8 * k), *to = 0, *rec = *head, **link = head;
    for (; rec; link = (char **)(rec + RT_N_NEXT), rec = *link) {
        if (F(rec, RT_N_ID) == id) {
            to = rec;
            break;
        }
        if (F(rec, RT_N_ID) == ((1ul << 63) | id)) {
            F(rec, RT_BK_COUNT)++;
            to = (char *)F(rec, RT_BK_TO);
            break;
        }
    }
    if (rec && link != head) {      /* to the front: the snippet looks there */
        *link = (char *)F(rec, RT_N_NEXT);
        F(rec, RT_N_NEXT) = (u64)*head;
        *head = rec;
    }
    if (!to) {
        for (char *a = parent; a && F(a, RT_N_ID); a = (char *)F(a, RT_N_PARENT))
            if (F(a, RT_N_ID) == id) {
                to = a;
                break;
            }
        char *pt = r + F(r, RT_PROCS) + RT_PSIZE * (id - 1);
        u64 nsl = F(pt, RT_P_NSITES) + 1;
        rec = arena_take(r, to ? RT_BACK_SIZE : RT_N_CHILD + 8 * nsl);
        if (rec && to) {
            F(rec, RT_N_ID) = (1ul << 63) | id;
            F(rec, RT_BK_FROM) = (u64)parent;
            F(rec, RT_N_SITE) = k;
            F(rec, RT_BK_COUNT) = 1;
            F(rec, RT_BK_TO) = (u64)to;
        } else if (rec) {
            F(rec, RT_N_ID) = id;
            F(rec, RT_N_PARENT) = (u64)parent;
            F(rec, RT_N_SITE) = k;
            F(rec, RT_N_NSL) = nsl;
            F(rec, RT_N_INDEX) = F(r, RT_NNODES)++;
            to = rec;
        } else {
            to = parent;    /* the arena is full: the tree is cut (said at exit) */
        }
        if (rec) {
            F(rec, RT_N_NEXT) = (u64)*head;
            __asm__ volatile("mb" ::: "memory");
            *head = rec;
        }
    }
    F(to, RT_N_CALLS)++;
    return to;
}

/* The record after rec in the order they were made (a parent before its
 * children), past links to the arena's next chunk; the walk ends at
 * r + RT_AFREE. */
static char *arena_next(char *r, char *rec)
{
    (void)r;
    if (F(rec, RT_N_ID) >> 63)
        rec += RT_BACK_SIZE;
    else
        rec += RT_N_CHILD + 8 * F(rec, RT_N_NSL);
    while (rec != r + F(r, RT_AFREE) && F(rec, RT_N_ID) == RT_LINK_TAG)
        rec = (char *)F(rec, RT_N_PARENT);
    return rec;
}

/* The tree's counts to zero; its shape stays. */
static void cct_clear(char *r)
{
    if (!(F(r, RT_MODE) & RT_M_CCT))
        return;
    for (char *rec = r + F(r, RT_ARENA); rec != r + F(r, RT_AFREE); rec = arena_next(r, rec)) {
        F(rec, RT_N_CALLS) = 0;     /* a back edge's count is the same word */
        if (!(F(rec, RT_N_ID) >> 63))
            F(rec, RT_N_CYCLES) = 0;
    }
}

/* A forked child counts from zero: its counts are disjoint from its
 * parent's. */
void rt_child(char *r)
{
    F(r, RT_VFORK) = 0;
    u64 *c = (u64 *)(r + F(r, RT_COUNTERS));
    for (u64 k = 0; k < F(r, RT_COUNTLEN) / 8; k++)
        c[k] = 0;
    F(r, RT_HLOST) = 0;
    cct_clear(r);
}

/* Path `path` of procedure i (in the table) ran once, for `cycles`: its
 * entry in the procedure's hashed table, found by linear probing, grows.
 * A path out of range is not counted (as the inline bound check does); a
 * full table loses the run, counted in RT_HLOST and said at exit. */
void rt_count(char *r, u64 path, u64 cycles, u64 i)
{
    char *pt = r + F(r, RT_PROCS) + RT_PSIZE * i;
    u64 cap = F(pt, RT_P_HCAP);
    if (path >= F(pt, RT_P_NPATHS) || !cap)
        return;
    u64 *t = (u64 *)(r + F(pt, RT_P_COUNTS));
    u64 h = path ^ (path >> 13) ^ (path >> 29) ^ (path >> 47);
    lock(r);
    for (u64 n = 0; n < cap; n++, h++) {
        u64 *e = t + 3 * (h & (cap - 1));
        if (e[0] && e[0] != path + 1)
            continue;
        e[0] = path + 1;
        e[1]++;
        e[2] += cycles;
        unlock(r);
        return;
    }
    F(r, RT_HLOST)++;
    unlock(r);
}

/* Threads are about to start: from now on every thread, this one
 * included, finds its block in the table by its unique value.  This
 * thread keeps the region's (its shadow stack goes on).  A program with
 * no pthread_create or thrd_create was instrumented without the lookup:
 * its threads would share one block, and no profile is written. */
void rt_threaded(char *r)
{
    F(r, RT_THREADED) = 1;
    if (!F(r, RT_TCAP)) {   /* a thread the code was not made for: */
        F(r, RT_TMANY) = 1; /* the threads would share one shadow stack */
        return;
    }
    if (!F(r, RT_TB))
        return;
    u64 *t = (u64 *)(r + F(r, RT_TTAB));
    t[1] = (u64)r;
    t[0] = rduniq();
    F(r, RT_NT) = 1;
    __asm__ volatile("mb" ::: "memory");
    F(r, RT_TB) = 0;
}

/* An entry of the table for a new thread: its index, or RT_NTHREADS when
 * the table is full.  Two threads may claim at once (load-locked, store
 * conditional). */
static u64 claim(char *r)
{
    u64 *p = (u64 *)(r + RT_NT), n, ok;
    do {
        __asm__ volatile("1: ldq_l %0, 0(%2)\n"
                         "   addq %0, 1, %1\n"
                         "   stq_c %1, 0(%2)\n"
                         : "=&r"(n), "=&r"(ok) : "r"(p) : "memory");
    } while (!ok);
    return n < RT_NTHREADS ? n : RT_NTHREADS;
}

/* A new thread's block: mapped, its shadow stack's first slot below
 * every frame and, with a tree, in the context of the procedure its
 * first counted code is in (id; 0: the root's), as axp's exact tree
 * starts a thread's first frame under the root. */
static char *new_block(char *r, u64 id)
{
    u64 slot = slot_size(r), size = 8192 + slot * (RT_SLACK + RT_TSLOTS) + 8192;
    size = (size + 8191) & ~8191ul;
    long m = sys6(SYS_MMAP, 0, (long)size, 3 /* PROT_READ|WRITE */, 0x12 /* PRIVATE|ANON */, -1, 0);
    if (m == -1)
        return 0;
    char *b = (char *)m;
    sys3(SYS_MPROTECT, m + (long)size - 8192, 8192, 0);
    char *first = b + 8192 + slot * RT_SLACK;
    F(b, RT_SSP) = (u64)first;
    F(first, RT_S_SP) = ~0ul >> 1;
    F(b, RT_LAST) = rpcc();
    if (F(r, RT_MODE) & RT_M_CCT) {
        char *root = r + F(r, RT_ARENA);
        for (u64 k = 1; k <= RT_SLACK; k++)
            F(first - k * slot, RT_S_NODE) = (u64)root;
        lock(r);
        F(first, RT_S_NODE) = (u64)(id ? context(r, root, 0, id) : root);
        unlock(r);
    }
    return b;
}

/* The running thread's block, made when it has none. */
u64 rt_tblock(char *r, u64 id)
{
    if (F(r, RT_TB))
        return F(r, RT_TB);
    u64 u = rduniq();
    u64 *t = (u64 *)(r + F(r, RT_TTAB));
    u64 n = *(volatile u64 *)(r + RT_NT);
    for (u64 i = 0; i < n && i < RT_NTHREADS; i++)
        if (((volatile u64 *)t)[2 * i] == u)
            return t[2 * i + 1];
    u64 i = claim(r);
    char *b = i < RT_NTHREADS ? new_block(r, id) : 0;
    if (!b) {           /* no room: it shares the first thread's (said at exit) */
        F(r, RT_TMANY) = 1;
        return (u64)r;
    }
    t[2 * i + 1] = (u64)b;
    __asm__ volatile("mb" ::: "memory");
    t[2 * i] = u;
    return (u64)b;
}

/* A thread exits (its last system call, the hook's caller, runs no more
 * inserted code): its entry is freed, for its unique value may come
 * back with a new thread, which then gets a new block. */
void rt_thread_exit(char *r)
{
    if (F(r, RT_TB))
        return;
    u64 u = rduniq();
    u64 *t = (u64 *)(r + F(r, RT_TTAB));
    u64 n = *(volatile u64 *)(r + RT_NT);
    for (u64 i = 0; i < n && i < RT_NTHREADS; i++)
        if (t[2 * i] == u && (char *)t[2 * i + 1] != r)
            t[2 * i] = 0;
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

/* Words of the profile, a character at a time: a string would be a
 * constant in memory, which the blob cannot have. */
static void put_word(out *o, char a, char b, char c, char d)
{
    put_ch(o, a);
    put_ch(o, b);
    put_ch(o, c);
    put_ch(o, d);
    put_ch(o, ' ');
}

static void put_hex(out *o, u64 v)
{
    char d[18];
    u64 n = 0;
    d[n++] = '0';
    d[n++] = 'x';
    int i = 60;
    while (i > 0 && !((v >> i) & 15))
        i -= 4;
    for (; i >= 0; i -= 4) {
        u64 x = (v >> i) & 15;
        d[n++] = (char)(x < 10 ? '0' + x : 'a' + x - 10);
    }
    put(o, d, n);
}

/* Creates a file for this write: no file is ever overwritten.  The first
 * write of a run takes PATH (PATH.cct for the tree beside a path
 * profile), the others PATH.PID, then PATH.PID.2, PATH.PID.3... (a
 * process writes twice when an execve fails; an exec'd image keeps the
 * pid).  -1 when none can be made (said on stderr). */
static long open_out(char *r, const char *path, const char *suffix, u64 pid)
{
    char fn[1024];
    u64 n = 0;
    while (path[n] && n < sizeof fn - 48) {
        fn[n] = path[n];
        n++;
    }
    if (path[n]) {      /* too long: never a file of another name */
        complain(r, path, n);
        return -1;
    }
    for (u64 i = 0; suffix[i]; i++)
        fn[n++] = suffix[i];
    fn[n] = 0;
    long fd = sys3(SYS_OPEN, (long)fn, O_WRONLY | O_CREAT | O_EXCL, 0644);
    for (u64 k = 1; fd < 0 && k < 1000; k++) {
        u64 m = n;
        fn[m++] = '.';
        m += fmt_u64(fn + m, pid);
        if (k > 1) {
            fn[m++] = '.';
            m += fmt_u64(fn + m, k);
        }
        fn[m] = 0;
        fd = sys3(SYS_OPEN, (long)fn, O_WRONLY | O_CREAT | O_EXCL, 0644);
    }
    if (fd < 0)
        complain(r, fn, n);
    return fd;
}

static void write_paths(char *r, out *o)
{
    put(o, r + F(r, RT_HEAD), F(r, RT_HEADLEN));
    char *pt = r + F(r, RT_PROCS);
    for (u64 i = 0; i < F(r, RT_NPROCS); i++, pt += RT_PSIZE) {
        u64 *c = (u64 *)(r + F(pt, RT_P_COUNTS));
        u64 cap = F(pt, RT_P_HCAP);
        u64 n = cap ? cap : F(pt, RT_P_NPATHS), w = cap ? 3 : 2;
        int shown = 0;
        for (u64 k = 0; k < n; k++) {
            u64 *e = c + w * k + (cap ? 1 : 0);     /* count, cycles */
            if (!e[0])
                continue;
            if (!shown)
                put(o, r + F(pt, RT_P_LINE), F(pt, RT_P_LINELEN));
            shown = 1;
            put_word(o, 'p', 'a', 't', 'h');
            put_u64(o, cap ? c[w * k] - 1 : k);
            put_ch(o, ' ');
            put_u64(o, e[0]);
            put_ch(o, ' ');
            put_u64(o, e[1]);
            put_ch(o, '\n');
        }
    }
    /* The tail ("outside ...", "end") lies between the head and the
     * variable's name. */
    put(o, r + F(r, RT_HEAD) + F(r, RT_HEADLEN), F(r, RT_ENVNAME) - F(r, RT_HEAD) - F(r, RT_HEADLEN));
    if (F(r, RT_HLOST)) {
        out e;
        e.fd = 2;
        e.n = 0;
        put(&e, r + F(r, RT_LOSTMSG), F(r, RT_LOSTLEN));
        put_u64(&e, F(r, RT_HLOST));
        put_ch(&e, '\n');
        flush(&e);
    }
}

/* The link address of call site k of the procedure whose node is n. */
static u64 site_addr(char *r, char *n, u64 k)
{
    if (!F(n, RT_N_ID) || !k)
        return 0;
    char *pt = r + F(r, RT_PROCS) + RT_PSIZE * (F(n, RT_N_ID) - 1);
    if (k > F(pt, RT_P_NSITES))
        return 0;
    return ((u64 *)(r + F(pt, RT_P_SITES)))[k - 1];
}

/* The tree in the cpo-cct 1 format: nodes in the order they were made,
 * then the root's metrics, then the back edges. */
static void write_cct(char *r, out *o)
{
    put(o, r + F(r, RT_CHEAD), F(r, RT_CHEADLEN));
    char *root = r + F(r, RT_ARENA), *end = r + F(r, RT_AFREE);
    for (char *n = arena_next(r, root); n != end; n = arena_next(r, n)) {
        if (F(n, RT_N_ID) >> 63)
            continue;
        char *p = (char *)F(n, RT_N_PARENT);
        char *pt = r + F(r, RT_PROCS) + RT_PSIZE * (F(n, RT_N_ID) - 1);
        put_word(o, 'n', 'o', 'd', 'e');
        put_u64(o, F(n, RT_N_INDEX));
        put_ch(o, ' ');
        put_u64(o, F(p, RT_N_INDEX));
        put_ch(o, ' ');
        put_ch(o, '0');
        put_ch(o, ' ');
        put_hex(o, F(pt, RT_P_ADDR));
        put_ch(o, ' ');
        put_hex(o, site_addr(r, p, F(n, RT_N_SITE)));
        put_ch(o, ' ');
        put(o, r + F(pt, RT_P_NAME), F(pt, RT_P_NAMELEN));
        put_ch(o, ' ');
        put_u64(o, F(n, RT_N_CALLS));
        put_ch(o, ' ');
        put_u64(o, F(n, RT_N_CYCLES));
        put_ch(o, '\n');
    }
    put_word(o, 'r', 'o', 'o', 't');
    put_u64(o, F(root, RT_N_CALLS));
    put_ch(o, ' ');
    put_u64(o, F(root, RT_N_CYCLES));
    put_ch(o, '\n');
    for (char *b = root; b != end; b = arena_next(r, b)) {
        if (!(F(b, RT_N_ID) >> 63))
            continue;
        char *from = (char *)F(b, RT_BK_FROM);
        put_word(o, 'b', 'a', 'c', 'k');
        put_u64(o, F(from, RT_N_INDEX));
        put_ch(o, ' ');
        put_u64(o, F((char *)F(b, RT_BK_TO), RT_N_INDEX));
        put_ch(o, ' ');
        put_hex(o, site_addr(r, from, F(b, RT_N_SITE)));
        put_ch(o, ' ');
        put_u64(o, F(b, RT_BK_COUNT));
        put_ch(o, '\n');
    }
    put(o, r + F(r, RT_CTAIL), F(r, RT_CTAILLEN));
    if (F(r, RT_CUT))
        sys3(SYS_WRITE, 2, (long)(r + F(r, RT_CUTMSG)), (long)F(r, RT_CUTLEN));
}

void rt_write(char *r)
{
    const char *path = env_value(r);
    if (!path || !*path)
        return;
    if (F(r, RT_TMANY)) {
        sys3(SYS_WRITE, 2, (long)(r + F(r, RT_MSG)), (long)F(r, RT_MSGLEN));
        return;
    }
    u64 pid = (u64)sys3(SYS_GETXPID, 0, 0, 0);
    if (pid != F(r, RT_PID) && F(r, RT_VFORK))
        return;     /* a vfork child: the counts are its parent's */
    u64 mode = F(r, RT_MODE);
    for (int which = RT_M_PATHS; which <= RT_M_CCT; which <<= 1) {
        if (!(mode & which))
            continue;
        out o;
        o.n = 0;
        char sfx[5];
        sfx[0] = 0;
        if (which == RT_M_CCT && (mode & RT_M_PATHS)) {
            sfx[0] = '.', sfx[1] = 'c', sfx[2] = 'c', sfx[3] = 't', sfx[4] = 0;
        }
        o.fd = open_out(r, path, sfx, pid);
        if (o.fd < 0)
            continue;
        if (which == RT_M_PATHS)
            write_paths(r, &o);
        else
            write_cct(r, &o);
        flush(&o);
        sys3(SYS_CLOSE, o.fd, 0, 0);
    }
    /* What is written is not counted again: an execve that fails, then an
     * exit, writes only what ran in between. */
    u64 *c = (u64 *)(r + F(r, RT_COUNTERS));
    for (u64 k = 0; k < F(r, RT_COUNTLEN) / 8; k++)
        c[k] = 0;
    F(r, RT_HLOST) = 0;
    cct_clear(r);
}
