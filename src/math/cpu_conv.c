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

void cpu_conv_forward(struct backend *b, const struct bk_conv *c, float *y, const float *x,
                      const float *w, const float *bias, size_t cols, float *ws)
{
    int cells = c->ow * c->oh, k = c->kw * c->kh * c->ic;
    size_t in = (size_t)c->iw * (size_t)c->ih * (size_t)c->ic, out = (size_t)cells * (size_t)c->oc;
    for (size_t j = 0; j < cols; j++) {
        float *yj = y + j * out;
        unfold(c, ws, x + j * in);
        for (int m = 0; bias && m < c->oc; m++)
            b->ops->fill(b, yj + (size_t)cells * (size_t)m, (size_t)cells, bias[m]);
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
            dbias[m] += cpu_sum(dyj + (size_t)cells * (size_t)m, (size_t)cells);
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

#define POOL_RUN 64 /* output cells of a row pooled together */

/* Pooling of n <= POOL_RUN output cells of one row whose windows lie wholly inside the
 * image, the first at x[base] and the next ones sw cells further: the window's cells
 * visited in the scalar path's order (row by row), each step for all n cells at once (loops
 * gcc vectorizes; sw a constant in each caller), so the same maxima, the same first cell
 * among equal ones, and the same sums. */
CPU_INLINE void pool_run(const struct bk_conv *c, const float *xp, int32_t base, int sw, int n,
                         float *yo, int32_t *ao)
{
    float best[POOL_RUN];
    int32_t at[POOL_RUN];
    for (int i = 0; i < n; i++) { /* a sum from 0.0f, as the scalar path's (-0.0f + 0.0f) */
        best[i] = c->pool == BK_POOL_AVERAGE ? 0.0f + xp[base + i * sw] : xp[base + i * sw];
        at[i] = base + i * sw;
    }
    for (int ky = 0; ky < c->kh; ky++)
        for (int kx = 0; kx < c->kw; kx++) {
            if (ky == 0 && kx == 0)
                continue;
            int32_t k0 = base + c->iw * ky + kx;
            const float *src = xp + k0;
            if (c->pool == BK_POOL_AVERAGE) {
                for (int i = 0; i < n; i++)
                    best[i] += src[i * sw];
                continue;
            }
            for (int i = 0; i < n; i++) { /* masks, not branches: a coin toss each */
                float v = src[i * sw];
                int32_t m = -(int32_t)(v > best[i]);
                best[i] = v > best[i] ? v : best[i];
                at[i] = (at[i] & ~m) | ((k0 + i * sw) & m);
            }
        }
    if (c->pool == BK_POOL_AVERAGE) {
        float cnt = (float)(c->kw * c->kh);
        for (int i = 0; i < n; i++)
            yo[i] = best[i] / cnt;
        return;
    }
    memcpy(yo, best, (size_t)n * sizeof *yo);
    if (ao)
        memcpy(ao, at, (size_t)n * sizeof *ao);
}

/* The interior cells [lo, hi) of output row oy (windows wholly inside the image) through
 * pool_run; returns 0 when the row has none. */
static int pool_interior(const struct bk_conv *c, int oy, int *lo, int *hi)
{
    int y0 = oy * c->sh - c->ph;
    if (y0 < 0 || y0 + c->kh > c->ih)
        return 0;
    *lo = (c->pw + c->sw - 1) / c->sw; /* ox sw - pw >= 0 */
    *hi = c->iw - c->kw + c->pw < 0 ? 0 : (c->iw - c->kw + c->pw) / c->sw + 1;
    *hi = *hi < c->ow ? *hi : c->ow;
    return *lo < *hi;
}

/* pool_run's maximum for the commonest window, 2 x 2 at a stride of 2: each cell's four
 * candidates in the same order, straight-line code (a row of a small image has few cells,
 * too few for loops over the window's cells to pay). */
/* Cells [lo, hi) of pool_max_2x2 (with ao; without, only the maxima). */
CPU_INLINE void max_2x2_cells(const float *restrict xp, size_t base, size_t iw, int lo, int hi,
                              float *restrict yo, int32_t *restrict ao)
{
    for (int i = lo; i < hi; i++) {
        size_t k = base + 2 * (size_t)i;
        float best = xp[k], a = xp[k + 1], b = xp[k + iw], c = xp[k + iw + 1];
        int32_t at = (int32_t)k, m;
        m = -(int32_t)(a > best);
        best = a > best ? a : best;
        at = (at & ~m) | ((int32_t)(k + 1) & m);
        m = -(int32_t)(b > best);
        best = b > best ? b : best;
        at = (at & ~m) | ((int32_t)(k + iw) & m);
        m = -(int32_t)(c > best);
        best = c > best ? c : best;
        at = (at & ~m) | ((int32_t)(k + iw + 1) & m);
        yo[i] = best;
        if (ao)
            ao[i] = at;
    }
}

/* pool_run's maximum for the commonest window, 2 x 2 at a stride of 2: each cell's four
 * candidates in the same order, the row's cells CPU_BLOCK at a time (a fixed trip count,
 * so gcc vectorizes across cells; a last partial block is done again as the row's last
 * CPU_BLOCK cells, which computes a few cells twice with the same result). */
CPU_INLINE void pool_max_2x2(const float *xp, int32_t base, int32_t iw, int n, float *yo,
                             int32_t *ao)
{
    size_t b0 = (size_t)base, w = (size_t)iw;
    int i = 0;
    for (; i + CPU_BLOCK <= n; i += CPU_BLOCK) {
        if (ao)
            max_2x2_cells(xp, b0, w, i, i + CPU_BLOCK, yo, ao);
        else
            max_2x2_cells(xp, b0, w, i, i + CPU_BLOCK, yo, NULL);
    }
    if (i < n && n >= CPU_BLOCK)
        max_2x2_cells(xp, b0, w, n - CPU_BLOCK, n, yo, ao);
    else if (i < n)
        max_2x2_cells(xp, b0, w, i, n, yo, ao);
}

CPU_CLONES static void pool_row_interior(const struct bk_conv *c, const float *xp, int oy, int lo,
                                         int hi, float *yp, int32_t *ap)
{
    int32_t row = c->iw * (oy * c->sh - c->ph) - c->pw;
    for (int ox = lo; ox < hi; ox += POOL_RUN) {
        int n = hi - ox < POOL_RUN ? hi - ox : POOL_RUN, o = c->ow * oy + ox;
        int32_t base = row + ox * c->sw;
        int32_t *ao = ap ? ap + o : NULL;
        if (c->pool == BK_POOL_MAX && c->kw == 2 && c->kh == 2 && c->sw == 2)
            pool_max_2x2(xp, base, c->iw, n, yp + o, ao);
        else if (c->sw == 1)
            pool_run(c, xp, base, 1, n, yp + o, ao);
        else if (c->sw == 2)
            pool_run(c, xp, base, 2, n, yp + o, ao);
        else
            pool_run(c, xp, base, c->sw, n, yp + o, ao);
    }
}

CPU_CLONES void cpu_pool_forward(struct backend *b, const struct bk_conv *c, float *y,
                                 const float *x, size_t cols, int32_t *arg)
{
    (void)b;
    size_t plane = (size_t)c->iw * (size_t)c->ih, oplane = (size_t)c->ow * (size_t)c->oh;
    for (size_t j = 0; j < cols * (size_t)c->ic; j++) { /* each channel of each image */
        const float *xp = x + j * plane;
        float *yp = y + j * oplane;
        int32_t *ap = arg ? arg + j * oplane : NULL;
        for (int oy = 0; oy < c->oh; oy++) {
            int lo = 0, hi = 0;
            if (pool_interior(c, oy, &lo, &hi))
                pool_row_interior(c, xp, oy, lo, hi, yp, ap);
            for (int ox = 0; ox < c->ow; ox++) {
                if (ox == lo && hi > lo) { /* done above */
                    ox = hi - 1;
                    continue;
                }
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

void cpu_unpool_backward(struct backend *b, const struct bk_conv *c, float *dx, const float *dy,
                         const int32_t *arg, size_t cols)
{
    (void)b;
    size_t plane = (size_t)c->iw * (size_t)c->ih, oplane = (size_t)c->ow * (size_t)c->oh;
    for (size_t j = 0; j < cols * (size_t)c->ic; j++)
        for (size_t o = 0; o < oplane; o++)
            if (arg[j * oplane + o] >= 0)
                dx[j * oplane + o] += dy[j * plane + (size_t)arg[j * oplane + o]];
}

void cpu_map_bias(struct backend *b, float *y, const float *bias, int maps, size_t cells,
                  size_t cols)
{
    (void)b;
    for (size_t j = 0; j < cols; j++)
        for (int m = 0; m < maps; m++) {
            float *p = y + (j * (size_t)maps + (size_t)m) * cells, v = bias[m];
            for (size_t i = 0; i < cells; i++)
                p[i] += v;
        }
}

void cpu_map_bias_grad(struct backend *b, float *db, const float *dy, int maps, size_t cells,
                       size_t cols)
{
    (void)b;
    for (int m = 0; m < maps; m++) {
        double s = 0.0;
        for (size_t j = 0; j < cols; j++)
            s += cpu_sum(dy + (j * (size_t)maps + (size_t)m) * cells, cells);
        db[m] += (float)s;
    }
}
