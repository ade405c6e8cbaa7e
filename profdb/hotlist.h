/*
 * profdb/hotlist.h: a bounded list of the values seen most often in a
 * stream, by Gibbons and Matias's counting samples (docs/profdb.md "Value
 * profiles" says how, and why these parameters).
 *
 * A value not in the list enters it with probability 1/tau; once in, every
 * occurrence is counted.  When a newcomer would make more than HOTLIST_MAX
 * values, tau grows by HOTLIST_RAISE and each count is cut as the method
 * prescribes (a coin with heads probability old tau / new tau; on tails
 * one less and then coins of probability 1 / new tau, one less per tails,
 * until heads or zero), until the list fits again.  A listed value's
 * occurrences are then estimated by its count plus, for each time it
 * entered (pieces: one per stream merged in), 0.418 tau - 1, what it
 * missed before entering.  A value offered a fraction f of the time is in
 * the list with high probability once f x samples is a few tau; memory is
 * fixed at HOTLIST_MAX values per list.
 *
 * Coins come from a generator kept in the list, seeded by its owner, so
 * the same stream always gives the same list.
 */
#ifndef PROFDB_HOTLIST_H
#define PROFDB_HOTLIST_H

#include <stddef.h>
#include <stdint.h>

#define HOTLIST_MAX 32
#define HOTLIST_RAISE 1.25

typedef struct hot_value {
    uint64_t value;
    uint64_t count;           /* occurrences counted since it entered */
    uint32_t pieces;          /* times it entered: 1, or more after merges */
} hot_value;

typedef struct hotlist {
    double tau;               /* >= 1 */
    uint64_t samples;         /* values offered, exactly */
    uint64_t rng;
    uint32_t n;
    hot_value v[HOTLIST_MAX];
} hotlist;

void hotlist_init(hotlist *h, uint64_t seed);
void hotlist_add(hotlist *h, uint64_t value);

/* into gets everything from also: both lists are brought to the larger
 * tau (the other one's counts cut as a raise to it would), counts and
 * pieces of the same value add, and the result is raised until it fits.
 * The samples add.  Each list is a counting sample of its own stream at
 * the common tau, so the union is one of the concatenated stream except
 * that a value may have entered once per stream (hence pieces). */
void hotlist_merge(hotlist *into, const hotlist *also);

/* A listed value's estimated occurrences. */
double hotlist_estimate(const hotlist *h, const hot_value *v);
/* The values by estimated occurrences, most frequent first (ties: lower
 * value first), at most max of them; share[i] = estimate / samples,
 * capped at 1.  Returns how many. */
size_t hotlist_top(const hotlist *h, hot_value *out, double *share, size_t max);

/* A list's values as stored (docs/profile-format.md): HOTLIST_VALUE_BYTES
 * each, little-endian value, count, pieces and four zero bytes.  get
 * reads h->n of them into h: NULL or what is wrong. */
#define HOTLIST_VALUE_BYTES 24u
void hotlist_put_values(uint8_t *p, const hotlist *h);
const char *hotlist_get_values(const uint8_t *p, hotlist *h);

/* Internal consistency, for readers of stored lists: NULL or what is wrong. */
const char *hotlist_check(const hotlist *h);

#endif
