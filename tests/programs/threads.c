/* threads: POSIX threads with a mutex and a condition variable.
 *
 * Four worker threads.  Each one
 *   - does its own work (a checksum over a private array),
 *   - adds to a shared counter under the mutex 1000 times,
 *   - then takes part in 3 rounds of a token ring: thread k waits on the
 *     condition variable until the turn is k, appends its id to a shared
 *     log and passes the turn to k+1 (broadcast),
 * and main joins them all.  Every line is printed by main after the joins
 * (or by the thread holding the turn), so the output order is fixed.
 * Exit status 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define ADDS 1000
#define ROUNDS 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static long counter;
static int turn;
static int ring_log[NTHREADS * ROUNDS], nlog;

struct worker {
    pthread_t thread;
    int id;
    unsigned long work;
    int data[2048];
};

static void check(int rc, const char *what)
{
    if (rc != 0) {
        printf("%s failed: %d\n", what, rc);
        exit(1);
    }
}

static void *run(void *arg)
{
    struct worker *w = arg;

    for (int i = 0; i < 2048; i++)
        w->data[i] = (i * (w->id + 3)) % 1013;
    unsigned long h = (unsigned long)w->id;
    for (int i = 0; i < 2048; i++)
        h = h * 31 + (unsigned long)w->data[i];
    w->work = h;

    for (int i = 0; i < ADDS; i++) {
        check(pthread_mutex_lock(&lock), "lock");
        counter += w->id + 1;
        check(pthread_mutex_unlock(&lock), "unlock");
    }

    for (int r = 0; r < ROUNDS; r++) {
        check(pthread_mutex_lock(&lock), "lock");
        while (turn != w->id)
            check(pthread_cond_wait(&turn_changed, &lock), "cond_wait");
        ring_log[nlog++] = w->id;
        turn = (turn + 1) % NTHREADS;
        check(pthread_cond_broadcast(&turn_changed), "broadcast");
        check(pthread_mutex_unlock(&lock), "unlock");
    }
    return (void *)(long)(100 + w->id);
}

int main(void)
{
    static struct worker workers[NTHREADS];

    for (int i = 0; i < NTHREADS; i++) {
        workers[i].id = i;
        check(pthread_create(&workers[i].thread, NULL, run, &workers[i]), "pthread_create");
    }
    for (int i = 0; i < NTHREADS; i++) {
        void *ret;
        check(pthread_join(workers[i].thread, &ret), "pthread_join");
        printf("thread %d returned %ld, work %016lx\n", i, (long)ret, workers[i].work);
    }
    printf("counter %ld (expected %d)\n", counter, ADDS * (1 + 2 + 3 + 4));
    printf("ring:");
    for (int i = 0; i < nlog; i++)
        printf(" %d", ring_log[i]);
    printf("\n");
    return 0;
}
