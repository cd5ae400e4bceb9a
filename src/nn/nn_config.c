/* SimpleNetworkBuilder: its schema, whose rows fill struct nn_config (cfg_schema_read), and
 * back to config text for model files. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nn/nn_internal.h"

struct name_act {
    const char *name;
    enum bk_act act;
};

static const struct name_act act_names[] = {
    {"Sigmoid", BK_ACT_SIGMOID},
    {"RectifiedLinear", BK_ACT_RELU},
    {"Tanh", BK_ACT_TANH},
    {"None", BK_ACT_NONE},
};

struct name_crit {
    const char *name;
    enum bk_crit_kind kind;
};

/* Every name either criterion key accepts; trainingCriterion takes the ones with a
 * gradient (the schema's choices already restrict it). */
static const struct name_crit crit_names[] = {
    {"CrossEntropyWithSoftmax", BK_CRIT_CE_SOFTMAX},
    {"SquareError", BK_CRIT_SQUARE_ERR},
    {"ClassificationError", BK_CRIT_CLASS_ERR},
    {"ErrorPrediction", BK_CRIT_CLASS_ERR},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct name_crit *find_crit(const char *s)
{
    for (size_t i = 0; i < COUNT(crit_names); i++)
        if (strcasecmp(crit_names[i].name, s) == 0)
            return &crit_names[i];
    return NULL;
}

static const char *act_name(enum bk_act act)
{
    for (size_t i = 0; i < COUNT(act_names); i++)
        if (act_names[i].act == act)
            return act_names[i].name;
    return "None";
}

static const struct cfg_origin *origin_of(struct cfg_node *block, const struct cfg_val *v)
{
    return v->node ? cfg_value_origin(v->node) : cfg_origin_of(block);
}

/* layerSizes: 2..NN_MAX_HIDDEN+2 sizes (3 for LSTM: rnnType is read before), each at most
 * NN_MAX_DIM; its origin names the network in later messages. */
static int set_sizes(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    struct nn_config *c = out;
    const struct cfg_origin *o = origin_of(block, v);
    cfg_origin_str(o, c->origin, sizeof c->origin);
    int min = nn_rnn_kind(c->rnn)->min_sizes, rc = 0;
    if (v->n < (size_t)min)
        rc = cfg_error(e, o, "layerSizes: expected input:%s:output (at least %d sizes), got %zu",
                       min > 2 ? "hidden..." : "[hidden...]", min, v->n);
    else if (v->n > NN_MAX_HIDDEN + 2)
        rc = cfg_error(e, o, "layerSizes: %zu sizes; at most %d hidden layers are supported", v->n,
                       NN_MAX_HIDDEN);
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        if (v->ilist[i] > NN_MAX_DIM)
            rc = cfg_error(e, o, "layerSizes: %lld is too large (at most %d)", v->ilist[i],
                           NN_MAX_DIM);
        c->sizes[i] = (int)v->ilist[i];
    }
    c->nsizes = (int)v->n;
    return rc;
}

/* layerTypes: one activation per hidden layer; the last given repeats. */
static int set_types(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    struct nn_config *c = out;
    int hidden = c->nsizes - 2, rc = 0;
    if (v->n > (size_t)(hidden > 1 ? hidden : 1))
        rc = cfg_error(e, origin_of(block, v),
                       "layerTypes: %zu entries, but layerSizes has %d hidden layer%s", v->n,
                       hidden, hidden == 1 ? "" : "s");
    enum bk_act last = BK_ACT_SIGMOID;
    for (int i = 0; rc == 0 && i < hidden; i++) {
        if ((size_t)i < v->n)
            for (size_t k = 0; k < COUNT(act_names); k++)
                if (strcasecmp(act_names[k].name, v->slist.items[i]) == 0)
                    last = act_names[k].act;
        c->acts[i] = last;
    }
    return rc;
}

static int set_crit(const char *key, struct cfg_node *block, const struct cfg_val *v,
                    enum bk_crit_kind *kind, char *name, size_t size, struct pt_err *e)
{
    const struct name_crit *nc = v->s ? find_crit(v->s) : NULL;
    if (v->s && strcasecmp(v->s, "ClassCrossEntropyWithSoftmax") == 0) { /* CLASSLSTM's */
        snprintf(name, size, "ClassCrossEntropyWithSoftmax");
        return 0;
    }
    if (!nc)
        return cfg_error(e, origin_of(block, v), "%s: not a criterion this network knows", key);
    *kind = nc->kind;
    snprintf(name, size, "%s", nc->name);
    return 0;
}

/* rnnType: SIMPLENET and LSTM as the layer stacks; CLASSLSTM reads the LSTM's keys
 * (layerSizes of at least 3) and becomes a BrainScript network (nn_config_read). */
static int set_rnn(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block;
    (void)e;
    struct nn_config *c = out;
    c->class_lm = strcasecmp(v->s, "CLASSLSTM") == 0 ? 1 : strcasecmp(v->s, "CLASSLM") == 0 ? 2 : 0;
    c->rnn = c->class_lm == 1 || strcasecmp(v->s, "LSTM") == 0 ? NN_LSTM : NN_SIMPLENET;
    return 0;
}

/* recurrentLayer: hidden layers 1 .. 63, as bits. */
static int set_recurrent(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    struct nn_config *c = out;
    c->recurrent = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->ilist[i] < 1 || v->ilist[i] > 63)
            return cfg_error(e, origin_of(block, v),
                             "recurrentLayer: %lld: expected hidden layers numbered from 1",
                             v->ilist[i]);
        c->recurrent |= 1ull << (v->ilist[i] - 1);
    }
    return 0;
}

static int set_train_crit(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    struct nn_config *c = out;
    return set_crit("trainingCriterion", block, v, &c->train_crit, c->train_name,
                    sizeof c->train_name, e);
}

static int set_eval_crit(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    struct nn_config *c = out;
    return set_crit("evalCriterion", block, v, &c->eval_crit, c->eval_name, sizeof c->eval_name, e);
}

#define NC(m) CFG_OUT(struct nn_config, m)

/* The keys of SimpleNetworkBuilder (SPEC 4) and where they go. Defaults are CNTK's. */
static const struct cfg_key snb_keys[] = {
    {.name = "rnnType",
     .type = CFG_ENUM,
     .def = "SIMPLENET",
     .choices = "SIMPLENET|LSTM|CLASSLSTM|CLASSLM",
     .unsupported = "SIMPLERNN|TENSORIOLSTM|CLSTM|LSTMENCODER|NCELSTM|"
                    "UNIDIRECTIONALLSTMWITHPASTPREDICTION|BIDIRECTIONALLSTMWITHPASTPREDICTION|"
                    "ALIGNMENTSIMILARITYGENERATOR|LSTMENCODER|DNN",
     .help = "SIMPLENET = feed-forward network, LSTM = stacked peephole LSTM, CLASSLSTM and "
             "CLASSLM = CNTK's class-based LSTM and simple recurrent language models (README "
             "\"Language models\")",
     .set = set_rnn},
    {.name = "layerSizes",
     .type = CFG_INT_LIST,
     .flags = CFG_REQUIRED | CFG_HAS_MIN,
     .min = 1,
     .help = "input:hidden...:output, e.g. 784:512*2:10",
     .set = set_sizes},
    {.name = "layerTypes",
     .type = CFG_STRING_LIST,
     .def = "Sigmoid",
     .choices = "Sigmoid|RectifiedLinear|Tanh|None",
     .help = "activation per hidden layer; the last one repeats",
     .set = set_types},
    {.name = "trainingCriterion",
     .type = CFG_ENUM,
     .flags = CFG_REQUIRED,
     .choices = "CrossEntropyWithSoftmax|SquareError|ClassCrossEntropyWithSoftmax",
     .unsupported = "NoiseContrastiveEstimationNode|SequenceWithSoftmax|CRF",
     .help = "the criterion that is minimized (ClassCrossEntropyWithSoftmax: CLASSLSTM's)",
     .set = set_train_crit},
    {.name = "evalCriterion",
     .type = CFG_ENUM,
     .flags = CFG_REQUIRED,
     .choices = "ClassificationError|ErrorPrediction|CrossEntropyWithSoftmax|SquareError|"
                "ClassCrossEntropyWithSoftmax",
     .unsupported = "NoiseContrastiveEstimationNode|SequenceWithSoftmax|CRF",
     .help = "the criterion that is reported (ErrorPrediction = ClassificationError)",
     .set = set_eval_crit},
    {.name = "uniformInit",
     .type = CFG_BOOL,
     .def = "true",
     .help = "true: U(-0.05 s, 0.05 s); false: N(0, 0.2/sqrt(fanIn) s)",
     NC(uniform_init)},
    {.name = "initValueScale",
     .type = CFG_REAL,
     .def = "1.0",
     .flags = CFG_HAS_MIN | CFG_MIN_EXCL,
     .help = "the scale s of the initial weights",
     NC(init_scale)},
    {.name = "addPrior",
     .type = CFG_BOOL,
     .def = "false",
     .help = "CNTK's language-model builders' prior node: only false (no prior is built)",
     NC(add_prior)},
    {.name = "applyMeanVarNorm",
     .type = CFG_BOOL,
     .def = "false",
     .help = "normalize inputs by the training set's mean and standard deviation",
     NC(mean_var_norm)},
    {.name = "needPrior",
     .type = CFG_BOOL,
     .def = "false",
     .help = "compute the label prior and store it with the model",
     NC(need_prior)},
    {.name = "addDropoutNodes",
     .type = CFG_BOOL,
     .def = "false",
     .help = "dropout after hidden layers at SGD.dropoutRate",
     NC(dropout)},
    {.name = "inputGateInitVal",
     .type = CFG_REAL,
     .def = "-1",
     .help = "LSTM input gate bias",
     NC(gate_init[0])},
    {.name = "forgetGateInitVal",
     .type = CFG_REAL,
     .def = "-1",
     .help = "LSTM forget gate bias",
     NC(gate_init[1])},
    {.name = "outputGateInitVal",
     .type = CFG_REAL,
     .def = "-1",
     .help = "LSTM output gate bias",
     NC(gate_init[2])},
    {.name = "defaultHiddenActivity",
     .type = CFG_REAL,
     .def = "0.1",
     .help = "LSTM initial hidden activity",
     NC(hidden_activity)},
    {.name = "recurrentLayer",
     .type = CFG_INT_LIST,
     .help = "CLASSLM: the hidden layers (from 1) that are recurrent, e.g. 1 or 1:2; CLASSLSTM: "
             "accepted, as CNTK's builder reads and ignores it (its LSTMs are the hidden sizes "
             "after the embedding); other networks: refused (recurrent layers inside SIMPLENET "
             "are not implemented; use rnnType=LSTM)",
     .set = set_recurrent},
    {.name = "lookupTableOrder",
     .type = CFG_INT,
     .def = "0",
     .help = "CLASSLSTM: 1 = the words through an embedding E0 of layerSizes[1] rows, 0 = "
             "the one-hot words straight into the LSTM; other networks: only 0",
     NC(lookup_order)},
    {.name = "vocabSize",
     .type = CFG_INT,
     .def = "0",
     .help = "CLASSLSTM: the vocabulary (layerSizes' first and last sizes)",
     NC(vocab_size)},
    {.name = "nbrClass",
     .type = CFG_INT,
     .def = "0",
     .help = "CLASSLSTM: the word classes (required there)",
     NC(classes)},
    {.name = "directConnect",
     .type = CFG_UNSUPPORTED,
     .help = "direct connections between layers are not implemented"},
    {.name = "streamSizes",
     .type = CFG_UNSUPPORTED,
     .help = "multi-stream inputs are not implemented"},
    {.name = NULL},
};

const struct cfg_schema nn_simple_builder_schema = {
    .name = "SimpleNetworkBuilder",
    .where = "inside a command block with action=train",
    .help = "The built-in feed-forward and LSTM network.",
    .keys = snb_keys,
};

int nn_config_read(struct cfg_node *block, struct nn_config *out, struct pt_err *e)
{
    memset(out, 0, sizeof *out);
    int rc = cfg_schema_read(block, &nn_simple_builder_schema, out, e);
    if (rc)
        return rc;
    int class_crit = !strcmp(out->train_name, "ClassCrossEntropyWithSoftmax") ||
                     !strcmp(out->eval_name, "ClassCrossEntropyWithSoftmax");
    const char *rnn = out->class_lm == 1   ? "CLASSLSTM"
                      : out->class_lm == 2 ? "CLASSLM"
                                           : nn_rnn_kind(out->rnn)->name;
    if ((out->class_lm != 0) != class_crit ||
        (out->class_lm && strcmp(out->train_name, out->eval_name)))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: rnnType = CLASSLSTM or CLASSLM goes with trainingCriterion "
                          "= evalCriterion = ClassCrossEntropyWithSoftmax, and that criterion "
                          "with them only (rnnType %s, criteria %s and %s)",
                          out->origin, rnn, out->train_name, out->eval_name);
    if (out->add_prior)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: addPrior = true: the prior node of CNTK's "
                          "language-model builders is not built (needPrior is the feed-forward "
                          "network's)",
                          out->origin);
    if (!out->class_lm && (out->lookup_order || out->recurrent))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: lookup tables and recurrent layers inside %s are not "
                          "implemented (CLASSLSTM and CLASSLM have them; for an LSTM use "
                          "rnnType=LSTM)",
                          out->origin, out->lookup_order ? "lookupTableOrder" : "recurrentLayer",
                          rnn);
    return out->class_lm ? nn_class_lm(out, e) : 0;
}

void nn_text_add(struct nn_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t at = t->len < t->size ? t->len : t->size;
    int n = vsnprintf(t->buf + at, t->size - at, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

int nn_config_write(const struct nn_config *c, char *buf, size_t size)
{
    struct nn_text t = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    if (c->rnn == NN_GRAPH) {
        if (c->bs_root[0]) /* CNTK's form, which says which member is the network */
            nn_text_add(&t, "BrainScriptNetworkBuilder = (new ComputationNetwork ([\n%s\n].%s))\n",
                        c->bs_text, c->bs_root);
        else
            nn_text_add(&t, "BrainScriptNetworkBuilder = [\n%s\n]\n", c->bs_text);
        return t.len > (size_t)0x7fffffff ? 0x7fffffff : (int)t.len;
    }
    nn_text_add(&t, "rnnType=%s\nlayerSizes=", nn_rnn_kind(c->rnn)->name);
    for (int i = 0; i < c->nsizes; i++)
        nn_text_add(&t, "%s%d", i ? ":" : "", c->sizes[i]);
    nn_text_add(&t, "\nlayerTypes=");
    if (c->nsizes <= 2)
        nn_text_add(&t, "Sigmoid");
    for (int i = 0; i < c->nsizes - 2; i++)
        nn_text_add(&t, "%s%s", i ? ":" : "", act_name(c->acts[i]));
    nn_text_add(&t, "\ntrainingCriterion=%s\nevalCriterion=%s\n", c->train_name, c->eval_name);
    nn_text_add(&t, "uniformInit=%s\ninitValueScale=%.17g\n", c->uniform_init ? "true" : "false",
                c->init_scale);
    nn_text_add(&t, "applyMeanVarNorm=%s\nneedPrior=%s\naddDropoutNodes=%s\n",
                c->mean_var_norm ? "true" : "false", c->need_prior ? "true" : "false",
                c->dropout ? "true" : "false");
    nn_text_add(&t, "inputGateInitVal=%.17g\nforgetGateInitVal=%.17g\noutputGateInitVal=%.17g\n",
                c->gate_init[0], c->gate_init[1], c->gate_init[2]);
    nn_text_add(&t, "defaultHiddenActivity=%.17g\n", c->hidden_activity);
    return t.len > (size_t)0x7fffffff ? 0x7fffffff : (int)t.len;
}

int nn_config_same_layout(const struct nn_config *a, const struct nn_config *b)
{
    if (a->rnn != b->rnn || a->nsizes != b->nsizes || a->mean_var_norm != b->mean_var_norm)
        return 0;
    if (a->rnn == NN_GRAPH)
        return strcmp(a->bs_text, b->bs_text) == 0 && strcmp(a->bs_root, b->bs_root) == 0;
    for (int i = 0; i < a->nsizes; i++)
        if (a->sizes[i] != b->sizes[i])
            return 0;
    for (int i = 0; nn_rnn_kind(a->rnn)->hidden_acts && i < a->nsizes - 2; i++)
        if (a->acts[i] != b->acts[i])
            return 0;
    return 1;
}
