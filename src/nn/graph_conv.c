/* Convolution and pooling nodes (graph.h) over images: each column of the input is one
 * image of n->conv's iw x ih x ic values. The geometry is fixed where BrainScript makes
 * the node (bs_conv.c), from the input's image dims; the shapes here check the operands
 * against it. The arithmetic is the backend's (conv_forward, pool_forward, ...). */
#include <stdint.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

/* x: one image a column, of the geometry's input size. */
static int check_image(struct g_node *n, const struct g_node *x, struct pt_err *e)
{
    const struct bk_conv *c = &n->conv;
    if (x->cols != 0 || x->seq1)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: the input must be one image per sample",
                          n->where, n->kind->name);
    if (x->rows != c->iw * c->ih * c->ic)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: the input has %d values per sample, not an image of "
                          "%d x %d x %d",
                          n->where, n->kind->name, x->rows, c->iw, c->ih, c->ic);
    n->cols = 0;
    n->seq1 = 0;
    return 0;
}

static int shape_conv(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1);
    const struct bk_conv *c = &n->conv;
    int k = c->kw * c->kh * c->ic, rc = check_image(n, x, e);
    if (rc)
        return rc;
    if (w->rows == 0 && w->learnable)
        w->rows = k; /* the kernel's Inferred input channels */
    if (w->rows != k || w->cols != c->oc)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: Convolution: the kernel is %d x %d, expected %d x %d "
                          "(%d x %d window cells x %d input channels, by %d maps)",
                          n->where, w->rows, w->cols, k, c->oc, c->kw, c->kh, c->ic, c->oc);
    if (n->kind->nin == 3) {
        const struct g_node *b = IN(g, n, 2);
        if (b->rows != c->oc || b->cols != 1)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: Convolution: the bias is %d x %d, expected %d x 1 (one "
                              "per map)",
                              n->where, b->rows, b->cols, c->oc);
    }
    n->rows = c->ow * c->oh * c->oc;
    return 0;
}

static void forward_conv(struct nn_graph *g, struct g_node *n)
{
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1);
    const float *bias = n->kind->nin == 3 ? g_val(g, IN(g, n, 2)) : NULL;
    g->bk->ops->conv_forward(g->bk, &n->conv, g_val(g, n), g_val(g, x), g_val(g, w), bias,
                             g_cols(g, n), n->ws);
}

static void backward_conv(struct nn_graph *g, struct g_node *n)
{
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1);
    struct g_node *b = n->kind->nin == 3 ? IN(g, n, 2) : NULL;
    g->bk->ops->conv_backward(g->bk, &n->conv, g_grad(g, n), g_val(g, x), g_val(g, w),
                              x->needs_grad ? g_grad(g, x) : NULL,
                              w->needs_grad ? g_grad(g, w) : NULL,
                              b && b->needs_grad ? g_grad(g, b) : NULL, g_cols(g, n), n->ws);
}

static size_t ws_conv(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)ncols;
    (void)nseq;
    return bk_conv_ws(&n->conv);
}

static int shape_pool(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    int rc = check_image(n, IN(g, n, 0), e);
    n->rows = n->conv.ow * n->conv.oh * n->conv.ic;
    return rc;
}

/* A max pooling's workspace: which cell each maximum came from, an int32 in each float's
 * room (its value columns; a recurrent loop's window starts at c0 as the values do). */
static int32_t *pool_arg(struct nn_graph *g, struct g_node *n)
{
    if (n->conv.pool != BK_POOL_MAX)
        return NULL;
    return (int32_t *)(void *)n->ws + g->c0 * (size_t)n->rows;
}

static void forward_pool(struct nn_graph *g, struct g_node *n)
{
    g->bk->ops->pool_forward(g->bk, &n->conv, g_val(g, n), g_val(g, IN(g, n, 0)), g_cols(g, n),
                             pool_arg(g, n));
}

static void backward_pool(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 0);
    if (x->needs_grad)
        g->bk->ops->pool_backward(g->bk, &n->conv, g_grad(g, x), g_grad(g, n), pool_arg(g, n),
                                  g_cols(g, n));
}

static size_t ws_pool(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)nseq;
    return n->conv.pool == BK_POOL_MAX ? (size_t)n->rows * ncols : 0;
}

const struct g_kind g_kind_conv = {
    .name = "Convolution",
    .nin = 2,
    .shape = shape_conv,
    .forward = forward_conv,
    .backward = backward_conv,
    .workspace = ws_conv,
};

const struct g_kind g_kind_conv_b = {
    .name = "Convolution",
    .nin = 3,
    .shape = shape_conv,
    .forward = forward_conv,
    .backward = backward_conv,
    .workspace = ws_conv,
};

const struct g_kind g_kind_pool = {
    .name = "Pooling",
    .nin = 1,
    .shape = shape_pool,
    .forward = forward_pool,
    .backward = backward_pool,
    .workspace = ws_pool,
};

/* ------------------------------------------------------------ ConvolutionTranspose */

/* n->conv is the convolution from this node's output (iw x ih x ic) to x (ow x oh x oc):
 * the forward pass is that convolution's dL/dx with x as its dL/dy, the backward pass its
 * forward (for dL/dx) and its kernel gradient with the roles of its input and output
 * swapped. */
static int shape_conv_t(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1);
    const struct bk_conv *c = &n->conv;
    if (x->cols != 0 || x->seq1 || x->rows != c->ow * c->oh * c->oc)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: ConvolutionTranspose: the input must be one image of %d x "
                          "%d x %d per sample",
                          n->where, c->ow, c->oh, c->oc);
    int k = c->kw * c->kh * c->ic;
    if (w->cols == 0 && w->learnable)
        w->cols = c->oc; /* numInputChannels Inferred */
    if (w->rows != k || w->cols != c->oc)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: ConvolutionTranspose: the kernel is %d x %d, expected %d x "
                          "%d (%d x %d window cells x %d output channels, by %d input channels)",
                          n->where, w->rows, w->cols, k, c->oc, c->kw, c->kh, c->ic, c->oc);
    if (n->kind->nin == 3) {
        const struct g_node *b = IN(g, n, 2);
        if (b->rows != c->ic || b->cols != 1)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: ConvolutionTranspose: the bias is %d x %d, expected %d "
                              "x 1 (one per output map)",
                              n->where, b->rows, b->cols, c->ic);
    }
    n->rows = c->iw * c->ih * c->ic;
    n->cols = 0;
    n->seq1 = 0;
    return 0;
}

static void forward_conv_t(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1);
    size_t cols = g_cols(g, n), cells = (size_t)n->conv.iw * (size_t)n->conv.ih;
    b->ops->fill(b, g_val(g, n), (size_t)n->rows * cols, 0.0f);
    b->ops->conv_backward(b, &n->conv, g_val(g, x), g_val(g, x), g_val(g, w), g_val(g, n), NULL,
                          NULL, cols, n->ws);
    if (n->kind->nin == 3)
        b->ops->map_bias(b, g_val(g, n), g_val(g, IN(g, n, 2)), n->conv.ic, cells, cols);
}

static void backward_conv_t(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *w = IN(g, n, 0), *x = IN(g, n, 1);
    struct g_node *bias = n->kind->nin == 3 ? IN(g, n, 2) : NULL;
    size_t cols = g_cols(g, n), cells = (size_t)n->conv.iw * (size_t)n->conv.ih;
    if (x->needs_grad) { /* the convolution of dL/dy, into scratch, added */
        b->ops->conv_forward(b, &n->conv, g->tmp, g_grad(g, n), g_val(g, w), NULL, cols, n->ws);
        g_add_grad(g, x, g->tmp, x, 1.0f);
    }
    if (w->needs_grad)
        b->ops->conv_backward(b, &n->conv, g_val(g, x), g_grad(g, n), g_val(g, w), NULL,
                              g_grad(g, w), NULL, cols, n->ws);
    if (bias && bias->needs_grad)
        b->ops->map_bias_grad(b, g_grad(g, bias), g_grad(g, n), n->conv.ic, cells, cols);
}

const struct g_kind g_kind_conv_t = {
    .name = "ConvolutionTranspose",
    .nin = 2,
    .shape = shape_conv_t,
    .forward = forward_conv_t,
    .backward = backward_conv_t,
    .workspace = ws_conv,
};

const struct g_kind g_kind_conv_t_b = {
    .name = "ConvolutionTranspose",
    .nin = 3,
    .shape = shape_conv_t,
    .forward = forward_conv_t,
    .backward = backward_conv_t,
    .workspace = ws_conv,
};

/* ------------------------------------------------------------ MaxUnpooling */

/* n->conv is the pooling of the second input p (iw x ih x ic) to x's shape (ow x oh x ic):
 * forward, that pooling finds each window's maximum (its values go to scratch) and x's
 * value goes to that cell, every other cell 0 (where windows overlap, the values that land
 * on one cell add up); backward, x gets the gradient at those cells; p gets none. */
static int shape_unpool(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    const struct g_node *x = IN(g, n, 0), *p = IN(g, n, 1);
    const struct bk_conv *c = &n->conv;
    if (x->cols != 0 || x->seq1 || p->cols != 0 || p->seq1 || x->rows != c->ow * c->oh * c->ic ||
        p->rows != c->iw * c->ih * c->ic)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: MaxUnpooling: the inputs must be one image per sample, of "
                          "%d x %d x %d and %d x %d x %d",
                          n->where, c->ow, c->oh, c->ic, c->iw, c->ih, c->ic);
    n->rows = p->rows;
    n->cols = 0;
    n->seq1 = 0;
    return 0;
}

/* the maxima's cells, then the pooled values (scratch) */
static int32_t *unpool_arg(struct nn_graph *g, struct g_node *n)
{
    (void)g;
    return (int32_t *)(void *)n->ws;
}

static void forward_unpool(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    size_t cols = g_cols(g, n), pooled = (size_t)n->conv.ow * (size_t)n->conv.oh * n->conv.ic;
    b->ops->pool_forward(b, &n->conv, n->ws + pooled * cols, g_val(g, IN(g, n, 1)), cols,
                         unpool_arg(g, n));
    b->ops->fill(b, g_val(g, n), (size_t)n->rows * cols, 0.0f);
    b->ops->pool_backward(b, &n->conv, g_val(g, n), g_val(g, IN(g, n, 0)), unpool_arg(g, n), cols);
}

static void backward_unpool(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 0);
    if (x->needs_grad)
        g->bk->ops->unpool_backward(g->bk, &n->conv, g_grad(g, x), g_grad(g, n), unpool_arg(g, n),
                                    g_cols(g, n));
}

static size_t ws_unpool(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)nseq;
    return 2 * (size_t)n->conv.ow * (size_t)n->conv.oh * (size_t)n->conv.ic * ncols;
}

const struct g_kind g_kind_unpool = {
    .name = "MaxUnpooling",
    .nin = 2,
    .shape = shape_unpool,
    .forward = forward_unpool,
    .backward = backward_unpool,
    .workspace = ws_unpool,
};

/* ChannelWindow (W, x): each map of x's image the sum of the 2 h + 1 maps around it (the
 * missing ones beyond the first and the last are zeros) times the kernel's one weight: the
 * convolution along the maps that CNTK's local response normalization writes (Convolution
 * of a (1:1:2h+1:1) kernel over the squared image). The kernel is fixed
 * (learningRateMultiplier = 0, one initValue): its weight is n->init_value, and no
 * gradient goes to it. Maps lie one after the other, so each shift by d maps is one block
 * of rows: y[c] += a x[c + d]. */
static int shape_chan_window(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = IN(g, n, 1);
    if (x->rows <= 0 || x->cols != 0 || x->tensor_rank != 3)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: a convolution along the maps needs a per-sample image "
                          "(W x H x C)",
                          n->where);
    n->rows = x->rows;
    n->cols = 0;
    n->seq1 = x->seq1;
    return 0;
}

/* dst += a * (src shifted by d maps), over `cols` columns of rows = cells * maps. */
static void shifted(struct nn_graph *g, const struct g_node *n, float *dst, const float *src, int d,
                    float a)
{
    const struct g_node *x = &g->nodes[n->in[1]];
    int cells = x->tdims[0] * x->tdims[1], maps = x->tdims[2], ad = d < 0 ? -d : d;
    if (ad >= maps)
        return;
    int rows = cells * (maps - ad);
    size_t to = d > 0 ? 0 : (size_t)cells * ad, from = d > 0 ? (size_t)cells * ad : 0;
    g->bk->ops->axpy2d(g->bk, dst + to, n->rows, src + from, n->rows, rows, g_cols(g, n), a);
}

static void forward_chan_window(struct nn_graph *g, struct g_node *n)
{
    const struct g_node *x = IN(g, n, 1);
    g->bk->ops->fill(g->bk, g_val(g, n), (size_t)n->rows * g_cols(g, n), 0.0f);
    for (int d = -n->chan_half; d <= n->chan_half; d++)
        shifted(g, n, g_val(g, n), g_val(g, x), d, (float)n->init_value);
}

static void backward_chan_window(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 1);
    if (x->needs_grad) /* the transpose: dx[c + d] += a dy[c] */
        for (int d = -n->chan_half; d <= n->chan_half; d++)
            shifted(g, n, g_grad(g, x), g_grad(g, n), -d, (float)n->init_value);
}

const struct g_kind g_kind_chan_window = {
    .name = "Convolution",
    .nin = 2,
    .shape = shape_chan_window,
    .forward = forward_chan_window,
    .backward = backward_chan_window,
};
