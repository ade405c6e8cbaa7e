/*
 * machine/timing_thread.c: the cycle model on a host thread of its own.
 *
 * Nothing the model works out feeds back into execution (guest time comes
 * from instruction counts), so the executor need not wait for it: it puts
 * each retired block, each change of address space and each of the
 * driver's polls in a ring, and a second host thread does with them, in
 * the same order, what the executor would otherwise have done inline.
 * The model, the PMU, the sample hook and the driver behind it are then
 * touched by that thread only, and see the same calls in the same order:
 * every count and every sample is the same as inline.
 *
 * The executor waits for the ring to empty (tthread_drain) before what
 * must not overtake the model or run beside it: freeing blocks the ring
 * still names, announcing an image load or a process exit to the
 * collector (after the samples that came before it), and the end of the
 * run.  Waiting is a short spin, then a sleep; a wake-up that is missed
 * costs at most one timeout, never a hang.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "machine/axp.h"
#include "machine/cycles.h"

#define RING (1u << 19)         /* words (4 MB): the executor waits for room in big steps */
#define SPINS 64
#define NAP_NS 1000000          /* a sleeper looks again after this at the latest */

/* A record: a header word (kind, cpu, n, nf), then for R_BLOCK the
 * block, the next pc, n effective addresses and the nf findings of the
 * model's front end (cycles_front_block, run here on the executor's
 * thread), four to a word; for R_ASN the pid; R_SKIP fills the ring's
 * end when a record would not fit there. */
enum { R_SKIP, R_BLOCK, R_ASN, R_POLL };
#define HDR(kind, c, n, nf) ((uint64_t)(kind) | (uint64_t)(c) << 8 | (uint64_t)(n) << 24 | (uint64_t)(nf) << 40)
#define FWORDS(nf) (((nf) + 3) / 4)

/* head and tail on lines of their own: each side writes one and reads
 * the other's only when its own copy says the ring is full or empty. */
struct tthread {
    _Alignas(64) _Atomic uint64_t head;     /* words written (published): the executor's */
    uint64_t tail_seen;                     /* the executor's last look at tail */
    _Alignas(64) _Atomic uint64_t tail;     /* words done with: the model thread's */
    _Alignas(64) _Atomic bool stop;
    _Atomic bool csleep, psleep;            /* the model thread / the executor waits */
    machine *m;
    pthread_t thr;
    uint64_t *ring;
    pthread_mutex_t mu;
    pthread_cond_t data, room;
};

static void nap(tthread *q, pthread_cond_t *cv, _Atomic bool *flag, bool (*ready)(tthread *))
{
    for (int i = 0; i < SPINS; i++) {
        if (ready(q))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    pthread_mutex_lock(&q->mu);
    atomic_store(flag, true);
    if (!ready(q) && atomic_load(flag)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += NAP_NS;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(cv, &q->mu, &ts);
    }
    atomic_store(flag, false);
    pthread_mutex_unlock(&q->mu);
}

/* Wake the side sleeping on cv, once: the flag is cleared here. */
static void wake(tthread *q, pthread_cond_t *cv, _Atomic bool *flag)
{
    if (atomic_load_explicit(flag, memory_order_relaxed)) {
        pthread_mutex_lock(&q->mu);
        if (atomic_load(flag)) {
            atomic_store(flag, false);
            pthread_cond_signal(cv);
        }
        pthread_mutex_unlock(&q->mu);
    }
}

static bool has_data(tthread *q)
{
    return atomic_load_explicit(&q->head, memory_order_acquire) !=
               atomic_load_explicit(&q->tail, memory_order_relaxed) ||
           atomic_load_explicit(&q->stop, memory_order_acquire);
}

static bool quarter_free(tthread *q)
{
    return atomic_load_explicit(&q->head, memory_order_relaxed) -
               atomic_load_explicit(&q->tail, memory_order_acquire) <= 3 * RING / 4;
}

static bool empty(tthread *q)
{
    return atomic_load_explicit(&q->tail, memory_order_acquire) ==
           atomic_load_explicit(&q->head, memory_order_relaxed);
}

static void *consume(void *arg)
{
    tthread *q = arg;
    machine *m = q->m;
    uint64_t tl = 0, h = 0;
    for (;;) {
        if (tl == h && (h = atomic_load_explicit(&q->head, memory_order_acquire)) == tl) {
            if (atomic_load_explicit(&q->stop, memory_order_acquire))
                return NULL;
            nap(q, &q->data, &q->csleep, has_data);
            continue;
        }
        const uint64_t *r = &q->ring[tl & (RING - 1)];
        unsigned kind = r[0] & 0xff, c = (r[0] >> 8) & 0xffff;
        uint32_t n = (uint32_t)(r[0] >> 24) & 0xffff, nf = (uint32_t)(r[0] >> 40);
        uint64_t words = 1;
        switch (kind) {
        case R_SKIP:
            words = r[0] >> 24;
            break;
        case R_BLOCK: {
            const block *b = (const block *)r[1];
            cycles_back_block(m->cpus[c].core, b->ti, b->pc, n, r + 3, r[2], block_scheds(b, n),
                              (const uint16_t *)(r + 3 + n), nf);
            words = 3 + n + FWORDS(nf);
            break;
        }
        case R_ASN:
            timing_asn(m, (int)c, (uint32_t)r[1]);
            words = 2;
            break;
        case R_POLL:
            m->phook(m->phook_ctx, (int)c);
            break;
        }
        tl += words;
        atomic_store_explicit(&q->tail, tl, memory_order_release);
        if (atomic_load_explicit(&q->psleep, memory_order_relaxed) && (tl == h || quarter_free(q)))
            wake(q, &q->room, &q->psleep);
    }
}

tthread *tthread_start(machine *m)
{
    const char *e = getenv("AXP_MODEL_THREAD");
    if (e ? !strcmp(e, "0") : sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return NULL;
    tthread *q = aligned_alloc(64, (sizeof *q + 63) & ~(size_t)63);
    if (q)
        memset(q, 0, sizeof *q);
    if (!q || !(q->ring = malloc(RING * sizeof *q->ring)))
        goto fail;
    q->m = m;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->data, NULL);
    pthread_cond_init(&q->room, NULL);
    /* Host signals (a guest's children, ^C, timers) are for the executor's
     * thread, which may be waiting for one: the model's thread blocks
     * them all (it inherits the mask it is created with). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&q->thr, NULL, consume, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        return q;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->data);
    pthread_cond_destroy(&q->room);
fail:
    /* (the model then runs inline, as without a second CPU) */
    if (q)
        free(q->ring);
    free(q);
    return NULL;
}

/* Wait until the ring has room for words more after h. */
static void room_for(tthread *q, uint64_t h, uint64_t words)
{
    while (h + words - q->tail_seen > RING) {
        q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (h + words - q->tail_seen > RING)
            nap(q, &q->room, &q->psleep, quarter_free);
    }
}

/* Room for `words` contiguous words: where to write them. */
static uint64_t *reserve(tthread *q, uint32_t words)
{
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint32_t at = (uint32_t)(h & (RING - 1));
    if (at + words > RING) {            /* skip to the ring's start */
        room_for(q, h, RING - at);
        q->ring[at] = HDR(R_SKIP, 0, RING - at, 0);
        h += RING - at;
        atomic_store_explicit(&q->head, h, memory_order_release);
        at = 0;
    }
    room_for(q, h, words);
    return &q->ring[at];
}

static void publish(tthread *q, uint32_t words)
{
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    atomic_store_explicit(&q->head, h + words, memory_order_release);
    wake(q, &q->data, &q->csleep);
}

void tthread_block(tthread *q, int cpuno, cycles_front *f, const block *b, uint32_t n, const uint64_t *ea,
                   uint64_t next_pc)
{
    uint64_t *w = reserve(q, 3 + n + FWORDS(n));
    uint32_t nf = cycles_front_block(f, b->ti, b->pc, n, ea, (uint16_t *)(w + 3 + n));
    w[0] = HDR(R_BLOCK, cpuno, n, nf);
    w[1] = (uint64_t)(uintptr_t)b;
    w[2] = next_pc;
    memcpy(w + 3, ea, n * sizeof *ea);
    publish(q, 3 + n + FWORDS(nf));
}

void tthread_asn(tthread *q, int cpuno, uint32_t pid)
{
    uint64_t *w = reserve(q, 2);
    w[0] = HDR(R_ASN, cpuno, 0, 0);
    w[1] = pid;
    publish(q, 2);
}

void tthread_poll(tthread *q, int cpuno)
{
    uint64_t *w = reserve(q, 1);
    w[0] = HDR(R_POLL, cpuno, 0, 0);
    publish(q, 1);
}

void tthread_drain(tthread *q)
{
    while (!empty(q)) {
        wake(q, &q->data, &q->csleep);
        nap(q, &q->room, &q->psleep, empty);
    }
}

void tthread_stop(tthread *q)
{
    if (!q)
        return;
    tthread_drain(q);
    atomic_store(&q->stop, true);
    pthread_mutex_lock(&q->mu);
    pthread_cond_signal(&q->data);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thr, NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->data);
    pthread_cond_destroy(&q->room);
    free(q->ring);
    free(q);
}
