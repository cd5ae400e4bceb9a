/* Filling one minibatch on several threads (fill_pool.h). */
#include "reader/fill_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct fill_pool {
    int workers; /* the caller and the threads */
    int started; /* threads running */
    pthread_t thread[FILL_POOL_MAX];
    struct fill_worker {
        struct fill_pool *pool;
        int id;
    } worker[FILL_POOL_MAX];
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    unsigned long generation; /* one per fill */
    unsigned long wake;       /* one per fill_pool_wake */
    int woken;                /* a wake since the last fill */
    int stop;
    /* the fill under way */
    fill_part_fn fn;
    void *ctx;
    size_t n;
    int parts;
    unsigned long pending; /* parts the threads have not finished */
    int rc[FILL_POOL_MAX];
    struct pt_err err[FILL_POOL_MAX]; /* each thread's part's reason */
};

static int default_workers = 1, forced;

void fill_pool_set_default(int threads, int force)
{
    default_workers = threads < 1 ? 1 : threads > FILL_POOL_MAX ? FILL_POOL_MAX : threads;
    forced = force;
}

int fill_pool_default(int *force)
{
    if (force)
        *force = forced;
    return default_workers;
}

int fill_pool_threads(int wanted)
{
    return wanted || forced ? default_workers : 1;
}

static void part_range(size_t n, int parts, int k, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)k / (size_t)parts;
    *hi = n * (size_t)(k + 1) / (size_t)parts;
}

/* A woken thread waits this long for the fill by spinning (a sleeping thread takes tens
 * of microseconds to wake, as long as a whole part of an MLP's minibatch takes). */
#define SPIN_SECONDS 300e-6

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Until *v differs from old (or, with zero set, until it is 0), or the spin's time is up. */
static void spin(const unsigned long *v, unsigned long old, int zero)
{
    double t0 = seconds();
    for (int k = 0; zero ? __atomic_load_n(v, __ATOMIC_ACQUIRE) != 0
                         : __atomic_load_n(v, __ATOMIC_ACQUIRE) == old;
         k++) {
        relax();
        if ((k & 63) == 63 && seconds() - t0 > SPIN_SECONDS)
            return;
    }
}

static void *work(void *arg)
{
    struct fill_worker *w = arg;
    struct fill_pool *p = w->pool;
    int me = w->id;
    unsigned long seen = 0, seen_wake = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && p->wake == seen_wake && !p->stop)
            pthread_cond_wait(&p->go, &p->lock);
        if (p->stop)
            break;
        if (p->generation == seen) { /* woken ahead of a fill: spin until it comes */
            seen_wake = p->wake;
            pthread_mutex_unlock(&p->lock);
            spin(&p->generation, seen, 0);
            pthread_mutex_lock(&p->lock);
            if (p->generation == seen)
                continue;
        }
        seen = p->generation;
        seen_wake = p->wake;
        if (me >= p->parts)
            continue; /* this fill has fewer parts than workers */
        size_t lo, hi;
        part_range(p->n, p->parts, me, &lo, &hi);
        fill_part_fn fn = p->fn;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->lock);
        pt_err_clear(&p->err[me]);
        int rc = fn(ctx, lo, hi, me, &p->err[me]);
        pthread_mutex_lock(&p->lock);
        p->rc[me] = rc;
        if (__atomic_sub_fetch(&p->pending, 1, __ATOMIC_ACQ_REL) == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void fill_pool_wake(struct fill_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->wake++;
    p->woken = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
}

struct fill_pool *fill_pool_new(int threads)
{
    if (threads <= 1)
        return NULL;
    if (threads > FILL_POOL_MAX)
        threads = FILL_POOL_MAX;
    struct fill_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->workers = 1;
    for (int k = 1; k < threads; k++) {
        p->worker[k] = (struct fill_worker){.pool = p, .id = k};
        if (pthread_create(&p->thread[k], NULL, work, &p->worker[k]) != 0)
            break; /* fewer workers: the same values, more slowly */
        p->workers++;
        p->started++;
    }
    if (p->workers == 1) {
        fill_pool_free(p);
        return NULL;
    }
    return p;
}

int fill_pool_workers(const struct fill_pool *p)
{
    return p ? p->workers : 1;
}

int fill_pool_run(struct fill_pool *p, size_t n, size_t min_part, fill_part_fn fn, void *ctx,
                  struct pt_err *e)
{
    size_t most = min_part ? n / min_part : n;
    int parts = p ? p->workers : 1;
    if ((size_t)parts > most)
        parts = most > 1 ? (int)most : 1;
    if (parts <= 1) {
        if (p && p->woken) { /* the threads spin for a fill: tell them it has no part for them */
            pthread_mutex_lock(&p->lock);
            p->parts = 1;
            p->woken = 0;
            __atomic_store_n(&p->generation, p->generation + 1, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&p->go);
            pthread_mutex_unlock(&p->lock);
        }
        return n ? fn(ctx, 0, n, 0, e) : 0;
    }
    pthread_mutex_lock(&p->lock);
    p->woken = 0;
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->parts = parts;
    p->pending = (unsigned long)parts - 1;
    __atomic_store_n(&p->generation, p->generation + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
    size_t lo, hi;
    part_range(n, parts, 0, &lo, &hi);
    int rc = fn(ctx, lo, hi, 0, e);
    spin(&p->pending, 0, 1); /* the threads started with this one: they end about as soon */
    pthread_mutex_lock(&p->lock);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->lock);
    for (int k = 1; rc == 0 && k < parts; k++)
        if ((rc = p->rc[k]) != 0 && e) /* the lowest failing part's reason */
            *e = p->err[k];
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void fill_pool_free(struct fill_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
    for (int k = 1; k <= p->started; k++)
        pthread_join(p->thread[k], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
