/* The compute backends. This issue provides what start-up needs: a description of the
 * CPU backend (OpenBLAS kernel and threads) and, when built with --with-cuda, a probe of
 * the CUDA devices. struct backend_ops (gemm, elementwise kernels) arrives with training. */
#ifndef PT_MATH_BACKEND_H
#define PT_MATH_BACKEND_H

#include <stddef.h>

/* "OpenBLAS 0.3.21 ... (kernel Haswell, 2 threads)" into buf. */
const char *backend_cpu_describe(char *buf, size_t size);

/* Set the BLAS threads of this process. requested > 0 is used as is; 0 chooses: the
 * OPENBLAS_NUM_THREADS environment variable when set, else cores / ranks_on_node (at
 * least 1). Returns the number now in use. */
int backend_cpu_set_threads(int requested, int ranks_on_node);

/* CUDA: number of usable devices (0 when none or not built with CUDA); the first device's
 * name in name (may be empty). Never fails: a broken driver counts as no device, and the
 * reason is written to why. */
int backend_cuda_probe(char *name, size_t name_size, char *why, size_t why_size);

#ifdef __cplusplus
extern "C" {
#endif
/* Implemented in cuda_backend.cu (only with --with-cuda). */
int backend_cuda_probe_impl(char *name, size_t name_size, char *why, size_t why_size);
#ifdef __cplusplus
}
#endif

#endif
