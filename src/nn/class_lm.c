/* SimpleNetworkBuilder's rnnType = CLASSLSTM (CNTK's class-based LSTM language model, its
 * PennTreebank example rnn.cntk) and CLASSLM (the simple recurrent one of its RNNLM
 * setups), built as the BrainScript networks they describe, with CNTK's node names
 * (SimpleNetworkBuilder.cpp BuildClassLSTMNetworkFromDescription with BuildLSTMComponent,
 * and BuildClassEntropyRNNFromDescription). CLASSLSTM:
 *
 *   features (the words, one-hot over layerSizes[0]) -> LookupTable = E0 features (with
 *   lookupTableOrder = 1: layerSizes[1] rows) -> an LSTM per further hidden size (k = 0,
 *   1, ...: WX?k, WH?k, peepholes WC?k, biases b?k; gates i, f, o sigmoid, the cell's input
 *   tanh; i and f see the previous cell, o the new one; every step's previous hidden and
 *   cell values start at defaultHiddenActivity) -> TrainNodeClassBasedCrossEntropy =
 *   ClassBasedCrossEntropyWithSoftmax (labels, h, W, ClassPostProb), ClassPostProb =
 *   WeightForClassPostProb h over nbrClass classes, W the words' output vectors
 *   [h x vocabulary]. (CNTK's builder also makes outputs = W^T h and PosteriorProb, the
 *   softmax over the whole vocabulary, which its configs do not read; they are left out.)
 *
 * CLASSLM: features -> per hidden size i a layer o<i> = f (U<i> x + W<i> o<i>'s last step)
 * where recurrentLayer names it (starting at defaultHiddenActivity), else f (U<i> x + B<i>),
 * f its layerTypes activation -> the same criterion over the last layer.
 *
 * The weights start as SimpleNetworkBuilder's do (uniformInit: U(-0.05 s, 0.05 s), s =
 * initValueScale; else N(0, 0.2 s / sqrt(fanIn))), the gates' biases at inputGateInitVal,
 * forgetGateInitVal and outputGateInitVal (-1), the cell's at 0. The labels are the
 * LMSequenceReader's 4 rows a step. */
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

/* A weight matrix rows x cols initialized as SimpleNetworkBuilder's. */
static void weight(struct nn_text *t, const struct nn_config *c, const char *name, int rows,
                   int cols)
{
    nn_text_add(t, "%s = Parameter (%d, %d, init = '%s', initValueScale = %.17g)\n", name, rows,
                cols, c->uniform_init ? "uniform" : "gaussian", c->init_scale);
}

/* LSTM k over x (in rows) into h<k> (out rows). */
static void lstm(struct nn_text *t, const struct nn_config *c, int k, const char *x, int in,
                 int out)
{
    char n[32];
    static const char *const xs[] = {"WXO", "WXI", "WXF", "WXC"};
    static const char *const hs[] = {"WHI", "WHF", "WHO", "WHC"};
    static const char *const cs[] = {"WCI", "WCF", "WCO"};
    for (int i = 0; i < 4; i++) {
        snprintf(n, sizeof n, "%s%d", xs[i], k);
        weight(t, c, n, out, in);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(n, sizeof n, "%s%d", hs[i], k);
        weight(t, c, n, out, out);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(n, sizeof n, "%s%d", cs[i], k);
        weight(t, c, n, out, 1);
    }
    static const char *const bs[] = {"bi", "bf", "bo"};
    for (int i = 0; i < 3; i++)
        nn_text_add(t, "%s%d = Parameter (%d, 1, init = 'fixedValue', value = %.17g)\n", bs[i], k,
                    out, c->gate_init[i]);
    nn_text_add(t, "bc%d = Parameter (%d, 1, init = 'fixedValue', value = 0)\n", k, out);
    nn_text_add(t,
                "dh%d = PastValue (%d, h%d, timeStep = 1, defaultHiddenActivation = %.17g)\n"
                "dc%d = PastValue (%d, c%d, timeStep = 1, defaultHiddenActivation = %.17g)\n",
                k, out, k, c->hidden_activity, k, out, k, c->hidden_activity);
    /* k is argument 1, x argument 2 */
    nn_text_add(
        t,
        "it%1$d = Sigmoid (WXI%1$d * %2$s + bi%1$d + WHI%1$d * dh%1$d + DiagTimes (WCI%1$d, "
        "dc%1$d))\n"
        "ft%1$d = Sigmoid (WXF%1$d * %2$s + bf%1$d + WHF%1$d * dh%1$d + DiagTimes (WCF%1$d, "
        "dc%1$d))\n"
        "ct%1$d = Tanh (WXC%1$d * %2$s + WHC%1$d * dh%1$d + bc%1$d)\n"
        "c%1$d = ft%1$d .* dc%1$d + it%1$d .* ct%1$d\n"
        "ot%1$d = Sigmoid (WXO%1$d * %2$s + bo%1$d + WHO%1$d * dh%1$d + DiagTimes (WCO%1$d, "
        "c%1$d))\n"
        "h%1$d = ot%1$d .* Tanh (c%1$d)\n",
        k, x);
}

/* CLASSLM's hidden layer i (from 0) over x (in rows) into o<i>: recurrent (U x + W o's
 * last step, no bias) where recurrentLayer names it, else U x + B; then its layerTypes
 * activation (CNTK's BuildClassEntropyRNNFromDescription; it reuses layer 0's bias for
 * later plain layers, partrain gives each its own). */
static void rnn_layer(struct nn_text *t, const struct nn_config *c, int i, const char *x, int in,
                      int out)
{
    static const char *const fn[] = {[BK_ACT_SIGMOID] = "Sigmoid",
                                     [BK_ACT_RELU] = "ReLU",
                                     [BK_ACT_TANH] = "Tanh",
                                     [BK_ACT_NONE] = ""};
    const char *f =
        (unsigned)c->acts[i] < sizeof fn / sizeof *fn && fn[c->acts[i]] ? fn[c->acts[i]] : "";
    char n[32];
    snprintf(n, sizeof n, "U%d", i);
    weight(t, c, n, out, in);
    if (c->recurrent >> i & 1) {
        snprintf(n, sizeof n, "W%d", i);
        weight(t, c, n, out, out);
        nn_text_add(
            t,
            "p%1$d = PastValue (%2$d, o%1$d, timeStep = 1, defaultHiddenActivation = %3$.17g)\n"
            "o%1$d = %4$s (U%1$d * %5$s + W%1$d * p%1$d)\n",
            i, out, c->hidden_activity, f, x);
    } else {
        snprintf(n, sizeof n, "B%d", i);
        weight(t, c, n, out, 1);
        nn_text_add(t, "o%1$d = %2$s (U%1$d * %3$s + B%1$d)\n", i, f, x);
    }
}

int nn_class_lm(struct nn_config *c, struct pt_err *e)
{
    int lstm_net = c->class_lm == 1, vocab = c->sizes[c->nsizes - 1], words = c->sizes[0];
    int order = lstm_net ? c->lookup_order : 0;
    const char *name = lstm_net ? "CLASSLSTM" : "CLASSLM";
    if (order < 0 || order > 1 || (!lstm_net && c->lookup_order))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: lookupTableOrder = %d: %s reads one word a step (CLASSLSTM "
                          "1: through the embedding E0; 0: the one-hot word itself)",
                          c->origin, c->lookup_order, name);
    if (lstm_net && c->nsizes < 3 + order)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: layerSizes: CLASSLSTM needs the vocabulary, %san LSTM's "
                          "size and the vocabulary again (e.g. 10000:150:200:10000)",
                          c->origin, order ? "the embedding's size, " : "");
    /* CLASSLSTM: the words in (layerSizes' first) and out (its last) may differ, as in
     * CNTK's own rnn.cntk ($confVocabSize$:150:200:10000): the labels' ids must then stay
     * below the last, which the criterion checks on every step. CLASSLM: CNTK requires
     * vocabSize to be the output's size. */
    if (!lstm_net && c->vocab_size && c->vocab_size != vocab)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: CLASSLM: vocabSize = %d, where the output layer has %d: "
                          "they must agree (CNTK's rule)",
                          c->origin, c->vocab_size, vocab);
    if (c->classes < 1 || c->classes > vocab)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: nbrClass = %d: expected the word classes of the "
                          "word-class file, 1 .. %d",
                          c->origin, name, c->classes, vocab);
    if (c->mean_var_norm || c->need_prior || c->dropout)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: applyMeanVarNorm, needPrior and addDropoutNodes are "
                          "not built for it; set them false",
                          c->origin, name);
    static char buf[NN_BS_MAX];
    struct nn_text t = {.buf = buf, .size = sizeof buf};
    nn_text_add(&t,
                "features = SparseInput (%d, tag = 'feature')\nlabels = Input (4, tag = 'label')\n",
                words);
    const char *x = "features";
    int in = words, first = 1;
    if (order) {
        weight(&t, c, "E0", c->sizes[1], words);
        nn_text_add(&t, "LookupTable = Times (E0, features)\n");
        x = "LookupTable";
        in = c->sizes[1];
        first = 2;
    }
    char hname[32];
    for (int i = first, k = 0; i < c->nsizes - 1; i++, k++) {
        if (lstm_net)
            lstm(&t, c, k, x, in, c->sizes[i]);
        else
            rnn_layer(&t, c, k, x, in, c->sizes[i]);
        snprintf(hname, sizeof hname, "%s%d", lstm_net ? "h" : "o", k);
        x = hname;
        in = c->sizes[i];
    }
    char w[32];
    snprintf(w, sizeof w, "W%d", c->nsizes - 2);
    weight(&t, c, w, in, vocab);
    weight(&t, c, "WeightForClassPostProb", c->classes, in);
    nn_text_add(
        &t,
        "ClassPostProb = Times (WeightForClassPostProb, %s)\n"
        "TrainNodeClassBasedCrossEntropy = ClassBasedCrossEntropyWithSoftmax (labels, %s, %s, "
        "ClassPostProb, tag = 'criterion')\n",
        x, x, w);
    if (t.len >= t.size)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: %zu layers make too long a network",
                          c->origin, name, (size_t)c->nsizes);
    char origin[256];
    memcpy(origin, c->origin, sizeof origin);
    return nn_bs_config_text(buf, origin, c, e);
}
