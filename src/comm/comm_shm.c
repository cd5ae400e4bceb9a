/* Memory that every rank of a communicator maps, for ranks that all run on one host
 * (DataParallelSGD's node-shared step keeps one model there).
 *
 * Rank 0 creates a POSIX shared-memory object with a name of its own (pid and a counter),
 * reserves its pages (posix_fallocate: a full /dev/shm is an error now, not a SIGBUS
 * later), maps it and broadcasts the name; the others open and map it; once every rank
 * said it has it mapped, rank 0 unlinks the name, so nothing is left behind even when a
 * rank dies later. Each rank unmaps on its own (comm_shared_free is local). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comm/comm_internal.h"

int comm_all_local(struct comm *c, int *yes, struct pt_err *e)
{
    MPI_Comm node;
    int rc = MPI_Comm_split_type(c->mc, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Comm_split_type", "comm_all_local");
    int n = 0, mine;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    mine = n == c->size;
    rc = MPI_Allreduce(&mine, yes, 1, MPI_INT, MPI_MIN, c->mc);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Allreduce", "comm_all_local");
}

/* Rank 0's part: the object named name, bytes long and reserved, mapped at *p. */
static int create(const char *name, size_t bytes, void **p, char *why, size_t size)
{
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    int err = fd < 0 ? errno : 0;
    if (!err)
        err = posix_fallocate(fd, 0, (off_t)bytes);
    if (!err && (*p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        err = errno;
    if (fd >= 0)
        close(fd);
    if (err) {
        *p = NULL;
        snprintf(why, size, "%s (%zu bytes in /dev/shm)", strerror(err), bytes);
        if (fd >= 0)
            shm_unlink(name);
    }
    return err;
}

static int attach(const char *name, size_t bytes, void **p, char *why, size_t size)
{
    int fd = shm_open(name, O_RDWR, 0);
    int err = fd < 0 ? errno : 0;
    if (!err && (*p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        err = errno;
    if (fd >= 0)
        close(fd);
    if (err) {
        *p = NULL;
        snprintf(why, size, "%s", strerror(err));
    }
    return err;
}

int comm_shared_alloc(struct comm *c, size_t bytes, void **out, struct pt_err *e)
{
    static unsigned serial;
    char name[64] = "", why[256] = "";
    void *p = NULL;
    *out = NULL;
    if (bytes == 0)
        bytes = 1;
    int err = 0, rc;
    if (c->rank == 0) {
        snprintf(name, sizeof name, "/partrain-%ld-%u", (long)getpid(), serial++);
        err = create(name, bytes, &p, why, sizeof why);
    }
    rc = MPI_Bcast(name, sizeof name, MPI_CHAR, 0, c->mc);
    if (rc != MPI_SUCCESS)
        return comm_mpi_fail(e, rc, "MPI_Bcast", "comm_shared_alloc");
    if (c->rank != 0 && name[0] && !err)
        err = attach(name, bytes, &p, why, sizeof why);
    /* every rank learns whether all have it (the first failing rank's reason is local) */
    int ok = !err && name[0], all = 0;
    rc = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->mc);
    if (c->rank == 0 && name[0] && !err)
        shm_unlink(name);
    if (rc != MPI_SUCCESS || !all) {
        if (p)
            munmap(p, bytes);
        if (rc != MPI_SUCCESS)
            return comm_mpi_fail(e, rc, "MPI_Allreduce", "comm_shared_alloc");
        return pt_err_set(e, PT_ESYS,
                          "error: shared memory of %zu bytes for the ranks of this "
                          "host: %s",
                          bytes, err ? why : "another rank could not map it");
    }
    *out = p;
    return 0;
}

void comm_shared_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}

int comm_shared_sync(struct comm *c, struct pt_err *e)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int rc = MPI_Barrier(c->mc);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return rc == MPI_SUCCESS ? 0 : comm_mpi_fail(e, rc, "MPI_Barrier", "comm_shared_sync");
}
