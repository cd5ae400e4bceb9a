/* BrainScript's built-ins that work on a node's rows and the criteria's options (the
 * builtins[] table of bs_builtins.c names them): Splice along the inputs' last axis,
 * RowSlice / Slice, ReduceSum / ReduceMean, SumElements, and the axis= and topN= of Softmax,
 * CrossEntropyWithSoftmax and ClassificationError. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* A node's tensor dims (a vector of rows: [rows x 1 x 1], as CNTK pads a lower rank). */
static void dims3(const struct g_node *n, int d[3])
{
    if (n->tensor_rank > 1)
        memcpy(d, n->tdims, 3 * sizeof *d);
    else
        d[0] = n->rows, d[1] = d[2] = 1;
}

/* Splice (inputs, axis): the inputs' values joined along axis (CNTK's RowStack). Values lie
 * first axis fastest, so joining along the last axis of the inputs' shape (the rows of
 * vectors, axis 1; the maps of images [W x H x C], axis 3, as Inception joins its
 * branches; axis 2 of [W x H]) is putting each sample's values one after the other: the
 * Splice node, with the joined shape. The axes before it must agree; a lower rank counts
 * as padded with 1s. Other axes (interleaving values) are not built. */
int bse_splice(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out)
{
    if (a[1].k != BV_NUM || a[1].num != floor(a[1].num) || a[1].num < 1 || a[1].num > 3)
        return bs_error(v->e, at,
                        "%s: axis must be 1, 2 or 3 (joining along the last axis of the inputs' "
                        "shape)",
                        name);
    int axis = (int)a[1].num;
    size_t n = a[0].k == BV_ARR ? a[0].arr->n : 1;
    int d[3], dk[3], rank = 1;
    for (size_t i = 0; i < n; i++) {
        struct bv *el = a[0].k == BV_ARR ? &a[0].arr->v[i] : &a[0], x = *el;
        int rc = bse_as_node(v, at, name, &x);
        if (rc)
            return rc;
        struct g_node *nd = &v->g->nodes[x.node];
        if (i > 0 && axis == 3 && d[0] * d[1] > 1 && nd->is_const && nd->tensor_rank == 3 &&
            nd->tdims[0] == 1 && nd->tdims[1] == 1) { /* zero maps beside an image: ResNet's */
            if ((rc = bse_broadcast_maps(v, at, &x, d)) != 0)
                return rc;
            nd = &v->g->nodes[x.node];
        }
        *el = x;                                        /* a number made a node once */
        if (nd->is_const && !nd->data && nd->rows == 0) /* Constant (104): CNTK's scalar */
            nd->rows = 1;
        rank = nd->tensor_rank > rank ? nd->tensor_rank : rank;
        dims3(nd, i ? dk : d);
        for (int k = 0; i && k < axis - 1; k++)
            if (dk[k] != d[k])
                return bs_error(v->e, at,
                                "%s: operand %zu has %d along axis %d where the first has %d: "
                                "along axis %d the other axes must agree",
                                name, i + 1, dk[k], k + 1, d[k], axis);
    }
    if (axis < rank)
        return bs_error(v->e, at,
                        "%s: axis=%d of tensors of rank %d is not supported, only their last "
                        "axis (or a new one)",
                        name, axis, rank);
    if (a[0].k != BV_ARR) {
        *out = a[0];
        return bse_as_node(v, at, name, out);
    }
    struct bv acc = a[0].arr->v[0];
    int rc = bse_as_node(v, at, name, &acc);
    int joined = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct bv next = a[0].arr->v[i];
        if ((rc = bse_as_node(v, at, name, &next)) != 0)
            break;
        int nd[3];
        dims3(&v->g->nodes[next.node], nd);
        joined += nd[axis - 1];
        if (i == 0)
            continue;
        int in[2] = {acc.node, next.node};
        if ((rc = bse_make_node(v, at, "Splice", in, 2, &acc)) != 0)
            break;
        struct g_node *sp = &v->g->nodes[acc.node];
        sp->helper = i + 1 < n; /* CNTK's Splice of n inputs is one node: the last counts */
        sp->tensor_rank = axis > 1 ? axis : 0;
        for (int k = 0; k < 3; k++)
            sp->tdims[k] = k < axis - 1 ? d[k] : k == axis - 1 ? joined : 1;
    }
    *out = acc;
    return rc;
}

/* RowSlice (beginIndex, numRows, input) and Slice (beginIndex, endIndex, input, axis):
 * rows [begin, end) of a vector, per sample (CNTK's SliceNode on axis 1; Slice's negative
 * begin and end <= 0 count from the end, as CNTK's). Other axes (a tensor's, the time
 * axis of axis < 0) are not built. */
int bse_slice(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
              struct bv *out)
{
    int row = !strcmp(name, "RowSlice");
    struct bv x = a[2];
    int rc = bse_as_node(v, at, name, &x);
    if (rc)
        return rc;
    for (int k = 0; k < 2; k++)
        if (a[k].k != BV_NUM || a[k].num != floor(a[k].num) || fabs(a[k].num) > (1 << 24))
            return bse_type_error(v, at, name, "whole numbers for the indices", &a[k]);
    if (!row && !(a[3].k == BV_NUM && a[3].num == 1))
        return bs_error(v->e, at,
                        "%s: only axis=1 (the rows of a vector) is supported, not axis=%g (a "
                        "negative axis is the time axis)",
                        name, a[3].k == BV_NUM ? a[3].num : 0.0);
    if (v->g->nodes[x.node].tensor_rank > 1)
        return bs_error(v->e, at, "%s: slicing a tensor of rank %d is not supported, only vectors",
                        name, v->g->nodes[x.node].tensor_rank);
    if (row && (a[0].num < 0 || a[1].num < 1))
        return bs_error(v->e, at, "%s: expected beginIndex >= 0 and numRows >= 1, got %g and %g",
                        name, a[0].num, a[1].num);
    int in[1] = {x.node};
    if ((rc = bse_make_node(v, at, "RowSlice", in, 1, out)) != 0)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->slice_begin = (int)a[0].num;
    n->slice_end = (int)(row ? a[0].num + a[1].num : a[1].num);
    n->slice_rel = !row;
    n->tensor_rank = 0;
    return 0;
}

/* A node of its own kind over inputs in[0..nin), one of the steps of a built-in that CNTK
 * makes as one node (not counted among the network's nodes). */
static int helper(struct ev *v, const struct bs_node *at, const char *kind, int a, int b, int *out)
{
    int in[2] = {a, b};
    struct bv r;
    int rc = bse_make_node(v, at, kind, in, g_kind_find(kind)->nin, &r);
    if (rc == 0) {
        v->g->nodes[r.node].helper = 1;
        v->g->nodes[r.node].tensor_rank = 0;
        *out = r.node;
    }
    return rc;
}

/* The row of ones (of 1 / its length with mean) that sums (averages) a sample's values in a
 * product: a constant whose length the product infers. */
static int ones_row(struct ev *v, const struct bs_node *at, int mean, int *out)
{
    struct bv ones;
    int rc = bse_make_node(v, at, "Constant", NULL, 0, &ones);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[ones.node];
    n->is_const = 1;
    n->rows = 1;
    n->cols = 0;
    n->init_value = 1.0;
    n->mean_row = mean;
    n->helper = 1; /* CNTK's ReduceElements is one node */
    *out = ones.node;
    return 0;
}

/* Whether node i's values come from the data (one column per sample): an Input, a delay,
 * or computed from one; else from parameters and constants alone. */
static int from_data(const struct nn_graph *g, int i)
{
    const struct g_node *n = &g->nodes[i];
    if (n->is_input || n->delay != 0)
        return 1;
    for (int k = 0; k < n->kind->nin; k++)
        if (from_data(g, n->in[k]))
            return 1;
    return 0;
}

/* ReduceSum / ReduceMean (z, axis): the values of each sample summed (averaged) into one
 * (CNTK's ReduceElements over all of them, or over axis 1 of a vector, which is all of
 * them): a product with a constant row of ones (of 1 / its length) whose length the
 * product infers. */
/* A reduction's operand a[0] as a node into *x, and its axis a[1]: none, or 1 of a vector
 * (all of a sample's values); what names the reduction in the message. */
static int whole_sample(struct ev *v, const struct bs_node *at, const char *name, const char *what,
                        struct bv *a, struct bv *x)
{
    *x = a[0];
    int rc = bse_as_node(v, at, name, x);
    if (rc)
        return rc;
    int vector = v->g->nodes[x->node].tensor_rank <= 1;
    if (a[1].k != BV_NONE && !(a[1].k == BV_NUM && a[1].num == 1 && vector))
        return bs_error(v->e, at,
                        "%s: only the %s of all of a sample's values is supported (no axis, or "
                        "axis=1 of a vector)",
                        name, what);
    return 0;
}

int bse_reduce_sum(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    struct bv x;
    int rc = whole_sample(v, at, name, strcmp(name, "ReduceMean") ? "sum" : "mean", a, &x);
    if (rc)
        return rc;
    int ones;
    if ((rc = ones_row(v, at, !strcmp(name, "ReduceMean"), &ones)) != 0)
        return rc;
    int in[2] = {ones, x.node};
    return bse_make_node(v, at, "Times", in, 2, out);
}

/* ReduceLogSum (z, axis): log (sum_i exp (z_i)) over all of a sample's values (CNTK's
 * ReduceElements with "LogSum"). From the backend's softmax p and hardmax h (one-hot at
 * the largest z_k): z_k - log p_k, where p_k >= 1 / rows, so nothing overflows or
 * underflows; as h passes no gradient back, the gradient is p, as log-sum-exp's is. */
int bse_reduce_log_sum(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    struct bv x;
    int rc = whole_sample(v, at, name, "log-sum-exp", a, &x);
    if (rc)
        return rc;
    int p, h, hz, hp, ones, sz, sp, lp;
    if ((rc = helper(v, at, "Softmax", x.node, 0, &p)) ||
        (rc = helper(v, at, "Hardmax", x.node, 0, &h)) ||
        (rc = helper(v, at, "ElementTimes", h, x.node, &hz)) ||
        (rc = helper(v, at, "ElementTimes", h, p, &hp)) || (rc = ones_row(v, at, 0, &ones)) ||
        (rc = helper(v, at, "Times", ones, hz, &sz)) || (rc = ones_row(v, at, 0, &ones)) ||
        (rc = helper(v, at, "Times", ones, hp, &sp)) || (rc = helper(v, at, "Log", sp, 0, &lp)))
        return rc;
    int in[2] = {sz, lp};
    return bse_make_node(v, at, "Minus", in, 2, out);
}

/* ReduceMax, ReduceMin (z, axis): the largest (smallest) of a sample's values (CNTK's
 * ReduceElements with "Max" / "Min"): 1^T (h .* z), h the hardmax of z (of -z: one-hot at
 * the first of the smallest), which passes no gradient back, so the gradient goes to that
 * one value, as CNTK's. */
int bse_reduce_max(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    struct bv x;
    int min = !strcmp(name, "ReduceMin");
    int rc = whole_sample(v, at, name, min ? "minimum" : "maximum", a, &x);
    if (rc)
        return rc;
    int neg = x.node, h, hz, ones;
    if ((min && (rc = helper(v, at, "Negate", x.node, 0, &neg))) ||
        (rc = helper(v, at, "Hardmax", neg, 0, &h)) ||
        (rc = helper(v, at, "ElementTimes", h, x.node, &hz)) || (rc = ones_row(v, at, 0, &ones)))
        return rc;
    int in[2] = {ones, hz};
    return bse_make_node(v, at, "Times", in, 2, out);
}

/* TransposeTimes (a, b): a^T b. Of two samples' vectors, their dot product, one value per
 * sample (CNTK's `TransposeTimes (labels, z)` in the speech configs' hand-written
 * criteria); a matrix of parameters as a is not built. */
int bse_transpose_times(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                        struct bv *out)
{
    int rc = bse_as_node(v, at, name, &a[0]);
    if (rc == 0)
        rc = bse_as_node(v, at, name, &a[1]);
    if (rc)
        return rc;
    if (!from_data(v->g, a[0].node) || !from_data(v->g, a[1].node))
        return bs_error(v->e, at,
                        "%s: only of two per-sample vectors (their dot product) is supported; "
                        "a matrix of parameters or constants transposed is not supported yet",
                        name);
    int prod, ones;
    if ((rc = helper(v, at, "ElementTimes", a[0].node, a[1].node, &prod)) ||
        (rc = ones_row(v, at, 0, &ones)))
        return rc;
    int in[2] = {ones, prod};
    if ((rc = bse_make_node(v, at, "Times", in, 2, out)) == 0)
        v->g->nodes[out->node].tensor_rank = 0;
    return rc;
}

/* SumElements (z): every value of z in the minibatch summed into one [1 x 1] (CNTK's
 * SumElements), as a criterion sums: padding left out; a per-pass value (graph_crit.c). */
int bse_sum_elements(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    int rc = bse_as_node(v, at, name, &a[0]);
    if (rc)
        return rc;
    int in[2] = {a[0].node, a[0].node};
    if ((rc = bse_make_kind(v, at, &g_kind_crit_values[BK_CRIT_SUM], in, 2, out)) != 0)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->crit_value = BK_CRIT_SUM + 1;
    n->tensor_rank = 0;
    return 0;
}

/* An axis= of Softmax, CrossEntropyWithSoftmax or ClassificationError (a[k]): 0 (CNTK's
 * default: all of a sample's values), or 1 when z is a vector (the same values); CNTK's
 * reductions along one axis of a tensor are not built. */
static int axis_all(struct ev *v, const struct bs_node *at, const char *name, const struct bv *ax,
                    const struct bv *z)
{
    int vector = z->k != BV_NODE || v->g->nodes[z->node].tensor_rank <= 1;
    if (ax->k == BV_NUM && (ax->num == 0 || (ax->num == 1 && vector)))
        return 0;
    if (ax->k != BV_NUM)
        return bse_type_error(v, at, name, "an axis (a whole number)", ax);
    return bs_error(v->e, at,
                    "%s: axis=%g is not supported: only over all of a sample's values (axis=0, "
                    "the default, or axis=1 of a vector)",
                    name, ax->num);
}

/* Softmax (x, axis) */
int bse_softmax(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out)
{
    int rc = bse_as_node(v, at, name, &a[0]);
    if (rc == 0)
        rc = axis_all(v, at, name, &a[1], &a[0]);
    return rc ? rc : bse_node_op(v, at, name, a, out);
}

/* CrossEntropyWithSoftmax (labels, z, axis) */
int bse_ce(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out)
{
    int rc = bse_as_node(v, at, name, &a[1]);
    if (rc == 0)
        rc = axis_all(v, at, name, &a[2], &a[1]);
    return rc ? rc : bse_node_op(v, at, name, a, out);
}

/* ClassificationError / ErrorPrediction (labels, z, topN, axis): with topN > 1 an error is
 * a label whose entry of z is not among z's topN largest (CNTK's third input
 * Constant (topN)); CNTK refuses topN with an axis. */
int bse_class_error(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int top = 0, rc = bse_as_node(v, at, name, &a[1]);
    if (rc)
        return rc;
    if (a[2].k != BV_NUM || a[2].num < 1 || a[2].num != floor(a[2].num) || a[2].num > (1 << 24))
        return a[2].k != BV_NUM ? bse_type_error(v, at, name, "topN: a whole number >= 1", &a[2])
                                : bs_error(v->e, at, "%s: topN must be a whole number >= 1, got %g",
                                           name, a[2].num);
    top = (int)a[2].num;
    if (top != 1 && !(a[3].k == BV_NUM && a[3].num == 0))
        return bs_error(v->e, at,
                        "%s: topN=%d along a specific axis is not supported (CNTK "
                        "refuses it too)",
                        name, top);
    if ((rc = axis_all(v, at, name, &a[3], &a[1])) != 0 ||
        (rc = bse_node_op(v, at, name, a, out)) != 0)
        return rc;
    v->g->nodes[out->node].top_n = top;
    return 0;
}

/* A whole number in [lo, hi] (what names it in errors), into *out. */
static int whole_in(struct ev *v, const struct bs_node *at, const char *name, const char *what,
                    const struct bv *x, double lo, double hi, int *out)
{
    if (x->k != BV_NUM || x->num != floor(x->num) || x->num < lo || x->num > hi)
        return x->k != BV_NUM ? bse_type_error(v, at, name, what, x)
                              : bs_error(v->e, at,
                                         "%s: %s must be a whole number from %g to %g, "
                                         "got %g",
                                         name, what, lo, hi, x->num);
    *out = (int)x->num;
    return 0;
}

/* ForwardBackward (graph, features, blankTokenId, delayConstraint): CTC (graph_ctc.c). */
int bse_ctc(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out)
{
    int blank = 0, delay = 0;
    int rc = whole_in(v, at, name, "blankTokenId", &a[2], 0, 1 << 24, &blank);
    if (rc == 0)
        rc = whole_in(v, at, name, "delayConstraint", &a[3], -1, 1 << 24, &delay);
    if (rc == 0)
        rc = bse_node_op(v, at, name, a, out);
    if (rc == 0) {
        v->g->nodes[out->node].ctc_blank = blank;
        v->g->nodes[out->node].ctc_delay = delay;
    }
    return rc;
}

/* EditDistanceError (leftInput, rightInput, subPen, delPen, insPen, squashInputs,
 * tokensToIgnore): a token or an array of them (graph_ctc.c). */
int bse_edit_distance(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                      struct bv *out)
{
    for (int i = 2; i < 5; i++)
        if (a[i].k != BV_NUM || !(a[i].num >= 0) || a[i].num > 1e6)
            return a[i].k != BV_NUM
                       ? bse_type_error(v, at, name, "a penalty (a number)", &a[i])
                       : bs_error(v->e, at, "%s: a penalty must be from 0 to 1e6, got %g", name,
                                  a[i].num);
    if (a[5].k != BV_BOOL)
        return bse_type_error(v, at, "squashInputs", "a boolean", &a[5]);
    int ign[G_MAX_IGNORE], nign = 0, rc = 0;
    if (a[6].k == BV_ARR) {
        if (a[6].arr->n > G_MAX_IGNORE)
            return bs_error(v->e, at, "%s: tokensToIgnore: at most %d tokens, got %zu", name,
                            G_MAX_IGNORE, a[6].arr->n);
        for (size_t i = 0; rc == 0 && i < a[6].arr->n; i++)
            rc = whole_in(v, at, name, "a token to ignore", &a[6].arr->v[i], 0, 1 << 24,
                          &ign[nign++]);
    } else if (a[6].k != BV_NONE) {
        rc = whole_in(v, at, name, "tokensToIgnore", &a[6], 0, 1 << 24, &ign[nign++]);
    }
    if (rc == 0)
        rc = bse_node_op(v, at, name, a, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    for (int i = 0; i < 3; i++)
        n->ed_pen[i] = (float)a[2 + i].num;
    n->ed_squash = a[5].num != 0;
    n->ed_nignore = nign;
    memcpy(n->ed_ignore, ign, (size_t)nign * sizeof *ign);
    return 0;
}
