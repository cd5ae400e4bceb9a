/* tests/test_cuda_ops: the node graph's ops (ewise, mask_cols, copy2d, axpy2d, softmax and
 * its gradient, hardmax), the criteria and the LSTM step, device against CPU (see test_cuda_ops.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_cuda_ops.h"

static const int shapes[][2] = {{1, 1}, {13, 40}, {256, 7}, {10, 300}, {1, 1000}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* ---- ewise ---- */

static const char *const ew_names[BK_EW_COUNT] = {
    "add",       "sub",        "mul", "div", "less",  "equal", "greater", "greater_equal",
    "not_equal", "less_equal", "max", "min", "exp",   "log",   "sqrt",    "abs",
    "sign",      "recip",      "sin", "cos", "floor", "asin",  "acos",    "dasin"};

/* Inputs in each op's domain: log of positive values, exp without overflow, division by
 * values away from 0. */
static void ew_inputs(enum bk_ew op, struct twin *a, struct twin *b, size_t n, size_t nb)
{
    if (op == BK_EW_LOG)
        twin_rand(a, n, 0.001f, 100.0f);
    else if (op == BK_EW_EXP)
        twin_rand(a, n, -20.0f, 20.0f);
    else if (op == BK_EW_ASIN || op == BK_EW_ACOS || op == BK_EW_DASIN)
        twin_rand(a, n, -0.95f, 0.95f);
    else
        twin_rand(a, n, -5.0f, 5.0f);
    twin_rand(b, nb, 0.5f, 2.0f);
    for (size_t i = 0; i < nb; i += 2) /* half of them negative */
        b->c[i] = -b->c[i];
    twin_set(b, b->c);
}

START_TEST(ewise_all_ops)
{
    for (int op = 0; op < BK_EW_COUNT; op++)
        for (size_t s = 0; s < NSHAPES; s++)
            for (int bcast = 0; bcast < 2; bcast++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    int rows = shapes[s][0];
                    size_t cols = (size_t)shapes[s][1], bcols = bcast ? 1 : cols;
                    size_t n = (size_t)rows * cols;
                    struct twin a = {0}, b = {0}, y = {0};
                    ew_inputs(op, &a, &b, n, (size_t)rows * bcols);
                    struct twin *out = &a;
                    if (!in_place) {
                        twin_const(&y, n, NAN);
                        out = &y;
                    }
                    ref_bk->ops->ewise(ref_bk, op, out->c, a.c, b.c, rows, cols, bcols);
                    dev_bk->ops->ewise(dev_bk, op, out->d, a.d, b.d, rows, cols, bcols);
                    check_near("ewise", out, NULL, TOL, "%s %dx%zu bcols=%zu%s", ew_names[op], rows,
                               cols, bcols, in_place ? " in place" : "");
                    twin_free(&a);
                    twin_free(&b);
                    twin_free(&y);
                }
    check_synced("ewise");
}
END_TEST

/* ---- padding, splicing ---- */

/* mask[j] = 0 for every third column (and for a single column), else 1. */
static void pad_mask(struct twin *m, size_t cols)
{
    twin_alloc(m, cols);
    for (size_t j = 0; j < cols; j++)
        m->c[j] = cols == 1 || j % 3 == 1 ? 0.0f : 1.0f;
    twin_set(m, m->c);
}

START_TEST(mask_cols_copy2d_axpy2d)
{
    for (size_t s = 0; s < NSHAPES; s++) {
        int rows = shapes[s][0];
        size_t cols = (size_t)shapes[s][1], n = (size_t)rows * cols;
        struct twin x = {0}, mask = {0};
        twin_rand(&x, n, -2.0f, 2.0f);
        pad_mask(&mask, cols);
        for (size_t j = 0; j < cols; j++) /* padding may hold inf or NaN */
            if (mask.c[j] == 0.0f)
                x.c[j * (size_t)rows] = j % 2 ? NAN : -INFINITY;
        twin_set(&x, x.c);
        ref_bk->ops->mask_cols(ref_bk, x.c, rows, cols, mask.c);
        dev_bk->ops->mask_cols(dev_bk, x.d, rows, cols, mask.d);
        check_bits("mask_cols", &x, "%dx%zu", rows, cols);
        /* a block of rows x cols between matrices of leading dimensions ldd and lds: the
         * gaps of dst must stay as they were */
        int ldd = rows + 5, lds = rows + 2;
        struct twin dst = {0}, src = {0};
        twin_rand(&dst, (size_t)ldd * cols, -1.0f, 1.0f);
        twin_rand(&src, (size_t)lds * cols, -1.0f, 1.0f);
        ref_bk->ops->copy2d(ref_bk, dst.c + 1, ldd, src.c, lds, rows, cols);
        dev_bk->ops->copy2d(dev_bk, dst.d + 1, ldd, src.d, lds, rows, cols);
        check_bits("copy2d", &dst, "%dx%zu ldd=%d lds=%d at row 1", rows, cols, ldd, lds);
        double *mag = malloc(dst.n * sizeof *mag);
        ck_assert_ptr_nonnull(mag);
        static const float as[] = {1.0f, -0.3f};
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < dst.n; i++) {
                size_t r = i % (size_t)ldd, j = i / (size_t)ldd;
                mag[i] = r >= 1 && r <= (size_t)rows
                             ? fabs(dst.c[i]) + fabs(as[k] * src.c[r - 1 + j * (size_t)lds])
                             : -1.0;
            }
            ref_bk->ops->axpy2d(ref_bk, dst.c + 1, ldd, src.c, lds, rows, cols, as[k]);
            dev_bk->ops->axpy2d(dev_bk, dst.d + 1, ldd, src.d, lds, rows, cols, as[k]);
            check_near("axpy2d", &dst, mag, TOL, "%dx%zu ldd=%d lds=%d a=%g", rows, cols, ldd, lds,
                       (double)as[k]);
        }
        free(mag);
        twin_free(&x);
        twin_free(&mask);
        twin_free(&dst);
        twin_free(&src);
    }
    check_synced("splice");
}
END_TEST

START_TEST(softmax_and_gradient)
{
    static const int sm[][2] = {{1, 1}, {10, 64}, {257, 3}, {2, 500}};
    for (size_t s = 0; s < sizeof sm / sizeof sm[0]; s++) {
        int rows = sm[s][0];
        size_t cols = (size_t)sm[s][1], n = (size_t)rows * cols;
        struct twin x = {0}, y = {0}, dy = {0}, dx = {0};
        twin_alloc(&x, n);
        for (size_t i = 0; i < n; i++)
            x.c[i] = 5.0f * rnd_normal() + (i % 7 == 0 ? 60.0f : 0.0f);
        twin_set(&x, x.c);
        twin_const(&y, n, NAN);
        ref_bk->ops->softmax(ref_bk, y.c, x.c, rows, cols);
        dev_bk->ops->softmax(dev_bk, y.d, x.d, rows, cols);
        check_near("softmax", &y, NULL, TOL, "%dx%zu", rows, cols);
        twin_sync_from_ref(&y);
        twin_rand(&dy, n, -1.0f, 1.0f);
        twin_const(&dx, n, NAN);
        ref_bk->ops->softmax_grad(ref_bk, dx.c, dy.c, y.c, rows, cols);
        dev_bk->ops->softmax_grad(dev_bk, dx.d, dy.d, y.d, rows, cols);
        check_near("softmax_grad", &dx, NULL, TOL, "%dx%zu", rows, cols);
        twin_free(&x);
        twin_free(&y);
        twin_free(&dy);
        twin_free(&dx);
    }
    check_synced("softmax");
}
END_TEST

/* Hardmax: small integers (so that maxima tie: the first one wins), a NaN in some columns
 * (the first NaN wins), the rows split across a warp's lanes. */
START_TEST(hardmax_ties_and_nans)
{
    static const int sh[][2] = {{1, 1}, {3, 50}, {127, 40}, {70, 9}};
    for (size_t s = 0; s < sizeof sh / sizeof sh[0]; s++) {
        int rows = sh[s][0];
        size_t cols = (size_t)sh[s][1], n = (size_t)rows * cols;
        struct twin x = {0}, y = {0};
        twin_alloc(&x, n);
        for (size_t i = 0; i < n; i++)
            x.c[i] = (float)(rnd_next() % 4) - 2.0f;
        for (size_t j = 0; j < cols; j += 3)
            x.c[j * (size_t)rows + rnd_next() % (uint64_t)rows] = NAN;
        twin_set(&x, x.c);
        twin_const(&y, n, -7.0f);
        ref_bk->ops->hardmax(ref_bk, y.c, x.c, rows, cols);
        dev_bk->ops->hardmax(dev_bk, y.d, x.d, rows, cols);
        check_bits("hardmax", &y, "%dx%zu", rows, cols);
        twin_free(&x);
        twin_free(&y);
    }
    check_synced("hardmax");
}
END_TEST

/* ---- criteria ---- */

static const char *const crit_names[BK_CRIT_COUNT] = {"ce_softmax", "square_err", "class_err",
                                                      "logistic", "sum"};

/* z and y of one criterion case; `soft`: targets that are not one-hot. Classification
 * error gets small integers in both, so that maxima tie (the first one wins). */
static void crit_inputs(enum bk_crit_kind kind, float *z, float *y, int rows, size_t cols, int soft)
{
    for (size_t j = 0; j < cols; j++) {
        float *zj = z + j * (size_t)rows, *yj = y + j * (size_t)rows;
        int label = (int)(rnd_next() % (uint64_t)rows);
        for (int i = 0; i < rows; i++) {
            switch (kind) {
            case BK_CRIT_CLASS_ERR:
                zj[i] = (float)(rnd_next() % 3);
                yj[i] = soft ? (float)(rnd_next() % 2) : (float)(i == label);
                break;
            case BK_CRIT_LOGISTIC: {
                static const float edge[] = {0.0f, 1.0f, 1e-9f, 1.0f - 1e-8f, -0.5f, 1.5f};
                zj[i] = (i + j) % 5 == 0 ? edge[(i + j) % 6] : rnd_range(0.0f, 1.0f);
                yj[i] = soft ? rnd_range(0.0f, 1.0f) : (float)(rnd_next() % 2);
                break;
            }
            default:
                zj[i] = 3.0f * rnd_normal();
                yj[i] = soft ? rnd_range(0.0f, 1.0f) : (float)(i == label);
                break;
            }
        }
    }
}

static void criterion_case(enum bk_crit_kind kind, int rows, size_t cols, int masked, int grad,
                           int soft, int top_n)
{
    size_t n = (size_t)rows * cols;
    struct twin z = {0}, y = {0}, mask = {0}, g = {0}, sum = {0};
    twin_alloc(&z, n);
    twin_alloc(&y, n);
    crit_inputs(kind, z.c, y.c, rows, cols, soft);
    twin_set(&z, z.c);
    twin_set(&y, y.c);
    if (masked)
        pad_mask(&mask, cols);
    twin_const(&g, n, NAN); /* written (0 in padding), except by class_err */
    twin_const(&sum, 2, NAN);
    struct bk_crit rc = {.rows = rows,
                         .cols = cols,
                         .z = z.c,
                         .y = y.c,
                         .mask = mask.c,
                         .grad = grad ? g.c : NULL,
                         .sum = sum.c,
                         .top_n = top_n};
    struct bk_crit dc = {.rows = rows,
                         .cols = cols,
                         .z = z.d,
                         .y = y.d,
                         .mask = mask.d,
                         .grad = grad ? g.d : NULL,
                         .sum = sum.d,
                         .top_n = top_n};
    ref_bk->ops->criterion(ref_bk, kind, &rc);
    dev_bk->ops->criterion(dev_bk, kind, &dc);
    float *got = twin_get(&sum);
    check_scalar("criterion sum", (double)sum.c[0] + sum.c[1], (double)got[0] + got[1], 1e-6, 1e-6,
                 "%s %dx%zu%s%s%s top_n %d", crit_names[kind], rows, cols, masked ? " masked" : "",
                 grad ? " with grad" : "", soft ? " soft targets" : "", top_n);
    free(got);
    if (grad && kind == BK_CRIT_CLASS_ERR)
        check_bits("criterion grad", &g, "class_err leaves grad alone");
    else if (grad)
        check_near("criterion grad", &g, NULL, TOL, "%s %dx%zu%s%s", crit_names[kind], rows, cols,
                   masked ? " masked" : "", soft ? " soft targets" : "");
    twin_free(&z);
    twin_free(&y);
    twin_free(&mask);
    twin_free(&g);
    twin_free(&sum);
}

START_TEST(criteria_every_kind)
{
    static const int cs[][2] = {{1, 1}, {10, 1}, {10, 7}, {33, 300}, {10, 1024}};
    for (int kind = 0; kind < BK_CRIT_COUNT; kind++)
        for (size_t s = 0; s < sizeof cs / sizeof cs[0]; s++)
            for (int v = 0; v < 8; v++)
                criterion_case(kind, cs[s][0], (size_t)cs[s][1], v & 1, v >> 1 & 1, v >> 2 & 1, 0);
    /* top-N classification error (small integers: ties, the first of equal ones first) */
    for (size_t s = 0; s < sizeof cs / sizeof cs[0]; s++)
        for (int top = 2; top <= 11; top += 3)
            for (int v = 0; v < 2; v++)
                criterion_case(BK_CRIT_CLASS_ERR, cs[s][0], (size_t)cs[s][1], v, 0, 0, top);
    check_synced("criterion");
}
END_TEST

/* ---- LSTM step ---- */

/* The buffers of one step (struct bk_lstm_fwd, struct bk_lstm_bwd) on both backends. */
struct lstm_bufs {
    int hid;
    size_t n;
    struct twin gates, bias, cp, hp, c, h, tc, peep, mask, dh, dc, dhp, dg, db, dp;
};

static float *side(const struct twin *t, int dev)
{
    return dev ? t->d : t->c;
}

static void lstm_forward_on(const struct lstm_bufs *l, int dev)
{
    struct bk_lstm_fwd s = {.hidden = l->hid,
                            .n = l->n,
                            .gates = side(&l->gates, dev),
                            .bias = side(&l->bias, dev),
                            .c_prev = side(&l->cp, dev),
                            .h_prev = side(&l->hp, dev),
                            .c = side(&l->c, dev),
                            .h = side(&l->h, dev),
                            .tanh_c = side(&l->tc, dev),
                            .peep = side(&l->peep, dev),
                            .mask = side(&l->mask, dev)};
    struct backend *b = dev ? dev_bk : ref_bk;
    b->ops->lstm_forward(b, &s);
}

static void lstm_backward_on(const struct lstm_bufs *l, int with_dh_prev, int dev)
{
    struct bk_lstm_bwd s = {.hidden = l->hid,
                            .n = l->n,
                            .gates = side(&l->gates, dev),
                            .c_prev = side(&l->cp, dev),
                            .c = side(&l->c, dev),
                            .tanh_c = side(&l->tc, dev),
                            .peep = side(&l->peep, dev),
                            .mask = side(&l->mask, dev),
                            .dh = side(&l->dh, dev),
                            .dc = side(&l->dc, dev),
                            .dh_prev = with_dh_prev ? side(&l->dhp, dev) : NULL,
                            .dgates = side(&l->dg, dev),
                            .dbias = side(&l->db, dev),
                            .dpeep = side(&l->dp, dev)};
    struct backend *b = dev ? dev_bk : ref_bk;
    b->ops->lstm_backward(b, &s);
}

/* Magnitudes of the bias and peephole sums (the step's terms plus what they held), from
 * the reference's gate gradients. */
static void lstm_sum_magnitudes(const struct lstm_bufs *l, const float *db0, const float *dp0,
                                double *mb, double *mp)
{
    size_t hid = (size_t)l->hid, h4 = 4 * hid;
    for (size_t k = 0; k < h4; k++)
        mb[k] = fabs(db0[k]);
    for (size_t k = 0; k < 3 * hid; k++)
        mp[k] = fabs(dp0[k]);
    for (size_t j = 0; j < l->n; j++) {
        if (l->mask.c && l->mask.c[j] == 0.0f)
            continue;
        const float *g = l->dg.c + j * h4;
        for (size_t k = 0; k < h4; k++)
            mb[k] += fabs(g[k]);
        for (size_t k = 0; k < hid; k++) {
            size_t at = j * hid + k;
            mp[k] += fabs((double)g[k] * l->cp.c[at]);
            mp[hid + k] += fabs((double)g[hid + k] * l->cp.c[at]);
            mp[2 * hid + k] += fabs((double)g[2 * hid + k] * l->c.c[at]);
        }
    }
}

static void lstm_case(int hid, size_t n, int masked, int with_dh_prev)
{
    size_t hn = (size_t)hid * n, h4 = 4 * (size_t)hid, h3 = 3 * (size_t)hid;
    struct lstm_bufs l = {.hid = hid, .n = n};
    twin_rand(&l.gates, 4 * hn, -3.0f, 3.0f);
    twin_rand(&l.bias, h4, -1.0f, 1.0f);
    twin_rand(&l.cp, hn, -2.0f, 2.0f);
    twin_rand(&l.hp, hn, -1.0f, 1.0f);
    twin_rand(&l.peep, h3, -0.5f, 0.5f);
    twin_const(&l.c, hn, 7.0f); /* written; the reference leaves tanh_c of padding alone */
    twin_const(&l.h, hn, 7.0f);
    twin_const(&l.tc, hn, 7.0f);
    if (masked)
        pad_mask(&l.mask, n);
    lstm_forward_on(&l, 0);
    lstm_forward_on(&l, 1);
    const char *m = masked ? " masked" : "";
    check_near("lstm_forward", &l.gates, NULL, TOL, "gates H=%d n=%zu%s", hid, n, m);
    check_near("lstm_forward", &l.c, NULL, TOL, "c H=%d n=%zu%s", hid, n, m);
    check_near("lstm_forward", &l.h, NULL, TOL, "h H=%d n=%zu%s", hid, n, m);
    check_near("lstm_forward", &l.tc, NULL, TOL, "tanh_c H=%d n=%zu%s", hid, n, m);

    /* backward from the reference's forward results, on both */
    twin_sync_from_ref(&l.gates);
    twin_sync_from_ref(&l.c);
    twin_sync_from_ref(&l.tc);
    twin_rand(&l.dh, hn, -1.0f, 1.0f);
    twin_rand(&l.dc, hn, -1.0f, 1.0f);
    twin_rand(&l.dhp, hn, -1.0f, 1.0f);
    twin_const(&l.dg, 4 * hn, NAN); /* written everywhere (0 in padding) */
    twin_rand(&l.db, h4, -1.0f, 1.0f);
    twin_rand(&l.dp, h3, -1.0f, 1.0f);
    float *db0 = malloc(h4 * sizeof *db0), *dp0 = malloc(h3 * sizeof *dp0);
    double *mb = malloc(h4 * sizeof *mb), *mp = malloc(h3 * sizeof *mp);
    ck_assert(db0 && dp0 && mb && mp);
    memcpy(db0, l.db.c, h4 * sizeof *db0);
    memcpy(dp0, l.dp.c, h3 * sizeof *dp0);
    lstm_backward_on(&l, with_dh_prev, 0);
    lstm_backward_on(&l, with_dh_prev, 1);
    lstm_sum_magnitudes(&l, db0, dp0, mb, mp);
    const char *d = with_dh_prev ? "" : " dh_prev NULL";
    check_near("lstm_backward", &l.dg, NULL, TOL, "dgates H=%d n=%zu%s%s", hid, n, m, d);
    check_near("lstm_backward", &l.dc, NULL, TOL, "dc H=%d n=%zu%s%s", hid, n, m, d);
    check_near("lstm_backward", &l.dhp, NULL, TOL, "dh_prev H=%d n=%zu%s%s", hid, n, m, d);
    check_near("lstm_backward", &l.db, mb, TOL, "dbias H=%d n=%zu%s%s", hid, n, m, d);
    check_near("lstm_backward", &l.dp, mp, TOL, "dpeep H=%d n=%zu%s%s", hid, n, m, d);
    free(db0);
    free(dp0);
    free(mb);
    free(mp);
    struct twin *all[] = {&l.gates, &l.bias, &l.cp, &l.hp,  &l.c,  &l.h,  &l.tc, &l.peep,
                          &l.mask,  &l.dh,   &l.dc, &l.dhp, &l.dg, &l.db, &l.dp};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        twin_free(all[k]);
}

START_TEST(lstm_steps)
{
    static const int hs[] = {1, 5, 128};
    static const size_t ns[] = {1, 3, 64};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int v = 0; v < 4; v++)
                lstm_case(hs[a], ns[b], v & 1, v >> 1);
    check_synced("lstm");
}
END_TEST

TCase *cuda_nn_tcase(void)
{
    TCase *tc = tcase_create("nn");
    tcase_add_test(tc, ewise_all_ops);
    tcase_add_test(tc, mask_cols_copy2d_axpy2d);
    tcase_add_test(tc, softmax_and_gradient);
    tcase_add_test(tc, hardmax_ties_and_nans);
    tcase_add_test(tc, criteria_every_kind);
    tcase_add_test(tc, lstm_steps);
    return tc;
}
