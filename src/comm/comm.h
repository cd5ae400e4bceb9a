/* The communicator: the only module that calls MPI.
 *
 * comm_init starts MPI and works on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN,
 * so every MPI failure comes back as an error code that is checked and turned into a
 * pt_err naming the operation. All counts are size_t: counts above INT_MAX elements are
 * moved in pieces (or with derived datatypes), never truncated.
 *
 * Collectives must be called by every rank of the communicator, in the same order, with
 * matching counts; a mismatch is the caller's bug (MPI may report it or hang).
 *
 * Floating-point sums: MPI_Allreduce gives every rank the bit-identical result for a given
 * communicator and count (Open MPI's algorithms reduce in a rank-independent order and
 * broadcast one result). The hierarchical and fp16 variants keep that property: one rank
 * computes each final value and the others receive it.
 *
 * Failures: argument errors (unknown type or op, COMM_AVG on integers, a rank or root
 * outside the communicator, a negative tag) return PT_EINTERNAL before any MPI call. An
 * MPI failure returns PT_ESYS naming the call, "error: MPI_Alltoallv (comm_alltoallv)
 * failed: <MPI's message>"; the communicator is then fit only for comm_abort (other ranks
 * may be inside the same collective). */
#ifndef PT_COMM_COMM_H
#define PT_COMM_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct comm;

enum comm_type { COMM_FLOAT, COMM_DOUBLE, COMM_INT, COMM_INT64, COMM_BYTE };
/* COMM_AVG: the sum divided by the communicator size (COMM_FLOAT and COMM_DOUBLE only). */
enum comm_op { COMM_SUM, COMM_AVG, COMM_MIN, COMM_MAX };

/* How comm_allreduce / comm_allreduce_list move COMM_FLOAT data. */
struct comm_options {
    /* Hierarchical allreduce (reduce within the node, allreduce among node leaders,
     * broadcast within the node): -1 automatic (on when ranks span more than one node
     * and some node holds more than one rank), 0 off, 1 on. */
    int hierarchical;
    /* fp16 transport for COMM_SUM and COMM_AVG (MIN and MAX stay exact in float): convert
     * to IEEE half (round to nearest even), reduce in half-precision sums (each pair added
     * in float, rounded back to half), convert back. Halves the bytes; loses precision:
     * about 3 decimal digits, magnitudes above 65504 become inf. */
    int fp16;
    /* Bucket size for comm_allreduce_list, in bytes (0: 4 MiB). */
    size_t bucket_bytes;
    /* Testing: pretend nodes hold this many consecutive ranks (0: the real nodes from
     * MPI_COMM_TYPE_SHARED). Lets one machine exercise the hierarchical path. */
    int ranks_per_node;
    /* Algorithm of large float sums (comm_allreduce with COMM_SUM or COMM_AVG, without
     * fp16; also the leaders' step of the hierarchical allreduce): COMM_ALG_AUTO (the
     * ring where the ranks span several nodes and the buffer holds at least
     * COMM_RING_MIN_BYTES, else MPI's), COMM_ALG_MPI (MPI_Allreduce), COMM_ALG_RING (the
     * pipelined ring of comm_ring.c: reduce-scatter and allgather in segments, many in
     * flight; every rank ends with the same bits). */
    int algorithm;
    /* Segment of the ring, in bytes (0: automatic, see COMM_SEGMENT_BYTES). */
    size_t segment_bytes;
};

enum { COMM_ALG_AUTO = 0, COMM_ALG_MPI = 1, COMM_ALG_RING = 2 };
/* The ring's largest automatic segment: Open MPI's TCP transport sends a message whose
 * bytes and match header fit its eager limit (btl_tcp_eager_limit, 64 KiB by default) at
 * once, a larger one only after a rendezvous round trip that waits behind the data queued
 * on a busy link. The automatic segment is the smaller of this and the eager limit less
 * COMM_EAGER_MARGIN (the header: 49-64 bytes, measured; with room), the smallest any rank
 * read. And the smallest buffer auto sends through the ring. */
#define COMM_SEGMENT_BYTES  ((size_t)64 << 10)
#define COMM_EAGER_MARGIN   ((size_t)128)
#define COMM_RING_MIN_BYTES ((size_t)256 << 10)

/* Start MPI (MPI_Init_thread, FUNNELED) and return the world communicator; NULL with e
 * set on failure. Call once, from main. Options start as {-1, 0, 0, 0}. */
struct comm *comm_init(int *argc, char ***argv, struct pt_err *e);

/* Set the options (collective: every rank must pass the same values; the node split is
 * recomputed when ranks_per_node changes). */
int comm_set_options(struct comm *c, const struct comm_options *o, struct pt_err *e);
/* The ring's segment in bytes: the option, or the automatic size all ranks agreed on. */
size_t comm_ring_segment_bytes(const struct comm *c);

int comm_rank(const struct comm *c);
int comm_size(const struct comm *c);
/* This rank's index among the ranks of its node, and how many ranks the node has. */
int comm_local_rank(const struct comm *c);
int comm_local_size(const struct comm *c);
/* This node's index among the nodes (ordered by their lowest rank), and the node count. */
int comm_node_rank(const struct comm *c);
int comm_node_count(const struct comm *c);
/* The MPI library this program was built with, as CNTK's build info names it: its
 * distribution ("Open MPI") and version ("4.1.4"). No MPI call; any time. */
void comm_library(char *name, size_t name_size, char *version, size_t version_size);

/* Collective: every rank passes its status (0 or a negative error code). Returns the
 * status of the lowest failing rank (0 when all succeeded) and puts that rank in
 * *first_failed (-1 when none). Used to report an error once and stop every rank cleanly
 * at points all ranks reach. */
int comm_agree(struct comm *c, int status, int *first_failed, struct pt_err *e);

int comm_barrier(struct comm *c, struct pt_err *e);

/* In-place reduction over all ranks of buf[0..n). COMM_FLOAT data follows the options
 * (hierarchical, fp16). Every rank ends with bit-identical results. */
int comm_allreduce(struct comm *c, void *buf, size_t n, enum comm_type t, enum comm_op op,
                   struct pt_err *e);
/* In-place sum over all ranks of n IEEE binary16 values (useFp16AllReduce: the caller
 * packed them, e.g. with the backend's half_out; each partial sum is rounded to half),
 * hierarchical when the options say so. Bit-identical on every rank. */
int comm_allreduce_half(struct comm *c, uint16_t *buf, size_t n, struct pt_err *e);
/* Shorthands kept for the training loop: in-place sums. */
int comm_allreduce_f32(struct comm *c, float *buf, size_t n, struct pt_err *e);
int comm_allreduce_f64(struct comm *c, double *buf, size_t n, struct pt_err *e);

/* In-place float reduction of `count` buffers bufs[i][0..ns[i]): consecutive buffers are
 * packed into a bucket of at most bucket_bytes (a buffer larger than a bucket goes alone,
 * in place, without a copy), one comm_allreduce per bucket, results unpacked. The same
 * values as one comm_allreduce per buffer, except that MPI may sum in another order for
 * another message size (still bit-identical on every rank). The bucket is kept in c for
 * the next call and freed with c. */
int comm_allreduce_list(struct comm *c, float *const *bufs, const size_t *ns, size_t count,
                        enum comm_op op, struct pt_err *e);

/* Rank root's buf[0..n) to everybody. */
int comm_bcast(struct comm *c, void *buf, size_t n, enum comm_type t, int root, struct pt_err *e);
int comm_bcast_f32(struct comm *c, float *buf, size_t n, int root, struct pt_err *e);

/* Reduce send[0..n) of every rank into recv[0..n) at root (recv is ignored elsewhere).
 * send == recv at root is allowed (in place). */
int comm_reduce(struct comm *c, const void *send, void *recv, size_t n, enum comm_type t,
                enum comm_op op, int root, struct pt_err *e);
/* Reduce send (sum of counts[] elements) elementwise over ranks; rank r receives the
 * counts[r] elements starting at sum(counts[0..r)) in recv. */
int comm_reduce_scatter(struct comm *c, const void *send, void *recv, const size_t *counts,
                        enum comm_type t, enum comm_op op, struct pt_err *e);

/* Every rank contributes n elements; recv holds size * n, rank order. */
int comm_allgather(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t,
                   struct pt_err *e);
/* Rank r contributes counts[r] elements (n must equal counts[rank]), placed at recv +
 * displs[r] (in elements). send may point into recv at displs[rank] (in place). */
int comm_allgatherv(struct comm *c, const void *send, size_t n, void *recv, const size_t *counts,
                    const size_t *displs, enum comm_type t, struct pt_err *e);
/* Root receives size * n elements in rank order (recv ignored elsewhere). */
int comm_gather(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t, int root,
                struct pt_err *e);
/* Root's send holds size * n elements; rank r receives block r. */
int comm_scatter(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t, int root,
                 struct pt_err *e);
/* Block r of send (n elements each) goes to rank r; recv block r comes from rank r. */
int comm_alltoall(struct comm *c, const void *send, size_t n, void *recv, enum comm_type t,
                  struct pt_err *e);
/* Variable-size all-to-all; counts and displacements in elements, one per rank. */
int comm_alltoallv(struct comm *c, const void *send, const size_t *scounts, const size_t *sdispls,
                   void *recv, const size_t *rcounts, const size_t *rdispls, enum comm_type t,
                   struct pt_err *e);

/* Point to point (blocking). src may be COMM_ANY_SOURCE; *from (may be NULL) receives
 * the sender. tag >= 0. */
#define COMM_ANY_SOURCE (-1)
int comm_send(struct comm *c, const void *buf, size_t n, enum comm_type t, int dest, int tag,
              struct pt_err *e);
int comm_recv(struct comm *c, void *buf, size_t n, enum comm_type t, int src, int tag, int *from,
              struct pt_err *e);

/* Split into groups (collective): ranks with the same color form a communicator, ordered
 * by key then old rank. color < 0: this rank joins none and *out is NULL. The new
 * communicator inherits the options, computes its own node split (here, collectively)
 * and is freed with comm_free (NULL: no-op), before comm_finalize of its parent. */
int comm_split(struct comm *c, int color, int key, struct comm **out, struct pt_err *e);
void comm_free(struct comm *sub);

/* Nonblocking operations. Each starts the operation and returns a request in *req (NULL
 * on failure); buffers must stay untouched until comm_wait returns, or comm_test reports
 * done (count and displacement arrays are copied: they may go at once). Nonblocking
 * collectives must be started in the same order on every rank; they may complete in any
 * order. comm_wait completes and frees the request and sets *req to NULL (req or *req
 * NULL: no-op); comm_test sets *done and, when done, frees it and sets *req to NULL (no
 * request: done). A request that fails in comm_wait / comm_test is freed as well.
 * COMM_AVG divides when the request completes. comm_iallreduce of COMM_FLOAT honours
 * fp16 (the request owns the half copy and converts back on completion) but is always
 * flat (not hierarchical). comm_irecv from COMM_ANY_SOURCE does not report the sender. */
struct comm_req;
int comm_iallreduce(struct comm *c, void *buf, size_t n, enum comm_type t, enum comm_op op,
                    struct comm_req **req, struct pt_err *e);
/* comm_allreduce_half, nonblocking (always flat). */
int comm_iallreduce_half(struct comm *c, uint16_t *buf, size_t n, struct comm_req **req,
                         struct pt_err *e);
int comm_ibcast(struct comm *c, void *buf, size_t n, enum comm_type t, int root,
                struct comm_req **req, struct pt_err *e);
int comm_iallgatherv(struct comm *c, const void *send, size_t n, void *recv, const size_t *counts,
                     const size_t *displs, enum comm_type t, struct comm_req **req,
                     struct pt_err *e);
int comm_ialltoallv(struct comm *c, const void *send, const size_t *scounts, const size_t *sdispls,
                    void *recv, const size_t *rcounts, const size_t *rdispls, enum comm_type t,
                    struct comm_req **req, struct pt_err *e);
int comm_isend(struct comm *c, const void *buf, size_t n, enum comm_type t, int dest, int tag,
               struct comm_req **req, struct pt_err *e);
int comm_irecv(struct comm *c, void *buf, size_t n, enum comm_type t, int src, int tag,
               struct comm_req **req, struct pt_err *e);
int comm_test(struct comm_req **req, int *done, struct pt_err *e);
int comm_wait(struct comm_req **req, struct pt_err *e);

/* A sharded store of n floats in one-sided memory (MPI-3 RMA, passive target): the
 * parameter server of DataParallelASGD. Every rank hosts one contiguous shard (n / size
 * floats, the first n % size ranks one more) and any rank adds to or reads from all of
 * them without the owners taking part: on one node (Open MPI osc/sm) the origin does the
 * work in shared memory. Adds are element-wise atomic (concurrent adds are never lost);
 * a read of a shard is atomic against adds to it, element by element. A rank 0 counter
 * (int64) numbers pushes. The store starts zeroed. */
struct comm_store;
/* Collective. */
int comm_store_new(struct comm *c, size_t n, struct comm_store **out, struct pt_err *e);
/* Collective (NULL: no-op); nothing may be in flight. */
void comm_store_free(struct comm_store *s);
/* Rank r's shard: elements [*first, *first + *count) of the flat vector. */
void comm_store_shard(const struct comm_store *s, int rank, size_t *first, size_t *count);
/* Start adding add[0..n) to the store (add NULL: no add), then reading all of it into
 * get[0..n) (get NULL: no read); the read includes this add. Nonblocking: both buffers
 * stay untouched until comm_store_wait, or comm_store_test reports done. One operation in
 * flight at a time. */
int comm_store_start(struct comm_store *s, const float *add, float *get, struct pt_err *e);
int comm_store_test(struct comm_store *s, int *done, struct pt_err *e);
int comm_store_wait(struct comm_store *s, struct pt_err *e);
/* Wait, then make every add this rank started visible at its target (remote
 * completion). After every rank did this and met in a collective, reads see all adds. */
int comm_store_complete(struct comm_store *s, struct pt_err *e);
/* Replace this rank's shard by full[first..first+count) (the caller keeps others away,
 * e.g. writes before a barrier). */
int comm_store_write_own(struct comm_store *s, const float *full, struct pt_err *e);
/* Let MPI progress others' operations on this rank's shard: needed where the one-sided
 * component works through the owner (Open MPI's osc/pt2pt and osc/ucx without hardware
 * RDMA), free where the origin does the work (osc/sm on one node, osc/rdma). */
int comm_store_poke(struct comm_store *s, struct pt_err *e);
/* Add `add` to the push counter (0: just read it); *before gets its previous value. */
int comm_store_count(struct comm_store *s, long long add, long long *before, struct pt_err *e);

/* Shared memory for ranks of one host (comm_shm.c). comm_all_local (collective): *yes = 1
 * when every rank of c runs on this host (MPI_COMM_TYPE_SHARED). comm_shared_alloc
 * (collective, every rank the same bytes, all ranks local): memory every rank maps, zeroed;
 * every rank fails together, with the reason. comm_shared_free unmaps (local; NULL:
 * no-op). comm_shared_sync (collective): waits for every rank; what any rank wrote before
 * it, every rank sees after it. */
int comm_all_local(struct comm *c, int *yes, struct pt_err *e);
int comm_shared_alloc(struct comm *c, size_t bytes, void **out, struct pt_err *e);
void comm_shared_free(void *p, size_t bytes);
int comm_shared_sync(struct comm *c, struct pt_err *e);

/* End every rank now (MPI_Abort); for failures other ranks cannot know about. */
void comm_abort(struct comm *c, int exit_code) __attribute__((noreturn));

/* Finalize MPI and free c (the world communicator). NULL is a no-op. */
void comm_finalize(struct comm *c);

#endif
