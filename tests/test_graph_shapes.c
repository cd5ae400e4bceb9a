/* BrainScript networks, more values and shapes by hand (tests/test_graph.c runs them):
 * CNTK's random initializers' spread, RowSlice / Slice, a value per map broadcast over an
 * image, Splice of an image's maps, the array constructor. */
#include "test_graph.h"

/* CNTK's random initializers that do not scale by the fan: 'normal' N(0, s), 'uniform1'
 * U(-s, s), 'TruncNormal' N(0, s) without the values beyond 2 s (its standard deviation
 * 0.880 s), next to 'uniform' U(-0.05 s, 0.05 s). */
START_TEST(random_initializers)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(
        b,
        IO "A = Parameter (100, 100, init = 'normal', initValueScale = 0.5)\n"
           "B = Parameter (100, 100, init = 'uniform1', initValueScale = 0.5)\n"
           "C = Parameter (100, 100, init = 'TruncNormal', initValueScale = 0.5)\n"
           "D = Parameter (100, 100, init = 'uniform', initValueScale = 2)\n"
           "h = Tanh (A * Tanh (B * Tanh (C * Tanh (D * Parameter (100, 3) * features))))\n"
           "z = Parameter (4, 100) * h\n" CE("z"),
        3);
    const char *names[] = {"A", "B", "C", "D"};
    const double sd_want[] = {0.5, 0.5 / sqrt(3.0), 0.5 * 0.8796, 0.1 / sqrt(3.0)};
    const double max_want[] = {0.5 * 5.5, 0.5, 1.0, 0.1};
    const float *p = nn_params(net);
    for (int k = 0; k < 4; k++) {
        const struct nn_tensor *t = tensor_named(net, names[k]);
        ck_assert_ptr_nonnull(t);
        size_t n = (size_t)t->rows * (size_t)t->cols;
        double sum = 0, sq = 0, mx = 0;
        for (size_t i = 0; i < n; i++) {
            double x = p[t->offset + i];
            sum += x;
            sq += x * x;
            mx = fabs(x) > mx ? fabs(x) : mx;
        }
        double mean = sum / (double)n, sd = sqrt(sq / (double)n - mean * mean);
        ck_assert_msg(fabs(mean) < 0.05 * sd_want[k] + 1e-3, "%s: mean %g", names[k], mean);
        ck_assert_msg(fabs(sd / sd_want[k] - 1.0) < 0.03, "%s: sd %g, want %g", names[k], sd,
                      sd_want[k]);
        ck_assert_msg(mx <= max_want[k] + 1e-6 && mx > 0.9 * max_want[k] * (k == 0 ? 0.6 : 1.0),
                      "%s: largest |value| %g, bound %g", names[k], mx, max_want[k]);
    }
    nn_free(net);
    backend_free(b);
}
END_TEST

/* RowSlice and Slice take the rows they name: sum of squares of rows 1-2 (RowSlice (1, 2))
 * and of the last row (Slice (-1, 0)) against the same sums by hand. */
START_TEST(values_slice)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (4)\nlabels = Input (1)\n"
                                 "r = RowSlice (1, 2, features)\nl = Slice (-1, 0, features)\n"
                                 "s = ReduceSum (r .* r)\nt = ReduceSum (l .* l)\n"
                                 "criterionNodes = (s)\nevaluationNodes = (t)\n",
                                 1);
    const float x[12] = {1, 2, 3, 4, -1, 0.5f, 2, 7, 0, 0, -3, 1};
    const float y[3] = {0, 0, 0};
    struct minibatch mb = {0};
    set_input(&mb, "features", 4, 3, x);
    set_input(&mb, "labels", 1, 3, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    double want_s = 0, want_t = 0;
    for (int j = 0; j < 3; j++) {
        want_s += x[4 * j + 1] * x[4 * j + 1] + x[4 * j + 2] * x[4 * j + 2];
        want_t += x[4 * j + 3] * x[4 * j + 3];
    }
    ck_assert_msg(fabs(st.train_crit - want_s) < 1e-5, "RowSlice: %g, want %g", st.train_crit,
                  want_s);
    ck_assert_msg(fabs(st.eval_crit - want_t) < 1e-5, "Slice: %g, want %g", st.eval_crit, want_t);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* A value per map broadcast over an image (VGG's mean subtraction: a Splice of constants
 * along axis 3), and FlattenDimensions keeping the values in place: the sum of squares
 * of (x - m) over an image of 2 x 2 pixels and 3 maps, m = (1, 2, 3), against the same
 * sum by hand. */
START_TEST(values_per_map)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input {2:2:3}\nlabels = Input (1)\n"
                                 "d = features - Splice (Constant (1) : Constant (2) : "
                                 "Constant (3), axis = 3)\n"
                                 "f = FlattenDimensions (d, 1, 3)\n"
                                 "s = ReduceSum (f .* f)\ncriterionNodes = (s)\n",
                                 1);
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = 0.25f * (float)(i % 7) - 0.5f * (float)(i / 12);
    const float y[2] = {0, 0};
    struct minibatch mb = {0};
    set_input(&mb, "features", 12, 2, x);
    set_input(&mb, "labels", 1, 2, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    double want = 0;
    for (int i = 0; i < 24; i++) { /* value i: sample i / 12, map (i % 12) / 4 */
        double d = x[i] - (double)((i % 12) / 4 + 1);
        want += d * d;
    }
    ck_assert_msg(fabs(st.train_crit - want) < 1e-4, "per-map broadcast: %g, want %g",
                  st.train_crit, want);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Splice along an image's maps (axis 3): the maps joined, which the next convolution's
 * kernel sees (3 x 3 x 7 inputs: 3 + 2 maps and the 2 channels); the other axes must
 * agree; an inner axis is refused. */
START_TEST(splice_maps)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 IMGIO "a = ConvolutionalLayer {3, (3:3), pad = true} (features)\n"
                                       "p = ConvolutionalLayer {2, (1:1)} (features)\n"
                                       "j = Splice (a : p : features, axis = 3)\n"
                                       "c = ConvolutionalLayer {2, (3:3), pad = true} (j)\n"
                                       "z = LinearLayer {4} (c)\n" CE("z"),
                                 1);
    size_t nt = 0;
    const struct nn_tensor *t = nn_tensors(net, &nt);
    int found = 0;
    for (size_t i = 0; i < nt; i++)
        found |= t[i].rows == 63 && t[i].cols == 2; /* (3 x 3 x 7) x 2 */
    ck_assert_msg(found, "no 63 x 2 kernel after the splice");
    nn_free(net);
    /* numbers and Constant (v) spliced are CNTK's scalars: one row each */
    net = make_bs_net(b,
                      IO "j = Splice (1 : Constant (2) : 3)\nW = Parameter (4, Inferred)\n"
                         "z = LinearLayer {4} (features) + W * j\n" CE("z"),
                      1);
    ck_assert_int_eq(tensor_named(net, "W")->cols, 3);
    nn_free(net);
    /* array[first..last] (f): element i is f (i), indexed from first */
    net = make_bs_net(b,
                      IO "a = array[2..4] (i => i * i)\n"
                         "W = Parameter (a[3], 3)\n"
                         "z = LinearLayer {4} (W * features)\n" CE("z"),
                      1);
    ck_assert_int_eq(tensor_named(net, "W")->rows, 9);
    nn_free(net);
    backend_free(b);
    ck_assert_str_eq(bs_error_of(IO "a = array[1..3] (x => x)\nb = a[0]\n" CE("b")),
                     "g.cfg:5:7: error: index out of range: the array's indices are 1..3");
    ck_assert_str_eq(bs_error_of(IMGIO "a = MaxPoolingLayer {(2:2), stride = 2} (features)\n"
                                       "j = Splice (a : features, axis = 3)\n"
                                       "z = LinearLayer {4} (j)\n" CE("z")),
                     "g.cfg:5:5: error: Splice: operand 2 has 5 along axis 1 where the first has "
                     "2: along axis 3 the other axes must agree");
    ck_assert_str_eq(bs_error_of(IMGIO "j = Splice (features : features, axis = 1)\n"
                                       "z = LinearLayer {4} (j)\n" CE("z")),
                     "g.cfg:4:5: error: Splice: axis=1 of tensors of rank 3 is not supported, "
                     "only their last axis (or a new one)");
}
END_TEST

void graph_more_tests(TCase *tc)
{
    tcase_add_test(tc, random_initializers);
    tcase_add_test(tc, splice_maps);
    tcase_add_test(tc, values_slice);
    tcase_add_test(tc, values_per_map);
}
