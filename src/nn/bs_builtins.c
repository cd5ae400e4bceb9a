/* BrainScript's built-in functions (bs_eval_internal.h): the nodes, parameters with
 * CNTK's initializations, and CNTK's Layers library, one row each in builtins[]. A node
 * kind without a row is still a function of its inputs by its own name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int ins[8];
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

/* An array of dimensions: the first, the product of the others (capped just above 2^24)
 * and how many there are. */
static int dims_of(struct ev *v, const struct bs_node *at, const char *what, const struct barr *a,
                   int *first, long long *rest)
{
    *rest = 1;
    for (size_t i = 0; i < a->n; i++) {
        int d = 0;
        int rc = bse_get_int(v, at, what, &a->v[i], &d);
        if (rc)
            return rc;
        if (i == 0)
            *first = d;
        else
            *rest = *rest * d > (1 << 24) ? (1 << 24) + 1 : *rest * d;
    }
    return 0;
}

/* Input's dims: a number or an array of numbers -> rows, the product of all (a tensor's
 * values, first axis fastest, as CNTK lays them out and the reader delivers them: an
 * image's 28:28:1 is its 784 pixels), and the array's rank. */
static int get_flat_dims(struct ev *v, const struct bs_node *at, const char *what,
                         const struct bv *x, int *rows, int *rank, int tdims[3])
{
    *rank = 1;
    tdims[0] = tdims[1] = tdims[2] = 1;
    if (x->k != BV_ARR)
        return bse_get_int(v, at, what, x, rows);
    /* an image's x, y and channels (the product of the dims beyond the second) */
    for (size_t i = 0; i < x->arr->n; i++) {
        int d = 0;
        if (x->arr->v[i].k == BV_NUM && bse_get_int(v, at, what, &x->arr->v[i], &d) == 0 && d > 0)
            tdims[i < 2 ? i : 2] *= d;
    }
    int first = 0;
    long long rest = 1;
    int rc = dims_of(v, at, what, x->arr, &first, &rest);
    if (rc == 0 && first * rest > (1 << 24))
        return bs_error(v->e, at, "%s: more than 2^24 values in one sample", what);
    *rows = (int)(first * rest);
    *rank = (int)x->arr->n;
    return rc;
}

/* dims: a number or an array of numbers -> rows (the first) and cols (the product of the
 * rest, or fixed_cols when there is no rest). */
int bse_get_dims(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                 int *rows, int *cols)
{
    if (x->k != BV_ARR)
        return bse_get_int(v, at, what, x, rows);
    long long c = 1;
    int rc = dims_of(v, at, what, x->arr, rows, &c);
    if (rc == 0 && x->arr->n > 2 && c > 0)
        return bs_error(v->e, at, "%s: tensors of rank %zu are not supported (rank 1 or 2)", what,
                        x->arr->n);
    if (rc == 0 && x->arr->n > 1)
        *cols = (int)c;
    return rc;
}

const char *bse_get_str(const struct bv *x)
{
    return x->k == BV_STR ? x->str : NULL;
}

static const struct {
    const char *name;
    enum g_init init;
} inits[] = {
    {"uniform", G_INIT_UNIFORM},
    {"gaussian", G_INIT_GAUSSIAN},
    {"xavier", G_INIT_XAVIER},
    {"glorotUniform", G_INIT_GLOROT_UNIFORM},
    {"glorotNormal", G_INIT_GLOROT_NORMAL},
    {"heUniform", G_INIT_HE_UNIFORM},
    {"heNormal", G_INIT_HE_NORMAL},
    {"normal", G_INIT_NORMAL},
    {"uniform1", G_INIT_UNIFORM1},
    {"TruncNormal", G_INIT_TRUNC_NORMAL},
    {"fixedValue", G_INIT_FIXED},
    {"zero", G_INIT_FIXED},
};

/* Parameter args after the dims: init, initValueScale, value, initValue, lrm. */
int bse_param_node(struct ev *v, const struct bs_node *at, struct bv *a, int rows, int cols,
                   struct bv *out)
{
    const char *init = bse_get_str(&a[0]);
    if (!init || a[1].k != BV_NUM || (a[2].k != BV_NUM && a[2].k != BV_NONE) ||
        (a[3].k != BV_NUM && a[3].k != BV_NONE) || a[4].k != BV_NUM)
        return bs_error(v->e, at,
                        "Parameter: init must be a string; initValueScale, value, "
                        "initValue and learningRateMultiplier numbers");
    if (a[4].num != 1.0 && a[4].num != 0.0)
        return bs_error(v->e, at,
                        "Parameter: learningRateMultiplier=%g is not supported yet (only 1, "
                        "or 0: not learned)",
                        a[4].num);
    int rc = bse_make_node(v, at, "Parameter", NULL, 0, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->learnable = 1;
    n->state = a[4].num == 0.0;
    n->rows = rows;
    n->cols = cols;
    n->init_scale = a[1].num;
    int fixed = a[3].k == BV_NUM || (init[0] == '\0' && a[2].k == BV_NUM && a[2].num != 0);
    n->init_value = a[3].k == BV_NUM ? a[3].num : a[2].k == BV_NUM ? a[2].num : 0.0;
    n->init = G_INIT_UNIFORM;
    if (fixed && init[0] == '\0') {
        n->init = G_INIT_FIXED;
        return 0;
    }
    if (init[0] == '\0')
        init = "uniform";
    for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++)
        if (!strcmp(inits[i].name, init)) {
            n->init = inits[i].init;
            if (!strcmp(init, "zero"))
                n->init_value = 0.0;
            return 0;
        }
    return bs_error(v->e, at,
                    "Parameter: init='%s' is not supported (uniform, gaussian, xavier, "
                    "glorotUniform, glorotNormal, heUniform, heNormal, normal, uniform1, "
                    "TruncNormal, fixedValue, zero)",
                    init);
}

static int bi_parameter(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                        struct bv *out)
{
    (void)name;
    int rows = 0, cols = 1;
    int rc = bse_get_dims(v, at, "Parameter rows", &a[0], &rows, &cols);
    if (rc == 0 && a[1].k != BV_NONE)
        rc = bse_get_int(v, at, "Parameter cols", &a[1], &cols);
    return rc ? rc : bse_param_node(v, at, a + 2, rows, cols, out);
}

static int bi_parameter_tensor(struct ev *v, const struct bs_node *at, const char *name,
                               struct bv *a, struct bv *out)
{
    (void)name;
    int rows = 0, cols = 1;
    if (a[0].k == BV_ARR && a[0].arr->n > 2)
        return bse_param_tensor_nd(v, at, a, out);
    int rc = bse_get_dims(v, at, "ParameterTensor dims", &a[0], &rows, &cols);
    return rc ? rc : bse_param_node(v, at, a + 1, rows, cols, out);
}

/* Input (dims, dynamicAxis, sparse, tag) as CNTK's CNTK.core.bs declares it, and
 * isSparse (an older spelling), cols (Input (rows, cols) of the legacy form; only 1):
 * a[0] dims, a[1] dynamicAxis or cols when a number, a[2] sparse, a[3] tag, a[4] isSparse.
 * The dynamic axis is derived from the input's use, so its value only has to exist. */
static int bi_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int rows = 0, cols = 1, rank = 1, tdims[3];
    int rc = get_flat_dims(v, at, "Input dims", &a[0], &rows, &rank, tdims);
    if (rc == 0 && a[1].k == BV_NUM)
        rc = bse_get_int(v, at, "Input cols", &a[1], &cols);
    if (rc == 0 && cols != 1)
        return bs_error(v->e, at, "%s: only vector inputs are supported (dims %d x %d)", name, rows,
                        cols);
    if (rc == 0 && rows <= 0)
        return bs_error(v->e, at, "%s: the dimension must be positive", name);
    for (int i = 2; rc == 0 && i <= 4; i += 2)
        if (a[i].k != BV_BOOL)
            return bse_type_error(v, at, i == 2 ? "Input sparse" : "Input isSparse",
                                  "true or false", &a[i]);
    if (rc == 0 && (rc = bse_make_node(v, at, "Input", NULL, 0, out)) == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->is_input = 1;
        n->rows = rows;
        n->sparse = a[2].num != 0 || a[4].num != 0;
        n->tensor_rank = rank > 1 ? rank : 0;
        memcpy(n->tdims, tdims, sizeof n->tdims);
    }
    return rc;
}

/* SparseInput (dims, dynamicAxis, tag): Input with sparse=true (CNTK.core.bs). */
static int bi_sparse_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                           struct bv *out)
{
    struct bv in[5] = {a[0], a[1], {.k = BV_BOOL, .num = 1}, a[2], {.k = BV_BOOL, .num = 0}};
    return bi_input(v, at, name, in, out);
}

/* ImageInput (imageWidth, imageHeight, imageChannels, imageLayout, dynamicAxis, tag): an
 * Input of dims (W:H:C), its values in the reader's order, whichever imageLayout is named
 * (only products and element-wise nodes use them: no convolution here). */
static int bi_image_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                          struct bv *out)
{
    struct barr *dims = bse_alloc(v, sizeof *dims);
    if (!dims || !(dims->v = bse_alloc(v, 3 * sizeof *dims->v)))
        return v->e->code;
    dims->n = 3;
    for (int i = 0; i < 3; i++)
        dims->v[i] = a[i];
    if (!bse_get_str(&a[3]))
        return bse_type_error(v, at, "ImageInput imageLayout", "a string", &a[3]);
    struct bv in[5] = {
        {.k = BV_ARR, .arr = dims}, a[4], {.k = BV_BOOL, .num = 0}, a[5], {.k = BV_BOOL, .num = 0}};
    return bi_input(v, at, name, in, out);
}

static int bi_constant(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    int rows = 0, cols = 1, rc = 0;
    if (a[0].k != BV_NUM)
        return bse_type_error(v, at, name, "a number", &a[0]);
    if (a[1].k != BV_NONE)
        rc = bse_get_dims(v, at, name, &a[1], &rows, &cols);
    if (rc == 0 && a[2].k != BV_NONE)
        rc = bse_get_int(v, at, name, &a[2], &cols);
    if (rc == 0 && (rc = bse_make_node(v, at, "Constant", NULL, 0, out)) == 0) {
        struct g_node *n = &v->g->nodes[out->node];
        n->is_const = 1;
        n->rows = rows;
        n->cols = cols;
        n->init_value = a[0].num;
    }
    return rc;
}

/* A delay node over x (a node value, or an argument evaluated after the definitions that
 * need this node: a fixup). */
int bse_delay_node(struct ev *v, const struct bs_node *at, int steps, double dflt, int rows,
                   struct bv *x, struct bv *out)
{
    int rc = bse_make_node(v, at, steps > 0 ? "PastValue" : "FutureValue", NULL, 0, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
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

/* PastValue / FutureValue (shape, input, timeStep, defaultHiddenActivation) */
static int bi_delay(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int rows = 0, cols = 1, steps = 0;
    int rc = bse_get_dims(v, at, name, &a[0], &rows, &cols);
    if (rc == 0)
        rc = bse_get_int(v, at, "timeStep", &a[2], &steps);
    if (rc)
        return rc;
    if (steps < 1 || cols != 1 || a[3].k != BV_NUM)
        return bs_error(v->e, at,
                        "%s: timeStep must be at least 1, the shape a vector's dimension (or 0: "
                        "inferred) and defaultHiddenActivation a number",
                        name);
    return bse_delay_node(v, at, strcmp(name, "PastValue") ? -steps : steps, a[3].num, rows, &a[1],
                          out);
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

#define PARAM_OPTS                                                                                 \
    "init=''", "initValueScale=1", "value=None", "initValue=None", "learningRateMultiplier=1",     \
        "tag=''", "initOnCPUOnly=true", "randomSeed=-1"
#define LAYER_OPTS                                                                                 \
    "init='glorotUniform'", "initValueScale=1", "initBias=0", "inputRank=None", "mapRank=None"

static const struct builtin builtins[] = {
    {"Input",
     {"dims", "?dynamicAxis=None", "sparse=false", "tag='feature'", "isSparse=false"},
     bi_input,
     NULL,
     0},
    {"SparseInput", {"dims", "?dynamicAxis=None", "tag='feature'"}, bi_sparse_input, NULL, 0},
    {"ImageInput",
     {"imageWidth", "imageHeight", "imageChannels", "imageLayout='CHW'", "dynamicAxis=None",
      "tag='feature'"},
     bi_image_input,
     NULL,
     0},
    {"Parameter", {"dims", "?cols=None", PARAM_OPTS}, bi_parameter, NULL, 0},
    {"LearnableParameter", {"dims", "?cols=None", PARAM_OPTS}, bi_parameter, NULL, 0},
    {"ParameterTensor", {"dims", PARAM_OPTS}, bi_parameter_tensor, NULL, 0},
    {"Constant", {"value", "?rows=None", "?cols=None", "tag=''"}, bi_constant, NULL, 0},
    {"ConstantTensor", {"value", "dims", "tag=''"}, bi_constant, NULL, 0},
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
      "allowOptimizedEngine=false"},
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
    {"Sequences.Last", {"x", "tag=''"}, bse_node_op, "Last", 0},
    {"DynamicAxis", {"tag=''"}, bi_dynamic_axis, NULL, 0},
    {"Sequences.First", {"x", "tag=''"}, bse_node_op, "First", 0},
    {"Parallel", {"functions", "combine"}, bse_parallel, NULL, 0},
    {"BiRecurrentLSTMLayer",
     {"outputDim", "cellShape=None", "goBackwards=false", "usePeepholes=false",
      "init='glorotUniform'", "initValueScale=1", "enableSelfStabilization=false",
      "allowOptimizedEngine=false"},
     bse_bilstm,
     NULL,
     0},
    {"PastValue",
     {"shape", "input", "timeStep=1", "defaultHiddenActivation=0.1", "tag=''"},
     bi_delay,
     NULL,
     1},
    {"FutureValue",
     {"shape", "input", "timeStep=1", "defaultHiddenActivation=0.1", "tag=''"},
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
    {"Pass", {"x", "tag=''"}, bi_identity, NULL, 0},
    {"Length", {"x"}, bi_length, NULL, 0},
    {"IsNone", {"x"}, bi_is_none, NULL, 0},
    {"Fail", {"what"}, bi_fail, NULL, 0},
};

const struct builtin *bse_find_builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, name))
            return &builtins[i];
    return NULL;
}
