/* SimpleNetworkBuilder -> struct nn_config (typed reads through nn_simple_builder_schema),
 * and back to config text for model files. */
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

static int get(struct cfg_node *block, const char *key, struct cfg_val *v, struct pt_err *e)
{
    return cfg_schema_get(block, &nn_simple_builder_schema, key, v, e);
}

static const struct cfg_origin *origin_of(struct cfg_node *block, const struct cfg_val *v)
{
    return v->node ? cfg_value_origin(v->node) : cfg_origin_of(block);
}

static int read_sizes(struct cfg_node *block, struct nn_config *c, struct pt_err *e)
{
    struct cfg_val v;
    int rc = get(block, "layerSizes", &v, e);
    if (rc) {
        cfg_val_free(&v); /* a half-parsed list */
        return rc;
    }
    const struct cfg_origin *o = origin_of(block, &v);
    cfg_origin_str(o, c->origin, sizeof c->origin);
    int min = c->rnn == NN_LSTM ? 3 : 2;
    if (v.n < (size_t)min)
        rc = cfg_error(e, o, "layerSizes: expected input:%s:output (at least %d sizes), got %zu",
                       c->rnn == NN_LSTM ? "hidden..." : "[hidden...]", min, v.n);
    else if (v.n > NN_MAX_HIDDEN + 2)
        rc = cfg_error(e, o, "layerSizes: %zu sizes; at most %d hidden layers are supported", v.n,
                       NN_MAX_HIDDEN);
    for (size_t i = 0; rc == 0 && i < v.n; i++) {
        if (v.ilist[i] > NN_MAX_DIM)
            rc = cfg_error(e, o, "layerSizes: %lld is too large (at most %d)", v.ilist[i],
                           NN_MAX_DIM);
        c->sizes[i] = (int)v.ilist[i];
    }
    c->nsizes = (int)v.n;
    cfg_val_free(&v);
    return rc;
}

/* One activation per hidden layer; the last given repeats. */
static int read_types(struct cfg_node *block, struct nn_config *c, struct pt_err *e)
{
    struct cfg_val v;
    int rc = get(block, "layerTypes", &v, e);
    if (rc) {
        cfg_val_free(&v);
        return rc;
    }
    int hidden = c->nsizes - 2;
    if (v.n > (size_t)(hidden > 1 ? hidden : 1))
        rc = cfg_error(e, origin_of(block, &v),
                       "layerTypes: %zu entries, but layerSizes has %d hidden layer%s", v.n, hidden,
                       hidden == 1 ? "" : "s");
    enum bk_act last = BK_ACT_SIGMOID;
    for (int i = 0; rc == 0 && i < hidden; i++) {
        if ((size_t)i < v.n)
            for (size_t k = 0; k < COUNT(act_names); k++)
                if (strcasecmp(act_names[k].name, v.slist.items[i]) == 0)
                    last = act_names[k].act;
        c->acts[i] = last;
    }
    cfg_val_free(&v);
    return rc;
}

static int read_crit(struct cfg_node *block, const char *key, enum bk_crit_kind *kind, char *name,
                     size_t size, struct pt_err *e)
{
    struct cfg_val v;
    int rc = get(block, key, &v, e);
    if (rc)
        return rc;
    const struct name_crit *nc = v.s ? find_crit(v.s) : NULL;
    if (!nc)
        return cfg_error(e, origin_of(block, &v), "%s: not a criterion this network knows", key);
    *kind = nc->kind;
    snprintf(name, size, "%s", nc->name);
    return 0;
}

static int read_flags(struct cfg_node *block, struct nn_config *c, struct pt_err *e)
{
    static const char *const bools[] = {"uniformInit", "applyMeanVarNorm", "needPrior",
                                        "addDropoutNodes"};
    int *bool_out[] = {&c->uniform_init, &c->mean_var_norm, &c->need_prior, &c->dropout};
    static const char *const reals[] = {"initValueScale", "inputGateInitVal", "forgetGateInitVal",
                                        "outputGateInitVal", "defaultHiddenActivity"};
    double *real_out[] = {&c->init_scale, &c->gate_init[0], &c->gate_init[1], &c->gate_init[2],
                          &c->hidden_activity};
    struct cfg_val v;
    for (size_t i = 0; i < COUNT(bools); i++) {
        int rc = get(block, bools[i], &v, e);
        if (rc)
            return rc;
        *bool_out[i] = v.b;
    }
    for (size_t i = 0; i < COUNT(reals); i++) {
        int rc = get(block, reals[i], &v, e);
        if (rc)
            return rc;
        *real_out[i] = v.d;
    }
    return 0;
}

int nn_config_read(struct cfg_node *block, struct nn_config *out, struct pt_err *e)
{
    struct cfg_val v;
    memset(out, 0, sizeof *out);
    int rc = get(block, "rnnType", &v, e);
    if (rc)
        return rc;
    out->rnn = v.s && strcasecmp(v.s, "LSTM") == 0 ? NN_LSTM : NN_SIMPLENET;
    rc = read_sizes(block, out, e);
    if (rc == 0)
        rc = read_types(block, out, e);
    if (rc == 0)
        rc = read_crit(block, "trainingCriterion", &out->train_crit, out->train_name,
                       sizeof out->train_name, e);
    if (rc == 0)
        rc = read_crit(block, "evalCriterion", &out->eval_crit, out->eval_name,
                       sizeof out->eval_name, e);
    if (rc == 0)
        rc = read_flags(block, out, e);
    return rc;
}

/* Appending to a fixed buffer; len keeps counting past the end (snprintf semantics). */
struct text_out {
    char *buf;
    size_t size, len;
};

static void __attribute__((format(printf, 2, 3))) text_add(struct text_out *t, const char *fmt, ...)
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
    struct text_out t = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    text_add(&t, "rnnType=%s\nlayerSizes=", c->rnn == NN_LSTM ? "LSTM" : "SIMPLENET");
    for (int i = 0; i < c->nsizes; i++)
        text_add(&t, "%s%d", i ? ":" : "", c->sizes[i]);
    text_add(&t, "\nlayerTypes=");
    if (c->nsizes <= 2)
        text_add(&t, "Sigmoid");
    for (int i = 0; i < c->nsizes - 2; i++)
        text_add(&t, "%s%s", i ? ":" : "", act_name(c->acts[i]));
    text_add(&t, "\ntrainingCriterion=%s\nevalCriterion=%s\n", c->train_name, c->eval_name);
    text_add(&t, "uniformInit=%s\ninitValueScale=%.17g\n", c->uniform_init ? "true" : "false",
             c->init_scale);
    text_add(&t, "applyMeanVarNorm=%s\nneedPrior=%s\naddDropoutNodes=%s\n",
             c->mean_var_norm ? "true" : "false", c->need_prior ? "true" : "false",
             c->dropout ? "true" : "false");
    text_add(&t, "inputGateInitVal=%.17g\nforgetGateInitVal=%.17g\noutputGateInitVal=%.17g\n",
             c->gate_init[0], c->gate_init[1], c->gate_init[2]);
    text_add(&t, "defaultHiddenActivity=%.17g\n", c->hidden_activity);
    return t.len > (size_t)0x7fffffff ? 0x7fffffff : (int)t.len;
}

int nn_config_same_layout(const struct nn_config *a, const struct nn_config *b)
{
    if (a->rnn != b->rnn || a->nsizes != b->nsizes || a->mean_var_norm != b->mean_var_norm)
        return 0;
    for (int i = 0; i < a->nsizes; i++)
        if (a->sizes[i] != b->sizes[i])
            return 0;
    for (int i = 0; a->rnn == NN_SIMPLENET && i < a->nsizes - 2; i++)
        if (a->acts[i] != b->acts[i])
            return 0;
    return 1;
}
