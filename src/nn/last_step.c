/* The last-step layer: selects each sequence's final state for sequence classification
 * (labels with one row per sequence); with frame labels it passes every step through. No
 * parameters, no workspace: its output is a view of its input. */
#include "nn/layer.h"

struct last_step_layer {
    struct nn_layer base;
    int selected; /* the last forward selected (sequence labels) */
};

static struct last_step_layer *last_step_of(struct nn_layer *l)
{
    return NN_LAYER_STATE(l, struct last_step_layer);
}

/* Sequence labels: the recurrent layers carry each sequence's state through its padding,
 * so the last column block (step T-1) holds every sequence's last real state; y is a view
 * of it and the shape becomes one step. Frame labels: y is x (every step is classified). */
static void last_step_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    (void)b;
    struct last_step_layer *s = last_step_of(l);
    s->selected = p->seq_labels;
    if (!s->selected) {
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
    if (last_step_of(l)->selected && l->dx && l->steps > 1)
        b->ops->fill(b, l->dx, (l->steps - 1) * l->nseq * (size_t)l->in_dim, 0.0f);
}

const struct nn_layer_ops nn_last_step_ops = {
    .name = "last_step",
    .state_size = sizeof(struct last_step_layer),
    .flags = NN_LAYER_SELECTS,
    .forward = last_step_forward,
    .backward = last_step_backward,
};
