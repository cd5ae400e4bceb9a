/* The peephole LSTM layer (SPEC 4): H cells over an input of I rows.
 *
 * Parameters (arena order): Wx (4H x I), Wh (4H x H), B (4H x 1), peep (H x 3: pi, pf, po).
 * The four gates are stacked in one 4H-row matrix, rows [i; f; o; g] (struct bk_lstm_fwd),
 * so each time step costs one gemm (Wh h_{t-1}) plus one fused pointwise kernel.
 *
 * Workspace for T steps of n sequences (C = T n columns):
 *   gates  4H x C   pre-activations, then activations          (Wx x for all steps: 1 gemm)
 *   cell   H x (T+1)n   c_{-1} (= hidden_init) then c_0..c_{T-1}
 *   hid    H x (T+1)n   h_{-1}, h_0..h_{T-1}; y is the view hid + H n
 *   tanh_c H x C;  dgates 4H x C;  grad_buf H x C (= dy, also the BPTT accumulator); dc H x n
 * Weight gradients are single gemms over all steps after the backward recursion:
 *   dWx = dG x^T, dWh = dG h_{-1..T-2}^T; dB and dpeep are summed by the step kernels.
 * Padding (mask 0) carries h and c and gets dG = 0, so it changes no result or gradient. */
#include <stdio.h>

#include "nn/nn_internal.h"

static size_t lstm_param_count(const struct nn_layer *l)
{
    size_t h = (size_t)l->out_dim, in = (size_t)l->in_dim;
    return 4 * h * in + 4 * h * h + 4 * h + 3 * h;
}

static void lstm_bind(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                      size_t *count)
{
    char name[32];
    size_t h = (size_t)l->out_dim, in = (size_t)l->in_dim;
    size_t off = l->param_offset;
    size_t at[4] = {off, off + 4 * h * in, off + 4 * h * in + 4 * h * h,
                    off + 4 * h * in + 4 * h * h + 4 * h};
    l->w = params + at[0];
    l->wh = params + at[1];
    l->bias = params + at[2];
    l->peep = params + at[3];
    l->gw = grads + at[0];
    l->gwh = grads + at[1];
    l->gbias = grads + at[2];
    l->gpeep = grads + at[3];
    static const char *const part[4] = {"Wx", "Wh", "B", "peep"};
    const int rows[4] = {4 * l->out_dim, 4 * l->out_dim, 4 * l->out_dim, l->out_dim};
    const int cols[4] = {l->in_dim, l->out_dim, 1, 3};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "LSTM%d.%s", l->number, part[i]);
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
    return 2 * nn_ws_round(4 * h * c) + 2 * nn_ws_round(h * (c + nseq)) + 2 * nn_ws_round(h * c) +
           nn_ws_round(h * nseq);
}

static void lstm_carve(struct nn_layer *l, float **ws, size_t steps, size_t nseq)
{
    size_t h = (size_t)l->out_dim, c = steps * nseq;
    l->gates = nn_ws_take(ws, 4 * h * c);
    l->dgates = nn_ws_take(ws, 4 * h * c);
    l->cell = nn_ws_take(ws, h * (c + nseq));
    l->hid = nn_ws_take(ws, h * (c + nseq));
    l->tanh_c = nn_ws_take(ws, h * c);
    l->grad_buf = nn_ws_take(ws, h * c);
    l->dc = nn_ws_take(ws, h * nseq);
}

static void lstm_forward(struct nn_layer *l, struct backend *b, struct nn_pass *p)
{
    const int hd = l->out_dim, g4 = 4 * hd;
    const size_t n = p->nseq, cols = p->steps * n, blk = (size_t)hd * n;
    l->steps = p->steps;
    l->nseq = n;
    l->mask = p->mask;
    /* all steps' input contributions at once: gates = Wx x (the step kernel adds B) */
    b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, g4, (int)cols, l->in_dim, 1.0f, l->w, g4, l->x,
                 l->in_dim, 0.0f, l->gates, g4);
    b->ops->fill(b, l->cell, blk, l->hidden_init);
    b->ops->fill(b, l->hid, blk, l->hidden_init);
    for (size_t t = 0; t < p->steps; t++) {
        float *g = l->gates + t * 4 * blk;
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, g4, (int)n, hd, 1.0f, l->wh, g4, l->hid + t * blk,
                     hd, 1.0f, g, g4);
        struct bk_lstm_fwd s = {
            .hidden = hd,
            .n = n,
            .gates = g,
            .c_prev = l->cell + t * blk,
            .h_prev = l->hid + t * blk,
            .c = l->cell + (t + 1) * blk,
            .h = l->hid + (t + 1) * blk,
            .tanh_c = l->tanh_c + t * blk,
            .bias = l->bias,
            .peep = l->peep,
            .mask = p->mask ? p->mask + t * n : NULL,
        };
        b->ops->lstm_forward(b, &s);
    }
    l->y = l->hid + blk;
    l->dy = l->grad_buf;
}

/* Back through time: dy holds dL/dh_t from above for every step; step t adds its
 * recurrent gradient W_h^T dG_t (and the padding carry) into dy's block t-1. */
static void lstm_backward_steps(struct nn_layer *l, struct backend *b)
{
    const int hd = l->out_dim, g4 = 4 * hd;
    const size_t n = l->nseq, blk = (size_t)hd * n;
    b->ops->fill(b, l->dc, blk, 0.0f);
    b->ops->fill(b, l->gbias, (size_t)g4, 0.0f);
    b->ops->fill(b, l->gpeep, 3 * (size_t)hd, 0.0f);
    for (size_t t = l->steps; t-- > 0;) {
        float *dprev = t > 0 ? l->dy + (t - 1) * blk : NULL;
        struct bk_lstm_bwd s = {
            .hidden = hd,
            .n = n,
            .gates = l->gates + t * 4 * blk,
            .c_prev = l->cell + t * blk,
            .c = l->cell + (t + 1) * blk,
            .tanh_c = l->tanh_c + t * blk,
            .peep = l->peep,
            .mask = l->mask ? l->mask + t * n : NULL,
            .dh = l->dy + t * blk,
            .dc = l->dc,
            .dh_prev = dprev,
            .dgates = l->dgates + t * 4 * blk,
            .dbias = l->gbias,
            .dpeep = l->gpeep,
        };
        b->ops->lstm_backward(b, &s);
        if (dprev)
            b->ops->gemm(b, BK_TRANS, BK_NOTRANS, hd, (int)n, g4, 1.0f, l->wh, g4, s.dgates, g4,
                         1.0f, dprev, hd);
    }
}

static void lstm_backward(struct nn_layer *l, struct backend *b)
{
    const int hd = l->out_dim, g4 = 4 * hd, in = l->in_dim;
    const size_t cols = l->steps * l->nseq;
    lstm_backward_steps(l, b);
    b->ops->gemm(b, BK_NOTRANS, BK_TRANS, g4, in, (int)cols, 1.0f, l->dgates, g4, l->x, in, 0.0f,
                 l->gw, g4);
    b->ops->gemm(b, BK_NOTRANS, BK_TRANS, g4, hd, (int)cols, 1.0f, l->dgates, g4, l->hid, hd, 0.0f,
                 l->gwh, g4);
    if (l->dx)
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, in, (int)cols, g4, 1.0f, l->w, g4, l->dgates, g4,
                     0.0f, l->dx, in);
}

const struct nn_layer_ops nn_lstm_ops = {
    .kind = "lstm",
    .param_count = lstm_param_count,
    .bind = lstm_bind,
    .init = lstm_init,
    .workspace = lstm_workspace,
    .carve = lstm_carve,
    .forward = lstm_forward,
    .backward = lstm_backward,
};
