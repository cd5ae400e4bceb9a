/* Packing for partrain's sgemm (cpu_gemm.c): op(A) into MR-row panels and op(B) into
 * NR-column panels (see cpu_gemm_internal.h), and the lines of the next block of A fetched
 * ahead while the current one runs. */
#include <stdint.h>
#include <string.h>

#include "math/cpu_gemm_internal.h"

#if HAVE_KERNEL
/* Rows r[0..15] -> columns: on return r[q] holds element q of every input row. */
AVX512 static inline void transpose16(__m512 r[16])
{
    __m512 t[16], u[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) { /* interleave 32-bit elements of row pairs */
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) { /* then 64-bit pairs: u[4g + e] holds rows 4g..4g+3 of
                                     elements e, e + 4, e + 8, e + 12 (one per 128-bit lane) */
        __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]);
        __m512d c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
        u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
#pragma GCC unroll 4
    for (int e = 0; e < 4; e++) { /* then 128-bit lanes across the four row groups */
        __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);
        __m512 v1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xdd);
        __m512 w0 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
        __m512 w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xdd);
        r[e] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[e + 8] = _mm512_shuffle_f32x4(v0, w0, 0xdd);
        r[e + 4] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[e + 12] = _mm512_shuffle_f32x4(v1, w1, 0xdd);
    }
}

/* The lowest n bits set (n <= 16). */
static inline __mmask16 low_bits(size_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/* `lanes` lanes (rows of A, or columns of B) over kc steps into panels of `width` lanes,
 * each lane-interleaved: panel q holds lanes [q width, q width + width) at
 * dst[q kc width + p width + l]; lanes past `lanes` in the last panel are zero. Element
 * (l, p) of the source is at src[l * lane_stride + p * step_stride]; one of the two
 * strides is 1 (column-major BLAS operands). Lanes contiguous in memory are copied a
 * vector at a time, step by step across 8 panels (so the source is read in order);
 * steps contiguous (a transposed operand) go through 16 x 16 transposes in registers.
 * Masked loads never touch memory outside the operand. */
AVX512 static inline __attribute__((always_inline)) void
copy8(float *restrict dst, const float *src, size_t step_stride, size_t width, size_t kc)
{
    /* 8 whole panels of lanes contiguous in memory (width MR or NR, a constant in each
     * caller): the general loop below with its masks and offsets known, which makes it
     * 3-4x fewer instructions (measured hot in L2: a 256 x 196 block of W1 6.3 -> 2.x µs) */
    __mmask16 tail = low_bits(width % 16);
    for (size_t p = 0; p < kc; p++) {
        const float *s = src + p * step_stride;
        float *d = dst + p * width;
        if (p + 8 < kc) { /* every line of the step 8 ahead (a column apart: too far for
                             the hardware prefetcher to follow) */
            uintptr_t at = (uintptr_t)(s + 8 * step_stride), end = at + 8 * width * sizeof(float);
            for (at &= ~(uintptr_t)63; at < end; at += 64)
                _mm_prefetch((const char *)at, _MM_HINT_T0);
        }
#pragma GCC unroll 8
        for (size_t q = 0; q < 8; q++) {
#pragma GCC unroll 2
            for (size_t l0 = 0; l0 + 16 <= width; l0 += 16)
                _mm512_storeu_ps(d + q * kc * width + l0, _mm512_loadu_ps(s + q * width + l0));
            if (width % 16)
                _mm512_mask_storeu_ps(d + q * kc * width + width / 16 * 16, tail,
                                      _mm512_maskz_loadu_ps(tail, s + q * width + width / 16 * 16));
        }
    }
}

AVX512 static void pack(float *restrict dst, const float *src, size_t lane_stride,
                        size_t step_stride, size_t width, size_t lanes, size_t kc)
{
    size_t panels = (lanes + width - 1) / width;
    if (lane_stride == 1) {
        for (size_t q0 = 0; q0 < panels; q0 += 8) { /* 8 panels at a time: 8 write streams */
            if ((q0 + 8) * width <= lanes && (width == MR || width == NR)) {
                if (width == MR)
                    copy8(dst + q0 * kc * MR, src + q0 * MR, step_stride, MR, kc);
                else
                    copy8(dst + q0 * kc * NR, src + q0 * NR, step_stride, NR, kc);
                continue;
            }
            /* the group's vectors (at most 8 panels of at most 32 lanes): where each comes
             * from and goes to in a step, and its masks, worked out once for all steps */
            size_t from[16], to[16], nv = 0;
            __mmask16 lm[16], sm[16];
            for (size_t q = q0; q < panels && q < q0 + 8; q++)
                for (size_t l0 = 0; l0 < width; l0 += 16, nv++) {
                    size_t w = width - l0 < 16 ? width - l0 : 16;
                    size_t first = q * width + l0, u = lanes > first ? lanes - first : 0;
                    from[nv] = first;
                    to[nv] = q * kc * width + l0;
                    lm[nv] = low_bits(u < w ? u : w);
                    sm[nv] = low_bits(w);
                }
            for (size_t p = 0; p < kc; p++) {
                const float *s = src + p * step_stride;
                float *d = dst + p * width;
                if (p + 8 < kc) /* steps lie a column apart: too far for the hardware
                                   prefetcher to follow */
                    for (size_t v = 0; v < nv; v++)
                        _mm_prefetch((const char *)(s + 8 * step_stride + from[v]), _MM_HINT_T0);
                for (size_t v = 0; v < nv; v++)
                    _mm512_mask_storeu_ps(d + to[v], sm[v],
                                          _mm512_maskz_loadu_ps(lm[v], s + from[v]));
            }
        }
        return;
    }
    for (size_t q = 0; q < panels; q++, dst += kc * width)
        for (size_t p = 0; p < kc; p += 16) {
            size_t steps = kc - p < 16 ? kc - p : 16;
            __mmask16 pm = low_bits(steps);
            for (size_t l0 = 0; l0 < width; l0 += 16) {
                size_t w = width - l0 < 16 ? width - l0 : 16, first = q * width + l0;
                __mmask16 st = low_bits(w);
                __m512 r[16];
#pragma GCC unroll 16
                for (size_t l = 0; l < 16; l++)
                    r[l] = first + l < lanes
                               ? _mm512_maskz_loadu_ps(pm, src + (first + l) * lane_stride + p)
                               : _mm512_setzero_ps();
                transpose16(r);
                float *d = dst + p * width + l0;
                if (steps == 16) {
#pragma GCC unroll 16
                    for (size_t i = 0; i < 16; i++)
                        _mm512_mask_storeu_ps(d + i * width, st, r[i]);
                } else {
                    for (size_t i = 0; i < steps; i++)
                        _mm512_mask_storeu_ps(d + i * width, st, r[i]);
                }
            }
        }
}

/* op(A)'s rows [i0, i0 + mc) x steps [p0, p0 + kc) into MR-row panels: A(i, p) is
 * a[i + p lda], or a[p + i lda] transposed. */
AVX512 void cpu_gemm_pack_a(float *dst, int ta, const float *a, size_t lda, size_t i0, size_t p0,
                            size_t mc, size_t kc)
{
    if (ta)
        pack(dst, a + i0 * lda + p0, lda, 1, MR, mc, kc);
    else
        pack(dst, a + p0 * lda + i0, 1, lda, MR, mc, kc);
}

/* op(B)'s steps [p0, p0 + kc) x columns [j0, j0 + nc) into NR-column panels: B(p, j) is
 * b[p + j ldb], or b[j + p ldb] transposed. */
AVX512 void cpu_gemm_pack_b(float *dst, int tb, const float *b, size_t ldb, size_t p0, size_t j0,
                            size_t kc, size_t nc)
{
    if (tb)
        pack(dst, b + p0 * ldb + j0, 1, ldb, NR, nc, kc);
    else
        pack(dst, b + j0 * ldb + p0, ldb, 1, NR, nc, kc);
}

void cpu_gemm_ahead_set(struct ahead *h, int ta, const float *a, size_t lda, size_t i0, size_t p0,
                        size_t mc, size_t kc, size_t tiles)
{
    const float *first = ta ? a + i0 * lda + p0 : a + p0 * lda + i0; /* A(i0, p0) */
    size_t len = (ta ? kc : mc) * sizeof(float);                     /* bytes in a run */
    h->stride = lda * sizeof(float);
    h->base = (const char *)first;
    h->lines = (len + 63) / 64 + ((uintptr_t)first % 64 != 0 || h->stride % 64 != 0);
    h->runs = ta ? mc : kc;
    h->per = (h->runs * h->lines + tiles - 1) / tiles;
    h->run = h->line = 0;
}
#endif
