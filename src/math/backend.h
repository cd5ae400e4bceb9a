/* The compute backends.
 *
 * Two parts:
 *  1. Start-up helpers (backend.c, in libpartrain.a): a description of the CPU backend
 *     (OpenBLAS kernel and threads), BLAS thread control and a probe of the CUDA devices.
 *  2. struct backend: the vtable every computation over parameter, gradient and learner
 *     memory goes through (libptnn.a): the network's layers, the optimizer updates, the
 *     parallel engines' model updates and gradient quantizers, and the staging of buffers
 *     to and from the communicator.
 *     `cpu` runs on OpenBLAS (cpu_backend.c; kernels in cpu_kernels.c, cpu_criteria.c,
 *     cpu_lstm.c); a cuBLAS backend implements the same table later (cuda_backend.cu:
 *     cudaMalloc'd device pointers, cublasSgemm, one CUDA kernel per element op, errors
 *     kept until sync).
 *
 * Device pointers. Every tensor a backend works on is a `float *` that came from
 * ops->alloc (or points inside such a buffer: views are plain pointer offsets, as with
 * cuBLAS). Code outside a backend never dereferences one unless b->host_memory is set
 * (the CPU backend); it moves data with ops->upload / ops->download.
 *
 * Matrices are column-major (BLAS convention): element (i, j) of a rows x cols matrix with
 * leading dimension ld is p[i + j * ld]. A "column" is one sample (one time step of one
 * sequence); a weight matrix W is (out x in).
 *
 * Errors. Compute ops return nothing: a backend that can fail asynchronously (CUDA) keeps
 * the first failure and reports it from the next ops->sync or ops->download. Only alloc,
 * upload, download and sync return a PT_E* code.
 */
#ifndef PT_MATH_BACKEND_H
#define PT_MATH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* "OpenBLAS 0.3.21 ... (kernel Haswell, 2 threads)" into buf. */
const char *backend_cpu_describe(char *buf, size_t size);

/* Set the BLAS threads of this process. requested > 0 is used as is; 0 chooses: the
 * OPENBLAS_NUM_THREADS environment variable when set, else cores / ranks_on_node (at
 * least 1). Returns the number now in use. */
int backend_cpu_set_threads(int requested, int ranks_on_node);

/* Matrix products of the CPU backends created from now on (cpuGemm, see cpu_gemm.h):
 * 0 auto (partrain's AVX-512 kernel with AVX-512F and one BLAS thread, else OpenBLAS:
 * cpu_gemm_auto_own), 1 OpenBLAS, 2 the AVX-512 kernel (PT_EUSER without AVX-512F). */
int backend_cpu_set_gemm(int mode, struct pt_err *e);
/* Whether a CPU backend created now uses partrain's kernel. */
int backend_cpu_own_gemm(void);

/* CUDA: number of usable devices (0 when none or not built with CUDA); the first device's
 * name in name (may be empty). Asks the NVIDIA driver alone (libcuda.so.1, opened here):
 * neither the CUDA runtime nor cuBLAS is loaded. Never fails: a broken driver counts as no
 * device, and the reason is written to why. */
int backend_cuda_probe(char *name, size_t name_size, char *why, size_t why_size);
/* Whether the cuBLAS backend can be loaded (the plugin below); else the reason in why. */
int backend_cuda_available(char *why, size_t why_size);

struct backend;

/* The cuBLAS backend is the plugin partrain-cuda.so (cuda_backend.cu and the other .cu
 * files, with cuBLAS and the CUDA runtime), opened by backend_cuda_new: from
 * PT_CUDA_PLUGIN (a path) when set, else beside the running program, else from the
 * installed package library directory. It exports these two functions, C linkage:
 *   long pt_cuda_plugin_abi(void)      PT_CUDA_PLUGIN_ABI of the build it came from
 *   int pt_cuda_plugin_new(...)        backend_cuda_new's work, same arguments
 * A plugin whose interface number differs (another build's) is refused. Bump the number
 * with any change of struct backend_ops, struct backend or the structs the ops take. */
#define PT_CUDA_PLUGIN_NAME "partrain-cuda.so"
#define PT_CUDA_PLUGIN_ABI  3L
typedef long (*backend_cuda_abi_fn)(void);
typedef int (*backend_cuda_plugin_fn)(struct backend **out, int device, char *name,
                                      size_t name_size, struct pt_err *e);

/* ------------------------------------------------------------------ the compute vtable */

/* Activation functions. Their derivatives are computed from the OUTPUT y = f(z):
 * sigmoid y(1-y), tanh 1-y^2, relu [y > 0], none 1. */
enum bk_act { BK_ACT_NONE, BK_ACT_SIGMOID, BK_ACT_TANH, BK_ACT_RELU, BK_ACT_COUNT };

/* Criteria (training or evaluation). */
enum bk_crit_kind {
    BK_CRIT_CE_SOFTMAX, /* -sum_i y_i log softmax(z)_i per column */
    BK_CRIT_SQUARE_ERR, /* sum_i (z_i - y_i)^2 per column (CNTK SquareError: no 1/2) */
    BK_CRIT_CLASS_ERR,  /* 1 when argmax z != argmax y (first maximum wins), else 0; with
                         * bk_crit.top_n > 1, 1 when y's largest entry is not among z's
                         * top_n (top-N error) */
    BK_CRIT_LOGISTIC,   /* -sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)], z = p (CNTK Logistic;
                         * p clamped to [1e-7, 1 - 1e-7] in the value and the gradient) */
    BK_CRIT_SUM,        /* sum_i z_i per column, dL/dz_i = 1 (y unused): a network's own node
                         * as its criterion, one value per sample, summed over the samples */
    BK_CRIT_COUNT
};

enum bk_trans { BK_NOTRANS = 0, BK_TRANS = 1 };

/* Element-wise operations (ewise): y = a OP b for the binary ones, y = OP(a) for the unary
 * ones (b unused), which are those from BK_EW_EXP on. */
enum bk_ew {
    BK_EW_ADD,
    BK_EW_SUB,
    BK_EW_MUL,
    BK_EW_DIV,
    BK_EW_LESS, /* comparisons: 1 where a OP b holds, else 0 */
    BK_EW_EQUAL,
    BK_EW_GREATER,
    BK_EW_GREATER_EQUAL,
    BK_EW_NOT_EQUAL,
    BK_EW_LESS_EQUAL,
    BK_EW_MAX, /* the larger of a and b */
    BK_EW_MIN,
    BK_EW_EXP,   /* unary */
    BK_EW_LOG,   /* unary */
    BK_EW_SQRT,  /* unary */
    BK_EW_ABS,   /* unary */
    BK_EW_SIGN,  /* unary: -1, 0 or 1 */
    BK_EW_RECIP, /* unary: 1 / a */
    BK_EW_SIN,   /* unary */
    BK_EW_COS,   /* unary */
    BK_EW_FLOOR, /* unary */
    BK_EW_ASIN,  /* unary */
    BK_EW_ACOS,  /* unary */
    BK_EW_DASIN, /* unary: 1 / sqrt (1 - a^2), the derivative of asin (a) */
    BK_EW_COUNT
};

static inline int bk_ew_unary(enum bk_ew op)
{
    return op >= BK_EW_EXP;
}

/* One criterion evaluation over a (rows x cols) output, contiguous (ld = rows). */
struct bk_crit {
    int rows;
    size_t cols;
    const float *z;    /* rows x cols: network output (the softmax is inside the criterion) */
    const float *y;    /* rows x cols: targets (one-hot for classification) */
    const float *mask; /* cols: 1 = the column counts, 0 = padding; NULL = all count */
    float *grad;       /* rows x cols: dCriterion/dz written here (padding: 0); NULL = none.
                        * CLASS_ERR has no gradient and ignores it. */
    float *sum;        /* 2 floats: the criterion summed over the counted columns, as
                        * sum[0] + sum[1] (a double split in two floats: ~48 bits kept) */
    int top_n;         /* CLASS_ERR: how many of z's largest entries may hold the label's
                        * (0 or 1: the largest). z_l's rank is the count of entries larger
                        * than it, and of those equal to it before it (the first of equal
                        * ones ranks first, as argmax takes the first maximum) */
};

/* One time step of a peephole LSTM layer with H cells over n sequences (columns).
 * Gate rows in every 4H-row block: [0,H) input i, [H,2H) forget f, [2H,3H) output o,
 * [3H,4H) cell candidate g. With G = gates + bias:
 *   i = sig(Gi + pi*c_prev)  f = sig(Gf + pf*c_prev)  g = tanh(Gg)
 *   c' = f*c_prev + i*g      o = sig(Go + po*c')      h' = o*tanh(c')
 * A padding column (mask 0) carries the state: c = c_prev, h = h_prev, so the last column
 * block of a padded sequence batch holds every sequence's last real state. */
struct bk_lstm_fwd {
    int hidden;          /* H */
    size_t n;            /* sequences in this step */
    float *gates;        /* 4H x n: in: pre-activations without bias (Wx x + Wh h_prev);
                          * out: the activations i, f, o, g */
    const float *bias;   /* 4H, added here */
    const float *c_prev; /* H x n */
    const float *h_prev; /* H x n */
    float *c;            /* H x n out */
    float *h;            /* H x n out */
    float *tanh_c;       /* H x n out: tanh(c'), kept for the backward pass */
    const float *peep;   /* H x 3: columns pi, pf, po */
    const float *mask;   /* n: 1 real step, 0 padding; NULL = all real */
};

/* The backward pass of one step (same shapes; inputs are what the forward step left). The
 * bias and peephole gradients are accumulated here, step by step, while the gate gradients
 * are in cache. */
struct bk_lstm_bwd {
    int hidden;
    size_t n;
    const float *gates;  /* 4H x n activations */
    const float *c_prev; /* H x n */
    const float *c;      /* H x n: c_t (the output gate's peephole input) */
    const float *tanh_c; /* H x n */
    const float *peep;   /* H x 3 */
    const float *mask;   /* n, or NULL */
    const float *dh;     /* H x n: dL/dh_t, everything that reaches h_t */
    float *dc;           /* H x n: in dL/dc_t from step t+1; out dL/dc_{t-1} (in place) */
    float *dh_prev;      /* H x n: the carry of padding columns is ADDED here; NULL at t=0 */
    float *dgates;       /* 4H x n out: dL/d(pre-activations); padding columns 0. May be
                          * gates itself (each cell's gates are read before its gradients
                          * are written over them) */
    float *dbias;        /* 4H: dL/dbias of this step ADDED */
    float *dpeep;        /* H x 3: dL/dpeep of this step ADDED */
};

/* A run of matrix columns for the quantizers (quantize.h): column c, c0 <= c < c1, is rows[c]
 * floats at x + (off[c] - fbase) and its packed form, quant_column_bytes(rows[c], bits)
 * bytes, at bytes + (boff[c] - bbase), for the float buffer x and byte buffer `bytes` an op
 * is given. */
struct bk_columns {
    const size_t *off, *rows, *boff;
    size_t c0, c1;
    size_t fbase, bbase;
    int bits;           /* 1..16 (other values: the ops touch nothing) */
    int zero_threshold; /* 1 bit: the threshold is 0 (else the column mean) */
};

/* A 2-D convolution or pooling of images, one image a column of iw x ih x ic values (CNTK's
 * layout: x fastest, then y, then the channel). Output cell (ox, oy) reads the window of
 * kw x kh cells from (ox sw - pw, oy sh - ph); cells outside the image are zero padding
 * (pooling leaves them out). The output is ow x oh x oc per column: oc maps for a
 * convolution, whose kernel w is (kw kh ic) x oc (CNTK's kw:kh:ic:oc, column-major), and
 * ic for pooling. */
enum bk_pool { BK_POOL_NONE, BK_POOL_MAX, BK_POOL_AVERAGE };
struct bk_conv {
    int iw, ih, ic;
    int kw, kh, sw, sh, pw, ph;
    int ow, oh, oc;
    enum bk_pool pool;
    int include_pad; /* average pooling: divide by the whole window, padding included */
};
/* conv_forward's and conv_backward's scratch: one image unfolded, and its gradient. */
static inline size_t bk_conv_ws(const struct bk_conv *c)
{
    return 2 * (size_t)c->ow * (size_t)c->oh * (size_t)c->kw * (size_t)c->kh * (size_t)c->ic;
}

struct backend;

/* rmsprop_update's parameters (CNTK's rms_gamma, rms_wgt_inc/dec/max/min). */
struct bk_rmsprop {
    float gamma, inc, dec, max, min, lr;
    int ave_mult, init;
};

/* One tensor's momentum SGD step (sgd_update's formula) for gemm_sgd: the parameters w,
 * their momentum s, the factors m and a, Nesterov's variant when nag. */
struct bk_sgd {
    float *w, *s;
    float m, a;
    int nag;
};

struct backend_ops {
    const char *name; /* "cpu", "cuda" */

    /* Memory. alloc: n floats (uninitialized), *out = device pointer; n == 0 allowed. */
    int (*alloc)(struct backend *b, size_t n, float **out, struct pt_err *e);
    void (*release)(struct backend *b, float *p); /* NULL is a no-op */
    int (*upload)(struct backend *b, float *dst, const float *host, size_t n, struct pt_err *e);
    int (*download)(struct backend *b, float *host, const float *src, size_t n, struct pt_err *e);
    void (*copy)(struct backend *b, float *dst, const float *src, size_t n);
    /* Optional (NULL: none; a device backend): uploads on a second queue, so that a copy
     * overlaps compute. upload_join marks a step's start: the ops queued after it see
     * what every upload_ahead before it wrote. An upload_ahead's copy starts once every
     * op queued before the last upload_join is done; the ops queued since (the step in
     * progress) run beside it, so they must not touch dst. host (from host_alloc) stays
     * as it is until a sync, or an upload_wait, after the copy was queued. */
    int (*upload_ahead)(struct backend *b, float *dst, const float *host, size_t n,
                        struct pt_err *e);
    void (*upload_join)(struct backend *b);
    /* Wait until the copies upload_ahead queued so far are done (and with them every op
     * queued before the upload_join before the last of them); reports the first
     * asynchronous failure. */
    int (*upload_wait)(struct backend *b, struct pt_err *e);
    /* Optional (NULL: download): download without waiting: host (from host_alloc) holds
     * src's values after the next sync, or after an upload_wait for a copy upload_ahead
     * queued after this call. */
    int (*download_async)(struct backend *b, float *host, const float *src, size_t n,
                          struct pt_err *e);
    /* Wait for queued work; report the first asynchronous failure. */
    int (*sync)(struct backend *b, struct pt_err *e);
    /* Optional (NULL: none; the CUDA backend: a CUDA graph): work recorded once and queued
     * again as a whole, one call instead of a call per op. Between capture_begin (0: now
     * recording) and capture_end the calling thread's ops are recorded, NOT run; an op
     * that needs the host (a copy from or to host memory, a wait, memory to allocate or
     * free) spoils the recording. capture_end returns the recording, or NULL where it was
     * spoiled or could not be made: then nothing was run and no failure is kept (the
     * caller runs the ops again, unrecorded). replay queues a recording's ops again, with
     * the memory and the values they had when recorded; drop frees one (a replay still
     * queued finishes first). The recorded memory must still be there: see `freed`. */
    int (*capture_begin)(struct backend *b);
    void *(*capture_end)(struct backend *b);
    int (*replay)(struct backend *b, void *rec, struct pt_err *e);
    void (*drop)(struct backend *b, void *rec);
    void (*destroy)(struct backend *b);

    /* C = alpha op(A) op(B) + beta C; op(A) m x k, op(B) k x n, column-major. beta == 0
     * overwrites C (NaNs in C do not survive). */
    void (*gemm)(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                 float *c, int ldc);
    /* Optional (NULL: none; the caller runs gemm, then sgd_update): gemm, whose product C
     * is the gradient of the tensor u->w, then sgd_update's step on it, with u->w and the
     * momentum u->s laid out as C (leading dimension ldc); C is scratch, unspecified
     * afterwards. w and s get the same bits as from the two calls; the update is done
     * while the product's tiles are in registers (the momentum SGD pass over the arena
     * then has nothing left to do, and the gradient need not be stored). asum (NULL: not
     * wanted) gets the sums over k of op(A)'s rows, the bits of sum_cols on A (A = dL/dy:
     * the bias gradient, added up on the way through A). */
    void (*gemm_sgd)(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n, int k,
                     float alpha, const float *a, int lda, const float *x, int ldx, float beta,
                     float *c, int ldc, const struct bk_sgd *u, float *asum);
    /* Optional (NULL: the caller runs gemm, then bias_act): gemm, then bias_act on its
     * product C with a bias per row (may be NULL) and activation act. The same bits; for
     * ReLU with a bias applied while the product's tiles are in registers. */
    void (*gemm_bias_act)(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n,
                          int k, float alpha, const float *a, int lda, const float *x, int ldx,
                          float beta, float *c, int ldc, const float *bias, enum bk_act act);
    /* Optional (NULL: the caller runs gemm, then act_grad): gemm whose product C is dL/dy
     * of an activation act with output y (laid out as C, leading dimension ldc), then
     * act_grad on it: C = dL/dz. The same bits as the two calls; for ReLU the derivative
     * is applied while the product's tiles are in registers (no pass over C). */
    void (*gemm_act_grad)(struct backend *b, enum bk_trans ta, enum bk_trans tb, int m, int n,
                          int k, float alpha, const float *a, int lda, const float *x, int ldx,
                          float beta, float *c, int ldc, enum bk_act act, const float *y);
    /* Optional (NULL: nothing to gain): until gemm_hold(b, NULL), the matrix at a is not
     * written, so products with it as their A may keep work on it (the CPU kernel's packed
     * copy) from one call to the next: a recurrent layer's weights over its time steps.
     * Several may be held at once (the CPU kernel: 16); NULL lets every one go. */
    void (*gemm_hold)(struct backend *b, const float *a);
    /* Optional (NULL: gemm): products with a sparse operand X (k x n, leading dimension ldx,
     * stored dense, each column a few nonzeros: one-hot words) that skip its zeros:
     *   tx == BK_NOTRANS: C (m x n) = A (m x k) X + beta C   (an embedding's forward: A's
     *                     columns picked; one nonzero a column gives gemm's bits)
     *   tx == BK_TRANS:   C (m x k) = A (m x n) X^T + beta C (the embedding's gradient: A's
     *                     columns added where X's rows are nonzero) */
    void (*gemm_sparse)(struct backend *b, enum bk_trans tx, int m, int n, int k, const float *a,
                        int lda, const float *x, int ldx, float beta, float *c, int ldc);
    void (*fill)(struct backend *b, float *x, size_t n, float value);
    void (*scale)(struct backend *b, float *x, size_t n, float alpha);            /* x *= a */
    void (*axpy)(struct backend *b, float *y, const float *x, size_t n, float a); /* y += ax */
    void (*mul)(struct backend *b, float *y, const float *x, size_t n);           /* y *= x */

    /* z (rows x cols) = f(z + bias) in place; bias (rows) may be NULL. */
    void (*bias_act)(struct backend *b, enum bk_act act, float *z, const float *bias, int rows,
                     size_t cols);
    /* dz *= f'(z) computed from the activation output y (n values). */
    void (*act_grad)(struct backend *b, enum bk_act act, float *dz, const float *y, size_t n);
    /* Optional (NULL: copy, then bias_act or act_grad in place): y = f(x), and dx = dy f'
     * from the output y, out of place (n values; the same bits as the two calls). */
    void (*act_to)(struct backend *b, enum bk_act act, float *y, const float *x, size_t n);
    void (*act_grad_to)(struct backend *b, enum bk_act act, float *dx, const float *dy,
                        const float *y, size_t n);
    /* out[i] = sum_j x[i + j*ld], j < cols (bias gradients); overwrites out (rows). */
    void (*sum_cols)(struct backend *b, float *out, const float *x, int rows, size_t cols, int ld);
    /* x (rows x cols) = (x - mean) * invstd per row, in place. */
    void (*norm)(struct backend *b, float *x, const float *mean, const float *invstd, int rows,
                 size_t cols);
    /* Optional (NULL: upload, then norm): norm's values of the host columns `host` (rows x
     * cols) written to x, in one pass over them instead of two. */
    int (*upload_norm)(struct backend *b, float *x, const float *host, const float *mean,
                       const float *invstd, int rows, size_t cols, struct pt_err *e);
    /* Inverted dropout: mask[k] = 0 with probability rate, else 1/(1-rate); y = x * mask.
     * The draw for element k is a pure function of (seed, k) (bk_hash_uniform), so every
     * backend makes the same mask. */
    void (*dropout)(struct backend *b, float *y, float *mask, const float *x, size_t n, float rate,
                    uint64_t seed);
    void (*criterion)(struct backend *b, enum bk_crit_kind kind, const struct bk_crit *c);
    /* The node graph's arithmetic (nn/graph.c). a is rows x cols; b is rows x bcols with
     * bcols == cols, or bcols == 1 (one column applied to every column of a). y may be a. */
    void (*ewise)(struct backend *b, enum bk_ew op, float *y, const float *a, const float *x,
                  int rows, size_t cols, size_t bcols);
    /* Columns j of x (rows x cols) with mask[j] == 0 set to exactly 0 (padding: also an inf
     * or NaN there). */
    void (*mask_cols)(struct backend *b, float *x, int rows, size_t cols, const float *mask);
    /* Blocks of rows x cols with leading dimensions: dst = src (copy2d), dst += a src
     * (axpy2d). Splice's rows of its operands. */
    void (*copy2d)(struct backend *b, float *dst, int ldd, const float *src, int lds, int rows,
                   size_t cols);
    void (*axpy2d)(struct backend *b, float *dst, int ldd, const float *src, int lds, int rows,
                   size_t cols, float a);
    /* Column softmax y = softmax(x) (rows x cols); softmax_grad writes
     * dx = y .* (dy - sum_i dy_i y_i) per column. */
    void (*softmax)(struct backend *b, float *y, const float *x, int rows, size_t cols);
    void (*softmax_grad)(struct backend *b, float *dx, const float *dy, const float *y, int rows,
                         size_t cols);
    /* Column hardmax (CNTK's Hardmax): y is 1 at the first largest value of x's column, 0
     * elsewhere (rows x cols; y may not be x). A column with a NaN counts it as largest. */
    void (*hardmax)(struct backend *b, float *y, const float *x, int rows, size_t cols);
    /* Optional (NULL where the backend has none; the graph refuses the node there).
     * conv_forward: y = w * x (+ bias, one per map) over cols images; ws: bk_conv_ws floats.
     * conv_backward ADDS dL/dw, dL/dbias and dL/dx (each NULL: not wanted) from dy.
     * pool_forward: y from x; a max pooling also writes into arg (the output's cells x
     * cols) which cell of its image each maximum is (the first, -1 for a window wholly in
     * the padding). pool_backward ADDS dL/dx from dy (to those cells for a max pooling). */
    void (*conv_forward)(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                         const float *w, const float *bias, size_t cols, float *ws);
    void (*conv_backward)(struct backend *b, const struct bk_conv *c, const float *dy,
                          const float *x, const float *w, float *dx, float *dw, float *dbias,
                          size_t cols, float *ws);
    void (*pool_forward)(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                         size_t cols, int32_t *arg);
    void (*pool_backward)(struct backend *b, const struct bk_conv *c, float *dx, const float *dy,
                          const int32_t *arg, size_t cols);
    /* unpool_backward: the gradient of max unpooling, which puts each pooled value at the
     * cell of its image that pool_forward chose (arg): ADDS dy (image-shaped) at those
     * cells into dx (pooled-shaped; arg -1: nothing).
     * map_bias: y (maps x cells a column, cols columns) += bias[m] on map m's cells;
     * map_bias_grad: db[m] += the sum of dy over map m's cells of every column. */
    void (*unpool_backward)(struct backend *b, const struct bk_conv *c, float *dx, const float *dy,
                            const int32_t *arg, size_t cols);
    void (*map_bias)(struct backend *b, float *y, const float *bias, int maps, size_t cells,
                     size_t cols);
    void (*map_bias_grad)(struct backend *b, float *db, const float *dy, int maps, size_t cells,
                          size_t cols);
    /* Batch normalization over rows = maps x spatial (a map's cells consecutive), cols
     * samples (optional, like the above). bn_forward with train: each map's mean and biased
     * variance over its cells of every column into mean[] and invstd[] (1 / sqrt(var +
     * eps)), the running statistics updated with weight f for the new ones (rm = f mean +
     * (1 - f) rm, rv = f unbiased var + (1 - f) rv), then y = scale (x - mean) invstd +
     * bias; without train, y from rm and rv (mean and invstd are written from them).
     * bn_backward ADDS dL/dx (dx NULL: not wanted), dL/dscale and dL/dbias from dy, with
     * the mean and invstd the training forward wrote. mask: NULL, or a value per column,
     * 0 where the column is padding: left out of the statistics, its dL/dx not written. */
    void (*bn_forward)(struct backend *b, int train, float *y, const float *x, int maps,
                       int spatial, size_t cols, const float *mask, const float *scale,
                       const float *bias, float *rm, float *rv, double f, double eps, float *mean,
                       float *invstd);
    void (*bn_backward)(struct backend *b, const float *dy, const float *x, int maps, int spatial,
                        size_t cols, const float *mask, const float *scale, const float *mean,
                        const float *invstd, float *dx, float *dscale, float *dbias);
    void (*lstm_forward)(struct backend *b, const struct bk_lstm_fwd *s);
    void (*lstm_backward)(struct backend *b, const struct bk_lstm_bwd *s);

    /* The optimizer (learn/learner.c keeps the formulas' parameters; see learn.h). All over
     * n values of one arena-shaped layout: w parameters, g the summed gradient, s1/s2 state. */
    /* Momentum SGD, unit gain: s1 = m s1 + a g; w -= s1 (nag: w -= m s1 + a g). */
    void (*sgd_update)(struct backend *b, float *w, const float *g, float *s1, size_t n, float m,
                       float a, int nag);
    /* Optional (NULL: clip_value, then sgd_update): sgd_update with every gradient value
     * first put into [-max, max] as clip_value does (g itself is not written): the same
     * bits, one pass over the parameters instead of two (clipping by value with momentum
     * SGD, CNTK's language models: a pass over 3.8 M parameters a minibatch). */
    void (*sgd_update_clip)(struct backend *b, float *w, const float *g, float *s1, size_t n,
                            float m, float a, int nag, float max);
    /* Adam: s1 = b1 s1 + (1-b1) g; s2 = b2 s2 + (1-b2) g^2;
     *       w -= scale s1 / (sqrt(s2) rc2 + eps). */
    void (*adam_update)(struct backend *b, float *w, const float *g, float *s1, float *s2, size_t n,
                        float b1, float b2, float scale, float rc2, float eps);
    /* AdaGrad: s1 += g^2; w -= step g / (sqrt(s1) + eps). */
    void (*adagrad_update)(struct backend *b, float *w, const float *g, float *s1, size_t n,
                           float step, float eps);
    /* CNTK's FSAdaGrad (its CPUMatrix::FSAdagrad), per value:
     *   s1 = vw s1 + (1-vw) g^2;  if s1 != 0: g *= min(mul / sqrt(s1), 10);
     *   if m > 0: s2 = m s2 + ug g, g = s2;  w -= lr g.
     * s1 the smoothed squares, s2 the smoothed gradient. */
    void (*fsadagrad_update)(struct backend *b, float *w, const float *g, float *s1, float *s2,
                             size_t n, float lr, float m, float vw, float mul, float ug);
    /* CNTK's RmsProp (CPUMatrix::RmsProp) on ONE tensor of n values; s1 the mean squares,
     * s2 the previous gradient's signs, s3 the step sizes. init (the first update): s1 = g^2,
     * s2 = 0, s3 = 0.02 first. Per value:
     *   s1 = gamma s1 + (1-gamma) g^2;  s3 = sign(g) s2 > 0 ? min(s3 inc, max)
     *   : max(s3 dec, min);  a = s3 / sqrt(s1 + 1e-6);  g *= a;  s2 = sign(g);
     * then w -= lr / ave * g, ave = the mean of a over the tensor (ave_mult) or 1.
     * g is overwritten with the scaled gradient. */
    void (*rmsprop_update)(struct backend *b, float *w, float *g, float *s1, float *s2, float *s3,
                           size_t n, const struct bk_rmsprop *p);
    /* Gradient clipping of one tensor: every value into [-max, max] (clip_value), or the
     * whole tensor scaled by max / ||x|| when its norm (summed in double) exceeds max. */
    void (*clip_value)(struct backend *b, float *x, size_t n, float max);
    void (*clip_norm)(struct backend *b, float *x, size_t n, float max);
    /* L1: w = w - t for w > t, w + t for w < -t, else 0. */
    void (*soft_threshold)(struct backend *b, float *w, size_t n, float t);

    /* Model synchronization (parallel engines). */
    /* y = f (x - z); f == 1 gives the exact difference. */
    void (*sub_scaled)(struct backend *b, float *y, const float *x, const float *z, size_t n,
                       float f);
    /* BlockMomentumSGD with g = the sum of the workers' (prev - w_k):
     *   d = bm d + gain g;  w = prev = prev - d  (nesterov: - bm d more). */
    void (*block_momentum)(struct backend *b, float *w, float *prev, float *d, const float *g,
                           size_t n, float bm, float gain, int nesterov);

    /* Gradient quantization with error feedback (quantize.h: the packed format). The packed
     * bytes are HOST memory (the communicator's buffers); the floats are device memory. */
    /* Columns c->c0..c1 of g (+ r): packed into out; r (NULL: none) = the new residual. */
    void (*quantize)(struct backend *b, const struct bk_columns *c, const float *g, float *r,
                     unsigned char *out);
    /* Columns c->c0..c1 reconstructed from in: out = values, or out += values (accumulate). */
    void (*unquantize)(struct backend *b, const struct bk_columns *c, const unsigned char *in,
                       int accumulate, float *out);

    /* fp16 transport (useFp16AllReduce): the floats of x as IEEE binary16 in HOST memory
     * (the buffer the communicator sums), and back; rounding as in core/half.h. On a
     * device the conversion runs there and half the bytes cross the bus. */
    void (*half_out)(struct backend *b, uint16_t *host, const float *x, size_t n);
    void (*half_in)(struct backend *b, float *x, const uint16_t *host, size_t n);

    /* Optional (NULL: malloc and free): host memory for the buffers that cross the bus
     * (the stages below); pinned (page-locked) on a device, so copies run at full speed. */
    void *(*host_alloc)(struct backend *b, size_t bytes);
    void (*host_free)(struct backend *b, void *p);
};

struct backend {
    const struct backend_ops *ops;
    int host_memory; /* device pointers are ordinary host memory */
    void *impl;      /* the implementation's state */
    /* counts the device memory freed (release, and buffers the backend grows for itself):
     * a recording made before the count last changed may name freed memory */
    unsigned long freed;
};

/* The CPU backend (OpenBLAS for gemm, plain C loops for the rest). *out is freed with
 * backend_free. Fails only when out of memory. */
int backend_cpu_new(struct backend **out, struct pt_err *e);

/* The cuBLAS backend (cuda_backend.cu) on CUDA device `device` (>= 0): cudaMalloc'd
 * buffers, one stream that every op is queued on, cuBLAS for gemm, a CUDA kernel for each
 * other op, pinned host buffers for the transfers. The device's name goes to name (may be
 * NULL). Errors: PT_EUSER when this build has no CUDA or there is no device `device` (the
 * message says which devices there are), PT_ESYS when CUDA or cuBLAS cannot start. */
int backend_cuda_new(struct backend **out, int device, char *name, size_t name_size,
                     struct pt_err *e);

/* Free a backend (NULL is a no-op). Buffers it allocated must be released first. */
void backend_free(struct backend *b);

/* ------------------------------------------------------------------ staging for comm */

/* The communicator works on host memory. Engines hand it device buffers through a stage:
 * bk_stage_out gives a host view of x[first..first+n), bk_stage_in brings what the
 * communicator wrote there back into x. On a host-memory backend (the CPU) both are the
 * identity: the view is x itself, nothing is copied. A device backend downloads into the
 * stage's host mirror (grown as needed; the mirror of x[i] is at view[i]) and uploads. */
struct bk_stage {
    float *host;
    size_t cap;         /* floats */
    struct backend *bk; /* the backend whose host_alloc made host (NULL: malloc) */
};

/* *h = the host view of x: (*h)[first..first+n) holds x's values. Fails (out of memory, a
 * failed download) with *h = NULL. */
int bk_stage_out(struct backend *b, struct bk_stage *s, float *x, size_t first, size_t n, float **h,
                 struct pt_err *e);
/* h[first..first+n) (a view from bk_stage_out of x) back into x. */
int bk_stage_in(struct backend *b, float *x, const float *h, size_t first, size_t n,
                struct pt_err *e);
/* The host view of x[0..n) without copying its values, for a buffer the communicator only
 * writes (the receive side of a pull); bk_stage_in brings them back. */
int bk_stage_for_write(struct backend *b, struct bk_stage *s, float *x, size_t n, float **h,
                       struct pt_err *e);
void bk_stage_free(struct bk_stage *s);

/* Host memory for buffers that cross the bus: b's host_alloc (pinned on a device), else
 * malloc (NULL on failure); bk_host_release frees either (NULL is a no-op). The _cb pair
 * is the same as plain callbacks whose ctx is the backend (a struct mb_host_alloc's). */
void *bk_host_malloc(struct backend *b, size_t bytes);
void bk_host_release(struct backend *b, void *p);
void *bk_host_malloc_cb(void *ctx, size_t bytes);
void bk_host_release_cb(void *ctx, void *p);

/* Allocate n floats set to zero (calloc-like), through b. */
int bk_alloc_zero(struct backend *b, size_t n, float **out, struct pt_err *e);

/* A uniform number in [0, 1) for draw `index` of stream `seed`: a stateless hash
 * (splitmix64 finalizer), so any backend and any thread order give the same numbers. */
static inline float bk_hash_uniform(uint64_t seed, uint64_t index)
{
    uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
