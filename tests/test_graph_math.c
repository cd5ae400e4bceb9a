/* CNTK.core.bs's element-wise functions built since 2026-11-29 (graph_nodes.c, graph_ewise.c,
 * bs_prelude.c): their values against C's math on fixed inputs (Sin, Cosine, Floor, Ceil,
 * Round, the comparisons with a value on either side and with a column, Clip by values and
 * by columns, LogSoftmax, CosDistance, Sinh, Cosh, Atanh, Asinh, Asin, Acos, StopGradient,
 * ReduceMax, ReduceMin), and that StopGradient and the comparisons pass no gradient back. Their
 * gradients where they have one are rows of test_graph_cases.h. */
#include "test_graph.h"

#define R 4
#define C 3

/* x: 4 rows x 3 columns, with values on and next to whole numbers and the bounds */
static const float xin[R * C] = {0.5f, -0.5f, 1.0f,  -1.6f, 2.5f, -2.5f,
                                 0.3f, -0.3f, 0.25f, 1.49f, 0.0f, -0.7f};
static const float x2in[R * C] = {1.0f, 0.5f, -0.2f, 0.3f,  -1.0f, 2.0f,
                                  0.7f, 0.1f, 0.4f,  -0.9f, 1.2f,  0.6f};
static const float col[R] = {0.0f, 0.5f, -0.5f, 2.0f}; /* the parameter P, a column */

static double f_round(double v)
{
    return floor(v + 0.5);
}

struct math_case {
    const char *expr;                                           /* of x (and x2, P) */
    int rows_out;                                               /* R, or 1 (a value per sample) */
    double (*f)(const float *x, const float *x2, int r, int j); /* value of row r, column j */
};

#define X  (double)x[j * R + r]
#define X2 (double)x2[j * R + r]
#define P  (double)col[r]
static double m_sin(const float *x, const float *x2, int r, int j)
{
    return (void)x2, sin(X);
}
static double m_cos(const float *x, const float *x2, int r, int j)
{
    return (void)x2, cos(X);
}
static double m_floor(const float *x, const float *x2, int r, int j)
{
    return (void)x2, floor(X);
}
static double m_ceil(const float *x, const float *x2, int r, int j)
{
    return (void)x2, ceil(X);
}
static double m_round(const float *x, const float *x2, int r, int j)
{
    return (void)x2, f_round(X);
}
static double m_less(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X < 0.5;
}
static double m_lesss(const float *x, const float *x2, int r, int j)
{
    return (void)x2, 0.5 < X;
}
static double m_ge(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X >= P;
}
static double m_eq(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X == -0.5;
}
static double m_gt_mean(const float *x, const float *x2, int r, int j)
{
    double m = 0.0;
    for (int i = 0; i < R; i++)
        m += x[j * R + i];
    return (void)x2, X > m / R;
}
static double m_le_mean(const float *x, const float *x2, int r, int j)
{
    double m = 0.0;
    for (int i = 0; i < R; i++)
        m += x[j * R + i];
    return (void)x2, m / R <= X;
}
static double m_ne(const float *x, const float *x2, int r, int j)
{
    return X != X2;
}
static double m_le(const float *x, const float *x2, int r, int j)
{
    return X <= X2;
}
static double m_gt(const float *x, const float *x2, int r, int j)
{
    return (void)x2, P > X;
}
static double m_clip(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X < -0.5 ? -0.5 : X > 1.0 ? 1.0 : X;
}
static double m_clipc(const float *x, const float *x2, int r, int j)
{
    double lo = P - 1.0, hi = P;
    return (void)x2, X < lo ? lo : X > hi ? hi : X;
}
static double m_logsm(const float *x, const float *x2, int r, int j)
{
    double s = 0.0;
    for (int i = 0; i < R; i++)
        s += exp((double)x[j * R + i]);
    return (void)x2, X - log(s);
}
static double m_cosd(const float *x, const float *x2, int r, int j)
{
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (int i = 0; i < R; i++) {
        double a = x[j * R + i], b = x2[j * R + i];
        ab += a * b, aa += a * a, bb += b * b;
    }
    return (void)r, ab / sqrt(aa * bb);
}
static double m_sinh(const float *x, const float *x2, int r, int j)
{
    return (void)x2, sinh(X);
}
static double m_cosh(const float *x, const float *x2, int r, int j)
{
    return (void)x2, cosh(X);
}
static double m_atanh(const float *x, const float *x2, int r, int j)
{
    return (void)x2, atanh(0.25 * X);
}
static double m_asinh(const float *x, const float *x2, int r, int j)
{
    return (void)x2, asinh(X);
}
static double m_asin(const float *x, const float *x2, int r, int j)
{
    return (void)x2, asin(0.3 * X);
}
static double m_acos(const float *x, const float *x2, int r, int j)
{
    return (void)x2, acos(0.3 * X);
}
static double m_stop(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X;
}
static double m_st(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X > 0 ? 1.0 : -1.0;
}
static double m_rmax(const float *x, const float *x2, int r, int j)
{
    double m = x[j * R];
    for (int i = 1; i < R; i++)
        m = x[j * R + i] > m ? x[j * R + i] : m;
    return (void)x2, (void)r, m;
}
static double m_rmin(const float *x, const float *x2, int r, int j)
{
    double m = x[j * R];
    for (int i = 1; i < R; i++)
        m = x[j * R + i] < m ? x[j * R + i] : m;
    return (void)x2, (void)r, m;
}
#undef X
#undef X2
#undef P

static const struct math_case cases[] = {
    {"Sin (x)", R, m_sin},
    {"Cosine (x)", R, m_cos},
    {"Floor (x)", R, m_floor},
    {"Ceil (x)", R, m_ceil},
    {"Round (x)", R, m_round},
    {"Less (x, 0.5)", R, m_less},
    {"Less (0.5, x)", R, m_lesss},
    {"GreaterEqual (x, P)", R, m_ge},
    {"Equal (x, -0.5)", R, m_eq},
    {"NotEqual (x, x2)", R, m_ne},
    {"x > ReduceMean (x)", R, m_gt_mean},
    {"LessEqual (ReduceMean (x), x)", R, m_le_mean},
    {"LessEqual (x, x2)", R, m_le},
    {"Greater (P, x)", R, m_gt},
    {"Clip (-0.5, 1, x)", R, m_clip},
    {"Clip (P - 1, P, x)", R, m_clipc},
    {"LogSoftmax (x)", R, m_logsm},
    {"CosDistance (x, x2)", 1, m_cosd},
    {"Sinh (x)", R, m_sinh},
    {"Cosh (x)", R, m_cosh},
    {"Atanh (ElementTimes (Constant (0.25), x))", R, m_atanh},
    {"Asinh (x)", R, m_asinh},
    {"Asin (ElementTimes (Constant (0.3), x))", R, m_asin},
    {"Acos (x .* 0.3)", R, m_acos},
    {"StopGradient (x)", R, m_stop},
    {"StraightThrough (x)", R, m_st},
    {"ReduceMax (x)", 1, m_rmax},
    {"ReduceMin (x, axis = 1)", 1, m_rmin},
};

START_TEST(math_values)
{
    struct backend *b = make_backend();
    for (size_t i = 0; i < COUNT(cases); i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "x = Input (4)\nx2 = Input (4)\nlabels = Input (4)\nP = Parameter (4, 1)\n"
                 "y = %s\nW = Parameter (4, 4)\nce = CrossEntropyWithSoftmax (labels, W * x)\n"
                 "criterionNodes = (ce)\noutputNodes = (y)\n",
                 cases[i].expr);
        struct nn *net = try_bs_net(b, cases[i].expr, body, 5);
        if (!net)
            break;
        if (strchr(cases[i].expr, 'P'))
            set_tensor(net, "P", col);
        struct minibatch mb = {0};
        float lab[R * C] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
        set_input(&mb, "x", R, C, xin);
        set_input(&mb, "x2", R, C, x2in);
        set_input(&mb, "labels", R, C, lab);
        struct nn_stats st;
        struct pt_err e = {0};
        ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s: %s", cases[i].expr, e.msg);
        float out[R * C];
        size_t rows = 0, cols = 0;
        ck_assert_int_eq(nn_get_output(net, out, COUNT(out), &rows, &cols, &e), 0);
        ck_assert_msg(rows == (size_t)cases[i].rows_out && cols == C, "%s: %zu x %zu",
                      cases[i].expr, rows, cols);
        for (int j = 0; j < C; j++)
            for (int r = 0; r < (int)rows; r++) {
                double want = cases[i].f(xin, x2in, r, j), got = out[j * rows + r];
                ck_assert_msg(fabs(got - want) <= 1e-5 + 1e-5 * fabs(want),
                              "%s [%d, %d]: %.9g want %.9g", cases[i].expr, r, j, got, want);
            }
        mb_free(&mb);
        nn_free(net);
    }
    backend_free(b);
}
END_TEST

/* StopGradient, comparisons and Floor between W's output and V's: V gets no gradient, W all;
 * through StraightThrough V gets one. */
START_TEST(math_no_gradient)
{
    static const char *const nets[] = {
        "z = W * x + StopGradient (V * x)\n",
        "z = W * x + Less (V * x, 0.1) + GreaterEqual (0.2, V * x)\n",
        "z = W * x .* Floor (V * x + 3)\n",
        /* the last passes it: StraightThrough's gradient goes where |V x| <= 1 */
        "z = W * x + StraightThrough (V * x .* 0.3)\n",
    };
    struct backend *b = make_backend();
    for (size_t i = 0; i < COUNT(nets); i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "x = Input (4)\nlabels = Input (4)\nW = Parameter (4, 4)\nV = Parameter (4, 4)\n"
                 "%sce = CrossEntropyWithSoftmax (labels, z)\ncriterionNodes = (ce)\n",
                 nets[i]);
        struct nn *net = try_bs_net(b, nets[i], body, 7);
        if (!net)
            break;
        struct minibatch mb = {0};
        float lab[R * C] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
        set_input(&mb, "x", R, C, xin);
        set_input(&mb, "labels", R, C, lab);
        struct nn_stats st;
        struct pt_err e = {0};
        ck_assert_msg(nn_train_step(net, &mb, 0.0f, &st, &e) == 0, "%s", e.msg);
        size_t n = nn_param_count(net);
        float *grad = malloc(n * sizeof *grad);
        ck_assert_ptr_nonnull(grad);
        ck_assert_int_eq(nn_get_grads(net, grad, &e), 0);
        const struct nn_tensor *tw = tensor_named(net, "W"), *tv = tensor_named(net, "V");
        double gw = 0.0, gv = 0.0;
        for (int k = 0; k < R * R; k++) {
            gw += fabs(grad[tw->offset + k]);
            gv += fabs(grad[tv->offset + k]);
        }
        ck_assert_msg(gw > 1e-3 && (i == COUNT(nets) - 1 ? gv > 1e-4 : gv == 0.0),
                      "%s: |dW| %g, |dV| %g", nets[i], gw, gv);
        free(grad);
        mb_free(&mb);
        nn_free(net);
    }
    backend_free(b);
}
END_TEST

/* Clip's bounds one value or a column of the input's rows; a comparison of operands of
 * different rows (neither one value, one column nor one value per sample) is refused. */
START_TEST(math_shapes)
{
    const char *msg =
        bs_error_of(IO "P = Parameter (3, 1)\nh = Clip (P, 1, W * features)\nW = Parameter (4, 3)\n"
                       "z = LinearLayer {4} (h)\n" CE("z"));
    ck_assert_msg(strstr(msg, "minValue and maxValue must be one value or one column"), "%s", msg);
    msg = bs_error_of(IO "h = Less (features, Parameter (2, 3) * features)\nz = LinearLayer {4} "
                         "(h)\n" CE("z"));
    ck_assert_msg(strstr(msg, "Less: operands of shapes [3 x samples] and [2 x samples]: the rows "
                              "must be equal"),
                  "%s", msg);
    msg = bs_error_of(IO "b = BS.Sequences.BroadcastSequenceAs (features, Tanh (features))\n"
                         "z = LinearLayer {4} (b)\n" CE("z"));
    ck_assert_msg(strstr(msg, "BS.Sequences.BroadcastSequenceAs: its second input must be one "
                              "value per sequence"),
                  "%s", msg);
}
END_TEST

/* TimeReverse on two sequences of 3 and 2 steps: step t of a sequence of T is its step T - 1
 * - t; the padding stays 0. */
START_TEST(math_time_reverse)
{
    struct backend *b = make_backend();
    struct nn *net =
        try_bs_net(b, "time_reverse",
                   "x = Input (2)\nlabels = Input (2)\ny = TimeReverse (x)\n"
                   "W = Parameter (2, 2)\nce = CrossEntropyWithSoftmax (labels, W * x)\n"
                   "criterionNodes = (ce)\noutputNodes = (y)\n",
                   5);
    if (!net) {
        backend_free(b);
        return;
    }
    static const uint32_t len[2] = {3, 2};
    struct minibatch mb = {0};
    uint64_t rng = 9;
    fill_input(&mb, "x", 2, 2, 3, len, 0, &rng);
    fill_input(&mb, "labels", 2, 2, 3, len, 1, &rng);
    float *x = mb_find(&mb, "x")->data;
    for (int t = 0; t < 3; t++) /* step t of sequence s: (10 s + t, -(10 s + t)) */
        for (int s = 0; s < 2; s++) {
            float v = t < (int)len[s] ? (float)(10 * s + t) : 0.0f;
            x[(t * 2 + s) * 2] = v;
            x[(t * 2 + s) * 2 + 1] = -v;
        }
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[12];
    size_t rows = 0, cols = 0;
    ck_assert_int_eq(nn_get_output(net, out, COUNT(out), &rows, &cols, &e), 0);
    ck_assert(rows == 2 && cols == 6);
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 2; s++) {
            int T = (int)len[s];
            float want = t < T ? (float)(10 * s + (T - 1 - t)) : 0.0f;
            ck_assert_msg(out[(t * 2 + s) * 2] == want && out[(t * 2 + s) * 2 + 1] == -want,
                          "step %d of sequence %d: %g want %g", t, s, out[(t * 2 + s) * 2], want);
        }
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

void graph_math_tests(TCase *tc)
{
    tcase_add_test(tc, math_time_reverse);
    tcase_add_test(tc, math_values);
    tcase_add_test(tc, math_no_gradient);
    tcase_add_test(tc, math_shapes);
}
