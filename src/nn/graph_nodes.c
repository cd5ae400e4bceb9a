/* The node kinds of the graph (graph.h): one row each in the table at the end, found by
 * name. Adding a node is one shape, forward and backward function and one row.
 *
 * Gradients are ADDED into the inputs' g (a node may feed several others). Broadcasting:
 * an operand with one fixed column applied to every column of the other (a bias); its
 * gradient is the sum over the columns. */
#include <stdio.h>
#include <string.h>

#include "nn/graph.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static size_t numel(const struct nn_graph *g, const struct g_node *n)
{
    return (size_t)n->rows * g_cols(g, n);
}

int g_shape_error(struct g_node *n, struct g_node *a, struct g_node *b, const char *want,
                  struct pt_err *e)
{
    char sa[32], sb[32];
    snprintf(sa, sizeof sa, a->cols ? "%d x %d" : "%d x samples", a->rows, a->cols);
    snprintf(sb, sizeof sb, b->cols ? "%d x %d" : "%d x samples", b->rows, b->cols);
    return pt_err_set(e, PT_EUSER, "%s: error: %s: operands of shapes [%s] and [%s]: %s", n->where,
                      n->kind->name, sa, sb, want);
}

/* Add src (shaped like the node's output: rows x cols of `like`) into dst's gradient,
 * summing over columns where dst is one fixed column under a wider src. */
void g_add_grad(struct nn_graph *g, struct g_node *dst, const float *src, const struct g_node *like,
                float alpha)
{
    struct backend *b = g->bk;
    size_t cols = g_cols(g, like), dcols = g_cols(g, dst);
    if (!dst->needs_grad)
        return;
    size_t k = (size_t)dst->rows * (dcols == cols ? cols : 1);
    if (dst->g_over) {
        if (dcols == cols)
            b->ops->copy(b, g_grad(g, dst), src, k);
        else
            b->ops->sum_cols(b, g_grad(g, dst), src, dst->rows, cols, dst->rows);
        if (alpha != 1.0f)
            b->ops->scale(b, g_grad(g, dst), k, alpha);
        return;
    }
    if (dcols == cols) {
        b->ops->axpy(b, g_grad(g, dst), src, k, alpha);
        return;
    }
    b->ops->sum_cols(b, g->tmp2, src, dst->rows, cols, dst->rows);
    b->ops->axpy(b, g_grad(g, dst), g->tmp2, k, alpha);
}

int g_same_axis(struct g_node *a, struct g_node *b)
{
    if (a->cols != 0 || b->cols != 0)
        return 1;
    if (a->seq1 != b->seq1 && a->is_input && !b->is_input) /* an Input takes its user's */
        a->seq1 = b->seq1;
    if (a->seq1 != b->seq1 && b->is_input && !a->is_input)
        b->seq1 = a->seq1;
    return a->seq1 == b->seq1;
}

int g_axis_error(struct g_node *n, struct g_node *a, struct g_node *b, struct pt_err *e)
{
    return pt_err_set(e, PT_EUSER,
                      "%s: error: %s: '%s' has a value per %s, '%s' per %s (BS.Sequences.Last "
                      "and First make one per sequence)",
                      n->where, n->kind->name, a->name[0] ? a->name : a->kind->name,
                      a->seq1 ? "sequence" : "step", b->name[0] ? b->name : b->kind->name,
                      b->seq1 ? "sequence" : "step");
}

/* ------------------------------------------------------------------ sources */

static int shape_source(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    (void)g;
    (void)e;
    (void)n;
    return 0;
}

static void forward_none(struct nn_graph *g, struct g_node *n)
{
    (void)g;
    (void)n;
}

static void backward_none(struct nn_graph *g, struct g_node *n)
{
    (void)g;
    (void)n;
}

/* ------------------------------------------------------------------ Times */

static int shape_times(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    if (a->cols == 0 && (a->learnable || a->is_const) && x->rows > 0)
        a->cols = x->rows; /* an Inferred input dimension */
    if (x->rows == 0 && g_open(x) && a->cols > 0)
        x->rows = a->cols;
    if (a->cols == 0 && !(a->learnable || a->is_const))
        return g_shape_error(n, a, x, "the left operand must be a parameter or constant", e);
    if (a->rows == 0 && a->is_const && a->cols == 1 && x->rows == 1)
        a->rows = 1; /* NDL's Constant (0.8) is 1 x 1: Times (Constant (w), ce) weighs a value */
    if (a->rows <= 0 || a->cols != x->rows)
        return g_shape_error(n, a, x, "the left operand's columns must equal the right's rows", e);
    n->rows = a->rows;
    n->cols = x->cols;
    n->seq1 = x->seq1;
    return 0;
}

/* x is a sparse Input (one-hot words) and the backend skips its zeros (gemm_sparse). */
static int sparse_x(const struct nn_graph *g, const struct g_node *x)
{
    return x->is_input && x->sparse && g->bk->ops->gemm_sparse;
}

/* W x for the products below: without the zeros' work where x is a sparse Input. */
static void times_x(struct nn_graph *g, const struct g_node *w, const struct g_node *x, size_t cols,
                    float *out)
{
    if (sparse_x(g, x))
        g->bk->ops->gemm_sparse(g->bk, BK_NOTRANS, w->rows, (int)cols, w->cols, g_val(g, w),
                                w->rows, g_val(g, x), x->rows, 0.0f, out, w->rows);
    else
        g->bk->ops->gemm(g->bk, BK_NOTRANS, BK_NOTRANS, w->rows, (int)cols, w->cols, 1.0f,
                         g_val(g, w), w->rows, g_val(g, x), x->rows, 0.0f, out, w->rows);
}

/* dW += dY x^T (over when W's g_over), likewise. */
static void grad_w(struct nn_graph *g, struct g_node *w, const struct g_node *x, int cols,
                   const float *dy)
{
    float beta = w->g_over ? 0.0f : 1.0f;
    if (sparse_x(g, x))
        g->bk->ops->gemm_sparse(g->bk, BK_TRANS, w->rows, cols, w->cols, dy, w->rows, g_val(g, x),
                                x->rows, beta, g_grad(g, w), w->rows);
    else
        g->bk->ops->gemm(g->bk, BK_NOTRANS, BK_TRANS, w->rows, w->cols, cols, 1.0f, dy, w->rows,
                         g_val(g, x), x->rows, beta, g_grad(g, w), w->rows);
}

static void forward_times(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    times_x(g, a, x, g_cols(g, n), g_val(g, n));
}

static void backward_times(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    struct backend *b = g->bk;
    int cols = (int)g_cols(g, n);
    if (a->needs_grad) /* dA += dY X^T */
        grad_w(g, a, x, cols, g_grad(g, n));
    if (x->needs_grad) /* dX += A^T dY */
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, x->rows, cols, a->rows, 1.0f, g_val(g, a), a->rows,
                     g_grad(g, n), n->rows, x->g_over ? 0.0f : 1.0f, g_grad(g, x), x->rows);
}

/* ------------------------------------------------------------------ element-wise unary */

static int shape_unary(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0);
    if (a->rows <= 0)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: the input's dimension is not known",
                          n->where, n->kind->name);
    n->rows = a->rows;
    n->cols = a->cols;
    n->seq1 = a->seq1;
    return 0;
}

static enum bk_act act_of(const struct g_node *n)
{
    const char *k = n->kind->name;
    return !strcmp(k, "Sigmoid") ? BK_ACT_SIGMOID
           : !strcmp(k, "Tanh")  ? BK_ACT_TANH
           : !strcmp(k, "ReLU")  ? BK_ACT_RELU
                                 : BK_ACT_NONE;
}

static void forward_act(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    if (b->ops->act_to) {
        b->ops->act_to(b, act_of(n), g_val(g, n), g_val(g, IN(g, n, 0)), numel(g, n));
        return;
    }
    b->ops->copy(b, g_val(g, n), g_val(g, IN(g, n, 0)), numel(g, n));
    b->ops->bias_act(b, act_of(n), g_val(g, n), NULL, n->rows, g_cols(g, n));
}

static void backward_act(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *x = IN(g, n, 0);
    /* dx = dy .* f'(x), from y: straight into x's gradient where this is its one writer */
    if (b->ops->act_grad_to && x->needs_grad && x->g_over && g_cols(g, x) == g_cols(g, n)) {
        b->ops->act_grad_to(b, act_of(n), g_grad(g, x), g_grad(g, n), g_val(g, n), numel(g, n));
        return;
    }
    /* in place: dy is not read again */
    b->ops->act_grad(b, act_of(n), g_grad(g, n), g_val(g, n), numel(g, n));
    g_add_grad(g, x, g_grad(g, n), n, 1.0f);
}

/* Pass: its input's values, a node of its own (CNTK's PassNode: a name and a tag for what
 * is computed, `scaledLogLikelihood = Pass (z - logPrior, tag='output')`) */
static void forward_pass(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->copy(g->bk, g_val(g, n), g_val(g, IN(g, n, 0)), numel(g, n));
}

static void backward_pass(struct nn_graph *g, struct g_node *n)
{
    g_add_grad(g, IN(g, n, 0), g_grad(g, n), n, 1.0f);
}

static void forward_negate(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    b->ops->copy(b, g_val(g, n), g_val(g, IN(g, n, 0)), numel(g, n));
    b->ops->scale(b, g_val(g, n), numel(g, n), -1.0f);
}

static void backward_negate(struct nn_graph *g, struct g_node *n)
{
    g_add_grad(g, IN(g, n, 0), g_grad(g, n), n, -1.0f);
}

static void forward_exp(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->ewise(g->bk, BK_EW_EXP, g_val(g, n), g_val(g, IN(g, n, 0)), NULL, n->rows,
                      g_cols(g, n), 0);
}

static void backward_exp(struct nn_graph *g, struct g_node *n) /* dx = dy .* y */
{
    g->bk->ops->ewise(g->bk, BK_EW_MUL, g->tmp, g_grad(g, n), g_val(g, n), n->rows, g_cols(g, n),
                      g_cols(g, n));
    g_add_grad(g, IN(g, n, 0), g->tmp, n, 1.0f);
}

static void forward_log(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->ewise(g->bk, BK_EW_LOG, g_val(g, n), g_val(g, IN(g, n, 0)), NULL, n->rows,
                      g_cols(g, n), 0);
}

static void backward_log(struct nn_graph *g, struct g_node *n) /* dx = dy ./ x */
{
    struct g_node *x = IN(g, n, 0);
    g->bk->ops->ewise(g->bk, BK_EW_DIV, g->tmp, g_grad(g, n), g_val(g, x), n->rows, g_cols(g, n),
                      g_cols(g, x));
    g_add_grad(g, x, g->tmp, n, 1.0f);
}

/* Sqrt, Abs, Reciprocal, Sin, Cosine, Floor, Asin, Acos: y = op (x) */
static void forward_pointwise(struct nn_graph *g, struct g_node *n)
{
    const char *k = n->kind->name;
    enum bk_ew op = !strcmp(k, "Sqrt")     ? BK_EW_SQRT
                    : !strcmp(k, "Abs")    ? BK_EW_ABS
                    : !strcmp(k, "Sin")    ? BK_EW_SIN
                    : !strcmp(k, "Cosine") ? BK_EW_COS
                    : !strcmp(k, "Floor")  ? BK_EW_FLOOR
                    : !strcmp(k, "Asin")   ? BK_EW_ASIN
                    : !strcmp(k, "Acos")   ? BK_EW_ACOS
                                           : BK_EW_RECIP;
    g->bk->ops->ewise(g->bk, op, g_val(g, n), g_val(g, IN(g, n, 0)), NULL, n->rows, g_cols(g, n),
                      0);
}

/* dx = dy .* f'(x): Sqrt 0.5 dy ./ y, Abs dy .* sign (x), Sin dy .* cos (x), Cosine -dy .*
 * sin (x), Asin dy ./ sqrt (1 - x^2) (Acos the same negated), Reciprocal -dy .* y .* y */
static void backward_pointwise(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 0);
    struct backend *b = g->bk;
    const char *k = n->kind->name;
    size_t cols = g_cols(g, n);
    float factor = 1.0f;
    if (!strcmp(k, "Sqrt")) {
        b->ops->ewise(b, BK_EW_DIV, g->tmp, g_grad(g, n), g_val(g, n), n->rows, cols, cols);
        factor = 0.5f;
    } else if (!strcmp(k, "Abs") || !strcmp(k, "Sin") || !strcmp(k, "Cosine") ||
               !strcmp(k, "Asin") || !strcmp(k, "Acos")) {
        /* sign (x), cos (x), -sin (x), 1 / sqrt (1 - x^2), -1 / sqrt (1 - x^2) */
        enum bk_ew d = !strcmp(k, "Abs")                          ? BK_EW_SIGN
                       : !strcmp(k, "Sin")                        ? BK_EW_COS
                       : !strcmp(k, "Asin") || !strcmp(k, "Acos") ? BK_EW_DASIN
                                                                  : BK_EW_SIN;
        b->ops->ewise(b, d, g->tmp, g_val(g, x), NULL, n->rows, cols, 0);
        b->ops->ewise(b, BK_EW_MUL, g->tmp, g->tmp, g_grad(g, n), n->rows, cols, cols);
        factor = !strcmp(k, "Cosine") || !strcmp(k, "Acos") ? -1.0f : 1.0f;
    } else {
        b->ops->ewise(b, BK_EW_MUL, g->tmp, g_grad(g, n), g_val(g, n), n->rows, cols, cols);
        b->ops->ewise(b, BK_EW_MUL, g->tmp, g->tmp, g_val(g, n), n->rows, cols, cols);
        factor = -1.0f;
    }
    g_add_grad(g, x, g->tmp, n, factor);
}

static void forward_softmax(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->softmax(g->bk, g_val(g, n), g_val(g, IN(g, n, 0)), n->rows, g_cols(g, n));
}

static void backward_softmax(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->softmax_grad(g->bk, g->tmp, g_grad(g, n), g_val(g, n), n->rows, g_cols(g, n));
    g_add_grad(g, IN(g, n, 0), g->tmp, n, 1.0f);
}

/* Hardmax: no gradient flows back through it (CNTK's HardmaxNode back-propagates nothing:
 * a decoder runs it inside a training without training through it). */
static void forward_hardmax(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->hardmax(g->bk, g_val(g, n), g_val(g, IN(g, n, 0)), n->rows, g_cols(g, n));
}

/* ------------------------------------------------------------------ Affine */

/* act (W x + b), what g_finish makes of Times, Plus with a bias column and an activation
 * when nothing else reads the intermediate values: the dense layer's one GEMM and one fused
 * bias-and-activation pass, as SimpleNetworkBuilder's layers run. */
static int shape_affine(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    (void)g;
    (void)n;
    (void)e;
    return 0; /* made from nodes whose shapes are already checked */
}

static void forward_affine(struct nn_graph *g, struct g_node *n)
{
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1), *b = IN(g, n, 2);
    size_t cols = g_cols(g, n);
    times_x(g, w, x, cols, g_val(g, n));
    g->bk->ops->bias_act(g->bk, n->act, g_val(g, n), g_val(g, b), n->rows, cols);
}

static void backward_affine(struct nn_graph *g, struct g_node *n)
{
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1), *b = IN(g, n, 2);
    struct backend *bk = g->bk;
    int cols = (int)g_cols(g, n);
    float *dz = g_grad(g, n); /* dz = dy .* f'(z), from the output y, in place */
    if (n->act != BK_ACT_NONE)
        bk->ops->act_grad(bk, n->act, dz, g_val(g, n), numel(g, n));
    g_add_grad(g, b, dz, n, 1.0f);
    if (w->needs_grad)
        grad_w(g, w, x, cols, dz);
    if (x->needs_grad)
        bk->ops->gemm(bk, BK_TRANS, BK_NOTRANS, x->rows, cols, w->rows, 1.0f, g_val(g, w), w->rows,
                      dz, n->rows, x->g_over ? 0.0f : 1.0f, g_grad(g, x), x->rows);
}

const struct g_kind g_kind_affine = {
    .name = "Affine",
    .nin = 3,
    .crit = 0,
    .shape = shape_affine,
    .forward = forward_affine,
    .backward = backward_affine,
    .workspace = NULL,
    .overwrites = 7,
};

/* ------------------------------------------------------------------ Splice */

/* Rows of a over rows of b (CNTK's Splice along the first axis, two at a time). */

/* ------------------------------------------------------------------ Mean, InvStdDev */

/* The statistics of an Input over the training data, computed once before training (CNTK's
 * pre-compute nodes): one column of the input's rows, values bound by bs_net.c to the
 * network's mean / invstd (applyMeanVarNorm's machinery); of a slice of an Input's rows,
 * those rows of its statistics (the speech configs' MeanVarNorm of the features' last
 * frame). */
int g_stat_input(const struct nn_graph *g, const struct g_node *n, int *offset)
{
    const struct g_node *x = &g->nodes[n->in[0]];
    *offset = 0;
    for (; x->kind == &g_kind_row_slice; x = &g->nodes[x->in[0]])
        *offset += x->slice_begin;
    return x->is_input ? (int)(x - g->nodes) : -1;
}

static int shape_stat(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = IN(g, n, 0);
    int offset;
    if (g_stat_input(g, n, &offset) < 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: the statistics of an Input node, or of rows of one "
                          "(RowSlice, Slice), only (got %s)",
                          n->where, n->kind->name, x->src_kind->name);
    n->rows = x->rows;
    n->cols = 1;
    return 0;
}

/* ------------------------------------------------------------------ the table */

#define CRIT(k) ((int)(k) + 1)
#define KINDW(nm, n, c, sh, fw, bw, ow)                                                            \
    {                                                                                              \
        .name = nm, .nin = n, .crit = c, .shape = sh, .forward = fw, .backward = bw,               \
        .workspace = NULL, .overwrites = ow                                                        \
    }
#define KIND(nm, n, c, sh, fw, bw) KINDW(nm, n, c, sh, fw, bw, 0)
#define SOURCE(nm)                 KIND(nm, 0, 0, shape_source, forward_none, backward_none)
#define CRITERION(nm, k)           KIND(nm, 2, CRIT(k), g_shape_crit, forward_none, backward_none)

static const struct g_kind kinds[] = {
    SOURCE("Input"),
    SOURCE("Parameter"),
    SOURCE("Constant"),
    KIND("Mean", 1, 0, shape_stat, forward_none, backward_none),
    KIND("InvStdDev", 1, 0, shape_stat, forward_none, backward_none),
    KINDW("Times", 2, 0, shape_times, forward_times, backward_times, 3),
    KINDW("Plus", 2, 0, g_shape_binary, g_forward_binary, g_backward_binary, 3),
    KINDW("Minus", 2, 0, g_shape_binary, g_forward_binary, g_backward_binary, 3),
    KINDW("ElementTimes", 2, 0, g_shape_binary, g_forward_binary, g_backward_binary, 3),
    KINDW("Negate", 1, 0, shape_unary, forward_negate, backward_negate, 1),
    KINDW("Pass", 1, 0, shape_unary, forward_pass, backward_pass, 1),
    KINDW("Sigmoid", 1, 0, shape_unary, forward_act, backward_act, 1),
    KINDW("Tanh", 1, 0, shape_unary, forward_act, backward_act, 1),
    KINDW("ReLU", 1, 0, shape_unary, forward_act, backward_act, 1),
    KINDW("Exp", 1, 0, shape_unary, forward_exp, backward_exp, 1),
    KINDW("Log", 1, 0, shape_unary, forward_log, backward_log, 1),
    KINDW("Sqrt", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    KINDW("Sin", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    KINDW("Cosine", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    KINDW("Asin", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    KINDW("Acos", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    /* Floor, StopGradient and the comparisons pass no gradient back (CNTK's are 0) */
    KIND("Floor", 1, 0, shape_unary, forward_pointwise, backward_none),
    KIND("StopGradient", 1, 0, shape_unary, forward_pass, backward_none),
    KIND("Less", 2, 0, g_shape_compare, g_forward_compare, backward_none),
    KIND("Equal", 2, 0, g_shape_compare, g_forward_compare, backward_none),
    KIND("Greater", 2, 0, g_shape_compare, g_forward_compare, backward_none),
    KIND("GreaterEqual", 2, 0, g_shape_compare, g_forward_compare, backward_none),
    KIND("NotEqual", 2, 0, g_shape_compare, g_forward_compare, backward_none),
    KIND("LessEqual", 2, 0, g_shape_compare, g_forward_compare, backward_none),
    KIND("Clip", 3, 0, g_shape_clip, g_forward_clip, g_backward_clip),
    KINDW("Abs", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    KINDW("Reciprocal", 1, 0, shape_unary, forward_pointwise, backward_pointwise, 1),
    KINDW("Softmax", 1, 0, shape_unary, forward_softmax, backward_softmax, 1),
    KIND("Hardmax", 1, 0, shape_unary, forward_hardmax, backward_none),
    CRITERION("CrossEntropyWithSoftmax", BK_CRIT_CE_SOFTMAX),
    CRITERION("ClassificationError", BK_CRIT_CLASS_ERR),
    CRITERION("SquareError", BK_CRIT_SQUARE_ERR),
    CRITERION("Logistic", BK_CRIT_LOGISTIC),
};

/* Kinds with their own file (graph_rnn.c, graph_delay.c) that BrainScript names by kind
 * (graph_conv.c's are made by their built-ins only: bs_conv.c). */
static const struct g_kind *const more[] = {
    &g_kind_splice,      &g_kind_row_slice,     &g_kind_lstm,         &g_kind_dropout,
    &g_kind_past,        &g_kind_future,        &g_kind_last,         &g_kind_first,
    &g_kind_lambda_rank, &g_kind_ndcg1,         &g_kind_class_ce,     &g_kind_labels_graph,
    &g_kind_ctc,         &g_kind_edit_distance, &g_kind_time_reverse, &g_kind_broadcast_seq};

const struct g_kind *g_kind_find(const char *name)
{
    for (size_t i = 0; i < COUNT(kinds); i++)
        if (!strcmp(kinds[i].name, name))
            return &kinds[i];
    for (size_t i = 0; i < COUNT(more); i++)
        if (!strcmp(more[i]->name, name))
            return more[i];
    return NULL;
}
