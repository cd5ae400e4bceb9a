// The cuBLAS backend (built with --with-cuda): device memory from cudaMalloc, one stream,
// cublasSgemm for the products and CUDA kernels for everything else (cuda_kernels.cu,
// cuda_update.cu, cuda_quantize.cu). See cuda_internal.h for the state and backend.h for
// the contract. The products run in full fp32 (no TF32): CPU and GPU training of the same
// config agree to 1e-4 after an epoch. Built as the plugin partrain-cuda.so (with
// core/err.c; every symbol hidden but the two entry points at the end), which the trainer
// opens when a GPU is asked for (backend.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "math/cuda_internal.h"

extern "C" {
#include "core/err.h"
}

int cu_check(struct backend *b, cudaError_t rc, const char *what)
{
    if (rc == cudaSuccess)
        return 0;
    struct cuda_state *st = cu_state(b);
    if (st->capturing) // the recording is spoilt; its ops run again unrecorded
        st->spoilt = 1;
    else if (!st->failed) {
        st->failed = rc == cudaErrorMemoryAllocation ? PT_ENOMEM : PT_ESYS;
        snprintf(st->failure, sizeof st->failure, "error: CUDA device %d: %s: %s", st->device, what,
                 cudaGetErrorString(rc));
    }
    return 1;
}

int cu_check_blas(struct backend *b, cublasStatus_t rc, const char *what)
{
    if (rc == CUBLAS_STATUS_SUCCESS)
        return 0;
    struct cuda_state *st = cu_state(b);
    if (st->capturing)
        st->spoilt = 1;
    else if (!st->failed) {
        st->failed = rc == CUBLAS_STATUS_ALLOC_FAILED ? PT_ENOMEM : PT_ESYS;
        snprintf(st->failure, sizeof st->failure, "error: CUDA device %d: cuBLAS %s: %s",
                 st->device, what, cublasGetStatusString(rc));
    }
    return 1;
}

void cu_launched(struct backend *b, const char *what)
{
    cu_check(b, cudaGetLastError(), what);
}

// The kept failure into e (0 when none).
static int cu_report(struct backend *b, struct pt_err *e)
{
    struct cuda_state *st = cu_state(b);
    if (!st->failed)
        return 0;
    return pt_err_set(e, st->failed, "%s", st->failure);
}

void *cu_device_buffer(struct backend *b, void **p, size_t *cap, size_t bytes, size_t least,
                       const char *what)
{
    if (*p && *cap >= bytes)
        return *p;
    struct cuda_state *st = cu_state(b);
    if (st->capturing) { // no waits, frees or allocations in a recording
        st->spoilt = 1;
        return NULL;
    }
    if (*p) { // a kernel queued earlier may still read it: wait first
        b->freed++;
        cu_check(b, cudaStreamSynchronize(cu_state(b)->stream), what);
        cu_check(b, cudaFree(*p), what);
    }
    *p = NULL;
    *cap = 0;
    size_t want = bytes < least ? least : bytes + bytes / 4;
    if (cu_check(b, cudaMalloc(p, want), what))
        return NULL;
    *cap = want;
    return *p;
}

void *cu_scratch(struct backend *b, size_t bytes)
{
    struct cuda_state *st = cu_state(b);
    return cu_device_buffer(b, &st->scratch, &st->scratch_bytes, bytes, 4096, "scratch");
}

__global__ static void ones_kernel(float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = 1.0f;
}

const float *cu_ones(struct backend *b, size_t n)
{
    struct cuda_state *st = cu_state(b);
    size_t had = st->ones_bytes;
    float *ones = (float *)cu_device_buffer(b, (void **)&st->ones, &st->ones_bytes,
                                            n * sizeof(float), 4096, "ones");
    if (ones && st->ones_bytes != had) { // a new buffer: fill it
        size_t all = st->ones_bytes / sizeof(float);
        ones_kernel<<<cu_blocks(all), CU_THREADS, 0, st->stream>>>(ones, all);
        cu_launched(b, "ones");
    }
    return ones;
}

void *cu_pinned(struct backend *b, size_t bytes)
{
    struct cuda_state *st = cu_state(b);
    if (st->pinned && st->pinned_bytes >= bytes)
        return st->pinned;
    // the bounce buffer is only used between a copy and the wait for it: nothing in flight
    if (st->pinned)
        cu_check(b, cudaFreeHost(st->pinned), "cudaFreeHost");
    st->pinned = NULL;
    st->pinned_bytes = 0;
    size_t want = bytes < 65536 ? 65536 : bytes + bytes / 4;
    if (cu_check(b, cudaMallocHost(&st->pinned, want), "cudaMallocHost"))
        return NULL;
    st->pinned_bytes = want;
    return st->pinned;
}

/* ---------------------------------------------------------------- memory and transfers */

void cu_to_device(struct backend *b, void *dst, const void *host, size_t bytes, const char *what)
{
    if (!bytes)
        return;
    struct cuda_state *st = cu_state(b);
    cu_check(b, cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, st->stream), what);
    // From pageable memory the call returns once host[] has been read. From pinned memory
    // (a stage) it returns at once and the copy reads host[] later: wait, so the caller may
    // write there again (the communicator does, for the next exchange).
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, host) == cudaSuccess && at.type == cudaMemoryTypeHost)
        cu_check(b, cudaStreamSynchronize(st->stream), what);
    else
        (void)cudaGetLastError(); // an unregistered pointer is not an error here
}

static int cu_alloc(struct backend *b, size_t n, float **out, struct pt_err *e)
{
    *out = NULL;
    if (n > ((size_t)-1) / sizeof(float) / 2)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (a buffer of %zu floats)", n);
    void *p = NULL;
    cudaError_t rc = cudaMalloc(&p, (n ? n : 1) * sizeof(float));
    if (rc != cudaSuccess) {
        (void)cudaGetLastError(); // an allocation failure is not sticky: clear it
        return pt_err_set(e, rc == cudaErrorMemoryAllocation ? PT_ENOMEM : PT_ESYS,
                          "error: CUDA device %d: out of device memory (a buffer of %zu "
                          "floats): %s",
                          cu_state(b)->device, n, cudaGetErrorString(rc));
    }
    *out = (float *)p;
    return 0;
}

static void cu_release(struct backend *b, float *p)
{
    if (!p)
        return;
    b->freed++;
    cu_check(b, cudaFree(p), "cudaFree");
}

static int cu_upload(struct backend *b, float *dst, const float *host, size_t n, struct pt_err *e)
{
    cu_to_device(b, dst, host, n * sizeof(float), "upload");
    return cu_report(b, e);
}

static int cu_download(struct backend *b, float *host, const float *src, size_t n, struct pt_err *e)
{
    struct cuda_state *st = cu_state(b);
    if (n)
        cu_check(b,
                 cudaMemcpyAsync(host, src, n * sizeof(float), cudaMemcpyDeviceToHost, st->stream),
                 "download");
    cu_check(b, cudaStreamSynchronize(st->stream), "download (wait)");
    return cu_report(b, e);
}

static void cu_copy(struct backend *b, float *dst, const float *src, size_t n)
{
    if (!n || dst == src)
        return;
    struct cuda_state *st = cu_state(b);
    size_t bytes = n * sizeof(float);
    if (dst < src + n && src < dst + n) { // overlap (memmove): through scratch
        void *tmp = cu_scratch(b, bytes);
        if (!tmp)
            return;
        cu_check(b, cudaMemcpyAsync(tmp, src, bytes, cudaMemcpyDeviceToDevice, st->stream), "copy");
        cu_check(b, cudaMemcpyAsync(dst, tmp, bytes, cudaMemcpyDeviceToDevice, st->stream), "copy");
        return;
    }
    cu_check(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st->stream), "copy");
}

// The copy stream and its events, on first use (0, or a failure recorded).
static int cu_copy_stream(struct backend *b)
{
    struct cuda_state *st = cu_state(b);
    if (st->copy_stream)
        return 0;
    if (cu_check(b, cudaEventCreateWithFlags(&st->joined, cudaEventDisableTiming),
                 "upload ahead: cudaEventCreate") ||
        cu_check(b, cudaEventCreateWithFlags(&st->copied, cudaEventDisableTiming),
                 "upload ahead: cudaEventCreate"))
        return -1;
    return cu_check(b, cudaStreamCreateWithFlags(&st->copy_stream, cudaStreamNonBlocking),
                    "upload ahead: cudaStreamCreate");
}

static int cu_upload_ahead(struct backend *b, float *dst, const float *host, size_t n,
                           struct pt_err *e)
{
    struct cuda_state *st = cu_state(b);
    if (cu_copy_stream(b))
        return cu_report(b, e);
    // after the steps before the last join (the one in progress runs beside the copy)
    if (st->marked)
        cu_check(b, cudaStreamWaitEvent(st->copy_stream, st->joined, 0), "upload ahead: wait");
    if (n)
        cu_check(b,
                 cudaMemcpyAsync(dst, host, n * sizeof(float), cudaMemcpyHostToDevice,
                                 st->copy_stream),
                 "upload ahead");
    cu_check(b, cudaEventRecord(st->copied, st->copy_stream), "upload ahead: cudaEventRecord");
    st->ahead = 1;
    return cu_report(b, e);
}

static void cu_upload_join(struct backend *b)
{
    struct cuda_state *st = cu_state(b);
    if (cu_copy_stream(b))
        return;
    cu_check(b, cudaEventRecord(st->joined, st->stream), "upload ahead: cudaEventRecord");
    st->marked = 1;
    if (st->ahead)
        cu_check(b, cudaStreamWaitEvent(st->stream, st->copied, 0), "upload ahead: join");
    st->ahead = 0;
}

static int cu_upload_wait(struct backend *b, struct pt_err *e)
{
    struct cuda_state *st = cu_state(b);
    if (st->copy_stream)
        cu_check(b, cudaEventSynchronize(st->copied), "upload ahead: wait");
    return cu_report(b, e);
}

static int cu_download_async(struct backend *b, float *host, const float *src, size_t n,
                             struct pt_err *e)
{
    if (n)
        cu_check(b,
                 cudaMemcpyAsync(host, src, n * sizeof(float), cudaMemcpyDeviceToHost,
                                 cu_state(b)->stream),
                 "download (queued)");
    return cu_report(b, e);
}

static int cu_sync(struct backend *b, struct pt_err *e)
{
    struct cuda_state *st = cu_state(b);
    if (st->copy_stream) // copies no upload_join has waited for yet, too
        cu_check(b, cudaStreamSynchronize(st->copy_stream), "synchronize");
    cu_check(b, cudaStreamSynchronize(st->stream), "synchronize");
    return cu_report(b, e);
}

/* ------------------------------------------------------------- recordings (CUDA graphs) */

static int cu_capture_begin(struct backend *b)
{
    struct cuda_state *st = cu_state(b);
    if (st->failed || st->capturing)
        return -1;
    // this thread's calls only: the reader's threads may allocate pinned memory meanwhile
    if (cudaStreamBeginCapture(st->stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    st->capturing = 1;
    st->spoilt = 0;
    return 0;
}

static void *cu_capture_end(struct backend *b)
{
    struct cuda_state *st = cu_state(b);
    if (!st->capturing)
        return NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaError_t rc = cudaStreamEndCapture(st->stream, &g);
    st->capturing = 0;
    if (rc == cudaSuccess && g && !st->spoilt && cudaGraphInstantiate(&x, g, 0) != cudaSuccess)
        x = NULL;
    if (g)
        cudaGraphDestroy(g);
    (void)cudaGetLastError(); // a spoilt recording leaves no failure behind
    st->spoilt = 0;
    return x;
}

static int cu_replay(struct backend *b, void *rec, struct pt_err *e)
{
    struct cuda_state *st = cu_state(b);
    cu_check(b, cudaGraphLaunch((cudaGraphExec_t)rec, st->stream), "replay (cudaGraphLaunch)");
    return cu_report(b, e);
}

static void cu_drop(struct backend *b, void *rec)
{
    if (rec) // a launch still in flight completes first (the runtime frees it after)
        cu_check(b, cudaGraphExecDestroy((cudaGraphExec_t)rec), "cudaGraphExecDestroy");
}

static void *cu_host_alloc(struct backend *b, size_t bytes)
{
    void *p = NULL;
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)b;
        return NULL;
    }
    return p;
}

static void cu_host_free(struct backend *b, void *p)
{
    if (p)
        cu_check(b, cudaFreeHost(p), "cudaFreeHost");
}

static void cu_destroy(struct backend *b)
{
    struct cuda_state *st = cu_state(b);
    if (st) {
        cudaStreamSynchronize(st->stream);
        if (st->copy_stream) {
            cudaStreamSynchronize(st->copy_stream);
            cudaStreamDestroy(st->copy_stream);
            cudaEventDestroy(st->joined);
            cudaEventDestroy(st->copied);
        }
        cudaFree(st->scratch);
        cudaFree(st->ones);
        cudaFree(st->qtab_dev);
        cudaFree(st->qbytes);
        cudaFreeHost(st->pinned);
        free(st->qtab_host);
        if (st->blas)
            cublasDestroy(st->blas);
        if (st->stream)
            cudaStreamDestroy(st->stream);
        free(st);
    }
    free(b);
}

/* ---------------------------------------------------------------- products */

static void cu_gemm(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                    float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                    float *c, int ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) { // the empty product: C = beta C, column by column (ldc may exceed m)
        for (int j = 0; j < n; j++) {
            float *col = c + (size_t)j * (size_t)ldc;
            if (beta == 0.0f)
                cu_fill(b, col, (size_t)m, 0.0f);
            else
                cu_scale(b, col, (size_t)m, beta);
        }
        return;
    }
    cu_check_blas(b,
                  cublasSgemm(cu_state(b)->blas, ta == BK_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N,
                              tb == BK_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, a, lda,
                              x, ldx, &beta, c, ldc),
                  "sgemm");
}

static const struct backend_ops cuda_ops = {
    .name = "cuda",
    .alloc = cu_alloc,
    .release = cu_release,
    .upload = cu_upload,
    .download = cu_download,
    .copy = cu_copy,
    .upload_ahead = cu_upload_ahead,
    .upload_join = cu_upload_join,
    .upload_wait = cu_upload_wait,
    .download_async = cu_download_async,
    .sync = cu_sync,
    .capture_begin = cu_capture_begin,
    .capture_end = cu_capture_end,
    .replay = cu_replay,
    .drop = cu_drop,
    .destroy = cu_destroy,
    .gemm = cu_gemm,
    .fill = cu_fill,
    .scale = cu_scale,
    .axpy = cu_axpy,
    .mul = cu_mul,
    .bias_act = cu_bias_act,
    .act_grad = cu_act_grad,
    .sum_cols = cu_sum_cols,
    .norm = cu_norm,
    .dropout = cu_dropout,
    .criterion = cu_criterion,
    .ewise = cu_ewise,
    .mask_cols = cu_mask_cols,
    .copy2d = cu_copy2d,
    .axpy2d = cu_axpy2d,
    .softmax = cu_softmax,
    .softmax_grad = cu_softmax_grad,
    .hardmax = cu_hardmax,
    .lstm_forward = cu_lstm_forward,
    .lstm_backward = cu_lstm_backward,
    .sgd_update = cu_sgd_update,
    .adam_update = cu_adam_update,
    .adagrad_update = cu_adagrad_update,
    .fsadagrad_update = cu_fsadagrad_update,
    .rmsprop_update = cu_rmsprop_update,
    .clip_value = cu_clip_value,
    .clip_norm = cu_clip_norm,
    .soft_threshold = cu_soft_threshold,
    .sub_scaled = cu_sub_scaled,
    .block_momentum = cu_block_momentum,
    .quantize = cu_quantize,
    .unquantize = cu_unquantize,
    .half_out = cu_half_out,
    .half_in = cu_half_in,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
};

/* ---------------------------------------------------------------- start-up */

// The plugin's interface (backend.h): the only symbols partrain-cuda.so exports.
extern "C" __attribute__((visibility("default"))) long pt_cuda_plugin_abi(void)
{
    return PT_CUDA_PLUGIN_ABI;
}

extern "C" __attribute__((visibility("default"))) int
pt_cuda_plugin_new(struct backend **out, int device, char *name, size_t name_size, struct pt_err *e)
{
    *out = NULL;
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        return pt_err_set(e, PT_EUSER, "error: deviceId=%d: no usable CUDA device: %s", device,
                          cudaGetErrorString(rc));
    }
    if (device < 0 || device >= n)
        return pt_err_set(e, PT_EUSER,
                          "error: deviceId=%d: no such CUDA device (this machine has %d: "
                          "deviceId=0..%d, or cpu)",
                          device, n, n - 1);
    cudaDeviceProp prop;
    if ((rc = cudaSetDevice(device)) != cudaSuccess ||
        (rc = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) {
        (void)cudaGetLastError();
        return pt_err_set(e, PT_ESYS, "error: deviceId=%d: CUDA could not start: %s", device,
                          cudaGetErrorString(rc));
    }
    if (name_size)
        snprintf(name, name_size, "%s", prop.name);
    struct backend *b = (struct backend *)pt_calloc(1, sizeof *b, e);
    struct cuda_state *st = (struct cuda_state *)pt_calloc(1, sizeof *st, e);
    if (!b || !st) {
        free(b);
        free(st);
        return e ? e->code : PT_ENOMEM;
    }
    st->device = device;
    b->ops = &cuda_ops;
    b->impl = st;
    b->host_memory = 0;
    if ((rc = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        cu_destroy(b);
        return pt_err_set(e, PT_ESYS, "error: deviceId=%d: cudaStreamCreate: %s", device,
                          cudaGetErrorString(rc));
    }
    cublasStatus_t brc = cublasCreate(&st->blas);
    if (brc == CUBLAS_STATUS_SUCCESS)
        brc = cublasSetStream(st->blas, st->stream);
    if (brc == CUBLAS_STATUS_SUCCESS) // fp32 products: no TF32 down-conversion
        brc = cublasSetMathMode(st->blas, CUBLAS_DEFAULT_MATH);
    if (brc != CUBLAS_STATUS_SUCCESS) {
        if (brc != CUBLAS_STATUS_SUCCESS && st->blas == NULL)
            st->blas = NULL;
        cu_destroy(b);
        return pt_err_set(e, PT_ESYS, "error: deviceId=%d: cuBLAS could not start: %s", device,
                          cublasGetStatusString(brc));
    }
    *out = b;
    return 0;
}
