/* The CPU backend's batch normalization (bn_forward, bn_backward) against its definition in
 * backend.h, computed here in double: the minibatch's statistics per map (over the map's
 * cells of every column), the running statistics' update (the unbiased variance), the
 * evaluation form from the running statistics, and the gradients against central
 * differences of a double-precision forward pass, and padding columns left out. Spatial
 * (maps of several cells) and per-row (maps of one cell) layouts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "test_math.h"
#include "testutil.h"

struct bn_case {
    int maps, spatial;
    size_t cols;
};
static const struct bn_case cases[] = {{3, 5, 7}, {4, 1, 6}, {2, 9, 1}, {1, 1, 3}};

static float *rnd(uint64_t *s, size_t n, double lo, double hi)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(lo + (hi - lo) * (uni(s) + 1.0) / 2.0);
    return p;
}

/* index of cell s of map c in column j */
static size_t at(const struct bn_case *k, size_t j, int c, int s)
{
    return j * (size_t)k->maps * (size_t)k->spatial + (size_t)c * (size_t)k->spatial + (size_t)s;
}

/* the training forward in double: y, and each map's mean and biased variance */
static void ref_forward(const struct bn_case *k, const double *x, const double *scale,
                        const double *bias, double eps, double *y, double *mean, double *var)
{
    double n = (double)k->spatial * (double)k->cols;
    for (int c = 0; c < k->maps; c++) {
        double sum = 0.0, m2 = 0.0;
        for (size_t j = 0; j < k->cols; j++)
            for (int s = 0; s < k->spatial; s++)
                sum += x[at(k, j, c, s)];
        double mu = sum / n;
        for (size_t j = 0; j < k->cols; j++)
            for (int s = 0; s < k->spatial; s++)
                m2 += (x[at(k, j, c, s)] - mu) * (x[at(k, j, c, s)] - mu);
        mean[c] = mu;
        var[c] = m2 / n;
        for (size_t j = 0; j < k->cols; j++)
            for (int s = 0; s < k->spatial; s++)
                y[at(k, j, c, s)] =
                    scale[c] * (x[at(k, j, c, s)] - mu) / sqrt(var[c] + eps) + bias[c];
    }
}

START_TEST(bn_training_forward_matches_definition)
{
    const struct bn_case *k = &cases[_i];
    uint64_t s = 77 + (uint64_t)_i;
    size_t n = (size_t)k->maps * (size_t)k->spatial * k->cols, m = (size_t)k->maps;
    float *x = rnd(&s, n, 2.0, 5.0), *scale = rnd(&s, m, 0.5, 2.0), *bias = rnd(&s, m, -1, 1);
    float *rm = rnd(&s, m, -1, 1), *rv = rnd(&s, m, 0.5, 2.0), *y = calloc(n, sizeof *y);
    float *mean = calloc(m, sizeof *mean), *invstd = calloc(m, sizeof *invstd);
    float *rm0 = malloc(m * sizeof *rm0), *rv0 = malloc(m * sizeof *rv0);
    double *xd = malloc(n * sizeof *xd), *yd = malloc(n * sizeof *yd);
    double sd[8] = {0}, bd[8] = {0}, md[8] = {0}, vd[8] = {0};
    ck_assert(y && mean && invstd && rm0 && rv0 && xd && yd && m <= 8);
    memcpy(rm0, rm, m * sizeof *rm);
    memcpy(rv0, rv, m * sizeof *rv);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    for (size_t c = 0; c < m; c++)
        sd[c] = scale[c], bd[c] = bias[c];
    const double f = 0.25, eps = 1e-3;
    bk->ops->bn_forward(bk, 1, y, x, k->maps, k->spatial, k->cols, NULL, scale, bias, rm, rv, f,
                        eps, mean, invstd);
    ref_forward(k, xd, sd, bd, eps, yd, md, vd);
    double N = (double)k->spatial * (double)k->cols;
    for (size_t c = 0; c < m; c++) {
        ck_assert_msg(fabs(mean[c] - md[c]) < 1e-5, "case %d map %zu: mean %g, want %g", _i, c,
                      mean[c], md[c]);
        ck_assert_msg(fabs(invstd[c] - 1.0 / sqrt(vd[c] + eps)) < 1e-4 / sqrt(vd[c] + eps),
                      "case %d map %zu: invstd %g", _i, c, invstd[c]);
        double unbiased = N > 1 ? vd[c] * N / (N - 1) : 0.0;
        ck_assert_msg(fabs(rm[c] - (f * md[c] + (1 - f) * rm0[c])) < 1e-5,
                      "case %d map %zu: running mean %g", _i, c, rm[c]);
        ck_assert_msg(fabs(rv[c] - (f * unbiased + (1 - f) * rv0[c])) < 1e-5,
                      "case %d map %zu: running variance %g, want %g", _i, c, rv[c],
                      f * unbiased + (1 - f) * rv0[c]);
    }
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(y[i] - yd[i]) < 1e-4 * (1 + fabs(yd[i])), "case %d: y[%zu] %g, want %g",
                      _i, i, y[i], yd[i]);
    /* weight 0 for the new statistics (a time constant of infinity): the running ones stay,
     * bit for bit */
    memcpy(rm0, rm, m * sizeof *rm);
    memcpy(rv0, rv, m * sizeof *rv);
    bk->ops->bn_forward(bk, 1, y, x, k->maps, k->spatial, k->cols, NULL, scale, bias, rm, rv, 0.0,
                        eps, mean, invstd);
    ck_assert(memcmp(rm, rm0, m * sizeof *rm) == 0 && memcmp(rv, rv0, m * sizeof *rv) == 0);
    free(x), free(scale), free(bias), free(rm), free(rv), free(y), free(mean), free(invstd);
    free(rm0), free(rv0), free(xd), free(yd);
}
END_TEST

START_TEST(bn_evaluation_uses_running_statistics)
{
    const struct bn_case *k = &cases[_i];
    uint64_t s = 99 + (uint64_t)_i;
    size_t n = (size_t)k->maps * (size_t)k->spatial * k->cols, m = (size_t)k->maps;
    float *x = rnd(&s, n, -3, 3), *scale = rnd(&s, m, 0.5, 2.0), *bias = rnd(&s, m, -1, 1);
    float *rm = rnd(&s, m, -1, 1), *rv = rnd(&s, m, 0.5, 2.0), *y = calloc(n, sizeof *y);
    float *mean = calloc(m, sizeof *mean), *invstd = calloc(m, sizeof *invstd);
    float *rm0 = malloc(m * sizeof *rm0), *rv0 = malloc(m * sizeof *rv0);
    ck_assert(y && mean && invstd && rm0 && rv0);
    memcpy(rm0, rm, m * sizeof *rm);
    memcpy(rv0, rv, m * sizeof *rv);
    const double eps = 1e-5;
    bk->ops->bn_forward(bk, 0, y, x, k->maps, k->spatial, k->cols, NULL, scale, bias, rm, rv, 0.0,
                        eps, mean, invstd);
    ck_assert(memcmp(rm, rm0, m * sizeof *rm) == 0 && memcmp(rv, rv0, m * sizeof *rv) == 0);
    for (size_t j = 0; j < k->cols; j++)
        for (int c = 0; c < k->maps; c++)
            for (int q = 0; q < k->spatial; q++) {
                size_t i = at(k, j, c, q);
                double want = scale[c] * (x[i] - rm[c]) / sqrt((double)rv[c] + eps) + bias[c];
                ck_assert_msg(fabs(y[i] - want) < 1e-5 * (1 + fabs(want)),
                              "case %d: y[%zu] %g, want %g", _i, i, y[i], want);
            }
    free(x), free(scale), free(bias), free(rm), free(rv), free(y), free(mean), free(invstd);
    free(rm0), free(rv0);
}
END_TEST

/* L = sum w y over the training forward, in double */
static double loss(const struct bn_case *k, const double *x, const double *scale,
                   const double *bias, const double *w, double eps)
{
    size_t n = (size_t)k->maps * (size_t)k->spatial * k->cols;
    double *y = malloc(n * sizeof *y), md[8] = {0}, vd[8] = {0}, l = 0.0;
    ck_assert_ptr_nonnull(y);
    ref_forward(k, x, scale, bias, eps, y, md, vd);
    for (size_t i = 0; i < n; i++)
        l += w[i] * y[i];
    free(y);
    return l;
}

START_TEST(bn_backward_matches_central_differences)
{
    const struct bn_case *k = &cases[_i];
    uint64_t s = 5 + (uint64_t)_i;
    size_t n = (size_t)k->maps * (size_t)k->spatial * k->cols, m = (size_t)k->maps;
    float *x = rnd(&s, n, -2, 2), *scale = rnd(&s, m, 0.5, 2.0), *bias = rnd(&s, m, -1, 1);
    float *dy = rnd(&s, n, -1, 1), *rm = calloc(m, sizeof *rm), *rv = calloc(m, sizeof *rv);
    float *y = calloc(n, sizeof *y), *mean = calloc(m, sizeof *mean);
    float *invstd = calloc(m, sizeof *invstd), *dx = rnd(&s, n, -1, 1), *dx0 = malloc(n * 4);
    float *dscale = rnd(&s, m, -1, 1), *dbias = rnd(&s, m, -1, 1), ds0[8], db0[8];
    double *xd = malloc(n * sizeof *xd), *w = malloc(n * sizeof *w), sd[8] = {0}, bd[8] = {0};
    ck_assert(rm && rv && y && mean && invstd && dx0 && xd && w && m <= 8);
    memcpy(dx0, dx, n * sizeof *dx); /* the gradients are added to what is there */
    memcpy(ds0, dscale, m * sizeof *dscale);
    memcpy(db0, dbias, m * sizeof *dbias);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i], w[i] = dy[i];
    for (size_t c = 0; c < m; c++)
        sd[c] = scale[c], bd[c] = bias[c];
    const double eps = 1e-3, h = 1e-5;
    bk->ops->bn_forward(bk, 1, y, x, k->maps, k->spatial, k->cols, NULL, scale, bias, rm, rv, 1.0,
                        eps, mean, invstd);
    bk->ops->bn_backward(bk, dy, x, k->maps, k->spatial, k->cols, NULL, scale, mean, invstd, dx,
                         dscale, dbias);
    for (size_t i = 0; i < n; i++) {
        double keep = xd[i];
        xd[i] = keep + h;
        double up = loss(k, xd, sd, bd, w, eps);
        xd[i] = keep - h;
        double down = loss(k, xd, sd, bd, w, eps);
        xd[i] = keep;
        double want = (up - down) / (2 * h);
        ck_assert_msg(fabs(dx[i] - dx0[i] - want) < 1e-3 * (1 + fabs(want)),
                      "case %d: dL/dx[%zu] %g, want %g", _i, i, dx[i] - dx0[i], want);
    }
    for (size_t c = 0; c < m; c++) {
        double *p[2] = {sd, bd};
        float got[2] = {dscale[c] - ds0[c], dbias[c] - db0[c]};
        for (int q = 0; q < 2; q++) {
            double keep = p[q][c];
            p[q][c] = keep + h;
            double up = loss(k, xd, sd, bd, w, eps);
            p[q][c] = keep - h;
            double down = loss(k, xd, sd, bd, w, eps);
            p[q][c] = keep;
            double want = (up - down) / (2 * h);
            ck_assert_msg(fabs(got[q] - want) < 1e-3 * (1 + fabs(want)),
                          "case %d map %zu: dL/d%s %g, want %g", _i, c, q ? "bias" : "scale",
                          got[q], want);
        }
    }
    free(x), free(scale), free(bias), free(dy), free(rm), free(rv), free(y), free(mean);
    free(invstd), free(dx), free(dx0), free(dscale), free(dbias), free(xd), free(w);
}
END_TEST

/* Padding columns (mask 0, as a pass with sequences of unequal length has) are left out:
 * every result on the real columns, and the running statistics, are those of the real
 * columns alone, bit for bit, and the padding's dL/dx is not written. */
START_TEST(bn_padding_columns_left_out)
{
    const struct bn_case *k = &cases[_i];
    uint64_t s = 31 + (uint64_t)_i;
    size_t rows = (size_t)k->maps * (size_t)k->spatial, m = (size_t)k->maps;
    size_t cols = k->cols + 3, n = rows * cols, nr = rows * k->cols;
    float *mask = malloc(cols * sizeof *mask), *x = rnd(&s, n, -2, 2), *dy = rnd(&s, n, -1, 1);
    float *xr = malloc(nr * sizeof *xr), *dyr = malloc(nr * sizeof *dyr);
    float *scale = rnd(&s, m, 0.5, 2.0), *bias = rnd(&s, m, -1, 1), st[2][6][8];
    float *y = calloc(n, sizeof *y), *yr = calloc(nr, sizeof *yr), *dx = rnd(&s, n, -1, 1);
    float *dx0 = malloc(n * sizeof *dx0), *dxr = calloc(nr, sizeof *dxr);
    ck_assert(mask && xr && dyr && y && yr && dx0 && dxr && m <= 8);
    memcpy(dx0, dx, n * sizeof *dx);
    memset(st, 0, sizeof st);
    for (size_t j = 0, r = 0; j < cols; j++) { /* padding first, in the middle and last */
        mask[j] = j == 0 || j == cols / 2 || j == cols - 1 ? 0.0f : 1.0f;
        if (mask[j] == 0.0f) {
            for (size_t i = 0; i < rows; i++)
                x[j * rows + i] = 100.0f, dy[j * rows + i] = 0.0f;
            continue;
        }
        memcpy(xr + r * rows, x + j * rows, rows * sizeof *x);
        memcpy(dyr + r * rows, dy + j * rows, rows * sizeof *dy);
        r++;
    }
    for (int v = 0; v < 2; v++) /* [v][0..5]: running mean, variance, mean, invstd, dscale, dbias */
        for (size_t c = 0; c < m; c++)
            st[v][0][c] = 0.5f, st[v][1][c] = 1.5f;
    bk->ops->bn_forward(bk, 1, y, x, k->maps, k->spatial, cols, mask, scale, bias, st[0][0],
                        st[0][1], 0.3, 1e-3, st[0][2], st[0][3]);
    bk->ops->bn_forward(bk, 1, yr, xr, k->maps, k->spatial, k->cols, NULL, scale, bias, st[1][0],
                        st[1][1], 0.3, 1e-3, st[1][2], st[1][3]);
    bk->ops->bn_backward(bk, dy, x, k->maps, k->spatial, cols, mask, scale, st[0][2], st[0][3], dx,
                         st[0][4], st[0][5]);
    bk->ops->bn_backward(bk, dyr, xr, k->maps, k->spatial, k->cols, NULL, scale, st[1][2], st[1][3],
                         dxr, st[1][4], st[1][5]);
    ck_assert(memcmp(st[0], st[1], sizeof st[0]) == 0);
    for (size_t j = 0, r = 0; j < cols; j++) {
        if (mask[j] == 0.0f) {
            ck_assert(memcmp(dx + j * rows, dx0 + j * rows, rows * sizeof *dx) == 0);
            continue;
        }
        ck_assert(memcmp(y + j * rows, yr + r * rows, rows * sizeof *y) == 0);
        for (size_t i = 0; i < rows; i++)
            ck_assert(dx[j * rows + i] - dx0[j * rows + i] == dxr[r * rows + i] ||
                      fabsf(dx[j * rows + i] - dx0[j * rows + i] - dxr[r * rows + i]) <
                          1e-6f * (1 + fabsf(dxr[r * rows + i])));
        r++;
    }
    free(mask), free(x), free(dy), free(xr), free(dyr), free(scale), free(bias), free(y);
    free(yr), free(dx), free(dx0), free(dxr);
}
END_TEST

TCase *math_bn_tcase(void);

TCase *math_bn_tcase(void)
{
    TCase *tc = tcase_create("bn");
    tcase_add_checked_fixture(tc, math_setup, math_teardown);
    int n = (int)(sizeof cases / sizeof cases[0]);
    tcase_add_loop_test(tc, bn_training_forward_matches_definition, 0, n);
    tcase_add_loop_test(tc, bn_evaluation_uses_running_statistics, 0, n);
    tcase_add_loop_test(tc, bn_backward_matches_central_differences, 0, n);
    tcase_add_loop_test(tc, bn_padding_columns_left_out, 0, n);
    return tc;
}
