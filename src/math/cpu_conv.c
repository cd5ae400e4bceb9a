/* Convolution and pooling of images on the CPU (backend.h's bk_conv).
 *
 * A convolution unfolds one image at a time into its windows (im2col: a column of ow x oh
 * output cells for each kernel position and input channel) and multiplies that with the
 * kernel through the backend's gemm, which puts each output map in a column: the image's
 * output as CNTK lays it out (x fastest, then y, then the map). Backward, the kernel's
 * gradient is the unfolded image's transpose times dL/dy, and dL/dx the product of dL/dy
 * and the kernel folded back onto the image's cells. */
#include <math.h>
#include <string.h>

#include "math/cpu_kernels.h"

/* The output cells [*lo, *hi) of a row whose window cell kx lies inside the image (the
 * others read padding). */
static inline void inside(const struct bk_conv *c, int kx, int *lo, int *hi)
{
    int first = c->pw - kx; /* ox sw >= pw - kx */
    *lo = first <= 0 ? 0 : (first + c->sw - 1) / c->sw;
    int last = c->iw - 1 + c->pw - kx; /* ox sw <= iw - 1 + pw - kx */
    *hi = last < 0 ? 0 : last / c->sw + 1;
    *hi = *hi < c->ow ? *hi : c->ow;
    *lo = *lo < *hi ? *lo : *hi;
}

/* The cells of window row ky, column kx for every output cell: one column of col. fold_add
 * visits the same cells in the same order and adds instead of reading. */
static void unfold(const struct bk_conv *c, float *col, const float *x)
{
    size_t cells = (size_t)c->ow * (size_t)c->oh, plane = (size_t)c->iw * (size_t)c->ih;
    for (int ci = 0; ci < c->ic; ci++)
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++) {
                float *d = col + cells * (size_t)(kx + c->kw * (ky + c->kh * ci));
                int lo, hi;
                inside(c, kx, &lo, &hi);
                for (int oy = 0; oy < c->oh; oy++, d += c->ow) {
                    int iy = oy * c->sh - c->ph + ky;
                    if (iy < 0 || iy >= c->ih) {
                        memset(d, 0, (size_t)c->ow * sizeof *d);
                        continue;
                    }
                    const float *row = x + plane * (size_t)ci + (size_t)c->iw * (size_t)iy;
                    for (int ox = 0; ox < lo; ox++)
                        d[ox] = 0.0f;
                    for (int ox = hi; ox < c->ow; ox++)
                        d[ox] = 0.0f;
                    if (hi == lo)
                        continue;
                    const float *src = row + (lo * c->sw - c->pw + kx);
                    if (c->sw == 1)
                        memcpy(d + lo, src, (size_t)(hi - lo) * sizeof *d);
                    else
                        for (int ox = lo; ox < hi; ox++, src += c->sw)
                            d[ox] = *src;
                }
            }
}

/* dst[i stride] += src[i] for i < n: a call of its own keeps the loop in registers */
static void add_row(float *restrict dst, const float *restrict src, int n, int stride)
{
    if (stride == 1) {
        int i = 0;
        for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
            for (int k = i; k < i + CPU_BLOCK; k++)
                dst[k] += src[k];
        for (; i < n; i++)
            dst[i] += src[i];
        return;
    }
    for (int i = 0; i < n; i++)
        dst[(size_t)i * (size_t)stride] += src[i];
}

static void fold_add(const struct bk_conv *c, float *x, const float *col)
{
    size_t cells = (size_t)c->ow * (size_t)c->oh, plane = (size_t)c->iw * (size_t)c->ih;
    for (int ci = 0; ci < c->ic; ci++)
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++) {
                const float *d = col + cells * (size_t)(kx + c->kw * (ky + c->kh * ci));
                int lo, hi;
                inside(c, kx, &lo, &hi);
                for (int oy = 0; oy < c->oh; oy++, d += c->ow) {
                    int iy = oy * c->sh - c->ph + ky;
                    if (iy < 0 || iy >= c->ih || hi == lo)
                        continue;
                    add_row(x + plane * (size_t)ci + (size_t)c->iw * (size_t)iy +
                                (lo * c->sw - c->pw + kx),
                            d + lo, hi - lo, c->sw);
                }
            }
}

/* x[0] + ... + x[n-1] in CPU_BLOCK running sums (a loop gcc vectorizes; one running sum
 * waits for each add) */
static float sum(const float *x, int n)
{
    float acc[CPU_BLOCK] = {0};
    int i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK)
        for (int k = 0; k < CPU_BLOCK; k++)
            acc[k] += x[i + k];
    float s = 0.0f;
    for (int k = 0; k < CPU_BLOCK; k++)
        s += acc[k];
    for (; i < n; i++)
        s += x[i];
    return s;
}

void cpu_conv_forward(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                      const float *w, const float *bias, size_t cols, float *ws)
{
    int cells = c->ow * c->oh, k = c->kw * c->kh * c->ic;
    size_t in = (size_t)c->iw * (size_t)c->ih * (size_t)c->ic, out = (size_t)cells * (size_t)c->oc;
    for (size_t j = 0; j < cols; j++) {
        float *yj = y + j * out;
        unfold(c, ws, x + j * in);
        for (int m = 0; bias && m < c->oc; m++)
            for (int i = 0; i < cells; i++)
                yj[(size_t)cells * (size_t)m + (size_t)i] = bias[m];
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, cells, c->oc, k, 1.0f, ws, cells, w, k,
                     bias ? 1.0f : 0.0f, yj, cells);
    }
}

void cpu_conv_backward(struct backend *b, const struct bk_conv *c, const float *dy, const float *x,
                       const float *w, float *dx, float *dw, float *dbias, size_t cols, float *ws)
{
    int cells = c->ow * c->oh, k = c->kw * c->kh * c->ic;
    size_t in = (size_t)c->iw * (size_t)c->ih * (size_t)c->ic, out = (size_t)cells * (size_t)c->oc;
    float *dcol = ws + (size_t)cells * (size_t)k;
    for (size_t j = 0; j < cols; j++) {
        const float *dyj = dy + j * out;
        for (int m = 0; dbias && m < c->oc; m++)
            dbias[m] += sum(dyj + (size_t)cells * (size_t)m, cells);
        if (dw) { /* dW (k x maps) += col^T dy */
            unfold(c, ws, x + j * in);
            b->ops->gemm(b, BK_TRANS, BK_NOTRANS, k, c->oc, cells, 1.0f, ws, cells, dyj, cells,
                         1.0f, dw, k);
        }
        if (dx) { /* dcol = dy W^T, folded onto the image */
            b->ops->gemm(b, BK_NOTRANS, BK_TRANS, cells, k, c->oc, 1.0f, dyj, cells, w, k, 0.0f,
                         dcol, cells);
            fold_add(c, dx + j * in, dcol);
        }
    }
}

/* The window of output cell (ox, oy), clipped to the image: rows [*y0, *y1), columns
 * [*x0, *x1). */
static inline void window(const struct bk_conv *c, int ox, int oy, int *x0, int *x1, int *y0,
                          int *y1)
{
    *x0 = ox * c->sw - c->pw;
    *y0 = oy * c->sh - c->ph;
    *x1 = *x0 + c->kw < c->iw ? *x0 + c->kw : c->iw;
    *y1 = *y0 + c->kh < c->ih ? *y0 + c->kh : c->ih;
    *x0 = *x0 > 0 ? *x0 : 0;
    *y0 = *y0 > 0 ? *y0 : 0;
}

void cpu_pool_forward(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                      size_t cols, int32_t *arg)
{
    (void)b;
    size_t plane = (size_t)c->iw * (size_t)c->ih, oplane = (size_t)c->ow * (size_t)c->oh;
    for (size_t j = 0; j < cols * (size_t)c->ic; j++) { /* each channel of each image */
        const float *xp = x + j * plane;
        float *yp = y + j * oplane;
        int32_t *ap = arg ? arg + j * oplane : NULL;
        for (int oy = 0; oy < c->oh; oy++)
            for (int ox = 0; ox < c->ow; ox++) {
                int x0, x1, y0, y1, o = c->ow * oy + ox;
                window(c, ox, oy, &x0, &x1, &y0, &y1);
                if (x1 <= x0 || y1 <= y0) { /* a window wholly in the padding (ceilOutDim) */
                    yp[o] = 0.0f;
                    if (ap)
                        ap[o] = -1;
                    continue;
                }
                if (c->pool == BK_POOL_AVERAGE) {
                    float acc = 0.0f;
                    for (int iy = y0; iy < y1; iy++)
                        for (int ix = x0; ix < x1; ix++)
                            acc += xp[c->iw * iy + ix];
                    yp[o] = acc / (float)(c->include_pad ? c->kw * c->kh : (x1 - x0) * (y1 - y0));
                    continue;
                }
                /* the first maximum, selected through masks: which cell wins is a coin
                 * toss, which a branch would mispredict half the time */
                int32_t at = c->iw * y0 + x0;
                float best = xp[at];
                for (int iy = y0; iy < y1; iy++)
                    for (int ix = x0; ix < x1; ix++) {
                        int32_t k = c->iw * iy + ix, m = -(int32_t)(xp[k] > best);
                        best = xp[k] > best ? xp[k] : best;
                        at = (at & ~m) | (k & m);
                    }
                yp[o] = best;
                if (ap)
                    ap[o] = at;
            }
    }
}

void cpu_pool_backward(struct backend *b, const struct bk_conv *c, float *dx, const float *dy,
                       const int32_t *arg, size_t cols)
{
    (void)b;
    size_t plane = (size_t)c->iw * (size_t)c->ih, oplane = (size_t)c->ow * (size_t)c->oh;
    for (size_t j = 0; j < cols * (size_t)c->ic; j++) {
        float *dxp = dx + j * plane;
        const float *dyp = dy + j * oplane;
        if (c->pool == BK_POOL_MAX) { /* the gradient to the maximum the forward pass chose */
            for (size_t o = 0; o < oplane; o++)
                if (arg[j * oplane + o] >= 0)
                    dxp[arg[j * oplane + o]] += dyp[o];
            continue;
        }
        for (int oy = 0; oy < c->oh; oy++)
            for (int ox = 0; ox < c->ow; ox++) {
                int x0, x1, y0, y1;
                window(c, ox, oy, &x0, &x1, &y0, &y1);
                if (x1 <= x0 || y1 <= y0)
                    continue;
                float g = dyp[(size_t)c->ow * (size_t)oy + (size_t)ox] /
                          (float)(c->include_pad ? c->kw * c->kh : (x1 - x0) * (y1 - y0));
                for (int iy = y0; iy < y1; iy++)
                    for (int ix = x0; ix < x1; ix++)
                        dxp[(size_t)c->iw * (size_t)iy + (size_t)ix] += g;
            }
    }
}
