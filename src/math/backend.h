/* The compute backends. This issue provides what start-up needs: a description of the
 * CPU backend (OpenBLAS kernel and threads) and, when built with --with-cuda, a probe of
 * the CUDA devices. struct backend_ops (gemm, elementwise kernels) arrives with training. */
#ifndef PT_MATH_BACKEND_H
#define PT_MATH_BACKEND_H

#include <stddef.h>

/* "OpenBLAS 0.3.21 ... (kernel Haswell, 2 threads)" into buf. */
const char *backend_cpu_describe(char *buf, size_t size);

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
