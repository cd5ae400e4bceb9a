/* CPU criteria: softmax + cross entropy, square error, classification error.
 *
 * Every criterion is a SUM over the counted columns (SPEC 5), accumulated in double so a
 * minibatch of thousands of frames loses nothing to float rounding; the gradient is the
 * derivative of that sum. Columns are independent: one pass per column over its rows. */
#include "math/cpu_kernels.h"

/* Softmax cross entropy of one column (rows values). Writes dL/dz into g (NULL: skip).
 * L = sum_i y_i (logsumexp(z) - z_i);  dL/dz_i = (sum_k y_k) softmax(z)_i - y_i.
 * g holds exp(z_i - max) between the two passes, so each exp is computed once. */
static double ce_softmax_column(const float *z, const float *y, float *g, size_t rows)
{
    float mx = z[0];
    for (size_t i = 1; i < rows; i++)
        mx = z[i] > mx ? z[i] : mx;
    double s = 0.0, ysum = 0.0, yz = 0.0;
    for (size_t i = 0; i < rows; i++) {
        double ex = exp((double)z[i] - mx);
        s += ex;
        ysum += y[i];
        yz += (double)y[i] * ((double)z[i] - mx);
        if (g)
            g[i] = (float)ex;
    }
    if (g) {
        double k = ysum / s;
        for (size_t i = 0; i < rows; i++)
            g[i] = (float)(k * g[i] - y[i]);
    }
    return ysum * log(s) - yz; /* log(s) = logsumexp(z) - max */
}

/* L = sum_i (z_i - y_i)^2, dL/dz_i = 2 (z_i - y_i). */
static double square_error_column(const float *z, const float *y, float *g, size_t rows)
{
    double sum = 0.0;
    for (size_t i = 0; i < rows; i++) {
        float d = z[i] - y[i];
        sum += (double)d * d;
        if (g)
            g[i] = 2.0f * d;
    }
    return sum;
}

static size_t argmax(const float *v, size_t rows)
{
    size_t best = 0;
    for (size_t i = 1; i < rows; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

/* 1 when the largest output is not at the label's largest entry (first maximum wins). */
static double class_error_column(const float *z, const float *y, float *g, size_t rows)
{
    (void)g;
    return argmax(z, rows) != argmax(y, rows) ? 1.0 : 0.0;
}

/* Top-N error: 1 when fewer than n entries rank before z at the label's largest entry
 * (larger values, and equal ones before it: the first of equal values ranks first). */
static double top_n_error_column(const float *z, const float *y, size_t rows, int n)
{
    size_t l = argmax(y, rows), before = 0;
    for (size_t i = 0; i < rows; i++)
        before += z[i] > z[l] || (z[i] == z[l] && i < l);
    return before >= (size_t)n ? 1.0 : 0.0;
}

/* CNTK's Logistic: L = -sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)] on probabilities p
 * (clamped into [1e-7, 1 - 1e-7] so that a saturated sigmoid gives a finite value);
 * dL/dp_i = (p_i - y_i) / (p_i (1 - p_i)). */
static double logistic_column(const float *z, const float *y, float *g, size_t rows)
{
    double sum = 0.0;
    for (size_t i = 0; i < rows; i++) {
        double p = z[i] < 1e-7f ? 1e-7 : z[i] > 1.0f - 1e-7f ? 1.0 - 1e-7 : (double)z[i];
        sum -= (double)y[i] * log(p) + (1.0 - (double)y[i]) * log(1.0 - p);
        if (g)
            g[i] = (float)((p - y[i]) / (p * (1.0 - p)));
    }
    return sum;
}

/* A network's own criterion node: its values as they are, gradient 1. */
static double sum_column(const float *z, const float *y, float *g, size_t rows)
{
    (void)y;
    double sum = 0.0;
    for (size_t i = 0; i < rows; i++) {
        sum += z[i];
        if (g)
            g[i] = 1.0f;
    }
    return sum;
}

static double (*const crit_column[BK_CRIT_COUNT])(const float *, const float *, float *, size_t) = {
    [BK_CRIT_CE_SOFTMAX] = ce_softmax_column,
    [BK_CRIT_SQUARE_ERR] = square_error_column,
    [BK_CRIT_CLASS_ERR] = class_error_column,
    [BK_CRIT_LOGISTIC] = logistic_column,
    [BK_CRIT_SUM] = sum_column,
};

void cpu_criterion(struct backend *b, enum bk_crit_kind kind, const struct bk_crit *c)
{
    (void)b;
    size_t rows = (size_t)c->rows;
    float *grad = kind == BK_CRIT_CLASS_ERR ? NULL : c->grad;
    double total = 0.0;
    for (size_t j = 0; j < c->cols; j++) {
        const float *z = c->z + j * rows, *y = c->y + j * rows;
        float *g = grad ? grad + j * rows : NULL;
        if (c->mask && c->mask[j] == 0.0f) {
            if (g)
                memset(g, 0, rows * sizeof *g);
            continue;
        }
        if (rows && kind == BK_CRIT_CLASS_ERR && c->top_n > 1)
            total += top_n_error_column(z, y, rows, c->top_n);
        else if (rows)
            total += crit_column[kind](z, y, g, rows);
    }
    c->sum[0] = (float)total;
    c->sum[1] = (float)(total - (double)c->sum[0]);
}
