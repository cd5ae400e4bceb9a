/* partrain's own single-thread sgemm for CPUs with AVX-512F (cpu_gemm.c).
 *
 * OpenBLAS picks its kernel from OPENBLAS_CORETYPE, and this machine's environment pins
 * it to Haswell (AVX2), which runs at half of what the CPU's 512-bit FMA units can do.
 * With cpuGemm=auto (the default) the CPU backend uses this kernel when the CPU has
 * AVX-512F and BLAS runs on one thread (numCPUThreads=1, the data-parallel case: a rank
 * per core), and OpenBLAS otherwise; cpuGemm=openblas always uses OpenBLAS. */
#ifndef PT_MATH_CPU_GEMM_H
#define PT_MATH_CPU_GEMM_H

#include "core/err.h"

enum cpu_gemm_mode { CPU_GEMM_AUTO, CPU_GEMM_OPENBLAS, CPU_GEMM_AVX512 };

/* Does this CPU (and this build) run the kernel? */
int cpu_gemm_supported(void);

/* Packing buffers for one backend; NULL when out of memory. */
struct cpu_gemm *cpu_gemm_new(void);
void cpu_gemm_free(struct cpu_gemm *g);

/* C = alpha op(A) op(B) + beta C, column-major (BLAS's sgemm), m, n, k > 0; beta == 0
 * never reads C. Only when cpu_gemm_supported(). */
void cpu_gemm_run(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);

#endif
