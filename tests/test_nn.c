/* Feed-forward networks (src/nn): configuration, the parameter arena, initialization,
 * gradients (finite differences), criteria as sums, dropout, input errors, and a small
 * end-to-end SGD run. */
#include "test_nn_util.h"

#define MLP(extra)                                                                                 \
    "layerSizes = 5:7:6:4\n trainingCriterion = CrossEntropyWithSoftmax\n"                         \
    " evalCriterion = ClassificationError\n " extra

/* ------------------------------------------------------------------ configuration */

START_TEST(config_defaults)
{
    struct nn_config c;
    struct pt_err e = {0};
    ck_assert_int_eq(
        parse_net_config("layerSizes=784:512*2:10\ntrainingCriterion=crossentropywithsoftmax\n"
                         "evalCriterion=errorPrediction",
                         &c, &e),
        0);
    ck_assert_int_eq(c.rnn, NN_SIMPLENET);
    ck_assert_int_eq(c.nsizes, 4);
    ck_assert_int_eq(c.sizes[1], 512);
    ck_assert_int_eq(c.sizes[2], 512);
    ck_assert_int_eq(c.acts[0], BK_ACT_SIGMOID);
    ck_assert_int_eq(c.acts[1], BK_ACT_SIGMOID);
    ck_assert_int_eq(c.train_crit, BK_CRIT_CE_SOFTMAX);
    ck_assert_str_eq(c.train_name, "CrossEntropyWithSoftmax");
    ck_assert_int_eq(c.eval_crit, BK_CRIT_CLASS_ERR);
    ck_assert_str_eq(c.eval_name, "ErrorPrediction");
    ck_assert_int_eq(c.uniform_init, 1);
    ck_assert(c.init_scale == 1.0);
    ck_assert(c.gate_init[0] == -1.0 && c.gate_init[1] == -1.0 && c.gate_init[2] == -1.0);
    ck_assert(fabs(c.hidden_activity - 0.1) < 1e-12);
    ck_assert_int_eq(c.mean_var_norm + c.need_prior + c.dropout, 0);
    ck_assert_str_eq(c.origin, "n.cfg:2:12");
}
END_TEST

START_TEST(config_layer_types_repeat)
{
    struct nn_config c;
    struct pt_err e = {0};
    ck_assert_int_eq(parse_net_config("layerSizes=3:4:4:4:2\nlayerTypes=Tanh:rectifiedlinear\n"
                                      "trainingCriterion=SquareError\nevalCriterion=SquareError",
                                      &c, &e),
                     0);
    ck_assert_int_eq(c.acts[0], BK_ACT_TANH);
    ck_assert_int_eq(c.acts[1], BK_ACT_RELU);
    ck_assert_int_eq(c.acts[2], BK_ACT_RELU);
    ck_assert_int_eq(c.train_crit, BK_CRIT_SQUARE_ERR);
}
END_TEST

START_TEST(config_errors)
{
    struct nn_config c;
    struct pt_err e = {0};
    ck_assert_int_eq(parse_net_config("layerSizes=784\ntrainingCriterion=SquareError\n"
                                      "evalCriterion=SquareError",
                                      &c, &e),
                     PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:2:12: error: layerSizes: expected") != NULL, "%s", e.msg);
    ck_assert_int_eq(
        parse_net_config("rnnType=LSTM\nlayerSizes=4:2\ntrainingCriterion=SquareError\n"
                         "evalCriterion=SquareError",
                         &c, &e),
        PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:3:12: error: layerSizes") != NULL, "%s", e.msg);
    ck_assert_msg(strstr(e.msg, "at least 3") != NULL, "%s", e.msg);
    ck_assert_int_eq(parse_net_config("layerSizes=4:3:2\nlayerTypes=Tanh:Sigmoid\n"
                                      "trainingCriterion=SquareError\nevalCriterion=SquareError",
                                      &c, &e),
                     PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:3:12: error: layerTypes: 2 entries") != NULL, "%s", e.msg);
    ck_assert_int_eq(parse_net_config("layerSizes=4:3:2\ntrainingCriterion=ClassificationError\n"
                                      "evalCriterion=SquareError",
                                      &c, &e),
                     PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:3:19: error: trainingCriterion") != NULL, "%s", e.msg);
    ck_assert_int_eq(parse_net_config("layerSizes=4:x*2:2\ntrainingCriterion=SquareError\n"
                                      "evalCriterion=SquareError",
                                      &c, &e),
                     PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:2:12: error: ") && strstr(e.msg, "\"x\""), "%s", e.msg);
    ck_assert_int_eq(parse_net_config("layerSizes=4:3:2\ntrainingCriterion=SquareError", &c, &e),
                     PT_EUSER);
    ck_assert_msg(strstr(e.msg, "evalCriterion") != NULL, "%s", e.msg);
}
END_TEST

/* ------------------------------------------------------------------ arena and init */

START_TEST(tensor_table_covers_arena)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, MLP(""), 1);
    size_t n = 0;
    const struct nn_tensor *t = nn_tensors(net, &n);
    static const char *const names[] = {"W0", "B0", "W1", "B1", "W2", "B2"};
    static const int rows[] = {7, 7, 6, 6, 4, 4}, cols[] = {5, 1, 7, 1, 6, 1};
    ck_assert_uint_eq(n, 6);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(t[i].name, names[i]);
        ck_assert_int_eq(t[i].rows, rows[i]);
        ck_assert_int_eq(t[i].cols, cols[i]);
        ck_assert_uint_eq(t[i].offset, off);
        off += (size_t)t[i].rows * (size_t)t[i].cols;
    }
    ck_assert_uint_eq(off, nn_param_count(net));
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Mean and standard deviation of tensor i's values. */
static void tensor_stats(struct nn *net, const char *name, double *mean, double *sd, double *lo,
                         double *hi)
{
    size_t n = 0, count = nn_param_count(net);
    const struct nn_tensor *t = nn_tensors(net, &n);
    float *p = malloc(count * sizeof *p);
    struct pt_err e = {0};
    ck_assert_int_eq(nn_get_params(net, p, &e), 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].name, name) != 0)
            continue;
        size_t m = (size_t)t[i].rows * (size_t)t[i].cols;
        double s = 0, s2 = 0;
        *lo = INFINITY;
        *hi = -INFINITY;
        for (size_t k = 0; k < m; k++) {
            double v = p[t[i].offset + k];
            s += v;
            s2 += v * v;
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
        *mean = s / (double)m;
        *sd = sqrt(s2 / (double)m - *mean * *mean);
    }
    free(p);
}

START_TEST(init_uniform)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b,
                              "layerSizes=200:300:10\ninitValueScale=2\n"
                              "trainingCriterion=SquareError\nevalCriterion=SquareError",
                              7);
    double mean, sd, lo, hi;
    tensor_stats(net, "W0", &mean, &sd, &lo, &hi);
    ck_assert(lo >= -0.1 && hi <= 0.1); /* U(-0.05 s, 0.05 s), s = 2 */
    ck_assert(lo < -0.099 && hi > 0.099);
    ck_assert(fabs(mean) < 0.002);
    ck_assert(fabs(sd - 0.1 / sqrt(3.0)) < 0.002);
    tensor_stats(net, "B0", &mean, &sd, &lo, &hi);
    ck_assert(lo == 0.0 && hi == 0.0);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(init_normal)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b,
                              "layerSizes=400:300:10\nuniformInit=false\ninitValueScale=3\n"
                              "trainingCriterion=SquareError\nevalCriterion=SquareError",
                              7);
    double mean, sd, lo, hi, want = 0.2 / sqrt(400.0) * 3.0;
    tensor_stats(net, "W0", &mean, &sd, &lo, &hi);
    ck_assert_msg(fabs(sd - want) < 0.02 * want, "sd %g want %g", sd, want);
    ck_assert(fabs(mean) < 0.01 * want * 10);
    ck_assert(hi > 3.5 * want && lo < -3.5 * want); /* tails of a normal, not a box */
    tensor_stats(net, "W1", &mean, &sd, &lo, &hi);
    want = 0.2 / sqrt(300.0) * 3.0;
    ck_assert_msg(fabs(sd - want) < 0.05 * want, "sd %g want %g", sd, want);
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(init_deterministic)
{
    struct backend *b = make_backend();
    struct nn *a = make_net(b, MLP(""), 42), *c = make_net(b, MLP(""), 42);
    struct nn *d = make_net(b, MLP(""), 43);
    size_t n = nn_param_count(a);
    float *pa = malloc(n * 4), *pc = malloc(n * 4), *pd = malloc(n * 4);
    struct pt_err e = {0};
    nn_get_params(a, pa, &e);
    nn_get_params(c, pc, &e);
    nn_get_params(d, pd, &e);
    ck_assert(memcmp(pa, pc, n * 4) == 0);
    ck_assert(memcmp(pa, pd, n * 4) != 0);
    free(pa);
    free(pc);
    free(pd);
    nn_free(a);
    nn_free(c);
    nn_free(d);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ gradients */

static void check_mlp_gradients(const char *body, int label_one_hot)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, body, 3);
    jitter_params(net, 0.1f, 17);
    struct minibatch mb = {0};
    uint64_t rng = 99;
    fill_input(&mb, "features", 5, 6, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 6, 1, NULL, label_one_hot, &rng);
    int checked = 0;
    int bad = grad_check(net, &mb, 1000, 1e-3f, 2e-3, &checked);
    ck_assert_int_eq(checked, (int)nn_param_count(net));
    ck_assert_msg(bad == 0, "%d of %d gradients wrong", bad, checked);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}

START_TEST(grad_sigmoid_ce)
{
    check_mlp_gradients(MLP("layerTypes=Sigmoid\ninitValueScale=20"), 1);
}
END_TEST

START_TEST(grad_tanh_ce)
{
    check_mlp_gradients(MLP("layerTypes=Tanh\ninitValueScale=12"), 1);
}
END_TEST

START_TEST(grad_relu_ce)
{
    check_mlp_gradients(MLP("layerTypes=RectifiedLinear\ninitValueScale=15"), 1);
}
END_TEST

START_TEST(grad_none_square_error)
{
    check_mlp_gradients("layerSizes=5:7:6:4\nlayerTypes=None:Sigmoid\ninitValueScale=10\n"
                        "trainingCriterion=SquareError\nevalCriterion=ClassificationError",
                        0);
}
END_TEST

START_TEST(grad_soft_labels_ce)
{
    /* non-one-hot targets: the gradient is sum(y) softmax - y, not softmax - y */
    check_mlp_gradients(MLP("layerTypes=Tanh\ninitValueScale=12"), 0);
}
END_TEST

START_TEST(grad_mean_var_norm)
{
    struct backend *b = make_backend();
    struct nn *net =
        make_net(b, MLP("applyMeanVarNorm=true\nlayerTypes=Tanh\ninitValueScale=12"), 3);
    float mean[5] = {0.1f, -0.2f, 0.3f, 0.0f, 0.5f}, inv[5] = {2.0f, 0.5f, 1.5f, 1.0f, 3.0f};
    struct pt_err e = {0};
    ck_assert_int_eq(nn_set_mean_var(net, mean, inv, 5, &e), 0);
    ck_assert_int_eq(nn_set_mean_var(net, mean, inv, 4, &e), PT_EUSER);
    struct minibatch mb = {0};
    uint64_t rng = 5;
    fill_input(&mb, "features", 5, 6, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 6, 1, NULL, 1, &rng);
    int checked = 0;
    ck_assert_int_eq(grad_check(net, &mb, 1000, 1e-3f, 2e-3, &checked), 0);
    /* normalization is applied: the same net with identity statistics differs */
    struct nn_stats s1, s2;
    nn_evaluate(net, &mb, &s1, &e);
    float zero[5] = {0}, one[5] = {1, 1, 1, 1, 1};
    nn_set_mean_var(net, zero, one, 5, &e);
    nn_evaluate(net, &mb, &s2, &e);
    ck_assert(s1.train_crit != s2.train_crit);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* A training loop's minibatch (in_place): its features normalized where they are and read
 * there, the same criteria and gradients as from the network's own copy, normalized once
 * when loaded twice; any other minibatch is left as it was (on a GPU every minibatch is:
 * the device normalizes what it uploaded). */
START_TEST(features_in_place)
{
    struct backend *b = make_backend();
    const char *cfg = MLP("applyMeanVarNorm=true\nlayerTypes=Tanh\ninitValueScale=12");
    float mean[5] = {0.1f, -0.2f, 0.3f, 0.0f, 0.5f}, inv[5] = {2.0f, 0.5f, 1.5f, 1.0f, 3.0f};
    struct pt_err e = {0};
    struct nn *net[2];
    struct minibatch mb[2] = {{0}}; /* the same samples; the second one in_place */
    struct nn_stats st[2];
    for (int k = 0; k < 2; k++) {
        net[k] = make_net(b, cfg, 3);
        ck_assert_int_eq(nn_set_mean_var(net[k], mean, inv, 5, &e), 0);
        uint64_t rng = 5;
        fill_input(&mb[k], "features", 5, 6, 1, NULL, 0, &rng);
        fill_input(&mb[k], "labels", 4, 6, 1, NULL, 1, &rng);
        mb[k].in_place = k;
    }
    float raw[30];
    memcpy(raw, mb[0].in[0].data, sizeof raw);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(nn_train_forward(net[k], &mb[k], 0.0f, &st[k], &e), 0);
            ck_assert_int_eq(nn_train_backward(net[k], &st[k], &e), 0);
        }
        ck_assert(memcmp(&st[0].train_crit, &st[1].train_crit, sizeof st[0].train_crit) == 0);
        size_t n = nn_param_count(net[0]);
        float *g[2];
        for (int k = 0; k < 2; k++) { /* device memory on a GPU: downloaded */
            g[k] = malloc(n * sizeof *g[k]);
            ck_assert_ptr_nonnull(g[k]);
            ck_assert_int_eq(b->ops->download(b, g[k], nn_grads(net[k]), n, &e), 0);
        }
        ck_assert(memcmp(g[0], g[1], n * sizeof(float)) == 0);
        free(g[0]);
        free(g[1]);
    }
    ck_assert(memcmp(mb[0].in[0].data, raw, sizeof raw) == 0);
    if (b->host_memory) { /* a device normalizes its own copy: the host's stays as read */
        ck_assert(mb[1].in[0].normalized && memcmp(mb[1].in[0].data, raw, sizeof raw) != 0);
        for (int i = 0; i < 30; i++)
            ck_assert(mb[1].in[0].data[i] == (raw[i] - mean[i % 5]) * inv[i % 5]);
    } else {
        ck_assert(memcmp(mb[1].in[0].data, raw, sizeof raw) == 0);
    }
    for (int k = 0; k < 2; k++) {
        mb_free(&mb[k]);
        nn_free(net[k]);
    }
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ criteria */

START_TEST(criteria_are_sums)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, MLP("initValueScale=10"), 3);
    struct minibatch one = {0}, two = {0};
    uint64_t r1 = 8, r2 = 8;
    fill_input(&one, "features", 5, 3, 1, NULL, 0, &r1);
    fill_input(&one, "labels", 4, 3, 1, NULL, 1, &r1);
    /* the same three samples, twice */
    fill_input(&two, "features", 5, 6, 1, NULL, 0, &r2);
    fill_input(&two, "labels", 4, 6, 1, NULL, 1, &r2);
    struct mb_input *f1 = mb_find(&one, "features"), *f2 = mb_find(&two, "features");
    struct mb_input *l1 = mb_find(&one, "labels"), *l2 = mb_find(&two, "labels");
    for (int k = 0; k < 2; k++) {
        memcpy(f2->data + k * 15, f1->data, 15 * sizeof(float));
        memcpy(l2->data + k * 12, l1->data, 12 * sizeof(float));
    }
    size_t n = nn_param_count(net);
    float *g1 = malloc(n * 4), *g2 = malloc(n * 4);
    struct nn_stats s1, s2;
    struct pt_err e = {0};
    ck_assert_int_eq(nn_train_step(net, &one, 0, &s1, &e), 0);
    nn_get_grads(net, g1, &e);
    ck_assert_int_eq(nn_train_step(net, &two, 0, &s2, &e), 0);
    nn_get_grads(net, g2, &e);
    ck_assert_uint_eq(s1.samples, 3);
    ck_assert_uint_eq(s2.samples, 6);
    ck_assert(fabs(s2.train_crit - 2 * s1.train_crit) < 1e-5 * s2.train_crit);
    ck_assert(fabs(s2.eval_crit - 2 * s1.eval_crit) < 1e-9);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(fabs(g2[k] - 2 * g1[k]) < 1e-5 + 1e-4 * fabs(g2[k]), "grad %zu", k);
    free(g1);
    free(g2);
    mb_free(&one);
    mb_free(&two);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ClassificationError counts wrong argmaxes; the output is linear logits. */
START_TEST(classification_error_counts)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, MLP("initValueScale=30"), 11);
    struct minibatch mb = {0};
    uint64_t rng = 21;
    fill_input(&mb, "features", 5, 40, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 40, 1, NULL, 1, &rng);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), 0);
    float out[4 * 40];
    size_t rows, cols;
    ck_assert_int_eq(nn_get_output(net, out, 4 * 40, &rows, &cols, &e), 0);
    ck_assert_uint_eq(rows, 4);
    ck_assert_uint_eq(cols, 40);
    const float *lab = mb_find(&mb, "labels")->data;
    int wrong = 0;
    double ce = 0;
    for (size_t j = 0; j < cols; j++) {
        int best = 0, truth = 0;
        double s = 0;
        for (int i = 0; i < 4; i++) {
            best = out[j * 4 + i] > out[j * 4 + best] ? i : best;
            truth = lab[j * 4 + i] > 0.5f ? i : truth;
            s += exp(out[j * 4 + i]);
        }
        wrong += best != truth;
        ce += log(s) - out[j * 4 + truth];
    }
    ck_assert(st.eval_crit == wrong);
    ck_assert(wrong > 0 && wrong < 40);
    ck_assert_msg(fabs(st.train_crit - ce) < 1e-4 * ce, "%g vs %g", st.train_crit, ce);
    ck_assert_int_eq(nn_get_output(net, out, 10, &rows, &cols, &e), PT_EUSER);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* A feed-forward network on padded sequences classifies every real frame, the same as
 * when each frame is its own sample. */
START_TEST(mlp_on_padded_sequences)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, MLP("initValueScale=10"), 3);
    struct minibatch seq = {0}, flat = {0};
    const uint32_t len[3] = {3, 1, 2};
    uint64_t r1 = 6, r2 = 6;
    fill_input(&seq, "features", 5, 3, 3, len, 0, &r1);
    fill_input(&seq, "labels", 4, 3, 3, len, 1, &r1);
    fill_input(&flat, "features", 5, 6, 1, NULL, 0, &r2);
    fill_input(&flat, "labels", 4, 6, 1, NULL, 1, &r2);
    struct mb_input *fs = mb_find(&seq, "features"), *ls = mb_find(&seq, "labels");
    struct mb_input *ff = mb_find(&flat, "features"), *lf = mb_find(&flat, "labels");
    int j = 0;
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < 3; s++) {
            if (t >= len[s]) {
                fs->data[(t * 3 + s) * 5] = 50.0f; /* garbage in the padding */
                continue;
            }
            memcpy(ff->data + j * 5, fs->data + (t * 3 + s) * 5, 5 * sizeof(float));
            memcpy(lf->data + j * 4, ls->data + (t * 3 + s) * 4, 4 * sizeof(float));
            j++;
        }
    struct nn_stats a, c;
    struct pt_err e = {0};
    ck_assert_int_eq(nn_train_step(net, &seq, 0, &a, &e), 0);
    ck_assert_int_eq(nn_train_step(net, &flat, 0, &c, &e), 0);
    ck_assert_uint_eq(a.samples, 6);
    ck_assert(fabs(a.train_crit - c.train_crit) < 1e-5 * c.train_crit);
    ck_assert(a.eval_crit == c.eval_crit);
    mb_free(&seq);
    mb_free(&flat);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ dropout */

START_TEST(dropout_behaviour)
{
    struct backend *b = make_backend();
    struct nn *plain = make_net(b, MLP("initValueScale=10"), 5);
    struct nn *drop = make_net(b, MLP("initValueScale=10\naddDropoutNodes=true"), 5);
    struct minibatch mb = {0};
    uint64_t rng = 4;
    fill_input(&mb, "features", 5, 64, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 64, 1, NULL, 1, &rng);
    struct nn_stats a, c, d, x;
    struct pt_err e = {0};
    nn_train_step(plain, &mb, 0.0f, &a, &e);
    ck_assert_int_eq(nn_train_step(drop, &mb, 0.0f, &c, &e), 0);
    ck_assert(a.train_crit == c.train_crit); /* rate 0: no dropout */
    nn_set_dropout_state(drop, 7);
    ck_assert_int_eq(nn_train_step(drop, &mb, 0.5f, &d, &e), 0);
    ck_assert(d.train_crit != a.train_crit);
    nn_set_dropout_state(drop, 7); /* same stream position: same mask */
    nn_train_step(drop, &mb, 0.5f, &x, &e);
    ck_assert(x.train_crit == d.train_crit);
    ck_assert_uint_eq(nn_get_dropout_state(drop), 8);
    nn_train_step(drop, &mb, 0.5f, &x, &e); /* next step, new mask */
    ck_assert(x.train_crit != d.train_crit);
    nn_evaluate(drop, &mb, &x, &e); /* evaluation never drops */
    ck_assert(x.train_crit == a.train_crit);
    ck_assert_int_eq(nn_train_step(drop, &mb, 1.0f, &x, &e), PT_EUSER);
    mb_free(&mb);
    nn_free(plain);
    nn_free(drop);
    backend_free(b);
}
END_TEST

/* Backward through a dropout mask: the mask is fixed by the stream position. */
START_TEST(grad_through_dropout)
{
    struct backend *b = make_backend();
    struct nn *net =
        make_net(b, MLP("layerTypes=Tanh\ninitValueScale=12\naddDropoutNodes=true"), 3);
    struct minibatch mb = {0};
    uint64_t rng = 99;
    fill_input(&mb, "features", 5, 6, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 4, 6, 1, NULL, 1, &rng);
    int checked = 0;
    ck_assert_int_eq(grad_check_rate(net, &mb, 1000, 1e-3f, 2e-3, 0.4f, &checked), 0);
    ck_assert_int_eq(checked, (int)nn_param_count(net));
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ input errors */

START_TEST(input_errors)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, MLP(""), 5);
    struct minibatch mb = {0};
    uint64_t rng = 4;
    struct nn_stats st;
    struct pt_err e = {0};
    fill_input(&mb, "features", 5, 4, 1, NULL, 0, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_train_step(net, &mb, 0, &st, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "n.cfg:2:14: error: SimpleNetworkBuilder needs a reader input "
                                "called 'labels'") != NULL,
                  "%s", e.msg);
    fill_input(&mb, "labels", 3, 4, 1, NULL, 1, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "output size is 4, but the reader's input 'labels' has dim 3"),
                  "%s", e.msg);
    fill_input(&mb, "labels", 4, 4, 2, NULL, 1, &rng);
    pt_err_clear(&e);
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), PT_EUSER);
    ck_assert_msg(strstr(e.msg, "SIMPLENET needs one label row per feature row"), "%s", e.msg);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Bigger, smaller, then the first minibatch again: the workspace grows, results stay. */
START_TEST(workspace_regrowth)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b, MLP("initValueScale=10"), 5);
    struct minibatch small = {0}, big = {0};
    uint64_t r1 = 1, r2 = 2;
    fill_input(&small, "features", 5, 3, 1, NULL, 0, &r1);
    fill_input(&small, "labels", 4, 3, 1, NULL, 1, &r1);
    fill_input(&big, "features", 5, 50, 1, NULL, 0, &r2);
    fill_input(&big, "labels", 4, 50, 1, NULL, 1, &r2);
    struct nn_stats a, c, d;
    struct pt_err e = {0};
    ck_assert_int_eq(nn_evaluate(net, &small, &a, &e), 0);
    ck_assert_int_eq(nn_evaluate(net, &big, &c, &e), 0);
    ck_assert_uint_eq(c.samples, 50);
    ck_assert_int_eq(nn_evaluate(net, &small, &d, &e), 0);
    ck_assert(a.train_crit == d.train_crit && a.eval_crit == d.eval_crit);
    mb_free(&small);
    mb_free(&big);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* ------------------------------------------------------------------ training */

/* Three linearly separable classes in 4-D; plain SGD (w -= lr g) on summed gradients. */
START_TEST(sgd_learns_toy_problem)
{
    struct backend *b = make_backend();
    struct nn *net = make_net(b,
                              "layerSizes=4:16:3\nlayerTypes=Tanh\n"
                              "trainingCriterion=CrossEntropyWithSoftmax\n"
                              "evalCriterion=ClassificationError",
                              9);
    struct minibatch mb = {0};
    uint64_t rng = 77;
    fill_input(&mb, "features", 4, 60, 1, NULL, 0, &rng);
    fill_input(&mb, "labels", 3, 60, 1, NULL, 0, &rng);
    float *x = mb_find(&mb, "features")->data, *y = mb_find(&mb, "labels")->data;
    for (int j = 0; j < 60; j++) { /* class = which of x0, x1, x2 is largest */
        int c = x[j * 4] > x[j * 4 + 1] ? 0 : 1;
        c = x[j * 4 + 2] > x[j * 4 + c] ? 2 : c;
        for (int i = 0; i < 3; i++)
            y[j * 3 + i] = (float)(i == c);
    }
    size_t n = nn_param_count(net);
    float *w = malloc(n * 4), *g = malloc(n * 4);
    struct nn_stats first, st;
    struct pt_err e = {0};
    nn_get_params(net, w, &e);
    for (int it = 0; it < 300; it++) {
        ck_assert_int_eq(nn_train_step(net, &mb, 0, &st, &e), 0);
        if (it == 0)
            first = st;
        nn_get_grads(net, g, &e);
        for (size_t k = 0; k < n; k++)
            w[k] -= 0.02f * g[k];
        nn_set_params(net, w, &e);
    }
    ck_assert_int_eq(nn_evaluate(net, &mb, &st, &e), 0);
    ck_assert_msg(st.train_crit < 0.25 * first.train_crit, "%g -> %g", first.train_crit,
                  st.train_crit);
    ck_assert_msg(st.eval_crit <= 3, "errors %g", st.eval_crit);
    free(w);
    free(g);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, config_defaults);
    tcase_add_test(tc, config_layer_types_repeat);
    tcase_add_test(tc, config_errors);
    tcase_add_test(tc, tensor_table_covers_arena);
    tcase_add_test(tc, init_uniform);
    tcase_add_test(tc, init_normal);
    tcase_add_test(tc, init_deterministic);
    tcase_add_test(tc, grad_sigmoid_ce);
    tcase_add_test(tc, grad_tanh_ce);
    tcase_add_test(tc, grad_relu_ce);
    tcase_add_test(tc, grad_none_square_error);
    tcase_add_test(tc, grad_soft_labels_ce);
    tcase_add_test(tc, grad_mean_var_norm);
    tcase_add_test(tc, features_in_place);
    tcase_add_test(tc, criteria_are_sums);
    tcase_add_test(tc, classification_error_counts);
    tcase_add_test(tc, mlp_on_padded_sequences);
    tcase_add_test(tc, dropout_behaviour);
    tcase_add_test(tc, grad_through_dropout);
    tcase_add_test(tc, input_errors);
    tcase_add_test(tc, workspace_regrowth);
    tcase_add_test(tc, sgd_learns_toy_problem);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
