/* Float allreduce variants: hierarchical, fp16 transport, buckets; see comm.h.
 *
 * Hierarchical allreduce (per piece of c->piece elements):
 *   1. MPI_Reduce to local rank 0 over the node communicator (skipped when alone)
 *   2. MPI_Allreduce in place among the node leaders (skipped with one node)
 *   3. MPI_Bcast from local rank 0 over the node communicator (skipped when alone)
 * Each final value is computed by the leaders' allreduce and broadcast, so every rank
 * holds the same bits.
 *
 * fp16 transport (SUM and AVG only; MIN and MAX are exact in float already):
 *   1. pack the float piece into IEEE binary16, round to nearest even
 *   2. allreduce (flat or hierarchical) over a 2-byte datatype with a commutative user
 *      op: h = half(float(a) + float(b)); commutativity of the float add keeps results
 *      rank-independent whatever tree MPI uses
 *   3. unpack into the float buffer (the caller divides for AVG)
 *
 * Buckets (comm_allreduce_list): consecutive small buffers are copied into c->pack until
 * the next one would overflow bucket_bytes; a buffer larger than a bucket flushes the
 * bucket and is reduced alone, in place. */
#include "comm/comm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/half.h"

/* MPI_User_function over the 2-byte type: inout[i] = half(in[i] + inout[i]). */
static void half_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    bk_half_sum(in, inout, (size_t)*len);
}

int comm_half_setup(struct comm *c, struct pt_err *e)
{
    int rc = MPI_Type_contiguous(2, MPI_BYTE, &c->half_type);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&c->half_type);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Type_contiguous", "fp16 datatype");
    rc = MPI_Op_create(half_sum, 1, &c->half_sum);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Op_create", "fp16 sum");
}

void comm_half_release(struct comm *c)
{
    if (c->half_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&c->half_type);
    if (c->half_sum != MPI_OP_NULL)
        MPI_Op_free(&c->half_sum);
}

int comm_hier_active(const struct comm *c)
{
    if (c->opt.hierarchical >= 0)
        return c->opt.hierarchical;
    return c->node_count > 1 && c->max_local > 1;
}

int comm_hier_pieces(struct comm *c, void *buf, size_t n, MPI_Datatype dt, size_t es, MPI_Op op,
                     const char *name, struct pt_err *e)
{
    int in_node = c->local_size > 1, leader = c->local_rank == 0;
    int across = c->leaders != MPI_COMM_NULL && c->node_count > 1;
    for (size_t off = 0; off < n; off += c->piece) {
        int m = (int)(n - off < c->piece ? n - off : c->piece);
        char *b = (char *)buf + off * es;
        int rc = MPI_SUCCESS;
        if (in_node)
            rc = MPI_Reduce(leader ? MPI_IN_PLACE : b, leader ? b : NULL, m, dt, op, 0, c->node);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Reduce", name);
        if (across)
            rc = MPI_Allreduce(MPI_IN_PLACE, b, m, dt, op, c->leaders);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Allreduce", name);
        if (in_node)
            rc = MPI_Bcast(b, m, dt, 0, c->node);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Bcast", name);
    }
    return 0;
}

/* Make c->half hold at least n elements. */
static int half_reserve(struct comm *c, size_t n, struct pt_err *e)
{
    if (c->half_cap >= n)
        return 0;
    uint16_t *h = pt_realloc(c->half, n * sizeof *h, e);
    if (!h)
        return PT_ENOMEM;
    c->half = h;
    c->half_cap = n;
    return 0;
}

int comm_ring_active(const struct comm *c, size_t n)
{
    if (c->opt.algorithm == COMM_ALG_RING)
        return 1;
    return c->opt.algorithm == COMM_ALG_AUTO && c->node_count > 1 &&
           n * sizeof(float) >= COMM_RING_MIN_BYTES;
}

/* The hierarchical sum with the ring among the leaders: reduce in the node, ring, broadcast
 * in the node (the node steps in pieces, the ring in its segments). */
static int hier_ring(struct comm *c, float *buf, size_t n, struct pt_err *e)
{
    const char *name = "comm_allreduce";
    int in_node = c->local_size > 1, leader = c->local_rank == 0;
    for (size_t off = 0; in_node && off < n; off += c->piece) {
        int m = (int)(n - off < c->piece ? n - off : c->piece);
        float *b = buf + off;
        int rc = MPI_Reduce(leader ? MPI_IN_PLACE : b, leader ? b : NULL, m, MPI_FLOAT, MPI_SUM, 0,
                            c->node);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Reduce", name);
    }
    if (c->leaders != MPI_COMM_NULL && c->node_count > 1) {
        int rc = comm_ring_sum(c, c->leaders, buf, n, name, e);
        if (rc)
            return rc;
    }
    for (size_t off = 0; in_node && off < n; off += c->piece) {
        int m = (int)(n - off < c->piece ? n - off : c->piece);
        int rc = MPI_Bcast(buf + off, m, MPI_FLOAT, 0, c->node);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Bcast", name);
    }
    return 0;
}

int comm_allreduce_float(struct comm *c, float *buf, size_t n, MPI_Op op, int fp16,
                         struct pt_err *e)
{
    const char *name = "comm_allreduce";
    int hier = comm_hier_active(c);
    if (!fp16 && op == MPI_SUM && comm_ring_active(c, n))
        return hier ? hier_ring(c, buf, n, e) : comm_ring_sum(c, c->ring, buf, n, name, e);
    if (!fp16)
        return hier ? comm_hier_pieces(c, buf, n, MPI_FLOAT, sizeof(float), op, name, e)
                    : comm_allreduce_pieces(c->mc, buf, n, MPI_FLOAT, sizeof(float), op, c->piece,
                                            name, e);
    size_t step = n < c->piece ? n : c->piece;
    int rc = half_reserve(c, step, e);
    for (size_t off = 0; rc == 0 && off < n; off += step) {
        size_t m = n - off < step ? n - off : step;
        bk_half_pack(c->half, buf + off, m);
        rc = comm_allreduce_half(c, c->half, m, e);
        if (rc == 0)
            bk_half_unpack(buf + off, c->half, m);
    }
    return rc;
}

int comm_allreduce_half(struct comm *c, uint16_t *buf, size_t n, struct pt_err *e)
{
    const char *name = "comm_allreduce";
    if (comm_hier_active(c))
        return comm_hier_pieces(c, buf, n, c->half_type, 2, c->half_sum, name, e);
    return comm_allreduce_pieces(c->mc, buf, n, c->half_type, 2, c->half_sum, c->piece, name, e);
}

/* Reduce the bucket of bufs[from..to) (fill elements in all) through c->pack. */
static int bucket_flush(struct comm *c, float *const *bufs, const size_t *ns, size_t from,
                        size_t to, size_t fill, enum comm_op op, struct pt_err *e)
{
    if (fill == 0)
        return 0;
    if (c->pack_cap < fill) {
        float *p = pt_realloc(c->pack, fill * sizeof *p, e);
        if (!p)
            return PT_ENOMEM;
        c->pack = p;
        c->pack_cap = fill;
    }
    size_t off = 0;
    for (size_t i = from; i < to; i++) {
        if (ns[i])
            memcpy(c->pack + off, bufs[i], ns[i] * sizeof(float));
        off += ns[i];
    }
    int rc = comm_allreduce(c, c->pack, fill, COMM_FLOAT, op, e);
    if (rc != 0)
        return rc;
    off = 0;
    for (size_t i = from; i < to; i++) {
        if (ns[i])
            memcpy(bufs[i], c->pack + off, ns[i] * sizeof(float));
        off += ns[i];
    }
    return 0;
}

int comm_allreduce_list(struct comm *c, float *const *bufs, const size_t *ns, size_t count,
                        enum comm_op op, struct pt_err *e)
{
    MPI_Op mop;
    int rc = comm_op_info(COMM_FLOAT, op, &mop, e);
    size_t bytes = c->opt.bucket_bytes ? c->opt.bucket_bytes : COMM_BUCKET_BYTES;
    size_t cap = bytes / sizeof(float) > 0 ? bytes / sizeof(float) : 1;
    size_t first = 0, fill = 0;
    for (size_t i = 0; rc == 0 && i < count; i++) {
        if (ns[i] > cap) {
            rc = bucket_flush(c, bufs, ns, first, i, fill, op, e);
            if (rc == 0)
                rc = comm_allreduce(c, bufs[i], ns[i], COMM_FLOAT, op, e);
            first = i + 1;
            fill = 0;
            continue;
        }
        if (fill + ns[i] > cap) {
            rc = bucket_flush(c, bufs, ns, first, i, fill, op, e);
            first = i;
            fill = 0;
        }
        fill += ns[i];
    }
    if (rc == 0)
        rc = bucket_flush(c, bufs, ns, first, count, fill, op, e);
    return rc;
}
