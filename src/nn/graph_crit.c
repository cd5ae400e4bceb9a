/* The graph's criteria (graph.h): the kinds that end a network (CrossEntropyWithSoftmax and
 * the others in graph_nodes.c's table, a node of the network's own as its criterion), and
 * a criterion's value as an operand of other nodes.
 *
 * A criterion is a sum over the samples of the pass (SPEC 5). The criteria that end the
 * network are run by graph.c after every other node, into the pass's statistics. A
 * criterion that another node reads (InceptionV3's `ce = auxWeight .* ceAux + ceZ`) or
 * SumElements is a node of one value, [1 x 1], as in CNTK, where a criterion is the
 * minibatch's sum: g_kind_crit_values. Whatever is computed from such a value alone is one
 * value per pass too (g_node.mb_scalar), and may be the network's criterion. */
#include <stdio.h>
#include <string.h>

#include "nn/graph.h"

static struct g_node *IN(struct nn_graph *g, struct g_node *n, int i)
{
    return &g->nodes[n->in[i]];
}

static void run_none(struct nn_graph *g, struct g_node *n)
{
    (void)g;
    (void)n;
}

int g_shape_crit(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *y = IN(g, n, 0), *z = IN(g, n, 1);
    if (y->rows <= 0 || y->rows != z->rows || y->cols != 0 || z->cols != 0)
        return g_shape_error(n, y, z,
                             "a criterion compares two per-sample operands of equal dimension "
                             "(labels first)",
                             e);
    if (!g_same_axis(y, z))
        return g_axis_error(n, y, z, e);
    n->rows = 1;
    n->cols = 1;
    return 0;
}

/* A network's own node as its criterion (criterionNodes = (rmse), rmse computed by the
 * network): one value per sample, summed over the samples, or one value of the whole pass
 * (mb_scalar) as it is; in[0] and in[1] are that node. */
static int shape_own_crit(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *z = IN(g, n, 1);
    const char *name = z->name[0] ? z->name : z->kind->name;
    if (z->cols != 0 && !(z->mb_scalar && z->cols == 1 && z->rows == 1))
        return pt_err_set(e, PT_EUSER,
                          "%s: error: '%s' (%s) is used as a criterion, which is one value per "
                          "sample or one for the minibatch; it is %d x %d, computed from %s",
                          n->where, name, z->kind->name, z->rows, z->cols,
                          z->mb_scalar ? "a criterion's value" : "parameters alone");
    if (z->rows != 1)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: '%s' (%s) is used as a criterion, which is one value per "
                          "sample; it has %d values per sample (ReduceSum makes one of a vector)",
                          n->where, name, z->kind->name, z->rows);
    n->rows = 1;
    n->cols = 1;
    return 0;
}

const struct g_kind g_kind_own_crit = {.name = "Criterion",
                                       .nin = 2,
                                       .crit = BK_CRIT_SUM + 1,
                                       .shape = shape_own_crit,
                                       .forward = run_none,
                                       .backward = run_none};

/* The output of a network that is only evaluated, summed (no report shows it). */
static int shape_no_crit(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    (void)g;
    (void)e;
    n->rows = 1;
    n->cols = 1;
    return 0;
}

const struct g_kind g_kind_no_crit = {.name = "Criterion",
                                      .nin = 2,
                                      .crit = BK_CRIT_SUM + 1,
                                      .shape = shape_no_crit,
                                      .forward = run_none,
                                      .backward = run_none};

/* ------------------------------------------------------------------ a criterion's value */

/* The sum of the criterion over the pass's counted columns, into one [1 x 1]: labels,
 * prediction (SumElements: its operand twice); the prediction may also be a fixed block
 * (SumElements (W .* W)). */
static int shape_crit_value(struct nn_graph *g, struct g_node *n, struct pt_err *e)
{
    struct g_node *z = IN(g, n, 1);
    if (n->crit_value - 1 != BK_CRIT_SUM)
        return g_shape_crit(g, n, e);
    if (z->rows <= 0)
        return pt_err_set(e, PT_EUSER, "%s: error: %s: its operand's dimensions are not known",
                          n->where, n->kind->name);
    n->rows = 1;
    n->cols = 1;
    return 0;
}

static struct bk_crit crit_of(struct nn_graph *g, struct g_node *n, float *grad)
{
    struct g_node *y = IN(g, n, 0), *z = IN(g, n, 1);
    return (struct bk_crit){.rows = z->rows,
                            .cols = g_cols(g, z),
                            .z = g_val(g, z),
                            .y = g_val(g, y),
                            .mask = z->cols   ? NULL
                                    : z->seq1 ? g->seq_mask_on
                                              : g->crit_mask,
                            .grad = grad,
                            .sum = n->ws,
                            .top_n = n->top_n};
}

static void forward_crit_value(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct bk_crit c = crit_of(g, n, NULL);
    b->ops->criterion(b, (enum bk_crit_kind)(n->crit_value - 1), &c);
    b->ops->ewise(b, BK_EW_ADD, g_val(g, n), n->ws, n->ws + 1, 1, 1, 1); /* the double's halves */
}

/* dL/dz = dL/dn (one value) times the criterion's own gradient. */
static void backward_crit_value(struct nn_graph *g, struct g_node *n)
{
    struct backend *b = g->bk;
    struct g_node *z = IN(g, n, 1);
    enum bk_crit_kind kind = (enum bk_crit_kind)(n->crit_value - 1);
    if (!z->needs_grad || kind == BK_CRIT_CLASS_ERR)
        return;
    struct bk_crit c = crit_of(g, n, g->tmp);
    b->ops->criterion(b, kind, &c);
    size_t k = (size_t)z->rows * c.cols;
    b->ops->ewise(b, BK_EW_MUL, g->tmp, g->tmp, g_grad(g, n), 1, k, 1);
    g_add_grad(g, z, g->tmp, z, 1.0f);
}

static size_t ws_crit_value(const struct g_node *n, size_t ncols, size_t nseq)
{
    (void)n;
    (void)ncols;
    (void)nseq;
    return 2; /* the criterion's sum, as two floats */
}

#define VALUE_KIND(nm)                                                                             \
    {                                                                                              \
        .name = nm, .nin = 2, .crit = 0, .shape = shape_crit_value, .forward = forward_crit_value, \
        .backward = backward_crit_value, .workspace = ws_crit_value, .overwrites = 2               \
    }

const struct g_kind g_kind_crit_values[BK_CRIT_COUNT] = {
    [BK_CRIT_CE_SOFTMAX] = VALUE_KIND("CrossEntropyWithSoftmax"),
    [BK_CRIT_SQUARE_ERR] = VALUE_KIND("SquareError"),
    [BK_CRIT_CLASS_ERR] = VALUE_KIND("ClassificationError"),
    [BK_CRIT_LOGISTIC] = VALUE_KIND("Logistic"),
    [BK_CRIT_SUM] = VALUE_KIND("SumElements"),
};

void g_crit_as_value(struct nn_graph *g, int first)
{
    for (int i = first; i < g->n; i++) {
        const struct g_node *n = &g->nodes[i];
        for (int k = 0; !n->dead && !n->kind->crit && k < n->kind->nin; k++) {
            struct g_node *c = &g->nodes[n->in[k]];
            if (!c->kind->crit || c->kind == &g_kind_own_crit || c->kind == &g_kind_no_crit)
                continue;
            c->crit_value = c->kind->crit;
            c->kind = &g_kind_crit_values[c->crit_value - 1];
        }
    }
}

int g_labels(const struct nn_graph *g)
{
    const struct g_node *c = &g->nodes[g->crit];
    if (c->kind != &g_kind_own_crit && c->kind != &g_kind_no_crit)
        return c->in[0];
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].is_input && !g->nodes[i].dead && g->nodes[i].tag == G_TAG_LABEL)
            return i;
    return -1;
}
