/* Private to src/comm (and tests/test_comm.c): the communicator's state and the helpers its
 * files share. Nothing outside src/comm may include this header (it pulls in <mpi.h>). */
#ifndef PT_COMM_COMM_INTERNAL_H
#define PT_COMM_COMM_INTERNAL_H

#include <mpi.h>
#include <stdint.h>

#include "comm/comm.h"
#include "core/half.h"

/* Largest element count handed to one MPI call: MPI counts are int. */
#define COMM_PIECE_MAX ((size_t)1 << 30)
/* Default bucket of comm_allreduce_list. */
#define COMM_BUCKET_BYTES ((size_t)4 << 20)

struct comm {
    MPI_Comm mc; /* duplicate of the parent communicator, MPI_ERRORS_RETURN */
    int rank, size;
    struct comm_options opt;
    /* the node split (comm_node_setup): consecutive or shared-memory groups */
    MPI_Comm node;    /* ranks of this node, MPI_ERRORS_RETURN */
    MPI_Comm leaders; /* local rank 0 of every node; MPI_COMM_NULL on the other ranks */
    int local_rank, local_size, node_rank, node_count;
    int max_local; /* the largest node's rank count */
    /* Elements per MPI call, and the largest count or displacement passed as int.
     * COMM_PIECE_MAX normally; tests lower it through comm_set_piece. */
    size_t piece;
    /* fp16 transport: a 2-byte datatype and the commutative sum over it */
    MPI_Datatype half_type;
    MPI_Op half_sum;
    uint16_t *half; /* scratch of the blocking fp16 allreduce, half_cap elements */
    size_t half_cap;
    float *pack; /* bucket of comm_allreduce_list, pack_cap elements */
    size_t pack_cap;
    MPI_Comm ring;       /* duplicate of mc for the ring's messages */
    size_t ring_segment; /* the ring's default segment in bytes (comm_ring_setup) */
    float *ring_scratch; /* two chunks of the ring's receives, ring_cap elements */
    size_t ring_cap;
};

/* The most segments a ring chunk is cut into (larger segments for larger buffers). */
#define COMM_SEGMENTS_MAX 4096

/* Test hook: move at most `elems` (>= 1) elements per MPI call and pass counts and
 * displacements above it through the large-count paths. 0 restores the default. */
void comm_set_piece(struct comm *c, size_t elems);

/* IEEE 754 binary16 <-> binary32: the kernels are core/half.h's (these names stay for
 * tests/test_comm_hier.c). */
static inline uint16_t comm_half_from_float(float f)
{
    return bk_half_from_float(f);
}
static inline float comm_float_from_half(uint16_t h)
{
    return bk_float_from_half(h);
}

/* Record "error: CALL (NAME) failed: <MPI's message>" and return PT_ESYS (or e's code). */
int comm_mpi_fail(struct pt_err *e, int rc, const char *call, const char *name);

/* The MPI datatype and element size of t; PT_EINTERNAL for an unknown type. */
int comm_type_info(enum comm_type t, MPI_Datatype *dt, size_t *size, struct pt_err *e);
/* The MPI reduction of op on t (COMM_AVG gives MPI_SUM); PT_EINTERNAL for COMM_AVG on a
 * type other than float and double, or an unknown op. */
int comm_op_info(enum comm_type t, enum comm_op op, MPI_Op *mop, struct pt_err *e);
/* Both of the above, for reductions. */
int comm_reduction_info(enum comm_type t, enum comm_op op, MPI_Datatype *dt, size_t *es,
                        MPI_Op *mop, struct pt_err *e);
/* buf[i] /= size, for COMM_FLOAT and COMM_DOUBLE. */
void comm_divide(void *buf, size_t n, enum comm_type t, int size);

/* In-place allreduce of buf[0..n) on mc, in pieces of at most `piece` elements. */
int comm_allreduce_pieces(MPI_Comm mc, void *buf, size_t n, MPI_Datatype dt, size_t es, MPI_Op op,
                          size_t piece, const char *name, struct pt_err *e);
/* Hierarchical (reduce in the node, allreduce among leaders, broadcast in the node),
 * in place, in pieces. */
int comm_hier_pieces(struct comm *c, void *buf, size_t n, MPI_Datatype dt, size_t es, MPI_Op op,
                     const char *name, struct pt_err *e);
/* Whether COMM_FLOAT allreduces go hierarchical under the current options and split. */
int comm_hier_active(const struct comm *c);
/* The float allreduce honouring hierarchical and fp16 (no AVG division). */
int comm_allreduce_float(struct comm *c, float *buf, size_t n, MPI_Op op, int fp16,
                         struct pt_err *e);

/* In-place pipelined ring sum of buf[0..n) over mc (comm_ring.c; c gives the segment
 * size and the scratch). */
int comm_ring_sum(struct comm *c, MPI_Comm mc, float *buf, size_t n, const char *name,
                  struct pt_err *e);
/* The ring's default segment (collective, after the node split: every rank ends with the
 * smallest any rank found): just under Open MPI's TCP eager limit, read through the MPI
 * tool interface where the ranks span several nodes (else Open MPI's default assumed). */
int comm_ring_setup(struct comm *c, struct pt_err *e);
/* Whether a float sum of n elements goes through the ring under the current options. */
int comm_ring_active(const struct comm *c, size_t n);

/* Compute the node split, leaders communicator and node numbering (collective). */
int comm_node_setup(struct comm *c, struct pt_err *e);
void comm_node_release(struct comm *c);
/* Create / free the fp16 datatype and sum operation (local calls). */
int comm_half_setup(struct comm *c, struct pt_err *e);
void comm_half_release(struct comm *c);

/* A datatype covering n elements of dt (size es) starting `disp` bytes past the buffer
 * argument (the displacement is inside the type), built from pieces of at most `piece`
 * elements: one MPI message of any size. */
int comm_big_type(MPI_Datatype dt, size_t es, size_t n, MPI_Aint disp, size_t piece,
                  MPI_Datatype *out, const char *name, struct pt_err *e);

/* Arguments of MPI_Alltoallw that carry a v-collective whose counts or displacements do
 * not fit in int: per peer, count 0 or 1 of a comm_big_type, byte displacement 0. */
struct comm_wplan {
    int *scounts, *sdispls, *rcounts, *rdispls; /* size each */
    MPI_Datatype *stypes, *rtypes;              /* size each; a type is ours where count 1 */
    int size;
};
/* The count arguments of one v-collective: int arrays when everything fits in c->piece,
 * else an Alltoallw plan. */
struct comm_vargs {
    int big;   /* 0: ints for MPI_(I)Allgatherv / MPI_(I)Alltoallv; 1: plan, MPI_(I)Alltoallw */
    int *ints; /* counts, displs (allgatherv) or scounts, sdispls, rcounts, rdispls */
    struct comm_wplan plan;
};
/* Allgatherv: checks n == counts[rank]. On the big path this rank's block is copied to
 * recv + displs[rank] (unless already there); Alltoallw then sends from recv and receives
 * at MPI_BOTTOM (the receive types hold absolute addresses): libnbc takes equal send and
 * receive pointers for MPI_IN_PLACE. */
int comm_vargs_allgatherv(struct comm *c, const void *send, size_t n, void *recv,
                          const size_t *counts, const size_t *displs, MPI_Datatype dt, size_t es,
                          struct comm_vargs *v, const char *name, struct pt_err *e);
int comm_vargs_alltoallv(struct comm *c, const size_t *scounts, const size_t *sdispls,
                         const size_t *rcounts, const size_t *rdispls, MPI_Datatype dt, size_t es,
                         struct comm_vargs *v, const char *name, struct pt_err *e);
void comm_vargs_free(struct comm_vargs *v);

/* Check peer (COMM_ANY_SOURCE allowed when `any`) and tag; the (count, datatype) of an
 * n-element message: n of t's datatype, or one comm_big_type (*made set: the caller frees
 * it) when n is above c->piece. */
int comm_p2p_args(struct comm *c, size_t n, enum comm_type t, int peer, int tag, int any,
                  int *count, MPI_Datatype *type, int *made, const char *name, struct pt_err *e);

/* Whether every one of v[0..n) is at most c->piece (so int counts are safe). */
int comm_fits(const struct comm *c, const size_t *v, int n);
/* ints[i] = (int)v[i] for i < n (each checked by comm_fits first). */
void comm_to_ints(int *ints, const size_t *v, int n);

#endif
