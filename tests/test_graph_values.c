/* BrainScript networks' forward values computed by hand (sigmoid, square error, logistic,
 * softmax with cross entropy and error counts, element-wise nodes), shape inference, and
 * the errors that name FILE:LINE:COL; part of tests/test_graph (test_graph.h). */
#include <math.h>

#include "test_graph.h"

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* out = W x + b for column-major W (rows x cols). */
static void affine(const float *w, const float *bias, const float *x, int rows, int cols,
                   double *out)
{
    for (int i = 0; i < rows; i++) {
        out[i] = bias ? bias[i] : 0.0;
        for (int j = 0; j < cols; j++)
            out[i] += (double)w[j * rows + i] * x[j];
    }
}

/* CNTK's HelloWorld network: Times + Plus + Sigmoid, SquareError and Logistic sums. */
START_TEST(values_sigmoid_square_logistic)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (3)\nlabels = Input (2)\n"
                                 "W = Parameter (2, 3)\nb = Parameter (2, 1)\n"
                                 "p = Sigmoid (W * features + b)\n"
                                 "se = SquareError (labels, p)\nlr = Logistic (labels, p)\n"
                                 "criterionNodes = (se)\nevaluationNodes = (lr)\n"
                                 "outputNodes = (p)\n",
                                 5);
    static const float w[6] = {0.1f, 0.4f, -0.2f, 0.5f, 0.3f, -0.6f}, bias[2] = {0.05f, -0.1f};
    static const float x[9] = {1, 0, -1, 0.5f, 0.5f, 0.5f, -1, 2, 0};
    static const float y[6] = {1, 0, 0, 1, 1, 1};
    ck_assert_uint_eq(nn_param_count(net), 8);
    set_tensor(net, "W", w);
    set_tensor(net, "b", bias);
    struct minibatch mb = {0};
    set_input(&mb, "features", 3, 3, x);
    set_input(&mb, "labels", 2, 3, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[6];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 6, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows, 2);
    ck_assert_uint_eq(cols, 3);
    double se = 0, lr = 0;
    for (int j = 0; j < 3; j++) {
        double z[2];
        affine(w, bias, x + 3 * j, 2, 3, z);
        for (int i = 0; i < 2; i++) {
            double p = sigmoid(z[i]), t = y[2 * j + i];
            ck_assert_msg(fabs(out[2 * j + i] - p) < 1e-6, "p[%d,%d] %g want %g", i, j,
                          out[2 * j + i], p);
            se += (p - t) * (p - t);
            lr -= t * log(p) + (1 - t) * log(1 - p);
        }
    }
    ck_assert_uint_eq(st.samples, 3);
    ck_assert_msg(fabs(st.train_crit - se) < 1e-6 * se, "SquareError %.9g want %.9g", st.train_crit,
                  se);
    ck_assert_msg(fabs(st.eval_crit - lr) < 1e-6 * lr, "Logistic %.9g want %.9g", st.eval_crit, lr);
    /* the gradient of SquareError by hand: dW = sum_j 2 (p - y) p (1 - p) x^T */
    float g[8];
    double want[8] = {0};
    ck_assert_int_eq(nn_train_step(net, &mb, 0.0f, &st, &e), 0);
    ck_assert_int_eq(nn_get_grads(net, g, &e), 0);
    for (int j = 0; j < 3; j++) {
        double z[2];
        affine(w, bias, x + 3 * j, 2, 3, z);
        for (int i = 0; i < 2; i++) {
            double p = sigmoid(z[i]), d = 2 * (p - y[2 * j + i]) * p * (1 - p);
            for (int k = 0; k < 3; k++)
                want[tensor_named(net, "W")->offset + (size_t)(k * 2 + i)] += d * x[3 * j + k];
            want[tensor_named(net, "b")->offset + (size_t)i] += d;
        }
    }
    for (int k = 0; k < 8; k++)
        ck_assert_msg(fabs(g[k] - want[k]) < 1e-6, "grad %d: %g want %g", k, g[k], want[k]);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Softmax, CrossEntropyWithSoftmax's sum and ClassificationError's count. */
START_TEST(values_softmax_ce_errors)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (2)\nlabels = Input (3)\n"
                                 "W = Parameter (3, 2)\nb = Parameter (3)\n"
                                 "z = W * features + b\ns = Softmax (z)\n"
                                 "ce = CrossEntropyWithSoftmax (labels, z)\n"
                                 "errs = ClassificationError (labels, z)\n"
                                 "criterionNodes = (ce)\nevaluationNodes = (errs)\n"
                                 "outputNodes = (s)\n",
                                 5);
    /* z = (x1, x2, -x1 - x2): predictions 0, 1, 2, 1, 0 against labels 0, 1, 0, 2, 0 */
    static const float w[6] = {1, 0, -1, 0, 1, -1}, bias[3] = {0, 0, 0};
    static const float x[10] = {2, 1, 0, 3, -1, -1, 1, 2, 3, 0};
    static const int truth[5] = {0, 1, 0, 2, 0};
    float y[15] = {0};
    for (int j = 0; j < 5; j++)
        y[3 * j + truth[j]] = 1;
    set_tensor(net, "W", w);
    set_tensor(net, "b", bias);
    struct minibatch mb = {0};
    set_input(&mb, "features", 2, 5, x);
    set_input(&mb, "labels", 3, 5, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[15];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 15, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows, 3);
    ck_assert_uint_eq(cols, 5);
    double ce = 0;
    for (int j = 0; j < 5; j++) {
        double z[3], s = 0;
        affine(w, bias, x + 2 * j, 3, 2, z);
        for (int i = 0; i < 3; i++)
            s += exp(z[i]);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(fabs(out[3 * j + i] - exp(z[i]) / s) < 1e-6, "softmax[%d,%d] %g want %g",
                          i, j, out[3 * j + i], exp(z[i]) / s);
        ce += log(s) - z[truth[j]];
    }
    ck_assert_msg(fabs(st.train_crit - ce) < 1e-6 * ce, "CE %.9g want %.9g", st.train_crit, ce);
    ck_assert(st.eval_crit == 2.0); /* samples 2 and 3 */
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* The element-wise nodes forward: Exp, ElementTimes, ReLU, Log, Sigmoid, Negate, Tanh,
 * Minus and Plus with broadcast columns and constants. */
START_TEST(values_elementwise)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (2)\nlabels = Input (2)\n"
                                 "W = Parameter (2, 2)\nb = Parameter (2)\nc = Parameter (2)\n"
                                 "h = W * features + b\n"
                                 "o = Exp (h) .* c - ReLU (h) + Log (Sigmoid (h)) - "
                                 "Negate (Tanh (h)) + (1 - h) .* 0.5 + Sqrt (Exp (h)) + Abs (h)"
                                 " - 1 / (2 + Abs (h)) + ElementDivide (h, c) + h / Exp (h)\n"
                                 "se = SquareError (labels, o)\ncriterionNodes = (se)\n"
                                 "outputNodes = (o)\n",
                                 5);
    static const float w[4] = {0.5f, -1, 0.25f, 2}, bias[2] = {0.1f, -0.3f}, c[2] = {0.5f, -2};
    static const float x[8] = {1, 0, -1, 0.5f, 0.3f, -0.7f, 2, 1};
    static const float y[8] = {1, 2, 3, 4, -1, -2, 0, 0.5f};
    set_tensor(net, "W", w);
    set_tensor(net, "b", bias);
    set_tensor(net, "c", c);
    struct minibatch mb = {0};
    set_input(&mb, "features", 2, 4, x);
    set_input(&mb, "labels", 2, 4, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[8];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 8, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows * cols, 8);
    double se = 0;
    for (int j = 0; j < 4; j++) {
        double h[2];
        affine(w, bias, x + 2 * j, 2, 2, h);
        for (int i = 0; i < 2; i++) {
            double o = exp(h[i]) * c[i] - fmax(h[i], 0) + log(sigmoid(h[i])) + tanh(h[i]) +
                       (1 - h[i]) * 0.5 + sqrt(exp(h[i])) + fabs(h[i]) - 1 / (2 + fabs(h[i])) +
                       h[i] / c[i] + h[i] / exp(h[i]);
            ck_assert_msg(fabs(out[2 * j + i] - o) < 1e-5 * fmax(1, fabs(o)), "o[%d,%d] %g want %g",
                          i, j, out[2 * j + i], o);
            se += (o - y[2 * j + i]) * (o - y[2 * j + i]);
        }
    }
    ck_assert_msg(fabs(st.train_crit - se) < 1e-5 * se, "SquareError %.9g want %.9g", st.train_crit,
                  se);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ shapes and errors */

START_TEST(inferred_dimensions)
{
    struct backend *b = make_backend();
    struct nn_config cfg;
    struct pt_err e = {0};
    const char *body =
        "features = Input (3)\nlabels = Input (4)\n"
        "W = Parameter (5, Inferred)\nb = ParameterTensor (Inferred)\n"
        "h = Tanh (W * features + b)\n"
        "model = Sequential (DenseLayer {6, activation = Sigmoid} : LinearLayer {4})\n"
        "z = model (h)\n" CE("z");
    ck_assert_msg(parse_bs(body, &cfg, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(cfg.rnn, NN_GRAPH);
    ck_assert_int_eq(cfg.sizes[0], 3);
    ck_assert_int_eq(cfg.sizes[cfg.nsizes - 1], 4);
    ck_assert_str_eq(cfg.labels_input, "labels");
    ck_assert_str_eq(cfg.train_name, "ce");
    struct nn *net = make_bs_net(b, body, 1);
    /* W 5 x 3, b 5, DenseLayer 6 x 5 + 6, LinearLayer 4 x 6 + 4 */
    ck_assert_uint_eq(nn_param_count(net), 15 + 5 + 36 + 28);
    const struct nn_tensor *w = tensor_named(net, "W"), *bt = tensor_named(net, "b");
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(bt);
    ck_assert_int_eq(w->rows, 5);
    ck_assert_int_eq(w->cols, 3);
    ck_assert_int_eq(bt->rows, 5);
    ck_assert_int_eq(bt->cols, 1);
    size_t nt = 0, off = 0;
    const struct nn_tensor *t = nn_tensors(net, &nt);
    ck_assert_uint_eq(nt, 6);
    int seen_dense = 0, seen_linear = 0;
    for (size_t i = 0; i < nt; i++) {
        ck_assert_uint_eq(t[i].offset, off);
        off += (size_t)t[i].rows * (size_t)t[i].cols;
        seen_dense += t[i].rows == 6 && t[i].cols == 5;
        seen_linear += t[i].rows == 4 && t[i].cols == 6;
    }
    ck_assert_uint_eq(off, nn_param_count(net));
    ck_assert_int_eq(seen_dense + seen_linear, 2);
    int nodes = 0, with_grad = 0;
    ck_assert_int_eq(nn_node_counts(net, &nodes, &with_grad), 1);
    ck_assert_int_gt(nodes, with_grad);
    nn_free(net);
    /* the same network with every dimension given has the same parameter count */
    net = make_bs_net(b,
                      "features = Input (3)\nlabels = Input (4)\n"
                      "W = Parameter (5, 3)\nb = Parameter (5, 1)\nh = Tanh (W * features + b)\n"
                      "W1 = Parameter (6, 5)\nb1 = Parameter (6)\nW2 = Parameter (4, 6)\n"
                      "b2 = Parameter (4)\nz = W2 * Sigmoid (W1 * h + b1) + b2\n" CE("z"),
                      1);
    ck_assert_uint_eq(nn_param_count(net), 15 + 5 + 36 + 28);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(shape_errors)
{
    /* Times: the parameter's columns against the input's rows; the message names the
     * expression's FILE:LINE:COL and both shapes */
    const char *msg = bs_error_of(IO "W = Parameter (4, 5)\nz = W * features\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:5:5: error: Times:") && strstr(msg, "[4 x 5]") &&
                      strstr(msg, "[3 x samples]"),
                  "%s", msg);
    ck_assert_str_eq(msg, "g.cfg:5:5: error: Times: operands of shapes [4 x 5] and [3 x samples]: "
                          "the left operand's columns must equal the right's rows");
    /* Plus: a bias of the wrong dimension */
    msg = bs_error_of(IO WB "z = W * features + Parameter (3, 1)\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:6:5: error: Plus: operands of shapes [4 x samples] and [3 x 1]: "
                          "the rows must be equal");
    /* ElementTimes of two fixed widths that do not broadcast */
    msg = bs_error_of(IO WB "z = W * features .* Parameter (4, 2)\n" CE("z"));
    ck_assert_msg(strstr(msg, "ElementTimes: operands of shapes [4 x samples] and [4 x 2]: the "
                              "columns must be equal, or one operand one column"),
                  "%s", msg);
    /* Times with an input on the left */
    msg = bs_error_of(IO WB "z = features * W\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:6:5: error: Times: ") &&
                      strstr(msg, "the left operand must be a parameter or constant"),
                  "%s", msg);
    /* a criterion compares equal dimensions */
    msg = bs_error_of(IO "W = Parameter (3, 3)\nz = W * features\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:6:6: error: CrossEntropyWithSoftmax: operands of shapes "
                          "[4 x samples] and [3 x samples]: a criterion compares two per-sample "
                          "operands of equal dimension (labels first)");
    /* a dimension nothing fixes */
    msg = bs_error_of(IO WB "u = Parameter (4, Inferred)\nz = W * features + u\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:6:5: error: Parameter u: its dimensions could not be "
                              "inferred"),
                  "%s", msg);
    msg = bs_error_of(IO WB "u = Parameter (Inferred, 1)\nz = W * features + Tanh (u)\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:7:20: error: Tanh: the input's dimension is not known"), "%s",
                  msg);
    /* an unused definition is never evaluated (lazy, as in CNTK): no error */
    struct nn_config cfg;
    struct pt_err e = {0};
    ck_assert_int_eq(
        parse_bs(IO WB "u = Parameter (Inferred, 1)\nz = W * features + b\n" CE("z"), &cfg, &e), 0);
}
END_TEST

START_TEST(criterion_errors)
{
    /* the first operand of a criterion must be an Input (the labels) */
    const char *msg = bs_error_of(IO WB "z = W * features\n"
                                        "ce = CrossEntropyWithSoftmax (z, labels)\n"
                                        "criterionNodes = (ce)\n");
    ck_assert_msg(strstr(msg, "g.cfg:7:6: ") && strstr(msg, "CrossEntropyWithSoftmax"), "%s", msg);
    ck_assert_str_eq(msg, "g.cfg:7:6: error: CrossEntropyWithSoftmax: the first operand (labels) "
                          "must be an Input node, got Times");
    /* SquareError's target may be computed, but not from parameters (no gradient for it) */
    msg = bs_error_of(IO WB "z = W * features + b\nce = CrossEntropyWithSoftmax (labels, z)\n"
                            "t = Tanh (W * features)\nerr = SquareError (t, z)\n"
                            "criterionNodes = (ce)\nevaluationNodes = (err)\n");
    ck_assert_msg(strstr(msg, "g.cfg:9:7: error: SquareError: its first operand (the target, t) "
                              "is computed from parameters"),
                  "%s", msg);
    /* a node of the network's own as the criterion: one value per sample */
    msg = bs_error_of(IO WB "z = W * features + b\ncriterionNodes = (z)\n");
    ck_assert_msg(strstr(msg, "g.cfg:6:5: error: 'z' (Plus) is used as a criterion, which is one "
                              "value per sample; it has 4 values per sample (ReduceSum makes one "
                              "of a vector)"),
                  "%s", msg);
    msg = bs_error_of(IO WB "z = ReduceSum (W * features + b)\ne = Tanh (b)\n"
                            "criterionNodes = (z)\nevaluationNodes = (e)\n");
    ck_assert_msg(strstr(msg, "'e' (Tanh) is used as a criterion, which is one value per sample "
                              "or one for the minibatch; it is 4 x 1, computed from parameters "
                              "alone"),
                  "%s", msg);
    msg = bs_error_of(IMGIO "z = ReduceSum (features, axis = 1)\ncriterionNodes = (z)\n");
    ck_assert_msg(strstr(msg, "ReduceSum: only the sum of all of a sample's values is supported"),
                  "%s", msg);
    /* a criterion's value is one number of the minibatch: not a vector of them, and not
     * inside a recurrent loop */
    msg = bs_error_of(IO WB "z = W * features + b\nce = CrossEntropyWithSoftmax (labels, z)\n"
                            "x = ce .* b\ncriterionNodes = (x)\n");
    ck_assert_msg(strstr(msg, "g.cfg:8:5: error: 'x' (ElementTimes) is used as a criterion, which "
                              "is one value per sample or one for the minibatch; it is 4 x 1, "
                              "computed from a criterion's value"),
                  "%s", msg);
    msg = bs_error_of(IO WB "z = W * features + b\nce = CrossEntropyWithSoftmax (labels, z)\n"
                            "h = Tanh (z + CrossEntropyWithSoftmax (labels, PastValue (4, h)) .* "
                            "b)\ncriterionNodes = (ce)\noutputNodes = (h)\n");
    ck_assert_msg(strstr(msg,
                         "g.cfg:8:15: error: CrossEntropyWithSoftmax: a criterion's value (its "
                         "sum over the minibatch) cannot be used inside a recurrent loop"),
                  "%s", msg);
    /* Transpose keeps the values in place; TransposeTimes of two samples' vectors */
    msg = bs_error_of("features = Input {2 : 3}\nlabels = Input (6)\nz = Transpose (features)\n"
                      "ce = CrossEntropyWithSoftmax (labels, z)\ncriterionNodes = (ce)\n");
    ck_assert_msg(strstr(msg, "g.cfg:4:5: error: Transpose: swapping axes 1 and 2 of a [2 x 3 x 1] "
                              "tensor reorders its values, which is not supported yet"),
                  "%s", msg);
    msg = bs_error_of(IO WB "z = TransposeTimes (W, features)\n" CE("z"));
    ck_assert_msg(strstr(msg, "g.cfg:6:5: error: TransposeTimes: only of two per-sample vectors"),
                  "%s", msg);
    /* no criterion at all */
    msg = bs_error_of(IO WB "z = W * features + b\n");
    ck_assert_msg(strstr(msg, "the network has no criterionNodes"), "%s", msg);
}
END_TEST

/* CNTK's array definition, NAME[i:first..last] = ...: each element made once, when first
 * used, seeing the others (h[k-1]); indices from `first`; CNTK.core.bs's BrainScript
 * definitions (SBFF, BFF, Max) as the outer scope, which the network's own names shadow. */
START_TEST(array_definitions)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 IO "L = Max (1, 2)\n"
                                    "h[k:1..L] = if k == 1 then SBFF (features, 4, 3)\n"
                                    "            else SBFF (h[k-1].Eh, 4, 4)\n"
                                    "top = BFF (h[L].Eh, 4, 4)\n" CE("top.z"),
                                 1);
    size_t n = 0, floats = 0;
    const struct nn_tensor *t = nn_tensors(net, &n);
    for (size_t i = 0; i < n; i++)
        floats += (size_t)t[i].rows * (size_t)t[i].cols;
    ck_assert_uint_eq(n, 6); /* W and B of h[1], h[2] and top: each once */
    ck_assert_uint_eq(floats, 4 * 3 + 4 + 4 * 4 + 4 + 4 * 4 + 4);
    /* named as CNTK names them: by the members that led to them */
    const char *names[] = {"h[1].Eh.W", "h[1].Eh.B", "h[2].Eh.W", "h[2].Eh.B", "top.W", "top.B"};
    for (size_t i = 0; i < 6; i++)
        ck_assert_msg(tensor_named(net, names[i]), "no tensor %s", names[i]);
    ck_assert_int_eq(tensor_named(net, "h[2].Eh.W")->cols, 4);
    nn_free(net);
    /* layers' parameters inside the member that made them; a name two would share gets a
     * '_' in front on the later one (CNTK's makeUniqueName) */
    net = make_bs_net(
        b, IO "m = Sequential (DenseLayer {4} : DenseLayer {4})\nz = m (features)\n" CE("z"), 1);
    const char *names2[] = {"m.W", "m.b", "_m.W", "_m.b"};
    for (size_t i = 0; i < 4; i++)
        ck_assert_msg(tensor_named(net, names2[i]), "no tensor %s", names2[i]);
    ck_assert_int_eq(tensor_named(net, "m.W")->cols, 3);
    ck_assert_int_eq(tensor_named(net, "_m.W")->cols, 4);
    nn_free(net);
    /* without criterionNodes every top-level member is evaluated (CNTK's roots), but what no
     * root reaches is not part of the network: a layer function never applied */
    net = make_bs_net(b,
                      IO WB "unused = DenseLayer {7}\nz = W * features + b\n"
                            "ce = CrossEntropyWithSoftmax (labels, z, tag='criterion')\n",
                      1);
    nn_tensors(net, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_ptr_null(tensor_named(net, "unused.W"));
    nn_free(net);
    /* the network's own Max wins over CNTK.core.bs's: L = 1, one hidden layer */
    net = make_bs_net(b,
                      IO "Max (a, b) = a\nL = Max (1, 2)\n"
                         "h[k:1..L] = SBFF (features, 4, 3)\n"
                         "top = BFF (h[L].Eh, 4, 4)\n" CE("top.z"),
                      1);
    nn_tensors(net, &n);
    ck_assert_uint_eq(n, 4);
    nn_free(net);
    backend_free(b);
    const char *msg = bs_error_of(IO "h[k:1..2] = Tanh (features)\nz = h[0]\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:5:7: error: index out of range: the array's indices are 1..2");
    msg = bs_error_of(IO "h[k:1..2.5] = features\nz = h[1]\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:4:8: error: the last index: expected a whole number in "
                          "[-1e6, 1e6], got 2.5");
    msg = bs_error_of(IO "h[k:3..1] = features\nz = h[1]\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:4:3: error: array definition k:3..1: expected first <= last + 1 "
                          "and at most 65536 elements");
    msg = bs_error_of(IO "h[k:1..2] = Tanh (h[k])\nz = h[1]\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:4:19: error: 'h[1]' is defined in terms of itself (recurrence "
                          "through PastValue / FutureValue is not supported yet)");
    msg = bs_error_of(IO "z = if 1 > 2 then features else Fail ('no ' + 'way')\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:4:33: error: Fail: no way");
    msg = bs_error_of(IO "z = BS.Sequences.Gather (features, features)\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:4:5: error: BS.Sequences.Gather is not supported yet by "
                          "partrain's BrainScript");
    /* an error inside partrain's CNTK.core.bs names the user's call too */
    msg = bs_error_of(IO "z = BS.RNNs.RecurrentLSTMPStack (4, features)[0].h\n" CE("z"));
    ck_assert_msg(!strncmp(msg, "CNTK.core.bs (built into partrain):", 35) &&
                      strstr(msg, ": error: Length: expected an array or a string, got a "
                                  "number; called at g.cfg:4:5"),
                  "%s", msg);
    msg = bs_error_of(IO "n = Length (3)\nz = Parameter (4, n) * features\n" CE("z"));
    ck_assert_str_eq(msg, "g.cfg:4:5: error: Length: expected an array or a string, got a number");
}
END_TEST

/* Inputs are bound by name: a missing one and one of another dimension are errors that
 * name the Input's definition. */
START_TEST(input_binding_errors)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b, IO WB "z = W * features + b\n" CE("z"), 1);
    struct minibatch mb = {0};
    uint64_t rng = 3;
    struct nn_stats st;
    struct pt_err e = {0};
    fill_input(&mb, "features", 3, 4, 1, NULL, 0, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_train_step(net, &mb, 0.0f, &st, &e), PT_EUSER);
    ck_assert_str_eq(e.msg, "g.cfg:3:10: error: the network's Input 'labels' has no reader input "
                            "of that name (dim 4)");
    fill_input(&mb, "labels", 5, 4, 1, NULL, 1, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "the network's Input 'labels' has dimension 4, the reader's input "
                                "'labels' dim 5"),
                  "%s", e.msg);
    fill_input(&mb, "labels", 4, 4, 1, NULL, 1, &rng);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), 0);
    ck_assert_uint_eq(st.samples, 4);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Hardmax: one 1 a column, at the first largest value (a tie goes to the first), computed
 * by the network from its output; no gradient flows back through it (CNTK's). */
START_TEST(values_hardmax)
{
    struct backend *b = make_backend();
    struct nn *net =
        make_bs_net(b,
                    "features = Input (3)\nlabels = Input (3)\n"
                    "W = Parameter (3, 3)\nz = W * features\nh = Hardmax (z)\n"
                    "ce = CrossEntropyWithSoftmax (labels, z)\n"
                    "e = ClassificationError (labels, h)\n"
                    "criterionNodes = (ce)\nevaluationNodes = (e)\noutputNodes = (h)\n",
                    3);
    static const float w[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}; /* z = x */
    static const float x[12] = {0.5f, 2, -1, 3, 3, 1, -2, -2, -2, 0, 0, 7};
    static const float y[12] = {0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0};
    static const float want[12] = {0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1};
    set_tensor(net, "W", w);
    struct minibatch mb = {0};
    set_input(&mb, "features", 3, 4, x);
    set_input(&mb, "labels", 3, 4, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[12];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 12, &rows, &cols, &e), 0);
    for (int i = 0; i < 12; i++)
        ck_assert_msg(out[i] == want[i], "h[%d] = %g, want %g", i, out[i], want[i]);
    /* columns 0 and 2 are right (the tie in column 2 goes to row 0); 1 and 3 wrong */
    ck_assert_msg(fabs(st.eval_crit - 2.0) < 1e-6, "errors %g", st.eval_crit);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

void graph_value_tests(TCase *tc)
{
    tcase_add_test(tc, values_hardmax);
    tcase_add_test(tc, values_sigmoid_square_logistic);
    tcase_add_test(tc, values_softmax_ce_errors);
    tcase_add_test(tc, values_elementwise);
    tcase_add_test(tc, inferred_dimensions);
    tcase_add_test(tc, shape_errors);
    tcase_add_test(tc, criterion_errors);
    tcase_add_test(tc, input_binding_errors);
    tcase_add_test(tc, array_definitions);
}
