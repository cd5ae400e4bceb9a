/* CNTK.core.bs's functions that partrain writes over other nodes (bs_prelude.c) since
 * 2026-11-29 (session o): their values against C on fixed inputs. On samples: LogPlus,
 * ColumnElementTimes, PerDimMeanVarDeNormalization, BS.Boolean's And, Or, Xor, Not and If,
 * BS.Constants' ZeroesLike, OnesLike and Range, RowRepeat, and the one-value CrossEntropy,
 * MatrixL1Reg, MatrixL2Reg and WeightedLogistic; on two sequences of three steps: BS.Loop's
 * Iteration, IsFirst, IsLast, IsFirstN, Count, PreviousOrDefault, NextOrDefault,
 * BS.Boolean.Toggle, Delay, PastValue's and FutureValue's initialState, Shift, TimeReverse
 * (copied a step's block at once), and BS.Sequences' FoldL, FoldR and BroadcastSequenceAs. Their
 * gradients are rows of test_graph_cases.h. */
#include "test_graph.h"

#define R 4
#define C 6 /* six samples, or two sequences of three steps (column t * 2 + s) */

static const float xin[R * C] = {0.5f,  -0.5f, 1.0f, -1.6f, 2.5f,  -2.5f, 0.3f, -0.3f,
                                 0.25f, 1.49f, 0.0f, -0.7f, 0.9f,  -1.2f, 0.1f, 0.6f,
                                 -0.4f, 0.8f,  1.7f, -0.2f, -1.1f, 0.35f, 0.0f, 2.2f};
static const float x2in[R * C] = {1.0f,  0.5f,  -0.2f, 0.3f, -1.0f, 2.0f,  0.7f,  0.1f,
                                  0.4f,  -0.9f, 1.2f,  0.6f, 0.2f,  0.45f, -0.6f, 1.1f,
                                  -0.8f, 0.15f, 0.5f,  0.9f, 0.05f, -0.3f, 1.3f,  0.75f};
static const float pin[R] = {0.5f, -1.0f, 2.0f, 0.25f}; /* the parameter P, a column */
static const float qin[R] = {2.0f, 0.5f, 4.0f, 1.25f};  /* Q, a column of non-zeros */

#define X(i)  (double)x[j * R + (i)]
#define X2(i) (double)x2[j * R + (i)]

/* the value of row r, column j of each case (x, x2: the inputs; P, Q: the columns) */
static double f_tanh_sum(const float *x, const float *x2, int r, int j)
{
    return tanh((double)x[j * R + r] + (double)x2[j * R + r]);
}
static double f_logplus(const float *x, const float *x2, int r, int j)
{
    return log(exp(X(r)) + exp(X2(r)));
}
static double f_colt(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X(r) * pin[r];
}
static double f_denorm(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X(r) / qin[r] + pin[r];
}
static double f_and(const float *x, const float *x2, int r, int j)
{
    return X(r) > 0 && X2(r) > 0;
}
static double f_or(const float *x, const float *x2, int r, int j)
{
    return X(r) > 0 || X2(r) > 0;
}
static double f_xor(const float *x, const float *x2, int r, int j)
{
    return (X(r) > 0) != (X2(r) > 0);
}
static double f_not(const float *x, const float *x2, int r, int j)
{
    return (void)x2, !(X(r) > 0);
}
static double f_if(const float *x, const float *x2, int r, int j)
{
    return X(r) > 0 ? X(r) : X2(r);
}
static double f_if_scalar(const float *x, const float *x2, int r, int j)
{
    return X(r) < X2(r) ? -3.0 : X(r);
}
static double f_zero(const float *x, const float *x2, int r, int j)
{
    return (void)x, (void)x2, (void)r, (void)j, 0.0;
}
static double f_one(const float *x, const float *x2, int r, int j)
{
    return (void)x, (void)x2, (void)r, (void)j, 1.0;
}
static double f_range(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X(r) + r;
}
static double f_rowrep(const float *x, const float *x2, int r, int j)
{
    return (void)x2, X(r % R);
}
/* the one-value criteria: over all samples */
static double f_xent(const float *x, const float *x2, int r, int j)
{
    double s = 0.0;
    (void)r, (void)j;
    for (int jj = 0; jj < C; jj++) {
        double zx = 0.0, zy = 0.0;
        for (int i = 0; i < R; i++)
            zx += exp((double)x[jj * R + i]), zy += exp((double)x2[jj * R + i]);
        for (int i = 0; i < R; i++)
            s -= exp((double)x2[jj * R + i]) / zy * log(exp((double)x[jj * R + i]) / zx);
    }
    return s;
}
static double f_l1(const float *x, const float *x2, int r, int j)
{
    double s = 0.0;
    (void)x, (void)x2, (void)r, (void)j;
    for (int i = 0; i < R; i++)
        s += fabs(pin[i]);
    return s;
}
static double f_l2(const float *x, const float *x2, int r, int j)
{
    double s = 0.0;
    (void)x, (void)x2, (void)r, (void)j;
    for (int i = 0; i < R; i++)
        s += (double)pin[i] * pin[i];
    return sqrt(s);
}
static double f_wlog(const float *x, const float *x2, int r, int j)
{
    double s = 0.0;
    (void)r, (void)j;
    for (int jj = 0; jj < C; jj++)
        for (int i = 0; i < R; i++) {
            double p = 1.0 / (1.0 + exp(-(double)x[jj * R + i])), y = x2[jj * R + i] > 0;
            double w = 0.5 + 0.25 * jj;
            s -= w * (y * log(p) + (1.0 - y) * log(1.0 - p));
        }
    return s;
}
#undef X
#undef X2

struct lib_case {
    const char *expr; /* of x, x2, P, Q and (WeightedLogistic) w */
    int rows, cols;
    double (*f)(const float *x, const float *x2, int r, int j);
};

static const struct lib_case cases[] = {
    {"LogPlus (x, x2)", R, C, f_logplus},
    {"new ComputationNode [ operation = 'Tanh' ; inputs = new ComputationNode [ operation = "
     "'Plus' ; inputs = (x : x2) ] ]",
     R, C, f_tanh_sum},
    {"ColumnElementTimes (x, P)", R, C, f_colt},
    {"PerDimMeanVarDeNormalization (x, P, Q)", R, C, f_denorm},
    {"BS.Boolean.And (x > 0, x2 > 0)", R, C, f_and},
    {"BS.Boolean.Or (Greater (x, 0), Greater (x2, 0))", R, C, f_or},
    {"BS.Boolean.Xor (x > 0, x2 > 0)", R, C, f_xor},
    {"BS.Boolean.Not (x > 0)", R, C, f_not},
    {"x > 0 && x2 > 0", R, C, f_and},
    {"BS.Boolean.If (x > 0, x, x2)", R, C, f_if},
    {"BS.Boolean.If (x < x2, Constant (-3), x)", R, C, f_if_scalar},
    {"BS.Constants.ZeroesLike (x)", 1, C, f_zero},
    {"BS.Constants.OnesLike (x)", 1, C, f_one},
    {"x + BS.Constants.Range (4)", R, C, f_range},
    {"RowRepeat (x, 3)", 3 * R, C, f_rowrep},
    {"CrossEntropy (Softmax (x2), Softmax (x))", 1, 1, f_xent},
    {"MatrixL1Reg (P)", 1, 1, f_l1},
    {"MatrixL2Reg (P)", 1, 1, f_l2},
    {"WeightedLogistic (x2 > 0, Sigmoid (x), w)", 1, 1, f_wlog},
};

/* two sequences of three steps: column t * 2 + s; each case's value at step t of
 * sequence s, row r */
#define T 3
#define S 2
static double xs(const float *x, int r, int t, int s)
{
    return x[(t * S + s) * R + r];
}
static double g_iter(const float *x, int r, int t, int s)
{
    return (void)x, (void)r, (void)s, t + 1;
}
static double g_first(const float *x, int r, int t, int s)
{
    return (void)x, (void)r, (void)s, t == 0;
}
static double g_last(const float *x, int r, int t, int s)
{
    return (void)x, (void)r, (void)s, t == T - 1;
}
static double g_first2(const float *x, int r, int t, int s)
{
    return (void)x, (void)r, (void)s, t < 2;
}
static double g_count(const float *x, int r, int t, int s)
{
    return (void)x, (void)r, (void)t, (void)s, T;
}
static double g_prev(const float *x, int r, int t, int s)
{
    return t == 0 ? 7.0 : xs(x, r, t - 1, s);
}
static double g_next(const float *x, int r, int t, int s)
{
    return t == T - 1 ? 0.0 : xs(x, r, t + 1, s);
}
static double g_toggle(const float *x, int r, int t, int s)
{
    return (void)x, (void)r, (void)s, t % 2 == 0; /* from 0: 1, 0, 1 */
}
static double g_delay(const float *x, int r, int t, int s)
{
    return t < 2 ? 0.5 : xs(x, r, t - 2, s);
}
static double g_init_q(const float *x, int r, int t, int s)
{
    return t == 0 ? qin[r] : xs(x, r, t - 1, s);
}
static double g_init_9(const float *x, int r, int t, int s)
{
    return t + 2 >= T ? 9.0 : xs(x, r, t + 2, s);
}
static double g_reverse(const float *x, int r, int t, int s)
{
    return xs(x, r, T - 1 - t, s);
}
static double g_bcast(const float *x, int r, int t, int s)
{
    (void)x, (void)t;
    return x2in[((T - 1) * S + s) * R + r]; /* x2's last step */
}
static double g_sum(const float *x, int r, int t, int s)
{
    double a = 1.5; /* x0 */
    (void)t;
    for (int k = 0; k < T; k++)
        a += xs(x, r, k, s);
    return a;
}
static double g_fold_max(const float *x, int r, int t, int s)
{
    double m = -1e30; /* FoldR with a max from the last step back */
    (void)t;
    for (int k = T - 1; k >= 0; k--)
        m = xs(x, r, k, s) > m ? xs(x, r, k, s) : m;
    return m;
}

struct seq_case {
    const char *expr;
    int rows, per_seq; /* per_seq: one column per sequence (the value of its last step) */
    double (*f)(const float *x, int r, int t, int s);
};

static const struct seq_case seq_cases[] = {
    {"BS.Loop.Iteration (x)", 1, 0, g_iter},
    {"BS.Loop.IsFirst (x)", 1, 0, g_first},
    {"BS.Loop.IsLast (x)", 1, 0, g_last},
    {"BS.Loop.IsFirstN (2, x)", 1, 0, g_first2},
    {"BS.Loop.Count (x)", 1, 1, g_count},
    {"BS.Loop.PreviousOrDefault (x, defaultValue = Constant (7))", R, 0, g_prev},
    {"BS.Loop.NextOrDefault (x)", R, 0, g_next},
    {"BS.Boolean.Toggle (BS.Constants.OnesLike (x))", 1, 0, g_toggle},
    {"Delay (0, x, timeStep = 2, defaultHiddenActivation = 0.5)", R, 0, g_delay},
    {"PastValue (0, x, initialState = Q)", R, 0, g_init_q},
    {"FutureValue (0, x, timeStep = 2, initialState = Constant (9))", R, 0, g_init_9},
    {"Shift (x, 2, Constant (9))", R, 0, g_init_9},
    {"Shift (x, -1, Q)", R, 0, g_init_q},
    {"TimeReverse (x)", R, 0, g_reverse},
    {"BS.Sequences.BroadcastSequenceAs (x, BS.Sequences.Last (x2))", R, 0,
     g_bcast}, /* sequences of one length: a step's block at once */
    {"BS.Sequences.FoldL (Plus, Constant (1.5), x)", R, 1, g_sum},
    {"BS.Sequences.FoldR ((a, b) => BS.Boolean.If (a > b, a, b), Constant (-1e30), x)", R, 1,
     g_fold_max},
};

static struct nn *lib_net(struct backend *b, const char *expr, const char *labels)
{
    char body[768];
    snprintf(body, sizeof body,
             "x = Input (4)\nx2 = Input (4)\nw = Input (1)\nlabels = Input (4)\n"
             "P = Parameter (4, 1)\nQ = Parameter (4, 1)\ny = %s\nW = Parameter (4, 4)\n"
             "ce = CrossEntropyWithSoftmax (labels, W * %s)\ncriterionNodes = (ce)\n"
             "outputNodes = (y)\n",
             expr, labels);
    struct nn *net = try_bs_net(b, expr, body, 5);
    if (net && tensor_named(net, "P")) /* where the expression reaches them */
        set_tensor(net, "P", pin);
    if (net && tensor_named(net, "Q"))
        set_tensor(net, "Q", qin);
    return net;
}

static void check_output(struct nn *net, const char *expr, int rows, int cols, const double *want)
{
    float out[3 * R * C];
    size_t got_r = 0, got_c = 0;
    struct pt_err e = {0};
    ck_assert_int_eq(nn_get_output(net, out, COUNT(out), &got_r, &got_c, &e), 0);
    ck_assert_msg(got_r == (size_t)rows && got_c == (size_t)cols, "%s: %zu x %zu, want %d x %d",
                  expr, got_r, got_c, rows, cols);
    for (int k = 0; k < rows * cols; k++)
        ck_assert_msg(fabs(out[k] - want[k]) <= 1e-4 + 1e-5 * fabs(want[k]),
                      "%s [%d, %d]: %.9g want %.9g", expr, k % rows, k / rows, out[k], want[k]);
}

START_TEST(lib_values)
{
    struct backend *b = make_backend();
    for (size_t i = 0; i < COUNT(cases); i++) {
        struct nn *net = lib_net(b, cases[i].expr, "x");
        if (!net)
            break;
        struct minibatch mb = {0};
        float lab[R * C] = {0}, w[C];
        for (int j = 0; j < C; j++)
            lab[j * R + j % R] = 1.0f, w[j] = 0.5f + 0.25f * (float)j;
        set_input(&mb, "x", R, C, xin);
        set_input(&mb, "x2", R, C, x2in);
        set_input(&mb, "w", 1, C, w);
        set_input(&mb, "labels", R, C, lab);
        struct nn_stats st;
        struct pt_err e = {0};
        ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s: %s", cases[i].expr, e.msg);
        double want[3 * R * C];
        for (int j = 0; j < cases[i].cols; j++)
            for (int r = 0; r < cases[i].rows; r++)
                want[j * cases[i].rows + r] = cases[i].f(xin, x2in, r, j);
        check_output(net, cases[i].expr, cases[i].rows, cases[i].cols, want);
        mb_free(&mb);
        nn_free(net);
    }
    backend_free(b);
}
END_TEST

START_TEST(lib_sequences)
{
    struct backend *b = make_backend();
    for (size_t i = 0; i < COUNT(seq_cases); i++) {
        const struct seq_case *c = &seq_cases[i];
        /* per-sequence outputs are compared with labels of one step (the criterion reads
         * the last step's output for them) */
        struct nn *net = lib_net(b, c->expr, c->per_seq ? "BS.Sequences.Last (x)" : "x");
        if (!net)
            break;
        struct minibatch mb = {0};
        float lab[R * C] = {0};
        for (int j = 0; j < C; j++)
            lab[j * R + j % R] = 1.0f;
        /* two sequences of three steps each (column t * 2 + s, as xin is laid out) */
        uint64_t rng = 1;
        fill_input(&mb, "x", R, S, T, NULL, 0, &rng);
        memcpy(mb_find(&mb, "x")->data, xin, sizeof xin);
        fill_input(&mb, "x2", R, S, T, NULL, 0, &rng);
        memcpy(mb_find(&mb, "x2")->data, x2in, sizeof x2in);
        fill_input(&mb, "labels", R, S, c->per_seq ? 1 : T, NULL, 0, &rng);
        memcpy(mb_find(&mb, "labels")->data, lab, (c->per_seq ? S : C) * R * sizeof(float));
        struct nn_stats st;
        struct pt_err e = {0};
        ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s: %s", c->expr, e.msg);
        int cols = c->per_seq ? S : C;
        double want[R * C];
        for (int j = 0; j < cols; j++)
            for (int r = 0; r < c->rows; r++)
                want[j * c->rows + r] =
                    c->per_seq ? c->f(xin, r, T - 1, j) : c->f(xin, r, j / S, j % S);
        check_output(net, c->expr, c->rows, cols, want);
        mb_free(&mb);
        nn_free(net);
    }
    backend_free(b);
}
END_TEST

/* CNTK's functions of plain values (bs_lang.c) and the operators % and **: each check
 * Fails the build with its name where the value is not CNTK's */
START_TEST(lib_plain_values)
{
    static const char *const checks[] = {
        "Mod (7, 3) == 1",
        "Mod (-7, 3) == -1",
        "IntDiv (-7, 2) == -3",
        "IntDiv (7.9, 2) == 3",
        "7 % 3 == 1",
        "-7.5 % 2 == -1.5",
        "2 ** 10 == 1024",
        "2 * 3 ** 2 == 36", /* as CNTK: ** binds as * does, left to right */
        "IsArray ((1 : 2)) && !IsArray (1)",
        "IsBool (1 < 2) && !IsBool (1)",
        "IsDouble (1.5) && !IsDouble ('a') && !IsDouble (true)",
        "IsSameObject (None, None) && !IsSameObject (1, 1) && IsSameObject (x, x)",
        "!IsSameObject (x, x2)",
        "Chr (65) + Chr (122) == 'Az'",
        "Substr ('hello', 1, 3) == 'ell'",
        "Substr ('hello', -3, 10) == 'llo'",
        "Substr ('hello', 2, -1) == 'llo'",
        "Substr ('hello', 9, 2) == ''",
        "Replace ('a.b.c', '.', '::') == 'a::b::c'",
        "Replace ('aaa', 'aa', 'b') == 'ba'",
        "Format (3.14159, '.2') == '3.14'",
        "Format (42, '5') == '   42'",
        "Format ('x', '-3') == 'x  '",
        "Length (Repeat (3, 7)) == 3 && Repeat (3, 7)[2] == 7",
        "IsNone (Repeat (0, 7))",
        "BS.Boolean.True == 1 && BS.Constants.False == 0",
    };
    struct backend *b = make_backend();
    char body[4096];
    size_t at = (size_t)snprintf(body, sizeof body,
                                 "x = Input (4)\nx2 = Input (4)\nlabels = Input (4)\n"
                                 "check (c, what) = if c then 1 else Fail (what)\nok = 1");
    for (size_t i = 0; i < COUNT(checks); i++)
        at += (size_t)snprintf(body + at, sizeof body - at, " * check (%s, \"%s\")", checks[i],
                               checks[i]);
    snprintf(body + at, sizeof body - at,
             "\nW = Parameter (4, 4)\nce = CrossEntropyWithSoftmax (labels, W * x * ok)\n"
             "criterionNodes = (ce)\n");
    struct nn *net = try_bs_net(b, "plain values", body, 3);
    if (net)
        nn_free(net);
    backend_free(b);
    /* and what is refused, at the call */
    ck_assert_msg(
        strstr(bs_error_of(IO "n = Mod (7, 0)\nz = Parameter (4, 3) * features * n\n" CE("z")),
               "g.cfg:4:5: error: Mod: division by zero (7 by 0)"),
        "Mod by 0");
    ck_assert_msg(strstr(bs_error_of(IO "n = Length (Format (1, '%d'))\nz = Parameter (4, 3) * "
                                        "features * n\n" CE("z")),
                         "error: Format: format '%d': expected flags, a width and a precision"),
                  "Format %%d");
    ck_assert_msg(strstr(bs_error_of(IO "n = Length (Chr (300))\nz = Parameter (4, 3) * features "
                                        "* n\n" CE("z")),
                         "error: Chr: 300 is not the code of an ASCII character (1..127)"),
                  "Chr 300");
    ck_assert_msg(strstr(bs_error_of(IO "n = 1 % 0\nz = Parameter (4, 3) * features * n\n" CE("z")),
                         "error: '%' by zero"),
                  "%% by 0");
    ck_assert_msg(strstr(bs_error_of(IO "z = Parameter (4, 3) * features ** 2\n" CE("z")),
                         "error: '**' on nodes is not supported"),
                  "** on nodes");
    /* CNTK's new ComputationNode [...]: an operation partrain lacks, a member it does not
     * take */
    ck_assert_msg(strstr(bs_error_of(IO "z = new ComputationNode [ operation = 'Crop' ; inputs = "
                                        "(features : features) ]\n" CE("z")),
                         "g.cfg:4:5: error: new ComputationNode: operation 'Crop' is not "
                         "supported by partrain"),
                  "Crop");
    ck_assert_msg(strstr(bs_error_of(IO "z = new ComputationNode [ operation = 'Tanh' ; inputs = "
                                        "features ; axis = 2 ]\n" CE("z")),
                         "error: Tanh: no parameter called 'axis'"),
                  "axis");
}
END_TEST

void graph_lib_tests(TCase *tc)
{
    tcase_add_test(tc, lib_plain_values);
    tcase_add_test(tc, lib_values);
    tcase_add_test(tc, lib_sequences);
}
