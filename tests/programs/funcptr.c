/* funcptr: calls through function pointers.
 *
 *   - a table of binary operations indexed by an opcode,
 *   - qsort with comparators (ascending, descending, by a derived key with
 *     ties broken by value, so the order is total and the result does not
 *     depend on the qsort algorithm),
 *   - "objects" calling through a struct of pointers (a small vtable),
 *   - a callback passed down to a walker, and bsearch.
 * Exit status 0.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOIPA __attribute__((noipa))

/* ---- operation table ---------------------------------------------------- */

typedef long (*binop)(long, long);

NOIPA static long op_add(long a, long b) { return a + b; }
NOIPA static long op_sub(long a, long b) { return a - b; }
NOIPA static long op_mul(long a, long b) { return a * b; }
NOIPA static long op_xor(long a, long b) { return a ^ b; }
NOIPA static long op_max(long a, long b) { return a > b ? a : b; }

static binop const optable[] = { op_add, op_sub, op_mul, op_xor, op_max };
static const char *const opnames[] = { "add", "sub", "mul", "xor", "max" };
#define NOPS (sizeof optable / sizeof optable[0])

/* ---- qsort comparators ---------------------------------------------------- */

static int cmp_up(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

static int cmp_down(const void *pa, const void *pb)
{
    return cmp_up(pb, pa);
}

static int key(int v) { return (v * 7) % 10; }

static int cmp_key(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    if (key(a) != key(b))
        return key(a) - key(b);
    return cmp_up(pa, pb);
}

/* ---- a struct of pointers ---------------------------------------------- */

struct shape;
struct shape_ops {
    const char *name;
    long (*area)(const struct shape *);
    long (*perimeter)(const struct shape *);
    void (*scale)(struct shape *, long);
};
struct shape {
    const struct shape_ops *ops;
    long w, h;
};

NOIPA static long rect_area(const struct shape *s) { return s->w * s->h; }
NOIPA static long rect_perim(const struct shape *s) { return 2 * (s->w + s->h); }
NOIPA static void rect_scale(struct shape *s, long k) { s->w *= k; s->h *= k; }
NOIPA static long tri_area(const struct shape *s) { return s->w * s->h / 2; }
NOIPA static long tri_perim(const struct shape *s) { return s->w + s->h + s->w; }
NOIPA static void tri_scale(struct shape *s, long k) { s->w *= k; }

static const struct shape_ops rect_ops = { "rect", rect_area, rect_perim, rect_scale };
static const struct shape_ops tri_ops = { "tri", tri_area, tri_perim, tri_scale };

/* ---- callbacks ---------------------------------------------------------------- */

struct acc { long sum, count; };

NOIPA static void walk(const int *v, int n, void (*fn)(int, void *), void *arg)
{
    for (int i = 0; i < n; i++)
        fn(v[i], arg);
}

static void add_even(int x, void *arg)
{
    struct acc *a = arg;
    if (x % 2 == 0) {
        a->sum += x;
        a->count++;
    }
}

static void add_square(int x, void *arg)
{
    ((struct acc *)arg)->sum += (long)x * x;
}

static void print_array(const char *what, const int *v, int n)
{
    printf("%-8s", what);
    for (int i = 0; i < n; i++)
        printf(" %d", v[i]);
    printf("\n");
}

int main(void)
{
    /* operation table: fold each operation over 1..12 */
    for (unsigned k = 0; k < NOPS; k++) {
        long acc = 1;
        for (long i = 1; i <= 12; i++)
            acc = optable[k](acc, i);
        printf("fold %s = %ld\n", opnames[k], acc);
    }

    /* qsort */
    enum { N = 24 };
    int v[N];
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (int)((s >> 16) % 1000) - 500;
    }
    print_array("input", v, N);
    int (*const cmps[])(const void *, const void *) = { cmp_up, cmp_down, cmp_key };
    const char *const cmpnames[] = { "up", "down", "key" };
    for (int k = 0; k < 3; k++) {
        qsort(v, N, sizeof v[0], cmps[k]);
        print_array(cmpnames[k], v, N);
    }
    qsort(v, N, sizeof v[0], cmp_up);
    int want = v[N / 3];
    int *hit = bsearch(&want, v, N, sizeof v[0], cmp_up);
    printf("bsearch %d -> index %ld\n", want, hit ? (long)(hit - v) : -1L);
    want = 10000;
    printf("bsearch %d -> %s\n", want,
           bsearch(&want, v, N, sizeof v[0], cmp_up) ? "found" : "absent");

    /* struct of pointers */
    struct shape shapes[] = {
        { &rect_ops, 3, 4 }, { &tri_ops, 6, 5 }, { &rect_ops, 10, 1 }, { &tri_ops, 2, 9 },
    };
    for (int i = 0; i < 4; i++) {
        struct shape *sh = &shapes[i];
        long a0 = sh->ops->area(sh), p0 = sh->ops->perimeter(sh);
        sh->ops->scale(sh, i + 2);
        printf("%-4s area %ld perimeter %ld, scaled by %d: area %ld perimeter %ld\n",
               sh->ops->name, a0, p0, i + 2, sh->ops->area(sh), sh->ops->perimeter(sh));
    }

    /* callbacks */
    struct acc even = { 0, 0 }, sq = { 0, 0 };
    walk(v, N, add_even, &even);
    walk(v, N, add_square, &sq);
    printf("even: %ld values, sum %ld; sum of squares %ld\n", even.count, even.sum, sq.sum);
    return 0;
}
