// CUDA update kernels: the optimizer, clipping, L1, the parallel engines' model updates and
// the fp16 transport; the formulas are backend.h's, written as cpu_update.c writes them.
//
// Bit-identical to the CPU. The CUDA files are compiled with --fmad=false: every a*b+c
// rounds twice, as the CPU's code does (its loops are built without FMA), and division
// and sqrt are IEEE round-to-nearest (nvcc's default), so momentum SGD, BlockMomentumSGD
// and the model differences give the CPU's bits. The norms and the RmsProp mean are sums in double
// over a fixed reduction tree: the same on every run, within rounding of the CPU's
// sequential sum.
#include <cuda_fp16.h>

#include "math/cuda_internal.h"

#define GRID_LOOP(i, n)                                                                            \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                        \
         i += (size_t)gridDim.x * blockDim.x)

#define LAUNCH(b, n) <<<cu_blocks(n), CU_THREADS, 0, cu_state(b)->stream>>>

#define REDUCE_BLOCKS 512

__global__ static void sgd_k(float *w, const float *g, float *s1, size_t n, float m, float a,
                             int nag)
{
    GRID_LOOP(i, n)
    {
        float v = m * s1[i] + a * g[i];
        s1[i] = v;
        w[i] -= nag ? m * v + a * g[i] : v;
    }
}

void cu_sgd_update(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                   float a, int nag)
{
    if (!n)
        return;
    sgd_k LAUNCH(b, n)(w, g, s1, n, m, a, nag);
    cu_launched(b, "sgd_update");
}

__global__ static void adam_k(float *w, const float *g, float *s1, float *s2, size_t n, float b1,
                              float b2, float scale, float rc2, float eps)
{
    GRID_LOOP(i, n)
    {
        s1[i] = b1 * s1[i] + (1 - b1) * g[i];
        s2[i] = b2 * s2[i] + (1 - b2) * g[i] * g[i];
        w[i] -= scale * s1[i] / (sqrtf(s2[i]) * rc2 + eps);
    }
}

void cu_adam_update(struct backend *b, float *w, const float *g, float *s1, float *s2, size_t n,
                    float b1, float b2, float scale, float rc2, float eps)
{
    if (!n)
        return;
    adam_k LAUNCH(b, n)(w, g, s1, s2, n, b1, b2, scale, rc2, eps);
    cu_launched(b, "adam_update");
}

__global__ static void adagrad_k(float *w, const float *g, float *s1, size_t n, float step,
                                 float eps)
{
    GRID_LOOP(i, n)
    {
        s1[i] += g[i] * g[i];
        w[i] -= step * g[i] / (sqrtf(s1[i]) + eps);
    }
}

void cu_adagrad_update(struct backend *b, float *w, const float *g, float *s1, size_t n, float step,
                       float eps)
{
    if (!n)
        return;
    adagrad_k LAUNCH(b, n)(w, g, s1, n, step, eps);
    cu_launched(b, "adagrad_update");
}

__global__ static void fsadagrad_k(float *w, const float *g, float *s1, float *s2, size_t n,
                                   float lr, float m, float vw, float mul, float ug)
{
    GRID_LOOP(i, n)
    {
        float gi = g[i], sq = vw * s1[i] + (1.0f - vw) * gi * gi;
        s1[i] = sq;
        if (sq != 0.0f) {
            float f = mul * (1.0f / sqrtf(sq));
            gi *= f > 10.0f ? 10.0f : f;
        }
        if (m > 0.0f) {
            gi = m * s2[i] + ug * gi;
            s2[i] = gi;
        }
        w[i] -= lr * gi;
    }
}

void cu_fsadagrad_update(struct backend *b, float *w, const float *g, float *s1, float *s2,
                         size_t n, float lr, float m, float vw, float mul, float ug)
{
    if (!n)
        return;
    fsadagrad_k LAUNCH(b, n)(w, g, s1, s2, n, lr, m, vw, mul, ug);
    cu_launched(b, "fsadagrad_update");
}

/* ---------------------------------------------------------------- reductions in double */

// Block sums of terms[i] (or terms[i]^2) over a fixed grid, then one block over them: the
// result in *out. The grid depends only on n, so the order does too.
__global__ static void partial_k(const float *x, size_t n, int square, double *partial)
{
    double s = 0.0;
    GRID_LOOP(i, n) s += square ? (double)x[i] * x[i] : (double)x[i];
    double t = cu_block_sum(s);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = t;
}

__global__ static void final_k(const double *partial, unsigned count, double *out)
{
    double s = 0.0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x)
        s += partial[i];
    double t = cu_block_sum(s);
    if (threadIdx.x == 0)
        *out = t;
}

// sum of x (or of x^2) into the device double *out; scratch holds the partial sums.
static void device_sum(struct backend *b, const float *x, size_t n, int square, double *out,
                       double *partial)
{
    unsigned g = cu_blocks(n);
    g = g > REDUCE_BLOCKS ? REDUCE_BLOCKS : g;
    cudaStream_t s = cu_state(b)->stream;
    partial_k<<<g, CU_THREADS, 0, s>>>(x, n, square, partial);
    final_k<<<1, CU_THREADS, 0, s>>>(partial, g, out);
    cu_launched(b, "sum");
}

/* ---------------------------------------------------------------- RmsProp */

__global__ static void rms_init_k(const float *g, float *s1, float *s2, float *s3, size_t n)
{
    GRID_LOOP(i, n)
    {
        s1[i] = g[i] * g[i];
        s2[i] = 0.0f;
        s3[i] = 0.02f;
    }
}

// Everything up to w: g becomes the scaled gradient, a (the factor) goes to fac.
__global__ static void rms_k(float *g, float *s1, float *s2, float *s3, float *fac, size_t n,
                             struct bk_rmsprop p)
{
    GRID_LOOP(i, n)
    {
        float gi = g[i];
        s1[i] = p.gamma * s1[i] + (1.0f - p.gamma) * (gi * gi);
        float sign = (float)((0.0f < gi) - (gi < 0.0f));
        if (s2[i] * sign > 0.0f)
            s3[i] = fminf(s3[i] * p.inc, p.max);
        else
            s3[i] = fmaxf(s3[i] * p.dec, p.min);
        float a = s3[i] / sqrtf(s1[i] + 1e-6f);
        g[i] = gi * a;
        s2[i] = sign;
        fac[i] = a;
    }
}

__global__ static void rms_apply_k(float *w, const float *g, size_t n, float lr, int ave,
                                   const double *sum)
{
    float step = lr;
    if (ave && n > 0)
        step = (float)(lr / (*sum / (double)n));
    GRID_LOOP(i, n) w[i] -= step * g[i];
}

void cu_rmsprop_update(struct backend *b, float *w, float *g, float *s1, float *s2, float *s3,
                       size_t n, const struct bk_rmsprop *p)
{
    if (!n)
        return;
    // scratch: the factors (n floats), the sum, the partial sums
    size_t fbytes = (n * sizeof(float) + 15) / 16 * 16;
    char *scr = (char *)cu_scratch(b, fbytes + (1 + REDUCE_BLOCKS) * sizeof(double));
    if (!scr)
        return;
    float *fac = (float *)scr;
    double *sum = (double *)(scr + fbytes), *partial = sum + 1;
    if (p->init) {
        rms_init_k LAUNCH(b, n)(g, s1, s2, s3, n);
        cu_launched(b, "rmsprop_update (init)");
    }
    rms_k LAUNCH(b, n)(g, s1, s2, s3, fac, n, *p);
    cu_launched(b, "rmsprop_update");
    if (p->ave_mult)
        device_sum(b, fac, n, 0, sum, partial);
    rms_apply_k LAUNCH(b, n)(w, g, n, p->lr, p->ave_mult, sum);
    cu_launched(b, "rmsprop_update (apply)");
}

/* ---------------------------------------------------------------- clipping, L1 */

__global__ static void clip_value_k(float *x, size_t n, float max)
{
    GRID_LOOP(i, n) x[i] = x[i] > max ? max : x[i] < -max ? -max : x[i];
}

void cu_clip_value(struct backend *b, float *x, size_t n, float max)
{
    if (!n)
        return;
    clip_value_k LAUNCH(b, n)(x, n, max);
    cu_launched(b, "clip_value");
}

__global__ static void clip_norm_k(float *x, size_t n, float max, const double *sumsq)
{
    double norm = sqrt(*sumsq);
    if (!(norm > max))
        return;
    float s = (float)(max / norm);
    GRID_LOOP(i, n) x[i] *= s;
}

void cu_clip_norm(struct backend *b, float *x, size_t n, float max)
{
    if (!n)
        return;
    double *sum = (double *)cu_scratch(b, (1 + REDUCE_BLOCKS) * sizeof(double));
    if (!sum)
        return;
    device_sum(b, x, n, 1, sum, sum + 1);
    clip_norm_k LAUNCH(b, n)(x, n, max, sum);
    cu_launched(b, "clip_norm");
}

__global__ static void soft_threshold_k(float *w, size_t n, float t)
{
    GRID_LOOP(i, n) w[i] = w[i] > t ? w[i] - t : w[i] < -t ? w[i] + t : 0.0f;
}

void cu_soft_threshold(struct backend *b, float *w, size_t n, float t)
{
    if (!n)
        return;
    soft_threshold_k LAUNCH(b, n)(w, n, t);
    cu_launched(b, "soft_threshold");
}

/* ---------------------------------------------------------------- model synchronization */

__global__ static void sub_scaled_k(float *y, const float *x, const float *z, size_t n, float f)
{
    if (f == 1.0f) {
        GRID_LOOP(i, n) y[i] = x[i] - z[i];
        return;
    }
    GRID_LOOP(i, n) y[i] = f * (x[i] - z[i]);
}

void cu_sub_scaled(struct backend *b, float *y, const float *x, const float *z, size_t n, float f)
{
    if (!n)
        return;
    sub_scaled_k LAUNCH(b, n)(y, x, z, n, f);
    cu_launched(b, "sub_scaled");
}

__global__ static void block_momentum_k(float *w, float *prev, float *d, const float *g, size_t n,
                                        float bm, float gain, int nesterov)
{
    GRID_LOOP(i, n)
    {
        float di = bm * d[i] + gain * g[i];
        float x = prev[i] - di;
        if (nesterov)
            x -= bm * di;
        d[i] = di;
        w[i] = x;
        prev[i] = x;
    }
}

void cu_block_momentum(struct backend *b, float *w, float *prev, float *d, const float *g, size_t n,
                       float bm, float gain, int nesterov)
{
    if (!n)
        return;
    block_momentum_k LAUNCH(b, n)(w, prev, d, g, n, bm, gain, nesterov);
    cu_launched(b, "block_momentum");
}

/* ---------------------------------------------------------------- fp16 transport */

__global__ static void to_half_k(uint16_t *h, const float *x, size_t n)
{
    GRID_LOOP(i, n) h[i] = __half_as_ushort(__float2half_rn(x[i]));
}

__global__ static void from_half_k(float *x, const uint16_t *h, size_t n)
{
    GRID_LOOP(i, n) x[i] = __half2float(__ushort_as_half(h[i]));
}

// Converted on the device: half the bytes cross the bus. The host buffer is read by the
// caller as soon as this returns, so the copy is waited for.
void cu_half_out(struct backend *b, uint16_t *host, const float *x, size_t n)
{
    if (!n)
        return;
    uint16_t *h = (uint16_t *)cu_scratch(b, n * sizeof *h);
    if (!h)
        return;
    struct cuda_state *st = cu_state(b);
    to_half_k LAUNCH(b, n)(h, x, n);
    cu_launched(b, "half_out");
    cu_check(b, cudaMemcpyAsync(host, h, n * sizeof *h, cudaMemcpyDeviceToHost, st->stream),
             "half_out (copy)");
    cu_check(b, cudaStreamSynchronize(st->stream), "half_out (wait)");
}

void cu_half_in(struct backend *b, float *x, const uint16_t *host, size_t n)
{
    if (!n)
        return;
    uint16_t *h = (uint16_t *)cu_scratch(b, n * sizeof *h);
    if (!h)
        return;
    cu_to_device(b, h, host, n * sizeof *h, "half_in (copy)");
    from_half_k LAUNCH(b, n)(x, h, n);
    cu_launched(b, "half_in");
}
