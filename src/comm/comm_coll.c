/* Blocking collectives; see comm.h.
 *
 * Large counts:
 *   allreduce, bcast, reduce   pieces of at most c->piece elements, one MPI call each
 *   reduce_scatter             MPI_Reduce_scatter when every count and their sum fit,
 *                              else one (pieced) reduce per rank to that rank
 *   allgather, gather,         one call when size * n fits; else rounds of m elements
 *   scatter, alltoall          per rank (size * m <= piece), the blocks of the rounds being
 *                              contiguous(m) datatypes resized to the stride n
 *   allgatherv, alltoallv      MPI_Allgatherv/Alltoallv when counts and displacements fit,
 *                              else MPI_Alltoallw over struct datatypes (comm_types.c) */
#include "comm/comm_internal.h"

#include <stdlib.h>

/* p + off elements, NULL stays NULL (arguments that only the root reads). */
static const char *at(const void *p, size_t off, size_t es)
{
    return p ? (const char *)p + off * es : NULL;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static int check_root(const struct comm *c, int root, const char *name, struct pt_err *e)
{
    if (root < 0 || root >= c->size)
        return pt_err_set(e, PT_EINTERNAL, "error: %s: root %d outside 0..%d", name, root,
                          c->size - 1);
    return 0;
}

int comm_allreduce_pieces(MPI_Comm mc, void *buf, size_t n, MPI_Datatype dt, size_t es, MPI_Op op,
                          size_t piece, const char *name, struct pt_err *e)
{
    char *p = buf;
    for (size_t off = 0; off < n; off += piece) {
        int m = (int)min_size(piece, n - off);
        int rc = MPI_Allreduce(MPI_IN_PLACE, p + off * es, m, dt, op, mc);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Allreduce", name);
    }
    return 0;
}

int comm_allreduce(struct comm *c, void *buf, size_t n, enum comm_type t, enum comm_op op,
                   struct pt_err *e)
{
    MPI_Datatype dt;
    MPI_Op mop;
    size_t es = 0;
    int rc = comm_reduction_info(t, op, &dt, &es, &mop, e);
    if (rc != 0)
        return rc;
    if (t == COMM_FLOAT)
        rc = comm_allreduce_float(c, buf, n, mop, c->opt.fp16 && (op == COMM_SUM || op == COMM_AVG),
                                  e);
    else
        rc = comm_allreduce_pieces(c->mc, buf, n, dt, es, mop, c->piece, "comm_allreduce", e);
    if (rc == 0 && op == COMM_AVG)
        comm_divide(buf, n, t, c->size);
    return rc;
}

int comm_allreduce_f32(struct comm *c, float *buf, size_t n, struct pt_err *e)
{
    return comm_allreduce(c, buf, n, COMM_FLOAT, COMM_SUM, e);
}

int comm_allreduce_f64(struct comm *c, double *buf, size_t n, struct pt_err *e)
{
    return comm_allreduce(c, buf, n, COMM_DOUBLE, COMM_SUM, e);
}

int comm_bcast(struct comm *c, void *buf, size_t n, enum comm_type t, int root, struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    int rc = comm_type_info(t, &dt, &es, e);
    if (rc == 0)
        rc = check_root(c, root, "comm_bcast", e);
    for (size_t off = 0; rc == 0 && off < n; off += c->piece) {
        int m = (int)min_size(c->piece, n - off);
        int mrc = MPI_Bcast((char *)buf + off * es, m, dt, root, c->mc);
        if (mrc != MPI_SUCCESS)
            rc = comm_mpi_fail(e, mrc, "MPI_Bcast", "comm_bcast");
    }
    return rc;
}

int comm_bcast_f32(struct comm *c, float *buf, size_t n, int root, struct pt_err *e)
{
    return comm_bcast(c, buf, n, COMM_FLOAT, root, e);
}

/* Pieced MPI_Reduce of n elements; in place at the root when send == recv. */
static int reduce_pieces(struct comm *c, const void *send, void *recv, size_t n, MPI_Datatype dt,
                         size_t es, MPI_Op mop, int root, const char *name, struct pt_err *e)
{
    int me = c->rank == root;
    int in_place = me && send == recv;
    for (size_t off = 0; off < n; off += c->piece) {
        int m = (int)min_size(c->piece, n - off);
        const void *s = in_place ? MPI_IN_PLACE : at(send, off, es);
        void *r = me ? (char *)recv + off * es : NULL;
        int rc = MPI_Reduce(s, r, m, dt, mop, root, c->mc);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Reduce", name);
    }
    return 0;
}

int comm_reduce(struct comm *c, const void *send, void *recv, size_t n, enum comm_type t,
                enum comm_op op, int root, struct pt_err *e)
{
    MPI_Datatype dt;
    MPI_Op mop;
    size_t es = 0;
    int rc = comm_reduction_info(t, op, &dt, &es, &mop, e);
    if (rc == 0)
        rc = check_root(c, root, "comm_reduce", e);
    if (rc == 0)
        rc = reduce_pieces(c, send, recv, n, dt, es, mop, root, "comm_reduce", e);
    if (rc == 0 && op == COMM_AVG && c->rank == root)
        comm_divide(recv, n, t, c->size);
    return rc;
}

int comm_reduce_scatter(struct comm *c, const void *send, void *recv, const size_t *counts,
                        enum comm_type t, enum comm_op op, struct pt_err *e)
{
    MPI_Datatype dt;
    MPI_Op mop;
    size_t es = 0;
    int rc = comm_reduction_info(t, op, &dt, &es, &mop, e);
    if (rc != 0)
        return rc;
    size_t total = 0;
    for (int r = 0; r < c->size; r++)
        total += counts[r];
    if (total <= c->piece) {
        int *ints = pt_malloc((size_t)c->size * sizeof(int), e);
        if (!ints)
            return PT_ENOMEM;
        comm_to_ints(ints, counts, c->size);
        int mrc = MPI_Reduce_scatter(send, recv, ints, dt, mop, c->mc);
        free(ints);
        if (mrc != MPI_SUCCESS)
            return comm_mpi_fail(e, mrc, "MPI_Reduce_scatter", "comm_reduce_scatter");
    } else {
        size_t off = 0;
        for (int r = 0; rc == 0 && r < c->size; r++) {
            rc = reduce_pieces(c, at(send, off, es), r == c->rank ? recv : NULL, counts[r], dt, es,
                               mop, r, "comm_reduce_scatter", e);
            off += counts[r];
        }
        if (rc != 0)
            return rc;
    }
    if (op == COMM_AVG)
        comm_divide(recv, counts[c->rank], t, c->size);
    return 0;
}

enum fixed_kind { FIXED_ALLGATHER, FIXED_GATHER, FIXED_SCATTER, FIXED_ALLTOALL };
static const char *const fixed_call[] = {"MPI_Allgather", "MPI_Gather", "MPI_Scatter",
                                         "MPI_Alltoall"};

/* One round: m elements per rank from offset off of each block; the strided side moves
 * count `bc` of `blk` (n of dt in one call, or 1 of a resized contiguous(m)). */
static int fixed_call_one(struct comm *c, enum fixed_kind k, const char *s, char *r, int m,
                          MPI_Datatype dt, int bc, MPI_Datatype blk, int root)
{
    switch (k) {
    case FIXED_ALLGATHER: return MPI_Allgather(s, m, dt, r, bc, blk, c->mc);
    case FIXED_GATHER: return MPI_Gather(s, m, dt, r, bc, blk, root, c->mc);
    case FIXED_SCATTER: return MPI_Scatter(s, bc, blk, r, m, dt, root, c->mc);
    case FIXED_ALLTOALL: return MPI_Alltoall(s, bc, blk, r, bc, blk, c->mc);
    }
    return MPI_ERR_OTHER;
}

/* contiguous(m) of dt, resized to the extent of n elements: block r of a round lands at
 * r * n elements past the round's base. */
static int stride_type(MPI_Datatype dt, size_t es, size_t m, size_t n, MPI_Datatype *out)
{
    MPI_Datatype tmp;
    int rc = MPI_Type_contiguous((int)m, dt, &tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Type_create_resized(tmp, 0, (MPI_Aint)(n * es), out);
    MPI_Type_free(&tmp);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Type_commit(out);
        if (rc != MPI_SUCCESS)
            MPI_Type_free(out);
    }
    return rc;
}

static int fixed(struct comm *c, enum fixed_kind k, const void *send, size_t n, void *recv,
                 enum comm_type t, int root, const char *name, struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    int rc = comm_type_info(t, &dt, &es, e);
    if (rc == 0 && (k == FIXED_GATHER || k == FIXED_SCATTER))
        rc = check_root(c, root, name, e);
    if (rc != 0 || n == 0)
        return rc;
    size_t per = c->piece / (size_t)c->size;
    size_t step = n <= per ? n : per > 0 ? per : 1;
    for (size_t off = 0; off < n; off += step) {
        size_t m = min_size(step, n - off);
        MPI_Datatype blk = dt;
        int bc = (int)m, made = 0, mrc = MPI_SUCCESS;
        if (step < n) {
            mrc = stride_type(dt, es, m, n, &blk);
            made = mrc == MPI_SUCCESS;
            bc = 1;
        }
        if (mrc == MPI_SUCCESS)
            mrc = fixed_call_one(c, k, at(send, off, es), (char *)at(recv, off, es), (int)m, dt, bc,
                                 blk, root);
        if (made)
            MPI_Type_free(&blk);
        if (mrc != MPI_SUCCESS)
            return comm_mpi_fail(e, mrc, fixed_call[k], name);
    }
    return 0;
}

int comm_allgather(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t,
                   struct pt_err *e)
{
    return fixed(c, FIXED_ALLGATHER, send, n, recv, t, 0, "comm_allgather", e);
}

int comm_gather(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t, int root,
                struct pt_err *e)
{
    return fixed(c, FIXED_GATHER, send, n, c->rank == root ? recv : NULL, t, root, "comm_gather",
                 e);
}

int comm_scatter(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t, int root,
                 struct pt_err *e)
{
    return fixed(c, FIXED_SCATTER, c->rank == root ? send : NULL, n, recv, t, root, "comm_scatter",
                 e);
}

int comm_alltoall(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t,
                  struct pt_err *e)
{
    return fixed(c, FIXED_ALLTOALL, send, n, recv, t, 0, "comm_alltoall", e);
}

int comm_allgatherv(struct comm *c, const void *send, size_t n, void *recv, const size_t *counts,
                    const size_t *displs, enum comm_type t, struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    struct comm_vargs v;
    int rc = comm_type_info(t, &dt, &es, e);
    if (rc == 0)
        rc = comm_vargs_allgatherv(c, send, n, recv, counts, displs, dt, es, &v, "comm_allgatherv",
                                   e);
    if (rc != 0)
        return rc;
    int mrc;
    const struct comm_wplan *p = &v.plan;
    if (v.big) {
        mrc = MPI_Alltoallw(recv, p->scounts, p->sdispls, p->stypes, MPI_BOTTOM, p->rcounts,
                            p->rdispls, p->rtypes, c->mc);
    } else {
        int in_place = send == (const char *)recv + displs[c->rank] * es;
        mrc = MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, (int)n, dt, recv, v.ints,
                             v.ints + c->size, dt, c->mc);
    }
    comm_vargs_free(&v);
    if (mrc != MPI_SUCCESS)
        return comm_mpi_fail(e, mrc, v.big ? "MPI_Alltoallw" : "MPI_Allgatherv", "comm_allgatherv");
    return 0;
}

int comm_alltoallv(struct comm *c, const void *send, const size_t *scounts, const size_t *sdispls,
                   void *recv, const size_t *rcounts, const size_t *rdispls, enum comm_type t,
                   struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    struct comm_vargs v;
    int rc = comm_type_info(t, &dt, &es, e);
    if (rc == 0)
        rc = comm_vargs_alltoallv(c, scounts, sdispls, rcounts, rdispls, dt, es, &v,
                                  "comm_alltoallv", e);
    if (rc != 0)
        return rc;
    int mrc;
    const struct comm_wplan *p = &v.plan;
    int *ints = v.ints;
    int n = c->size;
    if (v.big)
        mrc = MPI_Alltoallw(send, p->scounts, p->sdispls, p->stypes, recv, p->rcounts, p->rdispls,
                            p->rtypes, c->mc);
    else
        mrc = MPI_Alltoallv(send, ints, ints + n, dt, recv, ints + 2 * n, ints + 3 * n, dt, c->mc);
    comm_vargs_free(&v);
    if (mrc != MPI_SUCCESS)
        return comm_mpi_fail(e, mrc, v.big ? "MPI_Alltoallw" : "MPI_Alltoallv", "comm_alltoallv");
    return 0;
}
