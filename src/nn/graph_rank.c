/* The ranking criteria of CNTK's IRMetric test (graph.h): LambdaRank (gain, score, groupId),
 * a training criterion, and NDCG1Eval (gain, score, groupId), an evaluation one. Each reads
 * one value per sample of its three inputs: a document's relevance gain, its predicted
 * score, and the id of its query; the documents of a query are consecutive in the
 * minibatch, ordered by gain, highest first (as CNTK requires of the data). Each is one
 * value of the minibatch (mb_scalar), which the network's criterion sums, as CNTK's:
 *   LambdaRank: (1 - mean over queries of NDCG) * 100 * samples, NDCG = DCG / ideal DCG,
 *     DCG = sum_i gain_i / ln (2 + rank_i), rank by score (ties: the lower gain first), the
 *     ideal by the given order (a query of ideal 0 counts as NDCG 0);
 *   NDCG1Eval: mean over queries of NDCG@1 * 100 * samples (the top-scored document's
 *     gain over the first's).
 * LambdaRank's gradient (Burges' "From RankNet to LambdaRank to LambdaMART"): for each
 * pair i before j in a query with gain_i above the query's least gain and gain_i != gain_j,
 * lambda = -1 / (1 + exp (s_i - s_j)) |delta NDCG_ij|, |delta NDCG_ij| = |(g_i - g_j)
 * (d_i - d_j) / (d_i d_j)| / ideal with d = ln (2 + rank); dL/ds_i += lambda, dL/ds_j -=
 * lambda, times the criterion's own gradient. (CNTK's node pairs each lambda with the
 * score difference of the pair that many pairs on, counting pairs of equal gain in one
 * place and not the other; partrain pairs each with its own.)
 *
 * They run on the host, over the backend's own memory: the CPU backend's (a GPU refuses
 * them when the network is built: bs_net.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static int shape_rank(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    static const char *const what[3] = {"gain", "score", "query id"};
    for (int k = 0; k < 3; k++) {
        const struct g_node *x = IN(g, n, k);
        if (x->rows != 1 || x->cols != 0)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: %s: its %s operand must be one value per sample, got "
                              "%d x %s",
                              n->where, n->kind->name, what[k], x->rows,
                              x->cols ? "fixed columns" : "samples");
    }
    n->rows = 1;
    n->cols = 1;
    n->mb_scalar = 1;
    return 0;
}

/* A document of the pass: its column, its place in its query's given order and by score. */
struct doc {
    size_t col;
    int rank0, rank;
    float score, gain;
};

/* CNTK's order: the higher score first; equal scores (or NaN), the lower gain first. */
static int by_score(const void *pa, const void *pb)
{
    const struct doc *a = pa, *b = pb;
    if (a->score == b->score || isnan(a->score) || isnan(b->score))
        return (a->gain > b->gain) - (a->gain < b->gain);
    return a->score > b->score ? -1 : 1;
}

/* The pass's documents in column order, ranked by score within each query (*nq queries,
 * their first documents in starts[0 .. *nq], starts[*nq] = count); NULL when out of
 * memory. Padding columns (mask 0) are not documents. */
static struct doc *rank_docs(struct nn_graph *g, struct g_node *n, size_t *count, size_t **starts,
                             size_t *nq)
{
    size_t cols = g_cols(g, IN(g, n, 0)), m = 0, q = 0;
    const float *gain = g_val(g, IN(g, n, 0)), *score = g_val(g, IN(g, n, 1)),
                *id = g_val(g, IN(g, n, 2)), *mask = g->crit_mask;
    struct doc *d = malloc((cols ? cols : 1) * sizeof *d),
               *sorted = malloc((cols ? cols : 1) * sizeof *d);
    size_t *st = malloc((cols + 1) * sizeof *st);
    if (!d || !sorted || !st) {
        free(d);
        free(sorted);
        free(st);
        return NULL;
    }
    for (size_t j = 0; j < cols; j++) {
        if (mask && mask[j] == 0.0f)
            continue;
        if (m == 0 || (int)id[j] != (int)id[d[m - 1].col])
            st[q++] = m;
        d[m] = (struct doc){
            .col = j, .rank0 = (int)(m - st[q - 1]), .score = score[j], .gain = gain[j]};
        m++;
    }
    st[q] = m;
    for (size_t k = 0; k < q; k++) { /* each query's documents by score */
        size_t len = st[k + 1] - st[k];
        memcpy(sorted, d + st[k], len * sizeof *d);
        qsort(sorted, len, sizeof *sorted, by_score);
        for (size_t r = 0; r < len; r++)
            d[st[k] + (size_t)sorted[r].rank0].rank = (int)r;
    }
    free(sorted);
    *count = m;
    *starts = st;
    *nq = q;
    return d;
}

/* The ideal DCG of query [a, b): its given order. */
static double ideal_dcg(const struct doc *d, size_t a, size_t b)
{
    double s = 0.0;
    for (size_t i = a; i < b; i++)
        s += d[i].gain / log(2.0 + d[i].rank0);
    return s;
}

static void forward_rank(struct nn_graph *g, struct g_node *n)
{
    size_t m = 0, q = 0, *st = NULL;
    struct doc *d = rank_docs(g, n, &m, &st, &q);
    double sum = 0.0;
    int ndcg1 = !strcmp(n->kind->name, "NDCG1Eval");
    for (size_t k = 0; d && k < q; k++) {
        double ideal = ndcg1 ? d[st[k]].gain / log(2.0) : ideal_dcg(d, st[k], st[k + 1]), dcg = 0;
        if (ideal == 0.0)
            continue;
        for (size_t i = st[k]; i < st[k + 1]; i++)
            if (!ndcg1)
                dcg += d[i].gain / log(2.0 + d[i].rank);
            else if (d[i].rank == 0)
                dcg = d[i].gain / log(2.0);
        sum += dcg / ideal;
    }
    double mean = q ? sum / (double)q : 0.0;
    g_val(g, n)[0] = (float)((ndcg1 ? mean : 1.0 - mean) * 100.0 * (double)m);
    free(d);
    free(st);
}

static void backward_lambda_rank(struct nn_graph *g, struct g_node *n)
{
    struct g_node *s = IN(g, n, 1);
    if (!s->needs_grad)
        return;
    size_t m = 0, q = 0, *st = NULL, cols = g_cols(g, s);
    struct doc *d = rank_docs(g, n, &m, &st, &q);
    float *grad = g->tmp, up = g_grad(g, n)[0];
    memset(grad, 0, cols * sizeof *grad);
    for (size_t k = 0; d && k < q; k++) {
        double ideal = ideal_dcg(d, st[k], st[k + 1]), least = d[st[k + 1] - 1].gain;
        for (size_t i = st[k]; ideal != 0.0 && i < st[k + 1]; i++) {
            if (d[i].gain <= least)
                continue;
            double di = log(2.0 + d[i].rank);
            for (size_t j = i + 1; j < st[k + 1]; j++) {
                if (fabs(d[i].gain - d[j].gain) < 1e-7)
                    continue;
                double dj = log(2.0 + d[j].rank);
                double delta = fabs((d[i].gain - d[j].gain) * (di - dj) / (di * dj) / ideal);
                double lambda = -delta / (1.0 + exp((double)d[i].score - d[j].score));
                grad[d[i].col] += (float)(lambda * up);
                grad[d[j].col] -= (float)(lambda * up);
            }
        }
    }
    g_add_grad(g, s, grad, s, 1.0f);
    free(d);
    free(st);
}

static void backward_none(struct nn_graph *g, struct g_node *n)
{
    (void)g;
    (void)n;
}

const struct g_kind g_kind_lambda_rank = {.name = "LambdaRank",
                                          .nin = 3,
                                          .shape = shape_rank,
                                          .forward = forward_rank,
                                          .backward = backward_lambda_rank};

const struct g_kind g_kind_ndcg1 = {.name = "NDCG1Eval",
                                    .nin = 3,
                                    .shape = shape_rank,
                                    .forward = forward_rank,
                                    .backward = backward_none};
