/* The CPU backend's update kernels: the optimizer (momentum SGD, Adam, AdaGrad, clipping,
 * L1) and the parallel engines' model updates (BlockMomentumSGD, DataParallelASGD). The
 * formulas' parameters come from the callers (learn/learner.c, src/parallel); see
 * backend.h.
 *
 * Bit-identical everywhere. Every value is computed with one rounding per operation as
 * written: the momentum SGD loop has an AVX2 clone WITHOUT FMA (a fused multiply-add would
 * round differently from the scalar code), and the other loops are compiled for the
 * baseline only, so the same inputs give the same models on every CPU. */
#include "math/cpu_kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
/* AVX2 without FMA: the vector code rounds exactly as the scalar code (bit-identical
 * models on every CPU). */
#define UPDATE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define UPDATE_CLONES
#endif
#define UPDATE_BLOCK 16

/* Momentum SGD over n parameters. restrict and fixed-size blocks let gcc -O2 vectorize the
 * loop (plain pointers that may alias kept it scalar: 0.29 ms per MLP step). */
UPDATE_CLONES static void sgd_loop(int nag, float m, float a, float *restrict sg, float *restrict w,
                                   const float *restrict g, size_t n)
{
    size_t i = 0;
    if (!nag) {
        for (; i + UPDATE_BLOCK <= n; i += UPDATE_BLOCK)
            for (size_t k = i; k < i + UPDATE_BLOCK; k++) {
                sg[k] = m * sg[k] + a * g[k];
                w[k] -= sg[k];
            }
        for (; i < n; i++) {
            sg[i] = m * sg[i] + a * g[i];
            w[i] -= sg[i];
        }
        return;
    }
    for (; i + UPDATE_BLOCK <= n; i += UPDATE_BLOCK)
        for (size_t k = i; k < i + UPDATE_BLOCK; k++) {
            sg[k] = m * sg[k] + a * g[k];
            w[k] -= m * sg[k] + a * g[k];
        }
    for (; i < n; i++) {
        sg[i] = m * sg[i] + a * g[i];
        w[i] -= m * sg[i] + a * g[i];
    }
}

void cpu_sgd_update(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                    float a, int nag)
{
    (void)b;
    sgd_loop(nag, m, a, s1, w, g, n);
}

/* cpu_clip_value's value, as a step of the loop below */
#define CLIPPED(x, max) ((x) > (max) ? (max) : (x) < -(max) ? -(max) : (x))

/* sgd_loop on the gradient clipped to [-max, max], in one pass. */
UPDATE_CLONES static void sgd_clip_loop(int nag, float m, float a, float max, float *restrict sg,
                                        float *restrict w, const float *restrict g, size_t n)
{
    if (!nag) {
        for (size_t i = 0; i < n; i++) {
            float c = CLIPPED(g[i], max);
            sg[i] = m * sg[i] + a * c;
            w[i] -= sg[i];
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        float c = CLIPPED(g[i], max);
        sg[i] = m * sg[i] + a * c;
        w[i] -= m * sg[i] + a * c;
    }
}

void cpu_sgd_update_clip(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                         float a, int nag, float max)
{
    (void)b;
    sgd_clip_loop(nag, m, a, max, s1, w, g, n);
}

void cpu_adam_update(struct backend *b, float *w, const float *g, float *s1, float *s2, size_t n,
                     float b1, float b2, float scale, float rc2, float eps)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        s1[i] = b1 * s1[i] + (1 - b1) * g[i];
        s2[i] = b2 * s2[i] + (1 - b2) * g[i] * g[i];
        w[i] -= scale * s1[i] / (sqrtf(s2[i]) * rc2 + eps);
    }
}

void cpu_adagrad_update(struct backend *b, float *w, const float *g, float *s1, size_t n,
                        float step, float eps)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        s1[i] += g[i] * g[i];
        w[i] -= step * g[i] / (sqrtf(s1[i]) + eps);
    }
}

void cpu_fsadagrad_update(struct backend *b, float *w, const float *g, float *s1, float *s2,
                          size_t n, float lr, float m, float vw, float mul, float ug)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i], sq = vw * s1[i] + (1.0f - vw) * gi * gi;
        s1[i] = sq;
        if (sq != 0.0f) {
            float f = mul * (1.0f / sqrtf(sq));
            gi *= f > 10.0f ? 10.0f : f; /* CNTK caps the AdaGrad factor at 10 */
        }
        if (m > 0.0f) {
            gi = m * s2[i] + ug * gi;
            s2[i] = gi;
        }
        w[i] -= lr * gi;
    }
}

/* The mean factor is summed in double (CNTK sums in float). */
void cpu_rmsprop_update(struct backend *b, float *w, float *g, float *s1, float *s2, float *s3,
                        size_t n, const struct bk_rmsprop *p)
{
    (void)b;
    if (p->init)
        for (size_t i = 0; i < n; i++) {
            s1[i] = g[i] * g[i];
            s2[i] = 0.0f;
            s3[i] = 0.02f;
        }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i];
        s1[i] = p->gamma * s1[i] + (1.0f - p->gamma) * (gi * gi);
        float sign = (float)((0.0f < gi) - (gi < 0.0f));
        if (s2[i] * sign > 0.0f)
            s3[i] = fminf(s3[i] * p->inc, p->max);
        else
            s3[i] = fmaxf(s3[i] * p->dec, p->min);
        float a = s3[i] / sqrtf(s1[i] + 1e-6f);
        g[i] = gi * a;
        s2[i] = sign;
        sum += a;
    }
    float step = p->lr;
    if (p->ave_mult && n > 0)
        step = (float)(p->lr / (sum / (double)n));
    for (size_t i = 0; i < n; i++)
        w[i] -= step * g[i];
}

void cpu_clip_value(struct backend *b, float *x, size_t n, float max)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        x[i] = CLIPPED(x[i], max);
}

void cpu_clip_norm(struct backend *b, float *x, size_t n, float max)
{
    (void)b;
    double norm = 0;
    for (size_t i = 0; i < n; i++)
        norm += (double)x[i] * x[i];
    norm = sqrt(norm);
    if (norm > max) {
        float s = (float)(max / norm);
        for (size_t i = 0; i < n; i++)
            x[i] *= s;
    }
}

void cpu_soft_threshold(struct backend *b, float *w, size_t n, float t)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        w[i] = w[i] > t ? w[i] - t : w[i] < -t ? w[i] + t : 0.0f;
}

void cpu_sub_scaled(struct backend *b, float *y, const float *x, const float *z, size_t n, float f)
{
    (void)b;
    if (f == 1.0f) { /* the plain difference (BlockMomentumSGD's prev - w) */
        for (size_t i = 0; i < n; i++)
            y[i] = x[i] - z[i];
        return;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = f * (x[i] - z[i]);
}

void cpu_block_momentum(struct backend *b, float *w, float *prev, float *d, const float *g,
                        size_t n, float bm, float gain, int nesterov)
{
    (void)b;
    for (size_t i = 0; i < n; i++) {
        float di = bm * d[i] + gain * g[i];
        float x = prev[i] - di;
        if (nesterov)
            x -= bm * di;
        d[i] = di;
        w[i] = x;
        prev[i] = x;
    }
}
