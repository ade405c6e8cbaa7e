/*
 * profdb/stacks*.c: stack profiles encode and decode, merge as addition
 * (equal stacks add up, images are matched by key whatever their index),
 * are read back by selection, and refuse damage with a message.
 */
#include <criterion/criterion.h>

#include "profdb/stacks.h"
#include "tests/profdb/testutil.h"

static const char *const KEYS[] = { "aaaa", "bbbb", "unknown" };
static const char *const PATHS[] = { "/bin/prog", "/lib/libc.so.6.1", "[unknown]" };

/* main <- start in image 0; leaf in libc called from main */
static const profdb_frame F1[] = { { 0, 0x100 }, { 0, 0x40 } };
static const profdb_frame F2[] = { { 1, 0x2000 }, { 0, 0x104 }, { 0, 0x40 } };

static profdb_stacks_input input(const char *host, const profdb_stack *s, size_t n)
{
    return (profdb_stacks_input){ .event = "cycles", .host = host, .nimages = 3, .keys = KEYS,
                                  .paths = PATHS, .n = n, .s = s };
}

static profdb *open_db(char **dir)
{
    *dir = tu_tmpdir();
    profdb_error err;
    profdb *db = profdb_open(*dir, PROFDB_CREATE, &err);
    cr_assert(db, "%s", err.msg);
    return db;
}

static uint64_t count_of(const profdb_stacks *s, const char *leafkey, uint64_t leafoff, uint32_t n)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->s[i].n == n && !strcmp(s->img[s->s[i].f[0].image].key, leafkey) &&
            s->s[i].f[0].offset == leafoff)
            return s->s[i].count;
    return 0;
}

Test(profdb_stacks, merge_adds_and_select_reads_back)
{
    char *dir;
    profdb *db = open_db(&dir);
    profdb_stack a[] = { { 3, 0, 2, F1 }, { 5, 0, 3, F2 }, { 2, 0, 2, F1 } };
    profdb_error err;
    profdb_stacks_input in = input("h1", a, 3);
    cr_assert_eq(profdb_stacks_merge(db, &in, 1, &err), 1, "%s", err.msg);
    cr_assert_eq(profdb_stacks_merge(db, &in, 1, &err), 1, "%s", err.msg);
    profdb_stacks_input in2 = input("h2", a + 1, 1);
    cr_assert_eq(profdb_stacks_merge(db, &in2, 1, &err), 1, "%s", err.msg);

    profdb_stacks s;
    cr_assert(profdb_stacks_select(db, NULL, NULL, "cycles", NULL, &s, &err), "%s", err.msg);
    cr_assert_eq(s.n, 2);
    cr_assert_eq(s.total, 2 * 10 + 5);
    cr_assert_eq(count_of(&s, "aaaa", 0x100, 2), 10);
    cr_assert_eq(count_of(&s, "bbbb", 0x2000, 3), 15);
    profdb_stacks_free(&s);
    cr_assert(profdb_stacks_select(db, NULL, "h2", NULL, "bbbb", &s, &err), "%s", err.msg);
    cr_assert_eq(s.total, 5);
    profdb_stacks_free(&s);
    cr_assert(profdb_stacks_select(db, NULL, NULL, "imiss", NULL, &s, &err), "%s", err.msg);
    cr_assert_eq(s.n, 0);
    profdb_stacks_free(&s);
    profdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

Test(profdb_stacks, images_match_by_key_not_index)
{
    /* the same stack with the image table in another order */
    static const char *const K2[] = { "bbbb", "aaaa" };
    static const char *const P2[] = { "/lib/libc.so.6.1", "/bin/prog" };
    static const profdb_frame G[] = { { 1, 0x100 }, { 1, 0x40 } };
    char *dir;
    profdb *db = open_db(&dir);
    profdb_stack a[] = { { 4, 0, 2, F1 } }, b[] = { { 6, 0, 2, G } };
    profdb_stacks_input in[2] = { input("h", a, 1),
                                  { .event = "cycles", .host = "h", .nimages = 2, .keys = K2,
                                    .paths = P2, .n = 1, .s = b } };
    profdb_error err;
    cr_assert_eq(profdb_stacks_merge(db, in, 2, &err), 2, "%s", err.msg);
    profdb_stacks s;
    cr_assert(profdb_stacks_select(db, NULL, NULL, NULL, "aaaa", &s, &err), "%s", err.msg);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.s[0].count, 10);
    profdb_stacks_free(&s);
    profdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

Test(profdb_stacks, damage_is_refused_with_a_message)
{
    profdb_stacks s = { .event = "cycles", .host = "h" };
    profdb_stack a[] = { { 3, 1, 2, F1 }, { 5, 0, 3, F2 } };
    profdb_stacks_input in = input("h", a, 2);
    profdb_error err;
    /* build a file through the merge path's own normalisation */
    char *dir;
    profdb *db = open_db(&dir);
    cr_assert_eq(profdb_stacks_merge(db, &in, 1, &err), 1, "%s", err.msg);
    cr_assert(profdb_stacks_select(db, NULL, NULL, NULL, NULL, &s, &err), "%s", err.msg);
    s.host = strdup("h");
    uint8_t *d;
    size_t n;
    cr_assert(profdb_stacks_encode(&s, &d, &n, &err), "%s", err.msg);
    profdb_stacks q;
    cr_assert(profdb_stacks_decode(d, n, "f", &q, &err), "%s", err.msg);
    cr_assert_eq(q.total, 8);
    profdb_stacks_free(&q);
    for (size_t cut = 0; cut < n; cut += 7)
        cr_assert(!profdb_stacks_decode(d, cut, "f", &q, &err) && !strncmp(err.msg, "f: ", 3),
                  "cut at %zu", cut);
    d[n - 1] ^= 1;
    cr_assert(!profdb_stacks_decode(d, n, "f", &q, &err));
    cr_assert_eq(err.code, PROFDB_ECHECKSUM, "%s", err.msg);
    d[8] = 9;
    cr_assert(!profdb_stacks_decode(d, n, "f", &q, &err));
    cr_assert_eq(err.code, PROFDB_EVERSION, "%s", err.msg);
    free(d);
    profdb_stacks_free(&s);
    profdb_close(db);
    tu_rmrf(dir);
    free(dir);
}
