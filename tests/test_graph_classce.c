/* ClassBasedCrossEntropyWithSoftmax (src/nn/graph_classce.c) against the formula computed
 * here in double: its value and the gradients of W and of the class scores' weights, on
 * three sequences of 3, 2 and 2 steps (7 counted; the padding holds labels that describe
 * no class and large features, which must not count); labels that describe no class fail
 * the pass, naming the step; the shape errors. The finite-difference checks of its
 * gradients (h, W, z) are rows of test_graph_cases.h. */
#include "test_graph.h"

#define HD    5 /* h's rows */
#define VOCAB 9 /* class_label's words */
#define NCLS  3
#define NSEQ  3
#define STEPS 3

/* h is the features themselves; z = Wc h */
#define CLASS_NET                                                                                  \
    "features = Input (5)\nlabels = Input (4)\nW = Parameter (5, 9)\nWc = Parameter (3, 5)\n"      \
    "ce = ClassBasedCrossEntropyWithSoftmax (labels, features, W, Wc * features)\n"                \
    "criterionNodes = (ce)\n"

static const uint32_t seq_len[NSEQ] = {3, 2, 2};

/* words[t][s]: the target of step t of sequence s (where t < its length) */
static const int words[STEPS][NSEQ] = {{0, 4, 8}, {3, 5, 1}, {6, 0, 0}};

static void class_minibatch(struct minibatch *mb)
{
    uint64_t rng = 11;
    fill_input(mb, "features", HD, NSEQ, STEPS, seq_len, 0, &rng);
    fill_input(mb, "labels", 4, NSEQ, STEPS, seq_len, 0, &rng);
    float *h = mb_find(mb, "features")->data, *lab = mb_find(mb, "labels")->data;
    for (size_t t = 0; t < STEPS; t++)
        for (size_t s = 0; s < NSEQ; s++) {
            size_t col = t * NSEQ + s;
            if (t < seq_len[s]) {
                class_label(words[t][s], lab + 4 * col);
                continue;
            }
            static const float bad[4] = {7, 5, 9, 2}; /* no class: end before first */
            memcpy(lab + 4 * col, bad, sizeof bad);
            for (int r = 0; r < HD; r++)
                h[col * HD + r] = 40.0f;
        }
}

/* The criterion and its gradients dW [HD x VOCAB] and dWc [NCLS x HD] in double. */
static double reference(const float *h, const float *lab, const float *w, const float *wc,
                        double *dw, double *dwc)
{
    double sum = 0.0;
    memset(dw, 0, HD * VOCAB * sizeof *dw);
    memset(dwc, 0, NCLS * HD * sizeof *dwc);
    for (size_t t = 0; t < STEPS; t++)
        for (size_t s = 0; s < NSEQ; s++) {
            size_t col = t * NSEQ + s;
            if (t >= seq_len[s])
                continue;
            const float *x = h + col * HD, *l = lab + 4 * col;
            int y = (int)l[0], c = (int)l[1], a = (int)l[2], b = (int)l[3];
            double z[NCLS], sc[VOCAB] = {0}, zsum = 0.0, ssum = 0.0;
            for (int k = 0; k < NCLS; k++) {
                z[k] = 0.0;
                for (int r = 0; r < HD; r++)
                    z[k] += (double)wc[k + NCLS * r] * x[r];
                zsum += exp(z[k]);
            }
            for (int j = a; j < b; j++) {
                sc[j] = 0.0;
                for (int r = 0; r < HD; r++)
                    sc[j] += (double)w[r + HD * j] * x[r];
                ssum += exp(sc[j]);
            }
            sum += log(ssum) - sc[y] + log(zsum) - z[c];
            for (int j = a; j < b; j++) /* dW[:, j] += h (p_j - [j == y]) */
                for (int r = 0; r < HD; r++)
                    dw[r + HD * j] += x[r] * (exp(sc[j]) / ssum - (j == y));
            for (int k = 0; k < NCLS; k++) /* dWc = dz h' */
                for (int r = 0; r < HD; r++)
                    dwc[k + NCLS * r] += (exp(z[k]) / zsum - (k == c)) * x[r];
        }
    return sum;
}

START_TEST(classce_values)
{
    struct backend *b = make_backend();
    struct nn *net = try_bs_net(b, "classce_values", CLASS_NET, 5);
    if (!net) {
        backend_free(b);
        return;
    }
    float w[HD * VOCAB], wc[NCLS * HD];
    uint64_t rng = 23;
    for (size_t k = 0; k < COUNT(w); k++)
        w[k] = (float)(test_uniform(&rng) * 2.0 - 1.0);
    for (size_t k = 0; k < COUNT(wc); k++)
        wc[k] = (float)(test_uniform(&rng) * 2.0 - 1.0);
    set_tensor(net, "W", w);
    set_tensor(net, "Wc", wc);
    struct minibatch mb = {0};
    class_minibatch(&mb);
    double dw[HD * VOCAB], dwc[NCLS * HD];
    double want =
        reference(mb_find(&mb, "features")->data, mb_find(&mb, "labels")->data, w, wc, dw, dwc);
    struct nn_stats st;
    struct pt_err e = {0};
    ck_assert_msg(nn_evaluate(net, &mb, &st, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(st.samples, 7);
    ck_assert_msg(fabs(st.train_crit - want) <= 1e-5 * fabs(want), "criterion %.9g want %.9g",
                  st.train_crit, want);
    ck_assert_msg(nn_train_step(net, &mb, 0.0f, &st, &e) == 0, "%s", e.msg);
    ck_assert_msg(fabs(st.train_crit - want) <= 1e-5 * fabs(want), "trained %.9g want %.9g",
                  st.train_crit, want);
    size_t n = nn_param_count(net);
    float *grad = malloc(n * sizeof *grad);
    ck_assert_ptr_nonnull(grad);
    ck_assert_int_eq(nn_get_grads(net, grad, &e), 0);
    const struct nn_tensor *tw = tensor_named(net, "W"), *tc = tensor_named(net, "Wc");
    for (size_t k = 0; k < COUNT(dw); k++)
        ck_assert_msg(fabs(grad[tw->offset + k] - dw[k]) <= 1e-5 + 1e-5 * fabs(dw[k]),
                      "dW[%zu] %.9g want %.9g", k, grad[tw->offset + k], dw[k]);
    for (size_t k = 0; k < COUNT(dwc); k++)
        ck_assert_msg(fabs(grad[tc->offset + k] - dwc[k]) <= 1e-5 + 1e-5 * fabs(dwc[k]),
                      "dWc[%zu] %.9g want %.9g", k, grad[tc->offset + k], dwc[k]);
    free(grad);
    mb_free(&mb);
    nn_free(net);
    backend_free(b);
}
END_TEST

/* Labels that describe no class of W: the pass fails, naming the node and the step; the
 * next good minibatch runs. */
START_TEST(classce_bad_labels)
{
    static const struct {
        size_t col;
        float lab[4];
    } bad[] = {
        {3, {0, 1, 2, 5}},    /* step 2 of sequence 1: the word outside its class */
        {1, {8, 2, 5, 10}},   /* the class ends beyond the vocabulary */
        {2, {2.5f, 1, 2, 5}}, /* not an integer */
        {4, {6, 3, 5, 9}},    /* class 3 of 3 */
        {0, {3, 1, 3, 3}},    /* an empty class */
    };
    static const char *const where[] = {"step 2 of sequence 1", "step 1 of sequence 2",
                                        "step 1 of sequence 3", "step 2 of sequence 2",
                                        "step 1 of sequence 1"};
    struct backend *b = make_backend();
    struct nn *net = try_bs_net(b, "classce_bad_labels", CLASS_NET, 5);
    if (!net) {
        backend_free(b);
        return;
    }
    for (size_t i = 0; i < COUNT(bad); i++) {
        struct minibatch mb = {0};
        class_minibatch(&mb);
        memcpy(mb_find(&mb, "labels")->data + 4 * bad[i].col, bad[i].lab, sizeof bad[i].lab);
        struct nn_stats st;
        struct pt_err e = {0};
        int rc = i % 2 ? nn_train_step(net, &mb, 0.0f, &st, &e) : nn_evaluate(net, &mb, &st, &e);
        ck_assert_int_eq(rc, PT_EUSER);
        ck_assert_msg(strstr(e.msg, "g.cfg:6:") && strstr(e.msg, "describe no class") &&
                          strstr(e.msg, where[i]),
                      "%zu: %s", i, e.msg);
        mb_free(&mb);
        class_minibatch(&mb);
        pt_err_clear(&e);
        ck_assert_msg(nn_train_step(net, &mb, 0.0f, &st, &e) == 0, "%s", e.msg);
        ck_assert_msg(isfinite(st.train_crit) && st.samples == 7, "%g", st.train_crit);
        mb_free(&mb);
    }
    nn_free(net);
    backend_free(b);
}
END_TEST

START_TEST(classce_shapes)
{
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"features = Input (5)\nlabels = Input (3)\nW = Parameter (5, 9)\n"
         "ce = ClassBasedCrossEntropyWithSoftmax (labels, features, W, Parameter (3, 5) * "
         "features)\ncriterionNodes = (ce)\n",
         "ClassBasedCrossEntropyWithSoftmax: labelClassDescriptorVectorSequence ('labels') must "
         "be 4 values per step"},
        {"features = Input (5)\nlabels = Input (4)\nW = Parameter (4, 9)\n"
         "ce = ClassBasedCrossEntropyWithSoftmax (labels, features, W, Parameter (3, 5) * "
         "features)\ncriterionNodes = (ce)\n",
         "mainWeight (the second) must be [hidden x vocabulary]"},
        {"features = Input (5)\nlabels = Input (4)\nW = Parameter (5, 9)\n"
         "ce = ClassBasedCrossEntropyWithSoftmax (labels, features, W, Parameter (3, 1))\n"
         "criterionNodes = (ce)\n",
         "classLogProbsBeforeSoftmax ('Parameter') must be a vector per step, got [3 x 1]"},
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        const char *msg = bs_error_of(bad[i].body);
        ck_assert_msg(strstr(msg, "g.cfg:5:") && strstr(msg, bad[i].msg), "%zu: %s", i, msg);
    }
    /* W's rows inferred from h's; the named parameters as CNTK.core.bs names them */
    struct backend *b = make_backend();
    struct nn *net = try_bs_net(
        b, "classce_shapes",
        "features = Input (5)\nlabels = Input (4)\nW = Parameter (Inferred, 9)\n"
        "ce = ClassBasedCrossEntropyWithSoftmax (mainWeight = W, mainInputInfo = features,\n"
        "    labelClassDescriptorVectorSequence = labels,\n"
        "    classLogProbsBeforeSoftmax = Parameter (3, 5) * features, tag = 'criterion')\n",
        5);
    if (net) {
        ck_assert_uint_eq(nn_param_count(net), 5 * 9 + 3 * 5);
        nn_free(net);
    }
    backend_free(b);
}
END_TEST

void graph_classce_tests(TCase *tc)
{
    tcase_add_test(tc, classce_values);
    tcase_add_test(tc, classce_bad_labels);
    tcase_add_test(tc, classce_shapes);
}
