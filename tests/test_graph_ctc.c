/* CTC (src/nn/graph_ctc.c): ForwardBackward's value and gradient against a brute force
 * over every path of tokens (-log of the summed probability of the paths that collapse to
 * the labels' tokens; d/dz = softmax - the paths' share per frame and token), on two
 * utterances of 5 and 3 frames with padding that must not count; a large delayConstraint
 * changes nothing, a small one only removes paths; EditDistanceError against distances
 * worked out by hand (squashInputs, tokensToIgnore, penalties); the shape errors. */
#include "test_graph.h"

#define D     3 /* features */
#define K     4 /* tokens, the blank the last */
#define BLANK 3
#define NSEQ  2
#define STEPS 5

#define CTC_NET(delay)                                                                             \
    "features = Input (3)\nlabels = Input (4)\nW = Parameter (4, 3)\nz = W * features\n"           \
    "cr = ForwardBackward (LabelsToGraph (labels), z, 3, delayConstraint = " delay ")\n"           \
    "criterionNodes = (cr)\n"

static const uint32_t seq_len[NSEQ] = {5, 3};
/* the frames' labels: token, and whether it starts there (2) or goes on (1) */
static const int lab_tok[STEPS][NSEQ] = {{0, 2}, {0, 2}, {1, 1}, {0, 0}, {0, 0}};
static const int lab_val[STEPS][NSEQ] = {{2, 2}, {1, 1}, {2, 2}, {2, 0}, {1, 0}};

static void ctc_minibatch(struct minibatch *mb)
{
    uint64_t rng = 5;
    fill_input(mb, "features", D, NSEQ, STEPS, seq_len, 0, &rng);
    fill_input(mb, "labels", K, NSEQ, STEPS, seq_len, 0, &rng);
    float *lab = mb_find(mb, "labels")->data, *x = mb_find(mb, "features")->data;
    memset(lab, 0, K * NSEQ * STEPS * sizeof *lab);
    for (size_t t = 0; t < STEPS; t++)
        for (size_t s = 0; s < NSEQ; s++) {
            size_t col = t * NSEQ + s;
            if (t < seq_len[s])
                lab[col * K + lab_tok[t][s]] = (float)lab_val[t][s];
            else
                for (int r = 0; r < D; r++)
                    x[col * D + r] = 50.0f; /* padding: must not count */
        }
}

/* Whether the path (T tokens) collapses to tok (n tokens): repeats merged, blanks out. */
static int collapses(const int *path, int T, const int *tok, int n)
{
    int m = 0, prev = -1;
    for (int t = 0; t < T; t++) {
        if (path[t] != prev && path[t] != BLANK) {
            if (m == n || tok[m] != path[t])
                return 0;
            m++;
        }
        prev = path[t];
    }
    return m == n;
}

/* -log P and dz (T x K) of one utterance by brute force; p its frames' softmax. */
static double brute(const double *p, int T, const int *tok, int n, double *dz)
{
    double P = 0.0, share[STEPS * K] = {0};
    int path[STEPS];
    long total = 1;
    for (int t = 0; t < T; t++)
        total *= K;
    for (long c = 0; c < total; c++) {
        long v = c;
        double prob = 1.0;
        for (int t = 0; t < T; t++, v /= K) {
            path[t] = (int)(v % K);
            prob *= p[t * K + path[t]];
        }
        if (!collapses(path, T, tok, n))
            continue;
        P += prob;
        for (int t = 0; t < T; t++)
            share[t * K + path[t]] += prob;
    }
    for (int t = 0; t < T; t++)
        for (int k = 0; k < K; k++)
            dz[t * K + k] = p[t * K + k] - share[t * K + k] / P;
    return -log(P);
}

/* The criterion and dW (K x D) by brute force. */
static double reference(const float *x, const float *w, double *dw)
{
    double sum = 0.0;
    memset(dw, 0, K * D * sizeof *dw);
    for (size_t s = 0; s < NSEQ; s++) {
        int T = (int)seq_len[s], tok[STEPS], n = 0;
        double p[STEPS * K], dz[STEPS * K];
        for (int t = 0; t < T; t++) {
            if (lab_val[t][s] == 2)
                tok[n++] = lab_tok[t][s];
            const float *xc = x + (t * NSEQ + s) * D;
            double z[K], zs = 0.0;
            for (int k = 0; k < K; k++) {
                z[k] = 0.0;
                for (int r = 0; r < D; r++)
                    z[k] += (double)w[k + K * r] * xc[r];
                zs += exp(z[k]);
            }
            for (int k = 0; k < K; k++)
                p[t * K + k] = exp(z[k]) / zs;
        }
        sum += brute(p, T, tok, n, dz);
        for (int t = 0; t < T; t++)
            for (int k = 0; k < K; k++)
                for (int r = 0; r < D; r++)
                    dw[k + K * r] += dz[t * K + k] * x[(t * NSEQ + s) * D + r];
    }
    return sum;
}

static struct nn *ctc_net(struct backend *b, const char *body, float *w)
{
    struct nn *net = try_bs_net(b, "ctc", body, 5);
    if (!net)
        return NULL;
    uint64_t rng = 31;
    for (size_t k = 0; k < K * D; k++)
        w[k] = (float)(test_uniform(&rng) * 2.0 - 1.0);
    set_tensor(net, "W", w);
    return net;
}

START_TEST(ctc_values)
{
    struct backend *b = make_backend();
    float w[K * D];
    struct nn *net = ctc_net(b, CTC_NET("-1"), w);
    if (!net) {
        backend_free(b);
        return;
    }
    struct minibatch mb = {0};
    ctc_minibatch(&mb);
    double dw[K * D];
    double want = reference(mb_find(&mb, "features")->data, w, dw);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_train_step(net, &mb, 0.0f, &st, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(st.samples, 8);
    ck_assert_msg(fabs(st.train_crit - want) <= 1e-4 * fabs(want), "criterion %.9g want %.9g",
                  st.train_crit, want);
    size_t n = nn_param_count(net);
    float *grad = malloc(n * sizeof *grad);
    ck_assert_ptr_nonnull(grad);
    ck_assert_int_eq(nn_get_grads(net, grad, &e), 0);
    const struct nn_tensor *tw = tensor_named(net, "W");
    for (size_t k = 0; k < K * D; k++)
        ck_assert_msg(fabs(grad[tw->offset + k] - dw[k]) <= 1e-4 + 1e-4 * fabs(dw[k]),
                      "dW[%zu] %.9g want %.9g", k, grad[tw->offset + k], dw[k]);
    free(grad);
    nn_free(net);
    /* a constraint wider than the utterances: the same value; a tight one: no more paths */
    static const char *const delays[] = {CTC_NET("10"), CTC_NET("0")};
    for (int i = 0; i < 2; i++) {
        net = ctc_net(b, delays[i], w);
        ck_assert_ptr_nonnull(net);
        ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
        if (i == 0)
            ck_assert_msg(fabs(st.train_crit - want) <= 1e-4 * fabs(want),
                          "delay 10: %.9g want %.9g", st.train_crit, want);
        else
            ck_assert_msg(st.train_crit > want + 1e-3, "delay 0: %.9g, unconstrained %.9g",
                          st.train_crit, want);
        nn_free(net);
    }
    mb_free(&mb);
    backend_free(b);
}
END_TEST

/* EditDistanceError on labels and z given as one-hot rows: per utterance the tokens of each
 * frame, the value errors x frames / the labels' tokens. */
START_TEST(edit_distance_values)
{
    static const struct {
        const char *opts;
        double want; /* errors per label token */
    } cases[] = {
        /* labels 0 0 1 1 2 | 1 1 ; z 0 1 1 2 2 | 1 3: squashed, 3 ignored: 0 1 2 against 0 1
         * 2 (0 errors) and 1 against 1 (0): 0 */
        {"squashInputs = true, tokensToIgnore = 3", 0.0},
        /* not squashed: 0 0 1 1 2 against 0 1 1 2 2: 2 edits; 1 1 against 1: 1 edit; 3/7 */
        {"tokensToIgnore = 3", 3.0 / 7.0},
        /* squashed, nothing ignored: 0 1 2 | 0 1 2 (0) and 1 | 1 3 (1 insertion): 1/4 */
        {"squashInputs = true", 1.0 / 4.0},
        /* insertions cost 3: the same alignment counts 1 error (counts, not costs) */
        {"squashInputs = true, insPen = 3", 1.0 / 4.0},
    };
    static const int lab[STEPS][NSEQ] = {{0, 1}, {0, 1}, {1, -1}, {1, -1}, {2, -1}};
    static const int zt[STEPS][NSEQ] = {{0, 1}, {1, 3}, {1, -1}, {2, -1}, {2, -1}};
    static const uint32_t len[NSEQ] = {5, 2};
    struct backend *b = make_backend();
    for (size_t i = 0; i < COUNT(cases); i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "labels = Input (4)\nzin = Input (4)\nW = Parameter (4, 4)\n"
                 "z = zin + 0 * (W * zin)\nce = SquareError (labels, z)\n"
                 "err = EditDistanceError (labels, z, %s)\n"
                 "criterionNodes = (ce)\nevaluationNodes = (err)\n",
                 cases[i].opts);
        struct nn *net = try_bs_net(b, "edit", body, 5);
        if (!net)
            break;
        struct minibatch mb = {0};
        uint64_t rng = 3;
        fill_input(&mb, "labels", 4, NSEQ, STEPS, len, 0, &rng);
        fill_input(&mb, "zin", 4, NSEQ, STEPS, len, 0, &rng);
        float *l = mb_find(&mb, "labels")->data, *z = mb_find(&mb, "zin")->data;
        memset(l, 0, 4 * NSEQ * STEPS * sizeof *l);
        memset(z, 0, 4 * NSEQ * STEPS * sizeof *z);
        for (size_t t = 0; t < STEPS; t++)
            for (size_t s = 0; s < NSEQ; s++)
                if (t < len[s]) {
                    l[(t * NSEQ + s) * 4 + lab[t][s]] = 1.0f;
                    z[(t * NSEQ + s) * 4 + zt[t][s]] = 1.0f;
                }
        struct nn_stats st;
        struct pt_err e = {0};
        ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
        ck_assert_uint_eq(st.samples, 7);
        double per = st.eval_crit / (double)st.samples;
        ck_assert_msg(fabs(per - cases[i].want) <= 1e-6, "%s: %.9g want %.9g", cases[i].opts, per,
                      cases[i].want);
        mb_free(&mb);
        nn_free(net);
    }
    backend_free(b);
}
END_TEST

START_TEST(ctc_shapes)
{
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"features = Input (3)\nlabels = Input (4)\nz = Parameter (4, 3) * features\n"
         "cr = ForwardBackward (labels, z, 3)\ncriterionNodes = (cr)\n",
         "ForwardBackward: its first operand must be LabelsToGraph (labels)"},
        {"features = Input (3)\nlabels = Input (4)\nz = Parameter (4, 3) * features\n"
         "cr = ForwardBackward (LabelsToGraph (labels), z, 4)\ncriterionNodes = (cr)\n",
         "blankTokenId 4 is no row of the output (4 rows)"},
        {"features = Input (3)\nlabels = Input (5)\nz = Parameter (4, 3) * features\n"
         "cr = ForwardBackward (LabelsToGraph (labels), z, 3)\ncriterionNodes = (cr)\n",
         "must have as many rows"},
        {"features = Input (3)\nlabels = Input (4)\nz = Parameter (4, 3) * features\n"
         "cr = ForwardBackward (LabelsToGraph (labels), z, 3, delayConstraint = -2)\n"
         "criterionNodes = (cr)\n",
         "delayConstraint must be a whole number from -1"},
        {"features = Input (3)\nlabels = Input (4)\nz = Parameter (4, 3) * features\n"
         "ce = CrossEntropyWithSoftmax (labels, z)\n"
         "err = EditDistanceError (labels, z, squashInputs = 1)\ncriterionNodes = (ce)\n"
         "evaluationNodes = (err)\n",
         "squashInputs"},
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        const char *msg = bs_error_of(bad[i].body);
        ck_assert_msg(strstr(msg, "g.cfg:") && strstr(msg, bad[i].msg), "%zu: %s", i, msg);
    }
}
END_TEST

void graph_ctc_tests(TCase *tc)
{
    tcase_add_test(tc, ctc_values);
    tcase_add_test(tc, edit_distance_values);
    tcase_add_test(tc, ctc_shapes);
}
