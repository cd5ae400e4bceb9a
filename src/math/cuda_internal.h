// Internal to the CUDA backend (the cuda_*.cu files): its state and the kernels' entry
// points behind struct backend_ops. Compiled by nvcc as C++; backend.h's C symbols keep C
// linkage.
//
// One stream per backend: every op is queued on it in program order, so an op reads what
// the ops before it wrote without further synchronization; the host waits only in
// download, sync, and the ops whose results are HOST memory (quantize, half_out). A second
// stream carries upload_ahead's copies, joined to the first by events. The first
// failure (a launch, a cuBLAS call, a copy) is kept in the state and reported by the next
// sync or download, as backend.h asks.
#ifndef PT_MATH_CUDA_INTERNAL_H
#define PT_MATH_CUDA_INTERNAL_H

#include <cstddef>
#include <cstdint>
#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "math/backend.h"
}

// Launch shape of the element kernels: blocks of CU_THREADS, at most CU_MAX_BLOCKS of
// them (grid-stride loops cover the rest).
#define CU_THREADS    256
#define CU_MAX_BLOCKS 8192

struct cuda_state {
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    char failure[512]; // the first asynchronous failure ("" while none)
    int failed;        // PT_E* of that failure
    // scratch device memory shared by the ops (one op at a time uses it, in stream order;
    // growing it waits for the stream, so a buffer in use is never freed under a kernel)
    void *scratch;
    size_t scratch_bytes;
    float *ones; // a vector of ones (row sums through cuBLAS gemv)
    size_t ones_bytes;
    // the quantizers' column tables on the device, kept while the same run of columns
    // comes back (the engines quantize the same layout every minibatch)
    void *qtab_dev;
    size_t qtab_bytes;
    void *qtab_host; // the host image of qtab_dev
    size_t qtab_used;
    void *qbytes; // device image of a run's packed bytes
    size_t qbytes_cap;
    void *pinned; // pinned host bounce buffer (quantize and half transfers)
    size_t pinned_bytes;
    // upload_ahead: the copies' own stream, made on first use; `joined` marks the compute
    // stream's point at the last upload_join (the copies wait for it: the steps before
    // it are done with their inputs), `copied` the copies' end (upload_join waits for
    // it); ahead: copies queued that no upload_join has waited for; marked: `joined` was
    // recorded
    cudaStream_t copy_stream;
    cudaEvent_t joined, copied;
    int ahead, marked;
    // capture_begin .. capture_end: the stream records (a CUDA graph); a failure meanwhile
    // spoils the recording (spoilt) instead of being kept in `failed`
    int capturing, spoilt;
};

static inline struct cuda_state *cu_state(struct backend *b)
{
    return (struct cuda_state *)b->impl;
}

// Record a CUDA failure (the first one wins); returns whether rc was a failure.
int cu_check(struct backend *b, cudaError_t rc, const char *what);
int cu_check_blas(struct backend *b, cublasStatus_t rc, const char *what);
// After a kernel launch: record a launch failure.
void cu_launched(struct backend *b, const char *what);
// The device buffer *p of *cap bytes grown to at least bytes (a quarter more, at least
// `least`): growing waits for the stream, so no queued kernel loses a buffer it reads. NULL
// after a failure (recorded, with what).
void *cu_device_buffer(struct backend *b, void **p, size_t *cap, size_t bytes, size_t least,
                       const char *what);
// Scratch of at least bytes (NULL after a failure, which is recorded).
void *cu_scratch(struct backend *b, size_t bytes);
// A device vector of at least n ones.
const float *cu_ones(struct backend *b, size_t n);
// Pinned host memory of at least bytes (NULL after a failure).
void *cu_pinned(struct backend *b, size_t bytes);
// Host to device on the stream; host[] may be reused when this returns.
void cu_to_device(struct backend *b, void *dst, const void *host, size_t bytes, const char *what);
// Blocks for n elements.
static inline unsigned cu_blocks(size_t n)
{
    size_t g = (n + CU_THREADS - 1) / CU_THREADS;
    return (unsigned)(g == 0 ? 1 : g > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : g);
}

// The sum of every thread's v over a block of CU_THREADS threads, in a fixed tree (the
// same on every run); every thread gets it.
__device__ static inline double cu_block_sum(double v)
{
    __shared__ double part[CU_THREADS];
    part[threadIdx.x] = v;
    __syncthreads();
    for (int w = CU_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    double total = part[0];
    __syncthreads(); // part may be reused by a later call
    return total;
}

// cuda_kernels.cu: element ops, activations, criteria, softmax, the graph's ops, dropout
void cu_fill(struct backend *b, float *x, size_t n, float value);
void cu_scale(struct backend *b, float *x, size_t n, float alpha);
void cu_axpy(struct backend *b, float *y, const float *x, size_t n, float a);
void cu_mul(struct backend *b, float *y, const float *x, size_t n);
void cu_bias_act(struct backend *b, enum bk_act act, float *z, const float *bias, int rows,
                 size_t cols);
void cu_act_grad(struct backend *b, enum bk_act act, float *dz, const float *y, size_t n);
void cu_sum_cols(struct backend *b, float *out, const float *x, int rows, size_t cols, int ld);
void cu_norm(struct backend *b, float *x, const float *mean, const float *invstd, int rows,
             size_t cols);
void cu_dropout(struct backend *b, float *y, float *mask, const float *x, size_t n, float rate,
                uint64_t seed);
void cu_criterion(struct backend *b, enum bk_crit_kind kind, const struct bk_crit *c);
void cu_ewise(struct backend *b, enum bk_ew op, float *y, const float *a, const float *x, int rows,
              size_t cols, size_t bcols);
void cu_mask_cols(struct backend *b, float *x, int rows, size_t cols, const float *mask);
void cu_copy2d(struct backend *b, float *dst, int ldd, const float *src, int lds, int rows,
               size_t cols);
void cu_axpy2d(struct backend *b, float *dst, int ldd, const float *src, int lds, int rows,
               size_t cols, float a);
void cu_softmax(struct backend *b, float *y, const float *x, int rows, size_t cols);
void cu_hardmax(struct backend *b, float *y, const float *x, int rows, size_t cols);
void cu_softmax_grad(struct backend *b, float *dx, const float *dy, const float *y, int rows,
                     size_t cols);
void cu_lstm_forward(struct backend *b, const struct bk_lstm_fwd *s);
void cu_lstm_backward(struct backend *b, const struct bk_lstm_bwd *s);

// cuda_update.cu: the optimizer, clipping, the engines' model updates, fp16 transport
void cu_sgd_update(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                   float a, int nag);
void cu_adam_update(struct backend *b, float *w, const float *g, float *s1, float *s2, size_t n,
                    float b1, float b2, float scale, float rc2, float eps);
void cu_adagrad_update(struct backend *b, float *w, const float *g, float *s1, size_t n, float step,
                       float eps);
void cu_fsadagrad_update(struct backend *b, float *w, const float *g, float *s1, float *s2,
                         size_t n, float lr, float m, float vw, float mul, float ug);
void cu_rmsprop_update(struct backend *b, float *w, float *g, float *s1, float *s2, float *s3,
                       size_t n, const struct bk_rmsprop *p);
void cu_clip_value(struct backend *b, float *x, size_t n, float max);
void cu_clip_norm(struct backend *b, float *x, size_t n, float max);
void cu_soft_threshold(struct backend *b, float *w, size_t n, float t);
void cu_sub_scaled(struct backend *b, float *y, const float *x, const float *z, size_t n, float f);
void cu_block_momentum(struct backend *b, float *w, float *prev, float *d, const float *g, size_t n,
                       float bm, float gain, int nesterov);
void cu_half_out(struct backend *b, uint16_t *host, const float *x, size_t n);
void cu_half_in(struct backend *b, float *x, const uint16_t *host, size_t n);

// cuda_quantize.cu: 1-bit SGD's column quantizers, byte for byte the CPU's
void cu_quantize(struct backend *b, const struct bk_columns *c, const float *g, float *r,
                 unsigned char *out);
void cu_unquantize(struct backend *b, const struct bk_columns *c, const unsigned char *in,
                   int accumulate, float *out);

#endif
