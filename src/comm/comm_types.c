/* Datatypes of the communicator: comm_type/comm_op to MPI, the AVG division, and the
 * derived datatypes that carry counts and displacements too large for an int.
 *
 * Large v-collectives (any count or displacement above c->piece) run as MPI_Alltoallw:
 *   per peer, count 0, or count 1 of a struct datatype whose byte displacement (MPI_Aint)
 *   is the element displacement times the element size (allgatherv: the absolute address
 *   of the receive block, received at MPI_BOTTOM), its body q pieces of `piece`
 *   elements (a contiguous of contiguous) plus a tail of r elements; the int byte
 *   displacements Alltoallw takes are all 0. */
#include "comm/comm_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int comm_type_info(enum comm_type t, MPI_Datatype *dt, size_t *size, struct pt_err *e)
{
    switch (t) {
    case COMM_FLOAT: *dt = MPI_FLOAT, *size = sizeof(float); return 0;
    case COMM_DOUBLE: *dt = MPI_DOUBLE, *size = sizeof(double); return 0;
    case COMM_INT: *dt = MPI_INT, *size = sizeof(int); return 0;
    case COMM_INT64: *dt = MPI_INT64_T, *size = sizeof(int64_t); return 0;
    case COMM_BYTE: *dt = MPI_UNSIGNED_CHAR, *size = 1; return 0;
    }
    return pt_err_set(e, PT_EINTERNAL, "error: communicator: unknown element type %d", (int)t);
}

int comm_reduction_info(enum comm_type t, enum comm_op op, MPI_Datatype *dt, size_t *es,
                        MPI_Op *mop, struct pt_err *e)
{
    int rc = comm_type_info(t, dt, es, e);
    return rc ? rc : comm_op_info(t, op, mop, e);
}

int comm_op_info(enum comm_type t, enum comm_op op, MPI_Op *mop, struct pt_err *e)
{
    switch (op) {
    case COMM_SUM: *mop = MPI_SUM; return 0;
    case COMM_MIN: *mop = MPI_MIN; return 0;
    case COMM_MAX: *mop = MPI_MAX; return 0;
    case COMM_AVG:
        *mop = MPI_SUM;
        if (t == COMM_FLOAT || t == COMM_DOUBLE)
            return 0;
        return pt_err_set(e, PT_EINTERNAL,
                          "error: communicator: COMM_AVG needs float or double elements");
    }
    return pt_err_set(e, PT_EINTERNAL, "error: communicator: unknown reduction %d", (int)op);
}

void comm_divide(void *buf, size_t n, enum comm_type t, int size)
{
    if (t == COMM_FLOAT) {
        float *f = buf;
        for (size_t i = 0; i < n; i++)
            f[i] /= (float)size;
    } else if (t == COMM_DOUBLE) {
        double *d = buf;
        for (size_t i = 0; i < n; i++)
            d[i] /= (double)size;
    }
}

int comm_fits(const struct comm *c, const size_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] > c->piece)
            return 0;
    return 1;
}

void comm_to_ints(int *ints, const size_t *v, int n)
{
    for (int i = 0; i < n; i++)
        ints[i] = (int)v[i];
}

int comm_big_type(MPI_Datatype dt, size_t es, size_t n, MPI_Aint disp, size_t piece,
                  MPI_Datatype *out, const char *name, struct pt_err *e)
{
    size_t q = n / piece, r = n % piece;
    if (q > INT_MAX)
        return pt_err_set(e, PT_EINTERNAL, "error: %s: %zu elements is too many", name, n);
    MPI_Datatype chunk = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL;
    int lens[2] = {0, (int)r};
    MPI_Aint disps[2] = {disp, disp + (MPI_Aint)(q * piece * es)};
    MPI_Datatype types[2] = {dt, dt};
    int rc = MPI_SUCCESS;
    if (q > 0) {
        rc = MPI_Type_contiguous((int)piece, dt, &chunk);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_contiguous((int)q, chunk, &body);
        lens[0] = 1;
        types[0] = body;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_struct(2, lens, disps, types, out);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Type_commit(out);
        if (rc != MPI_SUCCESS)
            MPI_Type_free(out);
    }
    if (body != MPI_DATATYPE_NULL)
        MPI_Type_free(&body);
    if (chunk != MPI_DATATYPE_NULL)
        MPI_Type_free(&chunk);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Type_create_struct", name);
}

static void wplan_free(struct comm_wplan *p)
{
    for (int r = 0; r < p->size; r++) {
        if (p->scounts && p->scounts[r] && p->stypes[r] != MPI_DATATYPE_NULL)
            MPI_Type_free(&p->stypes[r]);
        if (p->rcounts && p->rcounts[r] && p->rtypes[r] != MPI_DATATYPE_NULL)
            MPI_Type_free(&p->rtypes[r]);
    }
    free(p->scounts);
    free(p->stypes);
    p->scounts = p->sdispls = p->rcounts = p->rdispls = NULL;
    p->stypes = p->rtypes = NULL;
    p->size = 0;
}

/* Arrays of a plan, counts 0 and types dt (valid, unused) everywhere. */
static int wplan_alloc(struct comm_wplan *p, int size, MPI_Datatype dt, struct pt_err *e)
{
    size_t n = (size_t)size;
    p->size = 0;
    p->scounts = pt_calloc(4 * n, sizeof(int), e);
    p->stypes = pt_calloc(2 * n, sizeof(MPI_Datatype), e);
    if (!p->scounts || !p->stypes) {
        free(p->scounts);
        free(p->stypes);
        p->scounts = NULL;
        p->stypes = NULL;
        return PT_ENOMEM;
    }
    p->sdispls = p->scounts + n;
    p->rcounts = p->scounts + 2 * n;
    p->rdispls = p->scounts + 3 * n;
    p->rtypes = p->stypes + n;
    for (size_t r = 0; r < 2 * n; r++)
        p->stypes[r] = dt;
    p->size = size;
    return 0;
}

/* Entry r of one side: count 1 of a big type when n > 0. */
static int wplan_entry(struct comm *c, int *count, MPI_Datatype *type, MPI_Datatype dt, size_t es,
                       size_t n, MPI_Aint disp, const char *name, struct pt_err *e)
{
    if (n == 0)
        return 0;
    int rc = comm_big_type(dt, es, n, disp, c->piece, type, name, e);
    if (rc == 0)
        *count = 1;
    return rc;
}

static int wplan_alltoallv(struct comm *c, const size_t *scounts, const size_t *sdispls,
                           const size_t *rcounts, const size_t *rdispls, MPI_Datatype dt, size_t es,
                           struct comm_wplan *p, const char *name, struct pt_err *e)
{
    int rc = wplan_alloc(p, c->size, dt, e);
    for (int r = 0; rc == 0 && r < c->size; r++) {
        rc = wplan_entry(c, &p->scounts[r], &p->stypes[r], dt, es, scounts[r],
                         (MPI_Aint)(sdispls[r] * es), name, e);
        if (rc == 0)
            rc = wplan_entry(c, &p->rcounts[r], &p->rtypes[r], dt, es, rcounts[r],
                             (MPI_Aint)(rdispls[r] * es), name, e);
    }
    if (rc != 0)
        wplan_free(p);
    return rc;
}

/* Sends relative to recv; receives at absolute addresses (MPI_BOTTOM). */
static int wplan_allgatherv(struct comm *c, size_t n, void *recv, const size_t *counts,
                            const size_t *displs, MPI_Datatype dt, size_t es, struct comm_wplan *p,
                            const char *name, struct pt_err *e)
{
    int rc = wplan_alloc(p, c->size, dt, e);
    for (int r = 0; rc == 0 && r < c->size; r++) {
        MPI_Aint addr = 0;
        if (r == c->rank)
            continue;
        rc = wplan_entry(c, &p->scounts[r], &p->stypes[r], dt, es, n,
                         (MPI_Aint)(displs[c->rank] * es), name, e);
        int mrc = rc == 0 ? MPI_Get_address((char *)recv + displs[r] * es, &addr) : MPI_SUCCESS;
        if (mrc != MPI_SUCCESS)
            rc = comm_mpi_fail(e, mrc, "MPI_Get_address", name);
        if (rc == 0)
            rc = wplan_entry(c, &p->rcounts[r], &p->rtypes[r], dt, es, counts[r], addr, name, e);
    }
    if (rc != 0)
        wplan_free(p);
    return rc;
}

int comm_vargs_allgatherv(struct comm *c, const void *send, size_t n, void *recv,
                          const size_t *counts, const size_t *displs, MPI_Datatype dt, size_t es,
                          struct comm_vargs *v, const char *name, struct pt_err *e)
{
    v->big = 0;
    v->ints = NULL;
    memset(&v->plan, 0, sizeof v->plan);
    if (n != counts[c->rank])
        return pt_err_set(e, PT_EINTERNAL, "error: %s: rank %d sends %zu elements, counts say %zu",
                          name, c->rank, n, counts[c->rank]);
    if (comm_fits(c, counts, c->size) && comm_fits(c, displs, c->size)) {
        v->ints = pt_malloc(2 * (size_t)c->size * sizeof(int), e);
        if (!v->ints)
            return PT_ENOMEM;
        comm_to_ints(v->ints, counts, c->size);
        comm_to_ints(v->ints + c->size, displs, c->size);
        return 0;
    }
    char *mine = (char *)recv + displs[c->rank] * es;
    if (n > 0 && send != mine)
        memcpy(mine, send, n * es);
    v->big = 1;
    return wplan_allgatherv(c, n, recv, counts, displs, dt, es, &v->plan, name, e);
}

int comm_vargs_alltoallv(struct comm *c, const size_t *scounts, const size_t *sdispls,
                         const size_t *rcounts, const size_t *rdispls, MPI_Datatype dt, size_t es,
                         struct comm_vargs *v, const char *name, struct pt_err *e)
{
    int n = c->size;
    v->big = 0;
    v->ints = NULL;
    memset(&v->plan, 0, sizeof v->plan);
    if (comm_fits(c, scounts, n) && comm_fits(c, sdispls, n) && comm_fits(c, rcounts, n) &&
        comm_fits(c, rdispls, n)) {
        v->ints = pt_malloc(4 * (size_t)n * sizeof(int), e);
        if (!v->ints)
            return PT_ENOMEM;
        comm_to_ints(v->ints, scounts, n);
        comm_to_ints(v->ints + n, sdispls, n);
        comm_to_ints(v->ints + 2 * n, rcounts, n);
        comm_to_ints(v->ints + 3 * n, rdispls, n);
        return 0;
    }
    v->big = 1;
    return wplan_alltoallv(c, scounts, sdispls, rcounts, rdispls, dt, es, &v->plan, name, e);
}

void comm_vargs_free(struct comm_vargs *v)
{
    free(v->ints);
    v->ints = NULL;
    wplan_free(&v->plan);
}
