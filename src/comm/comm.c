/* MPI start-up, failure agreement and abort; see comm.h. */
#include "comm/comm.h"

#include <mpi.h>
#include <stdlib.h>

struct comm {
    MPI_Comm world; /* duplicate of MPI_COMM_WORLD, errors return */
    int rank, size;
    int local_size; /* ranks on this node */
};

static int mpi_fail(struct pt_err *e, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        len = 0;
    msg[len] = '\0';
    return pt_err_set(e, PT_ESYS, "error: %s failed: %s", what, msg);
}

struct comm *comm_init(int *argc, char ***argv, struct pt_err *e)
{
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
        pt_err_set(e, PT_ESYS, "error: MPI_Init_thread failed (code %d)", rc);
        return NULL;
    }
    struct comm *c = calloc(1, sizeof *c);
    if (!c) {
        pt_err_set(e, PT_ENOMEM, "error: out of memory");
        MPI_Abort(MPI_COMM_WORLD, 3);
        return NULL;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->world);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(c->world, &c->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(c->world, &c->size);
    MPI_Comm node = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(node, &c->local_size);
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS) {
        mpi_fail(e, rc, "setting up MPI_COMM_WORLD");
        free(c);
        MPI_Abort(MPI_COMM_WORLD, 3);
        return NULL;
    }
    return c;
}

int comm_rank(const struct comm *c)
{
    return c->rank;
}

int comm_size(const struct comm *c)
{
    return c->size;
}

int comm_local_size(const struct comm *c)
{
    return c->local_size;
}

int comm_agree(struct comm *c, int status, int *first_failed, struct pt_err *e)
{
    /* MINLOC over (failed ? rank : size) finds the lowest failing rank */
    int mine[2] = {status ? c->rank : c->size, status};
    int lowest = 0;
    int rc = MPI_Allreduce(&mine[0], &lowest, 1, MPI_INT, MPI_MIN, c->world);
    if (rc != MPI_SUCCESS)
        return mpi_fail(e, rc, "MPI_Allreduce (agreeing on errors)");
    if (lowest >= c->size) {
        *first_failed = -1;
        return 0;
    }
    int code = c->rank == lowest ? status : 0;
    rc = MPI_Bcast(&code, 1, MPI_INT, lowest, c->world);
    if (rc != MPI_SUCCESS)
        return mpi_fail(e, rc, "MPI_Bcast (agreeing on errors)");
    *first_failed = lowest;
    return code;
}

/* MPI counts are int: move big buffers in pieces. */
#define COMM_PIECE (1u << 30)

int comm_allreduce_f32(struct comm *c, float *buf, size_t n, struct pt_err *e)
{
    for (size_t off = 0; off < n; off += COMM_PIECE) {
        int count = (int)(n - off < COMM_PIECE ? n - off : COMM_PIECE);
        int rc = MPI_Allreduce(MPI_IN_PLACE, buf + off, count, MPI_FLOAT, MPI_SUM, c->world);
        if (rc != MPI_SUCCESS)
            return mpi_fail(e, rc, "MPI_Allreduce (gradients)");
    }
    return 0;
}

int comm_allreduce_f64(struct comm *c, double *buf, size_t n, struct pt_err *e)
{
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, c->world);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(e, rc, "MPI_Allreduce (statistics)");
}

int comm_bcast_f32(struct comm *c, float *buf, size_t n, int root, struct pt_err *e)
{
    for (size_t off = 0; off < n; off += COMM_PIECE) {
        int count = (int)(n - off < COMM_PIECE ? n - off : COMM_PIECE);
        int rc = MPI_Bcast(buf + off, count, MPI_FLOAT, root, c->world);
        if (rc != MPI_SUCCESS)
            return mpi_fail(e, rc, "MPI_Bcast (model)");
    }
    return 0;
}

void comm_abort(struct comm *c, int exit_code)
{
    MPI_Abort(c ? c->world : MPI_COMM_WORLD, exit_code);
    abort(); /* MPI_Abort does not return; keep the compiler sure of it */
}

void comm_finalize(struct comm *c)
{
    if (!c)
        return;
    MPI_Comm_free(&c->world);
    MPI_Finalize();
    free(c);
}
