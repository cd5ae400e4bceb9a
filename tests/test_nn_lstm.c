/* LSTM networks (src/nn/lstm.c): layout and initialization, gradients through time with
 * variable-length sequences (sequence and frame labels), padding invariance, and a small
 * learning check. */
#include "test_nn_util.h"

#define LSTM_NET(sizes, extra)                                                                     \
    "rnnType=LSTM\nlayerSizes=" sizes "\ntrainingCriterion=CrossEntropyWithSoftmax\n"              \
    "evalCriterion=ClassificationError\n" extra

static const uint32_t lens5[5] = {5, 3, 1, 4, 2};

/* features 3 x (T x 5) with lengths lens5; labels one per sequence or one per step. */
static void make_batch(struct minibatch *mb, size_t steps, int frame_labels, uint64_t seed)
{
    fill_input(mb, "features", 3, 5, steps, lens5, 0, &seed);
    fill_input(mb, "labels", 4, 5, frame_labels ? steps : 1, frame_labels ? lens5 : NULL, 1, &seed);
}

START_TEST(lstm_layout_and_gate_biases)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b,
                              LSTM_NET("3:6:5:4", "inputGateInitVal=-0.5\nforgetGateInitVal=1.5\n"
                                                  "outputGateInitVal=-2"),
                              1);
    size_t n = 0;
    const struct nn_tensor *t = nn_tensors(net, &n);
    static const char *const names[] = {"LSTM0.Wx",   "LSTM0.Wh",   "LSTM0.B",
                                        "LSTM0.peep", "LSTM1.Wx",   "LSTM1.Wh",
                                        "LSTM1.B",    "LSTM1.peep", "W2"};
    static const int rows[] = {24, 24, 24, 6, 20, 20, 20, 5, 4};
    static const int cols[] = {3, 6, 1, 3, 6, 5, 1, 3, 5};
    ck_assert_uint_eq(n, 9);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(t[i].name, names[i]);
        ck_assert_int_eq(t[i].rows, rows[i]);
        ck_assert_int_eq(t[i].cols, cols[i]);
        ck_assert_uint_eq(t[i].offset, off);
        off += (size_t)rows[i] * (size_t)cols[i];
    }
    ck_assert_uint_eq(off, nn_param_count(net));
    float *p = malloc(off * sizeof *p);
    struct pt_err e = {0};
    nn_get_params(net, p, &e);
    const float want[4] = {-0.5f, 1.5f, -2.0f, 0.0f};
    for (int k = 0; k < 24; k++)
        ck_assert(p[t[2].offset + (size_t)k] == want[k / 6]);
    for (int k = 0; k < 18; k++) { /* peepholes are random weights */
        float v = p[t[3].offset + (size_t)k];
        ck_assert(v != 0.0f && fabsf(v) <= 0.05f);
    }
    free(p);
    nn_free(net);
    backend_free(b);
}
END_TEST

static void check_lstm_gradients(const char *body, int frame_labels, int mean_var)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, body, 3);
    struct pt_err e = {0};
    if (mean_var) {
        float mean[3] = {0.2f, -0.1f, 0.4f}, inv[3] = {1.5f, 0.7f, 2.0f};
        ck_assert_int_eq(nn_set_mean_var(net, mean, inv, 3, &e), 0);
    }
    struct minibatch mb = {0};
    make_batch(&mb, 5, frame_labels, 31);
    int checked = 0;
    int bad = grad_check(net, &mb, 400, 3e-2f, 5e-5, &checked);
    ck_assert_msg(bad == 0, "%d of %d gradients wrong", bad, checked);
    ck_assert_int_ge(checked, 280);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}

START_TEST(grad_lstm_sequence_labels)
{
    check_lstm_gradients(LSTM_NET("3:6:4", "initValueScale=14"), 0, 0);
}
END_TEST

START_TEST(grad_lstm_frame_labels_stacked)
{
    check_lstm_gradients(LSTM_NET("3:5:4:4", "initValueScale=14"), 1, 0);
}
END_TEST

START_TEST(grad_lstm_sequence_stacked_norm)
{
    check_lstm_gradients(LSTM_NET("3:5:4:4", "initValueScale=14\napplyMeanVarNorm=true\n"
                                             "forgetGateInitVal=0.5\ndefaultHiddenActivity=0.3"),
                         0, 1);
}
END_TEST

START_TEST(grad_lstm_dropout)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, LSTM_NET("3:5:4:4", "initValueScale=14\naddDropoutNodes=true"), 3);
    struct minibatch mb = {0};
    make_batch(&mb, 5, 1, 31);
    int checked = 0;
    ck_assert_int_eq(grad_check_rate(net, &mb, 300, 3e-2f, 5e-5, 0.3f, &checked), 0);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(grad_lstm_square_error_normal_init)
{
    check_lstm_gradients("rnnType=LSTM\nlayerSizes=3:6:4\nuniformInit=false\ninitValueScale=3\n"
                         "trainingCriterion=SquareError\nevalCriterion=SquareError",
                         1, 0);
}
END_TEST

/* The criterion, the gradients and the outputs, after one training step. */
struct run_result {
    struct nn_stats st;
    float *grads;
    float out[4 * 40];
    size_t rows, cols;
};

static void run_net(struct nn *net, struct minibatch *mb, struct run_result *r)
{
    struct pt_err e = {0};
    size_t n = nn_param_count(net);
    r->grads = malloc(n * sizeof *r->grads);
    ck_assert_msg(nn_train_step(net, mb, 0, &r->st, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(nn_get_grads(net, r->grads, &e), 0);
    ck_assert_int_eq(nn_get_output(net, r->out, 4 * 40, &r->rows, &r->cols, &e), 0);
}

static void assert_same_grads(const struct run_result *a, const struct run_result *c, size_t n)
{
    ck_assert(fabs(a->st.train_crit - c->st.train_crit) <= 1e-5 * fabs(a->st.train_crit));
    ck_assert(a->st.eval_crit == c->st.eval_crit);
    ck_assert_uint_eq(a->st.samples, c->st.samples);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(fabsf(a->grads[k] - c->grads[k]) <= 1e-5f + 1e-4f * fabsf(a->grads[k]),
                      "grad %zu: %g vs %g", k, a->grads[k], c->grads[k]);
}

/* Garbage in the padding (features and frame labels) and three more padding steps leave
 * the criteria, gradients and real outputs unchanged. */
static void check_padding(int frame_labels)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, LSTM_NET("3:6:5:4", "initValueScale=10"), 3);
    struct minibatch tight = {0}, loose = {0};
    make_batch(&tight, 5, frame_labels, 8);
    make_batch(&loose, 8, frame_labels, 8);
    struct mb_input *fl = mb_find(&loose, "features"), *ll = mb_find(&loose, "labels");
    for (size_t t = 0; t < 8; t++)
        for (size_t s = 0; s < 5; s++)
            for (int i = 0; t >= lens5[s] && i < 3; i++)
                fl->data[(t * 5 + s) * 3 + (size_t)i] = 100.0f + (float)(t + s + (size_t)i);
    for (size_t k = 0; frame_labels && k < (size_t)ll->dim * 8 * 5; k++)
        if (k / 4 / 5 >= lens5[(k / 4) % 5])
            ll->data[k] = 1.0f;
    struct run_result a, c;
    run_net(net, &tight, &a);
    run_net(net, &loose, &c);
    assert_same_grads(&a, &c, nn_param_count(net));
    size_t real = frame_labels ? 15 : 5;
    ck_assert_uint_eq(a.st.samples, real);
    for (size_t j = 0; j < a.cols; j++) { /* column (t, s) in both layouts */
        size_t t = j / 5, s = j % 5;
        if (frame_labels && t >= lens5[s])
            continue;
        for (size_t i = 0; i < 4; i++)
            ck_assert_msg(fabsf(a.out[j * 4 + i] - c.out[j * 4 + i]) < 1e-5f, "out %zu", j);
    }
    free(a.grads);
    free(c.grads);
    mb_free(&tight);
    mb_free(&loose);
    nn_free(net);
    backend_free(b);
}

START_TEST(padding_sequence_labels)
{
    check_padding(0);
}
END_TEST

START_TEST(padding_frame_labels)
{
    check_padding(1);
}
END_TEST

/* A short sequence alone gives the output it gets inside a padded batch. */
START_TEST(sequence_alone_matches_batch)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, LSTM_NET("3:6:4", "initValueScale=10"), 3);
    struct minibatch batch = {0}, one = {0};
    make_batch(&batch, 5, 0, 8);
    const uint32_t len3[1] = {3};
    uint64_t seed = 1;
    fill_input(&one, "features", 3, 1, 3, len3, 0, &seed);
    fill_input(&one, "labels", 4, 1, 1, NULL, 1, &seed);
    struct mb_input *f = mb_find(&batch, "features"), *g = mb_find(&one, "features");
    for (size_t t = 0; t < 3; t++) /* sequence 1 of the batch has length 3 */
        memcpy(g->data + t * 3, f->data + (t * 5 + 1) * 3, 3 * sizeof(float));
    struct nn_stats st;
    struct pt_err e = {0};
    float out_batch[20], out_one[4];
    size_t rows, cols;
    ck_assert_int_eq(nn_evaluate(net, &batch, &st, &e), 0);
    ck_assert_uint_eq(st.samples, 5);
    nn_get_output(net, out_batch, 20, &rows, &cols, &e);
    ck_assert_uint_eq(cols, 5);
    ck_assert_int_eq(nn_evaluate(net, &one, &st, &e), 0);
    nn_get_output(net, out_one, 4, &rows, &cols, &e);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabsf(out_one[i] - out_batch[4 + i]) < 1e-5f, "%g vs %g", out_one[i],
                      out_batch[4 + i]);
    mb_free(&batch);
    mb_free(&one);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Frame labels count a step only where both inputs have a row. */
START_TEST(frame_labels_need_both_inputs)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, LSTM_NET("3:6:4", ""), 3);
    struct minibatch mb = {0};
    const uint32_t lab_len[5] = {4, 3, 1, 4, 3}; /* features: lens5 = 5, 3, 1, 4, 2 */
    uint64_t seed = 1;
    fill_input(&mb, "features", 3, 5, 5, lens5, 0, &seed);
    fill_input(&mb, "labels", 4, 5, 5, lab_len, 1, &seed);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), 0);
    ck_assert_uint_eq(st.samples, 4 + 3 + 1 + 4 + 2);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(label_steps_error)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, LSTM_NET("3:6:4", ""), 3);
    struct minibatch mb = {0};
    uint64_t seed = 1;
    fill_input(&mb, "features", 3, 2, 5, NULL, 0, &seed);
    fill_input(&mb, "labels", 4, 2, 3, NULL, 1, &seed);
    struct nn_stats st;
    struct pt_err e = {0};
    pt_err_clear(&e);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:3:12: error: the minibatch's sequences have up to 3 label "
                                "rows and up to 5 feature rows"),
                  "%s", e.msg);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Class = sign of the first step's first feature, read at the end of the sequence: the
 * network has to remember it through 2-6 steps. */
START_TEST(sgd_learns_to_remember)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b,
                              "rnnType=LSTM\nlayerSizes=2:8:2\ninitValueScale=6\n"
                              "trainingCriterion=CrossEntropyWithSoftmax\n"
                              "evalCriterion=ClassificationError",
                              5);
    struct minibatch mb = {0};
    uint32_t len[32];
    uint64_t seed = 3;
    for (int s = 0; s < 32; s++)
        len[s] = 2 + (uint32_t)(test_uniform(&seed) * 5);
    fill_input(&mb, "features", 2, 32, 6, len, 0, &seed);
    fill_input(&mb, "labels", 2, 32, 1, NULL, 1, &seed);
    float *x = mb_find(&mb, "features")->data, *y = mb_find(&mb, "labels")->data;
    for (int s = 0; s < 32; s++) {
        y[s * 2] = (float)(x[s * 2] > 0);
        y[s * 2 + 1] = (float)(x[s * 2] <= 0);
    }
    size_t n = nn_param_count(net);
    float *w = malloc(n * 4), *g = malloc(n * 4);
    struct nn_stats first, st;
    struct pt_err e = {0};
    nn_get_params(net, w, &e);
    for (int it = 0; it < 800; it++) {
        ck_assert_int_eq(nn_train_step(net, &mb, 0, &st, &e), 0);
        if (it == 0)
            first = st;
        nn_get_grads(net, g, &e);
        for (size_t k = 0; k < n; k++)
            w[k] -= 0.05f * g[k];
        nn_set_params(net, w, &e);
    }
    nn_evaluate(net, &mb, &st, &e);
    ck_assert_msg(st.train_crit < 0.05 * first.train_crit, "%g -> %g", first.train_crit,
                  st.train_crit);
    ck_assert_msg(st.eval_crit == 0, "errors %g (criterion %g -> %g)", st.eval_crit,
                  first.train_crit, st.train_crit);
    free(w);
    free(g);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn_lstm");
    TCase *tc = tcase_create("lstm");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lstm_layout_and_gate_biases);
    tcase_add_test(tc, grad_lstm_sequence_labels);
    tcase_add_test(tc, grad_lstm_frame_labels_stacked);
    tcase_add_test(tc, grad_lstm_sequence_stacked_norm);
    tcase_add_test(tc, grad_lstm_dropout);
    tcase_add_test(tc, grad_lstm_square_error_normal_init);
    tcase_add_test(tc, padding_sequence_labels);
    tcase_add_test(tc, padding_frame_labels);
    tcase_add_test(tc, sequence_alone_matches_batch);
    tcase_add_test(tc, frame_labels_need_both_inputs);
    tcase_add_test(tc, label_steps_error);
    tcase_add_test(tc, sgd_learns_to_remember);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
