/* CPU element kernels: activations, column sums, normalization, dropout.
 *
 * Each loop over a column's rows is written once in an always-inline helper that takes the
 * activation as a parameter; the callers pass a constant, so after inlining every loop body
 * is branch-free and gcc vectorizes the CPU_BLOCK-sized inner loops (see cpu_kernels.h). */
#include "math/cpu_kernels.h"

CPU_INLINE float act_value(enum bk_act act, float v)
{
    switch (act) {
    case BK_ACT_SIGMOID: return cpu_sigmoid(v);
    case BK_ACT_TANH: return cpu_tanh(v);
    case BK_ACT_RELU: return v > 0.0f ? v : 0.0f;
    default: return v;
    }
}

/* dL/dz from dL/dy and the output y. */
CPU_INLINE float act_derivative(enum bk_act act, float dy, float y)
{
    switch (act) {
    case BK_ACT_SIGMOID: return dy * y * (1.0f - y);
    case BK_ACT_TANH: return dy * (1.0f - y * y);
    case BK_ACT_RELU: return y > 0.0f ? dy : 0.0f;
    default: return dy;
    }
}

/* z[0..rows) = f(z + bias) for one column. */
CPU_INLINE void bias_act_column(enum bk_act act, float *restrict z, const float *restrict bias,
                                size_t rows)
{
    size_t i = 0;
    if (bias) {
        for (; i + CPU_BLOCK <= rows; i += CPU_BLOCK)
            for (size_t k = i; k < i + CPU_BLOCK; k++)
                z[k] = act_value(act, z[k] + bias[k]);
        for (; i < rows; i++)
            z[i] = act_value(act, z[i] + bias[i]);
        return;
    }
    for (; i + CPU_BLOCK <= rows; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            z[k] = act_value(act, z[k]);
    for (; i < rows; i++)
        z[i] = act_value(act, z[i]);
}

CPU_INLINE void bias_act_matrix(enum bk_act act, float *z, const float *bias, size_t rows,
                                size_t cols)
{
    for (size_t j = 0; j < cols; j++)
        bias_act_column(act, z + j * rows, bias, rows);
}

CPU_CLONES void cpu_bias_act(struct backend *b, enum bk_act act, float *z, const float *bias,
                             int rows, size_t cols)
{
    (void)b;
    size_t r = (size_t)rows;
    switch (act) {
    case BK_ACT_SIGMOID: bias_act_matrix(BK_ACT_SIGMOID, z, bias, r, cols); break;
    case BK_ACT_TANH: bias_act_matrix(BK_ACT_TANH, z, bias, r, cols); break;
    case BK_ACT_RELU: bias_act_matrix(BK_ACT_RELU, z, bias, r, cols); break;
    default:
        if (bias)
            bias_act_matrix(BK_ACT_NONE, z, bias, r, cols);
        break;
    }
}

CPU_INLINE void act_grad_range(enum bk_act act, float *restrict dz, const float *restrict y,
                               size_t n)
{
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            dz[k] = act_derivative(act, dz[k], y[k]);
    for (; i < n; i++)
        dz[i] = act_derivative(act, dz[i], y[i]);
}

CPU_CLONES void cpu_act_grad(struct backend *b, enum bk_act act, float *dz, const float *y,
                             size_t n)
{
    (void)b;
    switch (act) {
    case BK_ACT_SIGMOID: act_grad_range(BK_ACT_SIGMOID, dz, y, n); break;
    case BK_ACT_TANH: act_grad_range(BK_ACT_TANH, dz, y, n); break;
    case BK_ACT_RELU: act_grad_range(BK_ACT_RELU, dz, y, n); break;
    default: break;
    }
}

/* y = f(x) and dx = f'(dy, y), out of place (the graph's activation nodes) */
CPU_INLINE void act_to_range(enum bk_act act, float *restrict y, const float *restrict x, size_t n)
{
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            y[k] = act_value(act, x[k]);
    for (; i < n; i++)
        y[i] = act_value(act, x[i]);
}

CPU_CLONES void cpu_act_to(struct backend *b, enum bk_act act, float *y, const float *x, size_t n)
{
    (void)b;
    switch (act) {
    case BK_ACT_SIGMOID: act_to_range(BK_ACT_SIGMOID, y, x, n); break;
    case BK_ACT_TANH: act_to_range(BK_ACT_TANH, y, x, n); break;
    case BK_ACT_RELU: act_to_range(BK_ACT_RELU, y, x, n); break;
    default: memcpy(y, x, n * sizeof *y); break;
    }
}

CPU_INLINE void act_grad_to_range(enum bk_act act, float *restrict dx, const float *restrict dy,
                                  const float *restrict y, size_t n)
{
    size_t i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            dx[k] = act_derivative(act, dy[k], y[k]);
    for (; i < n; i++)
        dx[i] = act_derivative(act, dy[i], y[i]);
}

CPU_CLONES void cpu_act_grad_to(struct backend *b, enum bk_act act, float *dx, const float *dy,
                                const float *y, size_t n)
{
    (void)b;
    switch (act) {
    case BK_ACT_SIGMOID: act_grad_to_range(BK_ACT_SIGMOID, dx, dy, y, n); break;
    case BK_ACT_TANH: act_grad_to_range(BK_ACT_TANH, dx, dy, y, n); break;
    case BK_ACT_RELU: act_grad_to_range(BK_ACT_RELU, dx, dy, y, n); break;
    default: memcpy(dx, dy, n * sizeof *dx); break;
    }
}

/* acc[i] += x[i] for i < rows. */
CPU_INLINE void accumulate_column(float *restrict acc, const float *restrict x, size_t rows)
{
    size_t i = 0;
    for (; i + CPU_BLOCK <= rows; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            acc[k] += x[k];
    for (; i < rows; i++)
        acc[i] += x[i];
}

void cpu_row_sums(float *out, int ta, const float *a, size_t lda, size_t m, size_t k)
{
    if (!ta) {
        cpu_sum_cols(NULL, out, a, (int)m, k, (int)lda);
        return;
    }
    for (size_t i = 0; i < m; i++) { /* op(A)'s rows are a's columns */
        float t = 0.0f;
        for (size_t p = 0; p < k; p++)
            t += a[p + i * lda];
        out[i] = t;
    }
}

void cpu_sum_cols(struct backend *b, float *out, const float *x, int rows, size_t cols, int ld)
{
    (void)b;
    memset(out, 0, (size_t)rows * sizeof *out);
    for (size_t j = 0; j < cols; j++)
        accumulate_column(out, x + j * (size_t)ld, (size_t)rows);
}

CPU_INLINE void norm_column(float *restrict x, const float *restrict mean,
                            const float *restrict invstd, size_t rows)
{
    size_t i = 0;
    for (; i + CPU_BLOCK <= rows; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            x[k] = (x[k] - mean[k]) * invstd[k];
    for (; i < rows; i++)
        x[i] = (x[i] - mean[i]) * invstd[i];
}

CPU_CLONES void cpu_norm(struct backend *b, float *x, const float *mean, const float *invstd,
                         int rows, size_t cols)
{
    (void)b;
    for (size_t j = 0; j < cols; j++)
        norm_column(x + j * (size_t)rows, mean, invstd, (size_t)rows);
}

/* norm out of place: the same arithmetic as norm_column */
CPU_INLINE void norm_column_to(float *restrict y, const float *restrict x,
                               const float *restrict mean, const float *restrict invstd,
                               size_t rows)
{
    size_t i = 0;
    for (; i + CPU_BLOCK <= rows; i += CPU_BLOCK)
        for (size_t k = i; k < i + CPU_BLOCK; k++)
            y[k] = (x[k] - mean[k]) * invstd[k];
    for (; i < rows; i++)
        y[i] = (x[i] - mean[i]) * invstd[i];
}

CPU_CLONES void cpu_norm_to(float *y, const float *x, const float *mean, const float *invstd,
                            int rows, size_t cols)
{
    for (size_t j = 0; j < cols; j++)
        norm_column_to(y + j * (size_t)rows, x + j * (size_t)rows, mean, invstd, (size_t)rows);
}

void cpu_dropout(struct backend *b, float *y, float *mask, const float *x, size_t n, float rate,
                 uint64_t seed)
{
    (void)b;
    const float keep = 1.0f / (1.0f - rate);
    for (size_t k = 0; k < n; k++) {
        mask[k] = bk_hash_uniform(seed, k) < rate ? 0.0f : keep;
        y[k] = x[k] * mask[k];
    }
}
