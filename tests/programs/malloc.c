/* malloc: heap-heavy work with a fixed-seed PRNG (xorshift64*).
 *
 *   - 3000 blocks of random sizes from 1 byte to 8 KB, filled with memset
 *     and checked, freed in a random order while new ones are allocated,
 *   - a buffer grown by realloc from 16 bytes to 256 KB, doubling, content
 *     checked after every move,
 *   - a linked list of 2000 nodes, reversed, filtered (freeing nodes),
 *   - a chained hash table of 1500 string keys (1000 possible), with lookups and deletions,
 *   - calloc zeroing and a final free of everything.
 * Every checksum covers contents only, never addresses.  Exit status 0, or
 * 1 with a message if a check fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* "<prefix><decimal n>" into buf; cheaper than snprintf, which would
   dominate the run time otherwise. */
static void name(char *buf, const char *prefix, unsigned long n)
{
    char digits[24];
    int k = 0;
    while (*prefix)
        *buf++ = *prefix++;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    while (k)
        *buf++ = digits[--k];
    *buf = '\0';
}

static void fail(const char *what)
{
    printf("FAILED: %s\n", what);
    exit(1);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ULL;
}

/* ---- random sizes, random frees ----------------------------------------- */

#define SLOTS 256
static void churn(void)
{
    unsigned char *slot[SLOTS] = { 0 };
    size_t size[SLOTS] = { 0 };
    uint64_t h = 14695981039346656037ULL;
    unsigned long allocs = 0, frees = 0, bytes = 0;

    for (int step = 0; step < 3000; step++) {
        int i = (int)(rng() % SLOTS);
        if (slot[i]) {
            /* check the pattern, then free */
            for (size_t k = 0; k + 1 < size[i]; k += 97)
                if (slot[i][k] != (unsigned char)i)
                    fail("pattern");
            h = mix(h, slot[i][size[i] - 1]);
            free(slot[i]);
            slot[i] = NULL;
            frees++;
        }
        size_t n;
        switch (rng() % 4) {
        case 0: n = 1 + rng() % 16; break;
        case 1: n = 1 + rng() % 512; break;
        case 2: n = 1 + rng() % 4096; break;
        default: n = 1 + rng() % 8192; break;
        }
        slot[i] = malloc(n);
        if (!slot[i])
            fail("malloc");
        memset(slot[i], i, n);
        slot[i][n - 1] = (unsigned char)(n * 7);
        size[i] = n;
        allocs++;
        bytes += n;
    }
    for (int i = 0; i < SLOTS; i++)
        if (slot[i]) {
            h = mix(h, size[i]);
            free(slot[i]);
            frees++;
        }
    printf("churn: %lu allocations (%lu bytes), %lu frees, checksum %016llx\n",
           allocs, bytes, frees, (unsigned long long)h);
}

/* ---- realloc growth ---------------------------------------------------- */

static void grow(void)
{
    size_t cap = 16, used = 0;
    uint32_t *buf = malloc(cap);
    int moves = 0, reallocs = 0;
    if (!buf)
        fail("malloc");
    while (cap < (1u << 18)) {
        while ((used + 1) * sizeof *buf <= cap) {
            buf[used] = (uint32_t)(used * 2654435761u);
            used++;
        }
        uintptr_t before = (uintptr_t)buf;
        cap *= 2;
        uint32_t *nb = realloc(buf, cap);
        if (!nb)
            fail("realloc");
        moves += (uintptr_t)nb != before;   /* counted, not printed: varies */
        buf = nb;
        reallocs++;
        for (size_t k = 0; k < used; k++)
            if (buf[k] != (uint32_t)(k * 2654435761u))
                fail("realloc content");
    }
    uint64_t h = 0;
    for (size_t k = 0; k < used; k++)
        h = mix(h, buf[k]);
    buf = realloc(buf, 100);             /* shrink */
    if (!buf || buf[24] != (uint32_t)(24 * 2654435761u))
        fail("shrink");
    free(buf);
    printf("grow: %d reallocs up to %zu bytes, %zu words, checksum %016llx%s\n",
           reallocs, cap, used, (unsigned long long)h, moves > 0 ? "" : " (never moved)");
}

/* ---- linked list ------------------------------------------------------------ */

struct node { struct node *next; long value; char tag[12]; };

static void list(void)
{
    struct node *head = NULL;
    for (long i = 0; i < 2000; i++) {
        struct node *n = malloc(sizeof *n);
        if (!n)
            fail("malloc");
        n->value = (long)(rng() % 100000);
        name(n->tag, "n", (unsigned long)i);
        n->next = head;
        head = n;
    }
    /* reverse */
    struct node *rev = NULL;
    while (head) {
        struct node *n = head;
        head = n->next;
        n->next = rev;
        rev = n;
    }
    head = rev;
    /* drop odd values */
    long kept = 0, dropped = 0;
    for (struct node **pp = &head; *pp;) {
        if ((*pp)->value & 1) {
            struct node *dead = *pp;
            *pp = dead->next;
            free(dead);
            dropped++;
        } else {
            pp = &(*pp)->next;
            kept++;
        }
    }
    uint64_t h = 0;
    long sum = 0;
    for (struct node *n = head; n; n = n->next) {
        h = mix(h, (uint64_t)n->value);
        h = mix(h, (uint64_t)strlen(n->tag));
        sum += n->value;
    }
    printf("list: first %s=%ld, kept %ld, dropped %ld, sum %ld, checksum %016llx\n",
           head->tag, head->value, kept, dropped, sum, (unsigned long long)h);
    while (head) {
        struct node *n = head->next;
        free(head);
        head = n;
    }
}

/* ---- hash table ---------------------------------------------------------------- */

struct entry { struct entry *next; char *key; long value; };

static unsigned long hash_str(const char *s)
{
    unsigned long h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static void table(void)
{
    enum { NB = 251, NKEYS = 1500, RANGE = 1000 };
    struct entry **bucket = calloc(NB, sizeof *bucket);
    if (!bucket)
        fail("calloc");
    for (int i = 0; i < NB; i++)
        if (bucket[i])
            fail("calloc not zero");
    char key[32];
    for (int i = 0; i < NKEYS; i++) {
        name(key, "key-", rng() % RANGE);
        unsigned long b = hash_str(key) % NB;
        struct entry *e;
        for (e = bucket[b]; e; e = e->next)
            if (strcmp(e->key, key) == 0)
                break;
        if (e) {
            e->value++;
            continue;
        }
        e = malloc(sizeof *e);
        if (!e || !(e->key = strdup(key)))
            fail("malloc");
        e->value = 1;
        e->next = bucket[b];
        bucket[b] = e;
    }
    long distinct = 0, longest = 0, total = 0;
    for (int b = 0; b < NB; b++) {
        long len = 0;
        for (struct entry *e = bucket[b]; e; e = e->next) {
            len++;
            total += e->value;
        }
        distinct += len;
        if (len > longest)
            longest = len;
    }
    /* look up and delete every key-N with N divisible by 3 */
    long found = 0, deleted = 0;
    for (int n = 0; n < RANGE; n += 3) {
        name(key, "key-", (unsigned long)n);
        unsigned long b = hash_str(key) % NB;
        for (struct entry **pp = &bucket[b]; *pp; pp = &(*pp)->next)
            if (strcmp((*pp)->key, key) == 0) {
                struct entry *dead = *pp;
                found += dead->value;
                *pp = dead->next;
                free(dead->key);
                free(dead);
                deleted++;
                break;
            }
    }
    long left = 0;
    for (int b = 0; b < NB; b++)
        while (bucket[b]) {
            struct entry *e = bucket[b];
            bucket[b] = e->next;
            free(e->key);
            free(e);
            left++;
        }
    free(bucket);
    printf("table: %ld inserts, %ld distinct keys, longest chain %ld, "
           "deleted %ld keys (%ld hits), %ld left\n",
           total, distinct, longest, deleted, found, left);
}

int main(void)
{
    churn();
    grow();
    list();
    table();
    printf("next random: %016llx\n", (unsigned long long)rng());
    return 0;
}
