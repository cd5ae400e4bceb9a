/* The graph's element-wise binary nodes (graph.h): Plus, Minus and ElementTimes, and how
 * their operands broadcast, as CNTK's do:
 *   - a [1 x 1] (a parameter or constant, as CNTK's Scale takes) over every value of the
 *     other operand;
 *   - an operand of one fixed column (a bias) over every column of the other;
 *   - one value per sample, [1 x samples], over every row of the other's samples (CNTK's
 *     `x - ReduceMean (x)` in its LayerNormalizationLayer): through the backend's products
 *     with a column of ones (g->ones), y = o + 1 r, dr = 1^T dy.
 * Gradients are ADDED into the inputs' g (g_add_grad). */
#include <string.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static size_t numel(const struct nn_graph *g, const struct g_node *n)
{
    return (size_t)n->rows * g_cols(g, n);
}

/* s is one value (a [1 x 1] parameter or constant, as CNTK's Scale takes) beside an
 * operand of more rows: CNTK broadcasts it over every value of the other. */
static int scalar_of(const struct g_node *s, const struct g_node *o)
{
    return s->rows == 1 && s->cols == 1 && o->rows > 1;
}

/* r is one value per sample beside an operand o of more rows per sample: broadcast over
 * o's rows (CNTK's `x - ReduceMean (x)`). */
static int row_of(const struct g_node *r, const struct g_node *o)
{
    return r->rows == 1 && r->cols == 0 && o->rows > 1 && o->cols == 0;
}

int g_shape_binary(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    /* a [1 x 1], or one value per sample, beside a loop's delay of no rows yet (or such a
     * node) says nothing of its rows (it may be broadcast over them): this node takes them
     * from its reader (open_rows), and hands them to the delay a pass later (a Constant or
     * Parameter of no rows takes the other operand's, below) */
    struct g_node *one = a->rows == 1 && (a->cols == 1 || a->cols == 0)   ? a
                         : x->rows == 1 && (x->cols == 1 || x->cols == 0) ? x
                                                                          : NULL,
                  *other = one == a ? x : a;
    if (one && other->rows == 0 && (other->delay != 0 || other->open_rows) &&
        !(g->settle && one->cols == 0)) {
        other->rows = n->rows;
        if (n->rows == 0) {
            n->open_rows = 1;
            n->cols = other->cols;
            n->seq1 = other->seq1;
            return 0;
        }
    }
    if (a->rows == 0 && g_open(a))
        a->rows = x->rows;
    if (x->rows == 0 && g_open(x))
        x->rows = a->rows;
    if (a->rows == 0 && x->rows == 0 && (a->open_rows || x->open_rows) && !g->settle) {
        /* two operands that wait for their rows (a chain of them after a delay): so does
         * this node, until its reader or the settling passes give them */
        const struct g_node *o = a->cols == 0 ? a : x;
        n->open_rows = 1;
        n->cols = o->cols;
        n->seq1 = o->seq1;
        return 0;
    }
    if (a->cols == 0 && a->learnable && x->cols > 0)
        a->cols = x->cols;
    if (x->cols == 0 && x->learnable && a->cols > 0)
        x->cols = a->cols;
    if (scalar_of(a, x) || scalar_of(x, a)) { /* one value, applied to every value */
        const struct g_node *o = scalar_of(a, x) ? x : a;
        n->rows = o->rows;
        n->cols = o->cols;
        n->seq1 = o->seq1;
        return 0;
    }
    if (row_of(a, x) || row_of(x, a)) { /* a value per sample, over every row */
        const struct g_node *o = row_of(a, x) ? x : a;
        if (!g_same_axis(a, x))
            return g_axis_error(n, a, x, e);
        n->rows = o->rows;
        n->cols = 0;
        n->seq1 = o->seq1;
        n->row_bcast = 1;
        return 0;
    }
    if (a->rows <= 0 || a->rows != x->rows)
        return g_shape_error(n, a, x, "the rows must be equal", e);
    int ok = a->cols == x->cols || a->cols == 1 || x->cols == 1;
    if (!ok)
        return g_shape_error(n, a, x, "the columns must be equal, or one operand one column", e);
    if (!g_same_axis(a, x))
        return g_axis_error(n, a, x, e);
    n->rows = a->rows;
    n->cols = a->cols == x->cols ? a->cols : a->cols == 1 ? x->cols : a->cols;
    n->seq1 = a->cols == 0 ? a->seq1 : x->seq1;
    return 0;
}

static enum bk_ew binary_op(const struct g_node *n)
{
    const char *k = n->kind->name;
    return !strcmp(k, "Plus") ? BK_EW_ADD : !strcmp(k, "Minus") ? BK_EW_SUB : BK_EW_MUL;
}

/* y = o op (1 r), r one row (row_of): into y, with tmp for the product's broadcast copy */
static void forward_rows(struct nn_graph *g, struct g_node *n, struct g_node *o, struct g_node *r,
                         enum bk_ew op, int r_left)
{
    struct backend *b = g->bk;
    int rows = n->rows, cols = (int)g_cols(g, n);
    float *y = g_val(g, n);
    if (op == BK_EW_MUL) { /* o .* (1 r) */
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, rows, cols, 1, 1.0f, g->ones, rows, g_val(g, r), 1,
                     0.0f, g->tmp, rows);
        b->ops->ewise(b, BK_EW_MUL, y, g_val(g, o), g->tmp, rows, (size_t)cols, (size_t)cols);
        return;
    }
    b->ops->copy(b, y, g_val(g, o), numel(g, n)); /* o + 1 r, o - 1 r, or 1 r - o */
    if (op == BK_EW_SUB && r_left)
        b->ops->scale(b, y, numel(g, n), -1.0f);
    float alpha = op == BK_EW_SUB && !r_left ? -1.0f : 1.0f;
    b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, rows, cols, 1, alpha, g->ones, rows, g_val(g, r), 1,
                 1.0f, y, rows);
}

/* The gradients of forward_rows: o's dy (times 1 r for .*, negated for r - o), r's the sum
 * over the rows, 1^T dy (of dy .* o for .*, negated for o - r). */
static void backward_rows(struct nn_graph *g, struct g_node *n, struct g_node *o, struct g_node *r,
                          enum bk_ew op, int r_left)
{
    struct backend *b = g->bk;
    int rows = n->rows, cols = (int)g_cols(g, n);
    const float *dy = g_grad(g, n);
    if (o->needs_grad) {
        const float *d = dy;
        if (op == BK_EW_MUL) {
            b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, rows, cols, 1, 1.0f, g->ones, rows, g_val(g, r),
                         1, 0.0f, g->tmp, rows);
            b->ops->ewise(b, BK_EW_MUL, g->tmp, g->tmp, dy, rows, (size_t)cols, (size_t)cols);
            d = g->tmp;
        }
        g_add_grad(g, o, d, n, op == BK_EW_SUB && r_left ? -1.0f : 1.0f);
    }
    if (r->needs_grad) {
        const float *d = dy;
        if (op == BK_EW_MUL) {
            b->ops->ewise(b, BK_EW_MUL, g->tmp, dy, g_val(g, o), rows, (size_t)cols, (size_t)cols);
            d = g->tmp;
        }
        float alpha = op == BK_EW_SUB && !r_left ? -1.0f : 1.0f;
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, 1, cols, rows, alpha, g->ones, rows, d, rows,
                     r->g_over ? 0.0f : 1.0f, g_grad(g, r), 1);
    }
}

void g_forward_binary(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    struct backend *b = g->bk;
    enum bk_ew op = binary_op(n);
    size_t cols = g_cols(g, n);
    if (n->row_bcast) {
        int left = row_of(a, x);
        forward_rows(g, n, left ? x : a, left ? a : x, op, left);
        return;
    }
    if (scalar_of(a, x) || scalar_of(x, a)) { /* the values as one row, the scalar broadcast */
        int left = scalar_of(a, x);
        b->ops->ewise(b, op, g_val(g, n), g_val(g, left ? x : a), g_val(g, left ? a : x), 1,
                      numel(g, n), 1);
        if (left && op == BK_EW_SUB) /* s - x = -(x - s) */
            b->ops->scale(b, g_val(g, n), numel(g, n), -1.0f);
        return;
    }
    if (g_cols(g, a) == cols) {
        b->ops->ewise(b, op, g_val(g, n), g_val(g, a), g_val(g, x), n->rows, cols, g_cols(g, x));
        return;
    }
    /* a is the broadcast column: a op x = x op a for + and .*; a - x = -(x - a) */
    b->ops->ewise(b, op, g_val(g, n), g_val(g, x), g_val(g, a), n->rows, cols, 1);
    if (op == BK_EW_SUB)
        b->ops->scale(b, g_val(g, n), numel(g, n), -1.0f);
}

/* The gradients of s op o with s one value: o's is dy (times s for .*, negated for s - o),
 * s's the sum of dy (times o for .*, negated for o - s) over every value. */
static void backward_scalar(struct nn_graph *g, struct g_node *n, struct g_node *s,
                            struct g_node *o, enum bk_ew op)
{
    struct backend *b = g->bk;
    size_t total = numel(g, n);
    int s_left = s == IN(g, n, 0);
    if (o->needs_grad) {
        const float *d = g_grad(g, n);
        if (op == BK_EW_MUL) {
            b->ops->ewise(b, BK_EW_MUL, g->tmp, d, g_val(g, s), 1, total, 1);
            d = g->tmp;
        }
        g_add_grad(g, o, d, n, op == BK_EW_SUB && s_left ? -1.0f : 1.0f);
    }
    if (s->needs_grad) {
        const float *d = g_grad(g, n);
        if (op == BK_EW_MUL) {
            b->ops->ewise(b, BK_EW_MUL, g->tmp, d, g_val(g, o), 1, total, total);
            d = g->tmp;
        }
        b->ops->sum_cols(b, g->tmp2, d, 1, total, 1);
        float alpha = op == BK_EW_SUB && !s_left ? -1.0f : 1.0f;
        if (s->g_over) {
            b->ops->copy(b, g_grad(g, s), g->tmp2, 1);
            if (alpha != 1.0f)
                b->ops->scale(b, g_grad(g, s), 1, alpha);
        } else {
            b->ops->axpy(b, g_grad(g, s), g->tmp2, 1, alpha);
        }
    }
}

void g_backward_binary(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    struct backend *b = g->bk;
    enum bk_ew op = binary_op(n);
    size_t cols = g_cols(g, n);
    if (n->row_bcast) {
        int left = row_of(a, x);
        backward_rows(g, n, left ? x : a, left ? a : x, op, left);
        return;
    }
    if (scalar_of(a, x) || scalar_of(x, a)) {
        backward_scalar(g, n, scalar_of(a, x) ? a : x, scalar_of(a, x) ? x : a, op);
        return;
    }
    if (op != BK_EW_MUL) {
        g_add_grad(g, a, g_grad(g, n), n, 1.0f);
        g_add_grad(g, x, g_grad(g, n), n, op == BK_EW_SUB ? -1.0f : 1.0f);
        return;
    }
    /* d(a .* x)/da = x: dy .* x, summed where a is broadcast */
    for (int side = 0; side < 2; side++) {
        struct g_node *to = side ? x : a, *other = side ? a : x;
        if (!to->needs_grad)
            continue;
        b->ops->ewise(b, BK_EW_MUL, g->tmp, g_grad(g, n), g_val(g, other), n->rows, cols,
                      g_cols(g, other));
        g_add_grad(g, to, g->tmp, n, 1.0f);
    }
}

/* ------------------------------------------------------------------ comparisons, Clip */

/* Less, Equal, Greater, GreaterEqual, NotEqual, LessEqual (CNTK's): 1 where the relation
 * holds, else 0, the operands broadcast as Plus's but for a value per sample; no gradient
 * flows back (CNTK's are 0). */
static enum bk_ew compare_op(const struct g_node *n)
{
    static const struct {
        const char *name;
        enum bk_ew op;
    } ops[] = {{"Less", BK_EW_LESS},          {"Equal", BK_EW_EQUAL},
               {"Greater", BK_EW_GREATER},    {"GreaterEqual", BK_EW_GREATER_EQUAL},
               {"NotEqual", BK_EW_NOT_EQUAL}, {"LessEqual", BK_EW_LESS_EQUAL}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(n->kind->name, ops[i].name))
            return ops[i].op;
    return BK_EW_EQUAL;
}

/* a OP b as b OP' a */
static enum bk_ew swapped(enum bk_ew op)
{
    return op == BK_EW_LESS            ? BK_EW_GREATER
           : op == BK_EW_GREATER       ? BK_EW_LESS
           : op == BK_EW_LESS_EQUAL    ? BK_EW_GREATER_EQUAL
           : op == BK_EW_GREATER_EQUAL ? BK_EW_LESS_EQUAL
                                       : op;
}

int g_shape_compare(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    return g_shape_binary(g, n, e);
}

void g_forward_compare(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    struct backend *b = g->bk;
    enum bk_ew op = compare_op(n);
    size_t cols = g_cols(g, n);
    if (scalar_of(a, x) || scalar_of(x, a)) {
        int left = scalar_of(a, x);
        b->ops->ewise(b, left ? swapped(op) : op, g_val(g, n), g_val(g, left ? x : a),
                      g_val(g, left ? a : x), 1, numel(g, n), 1);
    } else if (n->row_bcast) { /* a value per sample (row_of): spread over the rows first */
        int left = row_of(a, x);
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, n->rows, (int)cols, 1, 1.0f, g->ones, n->rows,
                     g_val(g, left ? a : x), 1, 0.0f, g->tmp, n->rows);
        b->ops->ewise(b, op, g_val(g, n), left ? g->tmp : g_val(g, a), left ? g_val(g, x) : g->tmp,
                      n->rows, cols, cols);
    } else if (g_cols(g, a) == cols) {
        b->ops->ewise(b, op, g_val(g, n), g_val(g, a), g_val(g, x), n->rows, cols, g_cols(g, x));
    } else {
        b->ops->ewise(b, swapped(op), g_val(g, n), g_val(g, x), g_val(g, a), n->rows, cols, 1);
    }
}

/* Clip (minValue, maxValue, x): x limited to [minValue, maxValue], each a [1 x 1] or a
 * column (CNTK's); dx = dy where minValue <= x <= maxValue, else 0; the bounds get no
 * gradient. */
int g_shape_clip(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = IN(g, n, 2);
    if (x->rows <= 0)
        return pt_err_set(e, PT_EUSER, "%s: error: Clip: the input's dimension is not known",
                          n->where);
    for (int k = 0; k < 2; k++) {
        struct g_node *m = IN(g, n, k);
        if (m->rows == 0 && g_open(m))
            m->rows = x->rows;
        if (!(m->cols == 1 && (m->rows == 1 || m->rows == x->rows)))
            return g_shape_error(n, m, x,
                                 "minValue and maxValue must be one value or one column of "
                                 "the input's rows",
                                 e);
    }
    n->rows = x->rows;
    n->cols = x->cols;
    n->seq1 = x->seq1;
    return 0;
}

/* y = op (v, m) with m a [1 x 1] or a column of n's rows */
static void bound(struct nn_graph *g, struct g_node *n, enum bk_ew op, float *y, const float *v,
                  const struct g_node *m)
{
    if (m->rows == 1 && n->rows > 1)
        g->bk->ops->ewise(g->bk, op, y, v, g_val(g, m), 1, numel(g, n), 1);
    else
        g->bk->ops->ewise(g->bk, op, y, v, g_val(g, m), n->rows, g_cols(g, n), 1);
}

void g_forward_clip(struct nn_graph *g, struct g_node *n)
{
    bound(g, n, BK_EW_MAX, g_val(g, n), g_val(g, IN(g, n, 2)), IN(g, n, 0));
    bound(g, n, BK_EW_MIN, g_val(g, n), g_val(g, n), IN(g, n, 1));
}

void g_backward_clip(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 2);
    if (!x->needs_grad)
        return;
    size_t cols = g_cols(g, n);
    bound(g, n, BK_EW_GREATER_EQUAL, g->tmp, g_val(g, x), IN(g, n, 0));
    bound(g, n, BK_EW_LESS_EQUAL, g->tmp2, g_val(g, x), IN(g, n, 1));
    g->bk->ops->ewise(g->bk, BK_EW_MUL, g->tmp, g->tmp, g->tmp2, n->rows, cols, cols);
    g->bk->ops->ewise(g->bk, BK_EW_MUL, g->tmp, g->tmp, g_grad(g, n), n->rows, cols, cols);
    g_add_grad(g, x, g->tmp, n, 1.0f);
}
