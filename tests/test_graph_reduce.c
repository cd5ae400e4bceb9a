/* Part of tests/test_graph: the values of reductions, criteria read by other nodes, the
 * statistics of rows of an input and a value per sample broadcast over rows (CNTK's
 * ReduceSum/ReduceMean/ReduceLogSum, SumElements, MeanVarNorm of a slice,
 * LayerNormalizationLayer, LambdaRank and NDCG1Eval), computed by hand or against each
 * other. */
#include <math.h>

#include "test_graph.h"

/* ReduceSum and ReduceMean as a network's own criterion and evaluation node: the squared
 * error's sum and mean over the rows, summed over the samples, against SquareError. */
START_TEST(values_reduce)
{
    struct backend *b = make_backend();
    static const char *const body[2] = {
        "features = Input (3)\nlabels = Input (4)\nW = Parameter (4, 3)\n"
        "d = labels - W * features\ns = ReduceSum (d .* d)\nm = ReduceMean (d .* d, axis = 1)\n"
        "criterionNodes = (s)\nevaluationNodes = (m)\n",
        "features = Input (3)\nlabels = Input (4)\nW = Parameter (4, 3)\n"
        "se = SquareError (labels, W * features)\ncriterionNodes = (se)\n"};
    struct nn_stats st[2];
    for (int k = 0; k < 2; k++) {
        struct nn *net = make_bs_net(b, body[k], 5);
        struct minibatch mb = {0};
        uint64_t rng = 11;
        fill_input(&mb, "features", 3, 6, 1, NULL, 0, &rng);
        fill_input(&mb, "labels", 4, 6, 1, NULL, 0, &rng);
        struct pt_err e = {0};
        ck_assert_msg(nn_evaluate(net, &mb, &st[k], &e) == 0, "%s", e.msg);
        mb_free(&mb);
        nn_free(net);
    }
    ck_assert_msg(st[1].train_crit > 0 &&
                      fabs(st[0].train_crit - st[1].train_crit) < 1e-5 * st[1].train_crit,
                  "ReduceSum %g, SquareError %g", st[0].train_crit, st[1].train_crit);
    ck_assert_msg(fabs(4 * st[0].eval_crit - st[1].train_crit) < 1e-5 * st[1].train_crit,
                  "ReduceMean %g, SquareError / 4 %g", st[0].eval_crit, st[1].train_crit / 4);
    backend_free(b);
}
END_TEST

/* Criteria read by other nodes are the minibatch's sums (CNTK's criteria): a weighted sum
 * of two evaluates to that sum of the two as evaluation nodes, and SumElements to the sum
 * of every value of the minibatch. */
START_TEST(values_criteria_as_operands)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 IO WB "z = W * features + b\n"
                                       "ceA = CrossEntropyWithSoftmax (labels, z)\n"
                                       "se = SquareError (labels, Tanh (z))\n"
                                       "ce = Constant (0.3) .* ceA + se\n"
                                       "s = SumElements (labels .* 2)\n"
                                       "criterionNodes = (ce)\nevaluationNodes = (ceA : se : s)\n",
                                 5);
    struct minibatch mb = {0};
    uint64_t rng = 11;
    fill_input(&mb, "features", 3, 6, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 6, 1, NULL, 1, &rng);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    double want = 0.3 * st.eval_crit + st.eval_more[0];
    ck_assert_msg(st.eval_crit > 0 && st.eval_more[0] > 0 &&
                      fabs(st.train_crit - want) < 1e-5 * want,
                  "ce %g, 0.3 ceA + se %g", st.train_crit, want);
    ck_assert_msg(fabs(st.eval_more[1] - 12.0) < 1e-5, "SumElements of 6 one-hot labels x 2: %g",
                  st.eval_more[1]);
    ck_assert_int_eq(st.samples, 6);
    mb_free(&mb);
    nn_free(net);
    /* the speech configs' cross entropy by hand is CrossEntropyWithSoftmax, also where
     * the outputs are far apart (a log-sum-exp that would overflow exp in float) */
    net = make_bs_net(b,
                      IO WB "z = W * features + b\nzz = z .* 60\n"
                            "ce = CrossEntropyWithSoftmax (labels, zz)\n"
                            "own = ReduceLogSum (zz) - TransposeTimes (labels, zz)\n"
                            "criterionNodes = (ce)\nevaluationNodes = (own)\n",
                      5);
    rng = 11;
    fill_input(&mb, "features", 3, 6, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 6, 1, NULL, 1, &rng);
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    ck_assert_msg(st.train_crit > 10 && fabs(st.eval_crit - st.train_crit) < 1e-5 * st.train_crit,
                  "CrossEntropyWithSoftmax %g, ReduceLogSum - TransposeTimes %g", st.train_crit,
                  st.eval_crit);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* The statistics of rows of an Input (the speech configs' MeanVarNorm of the features'
 * last frame, RowSlice of a Transpose): those rows of the Input's, set once for all of it. */
START_TEST(values_stats_of_rows)
{
    struct backend *b = make_backend();
    struct nn *net =
        make_bs_net(b,
                    "features = Input {1 : 4}\nlabels = Input (2, tag = 'label')\n"
                    "s = RowSlice (1, 2, Transpose (features))\n"
                    "n = PerDimMeanVarNormalization (s, Mean (s), InvStdDev (s))\n"
                    "W = Parameter (2, 2)\nz = W * n\n"
                    "ce = SumElements (ReduceLogSum (z) - TransposeTimes (labels, z))\n"
                    "criterionNodes = (ce)\noutputNodes = (n)\n",
                    5);
    static const float mean[4] = {0.5f, -1, 2, 3}, inv[4] = {1, 0.5f, 4, 0.25f};
    static const float x[8] = {1, 2, 3, 4, -1, 0, 0.5f, 8}, y[4] = {1, 0, 0, 1};
    struct pt_err e = {0};
    ck_assert_msg(nn_set_mean_var(net, mean, inv, 4, &e) == 0, "%s", e.msg);
    struct minibatch mb = {0};
    set_input(&mb, "features", 4, 2, x);
    set_input(&mb, "labels", 2, 2, y);
    struct nn_stats st;
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[4];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 4, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows, 2);
    ck_assert_uint_eq(cols, 2);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            double want = (x[4 * j + 1 + i] - mean[1 + i]) * inv[1 + i];
            ck_assert_msg(fabs(out[2 * j + i] - want) < 1e-6, "n[%d,%d] %g want %g", i, j,
                          out[2 * j + i], want);
        }
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* CNTK's LayerNormalizationLayer: each sample's values to mean 0 and deviation 1 (the
 * mean and deviation broadcast over its rows), times the gain, plus the bias. */
START_TEST(values_layer_norm)
{
    struct backend *b = make_backend();
    struct nn *net = make_bs_net(b,
                                 "features = Input (4)\nlabels = Input (4)\n"
                                 "n = LayerNormalizationLayer {initScale = 2, initBias = 0.5} "
                                 "(features)\nce = CrossEntropyWithSoftmax (labels, n)\n"
                                 "criterionNodes = (ce)\noutputNodes = (n)\n",
                                 5);
    static const float x[12] = {1, 2, 3, 6, -1, 0, 0, 1, 5, 5, 5, 9};
    static const float y[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
    struct minibatch mb = {0};
    set_input(&mb, "features", 4, 3, x);
    set_input(&mb, "labels", 4, 3, y);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    float out[12];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 12, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows * cols, 12);
    for (int j = 0; j < 3; j++) {
        double mean = 0, var = 0;
        for (int i = 0; i < 4; i++)
            mean += x[4 * j + i] / 4.0;
        for (int i = 0; i < 4; i++)
            var += (x[4 * j + i] - mean) * (x[4 * j + i] - mean) / 4.0;
        for (int i = 0; i < 4; i++) {
            double want = (x[4 * j + i] - mean) / sqrt(var) * 2 + 0.5;
            ck_assert_msg(fabs(out[4 * j + i] - want) < 1e-5, "n[%d,%d] %g want %g", i, j,
                          out[4 * j + i], want);
        }
    }
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* CNTK's ranking criteria (IRMetric): two queries, their documents ordered by gain;
 * LambdaRank (1 - mean NDCG) * 100 * samples and NDCG1Eval mean NDCG@1 * 100 * samples
 * against the formulas by hand, and LambdaRank's gradient for a pair. The score is
 * w * x with w = 1, so dL/dw = sum_j dL/ds_j x_j. */
START_TEST(values_ranking)
{
    struct backend *b = make_backend();
    struct nn *net = NULL;
    if (!(net = try_bs_net(b, "values_ranking",
                           "x = Input (1)\ngain = Input (1)\nqid = Input (1)\n"
                           "w = ParameterTensor {(1 : 1), initValue = 1}\ns = w * x\n"
                           "irm = LambdaRank (gain, s, qid, tag = 'criterion')\n"
                           "irm1 = NDCG1Eval (gain, s, qid, tag = 'evaluation')\n",
                           5))) {
        backend_free(b);
        return;
    }
    /* query 7: gains 3, 1, 0 scored 0.1, 0.5, 0.2 (ranks 2, 0, 1); query 9: 1, 0 scored
     * 2, 1 (in order) */
    static const float x[5] = {0.1f, 0.5f, 0.2f, 2, 1}, gn[5] = {3, 1, 0, 1, 0},
                       q[5] = {7, 7, 7, 9, 9};
    struct minibatch mb = {0};
    set_input(&mb, "x", 1, 5, x);
    set_input(&mb, "gain", 1, 5, gn);
    set_input(&mb, "qid", 1, 5, q);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    double ideal7 = 3 / log(2) + 1 / log(3), dcg7 = 3 / log(4) + 1 / log(2);
    double ndcg = (dcg7 / ideal7 + 1.0) / 2; /* query 9 is in order: 1 */
    double ndcg1 = ((1 / log(2)) / (3 / log(2)) + 1.0) / 2;
    ck_assert_msg(fabs(st.train_crit - (1 - ndcg) * 100 * 5) < 1e-3, "LambdaRank %.6g want %.6g",
                  st.train_crit, (1 - ndcg) * 100 * 5);
    ck_assert_msg(fabs(st.eval_crit - ndcg1 * 100 * 5) < 1e-3, "NDCG1Eval %.6g want %.6g",
                  st.eval_crit, ndcg1 * 100 * 5);
    ck_assert_int_eq(st.samples, 5);
    mb_free(&mb);
    /* the gradient of one query of two, gains 3 and 0, scored 0.2 and 0.7 (misranked):
     * lambda = -|delta NDCG| / (1 + e^(s0 - s1)), |delta NDCG| = (ln 3 - ln 2) / ln 3 */
    static const float x2[2] = {0.2f, 0.7f}, g2[2] = {3, 0}, q2[2] = {1, 1};
    set_input(&mb, "x", 1, 2, x2);
    set_input(&mb, "gain", 1, 2, g2);
    set_input(&mb, "qid", 1, 2, q2);
    ck_assert_msg(nn_train_step(net, &mb, 0.0f, &st, &e) == 0, "%s", e.msg);
    float dw = 0;
    ck_assert_int_eq(nn_get_grads(net, &dw, &e), 0);
    double lambda = -((log(3) - log(2)) / log(3)) / (1 + exp(0.2 - 0.7));
    double want = lambda * 0.2 - lambda * 0.7;
    ck_assert_msg(fabs(dw - want) < 1e-6, "dL/dw %.9g want %.9g", dw, want);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

void graph_reduce_tests(TCase *tc)
{
    tcase_add_test(tc, values_ranking);
    tcase_add_test(tc, values_reduce);
    tcase_add_test(tc, values_criteria_as_operands);
    tcase_add_test(tc, values_stats_of_rows);
    tcase_add_test(tc, values_layer_norm);
}
