/* Sequence operations. PastValue and FutureValue: a sequence delayed by k steps (CNTK's
 * delay nodes), the joints of recurrent loops; BS.Sequences.Last and First: one column per
 * sequence, its last (first) step; TimeReverse: each sequence's steps in reverse order.
 *
 * y[t] = x[t - k] for PastValue (x[t + k] for FutureValue) where that step is inside the
 * sequence, else the default value (defaultHiddenActivation). A sequence starts at step 0
 * of its column block; FutureValue's last real step is its length - 1 (g->len). The node
 * runs over its window: all steps, or one step inside a loop, reading the input at steps
 * the loop has already run. Gradients go back to those steps.
 *
 * With an initialState (CNTK's second input of a delay node: g_kind_past_init and
 * g_kind_future_init), the steps outside take its value instead of the default: one column
 * for every sequence (a parameter or constant), or each sequence its own (a value per
 * sequence); its gradient is the sum of the gradients of the steps that took it.
 *
 * Truncated back-propagation through time (g->cont): a PastValue of a sequence that goes on
 * from the previous pass reads the steps before its first from the carry, the input's last
 * `delay` steps of that pass (g_carry_save); no gradient goes back to them. Where another
 * utterance begins inside the sequence (g->begins), the steps before it are outside. */
#include <stdio.h>

#include "nn/graph.h"

static int delay_shape(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = &g->nodes[n->in[0]];
    if (x->cols != 0 || x->seq1)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: its input must be a sequence", n->where,
                          n->kind->name);
    if (n->rows == 0)
        n->rows = x->rows; /* 0 until the loop's other nodes fix it (g_open) */
    if (x->rows == 0)
        x->rows = n->rows;
    if (x->rows != 0 && x->rows != n->rows)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: dimension %d, its input's %d", n->where,
                          n->kind->name, n->rows, x->rows);
    n->cols = 0;
    if (n->kind->nin < 2)
        return 0;
    struct g_node *s0 = &g->nodes[n->in[1]]; /* the initial state */
    if (s0->rows == 0 && g_open(s0))
        s0->rows = n->rows;
    if (s0->cols == 0 && s0->learnable)
        s0->cols = 1;
    if (n->rows == 0 && s0->rows > 1) {
        n->rows = s0->rows; /* a loop's delay can learn its rows from its initial state */
        x->rows = x->rows ? x->rows : n->rows;
    }
    if (n->rows != 0 && s0->rows != 0 &&
        !((s0->rows == n->rows || s0->rows == 1) && (s0->cols == 1 || (s0->cols == 0 && s0->seq1))))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: %s: initialState must be one value, one column of the "
                          "input's %d rows, or such a value for each sequence; got %d x %s",
                          n->where, n->kind->name, n->rows, s0->rows,
                          s0->cols   ? "1"
                          : s0->seq1 ? "sequences"
                                     : "samples");
    n->row_bcast = s0->rows == 1 && n->rows > 1; /* spread by a product with ones */
    return 0;
}

/* Where a step has no input to take (outside its sequence): the initial state's value for
 * sequence s (broadcast from one value where it has one row), or the default. */
static void fill_initial(struct nn_graph *g, const struct g_node *n, float *y, size_t s)
{
    struct backend *b = g->bk;
    size_t rows = (size_t)n->rows;
    if (n->kind->nin < 2) {
        b->ops->fill(b, y, rows, (float)n->delay_default);
        return;
    }
    const struct g_node *s0 = &g->nodes[n->in[1]];
    const float *v = s0->v + (s0->seq1 ? s * (size_t)s0->rows : 0);
    if (s0->rows == 1 && rows > 1)
        b->ops->gemm(b, BK_NOTRANS, BK_NOTRANS, (int)rows, 1, 1, 1.0f, g->ones, (int)rows, v, 1,
                     0.0f, y, (int)rows);
    else
        b->ops->copy(b, y, v, rows);
}

long g_begin(const struct nn_graph *g, size_t t, size_t s)
{
    for (size_t u = t; g->begins && u > 0; u--)
        if (g->begins[u * g->nseq + s])
            return (long)u;
    return g->cont && g->cont[s] ? -1 : 0;
}

/* The step that column block t reads for sequence s, or -1 outside the sequence (before
 * the step where its utterance began, in truncated mode). */
static long source(const struct nn_graph *g, const struct g_node *n, size_t t, size_t s)
{
    long src = (long)t - n->delay; /* delay > 0 looks back, < 0 ahead */
    if (src < 0 || (g->len && src >= (long)g->len[s]))
        return -1;
    if (n->delay > 0 && g->begins && src < g_begin(g, t, s))
        return -1;
    return src;
}

static void delay_forward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *x = &g->nodes[n->in[0]];
    size_t rows = (size_t)n->rows, t0 = g->c0 / g->nseq, steps = g->cw / g->nseq;
    for (size_t t = t0; t < t0 + steps; t++)
        for (size_t s = 0; s < g->nseq; s++) {
            float *y = n->v + (t * g->nseq + s) * rows;
            long src = source(g, n, t, s);
            if (src < 0 && n->delay > 0 && (size_t)n->delay > t && n->carry && g->cont &&
                g_begin(g, t, s) < 0) /* step t - delay of the previous pass: carry slot t */
                b->ops->copy(b, y, n->carry + (t * g->nseq + s) * rows, rows);
            else if (src < 0)
                fill_initial(g, n, y, s);
            else
                b->ops->copy(b, y, x->v + ((size_t)src * g->nseq + s) * rows, rows);
        }
}

static void delay_backward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *x = &g->nodes[n->in[0]];
    struct g_node *s0 = n->kind->nin > 1 ? &g->nodes[n->in[1]] : NULL;
    int to_x = x->needs_grad, to_s0 = s0 && s0->needs_grad;
    size_t rows = (size_t)n->rows, t0 = g->c0 / g->nseq, steps = g->cw / g->nseq;
    for (size_t t = t0; (to_x || to_s0) && t < t0 + steps; t++)
        for (size_t s = 0; s < g->nseq; s++) {
            long src = source(g, n, t, s);
            const float *dy = n->g + (t * g->nseq + s) * rows;
            if (src >= 0 && to_x)
                b->ops->axpy(b, x->g + ((size_t)src * g->nseq + s) * rows, dy, rows, 1.0f);
            else if (src < 0 && to_s0 &&
                     !(n->delay > 0 && (size_t)n->delay > t && n->carry && g->cont &&
                       g_begin(g, t, s) < 0)) {
                float *ds = s0->g + (s0->seq1 ? s * (size_t)s0->rows : 0);
                if (s0->rows == 1 && rows > 1) /* one value: the sum of the step's gradient */
                    b->ops->gemm(b, BK_TRANS, BK_NOTRANS, 1, 1, (int)rows, 1.0f, g->ones, (int)rows,
                                 dy, (int)rows, 1.0f, ds, 1);
                else
                    b->ops->axpy(b, ds, dy, rows, 1.0f);
            }
        }
}

/* The delays, and the same with an initial state, their second input (those made only by
 * the BrainScript built-ins: not in the table of kinds, which names each once) */
#define DELAY_KIND(nm, n)                                                                          \
    {                                                                                              \
        .name = nm, .nin = n, .crit = 0, .shape = delay_shape, .forward = delay_forward,           \
        .backward = delay_backward, .workspace = NULL                                              \
    }
const struct g_kind g_kind_past = DELAY_KIND("PastValue", 1);
const struct g_kind g_kind_future = DELAY_KIND("FutureValue", 1);
const struct g_kind g_kind_past_init = DELAY_KIND("PastValue", 2);
const struct g_kind g_kind_future_init = DELAY_KIND("FutureValue", 2);

/* ------------------------------------------------------------------ Last, First */

static int pick_shape(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = &g->nodes[n->in[0]];
    if (x->cols != 0 || x->seq1 || x->rows <= 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: BS.Sequences.%s: its input must be a sequence of known "
                          "dimension",
                          n->where, n->kind->name);
    n->rows = x->rows;
    n->cols = 0;
    n->seq1 = 1;
    return 0;
}

/* The column of x that sequence s's output copies, or -1 for an empty sequence. */
static long picked(const struct nn_graph *g, const struct g_node *n, size_t s)
{
    size_t len = g->len ? g->len[s] : g->ncols / g->nseq;
    if (len == 0)
        return -1;
    size_t t = n->kind == &g_kind_last ? len - 1 : 0;
    return (long)(t * g->nseq + s);
}

static void pick_forward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *x = &g->nodes[n->in[0]];
    size_t rows = (size_t)n->rows;
    for (size_t s = 0; s < g->nseq; s++) {
        long c = picked(g, n, s);
        if (c < 0)
            b->ops->fill(b, n->v + s * rows, rows, 0.0f);
        else
            b->ops->copy(b, n->v + s * rows, x->v + (size_t)c * rows, rows);
    }
}

static void pick_backward(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = &g->nodes[n->in[0]];
    if (!x->needs_grad)
        return;
    size_t rows = (size_t)n->rows;
    for (size_t s = 0; s < g->nseq; s++) {
        long c = picked(g, n, s);
        if (c >= 0)
            g->bk->ops->axpy(g->bk, x->g + (size_t)c * rows, n->g + s * rows, rows, 1.0f);
    }
}

const struct g_kind g_kind_last = {
    .name = "Last",
    .nin = 1,
    .crit = 0,
    .shape = pick_shape,
    .forward = pick_forward,
    .backward = pick_backward,
    .workspace = NULL,
};

const struct g_kind g_kind_first = {
    .name = "First",
    .nin = 1,
    .crit = 0,
    .shape = pick_shape,
    .forward = pick_forward,
    .backward = pick_backward,
    .workspace = NULL,
};

int g_carry_reserve(struct nn_graph *g, size_t nseq, struct pt_err *e)
{
    struct backend *b = g->bk;
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        const char *why = NULL;
        if (n->dead)
            continue;
        if (n->kind == &g_kind_future || n->kind == &g_kind_future_init)
            why = "FutureValue looks ahead";
        else if (n->kind == &g_kind_lstm && n->reverse)
            why = "a recurrent LSTM that goes backwards looks ahead";
        else if (n->kind == &g_kind_last || n->kind == &g_kind_first)
            why = "a value per sequence (BS.Sequences.Last or First) needs whole sequences";
        if (why)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: truncated = true cuts utterances into segments, but "
                              "%s",
                              n->where, why);
        int past = n->kind == &g_kind_past || n->kind == &g_kind_past_init;
        size_t need = past && n->delay > 0      ? (size_t)n->rows * (size_t)n->delay
                      : n->kind == &g_kind_lstm ? 2 * (size_t)n->rows
                                                : 0;
        need *= nseq;
        if (need == n->carry_n)
            continue;
        b->ops->release(b, n->carry);
        n->carry = NULL;
        n->carry_n = 0;
        int rc = b->ops->alloc(b, need, &n->carry, e);
        if (rc)
            return rc;
        b->ops->fill(b, n->carry, need, 0.0f);
        n->carry_n = need;
    }
    return 0;
}

void g_carry_save(struct nn_graph *g)
{
    struct backend *b = g->bk;
    size_t steps = g->ncols / g->nseq, ns = g->nseq;
    for (int i = 0; i < g->n; i++) {
        struct g_node *n = &g->nodes[i];
        if (n->dead || !n->carry || (n->kind != &g_kind_past && n->kind != &g_kind_past_init))
            continue; /* the LSTM keeps its state itself (graph_rnn.c) */
        struct g_node *x = &g->nodes[n->in[0]];
        size_t rows = (size_t)n->rows, d = (size_t)n->delay;
        /* sequence q's slot j: step len - d + j (len its steps) where that is inside its last
         * utterance; before it, the default where that utterance began in this pass, else
         * the older slot j + len (slots in increasing j: that one is not written yet) */
        for (size_t q = 0; q < ns; q++) {
            size_t len = g->len ? g->len[q] : steps;
            long begin = len ? g_begin(g, len - 1, q) : 0;
            for (size_t j = 0; j < d; j++) {
                float *slot = n->carry + (j * ns + q) * rows;
                long src = (long)(len + j) - (long)d;
                if (src >= 0 && src >= begin)
                    b->ops->copy(b, slot, x->v + ((size_t)src * ns + q) * rows, rows);
                else if (begin >= 0)
                    fill_initial(g, n, slot, q);
                else
                    b->ops->copy(b, slot, n->carry + ((j + len) * ns + q) * rows, rows);
            }
        }
    }
}

/* ------------------------------------------------------------------ BroadcastSequenceAs */

/* BS.Sequences.BroadcastSequenceAs (type, data1): the value data1 holds for each sequence
 * (one column per sequence: BS.Sequences.Last or First of something) at every step of that
 * sequence, whose steps are type's; the gradient of data1 is the sum over the sequence's
 * steps (not its padding). */
static int bcast_shape(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *t = &g->nodes[n->in[0]], *x = &g->nodes[n->in[1]];
    if (x->is_input && x->cols == 0 && x != t)
        x->seq1 = 1; /* an Input read here holds one value per sequence */
    if (t->cols != 0 || t->seq1)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: BS.Sequences.BroadcastSequenceAs: its first input (type) "
                          "must be a sequence of steps",
                          n->where);
    if (x->cols != 0 || !x->seq1 || x->rows <= 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: BS.Sequences.BroadcastSequenceAs: its second input must be "
                          "one value per sequence (as BS.Sequences.Last or First gives) of known "
                          "dimension",
                          n->where);
    n->rows = x->rows;
    n->cols = 0;
    n->seq1 = 0;
    return 0;
}

static void bcast_forward(struct nn_graph *g, struct g_node *n)
{
    const struct g_node *x = &g->nodes[n->in[1]];
    size_t block = g->nseq * (size_t)n->rows, t0 = g->c0 / g->nseq, steps = g->cw / g->nseq;
    for (size_t t = t0; t < t0 + steps; t++) /* a step's columns: the sequences' values */
        g->bk->ops->copy(g->bk, n->v + t * block, x->v, block);
}

static void bcast_backward(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = &g->nodes[n->in[1]];
    if (!x->needs_grad)
        return;
    size_t rows = (size_t)n->rows, nseq = g->nseq, t0 = g->c0 / nseq, steps = g->cw / nseq;
    for (size_t t = t0; t < t0 + steps; t++) {
        int all = 1; /* every sequence has step t: the step's block at once */
        for (size_t s = 0; all && g->len && s < nseq; s++)
            all = t < g->len[s];
        if (all) {
            g->bk->ops->axpy(g->bk, x->g, n->g + t * nseq * rows, nseq * rows, 1.0f);
            continue;
        }
        for (size_t s = 0; s < nseq; s++)
            if (t < g->len[s])
                g->bk->ops->axpy(g->bk, x->g + s * rows, n->g + (t * nseq + s) * rows, rows, 1.0f);
    }
}

const struct g_kind g_kind_broadcast_seq = {
    .name = "BroadcastSequenceAs",
    .nin = 2,
    .crit = 0,
    .shape = bcast_shape,
    .forward = bcast_forward,
    .backward = bcast_backward,
    .workspace = NULL,
};

/* ------------------------------------------------------------------ TimeReverse */

/* TimeReverse (x): each sequence's steps in reverse order (CNTK's TimeReverseNode); its
 * gradient goes back the same way. Whole sequences only: a pass whose sequences go on from
 * the previous one's (truncated back-propagation), or a step-by-step loop around it, is a
 * fault of the pass. */
static int reverse_shape(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = &g->nodes[n->in[0]];
    if (x->cols != 0 || x->seq1 || x->rows <= 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: TimeReverse: its input must be a sequence of known "
                          "dimension",
                          n->where);
    n->rows = x->rows;
    n->cols = 0;
    return 0;
}

/* Whether the pass holds whole sequences that this node sees at once. */
int g_whole_sequences(struct nn_graph *g, const struct g_node *n, const char *needs)
{
    int ok = !g->begins && g->cw == g->ncols && g->c0 == 0;
    for (size_t s = 0; ok && g->cont && s < g->nseq; s++)
        ok = !g->cont[s];
    if (!ok && !g->fault[0])
        snprintf(g->fault, sizeof g->fault, "%s: error: %s needs %s", n->where, n->kind->name,
                 needs);
    return ok;
}

static int reverse_whole(struct nn_graph *g, struct g_node *n)
{
    return g_whole_sequences(g, n,
                             "whole sequences (not truncated = true, not inside a recurrent "
                             "loop)");
}

/* The column step t of sequence s takes from (its mirror image; a padding step itself). */
static size_t mirror(const struct nn_graph *g, size_t t, size_t s)
{
    size_t nseq = g->nseq ? g->nseq : 1, len = g->len ? g->len[s] : g->ncols / nseq;
    return (t < len ? len - 1 - t : t) * nseq + s;
}

/* How many sequences from s on take step t from columns that follow each other (sequences
 * of one length: a whole step's block in one copy, not a copy per column). */
static size_t run_of(const struct nn_graph *g, size_t t, size_t s, size_t nseq)
{
    size_t n = 1;
    while (s + n < nseq && mirror(g, t, s + n) == mirror(g, t, s) + n)
        n++;
    return n;
}

static void reverse_forward(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *x = &g->nodes[n->in[0]];
    size_t rows = (size_t)n->rows, nseq = g->nseq ? g->nseq : 1, steps = g->ncols / nseq;
    if (!reverse_whole(g, n)) {
        b->ops->fill(b, n->v, rows * g->ncols, 0.0f);
        return;
    }
    for (size_t t = 0; t < steps; t++)
        for (size_t s = 0, k; s < nseq; s += k) {
            k = run_of(g, t, s, nseq);
            b->ops->copy(b, n->v + (t * nseq + s) * rows, x->v + mirror(g, t, s) * rows, k * rows);
        }
}

static void reverse_backward(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = &g->nodes[n->in[0]];
    size_t rows = (size_t)n->rows, nseq = g->nseq ? g->nseq : 1, steps = g->ncols / nseq;
    if (!x->needs_grad || !reverse_whole(g, n))
        return;
    for (size_t t = 0; t < steps; t++)
        for (size_t s = 0, k; s < nseq; s += k) {
            k = run_of(g, t, s, nseq);
            g->bk->ops->axpy(g->bk, x->g + mirror(g, t, s) * rows, n->g + (t * nseq + s) * rows,
                             k * rows, 1.0f);
        }
}

const struct g_kind g_kind_time_reverse = {
    .name = "TimeReverse",
    .nin = 1,
    .crit = 0,
    .shape = reverse_shape,
    .forward = reverse_forward,
    .backward = reverse_backward,
    .workspace = NULL,
};
