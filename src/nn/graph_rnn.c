/* Graph node kinds that keep state between their passes: the recurrent LSTM (CNTK's
 * RecurrentLSTMLayer, on the backend's LSTM step kernels) and Dropout.
 *
 * RecurrentLSTM: inputs x (in x samples), W (4H x in), H (4H x H), b (4H) and the
 * peepholes (H x 3: a zero constant unless usePeepholes). Gate rows in every 4H block:
 * input, forget, output, cell candidate (math/backend.h). The initial state is 0 (with
 * truncated back-propagation through time, g->cont, a continuing sequence's is the state
 * its previous segment ended with: the node's carry; no gradient goes back). Steps run
 * from the first to the last, or from the last to the first (goBackwards); padding columns
 * carry the state (the kernels' mask), so a sequence run backwards starts at its own last
 * real step with the initial state. Internal state is kept in step order k (time t = k, or
 * T-1-k backwards); the node's value is in time order. */
#include "nn/graph.h"

#define X(n)  (&g->nodes[(n)->in[0]])
#define W(n)  (&g->nodes[(n)->in[1]])
#define HM(n) (&g->nodes[(n)->in[2]])
#define B(n)  (&g->nodes[(n)->in[3]])
#define P(n)  (&g->nodes[(n)->in[4]])

static int lstm_shape(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = X(n), *w = W(n);
    int h = n->rows;
    if (x->rows <= 0 || x->cols != 0 || x->seq1)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: RecurrentLSTMLayer: its input must be a sequence of vectors "
                          "of known dimension",
                          n->where);
    if (w->cols == 0)
        w->cols = x->rows;
    if (w->rows != 4 * h || w->cols != x->rows || HM(n)->rows != 4 * h || HM(n)->cols != h ||
        B(n)->rows != 4 * h || B(n)->cols != 1 || P(n)->rows != h || P(n)->cols != 3)
        return pt_err_set(e, PT_EUSER, "%s: error: internal: LSTM parameter shapes", n->where);
    n->cols = 0;
    return 0;
}

/* gates (4H x C: pre-activations, activations, then the backward pass's dG written over
 * them), cell and hid (H x (C + n) each), tanh_c and dy (H x C each), dc, cprev and dsave
 * (H x n each: a step's previous cell with utterances that begin there zeroed, and their
 * dL/dh_prev set aside) */
static size_t lstm_ws(const struct g_node *n, size_t ncols, size_t nseq)
{
    size_t h = (size_t)n->rows;
    return 4 * h * ncols + 2 * h * (ncols + nseq) + 2 * h * ncols + 3 * h * nseq;
}

struct lstm_bufs {
    float *gates, *cell, *hid, *tanh_c, *dy, *dc, *cprev, *dsave;
};

static struct lstm_bufs bufs(const struct g_node *n, size_t ncols, size_t nseq)
{
    size_t h = (size_t)n->rows;
    struct lstm_bufs s;
    s.gates = n->ws;
    s.cell = s.gates + 4 * h * ncols;
    s.hid = s.cell + h * (ncols + nseq);
    s.tanh_c = s.hid + h * (ncols + nseq);
    s.dy = s.tanh_c + h * ncols;
    s.dc = s.dy + h * ncols;
    s.cprev = s.dc + h * nseq;
    s.dsave = s.cprev + h * nseq;
    return s;
}

static size_t time_of(const struct g_node *n, size_t k, size_t steps)
{
    return n->reverse ? steps - 1 - k : k;
}

/* Whether an utterance begins at step k > 0 of some sequence (truncated mode's packing). */
static int any_start(const struct nn_graph *g, size_t k)
{
    for (size_t q = 0; g->begins && k > 0 && q < g->nseq; q++)
        if (g->begins[k * g->nseq + q])
            return 1;
    return 0;
}

/* Step k's previous cell: block k of cell, or where an utterance begins at step k, a copy
 * with its sequences' columns zeroed (block k stays: it is step k - 1's cell, which the
 * backward pass reads). */
static const float *cell_prev(const struct nn_graph *g, const struct g_node *n,
                              const struct lstm_bufs *s, size_t k)
{
    struct backend *b = g->bk;
    size_t hd = (size_t)n->rows, blk = hd * g->nseq;
    if (!any_start(g, k))
        return s->cell + k * blk;
    b->ops->copy(b, s->cprev, s->cell + k * blk, blk);
    for (size_t q = 0; q < g->nseq; q++)
        if (g->begins[k * g->nseq + q])
            b->ops->fill(b, s->cprev + q * hd, hd, 0.0f);
    return s->cprev;
}

static void lstm_forward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    const int hd = n->rows, g4 = 4 * hd;
    const size_t ns = g->nseq, cols = g->ncols, steps = cols / ns, blk = (size_t)hd * ns;
    struct lstm_bufs s = bufs(n, cols, ns);
    struct g_node *x = X(n);
    b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, g4, (int)cols, x->rows, 1.0f, W(n)->v, g4, x->v,
                 x->rows, 0.0f, s.gates, g4);
    b->ops->fill(b, s.cell, blk, 0.0f);
    b->ops->fill(b, s.hid, blk, 0.0f);
    for (size_t q = 0; n->carry && g->cont && q < ns; q++)
        if (g->cont[q]) { /* truncated: the state the previous pass ended with */
            b->ops->copy(b, s.hid + q * (size_t)hd, n->carry + q * (size_t)hd, (size_t)hd);
            b->ops->copy(b, s.cell + q * (size_t)hd, n->carry + blk + q * (size_t)hd, (size_t)hd);
        }
    if (b->ops->gemm_hold) /* H is packed once for all steps */
        b->ops->gemm_hold(b, HM(n)->v);
    for (size_t k = 0; k < steps; k++) {
        size_t t = time_of(n, k, steps);
        float *gt = s.gates + t * 4 * blk;
        /* an utterance that begins at step k starts from the initial state (its h_prev
         * zeroed in place: block k of hid is read only as step k's h_prev; the node's value
         * has step k - 1's h already) */
        int starts = any_start(g, k);
        for (size_t q = 0; starts && q < ns; q++)
            if (g->begins[k * ns + q])
                b->ops->fill(b, s.hid + k * blk + q * (size_t)hd, (size_t)hd, 0.0f);
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, g4, (int)ns, hd, 1.0f, HM(n)->v, g4,
                     s.hid + k * blk, hd, 1.0f, gt, g4);
        struct bk_lstm_fwd f = {
            .hidden = hd,
            .n = ns,
            .gates = gt,
            .bias = B(n)->v,
            .c_prev = cell_prev(g, n, &s, k),
            .h_prev = s.hid + k * blk,
            .c = s.cell + (k + 1) * blk,
            .h = s.hid + (k + 1) * blk,
            .tanh_c = s.tanh_c + t * blk,
            .peep = P(n)->v,
            .mask = g->crit_mask ? g->crit_mask + t * ns : NULL,
        };
        b->ops->lstm_forward(b, &f);
        b->ops->copy(b, n->v + t * blk, s.hid + (k + 1) * blk, blk);
    }
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, NULL);
    if (n->carry &&
        g->cont) { /* the state after each sequence's last real step (padding carries it) */
        b->ops->copy(b, n->carry, s.hid + steps * blk, blk);
        b->ops->copy(b, n->carry + blk, s.cell + steps * blk, blk);
    }
}

static void lstm_backward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    const int hd = n->rows, g4 = 4 * hd;
    const size_t ns = g->nseq, cols = g->ncols, steps = cols / ns, blk = (size_t)hd * ns;
    struct lstm_bufs s = bufs(n, cols, ns);
    struct g_node *x = X(n), *w = W(n), *hm = HM(n);
    b->ops->copy(b, s.dy, n->g, (size_t)hd * cols);
    b->ops->fill(b, s.dc, blk, 0.0f);
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, hm->v);
    for (size_t k = steps; k-- > 0;) {
        size_t t = time_of(n, k, steps);
        float *dprev = k > 0 ? s.dy + time_of(n, k - 1, steps) * blk : NULL;
        struct bk_lstm_bwd d = {
            .hidden = hd,
            .n = ns,
            .gates = s.gates + t * 4 * blk,
            .c_prev = cell_prev(g, n, &s, k),
            .c = s.cell + (k + 1) * blk,
            .tanh_c = s.tanh_c + t * blk,
            .peep = P(n)->v,
            .mask = g->crit_mask ? g->crit_mask + t * ns : NULL,
            .dh = s.dy + t * blk,
            .dc = s.dc,
            .dh_prev = dprev,
            .dgates = s.gates + t * 4 * blk, /* in place */
            .dbias = B(n)->g,
            .dpeep = P(n)->g,
        };
        b->ops->lstm_backward(b, &d);
        /* where an utterance begins at step k, no gradient goes back to the one before it:
         * its dL/dc_prev dropped, its dL/dh_prev columns kept from the product below */
        int cut = dprev && any_start(g, k);
        for (size_t q = 0; cut && q < ns; q++)
            if (g->begins[k * ns + q]) {
                b->ops->fill(b, s.dc + q * (size_t)hd, (size_t)hd, 0.0f);
                b->ops->copy(b, s.dsave + q * (size_t)hd, dprev + q * (size_t)hd, (size_t)hd);
            }
        if (dprev)
            b->ops->gemm(b, BK_TRANS, BK_NOTRANS, hd, (int)ns, g4, 1.0f, hm->v, g4, d.dgates, g4,
                         1.0f, dprev, hd);
        for (size_t q = 0; cut && q < ns; q++)
            if (g->begins[k * ns + q])
                b->ops->copy(b, dprev + q * (size_t)hd, s.dsave + q * (size_t)hd, (size_t)hd);
        /* dH += dG_t h_prev^T (h_prev of step k is hid block k); forwards, block t of dG
         * and block k of hid are the same columns: one product after the loop */
        if (n->reverse)
            b->ops->gemm(b, BK_NOTRANS, BK_TRANS, g4, hd, (int)ns, 1.0f, d.dgates, g4,
                         s.hid + k * blk, hd, 1.0f, hm->g, g4);
    }
    if (b->ops->gemm_hold)
        b->ops->gemm_hold(b, NULL);
    if (!n->reverse)
        b->ops->gemm(b, BK_NOTRANS, BK_TRANS, g4, hd, (int)cols, 1.0f, s.gates, g4, s.hid, hd, 1.0f,
                     hm->g, g4);
    b->ops->gemm(b, BK_NOTRANS, BK_TRANS, g4, x->rows, (int)cols, 1.0f, s.gates, g4, x->v, x->rows,
                 w->g_over ? 0.0f : 1.0f, w->g, g4);
    if (x->needs_grad)
        b->ops->gemm(b, BK_TRANS, BK_NOTRANS, x->rows, (int)cols, g4, 1.0f, w->v, g4, s.gates, g4,
                     x->g_over ? 0.0f : 1.0f, x->g, x->rows);
}

const struct g_kind g_kind_lstm = {
    .name = "RecurrentLSTM",
    .nin = 5,
    .crit = 0,
    .shape = lstm_shape,
    .forward = lstm_forward,
    .backward = lstm_backward,
    .workspace = lstm_ws,
    .overwrites = 3, /* x and W: one GEMM each; H, b, peepholes: step by step */
};

/* ------------------------------------------------------------------ Dropout */

static int dropout_shape(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = X(n);
    if (x->rows <= 0)
        return pt_err_set(e, PT_EUSER, "%s: error: Dropout: the input's dimension is not known",
                          n->where);
    n->rows = x->rows;
    n->cols = x->cols;
    n->seq1 = x->seq1;
    return 0;
}

static size_t dropout_ws(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)nseq;
    return (size_t)n->rows * (n->cols ? (size_t)n->cols : ncols);
}

/* Inverted dropout at the pass's rate (dropoutRate), with a mask stream keyed by the pass's
 * seed and the node; the identity when the rate is 0 or the pass evaluates. */
static void dropout_forward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    size_t k = (size_t)n->rows * g_cols(g, n);
    float *mask = n->ws + (n->cols || n->seq1 ? 0 : g->c0 * (size_t)n->rows);
    if (g->train && g->dropout_rate > 0.0f)
        b->ops->dropout(b, g_val(g, n), mask, g_val(g, X(n)), k, g->dropout_rate,
                        g->dropout_seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(n - g->nodes + 1)) ^
                            (uint64_t)g->c0);
    else
        b->ops->copy(b, g_val(g, n), g_val(g, X(n)), k);
}

static void dropout_backward(struct nn_graph *g, struct g_node *n)
{
    if (!(g->train && g->dropout_rate > 0.0f)) {
        g_add_grad(g, X(n), g_grad(g, n), n, 1.0f);
        return;
    }
    float *mask = n->ws + (n->cols || n->seq1 ? 0 : g->c0 * (size_t)n->rows);
    g->bk->ops->ewise(g->bk, BK_EW_MUL, g->tmp, g_grad(g, n), mask, n->rows, g_cols(g, n),
                      g_cols(g, n));
    g_add_grad(g, X(n), g->tmp, n, 1.0f);
}

const struct g_kind g_kind_dropout = {
    .name = "Dropout",
    .nin = 1,
    .crit = 0,
    .shape = dropout_shape,
    .forward = dropout_forward,
    .backward = dropout_backward,
    .workspace = dropout_ws,
    .overwrites = 1,
};
