/* BrainScript's built-in functions (bs_eval_internal.h): the nodes, delays and helpers,
 * and the table builtins[] with a row for each built-in of every bs_*.c file (parameters
 * and inputs in bs_params.c, CNTK's Layers library in bs_layers.c, ...). A node kind
 * without a row is still a function of its inputs by its own name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nn/bs_eval_internal.h"

/* ------------------------------------------------------------------ built-ins */

int bse_make_node(struct ev *v, const struct bs_node *at, const char *kind, const int *in, int nin,
                  struct bv *out)
{
    const struct g_kind *k = g_kind_find(kind);
    if (!k)
        return pt_err_set(v->e, PT_EINTERNAL, "%s:%d:%d: internal: no node kind %s", at->file,
                          at->line, at->col, kind);
    return bse_make_kind(v, at, k, in, nin, out);
}

int bse_make_kind(struct ev *v, const struct bs_node *at, const struct g_kind *k, const int *in,
                  int nin, struct bv *out)
{
    char where[320];
    if (v->user_call && at->file && !strcmp(at->file, bs_prelude_file))
        at = v->user_call; /* made inside CNTK.core.bs: the user's call that led there */
    int ins[2];
    if (nin == 2) { /* a value per map (1:1:C) broadcast over an image */
        memcpy(ins, in, 2 * sizeof *ins);
        int rc = bse_map_broadcast(v, at, k, ins, nin);
        if (rc)
            return rc;
        in = ins;
    }
    snprintf(where, sizeof where, "%s:%d:%d", at->file, at->line, at->col);
    int id = g_add(v->g, k, in, nin, where, v->e);
    if (id < 0)
        return v->e->code;
    /* a tensor's shape lives on through what works element by element; a product (Times:
     * W's output rank, 1) gives a vector */
    struct g_node *n = &v->g->nodes[id];
    for (int i = 0; strcmp(k->name, "Times") && i < nin; i++)
        if (v->g->nodes[in[i]].tensor_rank > n->tensor_rank) {
            n->tensor_rank = v->g->nodes[in[i]].tensor_rank;
            memcpy(n->tdims, v->g->nodes[in[i]].tdims, sizeof n->tdims);
        }
    *out = (struct bv){.k = BV_NODE, .node = id};
    return 0;
}

/* A number as a node: a constant column whose rows the operation infers. */
int bse_as_node(struct ev *v, const struct bs_node *at, const char *what, struct bv *x)
{
    if (x->k == BV_NODE)
        return 0;
    if (x->k != BV_NUM)
        return bse_type_error(v, at, what, "a node or a number", x);
    double val = x->num;
    int rc = bse_make_node(v, at, "Constant", NULL, 0, x);
    if (rc == 0) {
        struct g_node *n = &v->g->nodes[x->node];
        n->is_const = 1;
        n->cols = 1;
        n->init_value = val;
    }
    return rc;
}

/* Sqrt, Abs or Reciprocal of a one-value Constant whose rows its use fixes (Constant (256),
 * a number): that value's Constant, as a number would be (x / Constant (256) is x / 256). */
static int fold_scalar(struct ev *v, const struct bs_node *at, const char *kind, int x,
                       struct bv *out, int *folded)
{
    const struct g_node *n = &v->g->nodes[x];
    *folded = 0;
    if (!n->is_const || n->data || n->rows != 0 || n->cols != 1)
        return 0;
    double c = n->init_value;
    if (!strcmp(kind, "Sqrt") && c >= 0)
        c = sqrt(c);
    else if (!strcmp(kind, "Abs"))
        c = fabs(c);
    else if (!strcmp(kind, "Reciprocal") && c != 0)
        c = 1.0 / c;
    else
        return 0;
    *out = (struct bv){.k = BV_NUM, .num = c};
    *folded = 1;
    return bse_as_node(v, at, kind, out);
}

int bse_node_op(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                struct bv *out)
{
    const struct builtin *bi = bse_find_builtin(name);
    const char *kind = bi ? bi->kind : name; /* a kind without a row here: its own name */
    int in[G_MAX_IN], nin = g_kind_find(kind)->nin;
    for (int i = 0; i < nin; i++) {
        int rc = bse_as_node(v, at, name, &args[i]);
        if (rc)
            return rc;
        in[i] = args[i].node;
    }
    int folded = 0, rc = nin == 1 ? fold_scalar(v, at, kind, in[0], out, &folded) : 0;
    if (rc || folded)
        return rc;
    return bse_make_node(v, at, kind, in, nin, out);
}

int bse_get_int(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                int *out)
{
    if (x->k != BV_NUM || x->num < 0 || x->num > (1 << 24) || x->num != floor(x->num))
        return x->k != BV_NUM ? bse_type_error(v, at, what, "a dimension (a whole number)", x)
                              : bs_error(v->e, at, "%s: expected a dimension in [0, 2^24], got %g",
                                         what, x->num);
    *out = (int)x->num;
    return 0;
}

/* A delay node over x (a node value, or an argument evaluated after the definitions that
 * need this node: a fixup). */
int bse_delay_node(struct ev *v, const struct bs_node *at, int steps, double dflt, int rows,
                   struct bv *x, const struct bv *init, struct bv *out)
{
    struct bv s0 = init ? *init : (struct bv){.k = BV_NONE};
    int rc = 0;
    if (s0.k == BV_NUM) { /* one number: the default value */
        dflt = s0.num;
        s0.k = BV_NONE;
    } else if (s0.k != BV_NONE &&
               (rc = bse_as_node(v, at, steps > 0 ? "PastValue" : "FutureValue", &s0)) != 0)
        return rc;
    if (s0.k == BV_NONE)
        rc = bse_make_node(v, at, steps > 0 ? "PastValue" : "FutureValue", NULL, 0, out);
    else
        rc =
            bse_make_kind(v, at, steps > 0 ? &g_kind_past_init : &g_kind_future_init, NULL, 0, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    if (s0.k != BV_NONE)
        n->in[1] = s0.node;
    n->delay = steps;
    n->delay_default = dflt;
    n->rows = rows;
    n->in[0] = -1;
    if (x->k != BV_THUNK) {
        if ((rc = bse_as_node(v, at, steps > 0 ? "PastValue" : "FutureValue", x)) == 0)
            v->g->nodes[out->node].in[0] = x->node;
        return rc;
    }
    if (v->nfix == v->capfix) {
        size_t cap = v->capfix ? 2 * v->capfix : 16;
        struct fixup *f = pt_realloc(v->fix, cap * sizeof *f, v->e);
        if (!f)
            return v->e->code;
        v->fix = f;
        v->capfix = cap;
    }
    v->fix[v->nfix++] = (struct fixup){out->node, x->expr, x->env};
    return 0;
}

/* PastValue / FutureValue (shape, input, timeStep, initialState, defaultHiddenActivation): an
 * initialState node takes the default's place (a number is the default) */
static int bi_delay(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int rows = 0, cols = 1, steps = 0;
    int rc = bse_get_dims(v, at, name, &a[0], &rows, &cols);
    if (rc == 0)
        rc = bse_get_int(v, at, "timeStep", &a[2], &steps);
    if (rc)
        return rc;
    if (steps < 1 || cols != 1 || a[4].k != BV_NUM)
        return bs_error(v->e, at,
                        "%s: timeStep must be at least 1, the shape a vector's dimension (or 0: "
                        "inferred) and defaultHiddenActivation a number",
                        name);
    return bse_delay_node(v, at, strcmp(name, "PastValue") ? -steps : steps, a[4].num, rows, &a[1],
                          &a[3], out);
}

/* DynamicAxis (): a named sequence axis for Input's dynamicAxis. partrain derives each
 * Input's axis from its use (per step, or per sequence next to BS.Sequences.Last / First),
 * so the value only has to exist. */
static int bi_dynamic_axis(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                           struct bv *out)
{
    (void)v;
    (void)at;
    (void)name;
    (void)a;
    *out = (struct bv){.k = BV_STR, .str = "DynamicAxis"};
    return 0;
}

/* PerDimMeanVarNormalization (x, mean, invStdDev) = (x - mean) .* invStdDev (CNTK.core.bs) */
static int bi_mvn(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out)
{
    (void)name;
    struct bv d;
    int rc = bse_node_op(v, at, "Minus", a, &d);
    struct bv args[2] = {d, a[2]};
    return rc ? rc : bse_node_op(v, at, "ElementTimes", args, out);
}

/* NDL's PerDimMeanVarNormalization, which CNTK's NDL makes one node (BrainScript's is the
 * two above): the same, its Minus a helper, so that the node counts are CNTK's. */
static int bi_mvn_ndl(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                      struct bv *out)
{
    (void)name;
    struct bv d;
    int rc = bse_node_op(v, at, "Minus", a, &d);
    if (rc == 0 && d.k == BV_NODE)
        v->g->nodes[d.node].helper = 1;
    struct bv args[2] = {d, a[2]};
    return rc ? rc : bse_node_op(v, at, "ElementTimes", args, out);
}

/* Length (x): an array's elements or a string's characters (CNTK's NumericFunction). */
static int bi_length(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    if (a[0].k == BV_ARR)
        *out = (struct bv){.k = BV_NUM, .num = (double)a[0].arr->n};
    else if (a[0].k == BV_STR)
        *out = (struct bv){.k = BV_NUM, .num = (double)strlen(a[0].str)};
    else
        return bse_type_error(v, at, name, "an array or a string", &a[0]);
    return 0;
}

/* IsNone (x): whether x is None (BS.Constants.IsNone: an optional argument not given). */
static int bi_is_none(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                      struct bv *out)
{
    (void)v, (void)at, (void)name;
    *out = (struct bv){.k = BV_BOOL, .num = a[0].k == BV_NONE};
    return 0;
}

/* Fail (what): the network's own error (CNTK's FailAction), where it is evaluated. */
static int bi_fail(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    (void)out;
    if (a[0].k != BV_STR)
        return bse_type_error(v, at, name, "a string", &a[0]);
    return bs_error(v->e, at, "Fail: %s", a[0].str);
}

static int bi_identity(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    (void)v;
    (void)at;
    (void)name;
    *out = a[0];
    return 0;
}

/* BS.NDL.Return (macro, result): what a call of an NDL macro gives (src/nn/ndl.c writes each
 * macro's body as BS.NDL.Return ([ ... ], 'NAME')): every line of the macro evaluated, in
 * order, as CNTK's NDL does, then the line called like the macro, or else the last, whose
 * value keeps the macro's record so that L1.W still reaches its lines. */
static int bi_ndl_return(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out)
{
    if (a[0].k != BV_REC)
        return bse_type_error(v, at, name, "a record (the macro's lines)", &a[0]);
    const char *want = bse_get_str(&a[1]);
    if (!want)
        return bse_type_error(v, at, name, "a string (the line that is the result)", &a[1]);
    struct benv *r = a[0].rec;
    for (size_t i = 0; i < r->n; i++) {
        struct bv val;
        int rc = bse_force(v, at, r, &r->slots[i], &val);
        if (rc)
            return rc;
    }
    struct bslot *s = want[0] ? bse_find_local(r, want) : r->n ? &r->slots[r->n - 1] : NULL;
    if (!s)
        return bs_error(v->e, at, "an NDL macro without lines has no value");
    *out = s->val;
    out->members = r;
    return 0;
}

#define PARAM_OPTS                                                                                 \
    "init=''", "initValueScale=1", "value=None", "initValue=None", "learningRateMultiplier=1",     \
        "tag=''", "initOnCPUOnly=true", "randomSeed=-1"
#define LAYER_OPTS                                                                                 \
    "init='glorotUniform'", "initValueScale=1", "initBias=0", "inputRank=None", "mapRank=None"

static const struct builtin builtins[] = {
    {"Input",
     {"dims", "?dynamicAxis=None", "sparse=false", "tag='feature'", "isSparse=false"},
     bse_input,
     NULL,
     0},
    {"SparseInput", {"dims", "?dynamicAxis=None", "tag='feature'"}, bse_sparse_input, NULL, 0},
    {"ImageInput",
     {"imageWidth", "imageHeight", "imageChannels", "imageLayout='CHW'", "dynamicAxis=None",
      "tag='feature'"},
     bse_image_input,
     NULL,
     0},
    {"Parameter",
     {"dims", "?cols=None", PARAM_OPTS, "initFromFilePath=''"},
     bse_parameter,
     NULL,
     0},
    {"LearnableParameter",
     {"dims", "?cols=None", PARAM_OPTS, "initFromFilePath=''"},
     bse_parameter,
     NULL,
     0},
    {"ParameterTensor",
     {"dims", PARAM_OPTS, "initFilterRank=0", "initOutputRank=1"},
     bse_parameter_tensor,
     NULL,
     0},
    {"Constant", {"value", "?rows=None", "?cols=None", "tag=''"}, bse_constant, NULL, 0},
    {"ConstantTensor", {"value", "dims", "tag=''"}, bse_constant, NULL, 0},
    {"Times",
     {"a", "b", "outputRank=1", "inferInputRankToMap=-1", "tag=''"},
     bse_node_op,
     "Times",
     0},
    {"Plus", {"a", "b", "tag=''"}, bse_node_op, "Plus", 0},
    {"Minus", {"a", "b", "tag=''"}, bse_node_op, "Minus", 0},
    {"ElementTimes", {"a", "b", "tag=''"}, bse_node_op, "ElementTimes", 0},
    {"Negate", {"x", "tag=''"}, bse_node_op, "Negate", 0},
    {"Sigmoid", {"x", "tag=''"}, bse_node_op, "Sigmoid", 0},
    {"Tanh", {"x", "tag=''"}, bse_node_op, "Tanh", 0},
    {"ReLU", {"x", "tag=''"}, bse_node_op, "ReLU", 0},
    {"RectifiedLinear", {"x", "tag=''"}, bse_node_op, "ReLU", 0},
    {"Exp", {"x", "tag=''"}, bse_node_op, "Exp", 0},
    {"Log", {"x", "tag=''"}, bse_node_op, "Log", 0},
    {"Softmax", {"x", "axis=0", "tag=''"}, bse_softmax, "Softmax", 0},
    {"CrossEntropyWithSoftmax",
     {"labels", "z", "axis=0", "tag=''"},
     bse_ce,
     "CrossEntropyWithSoftmax",
     0},
    {"ClassificationError",
     {"labels", "z", "topN=1", "axis=0", "tag=''"},
     bse_class_error,
     "ClassificationError",
     0},
    {"ErrorPrediction",
     {"labels", "z", "topN=1", "axis=0", "tag=''"},
     bse_class_error,
     "ClassificationError",
     0},
    {"SquareError", {"labels", "z", "tag=''"}, bse_node_op, "SquareError", 0},
    {"Logistic", {"labels", "z", "tag=''"}, bse_node_op, "Logistic", 0},
    {"LinearLayer", {"outDim", "bias=true", LAYER_OPTS}, bse_linear, NULL, 0},
    {"DenseLayer", {"outDim", "bias=true", "activation=None", LAYER_OPTS}, bse_linear, NULL, 0},
    {"Sequential", {"arrayOfFunctions"}, bse_sequential, NULL, 0},
    {"EmbeddingLayer",
     {"outDim", "init='glorotUniform'", "initValueScale=1", "embeddingPath=''", "transpose=false"},
     bse_embedding,
     NULL,
     0},
    {"RecurrentLSTMLayer",
     {"outputDim", "cellShape=None", "goBackwards=false", "usePeepholes=false",
      "init='glorotUniform'", "initValueScale=1", "enableSelfStabilization=false",
      "allowOptimizedEngine=false", "trainInitialState=false"},
     bse_lstm,
     NULL,
     0},
    {"Dropout", {"x", "tag=''"}, bse_node_op, "Dropout", 0},
    {"ConvolutionalLayer",
     {"numOutputChannels", "filterShape", "bias=true", "activation=None", "init='glorotUniform'",
      "initValueScale=1", "initBias=0", "stride=1", "pad=false", "lowerPad=0", "upperPad=0",
      "dilation=1", "maxTempMemSizeInSamples=0"},
     bse_conv_layer,
     NULL,
     0},
    {"MaxPoolingLayer",
     {"filterShape", "stride=1", "pad=false", "lowerPad=0", "upperPad=0", "ceilOutDim=false"},
     bse_pool_layer,
     NULL,
     0},
    {"AveragePoolingLayer",
     {"filterShape", "stride=1", "pad=false", "lowerPad=0", "upperPad=0", "ceilOutDim=false",
      "includePad=false"},
     bse_pool_layer,
     NULL,
     0},
    {"Pooling",
     {"input", "poolKind", "kernelDims", "stride=1", "autoPadding=true", "lowerPad=0", "upperPad=0",
      "ceilOutDim=false", "includePad=false", "imageLayout='CHW'", "tag=''"},
     bse_pooling,
     NULL,
     0},
    {"MaxPooling",
     {"input", "windowWidth", "windowHeight", "horizontalSubsample", "verticalSubsample",
      "imageLayout='CHW'", "tag=''"},
     bse_pooling_legacy,
     NULL,
     0},
    {"AveragePooling",
     {"input", "windowWidth", "windowHeight", "horizontalSubsample", "verticalSubsample",
      "imageLayout='CHW'", "tag=''"},
     bse_pooling_legacy,
     NULL,
     0},
    {"Convolution",
     {"weightNode", "inputValueNode", "kernelDims", "mapDims=0", "stride=1", "sharing=true",
      "autoPadding=true", "lowerPad=0", "upperPad=0", "imageLayout='CHW'",
      "maxTempMemSizeInSamples=0", "tag=''"},
     bse_conv_primitive,
     NULL,
     0},
    {"NewReshape",
     {"input", "dims", "beginAxis=0", "endAxis=0", "tag=''"},
     bse_new_reshape,
     NULL,
     0},
    {"ReshapeDimension", {"x", "axis", "tensorShape"}, bse_reshape_dim, NULL, 0},
    {"FlattenDimensions", {"x", "axis", "num"}, bse_reshape_dim, NULL, 0},
    {"SplitDimension", {"x", "axis", "N"}, bse_reshape_dim, NULL, 0},
    {"ConvolutionTransposeLayer",
     {"numOutputChannels", "filterShape", "numInputChannels", "bias=true", "activation=None",
      "init='glorotUniform'", "initValueScale=0.001", "initBias=0", "stride=1", "pad=false",
      "lowerPad=0", "upperPad=0", "outputShape=None", "dilation=1", "maxTempMemSizeInSamples=0"},
     bse_conv_t_layer,
     NULL,
     0},
    {"MaxUnpoolingLayer",
     {"filterShape", "stride=1", "pad=false", "lowerPad=0", "upperPad=0"},
     bse_unpool_layer,
     NULL,
     0},
    {"BatchNormalization",
     {"input", "scale", "bias", "runMean", "runVariance", "runCount=None", "spatial=false",
      "normalizationTimeConstant=0", "blendTimeConstant=0", "epsilon=0.00001", "useCntkEngine=true",
      "disableRegularization=false", "imageLayout='CHW'", "tag=''"},
     bse_batch_norm,
     NULL,
     0},
    {"BatchNormalizationLayer",
     {"spatialRank=0", "initialScale=1", "normalizationTimeConstant=5000", "blendTimeConstant=0",
      "epsilon=0.00001", "useCntkEngine=false", "disableRegularization=false"},
     bse_batch_norm_layer,
     NULL,
     0},
    {"Splice", {"inputs", "axis=1", "tag=''"}, bse_splice, NULL, 0},
    {"RowStack", {"inputs", "axis=1", "tag=''"}, bse_splice, NULL, 0},
    {"RowSlice", {"beginIndex", "numRows", "input", "tag=''"}, bse_slice, NULL, 0},
    {"Slice", {"beginIndex", "endIndex", "input", "axis=1", "tag=''"}, bse_slice, NULL, 0},
    {"ReduceSum", {"z", "axis=None", "tag=''"}, bse_reduce_sum, NULL, 0},
    {"ReduceMean", {"z", "axis=None", "tag=''"}, bse_reduce_sum, NULL, 0},
    {"SumElements", {"z", "tag=''"}, bse_sum_elements, NULL, 0},
    {"LambdaRank", {"gain", "prediction", "queryId", "tag=''"}, bse_node_op, "LambdaRank", 0},
    {"NDCG1Eval", {"gain", "prediction", "queryId", "tag=''"}, bse_node_op, "NDCG1Eval", 0},
    {"LabelsToGraph", {"labels", "tag=''"}, bse_node_op, "LabelsToGraph", 0},
    {"ForwardBackward",
     {"graph", "features", "blankTokenId", "delayConstraint=-1", "tag=''"},
     bse_ctc,
     "ForwardBackward",
     0},
    {"EditDistanceError",
     {"leftInput", "rightInput", "subPen=1", "delPen=1", "insPen=1", "squashInputs=false",
      "tokensToIgnore=None", "tag=''"},
     bse_edit_distance,
     "EditDistanceError",
     0},
    {"ClassBasedCrossEntropyWithSoftmax",
     {"labelClassDescriptorVectorSequence", "mainInputInfo", "mainWeight",
      "classLogProbsBeforeSoftmax", "tag=''"},
     bse_node_op,
     "ClassBasedCrossEntropyWithSoftmax",
     0},
    {"ReduceLogSum", {"z", "axis=None", "tag=''"}, bse_reduce_log_sum, NULL, 0},
    {"ReduceMax", {"z", "axis=None", "tag=''"}, bse_reduce_max, NULL, 0},
    {"ReduceMin", {"z", "axis=None", "tag=''"}, bse_reduce_max, NULL, 0},
    {"TransposeTimes", {"leftMatrix", "rightMatrix", "tag=''"}, bse_transpose_times, NULL, 0},
    {"Transpose", {"x", "tag=''"}, bse_transpose, NULL, 0},
    {"TransposeDimensions", {"input", "axis1", "axis2", "tag=''"}, bse_transpose, NULL, 0},
    {"Sequences.Last", {"x", "tag=''"}, bse_node_op, "Last", 0},
    {"Network.Load", {"path"}, bse_network_load, NULL, 0},
    {"DynamicAxis", {"tag=''"}, bi_dynamic_axis, NULL, 0},
    {"Sequences.First", {"x", "tag=''"}, bse_node_op, "First", 0},
    {"Sequences.BroadcastSequenceAs",
     {"type", "data1", "tag=''"},
     bse_node_op,
     "BroadcastSequenceAs",
     0},
    {"Parallel", {"functions", "combine"}, bse_parallel, NULL, 0},
    {"OptimizedRNNStack",
     {"weights", "input", "hiddenDims", "numLayers=1", "bidirectional=false", "recurrentOp='lstm'",
      "axis=-1", "tag=''"},
     bse_rnn_stack,
     NULL,
     0},
    {"RNNStack",
     {"x", "W", "hiddenSize=10", "numLayers=1", "bidirectional=false", "rnnMode='lstm'", "tag=''"},
     bse_rnn_stack_legacy,
     NULL,
     0},
    {"BiRecurrentLSTMLayer",
     {"outputDim", "cellShape=None", "goBackwards=false", "usePeepholes=false",
      "init='glorotUniform'", "initValueScale=1", "enableSelfStabilization=false",
      "allowOptimizedEngine=false", "trainInitialState=false"},
     bse_bilstm,
     NULL,
     0},
    {"PastValue",
     {"shape", "input", "timeStep=1", "initialState=None", "defaultHiddenActivation=0.1", "tag=''"},
     bi_delay,
     NULL,
     1},
    {"FutureValue",
     {"shape", "input", "timeStep=1", "initialState=None", "defaultHiddenActivation=0.1", "tag=''"},
     bi_delay,
     NULL,
     1},
    {"DelayLayer", {"T=1", "defaultHiddenActivation=0"}, bse_delay_layer, NULL, 0},
    {"Mean", {"x", "tag=''"}, bse_node_op, "Mean", 0},
    {"InvStdDev", {"x", "tag=''"}, bse_node_op, "InvStdDev", 0},
    {"PerDimMeanVarNormalization", {"x", "mean", "invStdDev", "tag=''"}, bi_mvn, NULL, 0},
    {"Identity", {"x"}, bi_identity, NULL, 0},
    /* the data of the first with the sequence axis of the second: partrain derives every
     * node's axis from its use (per step, or per sequence after BS.Sequences.Last / First)
     * and checks the criteria's operands against each other, so the data passes through */
    {"ReconcileDynamicAxis", {"dataInput", "layoutInput", "tag=''"}, bi_identity, NULL, 0},
    {"Pass", {"x", "tag=''"}, bse_node_op, "Pass", 0},
    {"Length", {"x"}, bi_length, NULL, 0},
    {"Mod", {"x", "y"}, bse_int_op, NULL, 0},
    {"IntDiv", {"x", "y"}, bse_int_op, NULL, 0},
    {"IsArray", {"x"}, bse_is_type, NULL, 0},
    {"IsBool", {"x"}, bse_is_type, NULL, 0},
    {"IsDouble", {"x"}, bse_is_type, NULL, 0},
    {"IsSameObject", {"a", "b"}, bse_is_same, NULL, 0},
    {"Chr", {"c"}, bse_chr, NULL, 0},
    {"Substr", {"s", "begin", "num"}, bse_substr, NULL, 0},
    {"Replace", {"s", "from", "to"}, bse_replace, NULL, 0},
    {"Format", {"value", "format"}, bse_format, NULL, 0},
    {"IsNone", {"x"}, bi_is_none, NULL, 0},
    {"Fail", {"what"}, bi_fail, NULL, 0},
    {"NDL.Return", {"macro", "result"}, bi_ndl_return, NULL, 0},
    {"NDL.PerDimMeanVarNormalization", {"x", "mean", "invStdDev", "tag=''"}, bi_mvn_ndl, NULL, 0},
    /* an NDL macro's call with tag= (CE = SMBFF (..., tag = "criterion")): its result tagged */
    {"NDL.Tag", {"x", "tag=''"}, bi_identity, NULL, 0},
};

const char *bse_builtin_spelled(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcasecmp(builtins[i].name, name))
            return builtins[i].name;
    return NULL;
}

const struct builtin *bse_find_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, name))
            return &builtins[i];
    return NULL;
}
