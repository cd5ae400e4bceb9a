/* Tensors in BrainScript (bs_eval_internal.h): ParameterTensor of rank 3 and 4 (a value
 * per map (1:1:C), a convolution kernel (kW:kH:C:maps)), the reshapes (CNTK.core.bs's
 * NewReshape, ReshapeDimension, FlattenDimensions, SplitDimension) and broadcasting a
 * value per map over an image in the element-wise nodes. A tensor node keeps its shape
 * in tensor_rank and tdims (x fastest; a vector has rank 0 or 1 and its rows). */
#include <stdio.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* The dims of an array value (or one number) into d[0..*n), each a whole number in
 * [0, 2^24] (0: to infer). */
static int dims_array(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                      int d[4], int *n)
{
    const struct bv *items = x->k == BV_ARR ? x->arr->v : x;
    size_t count = x->k == BV_ARR ? x->arr->n : 1;
    if (count < 1 || count > 4)
        return bs_error(v->e, at, "%s: expected 1 to 4 dimensions, got %zu", what, count);
    for (size_t i = 0; i < count; i++) {
        int rc = bse_get_int(v, at, what, &items[i], &d[i]); /* 0 (inferred) to 2^24 */
        if (rc)
            return rc;
    }
    *n = (int)count;
    return 0;
}

int bse_param_tensor_nd(struct ev *v, const struct bs_node *at, struct bv *a, struct bv *out)
{
    int d[4], n = 0;
    int rc = dims_array(v, at, "ParameterTensor dims", &a[0], d, &n);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (d[i] == 0)
            return bs_error(v->e, at,
                            "ParameterTensor dims: an inferred dimension (0) in a tensor of rank "
                            "%d is not supported",
                            n);
    long long cells = (long long)d[0] * d[1] * d[2];
    if (cells * (n == 4 ? d[3] : 1) > (1 << 26))
        return bs_error(v->e, at, "ParameterTensor dims: too many values");
    /* rank 3: one column of the tensor's values; rank 4: a kernel, the window's cells by
     * the output maps (the layout of partrain's convolution) */
    rc = bse_param_node(v, at, a + 1, (int)cells, n == 4 ? d[3] : 1, out);
    if (rc)
        return rc;
    struct g_node *p = &v->g->nodes[out->node];
    p->tensor_rank = n;
    memcpy(p->tdims, d, sizeof p->tdims);
    if (n == 4)
        p->fan_filter = d[0] * d[1];
    return 0;
}

/* ------------------------------------------------------------------ broadcasting */

/* One value per map, tdims (1, 1, C) with C > 1 (one value is a scalar, broadcast as
 * such): a parameter, or computed from constants (VGG's Splice of its three channel
 * means); MapBroadcast's shape refuses one computed per sample. */
static int per_map(const struct g_node *p)
{
    return p->tensor_rank == 3 && p->tdims[0] == 1 && p->tdims[1] == 1 && p->tdims[2] > 1;
}

int bse_map_broadcast(struct ev *v, const struct bs_node *at, const struct g_kind *k, int *in,
                      int nin)
{
    if (nin != 2 ||
        (strcmp(k->name, "Plus") && strcmp(k->name, "Minus") && strcmp(k->name, "ElementTimes")))
        return 0;
    for (int side = 0; side < 2; side++) {
        const struct g_node *p = &v->g->nodes[in[side]], *img = &v->g->nodes[in[1 - side]];
        if (!per_map(p) || img->tensor_rank != 3 || img->tdims[0] * img->tdims[1] == 1)
            continue;
        if (img->tdims[2] != p->tdims[2])
            return bs_error(v->e, at,
                            "%s: a value for each of %d maps, applied to an image of %d x %d x %d",
                            k->name, p->tdims[2], img->tdims[0], img->tdims[1], img->tdims[2]);
        struct bv x = {.k = BV_NODE, .node = in[side]};
        int rc = bse_broadcast_maps(v, at, &x, img->tdims);
        in[side] = x.node;
        return rc;
    }
    return 0;
}

int bse_broadcast_maps(struct ev *v, const struct bs_node *at, struct bv *x, const int img[3])
{
    int tdims[3] = {img[0], img[1], v->g->nodes[x->node].tdims[2]};
    struct bv ones, mb;
    int rc = bse_make_node(v, at, "Constant", NULL, 0, &ones);
    if (rc)
        return rc;
    struct g_node *o = &v->g->nodes[ones.node];
    o->is_const = 1;
    o->rows = img[0] * img[1];
    o->cols = 1;
    o->init_value = 1.0;
    o->helper = 1;
    int mbin[2] = {x->node, ones.node};
    if ((rc = bse_make_kind(v, at, &g_kind_map_broadcast, mbin, 2, &mb)) != 0)
        return rc;
    struct g_node *m = &v->g->nodes[mb.node];
    m->tensor_rank = 3;
    memcpy(m->tdims, tdims, sizeof m->tdims);
    m->helper = 1;
    *x = mb;
    return 0;
}

/* ------------------------------------------------------------------ reshapes */

/* x's shape: its tensor dims, or its rows as a vector */
static int shape_of(const struct g_node *x, int d[4])
{
    if (x->tensor_rank >= 2) {
        memcpy(d, x->tdims, 3 * sizeof *d);
        return x->tensor_rank > 3 ? 3 : x->tensor_rank;
    }
    d[0] = x->rows;
    return 1;
}

/* NewReshape (input, dims, beginAxis, endAxis): the input's axes [beginAxis, endAxis)
 * (1-based; 0: from the first, to the last) replaced by dims, one 0 among them inferred;
 * the values stay as they lie. A copy of the input with the new shape. */
static int reshape(struct ev *v, const struct bs_node *at, const char *name, struct bv *x,
                   const struct bv *dims, int begin, int end, struct bv *out)
{
    int rc = bse_as_node(v, at, name, x);
    if (rc)
        return rc;
    const struct g_node *xn = &v->g->nodes[x->node];
    int in[4] = {1, 1, 1, 1}, nd[4], n = 0, shape[8], ns = 0;
    int rank = shape_of(xn, in);
    long long total = (long long)in[0] * in[1] * in[2];
    if (total <= 0)
        return bs_error(v->e, at, "%s: the input's dimension is not known here", name);
    if ((rc = dims_array(v, at, name, dims, nd, &n)) != 0)
        return rc;
    begin = begin <= 0 ? 1 : begin;
    end = end <= 0 ? rank + 1 : end;
    if (begin > end || end > 5)
        return bs_error(v->e, at, "%s: axes [%d, %d) are not in a tensor of rank %d", name, begin,
                        end, rank);
    long long kept = 1, known = 1;
    int zeros = 0;
    for (int i = 1; i < begin; i++)
        shape[ns++] = in[i - 1], kept *= in[i - 1];
    int at0 = ns;
    for (int i = 0; i < n; i++) {
        shape[ns++] = nd[i];
        zeros += nd[i] == 0;
        known *= nd[i] ? nd[i] : 1;
    }
    for (int i = end; i <= 4 && i <= rank; i++)
        shape[ns++] = in[i - 1], kept *= in[i - 1];
    if (zeros > 1 || total % (kept * known) || (!zeros && kept * known != total))
        return bs_error(v->e, at, "%s: the input's %lld values do not fit the new shape", name,
                        total);
    for (int i = at0; i < at0 + n; i++)
        if (shape[i] == 0)
            shape[i] = (int)(total / (kept * known));
    while (ns > 1 && shape[ns - 1] == 1) /* trailing 1s do not count */
        ns--;
    if (ns > 3)
        return bs_error(v->e, at, "%s: tensors of rank %d are not supported (up to 3)", name, ns);
    int one[1] = {x->node};
    if ((rc = bse_make_node(v, at, "RowSlice", one, 1, out)) != 0)
        return rc;
    struct g_node *r = &v->g->nodes[out->node];
    r->slice_begin = 0;
    r->slice_end = (int)total;
    r->rows = (int)total; /* known now: a reshape of it may follow */
    r->tensor_rank = ns > 1 ? ns : 0;
    for (int i = 0; i < 3; i++)
        r->tdims[i] = i < ns ? shape[i] : 1;
    return 0;
}

static int get_axis(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                    int *axis)
{
    int rc = bse_get_int(v, at, what, x, axis);
    if (rc == 0 && (*axis < 1 || *axis > 4))
        return bs_error(v->e, at, "%s: expected an axis 1 to 4, got %d", what, *axis);
    return rc;
}

/* NewReshape (input, dims, beginAxis=0, endAxis=0, tag) */
int bse_new_reshape(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int begin = 0, end = 0;
    int rc = bse_get_int(v, at, "NewReshape beginAxis", &a[2], &begin);
    if (rc == 0)
        rc = bse_get_int(v, at, "NewReshape endAxis", &a[3], &end);
    return rc ? rc : reshape(v, at, name, &a[0], &a[1], begin, end, out);
}

/* Transpose (x) and TransposeDimensions (input, axis1, axis2): two axes of a sample's
 * tensor swapped (Transpose: the first two, as CNTK.core.bs defines it). Where the values
 * keep their order (of the axes from the first to the second, at most one is longer than
 * 1: the speech configs' `Transpose (features)` of an Input {1 : featDim}), a copy with
 * the new shape (a vector is its own [1 x N]: the node itself); a reordering of the
 * values is not built. */
int bse_transpose(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out)
{
    int ax[2] = {1, 2}, rc = bse_as_node(v, at, name, &a[0]);
    for (int i = 0; rc == 0 && strcmp(name, "Transpose") && i < 2; i++)
        rc = get_axis(v, at, name, &a[1 + i], &ax[i]);
    if (rc)
        return rc;
    const struct g_node *xn = &v->g->nodes[a[0].node];
    if (xn->cols > 1)
        return bs_error(v->e, at,
                        "%s: a matrix of parameters or constants (%d x %d) transposed is not "
                        "supported yet",
                        name, xn->rows, xn->cols);
    if (xn->tensor_rank <= 1) { /* a vector and its [1 x N]: the same values, in place */
        *out = a[0];
        return 0;
    }
    int d[4] = {1, 1, 1, 1};
    shape_of(xn, d);
    int lo = ax[0] < ax[1] ? ax[0] : ax[1], hi = ax[0] ^ ax[1] ^ lo, longer = 0;
    for (int i = lo; i <= hi; i++)
        longer += d[i - 1] > 1;
    if (longer > 1)
        return bs_error(v->e, at,
                        "%s: swapping axes %d and %d of a [%d x %d x %d] tensor reorders its "
                        "values, which is not supported yet (only swaps that keep them in place)",
                        name, ax[0], ax[1], d[0], d[1], d[2]);
    int t = d[ax[0] - 1];
    d[ax[0] - 1] = d[ax[1] - 1];
    d[ax[1] - 1] = t;
    struct barr *dims = bse_alloc(v, sizeof *dims);
    if (!dims || !(dims->v = bse_alloc(v, 4 * sizeof *dims->v)))
        return v->e->code;
    dims->n = 4;
    for (int i = 0; i < 4; i++)
        dims->v[i] = (struct bv){.k = BV_NUM, .num = d[i]};
    struct bv shape = {.k = BV_ARR, .arr = dims};
    return reshape(v, at, name, &a[0], &shape, 0, 0, out);
}

/* ReshapeDimension (x, axis, tensorShape), FlattenDimensions (x, axis, num) and
 * SplitDimension (x, axis, N) */
int bse_reshape_dim(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out)
{
    int axis = 0, num = 0;
    int rc = get_axis(v, at, name, &a[1], &axis);
    if (rc)
        return rc;
    if (!strcmp(name, "ReshapeDimension"))
        return reshape(v, at, name, &a[0], &a[2], axis, axis + 1, out);
    if ((rc = bse_get_int(v, at, name, &a[2], &num)) != 0)
        return rc;
    int flatten = !strcmp(name, "FlattenDimensions");
    if (num < 1 || (flatten && num > 4) || num > (1 << 24))
        return bs_error(v->e, at, "%s: expected %s, got %d", name,
                        flatten ? "1 to 4 axes" : "a positive size", num);
    if (flatten) {
        struct bv zero = {.k = BV_NUM, .num = 0};
        return reshape(v, at, name, &a[0], &zero, axis, axis + num, out);
    }
    struct barr *split = bse_alloc(v, sizeof *split); /* SplitDimension: (0 : N) */
    if (!split || !(split->v = bse_alloc(v, 2 * sizeof *split->v)))
        return v->e->code;
    split->n = 2;
    split->v[0] = (struct bv){.k = BV_NUM, .num = 0};
    split->v[1] = (struct bv){.k = BV_NUM, .num = num};
    struct bv dims = {.k = BV_ARR, .arr = split};
    return reshape(v, at, name, &a[0], &dims, axis, axis + 1, out);
}
