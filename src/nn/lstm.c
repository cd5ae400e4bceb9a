/* The peephole LSTM layer (SPEC 4): H cells over an input of I rows.
 *
 * Parameters (arena order): Wx (4H x I), Wh (4H x H), B (4H x 1), peep (H x 3: pi, pf, po).
 * The four gates are stacked in one 4H-row matrix, rows [i; f; o; g] (struct bk_lstm_fwd),
 * and Wx, Wh lie one after the other as columns of W = [Wx Wh] (4H x (I+H)), so each time
 * step costs one gemm, W [x_t; h_{t-1}], plus one fused pointwise kernel. (Wx x for all
 * steps at once and Wh h per step instead, a k of I = 28 and a k of H that reads C back:
 * the 28:128 LSTM's epoch 9 % slower on one core.)
 *
 * Workspace for T steps of n sequences (C = T n columns):
 *   gates  4H x C   pre-activations, then activations; the backward pass writes each
 *                   step's dG over them (its own last use of them)
 *   xh     (I+H) x C   [x_t; h_{t-1}] for every step (x copied in, h copied after each step)
 *   cell   H x (T+1)n   c_{-1} (= hidden_init) then c_0..c_{T-1}
 *   hid    H x (T+1)n   h_{-1}, h_0..h_{T-1}; y is the view hid + H n
 *   tanh_c H x C;  grad_buf H x C (= dy, also the BPTT accumulator); dc H x n
 * Weight gradients are one gemm over all steps after the backward recursion:
 *   [dWx dWh] = dG xh^T; dB and dpeep are summed by the step kernels.
 * Padding (mask 0) carries h and c and gets dG = 0, so it changes no result or gradient. */
#include <stdio.h>

#include "nn/layer.h"

struct lstm_layer {
    struct nn_layer base;
    int number;                   /* index in the tensor names */
    float hidden_init;            /* h_{-1} and c_{-1} (defaultHiddenActivity) */
    const float *mask;            /* the last forward's padding mask, or NULL */
    float *wx, *wh, *bias, *peep; /* parameter views (device) */
    float *gwx, *gbias, *gpeep;   /* gradient views (device; gwx is [dWx dWh]) */
    float *gates, *xh, *cell, *hid, *tanh_c, *grad_buf, *dc; /* workspace */
};

static struct lstm_layer *lstm_of(struct nn_layer *l)
{
    return NN_LAYER_STATE(l, struct lstm_layer);
}

static int lstm_setup(struct nn_layer *l, const struct nn_layer_spec *s,
                      const struct nn_config *cfg, struct pt_err *e)
{
    (void)e;
    struct lstm_layer *m = lstm_of(l);
    m->number = s->number;
    m->hidden_init = (float)cfg->hidden_activity;
    return 0;
}

static size_t lstm_param_count(const struct nn_layer *l)
{
    size_t h = (size_t)l->out_dim, in = (size_t)l->in_dim;
    return 4 * h * in + 4 * h * h + 4 * h + 3 * h;
}

static void lstm_bind(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                      size_t *count)
{
    struct lstm_layer *m = lstm_of(l);
    char name[32];
    size_t h = (size_t)l->out_dim, in = (size_t)l->in_dim;
    size_t off = l->param_offset;
    size_t at[4] = {off, off + 4 * h * in, off + 4 * h * in + 4 * h * h,
                    off + 4 * h * in + 4 * h * h + 4 * h};
    m->wx = params + at[0];
    m->wh = params + at[1];
    m->bias = params + at[2];
    m->peep = params + at[3];
    m->gwx = grads + at[0];
    m->gbias = grads + at[2];
    m->gpeep = grads + at[3];
    static const char *const part[4] = {"Wx", "Wh", "B", "peep"};
    const int rows[4] = {4 * l->out_dim, 4 * l->out_dim, 4 * l->out_dim, l->out_dim};
    const int cols[4] = {l->in_dim, l->out_dim, 1, 3};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "LSTM%d.%s", m->number, part[i]);
        nn_table_add(table, count, name, at[i], rows[i], cols[i]);
    }
}

/* Weights random (fan-in I, H, and 1 for the diagonal peepholes); gate biases from the
 * *GateInitVal keys, the cell-candidate bias 0. */
static void lstm_init(const struct nn_layer *l, float *host, const struct nn_config *cfg,
                      struct pt_rng *rng)
{
    size_t h = (size_t)l->out_dim, in = (size_t)l->in_dim;
    float *p = host + l->param_offset;
    nn_init_weights(p, 4 * h * in, in, cfg, rng);
    p += 4 * h * in;
    nn_init_weights(p, 4 * h * h, h, cfg, rng);
    p += 4 * h * h;
    for (size_t g = 0; g < 3; g++)
        for (size_t k = 0; k < h; k++)
            p[g * h + k] = (float)cfg->gate_init[g];
    for (size_t k = 0; k < h; k++)
        p[3 * h + k] = 0.0f;
    p += 4 * h;
    nn_init_weights(p, 3 * h, 1, cfg, rng);
}

static size_t lstm_workspace(const struct nn_layer *l, size_t steps, size_t nseq)
{
    size_t h = (size_t)l->out_dim, c = steps * nseq;
    return nn_ws_round(4 * h * c) + nn_ws_round((h + (size_t)l->in_dim) * c) +
           2 * nn_ws_round(h * (c + nseq)) + 2 * nn_ws_round(h * c) + nn_ws_round(h * nseq);
}

static void lstm_carve(struct nn_layer *l, float **ws, size_t steps, size_t nseq)
{
    struct lstm_layer *m = lstm_of(l);
    size_t h = (size_t)l->out_dim, c = steps * nseq;
    m->gates = nn_ws_take(ws, 4 * h * c);
    m->xh = nn_ws_take(ws, (h + (size_t)l->in_dim) * c);
    m->cell = nn_ws_take(ws, h * (c + nseq));
    m->hid = nn_ws_take(ws, h * (c + nseq));
    m->tanh_c = nn_ws_take(ws, h * c);
    m->grad_buf = nn_ws_take(ws, h * c);
    m->dc = nn_ws_take(ws, h * nseq);
}

static void lstm_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    struct lstm_layer *m = lstm_of(l);
    const int hd = l->out_dim, g4 = 4 * hd, in = l->in_dim, ld = in + hd;
    const size_t n = p->nseq, cols = p->steps * n, blk = (size_t)hd * n, xblk = (size_t)ld * n;
    m->mask = p->mask;
    b->ops->copy2d(b, m->xh, ld, l->x, in, in, cols);
    b->ops->fill(b, m->cell, blk, m->hidden_init);
    b->ops->fill(b, m->hid, blk, m->hidden_init);
    b->ops->copy2d(b, m->xh + in, ld, m->hid, hd, hd, n);
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, m->wx);
    for (size_t t = 0; t < p->steps; t++) {
        float *g = m->gates + t * 4 * blk;
        /* gates = [Wx Wh] [x_t; h_{t-1}] (the step kernel adds B) */
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, g4, (int)n, ld, 1.0f, m->wx, g4, m->xh + t * xblk,
                     ld, 0.0f, g, g4);
        struct bk_lstm_fwd s = {
            .hidden = hd,
            .n = n,
            .gates = g,
            .c_prev = m->cell + t * blk,
            .h_prev = m->hid + t * blk,
            .c = m->cell + (t + 1) * blk,
            .h = m->hid + (t + 1) * blk,
            .tanh_c = m->tanh_c + t * blk,
            .bias = m->bias,
            .peep = m->peep,
            .mask = p->mask ? p->mask + t * n : NULL,
        };
        b->ops->lstm_forward(b, &s);
        if (t + 1 < p->steps)
            b->ops->copy2d(b, m->xh + (t + 1) * xblk + in, ld, s.h, hd, hd, n);
    }
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, NULL);
    l->y = m->hid + blk;
    l->dy = m->grad_buf;
}

/* Back through time: dy holds dL/dh_t from above for every step; step t adds its
 * recurrent gradient W_h^T dG_t (and the padding carry) into dy's block t-1. */
static void lstm_backward_steps(struct nn_layer *l, struct backend *b)
{
    struct lstm_layer *m = lstm_of(l);
    const int hd = l->out_dim, g4 = 4 * hd;
    const size_t n = l->nseq, blk = (size_t)hd * n;
    b->ops->fill(b, m->dc, blk, 0.0f);
    b->ops->fill(b, m->gbias, (size_t)g4, 0.0f);
    b->ops->fill(b, m->gpeep, 3 * (size_t)hd, 0.0f);
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, m->wh);
    for (size_t t = l->steps; t-- > 0;) {
        float *dprev = t > 0 ? l->dy + (t - 1) * blk : NULL;
        struct bk_lstm_bwd s = {
            .hidden = hd,
            .n = n,
            .gates = m->gates + t * 4 * blk,
            .c_prev = m->cell + t * blk,
            .c = m->cell + (t + 1) * blk,
            .tanh_c = m->tanh_c + t * blk,
            .peep = m->peep,
            .mask = m->mask ? m->mask + t * n : NULL,
            .dh = l->dy + t * blk,
            .dc = m->dc,
            .dh_prev = dprev,
            .dgates = m->gates + t * 4 * blk, /* in place */
            .dbias = m->gbias,
            .dpeep = m->gpeep,
        };
        b->ops->lstm_backward(b, &s);
        if (dprev)
            b->ops->gemm(b, BK_TRANS, BK_NOTRANS, hd, (int)n, g4, 1.0f, m->wh, g4, s.dgates, g4,
                         1.0f, dprev, hd);
    }
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, NULL);
}

static void lstm_backward(struct nn_layer *l, struct backend *b)
{
    struct lstm_layer *m = lstm_of(l);
    const int hd = l->out_dim, g4 = 4 * hd, in = l->in_dim;
    const size_t cols = l->steps * l->nseq;
    lstm_backward_steps(l, b);
    /* [dWx dWh] = dG xh^T: gwh follows gwx, both 4H rows (lstm_bind) */
    b->ops->gemm(b, BK_NOTRANS, BK_TRANS, g4, in + hd, (int)cols, 1.0f, m->gates, g4, m->xh,
                 in + hd, 0.0f, m->gwx, g4);
    if (l->dx)
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, in, (int)cols, g4, 1.0f, m->wx, g4, m->gates, g4,
                     0.0f, l->dx, in);
}

const struct nn_layer_ops nn_lstm_ops = {
    .name = "lstm",
    .state_size = sizeof(struct lstm_layer),
    .flags = NN_LAYER_READS_MASK,
    .setup = lstm_setup,
    .param_count = lstm_param_count,
    .bind = lstm_bind,
    .init = lstm_init,
    .workspace = lstm_workspace,
    .carve = lstm_carve,
    .forward = lstm_forward,
    .backward = lstm_backward,
};
