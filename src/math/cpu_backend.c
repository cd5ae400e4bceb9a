/* The CPU backend: host memory, OpenBLAS sgemm, and the kernels of cpu_kernels.c,
 * cpu_criteria.c, cpu_lstm.c, cpu_update.c, cpu_quantize.c and half.c behind struct
 * backend_ops. Single-threaded apart from OpenBLAS's own threads; nothing here allocates
 * after alloc. Matrix products go to
 * OpenBLAS or, on AVX-512 CPUs, to partrain's kernel (cpu_gemm.h). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "math/cpu_gemm.h"
#include "math/cpu_kernels.h"
#include "core/half.h"

#define CPU_ALIGN 64 /* bytes: a cache line, and whole AVX-512 vectors */

static int cpu_alloc(struct backend *b, size_t n, float **out, struct pt_err *e)
{
    (void)b;
    *out = NULL;
    if (n > ((size_t)-1 - CPU_ALIGN) / sizeof(float))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (a buffer of %zu floats)", n);
    size_t bytes = (n * sizeof(float) + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
    *out = aligned_alloc(CPU_ALIGN, bytes ? bytes : CPU_ALIGN);
    if (!*out)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (a buffer of %zu floats)", n);
    return 0;
}

static void cpu_release(struct backend *b, float *p)
{
    (void)b;
    free(p);
}

static int cpu_upload(struct backend *b, float *dst, const float *host, size_t n, struct pt_err *e)
{
    (void)b;
    (void)e;
    if (n && dst != host)
        memcpy(dst, host, n * sizeof *dst);
    return 0;
}

static int cpu_download(struct backend *b, float *host, const float *src, size_t n,
                        struct pt_err *e)
{
    (void)b;
    (void)e;
    if (n && host != src)
        memcpy(host, src, n * sizeof *host);
    return 0;
}

/* The copy is made at once: nothing to overlap, nothing to join. */
static int cpu_upload_ahead(struct backend *b, float *dst, const float *host, size_t n,
                            struct pt_err *e)
{
    return cpu_upload(b, dst, host, n, e);
}

static void cpu_upload_join(struct backend *b)
{
    (void)b;
}

static int cpu_upload_wait(struct backend *b, struct pt_err *e)
{
    (void)b;
    (void)e;
    return 0;
}

static int cpu_download_async(struct backend *b, float *host, const float *src, size_t n,
                              struct pt_err *e)
{
    return cpu_upload(b, host, src, n, e); /* a copy between host buffers, at once */
}

static void cpu_copy(struct backend *b, float *dst, const float *src, size_t n)
{
    (void)b;
    if (n && dst != src)
        memmove(dst, src, n * sizeof *dst);
}

static int cpu_sync(struct backend *b, struct pt_err *e)
{
    (void)b;
    (void)e;
    return 0;
}

static void cpu_destroy(struct backend *b)
{
    cpu_gemm_free(b->impl);
    free(b);
}

static void cpu_fill(struct backend *b, float *x, size_t n, float value)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

static void cpu_scale(struct backend *b, float *x, size_t n, float alpha)
{
    (void)b;
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            x[k] *= alpha;
    for (; i < n; i++)
        x[i] *= alpha;
}

static void cpu_axpy(struct backend *b, float *restrict y, const float *restrict x, size_t n,
                     float a)
{
    (void)b;
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            y[k] += a * x[k];
    for (; i < n; i++)
        y[i] += a * x[i];
}

static void cpu_mul(struct backend *b, float *restrict y, const float *restrict x, size_t n)
{
    (void)b;
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            y[k] *= x[k];
    for (; i < n; i++)
        y[i] *= x[i];
}

/* Does partrain's kernel take this product (a non-empty one)? A short, narrow C goes to
 * OpenBLAS, whose overhead is less. */
static int own_takes(const struct backend *b, int m, int n, int k)
{
    return b->impl && m > 0 && n > 0 && k > 0 && (m >= 32 || n >= 32);
}

static void cpu_gemm(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                     float *c, int ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        /* an empty product: BLAS implementations differ on whether beta == 0 clears C */
        for (int j = 0; j < n; j++) {
            float *col = c + (size_t)j * (size_t)ldc;
            if (beta == 0.0f)
                cpu_fill(b, col, (size_t)m, 0.0f);
            else
                cpu_scale(b, col, (size_t)m, beta);
        }
        return;
    }
    if (own_takes(b, m, n, k)) {
        cpu_gemm_run(b->impl, ta == BK_TRANS, tb == BK_TRANS, m, n, k, alpha, a, lda, x, ldx, beta,
                     c, ldc);
        return;
    }
    cblas_sgemm(CblasColMajor, ta == BK_TRANS ? CblasTrans : CblasNoTrans,
                tb == BK_TRANS ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, x, ldx, beta, c,
                ldc);
}

static void cpu_gemm_hold_a(struct backend *b, const float *a)
{
    if (b->impl)
        cpu_gemm_hold(b->impl, a);
}

/* backend.h's gemm_sparse: column by column, X's nonzeros found by a scan (k floats a
 * column: 40 KB for a 10 000-word vocabulary against the 1.5 M multiply-adds of the dense
 * product by a 150-row embedding). */
static void cpu_gemm_sparse(struct backend *b, enum bk_trans tx, int m, int n, int k,
                            const float *a, int lda, const float *x, int ldx, float beta, float *c,
                            int ldc)
{
    size_t M = (size_t)m, cols = tx == BK_TRANS ? (size_t)k : (size_t)n;
    for (size_t j = 0; m > 0 && j < cols; j++) { /* beta C, as gemm (0: overwritten) */
        if (beta == 0.0f)
            cpu_fill(b, c + j * (size_t)ldc, M, 0.0f);
        else if (beta != 1.0f)
            cpu_scale(b, c + j * (size_t)ldc, M, beta);
    }
    for (size_t j = 0; m > 0 && j < (size_t)n; j++) {
        const float *xj = x + j * (size_t)ldx;
        for (size_t p = 0; p < (size_t)k; p++) {
            if (xj[p] == 0.0f)
                continue;
            if (tx == BK_NOTRANS) /* C[:, j] += A[:, p] x(p, j) */
                cpu_axpy(b, c + j * (size_t)ldc, a + p * (size_t)lda, M, xj[p]);
            else /* C[:, p] += A[:, j] x(p, j) */
                cpu_axpy(b, c + p * (size_t)ldc, a + j * (size_t)lda, M, xj[p]);
        }
    }
}

/* A product with more done to it (the fused ops below): on partrain's kernel inside its
 * tiles when `inside` (the kernel has that epilogue), else the product and then the pass,
 * column by column (C's rows are the pass's vectors; the same bits either way). */
static void gemm_then(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                      float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                      float *c, int ldc, int inside, enum cpu_gemm_epi kind, const struct bk_sgd *u,
                      const float *v, enum bk_act act, float *asum)
{
    if (inside && own_takes(b, m, n, k)) {
        cpu_gemm_run_epi(b->impl, ta == BK_TRANS, tb == BK_TRANS, m, n, k, alpha, a, lda, x, ldx,
                         beta, c, ldc, kind, u, v, asum);
        return;
    }
    if (asum)
        cpu_row_sums(asum, ta == BK_TRANS, a, (size_t)lda, (size_t)m, (size_t)k);
    cpu_gemm(b, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, c, ldc);
    for (int j = 0; m > 0 && j < n; j++) {
        size_t o = (size_t)j * (size_t)ldc;
        if (kind == CPU_EPI_SGD) /* OpenBLAS: while the gradient is still in the cache */
            cpu_sgd_update(b, u->w + o, c + o, u->s + o, (size_t)m, u->m, u->a, u->nag);
        else if (kind == CPU_EPI_RELU_GRAD)
            cpu_act_grad(b, act, c + o, v + o, (size_t)m);
        else
            cpu_bias_act(b, act, c + o, v, m, 1);
    }
}

static void cpu_gemm_sgd(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                         float *c, int ldc, const struct bk_sgd *u, float *asum)
{
    gemm_then(b, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, c, ldc, 1, CPU_EPI_SGD, u, NULL,
              BK_ACT_NONE, asum);
}

static void cpu_gemm_bias_act(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n,
                              int k, float alpha, const float *a, int lda, const float *x, int ldx,
                              float beta, float *c, int ldc, const float *bias, enum bk_act act)
{
    gemm_then(b, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, c, ldc, act == BK_ACT_RELU && bias,
              CPU_EPI_BIAS_RELU, NULL, bias, act, NULL);
}

static void cpu_gemm_act_grad(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n,
                              int k, float alpha, const float *a, int lda, const float *x, int ldx,
                              float beta, float *c, int ldc, enum bk_act act, const float *y)
{
    gemm_then(b, ta, tb, m, n, k, alpha, a, lda, x, ldx, beta, c, ldc, act == BK_ACT_RELU,
              CPU_EPI_RELU_GRAD, NULL, y, act, NULL);
}

static int cpu_upload_norm(struct backend *b, float *x, const float *host, const float *mean,
                           const float *invstd, int rows, size_t cols, struct pt_err *e)
{
    (void)e;
    if (x == host)
        cpu_norm(b, x, mean, invstd, rows, cols);
    else
        cpu_norm_to(x, host, mean, invstd, rows, cols);
    return 0;
}

static void cpu_half_out(struct backend *b, uint16_t *host, const float *x, size_t n)
{
    (void)b;
    bk_half_pack(host, x, n);
}

static void cpu_half_in(struct backend *b, float *x, const uint16_t *host, size_t n)
{
    (void)b;
    bk_half_unpack(x, host, n);
}

static const struct backend_ops cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_upload,
    .upload_norm = cpu_upload_norm,
    .download = cpu_download,
    .copy = cpu_copy,
    .upload_ahead = cpu_upload_ahead,
    .upload_join = cpu_upload_join,
    .upload_wait = cpu_upload_wait,
    .download_async = cpu_download_async,
    .sync = cpu_sync,
    .destroy = cpu_destroy,
    .gemm = cpu_gemm,
    .gemm_sgd = cpu_gemm_sgd,
    .gemm_act_grad = cpu_gemm_act_grad,
    .gemm_bias_act = cpu_gemm_bias_act,
    .gemm_hold = cpu_gemm_hold_a,
    .gemm_sparse = cpu_gemm_sparse,
    .act_to = cpu_act_to,
    .act_grad_to = cpu_act_grad_to,
    .fill = cpu_fill,
    .scale = cpu_scale,
    .axpy = cpu_axpy,
    .mul = cpu_mul,
    .bias_act = cpu_bias_act,
    .act_grad = cpu_act_grad,
    .sum_cols = cpu_sum_cols,
    .norm = cpu_norm,
    .dropout = cpu_dropout,
    .criterion = cpu_criterion,
    .ewise = cpu_ewise,
    .softmax = cpu_softmax,
    .mask_cols = cpu_mask_cols,
    .copy2d = cpu_copy2d,
    .axpy2d = cpu_axpy2d,
    .softmax_grad = cpu_softmax_grad,
    .hardmax = cpu_hardmax,
    .lstm_forward = cpu_lstm_forward,
    .lstm_backward = cpu_lstm_backward,
    .unpool_backward = cpu_unpool_backward,
    .map_bias = cpu_map_bias,
    .map_bias_grad = cpu_map_bias_grad,
    .bn_forward = cpu_bn_forward,
    .bn_backward = cpu_bn_backward,
    .conv_forward = cpu_conv_forward,
    .conv_backward = cpu_conv_backward,
    .pool_forward = cpu_pool_forward,
    .pool_backward = cpu_pool_backward,
    .sgd_update = cpu_sgd_update,
    .sgd_update_clip = cpu_sgd_update_clip,
    .adam_update = cpu_adam_update,
    .adagrad_update = cpu_adagrad_update,
    .fsadagrad_update = cpu_fsadagrad_update,
    .rmsprop_update = cpu_rmsprop_update,
    .clip_value = cpu_clip_value,
    .clip_norm = cpu_clip_norm,
    .soft_threshold = cpu_soft_threshold,
    .sub_scaled = cpu_sub_scaled,
    .block_momentum = cpu_block_momentum,
    .quantize = cpu_quantize,
    .unquantize = cpu_unquantize,
    .half_out = cpu_half_out,
    .half_in = cpu_half_in,
};

static int gemm_mode = CPU_GEMM_AUTO;

int backend_cpu_set_gemm(int mode, struct pt_err *e)
{
    if (mode == CPU_GEMM_AVX512 && !cpu_gemm_supported())
        return pt_err_set(e, PT_EUSER, "error: cpuGemm=avx512: this CPU has no AVX-512F");
    gemm_mode = mode;
    return 0;
}

int backend_cpu_own_gemm(void)
{
    if (gemm_mode == CPU_GEMM_OPENBLAS || !cpu_gemm_supported())
        return 0;
    if (gemm_mode == CPU_GEMM_AVX512)
        return 1;
    int threads = 1;
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
    threads = openblas_get_num_threads();
#endif
    return cpu_gemm_auto_own(1, threads);
}

int backend_cpu_new(struct backend **out, struct pt_err *e)
{
    *out = pt_calloc(1, sizeof **out, e);
    if (!*out)
        return e ? e->code : PT_ENOMEM;
    (*out)->ops = &cpu_ops;
    (*out)->host_memory = 1;
    if (backend_cpu_own_gemm() && !((*out)->impl = cpu_gemm_new())) {
        free(*out);
        *out = NULL;
        return pt_err_set(e, PT_ENOMEM, "error: out of memory (gemm packing buffers)");
    }
    return 0;
}

void backend_free(struct backend *b)
{
    if (b)
        b->ops->destroy(b);
}
