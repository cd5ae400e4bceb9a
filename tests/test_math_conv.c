/* The CPU backend's convolution and pooling (conv_forward, conv_backward, pool_forward,
 * pool_backward) against direct sums in double precision, written from the definition in
 * backend.h (output cell (ox, oy) reads the cells from (ox sw - pw, oy sh - ph) on, cells
 * outside the image are 0 for a convolution and left out by pooling), over geometries with
 * padding on either side, strides, windows cut by the edges and several channels. */
#include <math.h>
#include <stdlib.h>

#include "config.h"

#include "math/backend.h"
#include "testutil.h"

static uint64_t state = 12345;

static float rnd(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(state >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

static float *rnd_floats(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = rnd();
    return p;
}

static float *zeros(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* x's value at (ix, iy, c) of image j, or NAN outside it */
static double at(const struct bk_conv *c, const float *x, size_t j, int ix, int iy, int ch)
{
    if (ix < 0 || iy < 0 || ix >= c->iw || iy >= c->ih)
        return NAN;
    return x[j * (size_t)(c->iw * c->ih * c->ic) + (size_t)(ix + c->iw * (iy + c->ih * ch))];
}

static const struct bk_conv geometries[] = {
    /* iw ih ic kw kh sw sh pw ph ow oh oc */
    {5, 4, 2, 3, 3, 1, 1, 1, 1, 5, 4, 3, BK_POOL_NONE, 0},     /* padded, centred */
    {7, 6, 3, 3, 2, 2, 2, 1, 0, 4, 3, 4, BK_POOL_NONE, 0},     /* strides, padding one side */
    {6, 5, 1, 2, 3, 3, 1, 0, 2, 2, 5, 2, BK_POOL_NONE, 0},     /* padding past the bottom */
    {9, 8, 2, 1, 1, 2, 3, 0, 0, 5, 3, 3, BK_POOL_NONE, 0},     /* 1 x 1 windows */
    {28, 28, 1, 5, 5, 1, 1, 2, 2, 28, 28, 4, BK_POOL_NONE, 0}, /* CNTK's 02_OneConv */
};

START_TEST(convolution_matches_direct_sums)
{
    struct pt_err e = {0};
    struct backend *b = NULL;
    ck_assert_int_eq(backend_cpu_new(&b, &e), 0);
    const struct bk_conv *c = &geometries[_i];
    size_t cols = 3, in = (size_t)(c->iw * c->ih * c->ic), out = (size_t)(c->ow * c->oh * c->oc);
    int k = c->kw * c->kh * c->ic;
    float *x = rnd_floats(in * cols), *w = rnd_floats((size_t)k * (size_t)c->oc),
          *bias = rnd_floats((size_t)c->oc), *dy = rnd_floats(out * cols);
    float *y = zeros(out * cols), *ws = zeros(bk_conv_ws(c)), *dx = zeros(in * cols),
          *dw = zeros((size_t)k * (size_t)c->oc), *db = zeros((size_t)c->oc);
    b->ops->conv_forward(b, c, y, x, w, bias, cols, ws);
    /* the gradients are added to what is there: start from 1 */
    for (size_t i = 0; i < in * cols; i++)
        dx[i] = 1.0f;
    for (int i = 0; i < k * c->oc; i++)
        dw[i] = 1.0f;
    for (int i = 0; i < c->oc; i++)
        db[i] = 1.0f;
    b->ops->conv_backward(b, c, dy, x, w, dx, dw, db, cols, ws);
    double *rdx = calloc(in * cols, sizeof *rdx), *rdw = calloc((size_t)k * c->oc, sizeof *rdw);
    double *rdb = calloc((size_t)c->oc, sizeof *rdb);
    ck_assert(rdx && rdw && rdb);
    for (size_t j = 0; j < cols; j++)
        for (int m = 0; m < c->oc; m++)
            for (int oy = 0; oy < c->oh; oy++)
                for (int ox = 0; ox < c->ow; ox++) {
                    size_t o = j * out + (size_t)(ox + c->ow * (oy + c->oh * m));
                    double s = bias[m];
                    rdb[m] += dy[o];
                    for (int ch = 0; ch < c->ic; ch++)
                        for (int ky = 0; ky < c->kh; ky++)
                            for (int kx = 0; kx < c->kw; kx++) {
                                int ix = ox * c->sw - c->pw + kx, iy = oy * c->sh - c->ph + ky;
                                double v = at(c, x, j, ix, iy, ch);
                                size_t p = (size_t)(kx + c->kw * (ky + c->kh * ch));
                                if (isnan(v))
                                    continue;
                                s += w[p + (size_t)k * (size_t)m] * v;
                                rdw[p + (size_t)k * (size_t)m] += dy[o] * v;
                                rdx[j * in + (size_t)(ix + c->iw * (iy + c->ih * ch))] +=
                                    dy[o] * w[p + (size_t)k * (size_t)m];
                            }
                    ck_assert_msg(fabs(y[o] - s) < 1e-4, "geometry %d: y[%zu] %g, want %g", _i, o,
                                  y[o], s);
                }
    for (size_t i = 0; i < in * cols; i++)
        ck_assert_msg(fabs(dx[i] - 1.0 - rdx[i]) < 1e-4, "geometry %d: dx[%zu] %g, want %g", _i, i,
                      dx[i] - 1.0, rdx[i]);
    for (int i = 0; i < k * c->oc; i++)
        ck_assert_msg(fabs(dw[i] - 1.0 - rdw[i]) < 1e-3, "geometry %d: dw[%d] %g, want %g", _i, i,
                      dw[i] - 1.0, rdw[i]);
    for (int i = 0; i < c->oc; i++)
        ck_assert(fabs(db[i] - 1.0 - rdb[i]) < 1e-3);
    /* no input gradient wanted: the kernel's is the same */
    float *dw2 = zeros((size_t)k * (size_t)c->oc);
    b->ops->conv_backward(b, c, dy, x, w, NULL, dw2, NULL, cols, ws);
    for (int i = 0; i < k * c->oc; i++)
        ck_assert(fabs(dw2[i] - rdw[i]) < 1e-3);
    free(dw2);
    free(rdx), free(rdw), free(rdb);
    free(x), free(w), free(bias), free(dy), free(y), free(ws), free(dx), free(dw), free(db);
    backend_free(b);
}
END_TEST

static const struct bk_conv pools[] = {
    /* iw ih ic kw kh sw sh pw ph ow oh oc pool include_pad */
    {6, 6, 2, 2, 2, 2, 2, 0, 0, 3, 3, 2, BK_POOL_MAX, 0},
    {7, 5, 3, 3, 3, 2, 2, 1, 1, 4, 3, 3, BK_POOL_MAX, 0},     /* padded: left out */
    {5, 4, 2, 2, 2, 2, 2, 0, 0, 3, 2, 2, BK_POOL_MAX, 0},     /* a window past the edge */
    {7, 5, 3, 3, 3, 2, 2, 1, 1, 4, 3, 3, BK_POOL_AVERAGE, 0}, /* over the cells inside */
    {7, 5, 3, 3, 3, 2, 2, 1, 1, 4, 3, 3, BK_POOL_AVERAGE, 1}, /* over the whole window */
    {28, 28, 2, 3, 3, 2, 2, 0, 0, 13, 13, 2, BK_POOL_MAX, 0}, /* CNTK's ConvNet_MNIST */
    /* 2 x 2 at a stride of 2, wholly inside: 14 cells a row (a block of 8 and the last 8
     * again), 5 (shorter than a block); 3 x 3 at strides 1 and 3 through the general rows */
    {28, 28, 2, 2, 2, 2, 2, 0, 0, 14, 14, 2, BK_POOL_MAX, 0},
    {10, 6, 1, 2, 2, 2, 2, 0, 0, 5, 3, 1, BK_POOL_MAX, 0},
    {12, 7, 2, 3, 3, 1, 1, 0, 0, 10, 5, 2, BK_POOL_MAX, 0},
    {12, 7, 2, 3, 3, 3, 3, 0, 0, 4, 2, 2, BK_POOL_AVERAGE, 0},
};

START_TEST(pooling_matches_direct_windows)
{
    struct pt_err e = {0};
    struct backend *b = NULL;
    ck_assert_int_eq(backend_cpu_new(&b, &e), 0);
    const struct bk_conv *c = &pools[_i];
    size_t cols = 2, in = (size_t)(c->iw * c->ih * c->ic), out = (size_t)(c->ow * c->oh * c->ic);
    float *x = rnd_floats(in * cols), *dy = rnd_floats(out * cols), *y = zeros(out * cols);
    if (_i % 2) /* values in steps of 0.5: windows with equal maxima, of which the first wins */
        for (size_t i = 0; i < in * cols; i++)
            x[i] = isnan(x[i]) ? x[i] : floorf(x[i] * 2.0f) / 2.0f;
    float *dx = zeros(in * cols);
    int32_t *arg = malloc(out * cols * sizeof *arg);
    ck_assert_ptr_nonnull(arg);
    double *rdx = calloc(in * cols, sizeof *rdx);
    ck_assert_ptr_nonnull(rdx);
    b->ops->pool_forward(b, c, y, x, cols, arg);
    b->ops->pool_backward(b, c, dx, dy, arg, cols);
    for (size_t j = 0; j < cols; j++)
        for (int ch = 0; ch < c->ic; ch++)
            for (int oy = 0; oy < c->oh; oy++)
                for (int ox = 0; ox < c->ow; ox++) {
                    size_t o = j * out + (size_t)(ox + c->ow * (oy + c->oh * ch));
                    double best = -INFINITY, sum = 0.0;
                    int n = 0;
                    size_t first_max = 0;
                    for (int ky = 0; ky < c->kh; ky++)
                        for (int kx = 0; kx < c->kw; kx++) {
                            int ix = ox * c->sw - c->pw + kx, iy = oy * c->sh - c->ph + ky;
                            double v = at(c, x, j, ix, iy, ch);
                            if (isnan(v))
                                continue;
                            size_t i = j * in + (size_t)(ix + c->iw * (iy + c->ih * ch));
                            if (v > best) {
                                best = v;
                                first_max = i;
                            }
                            sum += v;
                            n++;
                        }
                    ck_assert(n > 0);
                    double want = best;
                    if (c->pool == BK_POOL_AVERAGE) {
                        int d = c->include_pad ? c->kw * c->kh : n;
                        want = sum / d;
                        for (int ky = 0; ky < c->kh; ky++)
                            for (int kx = 0; kx < c->kw; kx++) {
                                int ix = ox * c->sw - c->pw + kx, iy = oy * c->sh - c->ph + ky;
                                if (!isnan(at(c, x, j, ix, iy, ch)))
                                    rdx[j * in + (size_t)(ix + c->iw * (iy + c->ih * ch))] +=
                                        dy[o] / d;
                            }
                    } else
                        rdx[first_max] += dy[o];
                    ck_assert_msg(fabs(y[o] - want) < 1e-5, "pooling %d: y[%zu] %g, want %g", _i, o,
                                  y[o], want);
                }
    for (size_t i = 0; i < in * cols; i++)
        ck_assert_msg(fabs(dx[i] - rdx[i]) < 1e-5, "pooling %d: dx[%zu] %g, want %g", _i, i, dx[i],
                      rdx[i]);
    free(x), free(dy), free(y), free(dx), free(rdx), free(arg);
    backend_free(b);
}
END_TEST

TCase *math_conv_tcase(void);

TCase *math_conv_tcase(void)
{
    TCase *tc = tcase_create("conv");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, convolution_matches_direct_sums, 0,
                        (int)(sizeof geometries / sizeof geometries[0]));
    tcase_add_loop_test(tc, pooling_matches_direct_windows, 0,
                        (int)(sizeof pools / sizeof pools[0]));
    return tc;
}
