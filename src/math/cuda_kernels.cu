// CUDA element kernels: the layers' arithmetic (activations, normalization, dropout), the
// criteria, the node graph's ops and the LSTM cell; see backend.h for each op's contract
// and the CPU's versions (cpu_kernels.c, cpu_criteria.c, cpu_graph.c, cpu_lstm.c) for the
// same arithmetic. Element ops are grid-stride loops; column ops (criteria, softmax) give a
// warp to a column; row sums go through cuBLAS gemv with a vector of ones (deterministic,
// unlike atomics). Sums that the CPU keeps in double are kept in double here too.
#include "math/cuda_internal.h"

#define GRID_LOOP(i, n)                                                                            \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                        \
         i += (size_t)gridDim.x * blockDim.x)

#define LAUNCH(b, n) <<<cu_blocks(n), CU_THREADS, 0, cu_state(b)->stream>>>

__device__ static inline float d_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

__device__ static inline float act_value(int act, float v)
{
    switch (act) {
    case BK_ACT_SIGMOID: return d_sigmoid(v);
    case BK_ACT_TANH: return tanhf(v);
    case BK_ACT_RELU: return v > 0.0f ? v : 0.0f;
    default: return v;
    }
}

/* ---------------------------------------------------------------- plain element ops */

__global__ static void fill_k(float *x, size_t n, float v)
{
    GRID_LOOP(i, n) x[i] = v;
}
__global__ static void scale_k(float *x, size_t n, float a)
{
    GRID_LOOP(i, n) x[i] *= a;
}
__global__ static void axpy_k(float *y, const float *x, size_t n, float a)
{
    GRID_LOOP(i, n) y[i] += a * x[i];
}
__global__ static void mul_k(float *y, const float *x, size_t n)
{
    GRID_LOOP(i, n) y[i] *= x[i];
}

void cu_fill(struct backend *b, float *x, size_t n, float value)
{
    if (!n)
        return;
    fill_k LAUNCH(b, n)(x, n, value);
    cu_launched(b, "fill");
}

void cu_scale(struct backend *b, float *x, size_t n, float alpha)
{
    if (!n)
        return;
    scale_k LAUNCH(b, n)(x, n, alpha);
    cu_launched(b, "scale");
}

void cu_axpy(struct backend *b, float *y, const float *x, size_t n, float a)
{
    if (!n)
        return;
    axpy_k LAUNCH(b, n)(y, x, n, a);
    cu_launched(b, "axpy");
}

void cu_mul(struct backend *b, float *y, const float *x, size_t n)
{
    if (!n)
        return;
    mul_k LAUNCH(b, n)(y, x, n);
    cu_launched(b, "mul");
}

/* ---------------------------------------------------------------- layers */

template <int ACT>
__global__ static void bias_act_k(float *z, const float *bias, size_t rows, size_t n)
{
    GRID_LOOP(i, n)
    {
        float v = z[i];
        if (bias)
            v += bias[i % rows];
        z[i] = act_value(ACT, v);
    }
}

void cu_bias_act(struct backend *b, enum bk_act act, float *z, const float *bias, int rows,
                 size_t cols)
{
    size_t n = (size_t)rows * cols;
    if (!n || (act == BK_ACT_NONE && !bias))
        return;
    size_t r = (size_t)rows;
    switch (act) {
    case BK_ACT_SIGMOID: bias_act_k<BK_ACT_SIGMOID> LAUNCH(b, n)(z, bias, r, n); break;
    case BK_ACT_TANH: bias_act_k<BK_ACT_TANH> LAUNCH(b, n)(z, bias, r, n); break;
    case BK_ACT_RELU: bias_act_k<BK_ACT_RELU> LAUNCH(b, n)(z, bias, r, n); break;
    default: bias_act_k<BK_ACT_NONE> LAUNCH(b, n)(z, bias, r, n); break;
    }
    cu_launched(b, "bias_act");
}

__global__ static void act_grad_k(int act, float *dz, const float *y, size_t n)
{
    GRID_LOOP(i, n)
    {
        float d = dz[i], v = y[i];
        switch (act) {
        case BK_ACT_SIGMOID: d = d * v * (1.0f - v); break;
        case BK_ACT_TANH: d = d * (1.0f - v * v); break;
        case BK_ACT_RELU: d = v > 0.0f ? d : 0.0f; break;
        default: break;
        }
        dz[i] = d;
    }
}

void cu_act_grad(struct backend *b, enum bk_act act, float *dz, const float *y, size_t n)
{
    if (!n || act == BK_ACT_NONE)
        return;
    act_grad_k LAUNCH(b, n)((int)act, dz, y, n);
    cu_launched(b, "act_grad");
}

void cu_sum_cols(struct backend *b, float *out, const float *x, int rows, size_t cols, int ld)
{
    if (rows <= 0)
        return;
    if (!cols) {
        cu_fill(b, out, (size_t)rows, 0.0f);
        return;
    }
    const float *ones = cu_ones(b, cols);
    if (!ones)
        return;
    const float one = 1.0f, zero = 0.0f;
    cu_check_blas(b,
                  cublasSgemv(cu_state(b)->blas, CUBLAS_OP_N, rows, (int)cols, &one, x, ld, ones, 1,
                              &zero, out, 1),
                  "sgemv (column sums)");
}

__global__ static void norm_k(float *x, const float *mean, const float *invstd, size_t rows,
                              size_t n)
{
    GRID_LOOP(i, n)
    {
        size_t r = i % rows;
        x[i] = (x[i] - mean[r]) * invstd[r];
    }
}

void cu_norm(struct backend *b, float *x, const float *mean, const float *invstd, int rows,
             size_t cols)
{
    size_t n = (size_t)rows * cols;
    if (!n)
        return;
    norm_k LAUNCH(b, n)(x, mean, invstd, (size_t)rows, n);
    cu_launched(b, "norm");
}

// bk_hash_uniform, on the device: the same bits from the same (seed, index).
__device__ static inline float d_hash_uniform(uint64_t seed, uint64_t index)
{
    uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

__global__ static void dropout_k(float *y, float *mask, const float *x, size_t n, float rate,
                                 float keep, uint64_t seed)
{
    GRID_LOOP(i, n)
    {
        float m = d_hash_uniform(seed, i) < rate ? 0.0f : keep;
        mask[i] = m;
        y[i] = __fmul_rn(x[i], m);
    }
}

void cu_dropout(struct backend *b, float *y, float *mask, const float *x, size_t n, float rate,
                uint64_t seed)
{
    if (!n)
        return;
    const float keep = 1.0f / (1.0f - rate);
    dropout_k LAUNCH(b, n)(y, mask, x, n, rate, keep, seed);
    cu_launched(b, "dropout");
}

/* ---------------------------------------------------------------- criteria */

__device__ static inline double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return __shfl_sync(0xffffffffu, v, 0);
}

__device__ static inline float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_down_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    return __shfl_sync(0xffffffffu, v, 0);
}

// argmax with the first maximum winning: the larger value, or the smaller index on a tie.
__device__ static inline int warp_argmax(const float *v, int rows, int lane)
{
    float best = -INFINITY;
    int at = -1;
    for (int i = lane; i < rows; i += 32)
        if (at < 0 || v[i] > best) {
            best = v[i];
            at = i;
        }
    for (int o = 16; o > 0; o >>= 1) {
        float wb = __shfl_down_sync(0xffffffffu, best, o);
        int wa = __shfl_down_sync(0xffffffffu, at, o);
        if (wa >= 0 && (at < 0 || wb > best || (wb == best && wa < at))) {
            best = wb;
            at = wa;
        }
    }
    return __shfl_sync(0xffffffffu, at, 0);
}

// One warp per column: the column's value into val[j] (double), the gradient into grad.
__global__ static void criterion_k(int kind, int rows, size_t cols, const float *z, const float *y,
                                   const float *mask, float *grad, double *val, int top_n)
{
    size_t j = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (j >= cols)
        return;
    const float *zj = z + j * rows, *yj = y + j * rows;
    float *gj = grad ? grad + j * rows : NULL;
    if (mask && mask[j] == 0.0f) {
        if (gj)
            for (int i = lane; i < rows; i += 32)
                gj[i] = 0.0f;
        if (lane == 0)
            val[j] = 0.0;
        return;
    }
    double total = 0.0;
    if (kind == BK_CRIT_CE_SOFTMAX) {
        float mx = -INFINITY;
        for (int i = lane; i < rows; i += 32)
            mx = zj[i] > mx ? zj[i] : mx;
        mx = warp_max(mx);
        double s = 0.0, ysum = 0.0, yz = 0.0;
        for (int i = lane; i < rows; i += 32) {
            double ex = exp((double)zj[i] - mx);
            s += ex;
            ysum += yj[i];
            yz += (double)yj[i] * ((double)zj[i] - mx);
            if (gj)
                gj[i] = (float)ex;
        }
        s = warp_sum(s);
        ysum = warp_sum(ysum);
        yz = warp_sum(yz);
        if (gj) {
            double k = ysum / s;
            for (int i = lane; i < rows; i += 32)
                gj[i] = (float)(k * gj[i] - yj[i]);
        }
        total = ysum * log(s) - yz;
    } else if (kind == BK_CRIT_SQUARE_ERR) {
        double sum = 0.0;
        for (int i = lane; i < rows; i += 32) {
            float d = zj[i] - yj[i];
            sum += (double)d * d;
            if (gj)
                gj[i] = 2.0f * d;
        }
        total = warp_sum(sum);
    } else if (kind == BK_CRIT_CLASS_ERR && top_n > 1) { // cpu_criteria.c's top-N rank
        int l = warp_argmax(yj, rows, lane);
        float zl = zj[l];
        double before = 0.0;
        for (int i = lane; i < rows; i += 32)
            before += zj[i] > zl || (zj[i] == zl && i < l) ? 1.0 : 0.0;
        total = warp_sum(before) >= (double)top_n ? 1.0 : 0.0;
    } else if (kind == BK_CRIT_CLASS_ERR) {
        total = warp_argmax(zj, rows, lane) != warp_argmax(yj, rows, lane) ? 1.0 : 0.0;
    } else if (kind == BK_CRIT_SUM) {
        double sum = 0.0;
        for (int i = lane; i < rows; i += 32) {
            sum += zj[i];
            if (gj)
                gj[i] = 1.0f;
        }
        total = warp_sum(sum);
    } else { // BK_CRIT_LOGISTIC
        double sum = 0.0;
        for (int i = lane; i < rows; i += 32) {
            double p = zj[i] < 1e-7f ? 1e-7 : zj[i] > 1.0f - 1e-7f ? 1.0 - 1e-7 : (double)zj[i];
            sum -= (double)yj[i] * log(p) + (1.0 - (double)yj[i]) * log(1.0 - p);
            if (gj)
                gj[i] = (float)((p - yj[i]) / (p * (1.0 - p)));
        }
        total = warp_sum(sum);
    }
    if (lane == 0)
        val[j] = total;
}

// One block: the columns' values summed in a fixed order (the same total on every run),
// into sum[0] + sum[1].
__global__ static void total_k(const double *val, size_t n, float *sum)
{
    double s = 0.0;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        s += val[i];
    double total = cu_block_sum(s);
    if (threadIdx.x == 0) {
        float hi = (float)total;
        sum[0] = hi;
        sum[1] = (float)(total - (double)hi);
    }
}

void cu_criterion(struct backend *b, enum bk_crit_kind kind, const struct bk_crit *c)
{
    double *val = (double *)cu_scratch(b, (c->cols ? c->cols : 1) * sizeof(double));
    if (!val)
        return;
    float *grad = kind == BK_CRIT_CLASS_ERR ? NULL : c->grad;
    cudaStream_t s = cu_state(b)->stream;
    if (c->cols && c->rows > 0) {
        size_t threads = c->cols * 32;
        unsigned blocks = (unsigned)((threads + CU_THREADS - 1) / CU_THREADS);
        criterion_k<<<blocks, CU_THREADS, 0, s>>>((int)kind, c->rows, c->cols, c->z, c->y, c->mask,
                                                  grad, val, c->top_n);
        cu_launched(b, "criterion");
    } else if (c->cols) {
        cu_check(b, cudaMemsetAsync(val, 0, c->cols * sizeof(double), s), "criterion");
    }
    total_k<<<1, CU_THREADS, 0, s>>>(val, c->cols, c->sum);
    cu_launched(b, "criterion (total)");
}

/* ---------------------------------------------------------------- the node graph */

__global__ static void ewise_k(int op, float *y, const float *a, const float *x, size_t rows,
                               size_t n, int bcast)
{
    GRID_LOOP(i, n)
    {
        float u = a[i], v = 0.0f;
        if (x)
            v = bcast ? x[i % rows] : x[i];
        float r;
        switch (op) {
        case BK_EW_ADD: r = u + v; break;
        case BK_EW_SUB: r = u - v; break;
        case BK_EW_MUL: r = u * v; break;
        case BK_EW_DIV: r = u / v; break;
        case BK_EW_EXP: r = expf(u); break;
        case BK_EW_LOG: r = logf(u); break;
        case BK_EW_SQRT: r = sqrtf(u); break;
        case BK_EW_ABS: r = fabsf(u); break;
        case BK_EW_SIGN: r = (float)((u > 0.0f) - (u < 0.0f)); break;
        case BK_EW_LESS: r = (float)(u < v); break;
        case BK_EW_EQUAL: r = (float)(u == v); break;
        case BK_EW_GREATER: r = (float)(u > v); break;
        case BK_EW_GREATER_EQUAL: r = (float)(u >= v); break;
        case BK_EW_NOT_EQUAL: r = (float)(u != v); break;
        case BK_EW_LESS_EQUAL: r = (float)(u <= v); break;
        case BK_EW_MAX: r = u > v ? u : v; break;
        case BK_EW_MIN: r = u < v ? u : v; break;
        case BK_EW_SIN: r = sinf(u); break;
        case BK_EW_COS: r = cosf(u); break;
        case BK_EW_FLOOR: r = floorf(u); break;
        case BK_EW_ASIN: r = asinf(u); break;
        case BK_EW_ACOS: r = acosf(u); break;
        case BK_EW_DASIN: r = 1.0f / sqrtf(1.0f - u * u); break;
        default: r = 1.0f / u; break; /* BK_EW_RECIP */
        }
        y[i] = r;
    }
}

void cu_ewise(struct backend *b, enum bk_ew op, float *y, const float *a, const float *x, int rows,
              size_t cols, size_t bcols)
{
    size_t n = (size_t)rows * cols;
    if (!n || op >= BK_EW_COUNT)
        return;
    int unary = bk_ew_unary(op);
    ewise_k LAUNCH(b, n)((int)op, y, a, unary ? NULL : x, (size_t)rows, n, !unary && bcols != cols);
    cu_launched(b, "ewise");
}

__global__ static void mask_cols_k(float *x, size_t rows, size_t n, const float *mask)
{
    GRID_LOOP(i, n)
    if (mask[i / rows] == 0.0f)
        x[i] = 0.0f;
}

void cu_mask_cols(struct backend *b, float *x, int rows, size_t cols, const float *mask)
{
    size_t n = (size_t)rows * cols;
    if (!n)
        return;
    mask_cols_k LAUNCH(b, n)(x, (size_t)rows, n, mask);
    cu_launched(b, "mask_cols");
}

void cu_copy2d(struct backend *b, float *dst, int ldd, const float *src, int lds, int rows,
               size_t cols)
{
    if (rows <= 0 || !cols)
        return;
    cu_check(b,
             cudaMemcpy2DAsync(dst, (size_t)ldd * sizeof(float), src, (size_t)lds * sizeof(float),
                               (size_t)rows * sizeof(float), cols, cudaMemcpyDeviceToDevice,
                               cu_state(b)->stream),
             "copy2d");
}

__global__ static void axpy2d_k(float *dst, size_t ldd, const float *src, size_t lds, size_t rows,
                                size_t n, float a)
{
    GRID_LOOP(i, n)
    {
        size_t r = i % rows, c = i / rows;
        dst[r + c * ldd] += a * src[r + c * lds];
    }
}

void cu_axpy2d(struct backend *b, float *dst, int ldd, const float *src, int lds, int rows,
               size_t cols, float a)
{
    size_t n = (size_t)rows * cols;
    if (!n)
        return;
    axpy2d_k LAUNCH(b, n)(dst, (size_t)ldd, src, (size_t)lds, (size_t)rows, n, a);
    cu_launched(b, "axpy2d");
}

__global__ static void softmax_k(float *y, const float *x, int rows, size_t cols)
{
    size_t j = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (j >= cols)
        return;
    const float *xj = x + j * rows;
    float *yj = y + j * rows;
    float mx = -INFINITY;
    for (int i = lane; i < rows; i += 32)
        mx = xj[i] > mx ? xj[i] : mx;
    mx = warp_max(mx);
    double s = 0.0;
    for (int i = lane; i < rows; i += 32) {
        float e = expf(xj[i] - mx);
        yj[i] = e;
        s += e;
    }
    float inv = (float)(1.0 / warp_sum(s));
    for (int i = lane; i < rows; i += 32)
        yj[i] *= inv;
}

__global__ static void softmax_grad_k(float *dx, const float *dy, const float *y, int rows,
                                      size_t cols)
{
    size_t j = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (j >= cols)
        return;
    const float *dyj = dy + j * rows, *yj = y + j * rows;
    float *dxj = dx + j * rows;
    double dot = 0.0;
    for (int i = lane; i < rows; i += 32)
        dot += (double)dyj[i] * yj[i];
    float d = (float)warp_sum(dot);
    for (int i = lane; i < rows; i += 32)
        dxj[i] = yj[i] * (dyj[i] - d);
}

static unsigned warp_blocks(size_t cols)
{
    size_t threads = cols * 32;
    return (unsigned)((threads + CU_THREADS - 1) / CU_THREADS);
}

void cu_softmax(struct backend *b, float *y, const float *x, int rows, size_t cols)
{
    if (rows <= 0 || !cols)
        return;
    softmax_k<<<warp_blocks(cols), CU_THREADS, 0, cu_state(b)->stream>>>(y, x, rows, cols);
    cu_launched(b, "softmax");
}

void cu_softmax_grad(struct backend *b, float *dx, const float *dy, const float *y, int rows,
                     size_t cols)
{
    if (rows <= 0 || !cols)
        return;
    softmax_grad_k<<<warp_blocks(cols), CU_THREADS, 0, cu_state(b)->stream>>>(dx, dy, y, rows,
                                                                              cols);
    cu_launched(b, "softmax_grad");
}

// One warp a column: each lane's first largest (a NaN counts as largest, the first of
// them), then the warp's, lowest row on ties, as the CPU's loop takes it.
__global__ static void hardmax_k(float *y, const float *x, int rows, size_t cols)
{
    size_t j = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (j >= cols)
        return;
    const float *xj = x + j * rows;
    float *yj = y + j * rows;
    int best = -1;
    float bv = 0.0f;
    for (int i = lane; i < rows; i += 32) {
        float xi = xj[i];
        if (best < 0 || (bv == bv && (xi > bv || xi != xi))) {
            best = i;
            bv = xi;
        }
    }
    for (int off = 16; off > 0; off /= 2) {
        int ob = __shfl_down_sync(0xffffffffu, best, off);
        float ov = __shfl_down_sync(0xffffffffu, bv, off);
        int take = ob >= 0 && (best < 0 || (bv == bv && (ov > bv || ov != ov)) ||
                               (ov == bv && ob < best) || (ov != ov && bv != bv && ob < best));
        if (take) {
            best = ob;
            bv = ov;
        }
    }
    best = __shfl_sync(0xffffffffu, best, 0);
    for (int i = lane; i < rows; i += 32)
        yj[i] = i == best ? 1.0f : 0.0f;
}

void cu_hardmax(struct backend *b, float *y, const float *x, int rows, size_t cols)
{
    if (rows <= 0 || !cols)
        return;
    hardmax_k<<<warp_blocks(cols), CU_THREADS, 0, cu_state(b)->stream>>>(y, x, rows, cols);
    cu_launched(b, "hardmax");
}

/* ---------------------------------------------------------------- the LSTM cell */

// One thread per (cell k, column j); the gate rows of column j are k, H+k, 2H+k, 3H+k.
__global__ static void lstm_fwd_k(struct bk_lstm_fwd s)
{
    size_t hid = (size_t)s.hidden, n = hid * s.n;
    GRID_LOOP(t, n)
    {
        size_t k = t % hid, j = t / hid;
        if (s.mask && s.mask[j] == 0.0f) { // padding: carry the state
            s.c[t] = s.c_prev[t];
            s.h[t] = s.h_prev[t];
            continue;
        }
        float *g = s.gates + 4 * hid * j;
        float cp = s.c_prev[t];
        float i = d_sigmoid(g[k] + s.bias[k] + s.peep[k] * cp);
        float f = d_sigmoid(g[hid + k] + s.bias[hid + k] + s.peep[hid + k] * cp);
        float gg = tanhf(g[3 * hid + k] + s.bias[3 * hid + k]);
        float cn = f * cp + i * gg;
        float o = d_sigmoid(g[2 * hid + k] + s.bias[2 * hid + k] + s.peep[2 * hid + k] * cn);
        float tc = tanhf(cn);
        g[k] = i;
        g[hid + k] = f;
        g[2 * hid + k] = o;
        g[3 * hid + k] = gg;
        s.c[t] = cn;
        s.tanh_c[t] = tc;
        s.h[t] = o * tc;
    }
}

void cu_lstm_forward(struct backend *b, const struct bk_lstm_fwd *s)
{
    size_t n = (size_t)s->hidden * s->n;
    if (!n)
        return;
    lstm_fwd_k LAUNCH(b, n)(*s);
    cu_launched(b, "lstm_forward");
}

// One block per 32 cells, 32 column lanes: thread (x, y) takes cell k = 32 blockIdx.x + x
// and the columns j = y, y + 32, ...: dgates, dc and the padding carry of each, and its
// sums of the bias and peephole terms; the block then adds the 32 lanes' sums in a fixed
// order into dbias and dpeep (one writer per value: no atomics, the same sum on every
// run). One launch per step, where gemv row sums would take two more.
#define LSTM_LANES 32
#define LSTM_CELLS 32

__global__ static void lstm_bwd_k(struct bk_lstm_bwd s)
{
    __shared__ float part[7][LSTM_LANES][LSTM_CELLS + 1];
    size_t hid = (size_t)s.hidden;
    int x = threadIdx.x, y = threadIdx.y;
    size_t k = blockIdx.x * (size_t)LSTM_CELLS + x;
    float sum[7] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (k < hid)
        for (size_t j = y; j < s.n; j += LSTM_LANES) {
            size_t t = j * hid + k;
            const float *a = s.gates + 4 * hid * j;
            float *d = s.dgates + 4 * hid * j;
            if (s.mask && s.mask[j] == 0.0f) { // padding carried h and c
                d[k] = d[hid + k] = d[2 * hid + k] = d[3 * hid + k] = 0.0f;
                if (s.dh_prev)
                    s.dh_prev[t] += s.dh[t];
                continue;
            }
            float i = a[k], f = a[hid + k], o = a[2 * hid + k], g = a[3 * hid + k];
            float tc = s.tanh_c[t], dh = s.dh[t], cp = s.c_prev[t];
            float d_o = dh * tc * o * (1.0f - o);
            float dcc = s.dc[t] + dh * o * (1.0f - tc * tc) + d_o * s.peep[2 * hid + k];
            float d_i = dcc * g * i * (1.0f - i);
            float d_f = dcc * cp * f * (1.0f - f);
            float d_g = dcc * i * (1.0f - g * g);
            d[k] = d_i;
            d[hid + k] = d_f;
            d[2 * hid + k] = d_o;
            d[3 * hid + k] = d_g;
            s.dc[t] = dcc * f + d_i * s.peep[k] + d_f * s.peep[hid + k];
            sum[0] += d_i;
            sum[1] += d_f;
            sum[2] += d_o;
            sum[3] += d_g;
            sum[4] += d_i * cp;
            sum[5] += d_f * cp;
            sum[6] += d_o * s.c[t];
        }
#pragma unroll
    for (int q = 0; q < 7; q++)
        part[q][y][x] = sum[q];
    __syncthreads();
    if (y < 7 && k < hid) { // row y of the sums: lanes in order
        float total = 0.0f;
        for (int l = 0; l < LSTM_LANES; l++)
            total += part[y][l][x];
        if (y < 4)
            s.dbias[y * hid + k] += total;
        else
            s.dpeep[(y - 4) * hid + k] += total;
    }
}

void cu_lstm_backward(struct backend *b, const struct bk_lstm_bwd *s)
{
    size_t hid = (size_t)s->hidden;
    if (!hid || !s->n)
        return;
    dim3 threads(LSTM_CELLS, LSTM_LANES);
    unsigned blocks = (unsigned)((hid + LSTM_CELLS - 1) / LSTM_CELLS);
    lstm_bwd_k<<<blocks, threads, 0, cu_state(b)->stream>>>(*s);
    cu_launched(b, "lstm_backward");
}
