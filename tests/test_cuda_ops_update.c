/* tests/test_cuda_ops: the optimizer updates, clipping, the parallel engines' model
 * updates, the quantizers and the fp16 conversions, device against CPU (see
 * test_cuda_ops.h). The packed bytes of quantize and the halves of half_out are host
 * memory that the engines hand to the communicator as soon as the op returns, so they are
 * compared here without a sync in between. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/quantize.h"
#include "test_cuda_ops.h"

static const size_t lengths[] = {1, 37, 4099, 100003};
#define NLEN (sizeof lengths / sizeof lengths[0])

/* ---- the optimizer ---- */

START_TEST(sgd_adam_adagrad)
{
    for (size_t li = 0; li < NLEN; li++) {
        size_t n = lengths[li];
        for (int nag = 0; nag < 2; nag++) {
            struct twin w = {0}, g = {0}, s1 = {0};
            twin_rand(&w, n, -1.0f, 1.0f);
            twin_rand(&g, n, -3.0f, 3.0f);
            twin_rand(&s1, n, -0.1f, 0.1f);
            float m = 0.9f, a = (1.0f - m) * 0.01f;
            for (int step = 0; step < 2; step++) {
                ref_bk->ops->sgd_update(ref_bk, w.c, g.c, s1.c, n, m, a, nag);
                dev_bk->ops->sgd_update(dev_bk, w.d, g.d, s1.d, n, m, a, nag);
            }
            check_bits("sgd_update", &w, "w n=%zu nag=%d", n, nag);
            check_bits("sgd_update", &s1, "s1 n=%zu nag=%d", n, nag);
            twin_free(&w);
            twin_free(&g);
            twin_free(&s1);
        }
        struct twin w = {0}, g = {0}, s1 = {0}, s2 = {0};
        twin_rand(&w, n, -1.0f, 1.0f);
        twin_rand(&g, n, -3.0f, 3.0f);
        twin_rand(&s1, n, -0.1f, 0.1f);
        twin_rand(&s2, n, 0.0f, 0.01f);
        g.c[0] = 0.0f; /* no gradient on a value with no history */
        s2.c[0] = 0.0f;
        twin_set(&g, g.c);
        twin_set(&s2, s2.c);
        ref_bk->ops->adam_update(ref_bk, w.c, g.c, s1.c, s2.c, n, 0.9f, 0.999f, 1e-3f, 31.6f,
                                 1e-8f);
        dev_bk->ops->adam_update(dev_bk, w.d, g.d, s1.d, s2.d, n, 0.9f, 0.999f, 1e-3f, 31.6f,
                                 1e-8f);
        check_near("adam_update", &w, NULL, TOL, "w n=%zu", n);
        check_near("adam_update", &s1, NULL, TOL, "s1 n=%zu", n);
        check_near("adam_update", &s2, NULL, TOL, "s2 n=%zu", n);
        twin_free(&s1);
        twin_rand(&s1, n, 0.0f, 0.5f);
        s1.c[0] = 0.0f;
        twin_set(&s1, s1.c);
        ref_bk->ops->adagrad_update(ref_bk, w.c, g.c, s1.c, n, 0.01f, 1e-8f);
        dev_bk->ops->adagrad_update(dev_bk, w.d, g.d, s1.d, n, 0.01f, 1e-8f);
        check_near("adagrad_update", &w, NULL, TOL, "w n=%zu", n);
        check_near("adagrad_update", &s1, NULL, TOL, "s1 n=%zu", n);
        twin_free(&w);
        twin_free(&g);
        twin_free(&s1);
        twin_free(&s2);
    }
    check_synced("optimizer");
}
END_TEST

/* FSAdaGrad without (m = 0) and with momentum; smoothed squares of 0 (no scaling) and
 * small ones (the factor capped at 10). */
START_TEST(fsadagrad)
{
    for (size_t li = 0; li < NLEN; li++)
        for (int mom = 0; mom < 2; mom++) {
            size_t n = lengths[li];
            struct twin w = {0}, g = {0}, s1 = {0}, s2 = {0};
            twin_rand(&w, n, -1.0f, 1.0f);
            twin_rand(&g, n, -1.0f, 1.0f);
            twin_rand(&s1, n, 0.0f, 1e-2f);
            twin_rand(&s2, n, -0.1f, 0.1f);
            for (size_t i = 0; i < n; i += 5) {
                g.c[i] = i % 10 ? g.c[i] * 1e-3f : 0.0f;
                s1.c[i] = i % 10 ? s1.c[i] * 1e-4f : 0.0f;
            }
            twin_set(&g, g.c);
            twin_set(&s1, s1.c);
            float m = mom ? 0.9f : 0.0f;
            ref_bk->ops->fsadagrad_update(ref_bk, w.c, g.c, s1.c, s2.c, n, 0.01f, m, 0.999f, 0.05f,
                                          0.1f);
            dev_bk->ops->fsadagrad_update(dev_bk, w.d, g.d, s1.d, s2.d, n, 0.01f, m, 0.999f, 0.05f,
                                          0.1f);
            check_near("fsadagrad_update", &w, NULL, TOL, "w n=%zu m=%g", n, (double)m);
            check_near("fsadagrad_update", &s1, NULL, TOL, "s1 n=%zu m=%g", n, (double)m);
            check_near("fsadagrad_update", &s2, NULL, TOL, "s2 n=%zu m=%g", n, (double)m);
            twin_free(&w);
            twin_free(&g);
            twin_free(&s1);
            twin_free(&s2);
        }
    check_synced("fsadagrad");
}
END_TEST

/* RmsProp's first update (init) and a later one, with and without the mean factor. */
START_TEST(rmsprop)
{
    for (size_t li = 0; li < NLEN; li++)
        for (int v = 0; v < 4; v++) {
            size_t n = lengths[li];
            struct twin w = {0}, g = {0}, s1 = {0}, s2 = {0}, s3 = {0};
            twin_rand(&w, n, -1.0f, 1.0f);
            twin_rand(&g, n, -1.0f, 1.0f);
            twin_rand(&s1, n, 0.0f, 0.1f);
            twin_alloc(&s2, n);
            twin_rand(&s3, n, 0.1f, 10.0f);
            for (size_t i = 0; i < n; i++) {
                s2.c[i] = (float)((int)(rnd_next() % 3) - 1); /* the previous signs */
                if (i % 9 == 4)
                    g.c[i] = 0.0f;
            }
            twin_set(&s2, s2.c);
            twin_set(&g, g.c);
            struct bk_rmsprop p = {.gamma = 0.99f,
                                   .inc = 1.2f,
                                   .dec = 0.75f,
                                   .max = 10.0f,
                                   .min = 0.1f,
                                   .lr = 0.01f,
                                   .ave_mult = v & 1,
                                   .init = v >> 1};
            ref_bk->ops->rmsprop_update(ref_bk, w.c, g.c, s1.c, s2.c, s3.c, n, &p);
            dev_bk->ops->rmsprop_update(dev_bk, w.d, g.d, s1.d, s2.d, s3.d, n, &p);
            const char *what = v == 0 ? "" : v == 1 ? " ave_mult" : v == 2 ? " init" : " both";
            check_near("rmsprop_update", &w, NULL, TOL, "w n=%zu%s", n, what);
            check_near("rmsprop_update", &g, NULL, TOL, "g n=%zu%s", n, what);
            check_near("rmsprop_update", &s1, NULL, TOL, "s1 n=%zu%s", n, what);
            check_near("rmsprop_update", &s2, NULL, TOL, "s2 n=%zu%s", n, what);
            check_near("rmsprop_update", &s3, NULL, TOL, "s3 n=%zu%s", n, what);
            struct twin *all[] = {&w, &g, &s1, &s2, &s3};
            for (int k = 0; k < 5; k++)
                twin_free(all[k]);
        }
    check_synced("rmsprop");
}
END_TEST

START_TEST(clipping_and_l1)
{
    for (size_t li = 0; li < NLEN; li++) {
        size_t n = lengths[li];
        struct twin x = {0};
        twin_rand(&x, n, -2.0f, 2.0f);
        if (n > 3) {
            x.c[1] = INFINITY, x.c[2] = -3e38f, x.c[3] = -0.0f;
            twin_set(&x, x.c);
        }
        ref_bk->ops->clip_value(ref_bk, x.c, n, 0.5f);
        dev_bk->ops->clip_value(dev_bk, x.d, n, 0.5f);
        check_bits("clip_value", &x, "n=%zu max=0.5", n);
        for (int above = 0; above < 2; above++) {
            twin_free(&x);
            twin_rand(&x, n, -2.0f, 2.0f);
            double norm = 0.0;
            for (size_t i = 0; i < n; i++)
                norm += (double)x.c[i] * x.c[i];
            float max = (float)(sqrt(norm) * (above ? 0.5 : 2.0));
            ref_bk->ops->clip_norm(ref_bk, x.c, n, max);
            dev_bk->ops->clip_norm(dev_bk, x.d, n, max);
            if (above)
                check_near("clip_norm", &x, NULL, TOL, "n=%zu norm above max", n);
            else
                check_bits("clip_norm", &x, "n=%zu norm below max: unchanged", n);
        }
        static const float ts[] = {0.3f, 0.0f};
        for (int k = 0; k < 2; k++) {
            ref_bk->ops->soft_threshold(ref_bk, x.c, n, ts[k]);
            dev_bk->ops->soft_threshold(dev_bk, x.d, n, ts[k]);
            check_bits("soft_threshold", &x, "n=%zu t=%g", n, (double)ts[k]);
        }
        twin_free(&x);
    }
    check_synced("clipping");
}
END_TEST

/* ---- the engines' model updates ---- */

START_TEST(sub_scaled_and_block_momentum)
{
    for (size_t li = 0; li < NLEN; li++) {
        size_t n = lengths[li];
        static const float fs[] = {1.0f, 0.25f, 1.0f / 3.0f, -2.0f};
        for (int k = 0; k < 4; k++) {
            struct twin y = {0}, x = {0}, z = {0};
            twin_const(&y, n, NAN);
            twin_rand(&x, n, -1.0f, 1.0f);
            twin_rand(&z, n, -1.0f, 1.0f);
            ref_bk->ops->sub_scaled(ref_bk, y.c, x.c, z.c, n, fs[k]);
            dev_bk->ops->sub_scaled(dev_bk, y.d, x.d, z.d, n, fs[k]);
            check_bits("sub_scaled", &y, "n=%zu f=%g", n, (double)fs[k]);
            twin_free(&y);
            twin_free(&x);
            twin_free(&z);
        }
        for (int nesterov = 0; nesterov < 2; nesterov++) {
            struct twin w = {0}, prev = {0}, d = {0}, g = {0};
            twin_const(&w, n, NAN);
            twin_rand(&prev, n, -1.0f, 1.0f);
            twin_rand(&d, n, -0.1f, 0.1f);
            twin_rand(&g, n, -0.1f, 0.1f);
            for (int round = 0; round < 2; round++) {
                float bm = round ? 0.75f : 0.9f, gain = round ? 1.0f : 0.5f;
                ref_bk->ops->block_momentum(ref_bk, w.c, prev.c, d.c, g.c, n, bm, gain, nesterov);
                dev_bk->ops->block_momentum(dev_bk, w.d, prev.d, d.d, g.d, n, bm, gain, nesterov);
            }
            check_bits("block_momentum", &w, "w n=%zu nesterov=%d", n, nesterov);
            check_bits("block_momentum", &prev, "prev n=%zu nesterov=%d", n, nesterov);
            check_bits("block_momentum", &d, "d n=%zu nesterov=%d", n, nesterov);
            twin_free(&w);
            twin_free(&prev);
            twin_free(&d);
            twin_free(&g);
        }
    }
    check_synced("model updates");
}
END_TEST

/* ---- quantizers ---- */

/* A run of columns laid out with gaps (3 floats, gapb bytes) that no op may touch. */
struct layout {
    const char *name;
    size_t ncols, c0, c1;
    const size_t *rows;
    int view;    /* pass pointers at column c0 (fbase, bbase = its offsets), as the engines'
                  * stripes do; else the buffers' starts (fbase = bbase = 0) */
    size_t gapb; /* bytes between packed columns */
    int hostile; /* zeros, huge values, subnormals instead of ordinary gradients */
};

static const size_t rows_all[] = {1, 31, 32, 33, 100, 512, 4097};
static const size_t rows_few[] = {4097, 33, 1, 100};
static const size_t rows_hostile[] = {33, 100, 32, 31, 1, 64};
static const struct layout layouts[] = {
    {"every size", 7, 0, 7, rows_all, 0, 0, 0},
    {"stripe c0=2", 7, 2, 6, rows_all, 1, 4, 0},
    {"c0=1 odd gaps", 4, 1, 4, rows_few, 0, 3, 0},
    {"hostile", 6, 0, 6, rows_hostile, 1, 0, 1},
};

/* Column k's values: ordinary gradients of several kinds, or hostile ones. */
static void column_values(float *v, size_t n, size_t k, int hostile)
{
    for (size_t i = 0; i < n; i++) {
        float x = rnd_normal();
        if (hostile) {
            switch (k % 6) {
            case 0: v[i] = 0.0f; break;                                 /* a column of zeros */
            case 1: v[i] = i % 2 ? 3e38f * (x > 0 ? 1 : -1) : x; break; /* huge */
            case 2: v[i] = i == 5 ? FLT_MAX : x * 1e-3f; break;         /* one huge outlier */
            case 3: v[i] = x * 1e-42f; break;                           /* subnormals */
            case 4: v[i] = -FLT_MAX; break;
            default: v[i] = (float)(i % 2) * 1e30f; break;
            }
            continue;
        }
        switch (k % 5) {
        case 0: v[i] = x * 0.01f; break;
        case 1: v[i] = x + 3.0f; break; /* the mean threshold matters */
        case 2: v[i] = (float)((int)(rnd_next() % 9) - 4) * 0.25f; break; /* ties, zeros */
        case 3: v[i] = x * 1e-30f; break;
        default: v[i] = x * x * x * 100.0f; break; /* a heavy tail */
        }
    }
}

static void quantize_case(const struct layout *l, int bits, int zt, int with_r)
{
    size_t off[8], boff[8], nf = 0, nb = 0;
    for (size_t k = 0; k < l->ncols; k++) {
        off[k] = nf;
        boff[k] = nb;
        nf += l->rows[k] + 3;
        nb += quant_column_bytes(l->rows[k], bits) + l->gapb;
    }
    struct bk_columns cols = {.off = off,
                              .rows = l->rows,
                              .boff = boff,
                              .c0 = l->c0,
                              .c1 = l->c1,
                              .fbase = l->view ? off[l->c0] : 0,
                              .bbase = l->view ? boff[l->c0] : 0,
                              .bits = bits,
                              .zero_threshold = zt};
    struct twin g = {0}, r = {0}, out = {0};
    twin_rand(&g, nf, -1.0f, 1.0f); /* the gaps keep these */
    for (size_t k = 0; k < l->ncols; k++)
        column_values(g.c + off[k], l->rows[k], k + (size_t)bits, l->hostile);
    twin_set(&g, g.c);
    twin_rand(&r, nf, -1e-3f, 1e-3f);
    unsigned char *bc = malloc(nb), *bd = malloc(nb);
    ck_assert(bc && bd);
    memset(bc, 0xA5, nb);
    memset(bd, 0xA5, nb);
    size_t fv = cols.fbase, bv = cols.bbase;
    ref_bk->ops->quantize(ref_bk, &cols, g.c + fv, with_r ? r.c + fv : NULL, bc + bv);
    dev_bk->ops->quantize(dev_bk, &cols, g.d + fv, with_r ? r.d + fv : NULL, bd + bv);
    char what[96];
    snprintf(what, sizeof what, "%s, bits=%d%s, %s", l->name, bits, bits == 1 && zt ? " zt" : "",
             with_r ? "residual" : "no residual");
    check_bytes("quantize bytes", bc, bd, nb, "%s", what);
    check_bits("quantize residual", &r, "%s", what);
    check_bits("quantize input", &g, "%s: g is const", what);
    /* decode the reference's bytes on both: stored, then added */
    twin_rand(&out, nf, -1.0f, 1.0f);
    for (int acc = 0; acc < 2; acc++) {
        ref_bk->ops->unquantize(ref_bk, &cols, bc + bv, acc, out.c + fv);
        dev_bk->ops->unquantize(dev_bk, &cols, bc + bv, acc, out.d + fv);
        check_bits("unquantize", &out, "%s, accumulate=%d", what, acc);
    }
    free(bc);
    free(bd);
    twin_free(&g);
    twin_free(&r);
    twin_free(&out);
}

START_TEST(quantize_every_bits)
{
    static const int modes[][2] = {{1, 1}, {1, 0}, {2, 0},  {3, 0}, {4, 0},
                                   {5, 0}, {8, 0}, {13, 0}, {16, 0}};
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            for (int with_r = 0; with_r < 2; with_r++)
                quantize_case(&layouts[l], modes[m][0], modes[m][1], with_r);
    check_synced("quantize");
}
END_TEST

/* ---- fp16 ---- */

static int half_is_nan(uint16_t h)
{
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
}

/* Floats around every rounding case of binary16: normals, subnormals, exact ties (both
 * parities), the overflow edge, infinities, signed zeros; NaN only as a class (the
 * contract keeps NaN a quiet NaN, not its payload). */
static void half_inputs(float *x, size_t n)
{
    static const float sp[] = {
        0.0f,       -0.0f,    65504.0f,           65520.0f,           65519.99f, 1e6f,
        -1e6f,      INFINITY, -INFINITY,          5.96e-8f,           2.98e-8f,  2.99e-8f,
        6.1035e-5f, 6.09e-5f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -1e-9f,    1e-40f,
        NAN};
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)rnd_next();
        switch (i % 4) {
        case 0: x[i] = rnd_normal() * 100.0f; break;
        case 1: x[i] = rnd_normal() * 1e-5f; break; /* half subnormals */
        case 2:                                     /* a tie: 12 low bits exactly half of 2^13 */
            u = (u & 0xbfffe000u) | 0x38001000u;
            memcpy(&x[i], &u, sizeof u);
            break;
        default: x[i] = sp[(i / 4) % (sizeof sp / sizeof sp[0])]; break;
        }
    }
}

START_TEST(half_conversions)
{
    for (size_t li = 0; li < NLEN; li++) {
        size_t n = lengths[li];
        struct twin x = {0};
        twin_alloc(&x, n);
        half_inputs(x.c, n);
        twin_set(&x, x.c);
        uint16_t *hc = malloc(n * sizeof *hc), *hd = malloc(n * sizeof *hd);
        ck_assert(hc && hd);
        memset(hd, 0x5A, n * sizeof *hd);
        ref_bk->ops->half_out(ref_bk, hc, x.c, n);
        dev_bk->ops->half_out(dev_bk, hd, x.d, n);
        for (size_t i = 0; i < n; i++)
            if (half_is_nan(hc[i]) && half_is_nan(hd[i]))
                hd[i] = hc[i];
        check_bytes("half_out", hc, hd, n * sizeof *hc, "n=%zu", n);
        free(hc);
        free(hd);
        twin_free(&x);
    }
    /* every binary16 pattern back to float */
    enum { NH = 65536 };
    uint16_t *h = malloc(NH * sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < NH; i++)
        h[i] = (uint16_t)i;
    struct twin y = {0};
    twin_const(&y, NH + 3, -7.0f);
    ref_bk->ops->half_in(ref_bk, y.c + 1, h, NH);
    dev_bk->ops->half_in(dev_bk, y.d + 1, h, NH);
    float *got = twin_get(&y);
    for (size_t i = 0; i < y.n; i++) /* NaN == NaN, whatever the payload */
        if (isnan(y.c[i]) && isnan(got[i]))
            got[i] = y.c[i];
    check_bytes("half_in", y.c, got, y.n * sizeof *got, "all 65536 patterns at offset 1");
    free(got);
    free(h);
    twin_free(&y);
    check_synced("fp16");
}
END_TEST

TCase *cuda_update_tcase(void)
{
    TCase *tc = tcase_create("update");
    tcase_add_test(tc, sgd_adam_adagrad);
    tcase_add_test(tc, fsadagrad);
    tcase_add_test(tc, rmsprop);
    tcase_add_test(tc, clipping_and_l1);
    tcase_add_test(tc, sub_scaled_and_block_momentum);
    tcase_add_test(tc, quantize_every_bits);
    tcase_add_test(tc, half_conversions);
    return tc;
}
