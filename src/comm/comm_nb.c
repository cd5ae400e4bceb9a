/* Nonblocking operations; see comm.h.
 *
 * A request holds every MPI request of one operation (several for a pieced iallreduce or
 * ibcast), whatever the operation reads until it completes (int count arrays, derived
 * datatypes, the fp16 copy of the data) and the work left for completion:
 *   1. MPI_Waitall / MPI_Testall over its MPI requests
 *   2. fp16: unpack the half buffer into the caller's floats
 *   3. COMM_AVG: divide by the communicator size
 *   4. free everything; *req = NULL
 * If posting fails after some pieces are in flight, the request's memory is left alone
 * (MPI may still write the fp16 buffer): a failed MPI call leaves the communicator fit
 * only for comm_abort. */
#include "comm/comm_internal.h"

#include <stdlib.h>
#include <string.h>

struct comm_req {
    struct comm *c;
    const char *name; /* the comm_* function, for messages */
    int count;        /* MPI requests posted */
    MPI_Request *reqs;
    void *buf; /* completion work on buf[0..n) of type t */
    size_t n;
    enum comm_type t;
    int avg;
    uint16_t *half;      /* fp16: the data in flight, unpacked into (float *)buf */
    struct comm_vargs v; /* count arrays / datatypes of iallgatherv and ialltoallv */
    MPI_Datatype p2p;    /* a comm_big_type of isend/irecv, or MPI_DATATYPE_NULL */
};

static struct comm_req *req_new(struct comm *c, size_t nreq, const char *name, struct pt_err *e)
{
    struct comm_req *r = pt_calloc(1, sizeof *r, e);
    if (!r)
        return NULL;
    r->reqs = pt_malloc((nreq > 0 ? nreq : 1) * sizeof *r->reqs, e);
    if (!r->reqs) {
        free(r);
        return NULL;
    }
    r->c = c;
    r->name = name;
    r->p2p = MPI_DATATYPE_NULL;
    return r;
}

static void req_free(struct comm_req *r)
{
    free(r->reqs);
    free(r->half);
    comm_vargs_free(&r->v);
    if (r->p2p != MPI_DATATYPE_NULL)
        MPI_Type_free(&r->p2p);
    free(r);
}

/* Posting failed: record it; free r unless MPI may still use its memory. */
static int req_post_fail(struct comm_req *r, int mrc, const char *call, struct pt_err *e)
{
    int rc = comm_mpi_fail(e, mrc, call, r->name);
    if (r->count == 0)
        req_free(r);
    return rc;
}

/* Steps 2 to 4 once the MPI requests completed (or failed: mrc). */
static int req_finish(struct comm_req **req, int mrc, const char *call, struct pt_err *e)
{
    struct comm_req *r = *req;
    *req = NULL;
    int rc = 0;
    if (mrc != MPI_SUCCESS) {
        rc = comm_mpi_fail(e, mrc, call, r->name);
    } else {
        if (r->half)
            bk_half_unpack(r->buf, r->half, r->n);
        if (r->avg)
            comm_divide(r->buf, r->n, r->t, r->c->size);
    }
    req_free(r);
    return rc;
}

int comm_wait(struct comm_req **req, struct pt_err *e)
{
    if (!req || !*req)
        return 0;
    int mrc = MPI_Waitall((*req)->count, (*req)->reqs, MPI_STATUSES_IGNORE);
    return req_finish(req, mrc, "MPI_Waitall", e);
}

int comm_test(struct comm_req **req, int *done, struct pt_err *e)
{
    *done = 1;
    if (!req || !*req)
        return 0;
    int flag = 0;
    int mrc = MPI_Testall((*req)->count, (*req)->reqs, &flag, MPI_STATUSES_IGNORE);
    if (mrc == MPI_SUCCESS && !flag) {
        *done = 0;
        return 0;
    }
    return req_finish(req, mrc, "MPI_Testall", e);
}

enum piece_kind { PIECE_IALLREDUCE, PIECE_IBCAST };

/* Post one MPI request per piece of data[0..n). */
static int post_pieces(struct comm_req *r, enum piece_kind k, char *data, size_t n, MPI_Datatype dt,
                       size_t es, MPI_Op op, int root, struct pt_err *e)
{
    struct comm *c = r->c;
    for (size_t off = 0; off < n; off += c->piece) {
        int m = (int)(n - off < c->piece ? n - off : c->piece);
        MPI_Request *q = &r->reqs[r->count];
        int mrc = k == PIECE_IALLREDUCE
                      ? MPI_Iallreduce(MPI_IN_PLACE, data + off * es, m, dt, op, c->mc, q)
                      : MPI_Ibcast(data + off * es, m, dt, root, c->mc, q);
        if (mrc != MPI_SUCCESS)
            return req_post_fail(r, mrc, k == PIECE_IALLREDUCE ? "MPI_Iallreduce" : "MPI_Ibcast",
                                 e);
        r->count++;
    }
    return 0;
}

int comm_iallreduce(struct comm *c, void *buf, size_t n, enum comm_type t, enum comm_op op,
                    struct comm_req **req, struct pt_err *e)
{
    MPI_Datatype dt;
    MPI_Op mop;
    size_t es = 0;
    *req = NULL;
    int rc = comm_reduction_info(t, op, &dt, &es, &mop, e);
    if (rc != 0)
        return rc;
    struct comm_req *r = req_new(c, (n + c->piece - 1) / c->piece, "comm_iallreduce", e);
    if (!r)
        return PT_ENOMEM;
    r->buf = buf;
    r->n = n;
    r->t = t;
    r->avg = op == COMM_AVG;
    char *data = buf;
    if (t == COMM_FLOAT && c->opt.fp16 && (op == COMM_SUM || op == COMM_AVG)) {
        r->half = pt_malloc((n > 0 ? n : 1) * sizeof *r->half, e);
        if (!r->half) {
            req_free(r);
            return PT_ENOMEM;
        }
        bk_half_pack(r->half, buf, n);
        data = (char *)r->half;
        dt = c->half_type;
        es = sizeof *r->half;
        mop = c->half_sum;
    }
    rc = post_pieces(r, PIECE_IALLREDUCE, data, n, dt, es, mop, 0, e);
    if (rc == 0)
        *req = r;
    return rc;
}

int comm_iallreduce_half(struct comm *c, uint16_t *buf, size_t n, struct comm_req **req,
                         struct pt_err *e)
{
    *req = NULL;
    struct comm_req *r = req_new(c, (n + c->piece - 1) / c->piece, "comm_iallreduce", e);
    if (!r)
        return PT_ENOMEM;
    int rc = post_pieces(r, PIECE_IALLREDUCE, (char *)buf, n, c->half_type, sizeof *buf,
                         c->half_sum, 0, e);
    if (rc == 0)
        *req = r;
    return rc;
}

int comm_ibcast(struct comm *c, void *buf, size_t n, enum comm_type t, int root,
                struct comm_req **req, struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    *req = NULL;
    int rc = comm_type_info(t, &dt, &es, e);
    if (rc != 0)
        return rc;
    if (root < 0 || root >= c->size)
        return pt_err_set(e, PT_EINTERNAL, "error: comm_ibcast: root %d outside 0..%d", root,
                          c->size - 1);
    struct comm_req *r = req_new(c, (n + c->piece - 1) / c->piece, "comm_ibcast", e);
    if (!r)
        return PT_ENOMEM;
    rc = post_pieces(r, PIECE_IBCAST, buf, n, dt, es, MPI_OP_NULL, root, e);
    if (rc == 0)
        *req = r;
    return rc;
}

int comm_iallgatherv(struct comm *c, const void *send, size_t n, void *recv, const size_t *counts,
                     const size_t *displs, enum comm_type t, struct comm_req **req,
                     struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    *req = NULL;
    int rc = comm_type_info(t, &dt, &es, e);
    struct comm_req *r = rc == 0 ? req_new(c, 1, "comm_iallgatherv", e) : NULL;
    if (!r)
        return rc != 0 ? rc : PT_ENOMEM;
    rc = comm_vargs_allgatherv(c, send, n, recv, counts, displs, dt, es, &r->v, r->name, e);
    if (rc != 0) {
        req_free(r);
        return rc;
    }
    const struct comm_wplan *p = &r->v.plan;
    int mrc;
    if (r->v.big) {
        mrc = MPI_Ialltoallw(recv, p->scounts, p->sdispls, p->stypes, MPI_BOTTOM, p->rcounts,
                             p->rdispls, p->rtypes, c->mc, &r->reqs[0]);
    } else {
        int in_place = send == (const char *)recv + displs[c->rank] * es;
        mrc = MPI_Iallgatherv(in_place ? MPI_IN_PLACE : send, (int)n, dt, recv, r->v.ints,
                              r->v.ints + c->size, dt, c->mc, &r->reqs[0]);
    }
    if (mrc != MPI_SUCCESS)
        return req_post_fail(r, mrc, r->v.big ? "MPI_Ialltoallw" : "MPI_Iallgatherv", e);
    r->count = 1;
    *req = r;
    return 0;
}

int comm_ialltoallv(struct comm *c, const void *send, const size_t *scounts, const size_t *sdispls,
                    void *recv, const size_t *rcounts, const size_t *rdispls, enum comm_type t,
                    struct comm_req **req, struct pt_err *e)
{
    MPI_Datatype dt;
    size_t es = 0;
    *req = NULL;
    int rc = comm_type_info(t, &dt, &es, e);
    struct comm_req *r = rc == 0 ? req_new(c, 1, "comm_ialltoallv", e) : NULL;
    if (!r)
        return rc != 0 ? rc : PT_ENOMEM;
    rc = comm_vargs_alltoallv(c, scounts, sdispls, rcounts, rdispls, dt, es, &r->v, r->name, e);
    if (rc != 0) {
        req_free(r);
        return rc;
    }
    const struct comm_wplan *p = &r->v.plan;
    const int *ints = r->v.ints;
    int n = c->size, mrc;
    if (r->v.big)
        mrc = MPI_Ialltoallw(send, p->scounts, p->sdispls, p->stypes, recv, p->rcounts, p->rdispls,
                             p->rtypes, c->mc, &r->reqs[0]);
    else
        mrc = MPI_Ialltoallv(send, ints, ints + n, dt, recv, ints + 2 * n, ints + 3 * n, dt, c->mc,
                             &r->reqs[0]);
    if (mrc != MPI_SUCCESS)
        return req_post_fail(r, mrc, r->v.big ? "MPI_Ialltoallw" : "MPI_Ialltoallv", e);
    r->count = 1;
    *req = r;
    return 0;
}

/* isend (send set) or irecv. */
static int p2p_post(struct comm *c, const void *send, void *recv, size_t n, enum comm_type t,
                    int peer, int tag, struct comm_req **req, struct pt_err *e)
{
    const char *name = send ? "comm_isend" : "comm_irecv";
    int count = 0, made = 0;
    MPI_Datatype type;
    *req = NULL;
    int rc = comm_p2p_args(c, n, t, peer, tag, !send, &count, &type, &made, name, e);
    if (rc != 0)
        return rc;
    struct comm_req *r = req_new(c, 1, name, e);
    if (!r) {
        if (made)
            MPI_Type_free(&type);
        return PT_ENOMEM;
    }
    if (made)
        r->p2p = type;
    int mrc;
    if (send)
        mrc = MPI_Isend(send, count, type, peer, tag, c->mc, &r->reqs[0]);
    else
        mrc = MPI_Irecv(recv, count, type, peer == COMM_ANY_SOURCE ? MPI_ANY_SOURCE : peer, tag,
                        c->mc, &r->reqs[0]);
    if (mrc != MPI_SUCCESS)
        return req_post_fail(r, mrc, send ? "MPI_Isend" : "MPI_Irecv", e);
    r->count = 1;
    *req = r;
    return 0;
}

int comm_isend(struct comm *c, const void *buf, size_t n, enum comm_type t, int dest, int tag,
               struct comm_req **req, struct pt_err *e)
{
    static const char empty = 0; /* a non-NULL send pointer even for n == 0 */
    return p2p_post(c, buf ? buf : &empty, NULL, n, t, dest, tag, req, e);
}

int comm_irecv(struct comm *c, void *buf, size_t n, enum comm_type t, int src, int tag,
               struct comm_req **req, struct pt_err *e)
{
    return p2p_post(c, NULL, buf, n, t, src, tag, req, e);
}
