/* The dense layer: y = f(W x + b), W (out x in), an optional bias b, activation f.
 *
 * Shapes: the input x is (in x C) and the output y (out x C), C = steps * nseq columns,
 * column-major. Every product is one gemm over the whole minibatch. Parameters (arena
 * order): W, then B when the layer has a bias. */
#include <stdio.h>

#include "nn/layer.h"

struct dense_layer {
    struct nn_layer base;
    enum bk_act act;
    int has_bias;
    int number;                   /* index in the tensor names */
    float *w, *bias, *gw, *gbias; /* parameter and gradient views (device) */
    float *out_buf, *grad_buf;    /* workspace: y and dy */
};

static struct dense_layer *dense_of(struct nn_layer *l)
{
    return NN_LAYER_STATE(l, struct dense_layer);
}

static const struct dense_layer *dense_of_const(const struct nn_layer *l)
{
    return NN_LAYER_CONST_STATE(l, struct dense_layer);
}

static int dense_setup(struct nn_layer *l, const struct nn_layer_spec *s,
                       const struct nn_config *cfg, struct pt_err *e)
{
    (void)cfg;
    (void)e;
    struct dense_layer *d = dense_of(l);
    d->act = s->act;
    l->act = s->act;
    d->has_bias = s->bias;
    d->number = s->number;
    return 0;
}

static size_t dense_param_count(const struct nn_layer *l)
{
    size_t w = (size_t)l->out_dim * (size_t)l->in_dim;
    return w + (dense_of_const(l)->has_bias ? (size_t)l->out_dim : 0);
}

static void dense_bind(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                       size_t *count)
{
    struct dense_layer *d = dense_of(l);
    char name[32];
    size_t w = (size_t)l->out_dim * (size_t)l->in_dim;
    d->w = params + l->param_offset;
    d->gw = grads + l->param_offset;
    snprintf(name, sizeof name, "W%d", d->number);
    nn_table_add(table, count, name, l->param_offset, l->out_dim, l->in_dim);
    if (!d->has_bias)
        return;
    d->bias = d->w + w;
    d->gbias = d->gw + w;
    snprintf(name, sizeof name, "B%d", d->number);
    nn_table_add(table, count, name, l->param_offset + w, l->out_dim, 1);
}

/* Biases stay 0 (the host arena starts zeroed). */
static void dense_init(const struct nn_layer *l, float *host, const struct nn_config *cfg,
                       struct pt_rng *rng)
{
    nn_init_weights(host + l->param_offset, (size_t)l->out_dim * (size_t)l->in_dim,
                    (size_t)l->in_dim, cfg, rng);
}

static size_t dense_workspace(const struct nn_layer *l, size_t steps, size_t nseq)
{
    return 2 * nn_ws_round((size_t)l->out_dim * steps * nseq);
}

static void dense_carve(struct nn_layer *l, float **ws, size_t steps, size_t nseq)
{
    struct dense_layer *d = dense_of(l);
    d->out_buf = nn_ws_take(ws, (size_t)l->out_dim * steps * nseq);
    d->grad_buf = nn_ws_take(ws, (size_t)l->out_dim * steps * nseq);
}

/* y (out x C) = f(W (out x in) . x (in x C) + b) */
static void dense_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    struct dense_layer *d = dense_of(l);
    size_t cols = p->steps * p->nseq, at = l->col0 * (size_t)l->out_dim;
    l->y = d->out_buf + at;
    l->dy = d->grad_buf + at;
    if (cols == 0) /* a team member without sequences of this minibatch */
        return;
    if (b->ops->gemm_bias_act) { /* the bias and f in the product's tiles, where it can */
        b->ops->gemm_bias_act(b, BK_NOTRANS, BK_NOTRANS, l->out_dim, (int)cols, l->in_dim, 1.0f,
                              d->w, l->out_dim, l->x, l->in_dim, 0.0f, l->y, l->out_dim, d->bias,
                              d->act);
        return;
    }
    b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, l->out_dim, (int)cols, l->in_dim, 1.0f, d->w,
                 l->out_dim, l->x, l->in_dim, 0.0f, l->y, l->out_dim);
    b->ops->bias_act(b, d->act, l->y, d->bias, l->out_dim, cols);
}

/* dz = dy f'(y); dx = W^T dz; dW = dz x^T (out x in); db = sum over columns of dz. dx
 * comes first: with the SGD step fused into dW's product (l->sgd), W changes there. */
static void dense_backward(struct nn_layer *l, struct backend *b)
{
    struct dense_layer *d = dense_of(l);
    size_t cols = l->steps * l->nseq;
    int out = l->out_dim, in = l->in_dim;
    if (cols == 0)
        return;
    if (!l->dy_ready) /* else the next layer's dx product applied f' */
        b->ops->act_grad(b, d->act, l->dy, l->y, (size_t)out * cols);
    if (l->dx && l->dx_y)
        b->ops->gemm_act_grad(b, BK_TRANS, BK_NOTRANS, in, (int)cols, out, 1.0f, d->w, out, l->dy,
                              out, 0.0f, l->dx, in, l->dx_act, l->dx_y);
    else if (l->dx)
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, in, (int)cols, out, 1.0f, d->w, out, l->dy, out, 0.0f,
                     l->dx, in);
    if (!l->sgd) {
        if (d->has_bias)
            b->ops->sum_cols(b, d->gbias, l->dy, out, cols, out);
        b->ops->gemm(b, BK_NOTRANS, BK_TRANS, out, in, (int)cols, 1.0f, l->dy, out, l->x, in, 0.0f,
                     d->gw, out);
        return;
    }
    struct bk_sgd u = *l->sgd;
    float *s = u.s + l->param_offset;
    u.w = d->w;
    u.s = s;
    /* the bias gradient (dz's row sums) added up by the product on its way through dz */
    b->ops->gemm_sgd(b, BK_NOTRANS, BK_TRANS, out, in, (int)cols, 1.0f, l->dy, out, l->x, in, 0.0f,
                     d->gw, out, &u, d->has_bias ? d->gbias : NULL);
    if (d->has_bias)
        b->ops->sgd_update(b, d->bias, d->gbias, s + (size_t)out * (size_t)in, (size_t)out, u.m,
                           u.a, u.nag);
}

/* Member r of p's share [*lo, *hi) of n rows. */
static void share(int n, int r, int p, int *lo, int *hi)
{
    *lo = (int)((long long)n * r / p);
    *hi = (int)((long long)n * (r + 1) / p);
}

/* A team's forward pass of a hidden layer: member r computes rows [r0, r1) of y for all
 * the team's columns (it packs only its rows of W; x is read in place). */
static void dense_team_forward(struct nn_layer *l, struct backend *b)
{
    struct dense_layer *d = dense_of(l);
    int out = l->out_dim, in = l->in_dim, k = (int)l->team_cols, r0, r1;
    share(out, l->team_rank, l->team_size, &r0, &r1);
    l->y = d->out_buf + l->col0 * (size_t)out; /* this member's part: the next layer's x */
    l->dy = d->grad_buf + l->col0 * (size_t)out;
    if (r1 == r0)
        return;
    const float *x = l->x - l->col0 * (size_t)in;
    b->ops->gemm_bias_act(b, BK_NOTRANS, BK_NOTRANS, r1 - r0, k, in, 1.0f, d->w + r0, out, x, in,
                          0.0f, d->out_buf + r0, out, d->has_bias ? d->bias + r0 : NULL, d->act);
}

/* A team's backward pass of a layer whose dy is whole (all the team's columns, f' applied):
 * member r computes rows [c0, c1) of dx (its share of the input dimension: it packs only
 * W's columns c0..c1) with the previous layer's f' (dx_act, dx_y: its y), then the SGD step
 * of the same columns of W, the ones it just read, and of rows [r0, r1) of b: one product
 * over all the team's columns each, the step in its tiles. */
static void dense_team_backward(struct nn_layer *l, struct backend *b)
{
    struct dense_layer *d = dense_of(l);
    int out = l->out_dim, in = l->in_dim, k = (int)l->team_cols, c0, c1, r0, r1;
    share(in, l->team_rank, l->team_size, &c0, &c1);
    share(out, l->team_rank, l->team_size, &r0, &r1);
    size_t back = l->col0 * (size_t)in, at = (size_t)c0 * (size_t)out;
    const float *x = l->x - back, *dy = d->grad_buf;
    if (l->dx && c1 > c0)
        b->ops->gemm_act_grad(b, BK_TRANS, BK_NOTRANS, c1 - c0, k, out, 1.0f, d->w + at, out, dy,
                              out, 0.0f, l->dx - back + c0, in, l->dx_act,
                              l->dx_y ? l->dx_y - back + c0 : NULL);
    struct bk_sgd u = *l->sgd;
    float *s = u.s + l->param_offset;
    if (c1 > c0) { /* the product reads all of dy: every row's bias gradient on the way (the
                      gradients are each member's own memory), of which it uses its rows */
        u.w = d->w + at;
        u.s = s + at;
        b->ops->gemm_sgd(b, BK_NOTRANS, BK_TRANS, out, c1 - c0, k, 1.0f, dy, out, x + c0, in, 0.0f,
                         d->gw + at, out, &u, d->has_bias ? d->gbias : NULL);
    }
    if (!d->has_bias || r1 == r0)
        return;
    if (c1 == c0)
        b->ops->sum_cols(b, d->gbias + r0, dy + r0, r1 - r0, (size_t)k, out);
    b->ops->sgd_update(b, d->bias + r0, d->gbias + r0, s + (size_t)out * (size_t)in + r0,
                       (size_t)(r1 - r0), u.m, u.a, u.nag);
}

const struct nn_layer_ops nn_dense_ops = {
    .name = "dense",
    .state_size = sizeof(struct dense_layer),
    .flags = NN_LAYER_FUSES_SGD | NN_LAYER_DX_ACT | NN_LAYER_DY_ACT | NN_LAYER_TEAM,
    .setup = dense_setup,
    .param_count = dense_param_count,
    .bind = dense_bind,
    .init = dense_init,
    .workspace = dense_workspace,
    .carve = dense_carve,
    .forward = dense_forward,
    .backward = dense_backward,
    .team_forward = dense_team_forward,
    .team_backward = dense_team_backward,
};
