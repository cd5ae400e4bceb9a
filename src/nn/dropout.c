/* The dropout layer (addDropoutNodes): inverted dropout at the step's rate, no parameters.
 *
 * Its mask stream is keyed by the step's dropout seed and the layer's stack position, so
 * a seed and a step count give the same masks everywhere. */
#include "nn/layer.h"

struct dropout_layer {
    struct nn_layer base;
    float rate;                /* of the last forward: 0 = passed through */
    float *out_buf, *mask_buf; /* workspace: y and the mask (0 or 1/(1-rate)) */
};

static struct dropout_layer *dropout_of(struct nn_layer *l)
{
    return NN_LAYER_STATE(l, struct dropout_layer);
}

static size_t dropout_workspace(const struct nn_layer *l, size_t steps, size_t nseq)
{
    return 2 * nn_ws_round((size_t)l->in_dim * steps * nseq);
}

static void dropout_carve(struct nn_layer *l, float **ws, size_t steps, size_t nseq)
{
    struct dropout_layer *d = dropout_of(l);
    d->out_buf = nn_ws_take(ws, (size_t)l->in_dim * steps * nseq);
    d->mask_buf = nn_ws_take(ws, (size_t)l->in_dim * steps * nseq);
}

/* Inverted dropout: y = x * mask, mask 0 or 1/(1-rate). Off (rate 0, or evaluation): y is
 * x itself. Either way the next layer's gradient lands in dx directly, and backward scales
 * it there in place. */
static void dropout_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    struct dropout_layer *d = dropout_of(l);
    size_t n = (size_t)l->in_dim * p->steps * p->nseq;
    l->dy = l->dx;
    d->rate = p->train ? p->dropout_rate : 0.0f;
    if (d->rate <= 0.0f) {
        l->y = l->x;
        return;
    }
    l->y = d->out_buf;
    b->ops->dropout(b, l->y, d->mask_buf, l->x, n, d->rate,
                    nn_mix64(p->dropout_seed, (uint64_t)l->index));
}

static void dropout_backward(struct nn_layer *l, struct backend *b)
{
    struct dropout_layer *d = dropout_of(l);
    if (d->rate > 0.0f && l->dx)
        b->ops->mul(b, l->dx, d->mask_buf, (size_t)l->in_dim * l->steps * l->nseq);
}

const struct nn_layer_ops nn_dropout_ops = {
    .name = "dropout",
    .state_size = sizeof(struct dropout_layer),
    .workspace = dropout_workspace,
    .carve = dropout_carve,
    .forward = dropout_forward,
    .backward = dropout_backward,
};
