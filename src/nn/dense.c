/* Column-wise layers: dense (W x + b, then an activation), dropout, and "last step"
 * (selects each sequence's final state for sequence classification).
 *
 * Shapes: a layer's input x is (in x C) and its output y (out x C), C = steps * nseq
 * columns, column-major. Every dense product is one gemm over the whole minibatch. */
#include <stdio.h>

#include "nn/nn_internal.h"

/* ------------------------------------------------------------------ dense */

static size_t dense_param_count(const struct nn_layer *l)
{
    size_t w = (size_t)l->out_dim * (size_t)l->in_dim;
    return w + (l->has_bias ? (size_t)l->out_dim : 0);
}

static void dense_bind(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                       size_t *count)
{
    char name[32];
    size_t w = (size_t)l->out_dim * (size_t)l->in_dim;
    l->w = params + l->param_offset;
    l->gw = grads + l->param_offset;
    snprintf(name, sizeof name, "W%d", l->number);
    nn_table_add(table, count, name, l->param_offset, l->out_dim, l->in_dim);
    if (!l->has_bias)
        return;
    l->bias = l->w + w;
    l->gbias = l->gw + w;
    snprintf(name, sizeof name, "B%d", l->number);
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
    l->out_buf = nn_ws_take(ws, (size_t)l->out_dim * steps * nseq);
    l->grad_buf = nn_ws_take(ws, (size_t)l->out_dim * steps * nseq);
}

/* y (out x C) = f(W (out x in) . x (in x C) + b) */
static void dense_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    size_t cols = p->steps * p->nseq;
    l->steps = p->steps;
    l->nseq = p->nseq;
    l->y = l->out_buf;
    l->dy = l->grad_buf;
    b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, l->out_dim, (int)cols, l->in_dim, 1.0f, l->w,
                 l->out_dim, l->x, l->in_dim, 0.0f, l->y, l->out_dim);
    b->ops->bias_act(b, l->act, l->y, l->bias, l->out_dim, cols);
}

/* dz = dy f'(y); dW = dz x^T (out x in); db = sum over columns of dz; dx = W^T dz. */
static void dense_backward(struct nn_layer *l, struct backend *b)
{
    size_t cols = l->steps * l->nseq;
    int out = l->out_dim, in = l->in_dim;
    b->ops->act_grad(b, l->act, l->dy, l->y, (size_t)out * cols);
    b->ops->gemm(b, BK_NOTRANS, BK_TRANS, out, in, (int)cols, 1.0f, l->dy, out, l->x, in, 0.0f,
                 l->gw, out);
    if (l->has_bias)
        b->ops->sum_cols(b, l->gbias, l->dy, out, cols, out);
    if (l->dx)
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, in, (int)cols, out, 1.0f, l->w, out, l->dy, out, 0.0f,
                     l->dx, in);
}

const struct nn_layer_ops nn_dense_ops = {
    .kind = "dense",
    .param_count = dense_param_count,
    .bind = dense_bind,
    .init = dense_init,
    .workspace = dense_workspace,
    .carve = dense_carve,
    .forward = dense_forward,
    .backward = dense_backward,
};

/* ------------------------------------------------------------------ no parameters */

static size_t none_param_count(const struct nn_layer *l)
{
    (void)l;
    return 0;
}

static void none_bind(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                      size_t *count)
{
    (void)l;
    (void)params;
    (void)grads;
    (void)table;
    (void)count;
}

static void none_init(const struct nn_layer *l, float *host, const struct nn_config *cfg,
                      struct pt_rng *rng)
{
    (void)l;
    (void)host;
    (void)cfg;
    (void)rng;
}

/* ------------------------------------------------------------------ dropout */

static size_t dropout_workspace(const struct nn_layer *l, size_t steps, size_t nseq)
{
    return 2 * nn_ws_round((size_t)l->in_dim * steps * nseq);
}

static void dropout_carve(struct nn_layer *l, float **ws, size_t steps, size_t nseq)
{
    l->out_buf = nn_ws_take(ws, (size_t)l->in_dim * steps * nseq);
    l->mask_buf = nn_ws_take(ws, (size_t)l->in_dim * steps * nseq);
}

/* Inverted dropout: y = x * mask, mask 0 or 1/(1-rate). Off (rate 0, or evaluation): y is
 * x itself. Either way the next layer's gradient lands in dx directly, and backward scales
 * it there in place. */
static void dropout_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    size_t n = (size_t)l->in_dim * p->steps * p->nseq;
    l->steps = p->steps;
    l->nseq = p->nseq;
    l->dy = l->dx;
    l->dropout_rate = p->train ? p->dropout_rate : 0.0f;
    if (l->dropout_rate <= 0.0f) {
        l->y = l->x;
        return;
    }
    l->y = l->out_buf;
    b->ops->dropout(b, l->y, l->mask_buf, l->x, n, l->dropout_rate,
                    nn_mix64(p->dropout_seed, (uint64_t)l->index));
}

static void dropout_backward(struct nn_layer *l, struct backend *b)
{
    if (l->dropout_rate > 0.0f && l->dx)
        b->ops->mul(b, l->dx, l->mask_buf, (size_t)l->in_dim * l->steps * l->nseq);
}

const struct nn_layer_ops nn_dropout_ops = {
    .kind = "dropout",
    .param_count = none_param_count,
    .bind = none_bind,
    .init = none_init,
    .workspace = dropout_workspace,
    .carve = dropout_carve,
    .forward = dropout_forward,
    .backward = dropout_backward,
};

/* ------------------------------------------------------------------ last step */

static size_t last_step_workspace(const struct nn_layer *l, size_t steps, size_t nseq)
{
    (void)l;
    (void)steps;
    (void)nseq;
    return 0;
}

static void last_step_carve(struct nn_layer *l, float **ws, size_t steps, size_t nseq)
{
    (void)l;
    (void)ws;
    (void)steps;
    (void)nseq;
}

/* Sequence labels: the recurrent layers carry each sequence's state through its padding,
 * so the last column block (step T-1) holds every sequence's last real state; y is a view
 * of it and the shape becomes one step. Frame labels: y is x (every step is classified). */
static void last_step_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    (void)b;
    l->steps = p->steps;
    l->nseq = p->nseq;
    l->selected = p->seq_labels;
    if (!l->selected) {
        l->y = l->x;
        l->dy = l->dx;
        return;
    }
    size_t at = (p->steps - 1) * p->nseq * (size_t)l->in_dim;
    l->y = l->x + at;
    l->dy = l->dx ? l->dx + at : NULL;
    p->steps = 1;
    p->mask = NULL;
}

/* The next layer wrote the last block of dx; earlier steps get no direct gradient. */
static void last_step_backward(struct nn_layer *l, struct backend *b)
{
    if (l->selected && l->dx && l->steps > 1)
        b->ops->fill(b, l->dx, (l->steps - 1) * l->nseq * (size_t)l->in_dim, 0.0f);
}

const struct nn_layer_ops nn_last_step_ops = {
    .kind = "last step",
    .param_count = none_param_count,
    .bind = none_bind,
    .init = none_init,
    .workspace = last_step_workspace,
    .carve = last_step_carve,
    .forward = last_step_forward,
    .backward = last_step_backward,
};
