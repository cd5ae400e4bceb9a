/* Internal to the CPU backend: the kernels behind struct backend_ops, and the float math
 * they share.
 *
 * Vectorization. gcc -O2 (cost model "very-cheap") only vectorizes a loop whose vector code
 * replaces it entirely, so element loops run over blocks of CPU_BLOCK with a fixed trip
 * count (vectorized) and finish the remainder with a scalar tail. glibc's expf is a call
 * and stops vectorization, hence cpu_exp below: branch-free (the input range is limited with
 * integer minimums on the float's bits), Cody-Waite reduction, a degree-7 polynomial and
 * the exponent built in the float's bits.
 */
#ifndef PT_MATH_CPU_KERNELS_H
#define PT_MATH_CPU_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/backend.h"

#define CPU_BLOCK 8

#define CPU_INLINE static inline __attribute__((always_inline))

#if defined(__GNUC__) && !defined(__clang__)
/* The loop's pointers never overlap: vectorize without runtime alias checks. */
#define CPU_IVDEP _Pragma("GCC ivdep")
#else
#define CPU_IVDEP
#endif

/* x[0] + ... + x[n-1] in float, in CPU_BLOCK running sums (a loop gcc vectorizes; one
 * running sum waits for each add), then the tail. */
CPU_INLINE float cpu_sum(const float *x, size_t n)
{
    float acc[CPU_BLOCK] = {0};
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = 0; k < CPU_BLOCK; k++)
            acc[k] += x[i + k];
    float s = 0.0f;
    for (size_t k = 0; k < CPU_BLOCK; k++)
        s += acc[k];
    for (; i < n; i++)
        s += x[i];
    return s;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
/* The transcendental-heavy kernels are also compiled for AVX2 + FMA (x86-64-v3) and picked
 * at load time by the CPU (an ifunc), while the build stays runnable on any x86-64. */
#define CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CPU_CLONES
#endif

/* x limited to [-87, 88] (where e^x is a normal float), on the float's bits: as unsigned
 * integers, floats below -87 are exactly those above -87's bits; as signed integers,
 * floats above 88 are exactly those above 88's bits. Integer minimums have no NaN rules,
 * so gcc vectorizes them (a float compare-and-select here becomes a branch). */
static inline float cpu_exp_range(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = u > 0xC2AE0000u ? 0xC2AE0000u : u; /* -87.0f */
    int32_t i = (int32_t)u;
    i = i > 0x42B00000 ? 0x42B00000 : i; /* 88.0f */
    memcpy(&x, &i, sizeof x);
    return x;
}

/* e^x; relative error below 1e-7 where the result is a normal float. NaN and +-inf give
 * NaN (x0 - x0 below), so a diverging network shows up in its criterion. */
static inline float cpu_exp(float x0)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float x = cpu_exp_range(x0);
    float t = x * 1.44269504f + magic; /* x / ln 2, rounded, in the low mantissa bits */
    float n = t - magic;
    uint32_t tb;
    memcpy(&tb, &t, sizeof tb);
    float f = x - n * 0.693359375f - n * -2.12194440e-4f; /* |f| <= ln(2)/2 */
    float p = 1.0f / 5040.0f;
    p = p * f + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    uint32_t bits = (tb - 0x4B400000u + 127u) << 23; /* 2^n; n in [-126, 127] */
    float s;
    memcpy(&s, &bits, sizeof s);
    return p * s + (x0 - x0);
}

static inline float cpu_sigmoid(float x)
{
    return 1.0f / (1.0f + cpu_exp(-x));
}

/* tanh(x) = 2 sigmoid(2x) - 1 (absolute error about 1e-7 near 0). */
static inline float cpu_tanh(float x)
{
    return 2.0f / (1.0f + cpu_exp(-2.0f * x)) - 1.0f;
}

/* cpu_kernels.c */
void cpu_bias_act(struct backend *b, enum bk_act act, float *z, const float *bias, int rows,
                  size_t cols);
void cpu_act_grad(struct backend *b, enum bk_act act, float *dz, const float *y, size_t n);
void cpu_act_to(struct backend *b, enum bk_act act, float *y, const float *x, size_t n);
void cpu_act_grad_to(struct backend *b, enum bk_act act, float *dx, const float *dy, const float *y,
                     size_t n);
void cpu_sum_cols(struct backend *b, float *out, const float *x, int rows, size_t cols, int ld);
/* out[i] = the sum over p < k of op(A)(i, p) for i < m (A(i, p) = a[i + p lda], or
 * a[p + i lda] when ta), added in order from zero: sum_cols's bits (gemm_sgd's asum). */
void cpu_row_sums(float *out, int ta, const float *a, size_t lda, size_t m, size_t k);
void cpu_norm(struct backend *b, float *x, const float *mean, const float *invstd, int rows,
              size_t cols);
/* cpu_norm from x into y (distinct) */
void cpu_norm_to(float *y, const float *x, const float *mean, const float *invstd, int rows,
                 size_t cols);
void cpu_dropout(struct backend *b, float *y, float *mask, const float *x, size_t n, float rate,
                 uint64_t seed);

/* cpu_criteria.c */
void cpu_criterion(struct backend *b, enum bk_crit_kind kind, const struct bk_crit *c);
void cpu_ewise(struct backend *be, enum bk_ew op, float *y, const float *a, const float *x,
               int rows, size_t cols, size_t bcols);
void cpu_softmax(struct backend *be, float *y, const float *x, int rows, size_t cols);
void cpu_mask_cols(struct backend *be, float *x, int rows, size_t cols, const float *mask);
void cpu_copy2d(struct backend *be, float *dst, int ldd, const float *src, int lds, int rows,
                size_t cols);
void cpu_axpy2d(struct backend *be, float *dst, int ldd, const float *src, int lds, int rows,
                size_t cols, float a);
void cpu_hardmax(struct backend *be, float *y, const float *x, int rows, size_t cols);
void cpu_softmax_grad(struct backend *be, float *dx, const float *dy, const float *y, int rows,
                      size_t cols);

/* cpu_quantize.c: one column (the packed format: quantize.h). Quantize v = g + r (r ==
 * NULL: v = g) into out and, when r is not NULL, store the error feedback r = v -
 * reconstruct(quantize(v)); zero_threshold matters only for bits == 1; g and r may not
 * overlap out. Decode: out = values (accumulate == 0) or out += values. */
void cpu_quant_encode_column(const float *g, float *r, size_t rows, int bits, int zero_threshold,
                             unsigned char *out);
void cpu_quant_decode_column(const unsigned char *in, size_t rows, int bits, int accumulate,
                             float *out);
void cpu_quantize(struct backend *b, const struct bk_columns *c, const float *g, float *r,
                  unsigned char *out);
void cpu_unquantize(struct backend *b, const struct bk_columns *c, const unsigned char *in,
                    int accumulate, float *out);

/* cpu_update.c: the optimizer and the engines' model updates (see backend_ops) */
void cpu_sgd_update(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                    float a, int nag);
void cpu_sgd_update_clip(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                         float a, int nag, float max);
void cpu_adam_update(struct backend *b, float *w, const float *g, float *s1, float *s2, size_t n,
                     float b1, float b2, float scale, float rc2, float eps);
void cpu_adagrad_update(struct backend *b, float *w, const float *g, float *s1, size_t n,
                        float step, float eps);
void cpu_fsadagrad_update(struct backend *b, float *w, const float *g, float *s1, float *s2,
                          size_t n, float lr, float m, float vw, float mul, float ug);
void cpu_rmsprop_update(struct backend *b, float *w, float *g, float *s1, float *s2, float *s3,
                        size_t n, const struct bk_rmsprop *p);
void cpu_clip_value(struct backend *b, float *x, size_t n, float max);
void cpu_clip_norm(struct backend *b, float *x, size_t n, float max);
void cpu_soft_threshold(struct backend *b, float *w, size_t n, float t);
void cpu_sub_scaled(struct backend *b, float *y, const float *x, const float *z, size_t n, float f);
void cpu_block_momentum(struct backend *b, float *w, float *prev, float *d, const float *g,
                        size_t n, float bm, float gain, int nesterov);

/* cpu_lstm.c */
void cpu_lstm_forward(struct backend *b, const struct bk_lstm_fwd *s);
void cpu_lstm_backward(struct backend *b, const struct bk_lstm_bwd *s);

/* cpu_conv.c */
void cpu_unpool_backward(struct backend *b, const struct bk_conv *c, float *dx, const float *dy,
                         const int32_t *arg, size_t cols);
void cpu_map_bias(struct backend *b, float *y, const float *bias, int maps, size_t cells,
                  size_t cols);
void cpu_map_bias_grad(struct backend *b, float *db, const float *dy, int maps, size_t cells,
                       size_t cols);
void cpu_bn_forward(struct backend *b, int train, float *y, const float *x, int maps, int spatial,
                    size_t cols, const float *mask, const float *scale, const float *bias,
                    float *rm, float *rv, double f, double eps, float *mean, float *invstd);
void cpu_bn_backward(struct backend *b, const float *dy, const float *x, int maps, int spatial,
                     size_t cols, const float *mask, const float *scale, const float *mean,
                     const float *invstd, float *dx, float *dscale, float *dbias);
void cpu_conv_forward(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                      const float *w, const float *bias, size_t cols, float *ws);
void cpu_conv_backward(struct backend *b, const struct bk_conv *c, const float *dy, const float *x,
                       const float *w, float *dx, float *dw, float *dbias, size_t cols, float *ws);
void cpu_pool_forward(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                      size_t cols, int32_t *arg);
void cpu_pool_backward(struct backend *b, const struct bk_conv *c, float *dx, const float *dy,
                       const int32_t *arg, size_t cols);

#endif
