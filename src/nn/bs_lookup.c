/* BrainScript names that are functions (bs_eval_internal.h): a row of builtins[]
 * (bs_builtins.c) as a value, a node kind without a row as a function of its inputs by
 * its own name, and the names of CNTK's library that partrain refuses as not built yet. */
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* A built-in as a function value (BV_NONE with e set on out of memory). */
static struct bv function_of(struct ev *v, const struct builtin *bi)
{
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!f)
        return (struct bv){.k = BV_NONE};
    f->k = FN_BUILTIN;
    f->bi = bi;
    return (struct bv){.k = BV_FN, .fn = f};
}

struct bv bse_builtin_value(struct ev *v, const char *name)
{
    return function_of(v, bse_find_builtin(name));
}

/* The names of CNTK.core.bs's definitions (CNTK's BrainScript library): one that is no
 * built-in, kind or definition of partrain's is refused as not built yet, by name, not
 * as an unknown name (those partrain has are found before this list is looked at). */
static const char *const not_yet_names[] = {
    "Abs",
    "AveragePooling",
    "AveragePoolingLayer",
    "BFF",
    "BatchNormalization",
    "BatchNormalizationLayer",
    "BilinearUpsamplingLayer",
    "Cast",
    "ClassificationError",
    "ColumnwiseCrossProduct",
    "Constant",
    "ConstantFromString",
    "ConstantTensor",
    "Convolution",
    "ConvolutionTranspose",
    "ConvolutionTransposeLayer",
    "ConvolutionalLayer",
    "CosDistanceWithNegativeSamples",
    "CrossEntropyWithSoftmax",
    "DelayLayer",
    "DenseLayer",
    "DiagTimes",
    "Dropout",
    "DynamicAxis",
    "ELU",
    "ElementDivide",
    "ElementTimes",
    "Embedding",
    "EmbeddingLayer",
    "EnvironmentInput",
    "ErrorPrediction",
    "Exp",
    "Fac",
    "Fail",
    "FeatureMVNLayer",
    "FlattenDimensions",
    "FutureValue",
    "GMMLogLikelihood",
    "GatherPacked",
    "Identity",
    "ImageInput",
    "Input",
    "InvStdDev",
    "KhatriRaoProduct",
    "LSTMP",
    "LatticeSequenceWithSoftmax",
    "LayerStack",
    "LeakyReLU",
    "LearnableParameter",
    "Length",
    "LinearLayer",
    "Log",
    "LogPrior",
    "LogPriorLayer",
    "Logistic",
    "Max",
    "MaxPooling",
    "MaxPoolingLayer",
    "MaxUnpooling",
    "MaxUnpoolingLayer",
    "Mean",
    "MeanVarNorm",
    "Min",
    "Minus",
    "Negate",
    "NewReshape",
    "PackedIndex",
    "Parallel",
    "Parameter",
    "ParameterTensor",
    "Pass",
    "PastValue",
    "PerDimMeanVarNormalization",
    "Plus",
    "Pooling",
    "Print",
    "QuantizedTimes",
    "ROIPooling",
    "ReLU",
    "Reciprocal",
    "ReconcileDynamicAxis",
    "RectifiedLinear",
    "RecurrentLSTMLayer",
    "ReduceMean",
    "ReduceProd",
    "ReduceSum",
    "Reshape",
    "ReshapeDimension",
    "RowSlice",
    "RowStack",
    "SBFF",
    "Scale",
    "ScatterPacked",
    "Sequential",
    "Sigmoid",
    "Sign",
    "Slice",
    "Softmax",
    "Softplus",
    "SparseImageInput",
    "SparseInput",
    "Splice",
    "SplitDimension",
    "Sqrt",
    "SquareError",
    "Stabilizer",
    "StabilizerLayer",
    "Tanh",
    "Times",
    "Trace",
    "Where",
};

int bse_not_yet(const char *name)
{
    for (size_t i = 0; i < sizeof not_yet_names / sizeof not_yet_names[0]; i++)
        if (!strcmp(not_yet_names[i], name))
            return 1;
    return 0;
}

int bse_builtin_lookup(struct ev *v, const char *name, struct bv *out, int *found)
{
    const struct builtin *bi = bse_find_builtin(name);
    if (bi) {
        *out = function_of(v, bi);
        if (out->k == BV_NONE)
            return v->e->code;
        *found = 1;
        return 0;
    }
    const struct g_kind *k = g_kind_find(name);
    if (k && k->nin > 0 && k != &g_kind_affine && k != &g_kind_lstm) {
        /* a node kind with no row in builtins[] (adding a node is its row in the kind
         * table): a function of its inputs, positional, and an ignored tag */
        static const char *const sig[] = {"x0", "x1", "x2", "x3", "x4"};
        struct builtin *b = bse_alloc(v, sizeof *b);
        if (!b)
            return v->e->code;
        b->name = k->name;
        for (int i = 0; i < k->nin; i++)
            b->sig[i] = sig[i];
        b->sig[k->nin] = "tag=''";
        b->fn = bse_node_op;
        b->kind = k->name;
        *out = function_of(v, b);
        if (out->k == BV_NONE)
            return v->e->code;
        *found = 1;
        return 0;
    }
    return 0;
}
