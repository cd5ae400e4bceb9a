/* Node kinds that move rows (graph.h): Splice (its operands' rows one under the other),
 * RowSlice (rows [begin, end) of its input; BrainScript's RowSlice and Slice, and the
 * reshapes, which copy all of them) and MapBroadcast (one value per map of an image,
 * repeated over the map's cells). */
#include <stdio.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

/* Splice (a, x): a's rows over x's. One of them may be a fixed column beside a
 * per-sample other (a constant per map of an image, broadcast over its cells: ResNet's
 * zero maps, Splice (pooled : ConstantTensor (0, (1:1:C)), axis = 3)): it joins every
 * column, and its gradient is the sum over them. */
static int shape_splice(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    int mixed = (a->cols == 1 && x->cols == 0) || (a->cols == 0 && x->cols == 1);
    if (a->rows <= 0 || x->rows <= 0 || (a->cols != x->cols && !mixed))
        return g_shape_error(n, a, x, "Splice joins operands of known rows with equal columns", e);
    if (!g_same_axis(a, x))
        return g_axis_error(n, a, x, e);
    n->rows = a->rows + x->rows;
    n->cols = mixed ? 0 : a->cols;
    n->seq1 = a->cols ? x->seq1 : a->seq1;
    return 0;
}

/* rows of `from` (column-major, leading dimension ld) into n's rows [at, at + rows), in every
 * column: the same column when from is a fixed one beside per-sample n. */
static void splice_in(struct nn_graph *g, struct g_node *n, struct g_node *from, int at)
{
    struct backend *b = g->bk;
    size_t cols = g_cols(g, n);
    if (from->cols == 0 || n->cols != 0) {
        b->ops->copy2d(b, g_val(g, n) + at, n->rows, g_val(g, from), from->rows, from->rows, cols);
        return;
    }
    for (size_t j = 0; j < cols; j++)
        b->ops->copy(b, g_val(g, n) + at + j * (size_t)n->rows, g_val(g, from), (size_t)from->rows);
}

static void forward_splice(struct nn_graph *g, struct g_node *n)
{
    struct g_node *a = IN(g, n, 0), *x = IN(g, n, 1);
    splice_in(g, n, a, 0);
    splice_in(g, n, x, a->rows);
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
        if (to->cols != 0 && n->cols == 0) { /* a fixed column: summed over the columns */
            if (to->g_over)
                b->ops->fill(b, g_grad(g, to), (size_t)to->rows, 0.0f);
            for (size_t j = 0; j < cols; j++)
                b->ops->axpy(b, g_grad(g, to), from + j * (size_t)n->rows, (size_t)to->rows, 1.0f);
        } else if (to->g_over) {
            b->ops->copy2d(b, g_grad(g, to), to->rows, from, n->rows, to->rows, cols);
        } else {
            b->ops->axpy2d(b, g_grad(g, to), to->rows, from, n->rows, to->rows, cols, 1.0f);
        }
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

/* MapBroadcast (v, ones): v's C values (a fixed column, one per map), each over the n cells
 * of its map, n the rows of the fixed column of ones: the column of n x C values, map
 * after map, that an element-wise node then applies to every sample of an n-cell image of
 * C maps (CNTK broadcasting a [1 x 1 x C] tensor over [W x H x C]). As products with the
 * ones: out = ones v^T, dv = dout^T ones. */
static int shape_map_broadcast(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *v = IN(g, n, 0), *ones = IN(g, n, 1);
    if (v->rows <= 0 || v->cols != 1 || ones->rows <= 0 || ones->cols != 1)
        return g_shape_error(n, v, ones,
                             "one value per map is broadcast over an image when it is the same "
                             "for every sample (a parameter or constant), not computed per sample",
                             e);
    n->rows = v->rows * ones->rows;
    n->cols = 1;
    return 0;
}

static void forward_map_broadcast(struct nn_graph *g, struct g_node *n)
{
    struct g_node *v = IN(g, n, 0), *ones = IN(g, n, 1);
    g->bk->ops->gemm(g->bk, BK_NOTRANS, BK_TRANS, ones->rows, v->rows, 1, 1.0f, g_val(g, ones),
                     ones->rows, g_val(g, v), v->rows, 0.0f, g_val(g, n), ones->rows);
}

static void backward_map_broadcast(struct nn_graph *g, struct g_node *n)
{
    struct g_node *v = IN(g, n, 0), *ones = IN(g, n, 1);
    if (v->needs_grad)
        g->bk->ops->gemm(g->bk, BK_TRANS, BK_NOTRANS, v->rows, 1, ones->rows, 1.0f, g_grad(g, n),
                         ones->rows, g_val(g, ones), ones->rows, v->g_over ? 0.0f : 1.0f,
                         g_grad(g, v), v->rows);
}

const struct g_kind g_kind_map_broadcast = {
    .name = "MapBroadcast",
    .nin = 2,
    .shape = shape_map_broadcast,
    .forward = forward_map_broadcast,
    .backward = backward_map_broadcast,
    .overwrites = 1,
};
