/* BrainScript networks, more values and shapes by hand (tests/test_graph.c runs them):
 * CNTK's random initializers' spread, RowSlice / Slice, a value per map broadcast over an
 * image, Splice of an image's maps, the array constructor, convolution and pooling
 * shapes. */
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
    size_t np = nn_param_count(net);
    float *p = malloc(np * sizeof *p); /* device memory on a GPU: downloaded */
    struct pt_err e = {0};
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(nn_get_params(net, p, &e), 0);
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
    free(p);
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

/* ResNet's zero maps (CNTK's ImageHandsOn): Splice (image : ConstantTensor (v, (1:1:C)),
 * axis = 3) broadcasts the constant over every cell: each sample's values, then C maps of
 * v; the gradient reaches the image's own values through the splice. */
START_TEST(splice_constant_maps)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input {2:2:1}\nlabels = Input (1)\n"
                                 "j = Splice ((features : ConstantTensor (3, (1:1:2))), axis = 3)\n"
                                 "f = FlattenDimensions (j, 1, 3)\n"
                                 "s = ReduceSum (f .* f)\ncriterionNodes = (s)\n",
                                 1);
    const float x[8] = {1, 2, 3, 4, -1, 0, 0.5f, 2}, y[2] = {0, 0};
    struct minibatch mb = {0};
    set_input(&mb, "features", 4, 2, x);
    set_input(&mb, "labels", 1, 2, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    double want = 2 * 8 * 9.0; /* two samples, 2 maps x 4 cells of 3 each */
    for (int i = 0; i < 8; i++)
        want += (double)x[i] * x[i];
    ck_assert_msg(fabs(st.train_crit - want) < 1e-4, "spliced zero maps: %g, want %g",
                  st.train_crit, want);
    /* the image is 2 x 2 x 1 and the constant 1 x 1 x 2: joined 2 x 2 x 3 */
    ck_assert_str_eq(
        bs_error_of("features = Input {2:2:1}\nlabels = Input (1)\n"
                    "j = Splice ((features : ConstantTensor (0, (2:1:2))), axis = 3)\n"
                    "s = ReduceSum (FlattenDimensions (j, 1, 3))\ncriterionNodes = (s)\n"),
        "g.cfg:4:5: error: Splice: operand 2 has 1 along axis 2 where the first has 2: "
        "along axis 3 the other axes must agree");
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* CNTK's local response normalization's convolution along the maps: each map the sum of
 * the 2 n + 1 around it (zeros beyond the ends) times the kernel's value */
START_TEST(values_lrn_window)
{
    struct backend *b = make_backend();
    struct nn *net = try_bs_net(
        b, "values_lrn_window",
        "features = Input {1:1:4}\nlabels = Input (1)\n"
        "W = ParameterTensor {(1:1:3:1), learningRateMultiplier = 0, initValue = 0.5}\n"
        "y = Convolution (W, SplitDimension (features, 3, 1), (1:1:3), mapDims = 1, "
        "autoPadding = true)\n"
        "f = FlattenDimensions (y, 3, 2)\ns = ReduceSum (f .* f)\ncriterionNodes = (s)\n",
        1);
    ck_assert_ptr_nonnull(net); /* a window along the maps is no convolution: every backend */
    const float x[4] = {1, 2, 3, 4}, y[1] = {0};
    struct minibatch mb = {0};
    set_input(&mb, "features", 4, 1, x);
    set_input(&mb, "labels", 1, 1, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    const double want = 1.5 * 1.5 + 3.0 * 3.0 + 4.5 * 4.5 + 3.5 * 3.5; /* 0.5 (1+2), ... */
    ck_assert_msg(fabs(st.train_crit - want) < 1e-4, "window along the maps: %g, want %g",
                  st.train_crit, want);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
    /* a learned kernel along the maps is not built */
    const char *msg =
        bs_error_of("features = Input {1:1:4}\nlabels = Input (1)\n"
                    "W = ParameterTensor {(1:1:3:1)}\n"
                    "y = Convolution (W, features, (1:1:3), mapDims = 1)\n"
                    "s = ReduceSum (FlattenDimensions (y, 1, 3))\ncriterionNodes = (s)\n");
    ck_assert_msg(strstr(msg, "a window along the maps is built for a fixed kernel of one value"),
                  "%s", msg);
}
END_TEST

/* Splice along an image's maps (axis 3): the maps joined, which the next convolution's
 * kernel sees (3 x 3 x 7 inputs: 3 + 2 maps and the 2 channels); the other axes must
 * agree; an inner axis is refused. */
START_TEST(splice_maps)
{
    struct backend *b = make_backend();
    if (conv_not_here(b, "splice_maps"))
        return;
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

/* Convolution and pooling shapes as CNTK's ConvolveGeometry gives them (the kernels'
 * Inferred channels, the dense layer's inferred input: every output's cells), and the
 * errors that name what is wrong. */
START_TEST(convolution_shapes)
{
    struct backend *b = make_backend();
    if (conv_not_here(b, "convolution_shapes"))
        return;
    /* CNTK's ConvNet_MNIST: 28 -> 28 (5 x 5, pad) -> 13 (3 x 3, stride 2) -> 11 (3 x 3) -> 5
     * -> 3 */
    struct nn *net =
        make_bs_net(b,
                    "features = Input {28:28:1}\nlabels = Input (10)\n"
                    "c1 = ConvolutionalLayer {32, (5:5), pad = true} (features)\n"
                    "p1 = MaxPoolingLayer {(3:3), stride = (2:2)} (ReLU (c1))\n"
                    "c2 = ConvolutionalLayer {48, (3:3), pad = false} (p1)\n"
                    "p2 = MaxPoolingLayer {(3:3), stride = (2:2)} (ReLU (c2))\n"
                    "c3 = ConvolutionalLayer {64, (3:3)} (p2)\n"
                    "d = DenseLayer {96} (ReLU (c3))\nz = LinearLayer {10} (d)\n" CE("z"),
                    1);
    static const struct {
        const char *name;
        int rows, cols;
    } want[] = {{"c1.W", 25, 32},  {"c1.b", 32, 1},  {"c2.W", 288, 48},
                {"c3.W", 432, 64}, {"d.W", 96, 576}, {"z.W", 10, 96}};
    for (size_t i = 0; i < COUNT(want); i++) {
        const struct nn_tensor *t = tensor_named(net, want[i].name);
        ck_assert_msg(t, "no tensor %s", want[i].name);
        ck_assert_msg(t->rows == want[i].rows && t->cols == want[i].cols, "%s: %d x %d",
                      want[i].name, t->rows, t->cols);
    }
    nn_free(net);
    /* autoPadding with strides: ceil (7 / 2) x ceil (5 / 2); pooling keeps the channels */
    net = make_bs_net(b,
                      "features = Input {7:5:3}\nlabels = Input (4)\n"
                      "c = ConvolutionalLayer {2, (3:3), pad = true, stride = 2} (features)\n"
                      "p = AveragePoolingLayer {(2:2), pad = true} (features)\n"
                      "z = LinearLayer {4} (c) + LinearLayer {4} (p)\n" CE("z"),
                      1);
    ck_assert_int_eq(tensor_named(net, "c.W")->rows, 27);
    ck_assert_int_eq(tensor_named(net, "z.W")->cols, 4 * 3 * 2);
    ck_assert_int_eq(tensor_named(net, "_z.W")->cols, 7 * 5 * 3);
    nn_free(net);
    backend_free(b);
    const char *msg = bs_error_of(
        IO "c = ConvolutionalLayer {2, (3:3)} (features)\nz = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:4:5:") && strstr(msg, "must be an image") &&
                      strstr(msg, "a vector of 3 values"),
                  "%s", msg);
    msg = bs_error_of(IMGIO "c = ConvolutionalLayer {2, (5:5)} (features)\n"
                            "z = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "the window (5 cells along y) is larger than the input (4)"), "%s",
                  msg);
    msg = bs_error_of(IMGIO "c = ConvolutionalLayer {2, (3:3:3)} (features)\n"
                            "z = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "a window of 3 along the channels, of an input of 2 (a "
                              "convolution across the maps"),
                  "%s", msg);
    msg = bs_error_of(IMGIO
                      "p = Pooling (features, \"min\", (2:2))\nz = LinearLayer {4} (p)\n" CE("z"));
    ck_assert_msg(strstr(msg, "poolKind must be \"max\" or \"average\""), "%s", msg);
    msg = bs_error_of(IMGIO "c = ConvolutionalLayer {2, (3:3), stride = 0} (features)\n"
                            "z = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "ConvolutionalLayer stride: expected 1 to 4096, got 0"), "%s", msg);
    /* the primitive Convolution's kernel must fit its window; a reshape its values */
    msg = bs_error_of(IMGIO "W = Parameter (4, 10)\nc = Convolution (W, features, (3:3:2))\n"
                            "z = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "Convolution: the kernel has 10 values per map, the window 3 x 3 x "
                              "2 cells"),
                  "%s", msg);
    msg = bs_error_of(IMGIO "W = Parameter (4, 18)\nc = Convolution (W, features, (3:3:2), "
                            "mapDims = 5)\nz = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "Convolution: mapDims is 5, the kernel has 4 maps"), "%s", msg);
    msg = bs_error_of(IMGIO "r = ReshapeDimension (features, 1, (3:0))\n"
                            "z = LinearLayer {4} (r)\n" CE("z"));
    ck_assert_msg(strstr(msg, "ReshapeDimension: the input's 40 values do not fit the new shape"),
                  "%s", msg);
    msg = bs_error_of(IMGIO "b = ParameterTensor ((1:1:3))\n"
                            "z = LinearLayer {4} (features + b)\n" CE("z"));
    ck_assert_msg(strstr(msg, "Plus: a value for each of 3 maps, applied to an image of 5 x 4 x 2"),
                  "%s", msg);
    /* every name of CNTK.core.bs that is not built is refused as such, not as unknown */
    const char *cntk[] = {"ReduceProd", "ELU", "LeakyReLU", "GatherPacked"};
    for (size_t i = 0; i < sizeof cntk / sizeof *cntk; i++) {
        char body[256], expect_msg[128];
        snprintf(body, sizeof body, IO "h = %s (features)\nz = LinearLayer {4} (h)\n" CE("z"),
                 cntk[i]);
        snprintf(expect_msg, sizeof expect_msg,
                 "g.cfg:4:5: error: %s is not supported yet by partrain's", cntk[i]);
        msg = bs_error_of(body);
        ck_assert_msg(strstr(msg, expect_msg), "%s", msg);
    }
    ck_assert_str_eq(bs_error_of(IO "h = Flaten (features)\nz = LinearLayer {4} (h)\n" CE("z")),
                     "g.cfg:4:5: error: unknown name 'Flaten'");
    /* a function of CNTK.core.bs called short of an argument names where it is defined */
    msg = bs_error_of(IO "h = DiagTimes (features)\nz = LinearLayer {4} (h)\n" CE("z"));
    ck_assert_msg(strstr(msg,
                         "g.cfg:4:5: error: missing positional argument 'matrix' (the function "
                         "is defined at CNTK.core.bs (built into partrain):"),
                  "%s", msg);
    /* Slice's indices inside the input, a tensor or another axis refused */
    msg = bs_error_of(IO "z = LinearLayer {4} (Slice (1, 5, features))\n" CE("z"));
    ck_assert_msg(strstr(msg, "Slice: rows [1, 5) are not inside the input's 3 rows"), "%s", msg);
    msg = bs_error_of(IO "z = LinearLayer {4} (Slice (0, 2, features, axis = -1))\n" CE("z"));
    ck_assert_msg(strstr(msg, "only axis=1 (the rows of a vector) is supported"), "%s", msg);
    msg = bs_error_of(IMGIO "z = LinearLayer {4} (RowSlice (0, 2, features))\n" CE("z"));
    ck_assert_msg(strstr(msg, "slicing a tensor of rank 3 is not supported"), "%s", msg);
    /* inside partrain's CNTK.core.bs, errors name the user's call that led there */
    ck_assert_str_eq(bs_error_of(IO "s = Parameter (2, 1)\nz = Scale (s, features)\n" CE("z")),
                     "g.cfg:5:5: error: ElementTimes: operands of shapes [2 x 1] and [3 x "
                     "samples]: the rows must be equal");
    msg = bs_error_of(IO "z = Sign (LinearLayer {4} (features))\n" CE("z"));
    ck_assert_msg(strstr(msg, "if: expected a boolean condition, got a node") &&
                      strstr(msg, "; called at g.cfg:4:5"),
                  "%s", msg);

    /* a window whose cells would not fit an int (found by a stress run under UBSan) */
    msg = bs_error_of(IMGIO "c = ConvolutionalLayer {2, 100000} (features)\n"
                            "z = LinearLayer {4} (c)\n" CE("z"));
    ck_assert_msg(strstr(msg, "ConvolutionalLayer filterShape: expected 1 to 4096, got 100000"),
                  "%s", msg);
}
END_TEST

void graph_more_tests(TCase *tc)
{
    tcase_add_test(tc, random_initializers);
    tcase_add_test(tc, splice_maps);
    tcase_add_test(tc, splice_constant_maps);
    tcase_add_test(tc, values_lrn_window);
    tcase_add_test(tc, values_slice);
    tcase_add_test(tc, values_per_map);
    tcase_add_test(tc, convolution_shapes);
}
