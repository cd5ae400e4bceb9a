/* A feed-forward SimpleNetworkBuilder network as the BrainScript network it describes, with
 * CNTK's node names (SimpleNetworkBuilder.cpp BuildFFDNNFromDescription): what CNTK's SVD
 * action edits in such a model (src/train/svd.c), which partrain's layer stack cannot hold.
 *
 *   features -> [MeanOfFeatures, InvStdOfFeatures -> MVNormalizedFeatures] -> per layer i:
 *   W<i>*<input> (Times), W<i>*<input>+B<i> (Plus), H<i+1> (its layerTypes activation),
 *   [DropH<i+1>] -> the output layer's W<L>*H<L-1> and HLast -> the training criterion
 *   (named as the criterion), the evaluation (Eval<criterion>, or the same node),
 *   [Prior, LogOfPrior, ScaledLogLikelihood (the output)], PosteriorProb.
 *
 * (MVNormalizedFeatures one node, as CNTK's.) The names that are no BrainScript identifiers
 * ("W0*features+B0") are given by Rename edits (bs_edit.c); the values are the model's, copied by
 * name. */
#include <stdio.h>
#include <string.h>

#include "nn/nn_internal.h"

static const char *act_fn(enum bk_act a)
{
    switch (a) {
    case BK_ACT_SIGMOID: return "Sigmoid";
    case BK_ACT_TANH: return "Tanh";
    case BK_ACT_RELU: return "RectifiedLinear";
    default: return "Pass";
    }
}

const char *nn_crit_op(enum bk_crit_kind k)
{
    switch (k) {
    case BK_CRIT_CE_SOFTMAX: return "CrossEntropyWithSoftmax";
    case BK_CRIT_SQUARE_ERR: return "SquareError";
    case BK_CRIT_CLASS_ERR: return "ClassificationError";
    case BK_CRIT_LOGISTIC: return "Logistic";
    default: return NULL;
    }
}

int nn_simple_as_graph(struct nn_config *c, struct pt_err *e)
{
    if (c->rnn != NN_SIMPLENET || c->nsizes < 2)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: only a feed-forward SimpleNetworkBuilder network (rnnType "
                          "SIMPLENET) has a BrainScript form here",
                          c->origin);
    const char *tf = nn_crit_op(c->train_crit), *ef = nn_crit_op(c->eval_crit);
    if (!tf || !ef)
        return pt_err_set(e, PT_EUSER, "%s: error: a criterion without a BrainScript form",
                          c->origin);
    static char buf[NN_BS_MAX];
    static char edits[NN_BS_MAX / 2];
    struct nn_text t = {.buf = buf, .size = sizeof buf}, ed = {.buf = edits, .size = sizeof edits};
    int L = c->nsizes - 2;
    nn_text_add(&t, "features = Input (%d, tag = 'feature')\n", c->sizes[0]);
    const char *x = "features";
    if (c->mean_var_norm) {
        nn_text_add(&t, "MeanOfFeatures = Mean (features)\n"
                        "InvStdOfFeatures = InvStdDev (features)\n"
                        "MVNormalizedFeatures = BS.NDL.PerDimMeanVarNormalization (features, "
                        "MeanOfFeatures, InvStdOfFeatures)\n");
        x = "MVNormalizedFeatures";
    }
    char in[32];
    snprintf(in, sizeof in, "%s", x);
    for (int i = 0; i <= L; i++) {
        /* CNTK names the output layer's product W<L>*H<L-1> (W2*H1; W0*H-1 alone) */
        char from[24];
        if (i == 0 && L > 0)
            snprintf(from, sizeof from, "features");
        else
            snprintf(from, sizeof from, "H%d", i == L ? L - 1 : i);
        nn_text_add(&t,
                    "W%1$d = Parameter (%2$d, %3$d, init = '%4$s', initValueScale = %5$.17g)\n"
                    "B%1$d = Parameter (%2$d, 1, init = 'fixedValue', value = 0)\n"
                    "W%1$d_times = Times (W%1$d, %6$s)\n",
                    i, c->sizes[i + 1], c->sizes[i], c->uniform_init ? "uniform" : "gaussian",
                    c->init_scale, in);
        nn_text_add(&ed, "#@edit SimpleNetworkBuilder Rename W%d_times W%d*%s\n", i, i, from);
        if (i == L) {
            nn_text_add(&t, "HLast = Plus (W%1$d_times, B%1$d)\n", i);
            break;
        }
        nn_text_add(&t, "W%1$d_plus = Plus (W%1$d_times, B%1$d)\nH%2$d = %3$s (W%1$d_plus)\n", i,
                    i + 1, act_fn(c->acts[i]));
        nn_text_add(&ed, "#@edit SimpleNetworkBuilder Rename W%1$d_plus W%1$d*%2$s+B%1$d\n", i,
                    from);
        snprintf(in, sizeof in, "H%d", i + 1);
        if (c->dropout) {
            nn_text_add(&t, "DropH%1$d = Dropout (H%1$d)\n", i + 1);
            snprintf(in, sizeof in, "DropH%d", i + 1);
        }
    }
    nn_text_add(&t, "labels = Input (%d, tag = 'label')\n", c->sizes[L + 1]);
    nn_text_add(&t, "TrainCriterion = %s (labels, HLast)\n", tf);
    nn_text_add(&ed, "#@edit SimpleNetworkBuilder Rename TrainCriterion %s\n", c->train_name);
    const char *eval = "TrainCriterion";
    if (c->eval_crit != c->train_crit) {
        nn_text_add(&t, "EvalCriterion = %s (labels, HLast)\n", ef);
        nn_text_add(&ed, "#@edit SimpleNetworkBuilder Rename EvalCriterion Eval%s\n", c->eval_name);
        eval = "EvalCriterion";
    }
    const char *out = "HLast";
    if (c->need_prior) {
        nn_text_add(&t, "Prior = Mean (labels)\nLogOfPrior = Log (Prior)\n"
                        "ScaledLogLikelihood = Minus (HLast, LogOfPrior)\n");
        out = "ScaledLogLikelihood";
    }
    nn_text_add(&t,
                "PosteriorProb = Softmax (HLast)\n"
                "featureNodes = (features)\nlabelNodes = (labels)\n"
                "criterionNodes = (TrainCriterion)\nevaluationNodes = (%s)\noutputNodes = (%s)\n",
                eval, out);
    nn_text_add(&t, "%s", edits);
    if (t.len >= t.size || ed.len >= ed.size)
        return pt_err_set(e, PT_EUSER, "%s: error: %d layers make too long a network", c->origin,
                          L + 1);
    char origin[256];
    memcpy(origin, c->origin, sizeof origin);
    return nn_bs_config_text(buf, origin, c, e);
}
