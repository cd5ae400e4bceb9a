/* Convolution and pooling in BrainScript (bs_eval_internal.h): CNTK's ConvolutionalLayer,
 * MaxPoolingLayer and AveragePoolingLayer, the Pooling node and the legacy MaxPooling /
 * AveragePooling. Each fixes its node's geometry (struct bk_conv)
 * from its input's image dims, as CNTK's ConvolveGeometry does: along x and y, a window of
 * k cells every s cells; with autoPadding the output has ceil(n / s) cells and the windows
 * are centred (padding (k - 1) / 2 minus half the cells the last window leaves over),
 * without it n + lowerPad + upperPad cells are covered by whole windows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bs_eval_internal.h"

/* The largest window, stride or padding along an axis (a window's cells fit an int). */
#define MAX_CELLS 4096

/* What a convolution or pooling is asked for, per axis x and y. */
struct bconv {
    int maps; /* a convolution's output channels, 0 for pooling */
    int k[2], s[2], autopad[2], lo[2], hi[2];
    int k3, s3; /* the kernel's and the stride's third value (the channel axis), 0: none */
    int ceil_out;
    const char *layer; /* the layer's name in its errors */
    enum bk_pool pool;
    int include_pad;
    int transpose; /* ConvolutionTransposeLayer: maps are its output channels */
    int in_maps;   /* its numInputChannels (0: the input's) */
    int unpool;    /* MaxUnpoolingLayer: a function of (x, the pooling's input) */
};

/* A number or an array of them (x, y and, for the channel axis, a third) into out[0],
 * out[1] (a scalar is both) and *third (0 without one). */
static int pair(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                int boolean, int min, int out[2], int *third)
{
    const struct bv *e0 = x, *e1 = x;
    *third = 0;
    if (x->k == BV_ARR) {
        if (x->arr->n < 1 || x->arr->n > 3)
            return bs_error(v->e, at, "%s: expected 1 to 3 values (x, y, channels), got %zu", what,
                            x->arr->n);
        e0 = &x->arr->v[0];
        e1 = x->arr->n > 1 ? &x->arr->v[1] : e0;
    }
    for (int i = 0; i < 2; i++) {
        const struct bv *e = i ? e1 : e0;
        if (boolean) {
            if (e->k != BV_BOOL)
                return bse_type_error(v, at, what, "true or false (or an array of them)", e);
            out[i] = e->num != 0;
            continue;
        }
        int rc = bse_get_int(v, at, what, e, &out[i]);
        if (rc)
            return rc;
        if (out[i] < min || out[i] > MAX_CELLS)
            return bs_error(v->e, at, "%s: expected %d to %d, got %d", what, min, MAX_CELLS,
                            out[i]);
    }
    if (x->k == BV_ARR && x->arr->n == 3 && !boolean)
        return bse_get_int(v, at, what, &x->arr->v[2], third);
    return 0;
}

/* The arguments' names, as the nodes and as the layers call them. */
static const char *const node_args[] = {"kernelDims", "stride",   "autoPadding",
                                        "lowerPad",   "upperPad", "ceilOutDim"};
static const char *const layer_args[] = {"filterShape", "stride",   "pad",
                                         "lowerPad",    "upperPad", "ceilOutDim"};

/* The common arguments a[0..5]: window, stride, autopadding, lower and upper padding,
 * ceilOutDim (called args[0..5]). */
static int read_geometry(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         const char *const *args, struct bconv *c)
{
    char what[96];
    int *dst[] = {c->k, c->s, c->autopad, c->lo, c->hi}, unused;
    int *third[] = {&c->k3, &c->s3, &unused, &unused, &unused};
    for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "%s %s", name, args[i]);
        int rc = pair(v, at, what, &a[i], i == 2, i < 2 ? 1 : 0, dst[i], third[i]);
        if (rc)
            return rc;
    }
    snprintf(what, sizeof what, "%s %s", name, args[5]);
    if (a[5].k != BV_BOOL)
        return bse_type_error(v, at, what, "true or false", &a[5]);
    c->ceil_out = a[5].num != 0;
    return 0;
}

/* One axis: n input cells -> *out cells, *pad cells of padding before the first. */
static int axis(struct ev *v, const struct bs_node *at, const char *name, const struct bconv *c,
                int i, int n, int *out, int *pad)
{
    int k = c->k[i], s = c->s[i];
    long long span = c->autopad[i] ? n : (long long)n + c->lo[i] + c->hi[i];
    if (k > span)
        return bs_error(v->e, at,
                        "%s: the window (%d cells along %c) is larger than the input (%lld)", name,
                        k, "xy"[i], span);
    double cells = (double)((c->autopad[i] ? n + k - 1 : span) - k) / s + 1;
    *out = (int)(c->ceil_out ? ceil(cells) : floor(cells));
    *pad = c->autopad[i] ? (k - 1) / 2 - (n - ((*out - 1) * s + 1)) / 2 : c->lo[i];
    return 0;
}

/* The geometry of c's windows over image x (a convolution's or a pooling's) into *out. */
static int geometry(struct ev *v, const struct bs_node *at, const char *name, const struct bconv *c,
                    const struct g_node *x, struct bk_conv *out)
{
    if (x->tensor_rank < 2)
        return bs_error(v->e, at,
                        "%s: the input must be an image (an Input {W:H:C} or what is computed "
                        "from one), got a vector of %d values",
                        name, x->rows);
    struct bk_conv g = {.iw = x->tdims[0], .ih = x->tdims[1], .ic = x->tdims[2]};
    /* along the channels a convolution's window is all of them; pooling's is one channel,
     * every channel (CNTK's kernel (kW:kH:C) and (kW:kH:1), strides (sW:sH:anything) and
     * (sW:sH:1)) */
    int k3 = c->pool ? 1 : g.ic;
    if (!c->pool && c->k3 && c->k3 != k3)
        return bs_error(v->e, at,
                        "%s: a window of %d along the channels, of an input of %d (a convolution "
                        "across the maps, as CNTK's local response normalization makes) is not "
                        "supported yet: the window's third value must be all %d of them",
                        name, c->k3, g.ic, g.ic);
    if ((c->k3 && c->k3 != k3) || (c->pool && c->s3 > 1))
        return bs_error(v->e, at,
                        "%s: along the channels (the third value) the window must be %d and "
                        "a pooling's stride 1, got window %d and stride %d",
                        name, k3, c->k3 ? c->k3 : k3, c->s3 ? c->s3 : 1);
    int rc = axis(v, at, name, c, 0, g.iw, &g.ow, &g.pw);
    if (rc == 0)
        rc = axis(v, at, name, c, 1, g.ih, &g.oh, &g.ph);
    if (rc)
        return rc;
    g.kw = c->k[0];
    g.kh = c->k[1];
    g.sw = c->s[0];
    g.sh = c->s[1];
    g.pool = c->pool;
    g.include_pad = c->include_pad;
    g.oc = c->pool ? g.ic : c->maps;
    if ((long long)g.ow * g.oh * g.oc > (1 << 24) ||
        (long long)g.ow * g.oh * g.kw * g.kh * g.ic > (1 << 26) ||
        (long long)g.iw * g.ih * g.ic > (1 << 24))
        return bs_error(v->e, at, "%s: the output (or its unfolded input) is too large", name);
    *out = g;
    return 0;
}

/* Node out of kind over inputs in[0..nin), with geometry g and an image of w x h x ch. */
static int make_node(struct ev *v, const struct bs_node *at, const struct g_kind *kind,
                     const int *in, int nin, const struct bk_conv *g, int w, int h, int ch,
                     struct bv *out)
{
    int rc = bse_make_kind(v, at, kind, in, nin, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    n->conv = *g;
    n->rows = w * h * ch;
    n->tensor_rank = 3;
    n->tdims[0] = w;
    n->tdims[1] = h;
    n->tdims[2] = ch;
    return 0;
}

/* The node of kind (Convolution or Pooling) over x with geometry c: checks that x is an
 * image and gives the node its geometry and image dims. */
static int make(struct ev *v, const struct bs_node *at, const char *name, const struct bconv *c,
                const struct g_kind *kind, const int *in, int nin, struct bv *out)
{
    struct bk_conv g;
    int rc = geometry(v, at, name, c, &v->g->nodes[in[nin - 1 - (nin == 3)]], &g);
    return rc ? rc : make_node(v, at, kind, in, nin, &g, g.ow, g.oh, g.oc, out);
}

/* A transposed convolution over x (in: W, x[, b]): the convolution whose input is this
 * node's output and whose output is x. Each axis's output: n = in s with autopadding (the
 * convolution then gives ceil(n / s) = in cells), else (in - 1) s + k - lowerPad - upperPad;
 * checked by computing that convolution's geometry over it. */
static int make_transpose(struct ev *v, const struct bs_node *at, const char *name,
                          const struct bconv *c, const int *in, int nin, struct bv *out)
{
    const struct g_node *x = &v->g->nodes[in[1]];
    if (x->tensor_rank < 2)
        return bs_error(v->e, at,
                        "%s: the input must be an image (an Input {W:H:C} or what is computed "
                        "from one), got a vector of %d values",
                        name, x->rows);
    int n[2];
    for (int i = 0; i < 2; i++) {
        long long want =
            c->autopad[i] ? (long long)x->tdims[i] * c->s[i]
                          : (long long)(x->tdims[i] - 1) * c->s[i] + c->k[i] - c->lo[i] - c->hi[i];
        if (want < 1 || want > (1 << 16))
            return bs_error(v->e, at, "%s: no output size along %c gives the input's %d cells",
                            name, "xy"[i], x -> tdims[i]);
        n[i] = (int)want;
    }
    if (c->in_maps && c->in_maps != x->tdims[2])
        return bs_error(v->e, at, "%s: numInputChannels is %d, the input has %d channels", name,
                        c->in_maps, x->tdims[2]);
    /* the convolution from the output (n[0] x n[1] x maps) to x */
    struct g_node img = {.rows = n[0] * n[1] * c->maps, .tensor_rank = 3};
    img.tdims[0] = n[0];
    img.tdims[1] = n[1];
    img.tdims[2] = c->maps;
    struct bconv fwd = *c;
    fwd.maps = x->tdims[2];
    fwd.k3 = 0;
    struct bk_conv g;
    int rc = geometry(v, at, name, &fwd, &img, &g);
    if (rc)
        return rc;
    if (g.ow != x->tdims[0] || g.oh != x->tdims[1])
        return bs_error(v->e, at, "%s: no output size gives the input's %d x %d cells", name,
                        x->tdims[0], x->tdims[1]);
    return make_node(v, at, nin == 3 ? &g_kind_conv_t_b : &g_kind_conv_t, in, nin, &g, n[0], n[1],
                     c->maps, out);
}

/* Max unpooling of x into the shape of p, the pooling's input (c: the pooling's windows). */
static int make_unpool(struct ev *v, const struct bs_node *at, const char *name,
                       const struct bconv *c, int x, int p, struct bv *out)
{
    struct bk_conv g;
    const struct g_node *pn = &v->g->nodes[p], *xn = &v->g->nodes[x];
    int rc = geometry(v, at, name, c, pn, &g);
    if (rc)
        return rc;
    if (xn->rows != g.ow * g.oh * g.oc)
        return bs_error(v->e, at,
                        "%s: the input has %d values, not the %d x %d x %d its pooling of the "
                        "second input gives",
                        name, xn->rows, g.ow, g.oh, g.oc);
    int in[2] = {x, p};
    return make_node(v, at, &g_kind_unpool, in, 2, &g, g.iw, g.ih, g.ic, out);
}

/* ConvolutionalLayer {numOutputChannels, filterShape, bias, activation, init,
 * initValueScale, initBias, stride, pad, lowerPad, upperPad, dilation,
 * maxTempMemSizeInSamples}: a function with its own kernel W (window cells x Inferred
 * input channels, by the maps) and b (one per map). */
int bse_conv_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    struct bconv *c = bse_alloc(v, sizeof *c);
    if (!c)
        return v->e->code;
    int rc = bse_get_int(v, at, "ConvolutionalLayer numOutputChannels", &a[0], &c->maps);
    if (rc)
        return rc;
    if (c->maps <= 0)
        return bs_error(v->e, at, "%s: numOutputChannels must be positive", name);
    struct bv geo[6] = {a[1], a[7], a[8], a[9], a[10], {.k = BV_BOOL, .num = 0}};
    if ((rc = read_geometry(v, at, name, geo, layer_args, c)) != 0)
        return rc;
    c->layer = name;
    int dil[2], dil3;
    if ((rc = pair(v, at, "ConvolutionalLayer dilation", &a[11], 0, 1, dil, &dil3)) != 0)
        return rc;
    if (dil[0] != 1 || dil[1] != 1 || dil3 > 1)
        return bs_error(v->e, at, "%s: dilation other than 1 is not supported yet", name);
    if (a[2].k != BV_BOOL || (a[3].k != BV_FN && a[3].k != BV_NONE))
        return bs_error(v->e, at, "%s: bias must be a boolean and activation a function", name);
    struct bv w, b; /* W: window cells x Inferred channels, by the maps */
    if ((rc = bse_layer_params(v, at, a + 4, 0, c->maps, a[2].num != 0, &a[6], &w, &b)) != 0)
        return rc;
    v->g->nodes[w.node].fan_filter = c->k[0] * c->k[1];
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!f)
        return v->e->code;
    bse_name_new(v, w.node, "W");
    if (b.k == BV_NODE)
        bse_name_new(v, b.node, "b");
    f->k = FN_CONV;
    f->w = w.node;
    f->b = b.k == BV_NODE ? b.node : -1;
    f->act = a[3];
    f->conv = c;
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

int bse_conv_apply(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                   size_t npos, struct bv *out)
{
    if (npos != 1 + (f->conv->unpool != 0))
        return bs_error(v->e, at, "%s's function takes %d argument%s, got %zu", f->conv->layer,
                        1 + f->conv->unpool, f->conv->unpool ? "s (x, the pooling's input)" : "",
                        npos);
    struct bv x = pos[0], p = npos > 1 ? pos[1] : pos[0];
    int rc = bse_as_node(v, at, "layer input", &x);
    if (rc == 0 && f->conv->unpool)
        rc = bse_as_node(v, at, "MaxUnpoolingLayer's second input (the pooling's)", &p);
    int in[3] = {f->w, x.node, f->b};
    if (rc == 0 && f->conv->unpool)
        rc = make_unpool(v, at, f->conv->layer, f->conv, x.node, p.node, out);
    else if (rc == 0 && f->conv->transpose)
        rc = make_transpose(v, at, f->conv->layer, f->conv, in, f->b >= 0 ? 3 : 2, out);
    else if (rc == 0 && f->conv->pool)
        rc = make(v, at, f->conv->layer, f->conv, &g_kind_pool, &x.node, 1, out);
    else if (rc == 0)
        rc = make(v, at, f->conv->layer, f->conv, f->b >= 0 ? &g_kind_conv_b : &g_kind_conv, in,
                  f->b >= 0 ? 3 : 2, out);
    if (rc == 0 && f->act.k == BV_FN)
        rc = bse_apply1(v, at, &f->act, *out, out);
    return rc;
}

/* MaxPoolingLayer / AveragePoolingLayer {filterShape, stride, pad, lowerPad, upperPad,
 * ceilOutDim[, includePad]} (CNTK.core.bs's, over Pooling): a function of one input. Its
 * arguments are checked here, where they are written. */
int bse_pool_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out)
{
    struct bconv *c = bse_alloc(v, sizeof *c);
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!c || !f)
        return v->e->code;
    c->pool = strcmp(name, "MaxPoolingLayer") ? BK_POOL_AVERAGE : BK_POOL_MAX;
    c->layer = name;
    int rc = read_geometry(v, at, name, a, layer_args, c);
    if (rc == 0 && c->pool == BK_POOL_AVERAGE && a[6].k != BV_BOOL)
        return bse_type_error(v, at, "AveragePoolingLayer includePad", "true or false", &a[6]);
    c->include_pad = c->pool == BK_POOL_AVERAGE && a[6].num != 0;
    *f = (struct bfn){.k = FN_CONV, .w = -1, .b = -1, .act = {.k = BV_NONE}, .conv = c};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return rc;
}

/* Pooling (input, poolKind, kernelDims, stride, autoPadding, lowerPad, upperPad,
 * ceilOutDim, includePad, imageLayout, tag) */
int bse_pooling(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out)
{
    struct bconv c = {0};
    const char *kind = bse_get_str(&a[1]);
    if (!kind || (strcmp(kind, "max") && strcmp(kind, "average")))
        return bs_error(v->e, at, "%s: poolKind must be \"max\" or \"average\"", name);
    c.pool = strcmp(kind, "max") ? BK_POOL_AVERAGE : BK_POOL_MAX;
    int rc = read_geometry(v, at, name, a + 2, node_args, &c);
    if (rc == 0 && a[8].k != BV_BOOL)
        return bse_type_error(v, at, "Pooling includePad", "true or false", &a[8]);
    c.include_pad = a[8].num != 0;
    struct bv x = a[0];
    if (rc == 0)
        rc = bse_as_node(v, at, name, &x);
    return rc ? rc : make(v, at, name, &c, &g_kind_pool, &x.node, 1, out);
}

/* MaxPooling / AveragePooling (input, windowWidth, windowHeight, horizontalSubsample,
 * verticalSubsample, imageLayout, tag): CNTK's older nodes, windows without padding. */
int bse_pooling_legacy(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    struct bconv c = {.pool = strcmp(name, "MaxPooling") ? BK_POOL_AVERAGE : BK_POOL_MAX};
    static const char *const what[] = {"windowWidth", "windowHeight", "horizontalSubsample",
                                       "verticalSubsample"};
    int *dst[] = {&c.k[0], &c.k[1], &c.s[0], &c.s[1]};
    for (int i = 0; i < 4; i++) {
        int rc = bse_get_int(v, at, what[i], &a[1 + i], dst[i]);
        if (rc)
            return rc;
        if (*dst[i] < 1 || *dst[i] > MAX_CELLS)
            return bs_error(v->e, at, "%s: %s must be 1 to %d", name, what[i], MAX_CELLS);
    }
    struct bv x = a[0];
    int rc = bse_as_node(v, at, name, &x);
    return rc ? rc : make(v, at, name, &c, &g_kind_pool, &x.node, 1, out);
}

/* ConvolutionTransposeLayer {numOutputChannels, filterShape, numInputChannels, bias,
 * activation, init, initValueScale, initBias, stride, pad, lowerPad, upperPad, outputShape,
 * dilation, maxTempMemSizeInSamples}: a function with its own kernel W (window cells x
 * output channels, by the input channels: CNTK's [kW x kH x out x in]) and b (one per
 * output channel). */
int bse_conv_t_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    struct bconv *c = bse_alloc(v, sizeof *c);
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!c || !f)
        return v->e->code;
    int rc = bse_get_int(v, at, "ConvolutionTransposeLayer numOutputChannels", &a[0], &c->maps);
    if (rc == 0)
        rc = bse_get_int(v, at, "ConvolutionTransposeLayer numInputChannels", &a[2], &c->in_maps);
    if (rc)
        return rc;
    if (c->maps <= 0 || c->in_maps < 0)
        return bs_error(v->e, at,
                        "%s: numOutputChannels must be positive and numInputChannels 0 (the "
                        "input's) or more",
                        name);
    struct bv geo[6] = {a[1], a[8], a[9], a[10], a[11], {.k = BV_BOOL, .num = 0}};
    if ((rc = read_geometry(v, at, name, geo, layer_args, c)) != 0)
        return rc;
    c->layer = name;
    c->transpose = 1;
    int dil[2], dil3;
    if ((rc = pair(v, at, "ConvolutionTransposeLayer dilation", &a[13], 0, 1, dil, &dil3)) != 0)
        return rc;
    if (dil[0] != 1 || dil[1] != 1 || dil3 > 1)
        return bs_error(v->e, at, "%s: dilation other than 1 is not supported yet", name);
    if (a[12].k != BV_NONE)
        return bs_error(v->e, at,
                        "%s: outputShape is not supported yet (the output is the "
                        "input times the stride, with pad = true)",
                        name);
    if (a[3].k != BV_BOOL || (a[4].k != BV_FN && a[4].k != BV_NONE))
        return bs_error(v->e, at, "%s: bias must be a boolean and activation a function", name);
    struct bv w, b = {.k = BV_NONE};
    struct bv pw[5] = {a[5], a[6], {.k = BV_NONE}, {.k = BV_NONE}, {.k = BV_NUM, .num = 1}};
    if ((rc = bse_param_node(v, at, pw, c->k[0] * c->k[1] * c->maps, c->in_maps, &w)) != 0)
        return rc;
    v->g->nodes[w.node].fan_filter = c->k[0] * c->k[1];
    bse_name_new(v, w.node, "W");
    if (a[3].num != 0) {
        struct bv pb[5] = {{.k = BV_STR, .str = "fixedValue"},
                           {.k = BV_NUM, .num = 1},
                           {.k = BV_NONE},
                           a[7],
                           {.k = BV_NUM, .num = 1}};
        if ((rc = bse_param_node(v, at, pb, c->maps, 1, &b)) != 0)
            return rc;
        bse_name_new(v, b.node, "b");
    }
    *f = (struct bfn){
        .k = FN_CONV, .w = w.node, .b = b.k == BV_NODE ? b.node : -1, .act = a[4], .conv = c};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return 0;
}

/* MaxUnpoolingLayer {filterShape, stride, pad, lowerPad, upperPad}: a function of (x, the
 * pooling's input) that puts each value of x where the pooling found its maximum. */
int bse_unpool_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out)
{
    struct bconv *c = bse_alloc(v, sizeof *c);
    struct bfn *f = bse_alloc(v, sizeof *f);
    if (!c || !f)
        return v->e->code;
    c->pool = BK_POOL_MAX;
    c->unpool = 1;
    c->layer = name;
    struct bv geo[6] = {a[0], a[1], a[2], a[3], a[4], {.k = BV_BOOL, .num = 0}};
    int rc = read_geometry(v, at, name, geo, layer_args, c);
    *f = (struct bfn){.k = FN_CONV, .w = -1, .b = -1, .act = {.k = BV_NONE}, .conv = c};
    *out = (struct bv){.k = BV_FN, .fn = f};
    return rc;
}

/* A Convolution whose window spans a few of the maps, 1 x 1 x K (CNTK's local response
 * normalization: Convolution (W, SplitDimension (x .* x, 3, 1), (1:1:2n+1), mapDims = 1,
 * autoPadding = true) with W = ParameterTensor {(1:1:2n+1:1), learningRateMultiplier = 0,
 * initValue = alpha / (2n+1)}): the ChannelWindow node, for a fixed kernel of one value,
 * a centred odd window, stride 1. */
static int along_maps(struct ev *v, const struct bs_node *at, const char *name,
                      const struct bconv *c, int w, int x, struct bv *out)
{
    const struct g_node *W = &v->g->nodes[w], *X = &v->g->nodes[x];
    if (c->k3 % 2 == 0 || c->s[0] != 1 || c->s[1] != 1 || (c->s3 != 0 && c->s3 != 1) ||
        !c->autopad[0] || !c->autopad[1])
        return bs_error(v->e, at,
                        "%s: a window of %d of the %d maps is built for an odd window, stride 1 "
                        "and autoPadding = true (CNTK's local response normalization)",
                        name, c->k3, X->tdims[2]);
    if (!W->learnable || !W->state || W->init != G_INIT_FIXED || W->rows != c->k3 || W->cols != 1)
        return bs_error(v->e, at,
                        "%s: a window along the maps is built for a fixed kernel of one value: "
                        "ParameterTensor {(1:1:%d:1), learningRateMultiplier = 0, initValue = "
                        "...}",
                        name, c->k3);
    int in[2] = {w, x};
    double weight = W->init_value;
    int rc = bse_make_kind(v, at, &g_kind_chan_window, in, 2, out);
    if (rc)
        return rc;
    struct g_node *n = &v->g->nodes[out->node];
    X = &v->g->nodes[x];
    n->chan_half = c->k3 / 2;
    n->init_value = weight;
    n->tensor_rank = 3;
    memcpy(n->tdims, X->tdims, sizeof n->tdims);
    return 0;
}

/* Convolution (weightNode, inputValueNode, kernelDims, mapDims, stride, sharing,
 * autoPadding, lowerPad, upperPad, imageLayout, maxTempMemSizeInSamples, tag): CNTK's
 * primitive node over a kernel of the caller's, a Parameter (maps, window cells) as
 * CNTK's older configs make it (Parameter (outMap, inWCount)), taken as its transpose,
 * or a ParameterTensor (kW:kH:C:maps). No bias: the configs add one per map. */
int bse_conv_primitive(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out)
{
    struct bconv c = {.layer = name};
    struct bv geo[6] = {a[2], a[4], a[6], a[7], a[8], {.k = BV_BOOL, .num = 0}};
    int rc = read_geometry(v, at, name, geo, node_args, &c);
    if (rc)
        return rc;
    if (a[5].k != BV_BOOL || a[5].num == 0)
        return bs_error(v->e, at,
                        "%s: only sharing = true (one kernel for every position) is "
                        "supported",
                        name);
    struct bv w = a[0], x = a[1];
    if ((rc = bse_as_node(v, at, name, &w)) != 0 || (rc = bse_as_node(v, at, name, &x)) != 0)
        return rc;
    struct g_node *W = &v->g->nodes[w.node];
    const struct g_node *X = &v->g->nodes[x.node];
    if (c.k3 > 1 && c.k[0] == 1 && c.k[1] == 1 && X->tensor_rank == 3 && c.k3 < X->tdims[2])
        return along_maps(v, at, name, &c, w.node, x.node, out);
    if (!W->learnable || (W->tensor_rank != 4 && W->tensor_rank > 1))
        return bs_error(v->e, at,
                        "%s: the kernel must be a Parameter (maps, window cells) or a "
                        "ParameterTensor (kW:kH:C:maps)",
                        name);
    if (W->tensor_rank != 4) { /* CNTK's (maps x cells): partrain's kernel is cells x maps */
        for (int i = 0; i < v->g->n; i++)
            for (int k = 0; k < v->g->nodes[i].kind->nin; k++)
                if (v->g->nodes[i].in[k] == w.node)
                    return bs_error(v->e, at,
                                    "%s: a kernel given as a Parameter (maps, window cells) "
                                    "must not be used by another node (it is laid out for "
                                    "this convolution)",
                                    name);
        int maps = W->rows;
        if (W->data) { /* values from a file (CNTK's maps x cells): transposed too */
            float *t = malloc((size_t)W->rows * (size_t)W->cols * sizeof *t);
            if (!t)
                return pt_err_set(v->e, PT_ENOMEM, "error: out of memory");
            for (int m = 0; m < W->rows; m++)
                for (int k = 0; k < W->cols; k++)
                    t[(size_t)m * (size_t)W->cols + (size_t)k] =
                        W->data[(size_t)k * (size_t)W->rows + (size_t)m];
            free(W->data);
            W->data = t;
        }
        W->rows = W->cols;
        W->cols = maps;
        W->tensor_rank = 4;
        W->fan_filter = c.k[0] * c.k[1];
    }
    c.maps = W->cols;
    int maps = 0;
    if (a[3].k == BV_ARR && a[3].arr->n == 1)
        rc = bse_get_int(v, at, "Convolution mapDims", &a[3].arr->v[0], &maps);
    else
        rc = bse_get_int(v, at, "Convolution mapDims", &a[3], &maps);
    if (rc)
        return rc;
    if (maps != 0 && maps != c.maps)
        return bs_error(v->e, at, "%s: mapDims is %d, the kernel has %d maps", name, maps, c.maps);
    int in[2] = {w.node, x.node};
    if ((rc = make(v, at, name, &c, &g_kind_conv, in, 2, out)) != 0)
        return rc;
    const struct bk_conv *g = &v->g->nodes[out->node].conv;
    if (W->rows != 0 && W->rows != g->kw * g->kh * g->ic)
        return bs_error(v->e, at,
                        "%s: the kernel has %d values per map, the window %d x %d x %d cells", name,
                        W->rows, g->kw, g->kh, g->ic);
    return 0;
}
