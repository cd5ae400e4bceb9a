/* The BatchNormalization node (graph.h): inputs x, scale, bias, running mean, running
 * variance and running count, as CNTK's BatchNormalizationNode. Training passes normalize
 * with the minibatch's statistics and move the running ones towards them; evaluation uses
 * the running ones. The running statistics are states (g_node.state): no learner changes
 * them, and a training pass writes them in place. CNTK's rules for the weight of the new
 * statistics (ComputeExpAvgFactor): 1 for the first minibatch (count 0); then
 * 1 - exp(-n / T) for a time constant T > 0, 1 for T = 0, 0 for T = inf (frozen), and
 * n / (n + count) for T < 0 (every sample alike); the count grows by n samples a training
 * pass. The arithmetic is the backend's (bn_forward, bn_backward). */
#include <math.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

/* The maps and each map's cells of x. */
static void maps_of(const struct g_node *n, const struct g_node *x, int *maps, int *spatial)
{
    *maps = n->bn_spatial ? x->tdims[2] : x->rows;
    *spatial = n->bn_spatial ? x->rows / *maps : 1;
}

static int shape_bn(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *x = IN(g, n, 0);
    if (x->rows <= 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: BatchNormalization: the input's dimension is not known",
                          n->where);
    if (x->cols != 0)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: BatchNormalization: the input must be data (a column per "
                          "sample), not a parameter or constant",
                          n->where);
    if (n->bn_spatial && x->tensor_rank < 2)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: BatchNormalization: spatial normalization needs an image "
                          "input (W:H:C), got a vector of %d values",
                          n->where, x->rows);
    int maps, spatial;
    maps_of(n, x, &maps, &spatial);
    static const char *const what[] = {
        "", "scale", "bias", "running mean", "running variance", "running count"};
    for (int k = 1; k < 6; k++) {
        struct g_node *p = IN(g, n, k);
        int want = k == 5 ? 1 : maps;
        if (!p->learnable)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: BatchNormalization: the %s must be a parameter", n->where,
                              what[k]);
        if (k >= 3 && !p->state)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: BatchNormalization: the %s must be a parameter with "
                              "learningRateMultiplier = 0 (it is not learned)",
                              n->where, what[k]);
        if (p->rows == 0)
            p->rows = want;
        if (p->cols == 0)
            p->cols = 1;
        if (p->rows != want || p->cols != 1)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: BatchNormalization: the %s is %d x %d, expected %d x 1 "
                              "(%s)",
                              n->where, what[k], p->rows, p->cols, want,
                              k == 5          ? "one count"
                              : n->bn_spatial ? "one per map of the image"
                                              : "one per row of the input");
    }
    n->rows = x->rows;
    n->cols = 0;
    n->seq1 = x->seq1;
    n->tensor_rank = x->tensor_rank;
    for (int i = 0; i < 3; i++)
        n->tdims[i] = x->tdims[i];
    return 0;
}

/* The pass's padding columns (sequences of unequal length), or NULL: they are left out of
 * the statistics and the sample count (the graph keeps their values and gradients 0). */
static const float *pad_mask(const struct nn_graph *g, const struct g_node *n)
{
    return g->crit_mask && n->cols == 0 && !n->seq1 ? g->crit_mask + g->c0 : NULL;
}

/* The weight of this minibatch's statistics in the running ones (count: samples so far). */
static double new_weight(const struct g_node *n, double samples, double count)
{
    if (n->bn_tc < 0)
        return samples / (samples + count);
    if (count == 0)
        return 1.0;
    if (isinf(n->bn_tc))
        return 0.0;
    return n->bn_tc > 0 ? -expm1(-samples / n->bn_tc) : 1.0;
}

static void forward_bn(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 0);
    int maps, spatial;
    maps_of(n, x, &maps, &spatial);
    size_t cols = g_cols(g, n), real = cols;
    const float *mask = pad_mask(g, n); /* host memory: the backend is the CPU's */
    for (size_t j = 0; mask && j < cols; j++)
        real -= mask[j] == 0.0f;
    float *count = g_val(g, IN(g, n, 5));
    double f = g->train && real ? new_weight(n, (double)real, *count) : 0.0;
    g->bk->ops->bn_forward(g->bk, g->train, g_val(g, n), g_val(g, x), maps, spatial, cols, mask,
                           g_val(g, IN(g, n, 1)), g_val(g, IN(g, n, 2)), g_val(g, IN(g, n, 3)),
                           g_val(g, IN(g, n, 4)), f, n->bn_eps, n->ws, n->ws + maps);
    if (g->train)
        *count += (float)real;
}

static void backward_bn(struct nn_graph *g, struct g_node *n)
{
    struct g_node *x = IN(g, n, 0), *scale = IN(g, n, 1), *bias = IN(g, n, 2);
    int maps, spatial;
    maps_of(n, x, &maps, &spatial);
    float *spare = n->ws + 2 * (size_t)maps; /* the gradients nobody wants */
    g->bk->ops->bn_backward(g->bk, g_grad(g, n), g_val(g, x), maps, spatial, g_cols(g, n),
                            pad_mask(g, n), g_val(g, scale), n->ws, n->ws + maps,
                            x->needs_grad ? g_grad(g, x) : NULL,
                            scale->needs_grad ? g_grad(g, scale) : spare,
                            bias->needs_grad ? g_grad(g, bias) : spare + maps);
}

/* mean and 1 / stddev per map from the forward pass, and room for unwanted gradients */
static size_t ws_bn(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)ncols;
    (void)nseq;
    return 4 * (size_t)(n->bn_spatial ? n->tdims[2] : n->rows);
}

const struct g_kind g_kind_bn = {
    .name = "BatchNormalization",
    .nin = 6,
    .crit = 0,
    .shape = shape_bn,
    .forward = forward_bn,
    .backward = backward_bn,
    .workspace = ws_bn,
    .overwrites = 0,
};
