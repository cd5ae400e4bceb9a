/* The sharded parameter store of DataParallelASGD: MPI-3 one-sided memory, passive target;
 * see comm.h.
 *
 * Layout: the n floats are cut into `size` contiguous shards (the first n % size ranks
 * hold one more); rank r exposes its shard in `win` (MPI_Win_allocate, displacement unit
 * one float). A second window, `cwin`, holds the push counter: one int64 on rank 0.
 * Both windows stay in one MPI_Win_lock_all epoch (MPI_MODE_NOCHECK) from creation to
 * comm_store_free, so no operation needs a lock round trip.
 *
 *   add + get (comm_store_start):  per shard, in pieces of at most c->piece floats:
 *       MPI_Raccumulate(add, SUM)           the target adds, element-wise atomic
 *       MPI_Rget_accumulate(NO_OP)          reads the shard, atomic against the adds
 *   The get sees this rank's add: accumulate-family operations of one origin to the same
 *   target location are ordered (MPI's default accumulate_ordering, rar,raw,war,waw).
 *   Completion (comm_store_wait / _test) is MPI_Waitall / MPI_Testall: the add buffer may
 *   be reused and the get buffer holds the shard values. Remote completion of the adds
 *   needs comm_store_complete (MPI_Win_flush_all).
 *
 * Why one-sided (README, "DataParallelASGD"): the owner of a shard does nothing for the
 * updates it receives. On one node Open MPI's osc/sm component performs every add and get
 * in the shared segment from the origin process, so pushes and pulls progress while the
 * owner computes; no progress thread competes with training for the cores. */
#include "comm/comm_internal.h"

#include <stdlib.h>
#include <string.h>

struct comm_store {
    struct comm *c;
    MPI_Win win, cwin;
    float *mine;      /* this rank's shard (window memory) */
    int64_t *counter; /* rank 0: the push counter (window memory) */
    size_t n, piece;
    size_t *first, *count; /* per rank: its shard */
    MPI_Request *reqs;
    int nreq, cap;
};

static void shard_of(size_t n, int size, int r, size_t *first, size_t *count)
{
    size_t base = n / (size_t)size, extra = n % (size_t)size, k = (size_t)r;
    *first = k * base + (k < extra ? k : extra);
    *count = base + (k < extra ? 1 : 0);
}

static int win_new(struct comm_store *s, size_t bytes, int unit, void *base, MPI_Win *w,
                   const char *what, struct pt_err *e)
{
    int rc = MPI_Win_allocate((MPI_Aint)bytes, unit, MPI_INFO_NULL, s->c->mc, base, w);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Win_allocate", what);
    rc = MPI_Win_set_errhandler(*w, MPI_ERRORS_RETURN);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Win_set_errhandler", what);
}

void comm_store_free(struct comm_store *s)
{
    if (!s)
        return;
    if (s->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    if (s->cwin != MPI_WIN_NULL) {
        MPI_Win_unlock_all(s->cwin);
        MPI_Win_free(&s->cwin);
    }
    free(s->first);
    free(s->count);
    free(s->reqs);
    free(s);
}

int comm_store_new(struct comm *c, size_t n, struct comm_store **out, struct pt_err *e)
{
    *out = NULL;
    struct comm_store *s = pt_calloc(1, sizeof *s, e);
    if (!s)
        return PT_ENOMEM;
    s->c = c;
    s->n = n;
    s->piece = c->piece;
    s->win = s->cwin = MPI_WIN_NULL;
    s->first = pt_calloc((size_t)c->size, sizeof *s->first, e);
    s->count = s->first ? pt_calloc((size_t)c->size, sizeof *s->count, e) : NULL;
    if (!s->count) {
        comm_store_free(s);
        return PT_ENOMEM;
    }
    size_t pieces = 0;
    for (int r = 0; r < c->size; r++) {
        shard_of(n, c->size, r, &s->first[r], &s->count[r]);
        pieces += (s->count[r] + s->piece - 1) / s->piece;
    }
    s->cap = (int)(2 * pieces + 1);
    s->reqs = pt_malloc((size_t)s->cap * sizeof *s->reqs, e);
    int rc = s->reqs ? 0 : PT_ENOMEM;
    size_t mine = s->count[c->rank];
    if (rc == 0)
        rc = win_new(s, mine * sizeof(float), (int)sizeof(float), &s->mine, &s->win,
                     "comm_store_new (shards)", e);
    if (rc == 0)
        rc = win_new(s, c->rank == 0 ? sizeof(int64_t) : 0, (int)sizeof(int64_t), &s->counter,
                     &s->cwin, "comm_store_new (counter)", e);
    if (rc) {
        comm_store_free(s);
        return rc;
    }
    if (mine > 0)
        memset(s->mine, 0, mine * sizeof(float));
    if (c->rank == 0)
        *s->counter = 0;
    int mrc = MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Win_lock_all(MPI_MODE_NOCHECK, s->cwin);
    if (mrc == MPI_SUCCESS) /* nobody touches a shard before its owner zeroed it */
        mrc = MPI_Barrier(c->mc);
    if (mrc != MPI_SUCCESS) {
        comm_store_free(s);
        return comm_mpi_fail(e, mrc, "MPI_Win_lock_all", "comm_store_new");
    }
    *out = s;
    return 0;
}

void comm_store_shard(const struct comm_store *s, int rank, size_t *first, size_t *count)
{
    *first = s->first[rank];
    *count = s->count[rank];
}

int comm_store_start(struct comm_store *s, const float *add, float *get, struct pt_err *e)
{
    if (s->nreq > 0)
        return pt_err_set(e, PT_EINTERNAL, "error: comm_store_start: an operation is in flight");
    int rc = MPI_SUCCESS;
    const char *call = "MPI_Raccumulate";
    for (int r = 0; r < s->c->size && rc == MPI_SUCCESS; r++) {
        for (size_t off = 0; off < s->count[r] && rc == MPI_SUCCESS; off += s->piece) {
            size_t left = s->count[r] - off;
            int k = (int)(left < s->piece ? left : s->piece);
            size_t at = s->first[r] + off;
            if (add) {
                call = "MPI_Raccumulate";
                rc = MPI_Raccumulate(add + at, k, MPI_FLOAT, r, (MPI_Aint)off, k, MPI_FLOAT,
                                     MPI_SUM, s->win, &s->reqs[s->nreq]);
                s->nreq += rc == MPI_SUCCESS;
            }
            if (get && rc == MPI_SUCCESS) {
                call = "MPI_Rget_accumulate";
                rc = MPI_Rget_accumulate(NULL, 0, MPI_FLOAT, get + at, k, MPI_FLOAT, r,
                                         (MPI_Aint)off, k, MPI_FLOAT, MPI_NO_OP, s->win,
                                         &s->reqs[s->nreq]);
                s->nreq += rc == MPI_SUCCESS;
            }
        }
    }
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, call, "comm_store_start");
}

int comm_store_test(struct comm_store *s, int *done, struct pt_err *e)
{
    *done = 1;
    if (s->nreq == 0)
        return 0;
    int rc = MPI_Testall(s->nreq, s->reqs, done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
        s->nreq = 0;
        return comm_mpi_fail(e, rc, "MPI_Testall", "comm_store_test");
    }
    if (*done)
        s->nreq = 0;
    return 0;
}

int comm_store_wait(struct comm_store *s, struct pt_err *e)
{
    if (s->nreq == 0)
        return 0;
    int rc = MPI_Waitall(s->nreq, s->reqs, MPI_STATUSES_IGNORE);
    s->nreq = 0;
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Waitall", "comm_store_wait");
}

int comm_store_complete(struct comm_store *s, struct pt_err *e)
{
    int rc = comm_store_wait(s, e);
    if (rc)
        return rc;
    int mrc = MPI_Win_flush_all(s->win);
    return mrc == MPI_SUCCESS ? 0
                              : comm_mpi_fail(e, mrc, "MPI_Win_flush_all", "comm_store_complete");
}

int comm_store_write_own(struct comm_store *s, const float *full, struct pt_err *e)
{
    int r = s->c->rank, rc = MPI_SUCCESS;
    for (size_t off = 0; off < s->count[r] && rc == MPI_SUCCESS; off += s->piece) {
        size_t left = s->count[r] - off;
        int k = (int)(left < s->piece ? left : s->piece);
        rc = MPI_Accumulate(full + s->first[r] + off, k, MPI_FLOAT, r, (MPI_Aint)off, k, MPI_FLOAT,
                            MPI_REPLACE, s->win);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(r, s->win);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Accumulate", "comm_store_write_own");
}

int comm_store_count(struct comm_store *s, long long add, long long *before, struct pt_err *e)
{
    int64_t a = add, old = 0;
    int rc = MPI_Fetch_and_op(&a, &old, MPI_INT64_T, 0, 0, add ? MPI_SUM : MPI_NO_OP, s->cwin);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(0, s->cwin);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Fetch_and_op", "comm_store_count");
    *before = (long long)old;
    return 0;
}

int comm_store_poke(struct comm_store *s, struct pt_err *e)
{
    int flag = 0;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s->c->mc, &flag, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Iprobe", "comm_store_poke");
}
