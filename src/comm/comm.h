/* The communicator: the only module that calls MPI.
 *
 * comm_init starts MPI and works on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN,
 * so every MPI failure comes back as an error code we check. This issue provides start-up,
 * agreement on failures and abort; collectives arrive with DataParallelSGD. */
#ifndef PT_COMM_COMM_H
#define PT_COMM_COMM_H

#include "core/err.h"

struct comm;

/* Start MPI (MPI_Init_thread, FUNNELED) and return the communicator; NULL with e set on
 * failure. Call once, from main. */
struct comm *comm_init(int *argc, char ***argv, struct pt_err *e);
int comm_rank(const struct comm *c);
int comm_size(const struct comm *c);
/* Ranks sharing this rank's node (MPI_COMM_TYPE_SHARED), for choosing thread counts. */
int comm_local_size(const struct comm *c);

/* Collective: every rank passes its status (0 or a negative error code). Returns the
 * status of the lowest failing rank (0 when all succeeded) and puts that rank in
 * *first_failed (-1 when none). Used to report an error once and stop every rank cleanly
 * at points all ranks reach. */
int comm_agree(struct comm *c, int status, int *first_failed, struct pt_err *e);

/* In-place sum over all ranks (MPI_Allreduce). Every rank ends with bit-identical sums. */
int comm_allreduce_f32(struct comm *c, float *buf, size_t n, struct pt_err *e);
int comm_allreduce_f64(struct comm *c, double *buf, size_t n, struct pt_err *e);
/* Rank root's buffer to everybody (MPI_Bcast). */
int comm_bcast_f32(struct comm *c, float *buf, size_t n, int root, struct pt_err *e);

/* End every rank now (MPI_Abort); for failures other ranks cannot know about. */
void comm_abort(struct comm *c, int exit_code) __attribute__((noreturn));

/* Finalize MPI and free c. NULL is a no-op. */
void comm_finalize(struct comm *c);

#endif
