/* Keys of SimpleNetworkBuilder (SPEC §4). Defaults are CNTK's. */
#include "nn/nn.h"

static const struct cfg_key snb_keys[] = {
    {.name = "rnnType", .type = CFG_ENUM, .def = "SIMPLENET", .choices = "SIMPLENET|LSTM",
     .unsupported = "SIMPLERNN|CLASSLSTM|TENSORIOLSTM|CLSTM|LSTMENCODER|CLASSLM|NCELSTM|"
                    "UNIDIRECTIONALLSTMWITHPASTPREDICTION|BIDIRECTIONALLSTMWITHPASTPREDICTION|"
                    "ALIGNMENTSIMILARITYGENERATOR|LSTMENCODER|DNN",
     .help = "SIMPLENET = feed-forward network, LSTM = stacked peephole LSTM"},
    {.name = "layerSizes", .type = CFG_INT_LIST, .flags = CFG_REQUIRED | CFG_HAS_MIN, .min = 1,
     .help = "input:hidden...:output, e.g. 784:512*2:10"},
    {.name = "layerTypes", .type = CFG_STRING_LIST, .def = "Sigmoid",
     .choices = "Sigmoid|RectifiedLinear|Tanh|None",
     .help = "activation per hidden layer; the last one repeats"},
    {.name = "trainingCriterion", .type = CFG_ENUM, .flags = CFG_REQUIRED,
     .choices = "CrossEntropyWithSoftmax|SquareError",
     .unsupported = "ClassCrossEntropyWithSoftmax|NoiseContrastiveEstimationNode|"
                    "SequenceWithSoftmax|CRF",
     .help = "the criterion that is minimized"},
    {.name = "evalCriterion", .type = CFG_ENUM, .flags = CFG_REQUIRED,
     .choices = "ClassificationError|ErrorPrediction|CrossEntropyWithSoftmax|SquareError",
     .unsupported = "ClassCrossEntropyWithSoftmax|NoiseContrastiveEstimationNode|"
                    "SequenceWithSoftmax|CRF",
     .help = "the criterion that is reported (ErrorPrediction = ClassificationError)"},
    {.name = "uniformInit", .type = CFG_BOOL, .def = "true",
     .help = "true: U(-0.05 s, 0.05 s); false: N(0, 0.2/sqrt(fanIn) s)"},
    {.name = "initValueScale", .type = CFG_REAL, .def = "1.0",
     .flags = CFG_HAS_MIN | CFG_MIN_EXCL, .help = "the scale s of the initial weights"},
    {.name = "applyMeanVarNorm", .type = CFG_BOOL, .def = "false",
     .help = "normalize inputs by the training set's mean and standard deviation"},
    {.name = "needPrior", .type = CFG_BOOL, .def = "false",
     .help = "compute the label prior and store it with the model"},
    {.name = "addDropoutNodes", .type = CFG_BOOL, .def = "false",
     .help = "dropout after hidden layers at SGD.dropoutRate"},
    {.name = "inputGateInitVal", .type = CFG_REAL, .def = "-1", .help = "LSTM input gate bias"},
    {.name = "forgetGateInitVal", .type = CFG_REAL, .def = "-1", .help = "LSTM forget gate bias"},
    {.name = "outputGateInitVal", .type = CFG_REAL, .def = "-1", .help = "LSTM output gate bias"},
    {.name = "defaultHiddenActivity", .type = CFG_REAL, .def = "0.1",
     .help = "LSTM initial hidden activity"},
    {.name = "recurrentLayer", .type = CFG_UNSUPPORTED,
     .help = "recurrent layers inside SIMPLENET are not implemented; use rnnType=LSTM"},
    {.name = "lookupTableOrder", .type = CFG_UNSUPPORTED,
     .help = "lookup-table (embedding) inputs are not implemented"},
    {.name = "directConnect", .type = CFG_UNSUPPORTED,
     .help = "direct connections between layers are not implemented"},
    {.name = "streamSizes", .type = CFG_UNSUPPORTED,
     .help = "multi-stream inputs are not implemented"},
    {.name = NULL},
};

const struct cfg_schema nn_simple_builder_schema = {
    .name = "SimpleNetworkBuilder",
    .where = "inside a command block with action=train",
    .help = "The built-in feed-forward and LSTM network.",
    .keys = snb_keys,
};
