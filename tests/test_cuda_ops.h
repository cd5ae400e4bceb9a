/* tests/test_cuda_ops: the harness shared by its files (test_cuda_ops.c: harness, main,
 * memory, gemm and the element ops; test_cuda_ops_nn.c: the node graph's ops, criteria
 * and the LSTM step; test_cuda_ops_update.c: the optimizer, the engines' updates, the
 * quantizers and fp16).
 *
 * Every case runs the same inputs through the CPU backend (the reference, host memory)
 * and the backend under test (device memory: reached ONLY through its upload and download
 * ops, never dereferenced), and compares what they leave in every buffer the op may
 * write: bit for bit (check_bits, check_bytes) or within a relative tolerance
 * (check_near). Each comparison is counted under its op's name; main prints, per op, the
 * cases, the values compared and the worst error seen. */
#ifndef PT_TESTS_TEST_CUDA_OPS_H
#define PT_TESTS_TEST_CUDA_OPS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "math/backend.h"

/* The reference (CPU) backend and the backend under test. */
extern struct backend *ref_bk, *dev_bk;

/* The default tolerance of computed values: relative 1e-5, with an absolute floor of
 * 1e-6 (values below 0.1 in magnitude are compared absolutely). */
#define TOL       1e-5
#define TOL_FLOOR 1e-6

/* One tensor on both backends: c the reference's (host memory), d the device's. */
struct twin {
    float *c, *d;
    size_t n;
};

/* Deterministic random numbers (splitmix64; PT_TEST_SEED sets the seed). */
uint64_t rnd_next(void);
float rnd_range(float lo, float hi); /* uniform in [lo, hi) */
float rnd_normal(void);

/* n floats on both backends (uninitialized), freed by twin_free (the struct may be
 * zeroed: then twin_free does nothing). */
void twin_alloc(struct twin *t, size_t n);
/* The same n values on both: host[0..n). */
void twin_set(struct twin *t, const float *host);
/* twin_alloc + values uniform in [lo, hi), or all v. */
void twin_rand(struct twin *t, size_t n, float lo, float hi);
void twin_const(struct twin *t, size_t n, float v);
void twin_free(struct twin *t);
/* The device's values, downloaded into a new host array (free it). */
float *twin_get(const struct twin *t);
/* Set device buffer values from the host reference's (after a step whose device result
 * should not feed the next step's inputs). */
void twin_sync_from_ref(struct twin *t);

/* Compare the device's values with the reference's, all t->n of them; the case is named
 * by the printf-style fmt in a failure. check_bits: identical bits. check_near: NaN ==
 * NaN, equal infinities, else |dev - ref| <= tol * max(m, TOL_FLOOR / TOL) with m = mag[i]
 * (the magnitude of the terms that made value i: sum |a||b| for a product; mag[i] < 0:
 * element i must be bit-identical, e.g. a gap an op must not write) or |ref| when mag is
 * NULL. */
void check_bits(const char *op, const struct twin *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void check_near(const char *op, const struct twin *t, const double *mag, double tol,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Bytes (host buffers, e.g. packed quantizer output) identical. */
void check_bytes(const char *op, const void *ref, const void *dev, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Two scalars: |dev - ref| <= tol * max(|ref|, floor_abs / tol) (NaN == NaN). */
void check_scalar(const char *op, double ref, double dev, double tol, double floor_abs,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The device's queue drained without an asynchronous error. */
void check_synced(const char *op);

/* The cases of test_cuda_ops_nn.c and test_cuda_ops_update.c. */
TCase *cuda_nn_tcase(void);
TCase *cuda_update_tcase(void);

#endif
