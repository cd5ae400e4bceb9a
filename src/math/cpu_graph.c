/* CPU kernels of the node graph (nn/graph.c): element-wise arithmetic with a broadcast
 * column, and the column softmax with its gradient. Plain loops: these nodes sit around
 * the GEMMs that take the time. */
#include <math.h>
#include <string.h>

#include "math/cpu_kernels.h"

/* r values: y = a OP b (b NULL for the unary ops). One loop per op, so that each
 * vectorizes (y may be a: the compiler checks the overlap at run time). */
static float rare_unary(enum bk_ew op, float u)
{
    switch (op) {
    case BK_EW_SQRT: return sqrtf(u);
    case BK_EW_ABS: return fabsf(u);
    case BK_EW_SIGN: return (float)((u > 0.0f) - (u < 0.0f));
    case BK_EW_SIN: return sinf(u);
    case BK_EW_COS: return cosf(u);
    case BK_EW_FLOOR: return floorf(u);
    case BK_EW_ASIN: return asinf(u);
    case BK_EW_ACOS: return acosf(u);
    case BK_EW_DASIN: return 1.0f / sqrtf(1.0f - u * u);
    default: return 1.0f / u; /* BK_EW_RECIP */
    }
}

/* The comparisons: 1 where u OP v holds, else 0 (CNTK's Less, Equal, ...); the larger and
 * the smaller of u and v. */
static float compare(enum bk_ew op, float u, float v)
{
    switch (op) {
    case BK_EW_LESS: return (float)(u < v);
    case BK_EW_EQUAL: return (float)(u == v);
    case BK_EW_GREATER: return (float)(u > v);
    case BK_EW_GREATER_EQUAL: return (float)(u >= v);
    case BK_EW_NOT_EQUAL: return (float)(u != v);
    case BK_EW_MAX: return u > v ? u : v;
    case BK_EW_MIN: return u < v ? u : v;
    default: return (float)(u <= v); /* BK_EW_LESS_EQUAL */
    }
}

static void ew_column(enum bk_ew op, float *y, const float *a, const float *b, size_t r)
{
    switch (op) {
    case BK_EW_ADD:
        for (size_t i = 0; i < r; i++)
            y[i] = a[i] + b[i];
        break;
    case BK_EW_SUB:
        for (size_t i = 0; i < r; i++)
            y[i] = a[i] - b[i];
        break;
    case BK_EW_MUL:
        for (size_t i = 0; i < r; i++)
            y[i] = a[i] * b[i];
        break;
    case BK_EW_DIV:
        for (size_t i = 0; i < r; i++)
            y[i] = a[i] / b[i];
        break;
    case BK_EW_EXP:
        for (size_t i = 0; i < r; i++)
            y[i] = expf(a[i]);
        break;
    case BK_EW_LOG:
        for (size_t i = 0; i < r; i++)
            y[i] = logf(a[i]);
        break;
    case BK_EW_SQRT:
    case BK_EW_ABS:
    case BK_EW_SIGN:
    case BK_EW_RECIP:
    case BK_EW_SIN:
    case BK_EW_COS:
    case BK_EW_FLOOR:
    case BK_EW_ASIN:
    case BK_EW_ACOS:
    case BK_EW_DASIN: /* BrainScript's rarer nodes: one loop */
        for (size_t i = 0; i < r; i++)
            y[i] = rare_unary(op, a[i]);
        break;
    case BK_EW_LESS:
    case BK_EW_EQUAL:
    case BK_EW_GREATER:
    case BK_EW_GREATER_EQUAL:
    case BK_EW_NOT_EQUAL:
    case BK_EW_LESS_EQUAL:
    case BK_EW_MAX:
    case BK_EW_MIN:
        for (size_t i = 0; i < r; i++)
            y[i] = compare(op, a[i], b[i]);
        break;
    default: break;
    }
}

void cpu_ewise(struct backend *be, enum bk_ew op, float *y, const float *a, const float *x,
               int rows, size_t cols, size_t bcols)
{
    (void)be;
    size_t r = (size_t)rows;
    int unary = bk_ew_unary(op);
    if (unary || bcols == cols) { /* same shapes: one long run */
        ew_column(op, y, a, unary ? NULL : x, r * cols);
        return;
    }
    if (r == 1) { /* one value applied to a row of them: the same in chunks of a column */
        float s[256];
        for (size_t i = 0; i < sizeof s / sizeof *s; i++)
            s[i] = x[0];
        for (size_t j = 0; j < cols; j += 256)
            ew_column(op, y + j, a + j, s, cols - j < 256 ? cols - j : 256);
        return;
    }
    for (size_t j = 0; j < cols; j++)
        ew_column(op, y + j * r, a + j * r, unary ? NULL : x + (bcols == 1 ? 0 : j * r), r);
}

void cpu_mask_cols(struct backend *be, float *x, int rows, size_t cols, const float *mask)
{
    (void)be;
    for (size_t j = 0; j < cols; j++)
        if (mask[j] == 0.0f)
            memset(x + j * (size_t)rows, 0, (size_t)rows * sizeof *x);
}

void cpu_copy2d(struct backend *be, float *dst, int ldd, const float *src, int lds, int rows,
                size_t cols)
{
    (void)be;
    for (size_t j = 0; j < cols; j++)
        memcpy(dst + j * (size_t)ldd, src + j * (size_t)lds, (size_t)rows * sizeof *dst);
}

void cpu_axpy2d(struct backend *be, float *dst, int ldd, const float *src, int lds, int rows,
                size_t cols, float a)
{
    (void)be;
    for (size_t j = 0; j < cols; j++) {
        float *d = dst + j * (size_t)ldd;
        const float *s = src + j * (size_t)lds;
        for (int i = 0; i < rows; i++)
            d[i] += a * s[i];
    }
}

void cpu_softmax(struct backend *be, float *y, const float *x, int rows, size_t cols)
{
    (void)be;
    size_t r = (size_t)rows;
    for (size_t j = 0; j < cols && r; j++) {
        const float *xj = x + j * r;
        float *yj = y + j * r, mx = xj[0];
        for (size_t i = 1; i < r; i++)
            mx = xj[i] > mx ? xj[i] : mx;
        double s = 0.0;
        for (size_t i = 0; i < r; i++) {
            yj[i] = expf(xj[i] - mx);
            s += yj[i];
        }
        float inv = (float)(1.0 / s);
        for (size_t i = 0; i < r; i++)
            yj[i] *= inv;
    }
}

void cpu_hardmax(struct backend *be, float *y, const float *x, int rows, size_t cols)
{
    (void)be;
    size_t r = (size_t)rows;
    for (size_t j = 0; j < cols && r; j++) {
        const float *xj = x + j * r;
        float *yj = y + j * r;
        size_t best = 0;
        for (size_t i = 1; i < r && xj[best] == xj[best]; i++)
            best = xj[i] > xj[best] || xj[i] != xj[i] ? i : best;
        memset(yj, 0, r * sizeof *yj);
        yj[best] = 1.0f;
    }
}

void cpu_softmax_grad(struct backend *be, float *dx, const float *dy, const float *y, int rows,
                      size_t cols)
{
    (void)be;
    size_t r = (size_t)rows;
    for (size_t j = 0; j < cols; j++) {
        const float *dyj = dy + j * r, *yj = y + j * r;
        float *dxj = dx + j * r;
        double dot = 0.0;
        for (size_t i = 0; i < r; i++)
            dot += (double)dyj[i] * yj[i];
        for (size_t i = 0; i < r; i++)
            dxj[i] = yj[i] * (dyj[i] - (float)dot);
    }
}
