/* CNTK's connectionist temporal classification (graph.h): LabelsToGraph, ForwardBackward
 * (the CTC criterion, SpecialPurposeNodes.h's ForwardBackwardNode with GammaCalculation's
 * doCTC and CPUMatrix's AssignCTCScore) and EditDistanceError (EvaluationNodes.h), as its
 * speech tests Speech/LSTM_CTC and LSTM_CTC_MLF use them:
 *
 *   graph = LabelsToGraph (labels)
 *   cr = ForwardBackward (graph, z, 132, delayConstraint = 3, tag = "criterion")
 *   Err = EditDistanceError (labels, z, squashInputs = true, tokensToIgnore = 132)
 *
 * The labels are one row per frame whose largest value marks the frame's token: 2 where a
 * token starts (the reader's phoneBoundaries), 1 where it goes on. An utterance's tokens
 * are those that start, in order; its CTC state sequence is blank, token, blank, token, ...,
 * blank (CNTK's, with a sentinel at each end). ForwardBackward's value is the minibatch's
 * sum over utterances of -log P(tokens | z), the log-softmax of z over the rows, by the
 * alpha-beta recursions of Graves et al. (2006) in log space (CNTK's LogAdd and LZERO);
 * with delayConstraint d >= 0 a state is dropped after frame b + d (a blank: b + d - 1),
 * b the frame where the token two states on starts (CNTK's rule, the final blank's b read
 * as 0 as CNTK reads it). Its gradient with respect to z is g (softmax (z) - gamma), gamma
 * the states' occupancies summed per token and normalized per frame; the labels get none.
 *
 * EditDistanceError: per utterance the Levenshtein distance between the labels' and z's
 * best token per frame (runs of one token merged with squashInputs, tokensToIgnore left
 * out), CNTK's penalties and tie order; the value is the distance summed, times the frames,
 * over the labels' tokens, so that the log's per-sample figure is the errors per token.
 *
 * Whole utterances only (a sequence that goes on from the previous minibatch, truncated
 * back-propagation, is a fault of the pass). They run on the host, as graph_classce.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/graph.h"

#define LZERO  (-10e10)
#define LSMALL (-0.5e10)

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static const char *name_of(const struct g_node *x)
{
    return x->name[0] ? x->name : x->kind->name;
}

/* CNTK's LogAdd (x, y): log (e^x + e^y), LZERO for what is below LSMALL. */
static double log_add(double x, double y)
{
    if (x < y) {
        double t = x;
        x = y;
        y = t;
    }
    double diff = y - x;
    if (diff < -log(-LZERO))
        return x < LSMALL ? LZERO : x;
    return x + log(1.0 + exp(diff));
}

static int per_step(struct g_node *n, struct g_node *x, struct pt_err *e)
{
    if (x->rows > 0 && x->cols == 0 && !x->seq1)
        return 0;
    return pt_err_set(e, PT_EUSER, "%s: error: %s: '%s' must be a vector per frame, got [%d x %s]",
                      n->where, n->kind->name, name_of(x), x->rows,
                      x->cols ? "fixed columns" : "sequences");
}

static int shape_graph(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = IN(g, n, 0);
    int rc = per_step(n, x, e);
    n->rows = x->rows;
    n->cols = 0;
    return rc;
}

static void forward_graph(struct nn_graph *g, struct g_node *n)
{
    memcpy(g_val(g, n), g_val(g, IN(g, n, 0)), g_cols(g, n) * (size_t)n->rows * sizeof(float));
}

static void backward_none(struct nn_graph *g, struct g_node *n)
{
    (void)g;
    (void)n;
}

/* Both operands frames of one axis and as many rows; rows kept for the workspace. */
static int shape_pair(struct nn_graph *g, struct g_node *n, const char *first, struct pt_err *e)
{
    struct g_node *a = IN(g, n, 0), *z = IN(g, n, 1);
    if (a->cols == 0)
        g_same_axis(a, z);
    int rc = per_step(n, a, e);
    if (rc == 0)
        rc = per_step(n, z, e);
    if (rc == 0 && a->rows != z->rows)
        rc = g_shape_error(n, a, z, first, e);
    n->ctc_rows = z->rows;
    n->rows = 1;
    n->cols = 1;
    n->mb_scalar = 1;
    return rc;
}

static int shape_ctc(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    if (IN(g, n, 0)->kind != &g_kind_labels_graph)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: ForwardBackward: its first operand must be LabelsToGraph "
                          "(labels), got %s",
                          n->where, name_of(IN(g, n, 0)));
    int rc = shape_pair(g, n,
                        "the graph (LabelsToGraph of the labels) and the network's output "
                        "must have as many rows",
                        e);
    if (rc == 0 && (n->ctc_blank < 0 || n->ctc_blank >= IN(g, n, 1)->rows))
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: ForwardBackward: blankTokenId %d is no row of the output "
                        "(%d rows)",
                        n->where, n->ctc_blank, IN(g, n, 1)->rows);
    return rc;
}

static int shape_edit(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    return shape_pair(g, n, "both operands must have as many rows (tokens)", e);
}

/* The row of column c's largest value (the first of equals) and that value. */
static int best(const float *c, int rows, float *value)
{
    int k = 0;
    for (int r = 1; r < rows; r++)
        if (c[r] > c[k])
            k = r;
    if (value)
        *value = c[k];
    return k;
}

/* The pass fails: its scratch could not be had. */
static void out_of_memory(struct nn_graph *g, const struct g_node *n)
{
    if (!g->fault[0])
        snprintf(g->fault, sizeof g->fault, "%s: error: %s: out of memory", n->where,
                 n->kind->name);
}

/* Whether the pass holds whole utterances (else a fault): no sequence goes on from the
 * previous pass, none begins inside another. */
static int whole(struct nn_graph *g, const struct g_node *n)
{
    static const char needs[] =
        "whole utterances, a sequence per stream (set truncated = false and frameMode = false)";
    if (g->len == NULL) { /* frames, not sequences */
        if (!g->fault[0])
            snprintf(g->fault, sizeof g->fault, "%s: error: %s needs %s", n->where, n->kind->name,
                     needs);
        return 0;
    }
    return g_whole_sequences(g, n, needs);
}

/* ------------------------------------------------------------------ ForwardBackward */

struct utt {
    int *seq, *bound; /* the states' tokens (-1: the sentinels) and frames */
    int S, T;
};

/* The CTC states of sequence s (T frames) from the labels' starting frames. */
static int states(const float *lab, int rows, size_t nseq, size_t s, int T, int blank,
                  struct utt *u)
{
    u->seq = malloc(((size_t)2 * T + 4) * sizeof *u->seq);
    u->bound = malloc(((size_t)2 * T + 4) * sizeof *u->bound);
    if (!u->seq || !u->bound)
        return -1;
    int S = 0;
    u->seq[S] = -1, u->bound[S++] = 0;
    for (int t = 0; t < T; t++) {
        float v = 0.0f;
        int k = best(lab + ((size_t)t * nseq + s) * (size_t)rows, rows, &v);
        if (v == 2.0f) {
            u->seq[S] = blank, u->bound[S++] = t;
            u->seq[S] = k, u->bound[S++] = t;
        }
    }
    u->seq[S] = blank, u->bound[S++] = T;
    u->seq[S] = -1, u->bound[S++] = T;
    u->S = S;
    u->T = T;
    return 0;
}

/* The right bound of state i (the frame where state i + 2 starts; 0 past the end). */
static int right_bound(const struct utt *u, int i)
{
    return i + 2 < u->S ? u->bound[i + 2] : 0;
}

static int dropped(const struct utt *u, int i, int t, int blank, int delay)
{
    if (delay < 0)
        return 0;
    int rb = right_bound(u, i);
    return u->seq[i] == blank ? t > rb + delay - 1 : t > rb + delay;
}

/* -log P of utterance u, lp its frames' log-softmax (T x rows); gamma (T x rows) gets the
 * tokens' normalized occupancies. */
static double ctc_utt(const struct utt *u, const double *lp, int rows, int blank, int delay,
                      double *alpha, double *beta, double *gamma)
{
    int S = u->S, T = u->T;
    for (size_t i = 0; i < (size_t)S * T; i++)
        alpha[i] = beta[i] = LZERO;
#define A(t, i)  alpha[(size_t)(t)*S + (i)]
#define B(t, i)  beta[(size_t)(t)*S + (i)]
#define LP(t, i) lp[(size_t)(t)*rows + u->seq[i]]
    for (int t = 0; t < T; t++)
        for (int i = 1; i < S - 1; i++) {
            if (t == 0) {
                if (i == 1 || i == 2)
                    A(0, i) = LP(0, i);
                continue;
            }
            double x = LZERO;
            if (i > 2 && u->seq[i] != blank && u->seq[i] != u->seq[i - 2])
                x = log_add(x, A(t - 1, i - 2));
            if (i > 1)
                x = log_add(x, A(t - 1, i - 1));
            x = log_add(x, A(t - 1, i));
            A(t, i) = x + LP(t, i);
            if (dropped(u, i, t, blank, delay))
                A(t, i) = LZERO;
        }
    for (int t = T - 1; t >= 0; t--)
        for (int i = 1; i < S - 1; i++) {
            if (t == T - 1) {
                if (i == S - 3 || i == S - 2)
                    B(t, i) = LP(t, i);
                continue;
            }
            double x = LZERO;
            if (i < S - 3 && u->seq[i] != blank && u->seq[i] != u->seq[i + 2])
                x = log_add(x, B(t + 1, i + 2));
            if (i < S - 2)
                x = log_add(x, B(t + 1, i + 1));
            x = log_add(x, B(t + 1, i));
            B(t, i) = x + LP(t, i);
            if (dropped(u, i, t, blank, delay))
                B(t, i) = LZERO;
        }
    double P = S > 3 ? log_add(B(0, 1), B(0, 2)) : B(0, 1);
    for (int t = 0; t < T; t++) {
        double *gm = gamma + (size_t)t * rows, sum = 0.0;
        for (int r = 0; r < rows; r++)
            gm[r] = LZERO;
        for (int i = 1; i < S - 1; i++)
            gm[u->seq[i]] = log_add(gm[u->seq[i]], A(t, i) + B(t, i) - LP(t, i) - P);
        for (int r = 0; r < rows; r++) {
            gm[r] = gm[r] < LZERO ? 0.0 : exp(gm[r]);
            sum += gm[r];
        }
        for (int r = 0; sum > 0.0 && r < rows; r++)
            gm[r] /= sum;
    }
#undef A
#undef B
#undef LP
    return -P;
}

/* The workspace: softmax (z) - gamma for every column of the pass (zero where nothing
 * counts), which the backward pass scales by the incoming gradient. */
static size_t ws_ctc(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)nseq;
    return (size_t)n->ctc_rows * ncols;
}

static void forward_ctc(struct nn_graph *g, struct g_node *n)
{
    struct g_node *lab = IN(g, n, 0), *z = IN(g, n, 1);
    int rows = z->rows, blank = n->ctc_blank;
    size_t cols = g_cols(g, z), nseq = g->nseq ? g->nseq : 1;
    const float *lv = g_val(g, lab), *zv = g_val(g, z);
    float *d = n->ws;
    double sum = 0.0;
    memset(d, 0, cols * (size_t)rows * sizeof *d);
    if (!whole(g, n)) {
        g_val(g, n)[0] = 0.0f;
        return;
    }
    int maxT = 0;
    for (size_t s = 0; s < nseq; s++)
        maxT = (int)g->len[s] > maxT ? (int)g->len[s] : maxT;
    size_t S = (size_t)2 * maxT + 4;
    double *lp = malloc((size_t)maxT * rows * sizeof *lp + 1);
    double *gm = malloc((size_t)maxT * rows * sizeof *gm + 1);
    double *al = malloc(S * maxT * sizeof *al + 1), *be = malloc(S * maxT * sizeof *be + 1);
    for (size_t s = 0; lp && gm && al && be && s < nseq; s++) {
        int T = (int)g->len[s];
        struct utt u = {0};
        if (T == 0)
            continue;
        if (states(lv, rows, nseq, s, T, blank, &u)) {
            free(u.seq);
            free(u.bound);
            break;
        }
        for (int t = 0; t < T; t++) { /* log-softmax of the frame */
            const float *c = zv + ((size_t)t * nseq + s) * rows;
            double top = c[best(c, rows, NULL)], acc = 0.0;
            for (int r = 0; r < rows; r++)
                acc += exp((double)c[r] - top);
            for (int r = 0; r < rows; r++)
                lp[(size_t)t * rows + r] = (double)c[r] - top - log(acc);
        }
        sum += ctc_utt(&u, lp, rows, blank, n->ctc_delay, al, be, gm);
        for (int t = 0; t < T; t++)
            for (int r = 0; r < rows; r++)
                d[((size_t)t * nseq + s) * rows + r] =
                    (float)(exp(lp[(size_t)t * rows + r]) - gm[(size_t)t * rows + r]);
        free(u.seq);
        free(u.bound);
    }
    if (!lp || !gm || !al || !be)
        out_of_memory(g, n);
    free(lp);
    free(gm);
    free(al);
    free(be);
    g_val(g, n)[0] = (float)sum;
}

static void backward_ctc(struct nn_graph *g, struct g_node *n)
{
    struct g_node *z = IN(g, n, 1);
    if (!z->needs_grad)
        return;
    size_t count = g_cols(g, z) * (size_t)z->rows;
    float up = g_grad(g, n)[0], *t = g->tmp;
    for (size_t i = 0; i < count; i++)
        t[i] = up * n->ws[i];
    g_add_grad(g, z, t, z, 1.0f);
}

/* ------------------------------------------------------------------ EditDistanceError */

static int ignored(const struct g_node *n, int k)
{
    for (int i = 0; i < n->ed_nignore; i++)
        if (n->ed_ignore[i] == k)
            return 1;
    return 0;
}

/* Sequence s's best tokens (CNTK's ExtractSampleSequence) into out; their count. */
static int tokens(const struct g_node *n, const float *v, int rows, size_t nseq, size_t s, int T,
                  int *out)
{
    int m = 0, last = best(v + s * (size_t)rows, rows, NULL);
    if (!ignored(n, last))
        out[m++] = last;
    for (int t = 1; t < T; t++) {
        int k = best(v + ((size_t)t * nseq + s) * rows, rows, NULL);
        if (n->ed_squash && k == last)
            continue;
        last = k;
        if (!ignored(n, k))
            out[m++] = k;
    }
    return m;
}

/* CNTK's edit distance: insertions + deletions + substitutions of its cheapest alignment,
 * ties broken as CNTK breaks them (substitution, then deletion, then insertion). */
static double distance(const struct g_node *n, const int *a, int na, const int *b, int nb,
                       float *grid, float *cnt)
{
    const float sp = n->ed_pen[0], dp = n->ed_pen[1], ip = n->ed_pen[2];
    size_t w = (size_t)nb + 1;
#define G(i, j) grid[(size_t)(i)*w + (j)]
#define C(i, j) cnt[(size_t)(i)*w + (j)]
    for (int i = 0; i <= na; i++)
        G(i, 0) = (float)i * dp, C(i, 0) = (float)i;
    for (int j = 0; j <= nb; j++)
        G(0, j) = (float)j * ip, C(0, j) = (float)j;
    for (int i = 1; i <= na; i++)
        for (int j = 1; j <= nb; j++) {
            if (a[i - 1] == b[j - 1]) {
                G(i, j) = G(i - 1, j - 1), C(i, j) = C(i - 1, j - 1);
                continue;
            }
            float del = G(i - 1, j) + dp, ins = G(i, j - 1) + ip, sub = G(i - 1, j - 1) + sp;
            if (sub <= del && sub <= ins)
                G(i, j) = sub, C(i, j) = C(i - 1, j - 1) + 1.0f;
            else if (del < ins)
                G(i, j) = del, C(i, j) = C(i - 1, j) + 1.0f;
            else
                G(i, j) = ins, C(i, j) = C(i, j - 1) + 1.0f;
        }
    double r = C(na, nb);
#undef G
#undef C
    return r;
}

static void forward_edit(struct nn_graph *g, struct g_node *n)
{
    struct g_node *lab = IN(g, n, 0), *z = IN(g, n, 1);
    int rows = z->rows;
    size_t nseq = g->nseq ? g->nseq : 1;
    const float *lv = g_val(g, lab), *zv = g_val(g, z);
    double wrong = 0.0, frames = 0.0, ref = 0.0;
    g_val(g, n)[0] = 0.0f;
    if (!whole(g, n))
        return;
    int maxT = 0;
    for (size_t s = 0; s < nseq; s++)
        maxT = (int)g->len[s] > maxT ? (int)g->len[s] : maxT;
    int *a = malloc(((size_t)maxT + 1) * sizeof *a), *b = malloc(((size_t)maxT + 1) * sizeof *b);
    size_t cells = ((size_t)maxT + 1) * ((size_t)maxT + 1);
    float *grid = malloc(cells * sizeof *grid), *cnt = malloc(cells * sizeof *cnt);
    for (size_t s = 0; a && b && grid && cnt && s < nseq; s++) {
        int T = (int)g->len[s];
        if (T == 0)
            continue;
        int na = tokens(n, lv, rows, nseq, s, T, a), nb = tokens(n, zv, rows, nseq, s, T, b);
        frames += T;
        ref += na;
        wrong += distance(n, a, na, b, nb, grid, cnt);
    }
    if (!a || !b || !grid || !cnt)
        out_of_memory(g, n);
    free(a);
    free(b);
    free(grid);
    free(cnt);
    g_val(g, n)[0] = (float)(ref > 0 ? wrong * frames / ref : wrong * frames);
}

const struct g_kind g_kind_labels_graph = {.name = "LabelsToGraph",
                                           .nin = 1,
                                           .shape = shape_graph,
                                           .forward = forward_graph,
                                           .backward = backward_none};
/* z's whole gradient written at once (g_add_grad) */
const struct g_kind g_kind_ctc = {.name = "ForwardBackward",
                                  .nin = 2,
                                  .shape = shape_ctc,
                                  .forward = forward_ctc,
                                  .backward = backward_ctc,
                                  .workspace = ws_ctc,
                                  .overwrites = 2};
const struct g_kind g_kind_edit_distance = {.name = "EditDistanceError",
                                            .nin = 2,
                                            .shape = shape_edit,
                                            .forward = forward_edit,
                                            .backward = backward_none};
