/* tests/test_math: the CPU backend's update ops (optimizer, model synchronization), the
 * quantizers over column runs, staging, and the fp16 kernels, each against the plain loop
 * it replaced (the code before it moved into src/math), bit for bit. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/backend.h"
#include "core/half.h"
#include "math/quantize.h"
#include "test_math.h"
#include "testutil.h"

#define N 37 /* two blocks of 16 and a tail */

static void fill_random(float *x, size_t n, uint64_t seed, float scale)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = scale * (float)((double)(seed >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

static void assert_same(const float *a, const float *b, size_t n, const char *what)
{
    ck_assert_msg(memcmp(a, b, n * sizeof *a) == 0, "%s differs from its reference", what);
}

START_TEST(optimizer_updates)
{
    float w[N], g[N], s1[N], s2[N], rw[N], rs1[N], rs2[N];
    for (int nag = 0; nag < 2; nag++) {
        fill_random(w, N, 1, 1.0f), fill_random(g, N, 2, 3.0f), fill_random(s1, N, 3, 0.1f);
        memcpy(rw, w, sizeof w), memcpy(rs1, s1, sizeof s1);
        float m = 0.9f, a = (1.0f - m) * 0.01f;
        bk->ops->sgd_update(bk, w, g, s1, N, m, a, nag);
        for (int i = 0; i < N; i++) {
            rs1[i] = m * rs1[i] + a * g[i];
            rw[i] -= nag ? m * rs1[i] + a * g[i] : rs1[i];
        }
        assert_same(w, rw, N, "sgd_update w");
        assert_same(s1, rs1, N, "sgd_update s1");
    }
    fill_random(s2, N, 4, 0.1f);
    for (int i = 0; i < N; i++)
        s2[i] *= s2[i];
    memcpy(rw, w, sizeof w), memcpy(rs1, s1, sizeof s1), memcpy(rs2, s2, sizeof s2);
    float b1 = 0.9f, b2 = 0.999f, scale = 0.02f, rc2 = 3.0f, eps = 1e-8f;
    bk->ops->adam_update(bk, w, g, s1, s2, N, b1, b2, scale, rc2, eps);
    for (int i = 0; i < N; i++) {
        rs1[i] = b1 * rs1[i] + (1 - b1) * g[i];
        rs2[i] = b2 * rs2[i] + (1 - b2) * g[i] * g[i];
        rw[i] -= scale * rs1[i] / (sqrtf(rs2[i]) * rc2 + eps);
    }
    assert_same(w, rw, N, "adam_update w");
    assert_same(s2, rs2, N, "adam_update s2");
    bk->ops->adagrad_update(bk, w, g, s2, N, 0.5f, eps);
    for (int i = 0; i < N; i++) {
        rs2[i] += g[i] * g[i];
        rw[i] -= 0.5f * g[i] / (sqrtf(rs2[i]) + eps);
    }
    assert_same(w, rw, N, "adagrad_update w");
    assert_same(s2, rs2, N, "adagrad_update s1");
}
END_TEST

/* CNTK's FSAdaGrad and RmsProp kernels against their loops written out (CPUMatrix.cpp's
 * order of operations), bit for bit; one FSAdaGrad value has a zero gradient and state. */
START_TEST(cntk_updates)
{
    float w[N], g[N], s1[N], s2[N], s3[N], rw[N], rs1[N], rs2[N], rs3[N], rg[N];
    fill_random(w, N, 11, 1.0f), fill_random(g, N, 12, 3.0f), fill_random(s1, N, 13, 0.5f);
    fill_random(s2, N, 14, 0.2f);
    for (int i = 0; i < N; i++)
        s1[i] *= s1[i];
    g[5] = 0, s1[5] = 0;
    memcpy(rw, w, sizeof w), memcpy(rs1, s1, sizeof s1), memcpy(rs2, s2, sizeof s2);
    float lr = 0.01f, m = 0.9f, vw = 0.99f, mul = 3.0f, ug = 1 - m;
    bk->ops->fsadagrad_update(bk, w, g, s1, s2, N, lr, m, vw, mul, ug);
    for (int i = 0; i < N; i++) {
        float gi = g[i], sq = vw * rs1[i] + (1.0f - vw) * gi * gi;
        rs1[i] = sq;
        if (sq != 0.0f) {
            float f = mul * (1.0f / sqrtf(sq));
            gi *= f > 10.0f ? 10.0f : f;
        }
        gi = m * rs2[i] + ug * gi;
        rs2[i] = gi;
        rw[i] -= lr * gi;
    }
    assert_same(w, rw, N, "fsadagrad_update w");
    assert_same(s1, rs1, N, "fsadagrad_update s1");
    assert_same(s2, rs2, N, "fsadagrad_update s2");
    struct bk_rmsprop p = {.gamma = 0.9f,
                           .inc = 1.2f,
                           .dec = 0.75f,
                           .max = 10,
                           .min = 0.1f,
                           .lr = 0.05f,
                           .ave_mult = 1,
                           .init = 1};
    for (int step = 0; step < 2; step++, p.init = 0) {
        fill_random(g, N, 20 + (uint64_t)step, 2.0f);
        memcpy(rg, g, sizeof g), memcpy(rw, w, sizeof w);
        if (step == 0)
            for (int i = 0; i < N; i++)
                rs1[i] = rg[i] * rg[i], rs2[i] = 0, rs3[i] = 0.02f;
        else
            memcpy(rs1, s1, sizeof s1), memcpy(rs2, s2, sizeof s2), memcpy(rs3, s3, sizeof s3);
        bk->ops->rmsprop_update(bk, w, g, s1, s2, s3, N, &p);
        double sum = 0;
        for (int i = 0; i < N; i++) {
            rs1[i] = p.gamma * rs1[i] + (1.0f - p.gamma) * (rg[i] * rg[i]);
            float sg = (float)((0.0f < rg[i]) - (rg[i] < 0.0f));
            rs3[i] = rs2[i] * sg > 0 ? fminf(rs3[i] * p.inc, p.max) : fmaxf(rs3[i] * p.dec, p.min);
            float a = rs3[i] / sqrtf(rs1[i] + 1e-6f);
            rg[i] *= a;
            rs2[i] = sg;
            sum += a;
        }
        float st = (float)(p.lr / (sum / N));
        for (int i = 0; i < N; i++)
            rw[i] -= st * rg[i];
        assert_same(w, rw, N, "rmsprop_update w");
        assert_same(s3, rs3, N, "rmsprop_update s3");
        assert_same(g, rg, N, "rmsprop_update g");
    }
}
END_TEST

START_TEST(clipping_and_l1)
{
    float x[N], r[N];
    fill_random(x, N, 5, 4.0f);
    memcpy(r, x, sizeof x);
    bk->ops->clip_value(bk, x, N, 1.5f);
    for (int i = 0; i < N; i++)
        r[i] = r[i] > 1.5f ? 1.5f : r[i] < -1.5f ? -1.5f : r[i];
    assert_same(x, r, N, "clip_value");
    fill_random(x, N, 6, 4.0f);
    memcpy(r, x, sizeof x);
    double norm = 0;
    for (int i = 0; i < N; i++)
        norm += (double)r[i] * r[i];
    norm = sqrt(norm);
    float s = (float)(2.0f / norm);
    for (int i = 0; i < N; i++)
        r[i] *= s;
    bk->ops->clip_norm(bk, x, N, 2.0f);
    assert_same(x, r, N, "clip_norm (scaled)");
    bk->ops->clip_norm(bk, x, N, 100.0f); /* below the threshold: untouched */
    assert_same(x, r, N, "clip_norm (kept)");
    bk->ops->soft_threshold(bk, x, N, 0.05f);
    for (int i = 0; i < N; i++)
        r[i] = r[i] > 0.05f ? r[i] - 0.05f : r[i] < -0.05f ? r[i] + 0.05f : 0.0f;
    assert_same(x, r, N, "soft_threshold");
    /* sgd_update_clip: clip_value, then sgd_update, bit for bit (g untouched), with and
     * without momentum and Nesterov */
    float g[N], gc[N], w1[N], w2[N], s1[N], s2[N];
    ck_assert_ptr_nonnull(bk->ops->sgd_update_clip);
    for (int k = 0; k < 4; k++) {
        fill_random(g, N, 7 + (uint64_t)k, 4.0f);
        fill_random(w1, N, 9, 1.0f);
        fill_random(s1, N, 10, 0.5f);
        memcpy(gc, g, sizeof g);
        memcpy(w2, w1, sizeof w1);
        memcpy(s2, s1, sizeof s1);
        float m = k & 1 ? 0.9f : 0.0f;
        int nag = k >> 1;
        bk->ops->clip_value(bk, gc, N, 1.5f);
        bk->ops->sgd_update(bk, w1, gc, s1, N, m, 0.01f, nag);
        memcpy(gc, g, sizeof g);
        bk->ops->sgd_update_clip(bk, w2, g, s2, N, m, 0.01f, nag, 1.5f);
        assert_same(w2, w1, N, "sgd_update_clip's parameters");
        assert_same(s2, s1, N, "sgd_update_clip's momentum");
        assert_same(g, gc, N, "sgd_update_clip's gradient");
    }
}
END_TEST

START_TEST(model_synchronization)
{
    float w[N], prev[N], d[N], g[N], y[N], rw[N], rp[N], rd[N], ry[N];
    fill_random(w, N, 7, 1.0f), fill_random(prev, N, 8, 1.0f), fill_random(d, N, 9, 0.1f);
    for (int k = 0; k < 2; k++) { /* f = 1: the plain difference */
        float f = k ? 0.25f : 1.0f;
        bk->ops->sub_scaled(bk, y, w, prev, N, f);
        for (int i = 0; i < N; i++)
            ry[i] = k ? f * (w[i] - prev[i]) : w[i] - prev[i];
        assert_same(y, ry, N, "sub_scaled");
    }
    fill_random(g, N, 10, 0.5f);
    for (int nesterov = 0; nesterov < 2; nesterov++) {
        memcpy(rw, w, sizeof w), memcpy(rp, prev, sizeof prev), memcpy(rd, d, sizeof d);
        float bm = 0.75f, gain = 0.25f;
        bk->ops->block_momentum(bk, w, prev, d, g, N, bm, gain, nesterov);
        for (int i = 0; i < N; i++) {
            float di = bm * rd[i] + gain * g[i], x = rp[i] - di;
            if (nesterov)
                x -= bm * di;
            rd[i] = di, rw[i] = x, rp[i] = x;
        }
        assert_same(w, rw, N, "block_momentum w");
        assert_same(prev, rp, N, "block_momentum prev");
        assert_same(d, rd, N, "block_momentum d");
    }
}
END_TEST

/* A run of columns at offsets (fbase, bbase) gives the bytes and floats of one column at a
 * time; the residual too. */
START_TEST(quantize_column_runs)
{
    enum { COLS = 5 };
    static const size_t rows[COLS] = {1, 33, 64, 7, 40};
    size_t off[COLS], boff[COLS], nf = 0;
    float g[200], r[200], r1[200], out[200], out1[200];
    unsigned char bytes[1200], bytes1[1200];
    for (int bits = 1; bits <= 16; bits += 3) {
        size_t nb = 0;
        nf = 0;
        for (int c = 0; c < COLS; c++) {
            off[c] = nf, boff[c] = nb;
            nf += rows[c], nb += quant_column_bytes(rows[c], bits);
        }
        fill_random(g, nf, (uint64_t)bits, 1.0f), fill_random(r, nf, 99, 0.01f);
        memcpy(r1, r, sizeof r);
        /* columns 1..4, with the floats and bytes given from column 1 on */
        struct bk_columns run = {.off = off,
                                 .rows = rows,
                                 .boff = boff,
                                 .c0 = 1,
                                 .c1 = COLS,
                                 .fbase = off[1],
                                 .bbase = boff[1],
                                 .bits = bits,
                                 .zero_threshold = bits == 1};
        bk->ops->quantize(bk, &run, g + off[1], r + off[1], bytes);
        memset(out, 0, sizeof out), memset(out1, 0, sizeof out1);
        bk->ops->unquantize(bk, &run, bytes, 1, out + off[1]);
        for (int c = 1; c < COLS; c++) {
            size_t z = 0;
            struct bk_columns one = {.off = &z,
                                     .rows = &rows[c],
                                     .boff = &z,
                                     .c0 = 0,
                                     .c1 = 1,
                                     .bits = bits,
                                     .zero_threshold = bits == 1};
            bk->ops->quantize(bk, &one, g + off[c], r1 + off[c], bytes1 + boff[c] - boff[1]);
            bk->ops->unquantize(bk, &one, bytes1 + boff[c] - boff[1], 1, out1 + off[c]);
        }
        ck_assert_msg(memcmp(bytes, bytes1, nb - boff[1]) == 0, "bits %d: bytes", bits);
        assert_same(r, r1, nf, "quantize residual");
        assert_same(out, out1, nf, "unquantize");
    }
}
END_TEST

START_TEST(staging_and_zeroed_memory)
{
    struct pt_err e;
    pt_err_clear(&e);
    float *x = NULL, *h = NULL;
    ck_assert_int_eq(bk_alloc_zero(bk, N, &x, &e), 0);
    for (int i = 0; i < N; i++)
        ck_assert(x[i] == 0.0f && !signbit(x[i]));
    struct bk_stage st = {0};
    /* the CPU backend holds host memory: the stage is the buffer itself, nothing copied */
    ck_assert_int_eq(bk_stage_out(bk, &st, x, 3, 10, &h, &e), 0);
    ck_assert_ptr_eq(h, x);
    ck_assert_int_eq(bk_stage_for_write(bk, &st, x, N, &h, &e), 0);
    ck_assert_ptr_eq(h, x);
    ck_assert_int_eq(bk_stage_in(bk, x, h, 0, N, &e), 0);
    ck_assert_ptr_null(st.host);
    bk_stage_free(&st);
    bk->ops->release(bk, x);
}
END_TEST

START_TEST(half_arrays_match_scalar)
{
    float f[N], back[N];
    uint16_t h[N], h2[N];
    fill_random(f, N, 11, 70000.0f); /* some overflow to inf */
    f[0] = NAN, f[1] = 1e-7f, f[2] = -0.0f;
    bk_half_pack(h, f, N);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(h[i], bk_half_from_float(f[i]));
    bk_half_unpack(back, h, N);
    for (int i = 0; i < N; i++) {
        float want = bk_float_from_half(h[i]);
        ck_assert(memcmp(&back[i], &want, sizeof want) == 0);
    }
    fill_random(f, N, 12, 3.0f);
    bk_half_pack(h2, f, N);
    uint16_t sum[N];
    memcpy(sum, h2, sizeof sum);
    bk_half_sum(h, sum, N);
    for (int i = 1; i < N; i++) /* element 0 is NaN: only its NaN-ness is defined */
        ck_assert_uint_eq(sum[i],
                          bk_half_from_float(bk_float_from_half(h[i]) + bk_float_from_half(h2[i])));
    ck_assert(isnan(bk_float_from_half(sum[0])));
    /* the backend's fp16 transport ops are these kernels */
    uint16_t h3[N];
    bk->ops->half_out(bk, h3, f, N);
    ck_assert(memcmp(h3, h2, sizeof h3) == 0);
    bk->ops->half_in(bk, back, h3, N);
    bk_half_unpack(f, h2, N);
    assert_same(back, f, N, "half_in");
}
END_TEST

TCase *math_update_tcase(void);

TCase *math_update_tcase(void)
{
    TCase *tc = tcase_create("cpu updates");
    tcase_add_checked_fixture(tc, math_setup, math_teardown);
    tcase_add_test(tc, optimizer_updates);
    tcase_add_test(tc, cntk_updates);
    tcase_add_test(tc, clipping_and_l1);
    tcase_add_test(tc, model_synchronization);
    tcase_add_test(tc, quantize_column_runs);
    tcase_add_test(tc, staging_and_zeroed_memory);
    tcase_add_test(tc, half_arrays_match_scalar);
    return tc;
}
