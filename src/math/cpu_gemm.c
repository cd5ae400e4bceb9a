/* A single-thread sgemm for AVX-512F, blocked the BLIS way.
 *
 * C (m x n) += alpha op(A) (m x k) op(B) (k x n), column-major:
 *   for each block of NC columns of C, each block of KC steps of k:
 *     pack op(B)'s KC x NC block into panels of NR columns (row by row: NR floats per k);
 *     for each block of MC rows: pack op(A)'s MC x KC block into panels of MR rows
 *       (column by column: MR floats per k); then every MR x NR tile of C gets one
 *       micro-kernel call over KC steps.
 * The micro-kernel holds the tile in 24 of the 32 zmm registers (MR = 32 rows = two
 * vectors, NR = 12 columns) and per step does two loads of A, twelve broadcasts of B and
 * 24 FMAs. Packing zero-pads partial panels, so the kernel always runs whole tiles and only
 * the stores are masked. Transposes are handled by the packing. Sizes: a B micro-panel
 * (KC x NR, 12 KiB) stays in L1, the A block (MC x KC, 256 KiB) in L2. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "math/cpu_gemm.h"

#define MR 32
#define NR 12
#define KC 256
#define MC 256
#define NC 3072

struct cpu_gemm {
    float *ap; /* MC x KC */
    float *bp; /* KC x NC, rounded up to whole panels */
};

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_KERNEL 1
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f")))
#else
#define HAVE_KERNEL 0
#endif

int cpu_gemm_supported(void)
{
#if HAVE_KERNEL
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

int cpu_gemm_auto_own(int has_avx512, const char *corename, int threads)
{
    /* OpenBLAS's AVX-512 sgemm kernels (its names, lower case as openblas_get_corename) */
    static const char *const avx512_kernels[] = {"skylakex", "cooperlake", "sapphirerapids"};
    if (!has_avx512 || threads > 1)
        return 0;
    for (size_t i = 0; corename && i < sizeof avx512_kernels / sizeof avx512_kernels[0]; i++)
        if (strcasecmp(corename, avx512_kernels[i]) == 0)
            return 0;
    return 1;
}

struct cpu_gemm *cpu_gemm_new(void)
{
    struct cpu_gemm *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->ap = aligned_alloc(64, (size_t)MC * KC * sizeof(float));
    g->bp = aligned_alloc(64, (size_t)KC * ((NC + NR - 1) / NR * NR) * sizeof(float));
    if (!g->ap || !g->bp) {
        cpu_gemm_free(g);
        return NULL;
    }
    return g;
}

void cpu_gemm_free(struct cpu_gemm *g)
{
    if (!g)
        return;
    free(g->ap);
    free(g->bp);
    free(g);
}

/* A panel of `width` lanes (rows of A, or columns of B) over kc steps, lane-interleaved:
 * dst[p * width + l]. Lanes from `used` on are zero. Element (l, p) of the source is at
 * src[l * lane_stride + p * step_stride]; the walk follows whichever stride is 1. */
static void pack_panel(float *restrict dst, const float *src, size_t lane_stride,
                       size_t step_stride, size_t width, size_t used, size_t kc)
{
    if (lane_stride == 1) { /* `used` contiguous floats per step */
        for (size_t p = 0; p < kc; p++) {
            float *d = dst + p * width;
            memcpy(d, src + p * step_stride, used * sizeof *d);
            for (size_t l = used; l < width; l++)
                d[l] = 0.0f;
        }
        return;
    }
    for (size_t l = 0; l < width; l++) { /* each lane contiguous in p */
        const float *s = src + l * lane_stride;
        if (l < used)
            for (size_t p = 0; p < kc; p++)
                dst[p * width + l] = s[p];
        else
            for (size_t p = 0; p < kc; p++)
                dst[p * width + l] = 0.0f;
    }
}

/* op(A)'s rows [i0, i0 + mc) x steps [p0, p0 + kc) into MR-row panels: A(i, p) is
 * a[i + p lda], or a[p + i lda] transposed. */
static void pack_a(float *dst, int ta, const float *a, size_t lda, size_t i0, size_t p0, size_t mc,
                   size_t kc)
{
    for (size_t ir = 0; ir < mc; ir += MR, dst += kc * MR) {
        size_t rows = mc - ir < MR ? mc - ir : MR;
        if (ta)
            pack_panel(dst, a + (i0 + ir) * lda + p0, lda, 1, MR, rows, kc);
        else
            pack_panel(dst, a + p0 * lda + i0 + ir, 1, lda, MR, rows, kc);
    }
}

/* op(B)'s steps [p0, p0 + kc) x columns [j0, j0 + nc) into NR-column panels: B(p, j) is
 * b[p + j ldb], or b[j + p ldb] transposed. */
static void pack_b(float *dst, int tb, const float *b, size_t ldb, size_t p0, size_t j0, size_t kc,
                   size_t nc)
{
    for (size_t jr = 0; jr < nc; jr += NR, dst += kc * NR) {
        size_t cols = nc - jr < NR ? nc - jr : NR;
        if (tb)
            pack_panel(dst, b + p0 * ldb + j0 + jr, 1, ldb, NR, cols, kc);
        else
            pack_panel(dst, b + (j0 + jr) * ldb + p0, ldb, 1, NR, cols, kc);
    }
}

#if HAVE_KERNEL
/* The MR x NR tile at c (rows < m, columns < n are stored) = alpha A-panel . B-panel +
 * beta c (beta == 0: c is not read). */
AVX512 static void micro_kernel(size_t kc, const float *restrict a, const float *restrict b,
                                float *c, size_t ldc, size_t m, size_t n, float alpha, float beta)
{
    __m512 lo[NR], hi[NR];
#pragma GCC unroll 12
    for (int j = 0; j < NR; j++)
        lo[j] = hi[j] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p++, a += MR, b += NR) {
        __m512 a0 = _mm512_load_ps(a), a1 = _mm512_load_ps(a + 16);
#pragma GCC unroll 12
        for (int j = 0; j < NR; j++) {
            __m512 bj = _mm512_set1_ps(b[j]);
            lo[j] = _mm512_fmadd_ps(a0, bj, lo[j]);
            hi[j] = _mm512_fmadd_ps(a1, bj, hi[j]);
        }
    }
    __mmask16 mlo = m >= 16 ? 0xffff : (__mmask16)((1u << m) - 1);
    __mmask16 mhi = m >= 32 ? 0xffff : m <= 16 ? 0 : (__mmask16)((1u << (m - 16)) - 1);
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int j = 0; j < NR; j++) {
        if ((size_t)j >= n)
            break;
        float *cj = c + (size_t)j * ldc;
        __m512 x0 = _mm512_mul_ps(va, lo[j]), x1 = _mm512_mul_ps(va, hi[j]);
        if (beta != 0.0f) {
            x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mlo, cj), x0);
            x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mhi, cj + 16), x1);
        }
        _mm512_mask_storeu_ps(cj, mlo, x0);
        _mm512_mask_storeu_ps(cj + 16, mhi, x1);
    }
}
#endif

void cpu_gemm_run(struct cpu_gemm *g, int ta, int tb, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
#if HAVE_KERNEL
    size_t M = (size_t)m, N = (size_t)n, K = (size_t)k, LDC = (size_t)ldc;
    for (size_t jc = 0; jc < N; jc += NC) {
        size_t nc = N - jc < NC ? N - jc : NC;
        for (size_t pc = 0; pc < K; pc += KC) {
            size_t kc = K - pc < KC ? K - pc : KC;
            float bet = pc == 0 ? beta : 1.0f; /* later k blocks add to the first's result */
            pack_b(g->bp, tb, b, (size_t)ldb, pc, jc, kc, nc);
            for (size_t ic = 0; ic < M; ic += MC) {
                size_t mc = M - ic < MC ? M - ic : MC;
                pack_a(g->ap, ta, a, (size_t)lda, ic, pc, mc, kc);
                for (size_t jr = 0; jr < nc; jr += NR)
                    for (size_t ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, g->ap + ir * kc, g->bp + jr * kc,
                                     c + (jc + jr) * LDC + ic + ir, LDC, mc - ir, nc - jr, alpha,
                                     bet);
            }
        }
    }
#else
    (void)g, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
#endif
}
