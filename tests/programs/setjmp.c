/* setjmp: setjmp/longjmp across several frames.
 *
 *   - a longjmp from 5 calls deep back to main, with the value passed
 *     through and a volatile local that changed after setjmp,
 *   - longjmp(env, 0) makes setjmp return 1,
 *   - nested handlers: an inner jmp_buf catches, then re-throws outward,
 *   - a loop that longjmps 100 times to the same setjmp.
 * Exit status 3 (on purpose; setjmp.status).
 */
#include <setjmp.h>
#include <stdio.h>

#define NOIPA __attribute__((noipa))

static jmp_buf outer, inner;
static int trace[64], ntrace;

NOIPA static void deep(int level, int value)
{
    if (level < 0)
        return;
    trace[ntrace++] = level;
    if (level == 0)
        longjmp(outer, value);
    deep(level - 1, value);
    trace[ntrace++] = -1;        /* never reached */
}

NOIPA static void thrower(int v)
{
    longjmp(inner, v);
}

NOIPA static int catcher(int v)
{
    volatile int stage = 0;
    int r = setjmp(inner);
    if (r == 0) {
        stage = 1;
        thrower(v);
        return -1;               /* never reached */
    }
    printf("inner caught %d at stage %d\n", r, stage);
    if (r > 10)
        longjmp(outer, r * 2);   /* rethrow to the outer handler */
    return r;
}

int main(void)
{
    volatile int count = 0;
    int r;

    r = setjmp(outer);
    if (r == 0) {
        count = 10;
        deep(4, 42);
    }
    printf("outer: setjmp returned %d, count %d, path", r, count);
    for (int i = 0; i < ntrace; i++)
        printf(" %d", trace[i]);
    printf("\n");

    ntrace = 0;
    r = setjmp(outer);
    if (r == 0)
        deep(2, 0);
    printf("longjmp(env, 0): setjmp returned %d after %d frames\n", r, ntrace);

    r = setjmp(outer);
    if (r == 0) {
        printf("catcher(7) returned %d\n", catcher(7));
        catcher(21);
        printf("not reached\n");
    } else {
        printf("outer caught rethrown %d\n", r);
    }

    count = 0;
    r = setjmp(outer);
    if (count < 100) {
        count++;
        longjmp(outer, count);
    }
    printf("looped: count %d, last setjmp value %d\n", count, r);
    return 3;
}
