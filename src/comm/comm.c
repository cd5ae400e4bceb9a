/* Communicator life cycle: MPI start-up, options, the node split, failure agreement,
 * barrier, point to point, sub-communicators, abort and finalize; see comm.h.
 *
 * Node split (comm_node_setup), collective over the communicator:
 *   1. node     = MPI_Comm_split_type(SHARED), or consecutive groups of ranks_per_node
 *                 ranks when that option is set; local rank/size come from it
 *   2. leaders  = MPI_Comm_split of the local rank 0s, keyed by rank: the leader of a node
 *                 is its lowest rank, and leaders are ordered by it
 *   3. node rank and node count: the leader's rank and size in `leaders`, broadcast in
 *                 the node; the largest node size: an allreduce (MAX) over the world */
#include "comm/comm_internal.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define PT_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PT_LEAK_CHECK 1
#endif
#endif
#ifdef PT_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

int comm_mpi_fail(struct pt_err *e, int rc, const char *call, const char *name)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS || len < 0)
        len = 0;
    msg[len] = '\0';
    return pt_err_set(e, PT_ESYS, "error: %s (%s) failed: %s", call, name, msg);
}

static void comm_release(struct comm *c)
{
    comm_node_release(c);
    comm_half_release(c);
    if (c->ring != MPI_COMM_NULL)
        MPI_Comm_free(&c->ring);
    if (c->mc != MPI_COMM_NULL)
        MPI_Comm_free(&c->mc);
    free(c->half);
    free(c->pack);
    free(c->ring_scratch);
    c->half = NULL;
    c->pack = NULL;
    c->ring_scratch = NULL;
    c->half_cap = c->pack_cap = c->ring_cap = 0;
}

static int comm_basics(struct comm *c, struct pt_err *e)
{
    int rc = MPI_Comm_set_errhandler(c->mc, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_set_errhandler", "new communicator");
    rc = MPI_Comm_rank(c->mc, &c->rank);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_rank", "new communicator");
    rc = MPI_Comm_size(c->mc, &c->size);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_size", "new communicator");
    rc = MPI_Comm_dup(c->mc, &c->ring);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(c->ring, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_dup", "the ring's communicator");
    return 0;
}

/* Wrap mc (owned from now on, freed on failure) into *out with options o. */
static int comm_wrap(MPI_Comm mc, const struct comm_options *o, size_t piece, struct comm **out,
                     struct pt_err *e)
{
    *out = NULL;
    struct comm *c = pt_calloc(1, sizeof *c, e);
    if (!c) {
        MPI_Comm_free(&mc);
        return PT_ENOMEM;
    }
    c->mc = mc;
    c->node = c->leaders = c->ring = MPI_COMM_NULL;
    c->half_type = MPI_DATATYPE_NULL;
    c->half_sum = MPI_OP_NULL;
    c->opt = *o;
    c->piece = piece;
    int rc = comm_basics(c, e);
    if (rc == 0)
        rc = comm_half_setup(c, e);
    if (rc == 0)
        rc = comm_node_setup(c, e);
    if (rc == 0)
        rc = comm_ring_setup(c, e);
    if (rc != 0) {
        comm_release(c);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* A start-up step failed on this rank: say why (MPI_Abort prints no reason), end all ranks. */
static void init_abort(const struct pt_err *e)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d: %s\n", rank, e->msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

struct comm *comm_init(int *argc, char ***argv, struct pt_err *e)
{
    int provided = 0;
#ifdef PT_LEAK_CHECK
    /* Open MPI keeps what MPI_Init allocates until exit, some of it in the plugins it
     * loads and unloads again while choosing among them (whose allocation stacks
     * LeakSanitizer can then not name): not ours to report. */
    __lsan_disable();
#endif
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
#ifdef PT_LEAK_CHECK
    __lsan_enable();
#endif
    if (rc != MPI_SUCCESS) {
        pt_err_set(e, PT_ESYS, "error: MPI_Init_thread failed (code %d)", rc);
        return NULL;
    }
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm mc = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &mc);
    if (rc != MPI_SUCCESS) {
        comm_mpi_fail(e, rc, "MPI_Comm_dup", "comm_init");
        init_abort(e);
        return NULL;
    }
    const struct comm_options start = {.hierarchical = -1};
    struct comm *c = NULL;
    if (comm_wrap(mc, &start, COMM_PIECE_MAX, &c, e) != 0) {
        init_abort(e);
        return NULL;
    }
    return c;
}

void comm_set_piece(struct comm *c, size_t elems)
{
    c->piece = elems == 0 || elems > COMM_PIECE_MAX ? COMM_PIECE_MAX : elems;
}

int comm_set_options(struct comm *c, const struct comm_options *o, struct pt_err *e)
{
    if (o->hierarchical < -1 || o->hierarchical > 1)
        return pt_err_set(e, PT_EINTERNAL,
                          "error: comm_set_options: hierarchical is %d, "
                          "not -1, 0 or 1",
                          o->hierarchical);
    if (o->fp16 < 0 || o->fp16 > 1)
        return pt_err_set(e, PT_EINTERNAL, "error: comm_set_options: fp16 is %d, not 0 or 1",
                          o->fp16);
    if (o->algorithm < COMM_ALG_AUTO || o->algorithm > COMM_ALG_RING)
        return pt_err_set(e, PT_EINTERNAL, "error: comm_set_options: algorithm is %d",
                          o->algorithm);
    if (o->ranks_per_node < 0)
        return pt_err_set(e, PT_EINTERNAL, "error: comm_set_options: ranks_per_node is %d",
                          o->ranks_per_node);
    int resplit = o->ranks_per_node != c->opt.ranks_per_node;
    c->opt = *o;
    return resplit ? comm_node_setup(c, e) : 0;
}

int comm_rank(const struct comm *c)
{
    return c->rank;
}

int comm_size(const struct comm *c)
{
    return c->size;
}

int comm_local_rank(const struct comm *c)
{
    return c->local_rank;
}

int comm_local_size(const struct comm *c)
{
    return c->local_size;
}

int comm_node_rank(const struct comm *c)
{
    return c->node_rank;
}

int comm_node_count(const struct comm *c)
{
    return c->node_count;
}

void comm_library(char *name, size_t name_size, char *version, size_t version_size)
{
#ifdef OPEN_MPI
    snprintf(name, name_size, "Open MPI");
    snprintf(version, version_size, "%d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
             OMPI_RELEASE_VERSION);
#else
    snprintf(name, name_size, "MPI");
    snprintf(version, version_size, "%d.%d (standard)", MPI_VERSION, MPI_SUBVERSION);
#endif
}

void comm_node_release(struct comm *c)
{
    if (c->node != MPI_COMM_NULL)
        MPI_Comm_free(&c->node);
    if (c->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&c->leaders);
}

/* Step 1: the node communicator, local rank and size. */
static int node_split(struct comm *c, struct pt_err *e)
{
    int rpn = c->opt.ranks_per_node;
    int rc;
    if (rpn > 0)
        rc = MPI_Comm_split(c->mc, c->rank / rpn, c->rank, &c->node);
    else
        rc = MPI_Comm_split_type(c->mc, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->node);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, rpn > 0 ? "MPI_Comm_split" : "MPI_Comm_split_type",
                             "node split");
    rc = MPI_Comm_set_errhandler(c->node, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(c->node, &c->local_rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(c->node, &c->local_size);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Comm_rank/size", "node split");
}

/* Steps 2 and 3: leaders, node numbering, the largest node. */
static int node_number(struct comm *c, struct pt_err *e)
{
    int rc = MPI_Comm_split(c->mc, c->local_rank == 0 ? 0 : MPI_UNDEFINED, c->rank, &c->leaders);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_split", "node leaders");
    int nums[2] = {0, 0};
    if (c->leaders != MPI_COMM_NULL) {
        rc = MPI_Comm_set_errhandler(c->leaders, MPI_ERRORS_RETURN);
        if (rc == MPI_SUCCESS)
            rc = MPI_Comm_rank(c->leaders, &nums[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Comm_size(c->leaders, &nums[1]);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Comm_rank/size", "node leaders");
    }
    rc = MPI_Bcast(nums, 2, MPI_INT, 0, c->node);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Bcast", "node numbering");
    c->node_rank = nums[0];
    c->node_count = nums[1];
    rc = MPI_Allreduce(&c->local_size, &c->max_local, 1, MPI_INT, MPI_MAX, c->mc);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Allreduce", "largest node");
}

int comm_node_setup(struct comm *c, struct pt_err *e)
{
    comm_node_release(c);
    int rc = node_split(c, e);
    return rc != 0 ? rc : node_number(c, e);
}

int comm_agree(struct comm *c, int status, int *first_failed, struct pt_err *e)
{
    /* MIN over (failed ? rank : size) finds the lowest failing rank */
    int mine = status ? c->rank : c->size;
    int lowest = 0;
    int rc = MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, c->mc);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Allreduce", "agreeing on errors");
    if (lowest >= c->size) {
        *first_failed = -1;
        return 0;
    }
    int code = c->rank == lowest ? status : 0;
    rc = MPI_Bcast(&code, 1, MPI_INT, lowest, c->mc);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Bcast", "agreeing on errors");
    *first_failed = lowest;
    return code;
}

int comm_barrier(struct comm *c, struct pt_err *e)
{
    int rc = MPI_Barrier(c->mc);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Barrier", "comm_barrier");
}

static int p2p_check(const struct comm *c, int peer, int tag, int any, const char *name,
                     struct pt_err *e)
{
    if ((peer < 0 || peer >= c->size) && !(any && peer == COMM_ANY_SOURCE))
        return pt_err_set(e, PT_EINTERNAL, "error: %s: rank %d outside 0..%d", name, peer,
                          c->size - 1);
    if (tag < 0)
        return pt_err_set(e, PT_EINTERNAL, "error: %s: negative tag %d", name, tag);
    return 0;
}

int comm_p2p_args(struct comm *c, size_t n, enum comm_type t, int peer, int tag, int any,
                  int *count, MPI_Datatype *type, int *made, const char *name, struct pt_err *e)
{
    size_t es = 0;
    *made = 0;
    *count = 0;
    int rc = p2p_check(c, peer, tag, any, name, e);
    if (rc == 0)
        rc = comm_type_info(t, type, &es, e);
    if (rc != 0 || n <= c->piece) {
        *count = (int)n;
        return rc;
    }
    rc = comm_big_type(*type, es, n, 0, c->piece, type, name, e);
    *made = rc == 0;
    *count = 1;
    return rc;
}

int comm_send(struct comm *c, const void *buf, size_t n, enum comm_type t, int dest, int tag,
              struct pt_err *e)
{
    int count = 0, made = 0;
    MPI_Datatype type;
    int rc = comm_p2p_args(c, n, t, dest, tag, 0, &count, &type, &made, "comm_send", e);
    if (rc != 0)
        return rc;
    int mrc = MPI_Send(buf, count, type, dest, tag, c->mc);
    if (made)
        MPI_Type_free(&type);
    return mrc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, mrc, "MPI_Send", "comm_send");
}

int comm_recv(struct comm *c, void *buf, size_t n, enum comm_type t, int src, int tag, int *from,
              struct pt_err *e)
{
    int count = 0, made = 0;
    MPI_Datatype type;
    int rc = comm_p2p_args(c, n, t, src, tag, 1, &count, &type, &made, "comm_recv", e);
    if (rc != 0)
        return rc;
    MPI_Status st;
    int peer = src == COMM_ANY_SOURCE ? MPI_ANY_SOURCE : src;
    int mrc = MPI_Recv(buf, count, type, peer, tag, c->mc, &st);
    MPI_Count got = 0;
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Get_elements_x(&st, type, &got);
    if (made)
        MPI_Type_free(&type);
    if (mrc != MPI_SUCCESS)
        return comm_mpi_fail(e, mrc, "MPI_Recv", "comm_recv");
    if ((size_t)got != n)
        return pt_err_set(e, PT_ESYS, "error: comm_recv: rank %d sent %lld elements, %zu expected",
                          st.MPI_SOURCE, (long long)got, n);
    if (from)
        *from = st.MPI_SOURCE;
    return 0;
}

int comm_split(struct comm *c, int color, int key, struct comm **out, struct pt_err *e)
{
    *out = NULL;
    MPI_Comm nc = MPI_COMM_NULL;
    int rc = MPI_Comm_split(c->mc, color < 0 ? MPI_UNDEFINED : color, key, &nc);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_split", "comm_split");
    if (nc == MPI_COMM_NULL)
        return 0;
    return comm_wrap(nc, &c->opt, c->piece, out, e);
}

void comm_free(struct comm *sub)
{
    if (!sub)
        return;
    comm_release(sub);
    free(sub);
}

void comm_abort(struct comm *c, int exit_code)
{
    MPI_Abort(c ? c->mc : MPI_COMM_WORLD, exit_code);
    abort(); /* MPI_Abort does not return; keep the compiler sure of it */
}

void comm_finalize(struct comm *c)
{
    if (!c)
        return;
    comm_release(c);
#ifdef PT_LEAK_CHECK
    /* Under LeakSanitizer: check now, while Open MPI's plugins are loaded. MPI_Finalize
     * unloads them, and the leak check at exit could then not name (nor lsan.supp match)
     * the allocations Open MPI keeps until exit without unwinding every malloc in full,
     * which made the sanitized tests five times slower. Everything of ours is freed by
     * now; a leak ends the process with LSAN_OPTIONS' exit code, and there is no second
     * check at exit. */
    __lsan_do_leak_check();
#endif
    MPI_Finalize();
    free(c);
}
