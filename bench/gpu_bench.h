/* bench/gpu_bench's parts (gpu_bench.c: backends, the bound, main; gpu_bench_quant.c: the
 * quantizers' speed; gpu_bench_read.c: the reader's). */
#ifndef PT_BENCH_GPU_BENCH_H
#define PT_BENCH_GPU_BENCH_H

#include <stdint.h>

#include "core/err.h"
#include "math/backend.h"

#define EXIT_SKIP 77 /* no usable CUDA device */
#define ROUNDS    3  /* timed rounds; the best one counts */

struct bench_backend {
    struct backend *b;
    char what[400]; /* "cuda 0 (NVIDIA H100 80GB HBM3)", "cpu (OpenBLAS ...)" */
};

/* Seconds on the monotonic clock. */
double bench_now(void);
/* Print e's message to stderr; returns 1 (the exit status). */
int bench_fail(const struct pt_err *e);
/* A number in [0, 1) from the generator state *s. */
double bench_uniform(uint64_t *s);

/* The CPU backend with `threads` BLAS threads (0: OPENBLAS_NUM_THREADS, else all cores). */
int bench_open_cpu(struct bench_backend *bb, int threads, struct pt_err *e);
/* The backend under test: the cuBLAS backend on PT_BENCH_DEVICE (default 0), or the CPU
 * backend when PT_BENCH_BACKEND=cpu. Returns 0, EXIT_SKIP (no device: "no GPU: <reason>"
 * printed) or 1 (the error printed). */
int bench_open_device(struct bench_backend *bb);

/* gpu_bench quant ROWS COLS BITS REPS (argv without the subcommand); the exit status. */
int bench_quant(int argc, char **argv);
/* gpu_bench read CONFIG MB EPOCHS [KEY=VALUE...] (gpu_bench_read.c); the exit status. */
int bench_read(int argc, char **argv);

#endif
