/* Node kinds that move rows (graph.h): Splice (its operands' rows one under the other)
 * and RowSlice (rows [begin, end) of its input; BrainScript's RowSlice and Slice). */
#include <stdio.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static int shape_splice(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    if (a->rows <= 0 || x->rows <= 0 || a->cols != x->cols)
        return g_shape_error(n, a, x, "Splice joins operands of known rows with equal columns", e);
    if (!g_same_axis(a, x))
        return g_axis_error(n, a, x, e);
    n->rows = a->rows + x->rows;
    n->cols = a->cols;
    n->seq1 = a->seq1;
    return 0;
}

static void forward_splice(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    size_t cols = g_cols(g, n);
    g->bk->ops->copy2d(g->bk, g_val(g, n), n->rows, g_val(g, a), a->rows, a->rows, cols);
    g->bk->ops->copy2d(g->bk, g_val(g, n) + a->rows, n->rows, g_val(g, x), x->rows, x->rows, cols);
}

static void backward_splice(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    struct backend *b = g->bk;
    size_t cols = g_cols(g, n);
    for (int side = 0; side < 2; side++) {
        struct g_node *to = side ? x : a;
        const float *from = g_grad(g, n) + (side ? a->rows : 0);
        if (!to->needs_grad)
            continue;
        if (to->g_over)
            b->ops->copy2d(b, g_grad(g, to), to->rows, from, n->rows, to->rows, cols);
        else
            b->ops->axpy2d(b, g_grad(g, to), to->rows, from, n->rows, to->rows, cols, 1.0f);
    }
}

static int shape_slice(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0);
    int r = a->rows, b = n->slice_begin, end = n->slice_end;
    if (r <= 0)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: the input's dimension is not known",
                          n->where, n->src_kind->name);
    if (n->slice_rel) {
        b = b < 0 ? r + b : b;
        end = end <= 0 ? r + end : end;
    }
    if (b < 0 || end > r || b >= end)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: rows [%d, %d) are not inside the input's %d rows",
                          n->where, n->src_kind->name, b, end, r);
    n->slice_begin = b;
    n->slice_end = end;
    n->slice_rel = 0;
    n->rows = end - b;
    n->cols = a->cols;
    n->seq1 = a->seq1;
    return 0;
}

static void forward_slice(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0);
    g->bk->ops->copy2d(g->bk, g_val(g, n), n->rows, g_val(g, a) + n->slice_begin, a->rows, n->rows,
                       g_cols(g, n));
}

static void backward_slice(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0);
    if (a->needs_grad) /* the other rows of a get nothing from here (ow 0: a's gradient is
                          cleared before the backward pass and added into) */
        g->bk->ops->axpy2d(g->bk, g_grad(g, a) + n->slice_begin, a->rows, g_grad(g, n), n->rows,
                           n->rows, g_cols(g, n), 1.0f);
}

const struct g_kind g_kind_splice = {
    .name = "Splice",
    .nin = 2,
    .shape = shape_splice,
    .forward = forward_splice,
    .backward = backward_splice,
    .overwrites = 3,
};

const struct g_kind g_kind_row_slice = {
    .name = "RowSlice",
    .nin = 1,
    .shape = shape_slice,
    .forward = forward_slice,
    .backward = backward_slice,
};
