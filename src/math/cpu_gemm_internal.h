/* Internal to partrain's sgemm (cpu_gemm.c, cpu_gemm_pack.c): the blocking, and the
 * packing of op(A) and op(B) into the panels the micro-kernel reads. */
#ifndef PT_MATH_CPU_GEMM_INTERNAL_H
#define PT_MATH_CPU_GEMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define MR             32   /* a tile's rows: two vectors */
#define NR             12   /* a tile's columns */
#define KC             256  /* the longest k block */
#define MC             256  /* rows of A packed at a time (MC x KC in L2) */
#define NC             3072 /* columns of B packed at a time */
#define CPU_GEMM_HOLDS 16   /* matrices held (cpu_gemm_hold) at once */

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_KERNEL 1
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f")))
#else
#define HAVE_KERNEL 0
#endif

#if HAVE_KERNEL
/* op(A)'s rows [i0, i0 + mc) x steps [p0, p0 + kc) into MR-row panels: A(i, p) is
 * a[i + p lda], or a[p + i lda] transposed. */
AVX512 void cpu_gemm_pack_a(float *dst, int ta, const float *a, size_t lda, size_t i0, size_t p0,
                            size_t mc, size_t kc);
/* op(B)'s steps [p0, p0 + kc) x columns [j0, j0 + nc) into NR-column panels: B(p, j) is
 * b[p + j ldb], or b[j + p ldb] transposed. */
AVX512 void cpu_gemm_pack_b(float *dst, int tb, const float *b, size_t ldb, size_t p0, size_t j0,
                            size_t kc, size_t nc);

/* The lines of the next A block to pack, fetched a few between two tiles of this block:
 * W1 (1.6 MB) and W2 (1 MB) come from L3 at every step, and fetched during the FMAs they
 * are in cache when their pack reads them (measured on the MLP, one core: a block's pack
 * 14.9 -> 7.3 µs, hot in L2 6.0; bench/RESULTS.md). `runs` runs of `lines` lines (the
 * run's bytes and, where they may straddle one more, a line more) lie `stride` bytes
 * apart; `per` lines between two tiles. */
struct ahead {
    const char *base;
    size_t stride, runs, lines, per, run, line;
};

/* h set to the lines of op(A)'s block of rows [i0, i0 + mc) x steps [p0, p0 + kc), to be
 * fetched over `tiles` calls of cpu_gemm_ahead_some. */
void cpu_gemm_ahead_set(struct ahead *h, int ta, const float *a, size_t lda, size_t i0, size_t p0,
                        size_t mc, size_t kc, size_t tiles);

static inline void cpu_gemm_ahead_some(struct ahead *h)
{
    for (size_t n = h->per; n && h->run < h->runs; n--) {
        _mm_prefetch(h->base + h->run * h->stride + h->line * 64, _MM_HINT_T1);
        if (++h->line == h->lines) {
            h->line = 0;
            h->run++;
        }
    }
}
#endif

#endif
