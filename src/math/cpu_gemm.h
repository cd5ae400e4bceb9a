/* partrain's own single-thread sgemm for CPUs with AVX-512F (cpu_gemm.c).
 *
 * OpenBLAS picks its kernel from the CPU it detects, or from OPENBLAS_CORETYPE when the
 * environment pins it. On an AVX-512 CPU whose OpenBLAS kernel is not an AVX-512 one
 * (pinned to Haswell, or a CPU newer than the OpenBLAS build, which then takes its Zen,
 * Haswell or even Prescott kernel) this kernel runs 1.6-4.7x OpenBLAS at the MLP's shapes;
 * against OpenBLAS's own AVX-512 kernels (SkylakeX, Cooperlake) it is level or a few per
 * cent ahead (bench/RESULTS.md). So cpuGemm=auto (the default) takes this kernel on a CPU
 * with AVX-512F and BLAS on one thread (cpu_gemm_auto_own), else OpenBLAS.
 * cpuGemm=openblas always uses OpenBLAS, cpuGemm=avx512 always this kernel. */
#ifndef PT_MATH_CPU_GEMM_H
#define PT_MATH_CPU_GEMM_H

#include "core/err.h"

struct bk_sgd;

enum cpu_gemm_mode { CPU_GEMM_AUTO, CPU_GEMM_OPENBLAS, CPU_GEMM_AVX512 };

/* Does this CPU (and this build) run the kernel? */
int cpu_gemm_supported(void);

/* cpuGemm=auto's rule: 1 (this kernel) on a CPU with AVX-512F (has_avx512) and BLAS on one
 * thread, else 0 (OpenBLAS: its threads beat one core). A rule, not a measurement at
 * start-up, so that every run of a config (a resumed one too) computes the same bits; it
 * holds on the CPUs measured (bench/RESULTS.md: this kernel 1.01-1.08x OpenBLAS's own
 * AVX-512 kernels at the MLP's shapes, 1.6-4.7x its AVX2 and SSE3 ones). Pure, so it is
 * tested on every machine. */
int cpu_gemm_auto_own(int has_avx512, int threads);

/* Packing buffers for one backend; NULL when out of memory. */
struct cpu_gemm *cpu_gemm_new(void);
void cpu_gemm_free(struct cpu_gemm *g);

/* Until cpu_gemm_hold(g, NULL), the matrix at a is not written: products whose A is a keep
 * its packed form and later ones with the same op(A) shape read it from there (a recurrent
 * layer's weights, packed once for all the time steps of a pass). Up to CPU_GEMM_HOLDS
 * matrices are held together (the weights of a recurrent loop of a network's nodes); NULL
 * lets them all go. */
void cpu_gemm_hold(struct cpu_gemm *g, const float *a);

/* C = alpha op(A) op(B) + beta C, column-major (BLAS's sgemm), m, n, k > 0; beta == 0
 * never reads C. Only when cpu_gemm_supported(). */
void cpu_gemm_run(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
/* cpu_gemm_run with more done to the tiles of the last k block while they are in registers
 * (the same bits as cpu_gemm_run followed by the backend's pass):
 *   CPU_EPI_SGD        C is the gradient of u->w: the momentum SGD step on u->w and u->s
 *                      (laid out as C), and C is not written (backend.h's gemm_sgd);
 *   CPU_EPI_RELU_GRAD  C = y > 0 ? C : 0 with y = v laid out as C (ReLU's act_grad);
 *   CPU_EPI_BIAS_RELU  C = ReLU(C + bias) with the bias v, one per row (bias_act).
 * With CPU_EPI_SGD, asum (NULL: not wanted) gets the sums over k of op(A)'s rows, the
 * bits of cpu_sum_cols (A = dL/dy: the bias gradient): inside the kernel where it reads
 * A in place, else in cpu_row_sums's pass. */
enum cpu_gemm_epi { CPU_EPI_SGD, CPU_EPI_RELU_GRAD, CPU_EPI_BIAS_RELU };
void cpu_gemm_run_epi(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                      const float *a, int lda, const float *b, int ldb, float beta, float *c,
                      int ldc, enum cpu_gemm_epi kind, const struct bk_sgd *u, const float *v,
                      float *asum);

#endif
