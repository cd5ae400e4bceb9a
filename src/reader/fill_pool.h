/* Filling one minibatch on several threads: the samples of a minibatch are independent
 * (each goes into its own columns), so a fill splits them into contiguous parts, the
 * calling thread takes the first and the pool's threads the others, and the call returns
 * when every part is done. The same columns get the same values whatever the number of
 * threads (tests compare 1 and several).
 *
 * One caller at a time per pool; the threads sleep between fills. */
#ifndef PT_READER_FILL_POOL_H
#define PT_READER_FILL_POOL_H

#include <stddef.h>

#include "core/err.h"

struct fill_pool;

/* fn fills samples [lo, hi) as worker `worker` (0: the caller; each worker has its own
 * scratch where it needs one); returns 0 or a failure code, its reason in e. */
typedef int (*fill_part_fn)(void *ctx, size_t lo, size_t hi, int worker, struct pt_err *e);

/* A pool of `threads` workers in all (the caller and threads - 1 pool threads); NULL
 * when threads <= 1 or the threads cannot start (fill_pool_run then works alone). */
struct fill_pool *fill_pool_new(int threads);
/* Workers the pool runs (1 for NULL). */
int fill_pool_workers(const struct fill_pool *p);
/* Samples [0, n) in parts of at least min_part (at most one part per worker): fn on each,
 * the first on this thread. Returns the failure of the lowest failing part, its reason in
 * e, else 0, so that an error names the first bad sample as a lone thread would. */
int fill_pool_run(struct fill_pool *p, size_t n, size_t min_part, fill_part_fn fn, void *ctx,
                  struct pt_err *e);
void fill_pool_free(struct fill_pool *p);
/* A fill is coming soon: the threads wake now and spin for it (a sleeping thread takes
 * tens of microseconds to wake); call it before the work that precedes fill_pool_run. */
void fill_pool_wake(struct fill_pool *p);

/* Workers for the readers of this process: 1 (the default) fills on the calling thread
 * alone. The trainer sets it from its BLAS threads (the cores a rank has), or from
 * PT_READ_THREADS (force: every reader uses them); at most FILL_POOL_MAX.
 * fill_pool_threads: the workers of a reader that wants them (one that reads ahead of a
 * GPU, or decodes images) or does not (a CPU trainer's text, read between its steps while
 * the BLAS threads wait: on a shared core, threads that wake for it slowed the step). */
enum { FILL_POOL_MAX = 8 };
void fill_pool_set_default(int threads, int force);
int fill_pool_default(int *force);
int fill_pool_threads(int wanted);

#endif
