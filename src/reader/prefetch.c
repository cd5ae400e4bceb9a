/* Reading ahead on a second thread (reader_prefetch_*; see reader.h): minibatch k+1 is
 * read and decoded into host buffers while the caller computes minibatch k, which on a
 * GPU is most of what the host would otherwise do between the device's steps.
 *
 * Three slots in turn: the caller holds one, the thread fills the others in order; the
 * caller's next call hands its slot back. With three, minibatch k+1 is usually whole when
 * the caller takes k (it was read during step k-1), so the caller can send it to the
 * device during step k (reader_prefetch_peek). Only reader_next runs on the thread (no MPI:
 * the communicator is the main thread's, MPI_THREAD_FUNNELED). The thread stops after
 * the epoch's last (empty) minibatch or a failure, which the caller gets in order. The
 * minibatches' data can live in memory of the caller's choosing (pinned on a GPU). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader_internal.h"

#define PF_SLOTS 3

struct reader_prefetch {
    struct reader *r;
    size_t mb_size;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct minibatch mb[PF_SLOTS];
    struct pt_err err[PF_SLOTS];
    int rc[PF_SLOTS];
    int full[PF_SLOTS]; /* the thread filled slot k and the caller has not handed it back */
    int next;           /* the slot the caller takes next */
    int held;           /* the slot the caller holds (-1: none) */
    int stop;
};

static void *run(void *arg)
{
    struct reader_prefetch *p = arg;
    int k = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->full[k] && !p->stop)
            pthread_cond_wait(&p->changed, &p->lock);
        if (p->stop)
            break;
        pthread_mutex_unlock(&p->lock);
        pt_err_clear(&p->err[k]);
        int rc = reader_next(p->r, p->mb_size, &p->mb[k], &p->err[k]);
        pthread_mutex_lock(&p->lock);
        p->rc[k] = rc;
        p->full[k] = 1;
        pthread_cond_broadcast(&p->changed);
        if (rc || p->mb[k].global_samples == 0)
            break; /* the epoch is over (or failed): nothing more to read */
        k = (k + 1) % PF_SLOTS;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int reader_prefetch_start(struct reader *r, size_t mb_size, const struct mb_host_alloc *host,
                          struct reader_prefetch **out, struct pt_err *e)
{
    struct reader_prefetch *p = pt_calloc(1, sizeof *p, e);
    *out = NULL;
    if (!p)
        return e ? e->code : PT_ENOMEM;
    p->r = r;
    r->ahead = 1; /* from now on its minibatches are filled on the pool's threads */
    p->mb_size = mb_size;
    p->held = -1;
    for (int k = 0; k < PF_SLOTS; k++)
        for (int i = 0; i < CTF_MAX_INPUTS; i++)
            p->mb[k].in[i].host = host;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        pthread_cond_destroy(&p->changed);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return pt_err_set(e, PT_ESYS, "error: cannot start the reader's thread");
    }
    *out = p;
    return 0;
}

int reader_prefetch_next(struct reader_prefetch *p, struct minibatch **mb, struct pt_err *e)
{
    pthread_mutex_lock(&p->lock);
    if (p->held >= 0) { /* the caller is done with the last one */
        p->full[p->held] = 0;
        p->held = -1;
        pthread_cond_broadcast(&p->changed);
    }
    int k = p->next;
    while (!p->full[k])
        pthread_cond_wait(&p->changed, &p->lock);
    int rc = p->rc[k];
    if (rc && e)
        *e = p->err[k];
    p->held = k;
    p->next = (k + 1) % PF_SLOTS;
    pthread_mutex_unlock(&p->lock);
    *mb = &p->mb[k];
    return rc;
}

struct minibatch *reader_prefetch_peek(struct reader_prefetch *p)
{
    pthread_mutex_lock(&p->lock);
    int k = p->next;
    /* a full slot is the thread's no more: it only writes an empty one */
    struct minibatch *mb =
        p->full[k] && p->rc[k] == 0 && p->mb[k].global_samples ? &p->mb[k] : NULL;
    pthread_mutex_unlock(&p->lock);
    return mb;
}

void reader_prefetch_stop(struct reader_prefetch *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->lock);
    for (int k = 0; k < PF_SLOTS; k++)
        mb_free(&p->mb[k]);
    free(p);
}
