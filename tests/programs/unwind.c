/* unwind: walks its own stack with libgcc's unwinder, the machinery C++
 * exceptions and glibc's backtrace() rely on (.eh_frame, .eh_frame_hdr).
 *
 *   main -> level1 -> level2 [-> level2] -(function pointer)-> level3
 *        -> uwalk (_Unwind_Backtrace) or bwalk (glibc's backtrace)
 *
 * Each walk prints the frames from the walker's up to main's, named without
 * depending on where the code is: every function records the address it
 * will return to in its caller (__builtin_return_address), which is the IP
 * the unwinder reports for the caller's frame; the walker's own frame is
 * named by _Unwind_FindEnclosingFunction (the start of its FDE), compared
 * with the walkers' addresses.  Four walks: both walkers, from two and from
 * three levels of level2.  Exit status 0.
 */
#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include <unwind.h>

#define NOIPA __attribute__((noipa))

/* The frames entered so far, outermost first: who called, and where to. */
static struct { void *ip; const char *name; } chain[16];
static int depth;

static void enter(void *ip, const char *caller)
{
    chain[depth].ip = ip;
    chain[depth++].name = caller;
}

NOIPA static int uwalk(void);
NOIPA static int bwalk(void);

static const char *name_of(void *ip, int first)
{
    for (int i = depth - 1; i >= 0; i--)
        if (chain[i].ip == ip)
            return chain[i].name;
    if (first) {
        void *fn = _Unwind_FindEnclosingFunction(ip);
        if (fn == (void *)uwalk)
            return "uwalk";
        if (fn == (void *)bwalk)
            return "bwalk";
    }
    return "?";
}

struct names { int n, done; char s[200]; };

/* Adds one frame; says whether it was main's. */
static int add(struct names *w, void *ip)
{
    const char *name = name_of(ip, w->n == 0);
    size_t len = strlen(w->s);
    snprintf(w->s + len, sizeof w->s - len, " %s", name);
    w->n++;
    return w->done = strcmp(name, "main") == 0;
}

static _Unwind_Reason_Code frame(struct _Unwind_Context *ctx, void *arg)
{
    struct names *w = arg;
    if (!w->done)
        add(w, (void *)_Unwind_GetIP(ctx));
    return _URC_NO_REASON;
}

static void show(const char *how, struct names *w)
{
    printf("%s: %d frames up to main:%s%s\n", how, w->n, w->s,
           w->done ? "" : " (main not reached)");
}

NOIPA static void uwalk_report(struct names *w, _Unwind_Reason_Code rc)
{
    show("_Unwind_Backtrace", w);
    printf("  walk ended with %s\n",
           rc == _URC_END_OF_STACK ? "_URC_END_OF_STACK" : "another code");
}

NOIPA static int bwalk_report(void **ips, int n)
{
    struct names w = { 0 };
    for (int i = 0; i < n && !add(&w, ips[i]); i++)
        ;
    show("backtrace", &w);
    return w.n;
}

/* Single blocks, so that their call is in the piece their FDE starts. */
NOIPA static int uwalk(void)
{
    struct names w = { 0 };
    enter(__builtin_return_address(0), "level3");
    uwalk_report(&w, _Unwind_Backtrace(frame, &w));
    depth--;
    return w.n;
}

NOIPA static int bwalk(void)
{
    void *ips[64];
    enter(__builtin_return_address(0), "level3");
    int n = bwalk_report(ips, backtrace(ips, 64));
    depth--;
    return n;
}

NOIPA static int level3(int (*walk)(void))
{
    enter(__builtin_return_address(0), "level2");
    int r = walk();
    depth--;
    return r + 1;
}

/* Reached through a pointer, so the call from level2 is indirect. */
static int (*volatile level3p)(int (*)(void)) = level3;

NOIPA static int level2(int more, int (*walk)(void))
{
    enter(__builtin_return_address(0), more < 0 ? "level2" : "level1");
    int r = more > 0 ? level2(-1, walk) : level3p(walk);
    depth--;
    return r + 1;
}

NOIPA static int level1(int twice, int (*walk)(void))
{
    enter(__builtin_return_address(0), "main");
    int r = level2(twice, walk);
    depth--;
    return r + 1;
}

int main(void)
{
    int total = 0;
    total += level1(0, uwalk);
    total += level1(1, uwalk);
    total += level1(0, bwalk);
    total += level1(1, bwalk);
    printf("frames in all: %d\n", total);
    return 0;
}
