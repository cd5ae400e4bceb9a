/* A network's topology in Graphviz's dot language, as CNTK's action=plot writes it
 * (ComputationNetwork::DescribeNetworkUsingDot): the special nodes by their styles
 * (parameters, features, labels, the criterion, the precomputed statistics, PastValue,
 * FutureValue), a label per node ("NAME [SHAPE]\nOPERATION", in name order without
 * case), the features as the source rank and the criterion, outputs and evaluation nodes
 * as the sink rank, then one arc per input ("INPUT" -> "NODE") in CNTK's order: a walk
 * from the criterion, then the evaluation and output nodes, each node's inputs listed
 * before the walk goes on from its last one. Every write of CNTK's text stream puts a
 * space first, and so does this one, so the file is CNTK's byte for byte.
 *
 * A SimpleNetworkBuilder network has CNTK's node names (SimpleNetworkBuilder.cpp's
 * feed-forward builder: features, MeanOfFeatures, W0, W0*features, W0*features+B0, H1, ...,
 * HLast, the criteria, Prior, LogOfPrior, ScaledLogLikelihood, PosteriorProb) and shapes;
 * a BrainScript or NDL one its nodes as written (before partrain fuses layers). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nn/graph.h"
#include "nn/nn_internal.h"

enum dot_cat { CAT_NORMAL, CAT_PARAM, CAT_FEATURE, CAT_LABEL, CAT_PRE, CAT_PAST, CAT_FUTURE };

struct dot_node {
    char name[96];
    char shape[48];
    const char *op;
    enum dot_cat cat;
    int in[G_MAX_IN], nin;
};

#define DOT_MAX_GROUP 16

struct dot {
    struct dot_node *v;
    int n, cap;
    int crit[DOT_MAX_GROUP], ncrit, eval[DOT_MAX_GROUP], neval, out[DOT_MAX_GROUP], nout;
    int feat[DOT_MAX_GROUP], nfeat, lab[DOT_MAX_GROUP], nlab;
};

static int add(struct dot *d, const char *name, const char *shape, const char *op, enum dot_cat cat,
               const int *in, int nin)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        struct dot_node *v = realloc(d->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        d->v = v;
        d->cap = cap;
    }
    struct dot_node *x = &d->v[d->n];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    snprintf(x->shape, sizeof x->shape, "%s", shape);
    x->op = op;
    x->cat = cat;
    for (int k = 0; k < nin && k < G_MAX_IN; k++)
        x->in[x->nin++] = in[k];
    return d->n++;
}

static void group(int *g, int *n, int node)
{
    if (node >= 0 && *n < DOT_MAX_GROUP)
        g[(*n)++] = node;
}

/* ------------------------------------------------------------------ SimpleNetworkBuilder */

static const char *act_op(enum bk_act a)
{
    return a == BK_ACT_TANH ? "Tanh" : a == BK_ACT_RELU ? "RectifiedLinear" : "Sigmoid";
}

/* CNTK's feed-forward SimpleNetworkBuilder network (BuildFFDNNFromDescription). */
static int from_simple(const struct nn_config *c, struct dot *d)
{
    char a[64], b[96], s[48];
    int L = c->nsizes - 2, x, w, bias, r = 0, ok = 1;
    snprintf(s, sizeof s, "%d x *", c->sizes[0]);
    x = add(d, "features", s, "InputValue", CAT_FEATURE, NULL, 0);
    group(d->feat, &d->nfeat, x);
    if (c->mean_var_norm) {
        snprintf(s, sizeof s, "%d", c->sizes[0]);
        int m = add(d, "MeanOfFeatures", s, "Mean", CAT_PRE, &x, 1);
        int v = add(d, "InvStdOfFeatures", s, "InvStdDev", CAT_PRE, &x, 1);
        int in[3] = {x, m, v};
        snprintf(s, sizeof s, "%d x *", c->sizes[0]);
        x = add(d, "MVNormalizedFeatures", s, "PerDimMeanVarNormalization", CAT_NORMAL, in, 3);
        ok = m >= 0 && v >= 0;
    }
    /* layer i: W<i> [out x in], B<i> [out x 1], Times then Plus, then the activation
     * (H<i+1>); the Times of layer 0 is [out x *], of the others [out x 1 x *] */
    for (int i = 0; ok && x >= 0 && i <= L; i++) {
        int rows = c->sizes[i + 1], cols = c->sizes[i];
        char wn[16], bn[16], hn[16], pname[24];
        snprintf(wn, sizeof wn, "W%d", i);
        snprintf(bn, sizeof bn, "B%d", i);
        snprintf(hn, sizeof hn, "H%d", i + 1);
        if (i == L) /* CNTK names the output layer's product W<L>*H<L-1> (W2*H1, W0*H-1) */
            snprintf(pname, sizeof pname, "H%d", L - 1);
        else if (i == 0)
            snprintf(pname, sizeof pname, "features");
        else
            snprintf(pname, sizeof pname, "H%d", i);
        snprintf(s, sizeof s, "%d x %d", rows, cols);
        w = add(d, wn, s, "LearnableParameter", CAT_PARAM, NULL, 0);
        snprintf(s, sizeof s, "%d x 1", rows);
        bias = add(d, bn, s, "LearnableParameter", CAT_PARAM, NULL, 0);
        snprintf(a, sizeof a, "%s*%s", wn, pname);
        snprintf(s, sizeof s, i == 0 ? "%d x *" : "%d x 1 x *", rows);
        int in[2] = {w, x};
        int t = add(d, a, s, "Times", CAT_NORMAL, in, 2);
        snprintf(b, sizeof b, "%s+%s", a, bn);
        snprintf(s, sizeof s, "%d x 1 x *", rows);
        int in2[2] = {t, bias};
        x = add(d, i == L ? "HLast" : b, s, "Plus", CAT_NORMAL, in2, 2);
        if (i < L)
            x = add(d, hn, s, act_op(c->acts[i]), CAT_NORMAL, &x, 1);
        if (i < L && c->dropout && x >= 0) { /* addDropoutNodes: DropH<i+1> */
            snprintf(a, sizeof a, "Drop%s", hn);
            x = add(d, a, s, "Dropout", CAT_NORMAL, &x, 1);
        }
        ok = w >= 0 && bias >= 0 && t >= 0;
    }
    if (!ok || x < 0)
        return -1;
    int out = c->sizes[L + 1], hlast = x;
    snprintf(s, sizeof s, "%d x *", out);
    int lab = add(d, "labels", s, "InputValue", CAT_LABEL, NULL, 0);
    group(d->lab, &d->nlab, lab);
    int in[2] = {lab, hlast};
    const char *top = nn_crit_op(c->train_crit), *eop = nn_crit_op(c->eval_crit);
    if (!top || !eop)
        return -2;
    int crit = add(d, top, "1", top, CAT_NORMAL, in, 2);
    group(d->crit, &d->ncrit, crit);
    int eval = crit;
    if (c->eval_crit != c->train_crit) { /* CNTK names only ClassificationError's Eval... */
        snprintf(a, sizeof a, "%s%s", c->eval_crit == BK_CRIT_CLASS_ERR ? "Eval" : "", eop);
        eval = add(d, a, "1", eop, CAT_NORMAL, in, 2);
    }
    group(d->eval, &d->neval, eval);
    if (c->need_prior) {
        snprintf(s, sizeof s, "%d", out);
        int p = add(d, "Prior", s, "Mean", CAT_PRE, &lab, 1);
        int lp = add(d, "LogOfPrior", s, "Log", CAT_NORMAL, &p, 1);
        int in3[2] = {hlast, lp};
        snprintf(s, sizeof s, "%d x 1 x *", out);
        group(d->out, &d->nout, add(d, "ScaledLogLikelihood", s, "Minus", CAT_NORMAL, in3, 2));
    } else {
        group(d->out, &d->nout, hlast);
    }
    snprintf(s, sizeof s, "%d x 1 x *", out);
    r = add(d, "PosteriorProb", s, "Softmax", CAT_NORMAL, &hlast, 1);
    return r < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ a graph */

static const char *graph_op(const struct g_node *n)
{
    const char *k = n->src_kind->name;
    if (n->is_input)
        return "InputValue";
    if (n->learnable || n->is_const)
        return "LearnableParameter";
    return k;
}

/* Node i's inputs as CNTK has them into x: a helper input stands for its own inputs
 * (CNTK's Splice of n inputs and NDL's PerDimMeanVarNormalization are one node each). */
static void inputs_of(const struct nn_graph *g, const int *map, int i, struct dot_node *x,
                      int depth)
{
    const struct g_node *n = &g->nodes[i];
    for (int k = 0; k < n->src_kind->nin && k < G_MAX_IN; k++) {
        int j = n->src_in[k];
        if (j < 0)
            continue;
        if (g->nodes[j].helper && !g->nodes[j].unreached && depth < 64)
            inputs_of(g, map, j, x, depth + 1);
        else if (map[j] >= 0 && x->nin < G_MAX_IN)
            x->in[x->nin++] = map[j];
    }
}

/* The graph's nodes as written (src_kind, src_in: before fusion), those a root reaches. */
static int from_graph(const struct nn_graph *g, struct dot *d)
{
    int *map = malloc((size_t)(g->n ? g->n : 1) * sizeof *map);
    if (!map)
        return -1;
    for (int i = 0; i < g->n; i++) {
        const struct g_node *n = &g->nodes[i];
        int own = n->kind == &g_kind_own_crit || n->kind == &g_kind_no_crit;
        map[i] = -1;
        if (n->unreached || n->helper || own)
            continue;
        char name[96], s[48];
        snprintf(name, sizeof name, "%s", n->name[0] ? n->name : n->src_kind->name);
        if (!n->name[0])
            snprintf(name, sizeof name, "%s%d", n->src_kind->name, i);
        if (n->src_kind->crit || n->mb_scalar)
            snprintf(s, sizeof s, "1");
        else if (n->cols == 0)
            snprintf(s, sizeof s, "%d x *", n->rows);
        else
            snprintf(s, sizeof s, "%d x %d", n->rows, n->cols);
        const char *k = n->src_kind->name;
        enum dot_cat cat = (n->learnable || n->is_const)                             ? CAT_PARAM
                           : n->is_input && n->tag == G_TAG_LABEL                    ? CAT_LABEL
                           : n->is_input                                             ? CAT_FEATURE
                           : !strcmp(k, "Mean") || !strcmp(k, "InvStdDev")           ? CAT_PRE
                           : n->src_kind->shape == g_kind_past.shape && n->delay > 0 ? CAT_PAST
                           : n->src_kind->shape == g_kind_past.shape                 ? CAT_FUTURE
                                                                                     : CAT_NORMAL;
        if ((map[i] = add(d, name, s, graph_op(n), cat, NULL, 0)) < 0) {
            free(map);
            return -1;
        }
    }
    for (int i = 0; i < g->n; i++) { /* the inputs, now that every node has its index */
        const struct g_node *n = &g->nodes[i];
        struct dot_node *x = map[i] >= 0 ? &d->v[map[i]] : NULL;
        if (x)
            inputs_of(g, map, i, x, 0);
        if (x && n->is_input)
            group(x->cat == CAT_LABEL ? d->lab : d->feat,
                  x->cat == CAT_LABEL ? &d->nlab : &d->nfeat, map[i]);
    }
    /* a criterion of the network's own stands for its node */
#define ROOT(i)                                                                                    \
    ((i) < 0                                ? -1                                                   \
     : map[i] >= 0                          ? map[i]                                               \
     : g->nodes[i].kind == &g_kind_own_crit ? map[g->nodes[i].in[1]]                               \
                                            : -1)
    group(d->crit, &d->ncrit, ROOT(g->crit));
    group(d->eval, &d->neval, ROOT(g->eval));
    for (int k = 0; k < g->n_eval_more; k++)
        group(d->eval, &d->neval, ROOT(g->eval_more[k]));
    group(d->out, &d->nout, ROOT(g->out));
#undef ROOT
    free(map);
    return 0;
}

/* ------------------------------------------------------------------ the text */

static int by_name(const void *a, const void *b)
{
    const struct dot_node *const *x = a, *const *y = b;
    return strcasecmp((*x)->name, (*y)->name);
}

/* CNTK's text stream: a space before every piece written. */
static void put(FILE *f, const char *s)
{
    fputc(' ', f);
    fputs(s, f);
}

static void special(FILE *f, const struct dot *d, struct dot_node **sorted, enum dot_cat cat,
                    const char *style)
{
    int any = 0;
    for (int i = 0; i < d->n; i++)
        any |= sorted[i]->cat == cat;
    fputc(' ', f);
    if (!any)
        return;
    fputs(style, f);
    for (int i = 0; i < d->n; i++)
        if (sorted[i]->cat == cat)
            fprintf(f, "\"%s\" ", sorted[i]->name);
    fputs("; \n", f);
}

static void special_group(FILE *f, const struct dot *d, const int *g, int n, const char *style)
{
    fputc(' ', f);
    if (!n)
        return;
    fputs(style, f);
    for (int i = 0; i < n; i++)
        fprintf(f, "\"%s\" ", d->v[g[i]].name);
    fputs("; \n", f);
}

/* CNTK's EnumerateArcs from node r: a stack of nodes to visit, each visited node's arcs
 * (one per input, in order), its unvisited inputs pushed on the stack. */
static void arcs(FILE *f, const struct dot *d, int r, char *visited, int *stack)
{
    int top = 0;
    if (r < 0 || visited[r])
        return;
    stack[top++] = r;
    while (top > 0) {
        int c = stack[--top];
        if (visited[c])
            continue;
        const struct dot_node *x = &d->v[c];
        for (int k = 0; k < x->nin; k++) {
            const struct dot_node *in = &d->v[x->in[k]];
            fputc(' ', f);
            if (in->cat == CAT_PAST || in->cat == CAT_FUTURE) /* through a dummy node */
                fprintf(f,
                        "node [ shape = box3d  , color = %s, style = \"filled\" , label = "
                        "\"%s\\n(%s)\" ] ; \"%s.dummy\"\n\"%s.dummy\" -> \"%s\" ; \n",
                        in->cat == CAT_PAST ? "lightgray" : "red", in->name,
                        in->cat == CAT_PAST ? "PastValue" : "FutureValue", in->name, in->name,
                        x->name);
            else
                fprintf(f, "\"%s\" -> \"%s\" ; \n", in->name, x->name);
            if (!visited[x->in[k]])
                stack[top++] = x->in[k];
        }
        visited[c] = 1;
    }
}

static int write_dot(const struct dot *d, FILE *f)
{
    struct dot_node **sorted = malloc((size_t)(d->n ? d->n : 1) * sizeof *sorted);
    char *visited = calloc((size_t)(d->n ? d->n : 1), 1);
    int *stack = malloc((size_t)(d->n * G_MAX_IN + 1) * sizeof *stack);
    if (!sorted || !visited || !stack) {
        free(sorted);
        free(visited);
        free(stack);
        return -1;
    }
    for (int i = 0; i < d->n; i++)
        sorted[i] = &d->v[i];
    qsort(sorted, (size_t)d->n, sizeof *sorted, by_name);
    put(f, "strict digraph {\n");
    put(f, "rankdir = BT ;  \n");
    put(f, "// special nodes \n");
    special(f, d, sorted, CAT_PARAM,
            "node [ shape = box     , color = gray , style = \"filled, rounded\"  ]; ");
    special_group(f, d, d->feat, d->nfeat,
                  "node [ shape = ellipse , color = red  , fillcolor = white ]; ");
    special_group(f, d, d->lab, d->nlab,
                  "node [ shape = diamond, color = brown, style = bold ] ;  ");
    special_group(f, d, d->crit, d->ncrit,
                  "node [ shape = doublecircle , color =  red , fillcolor = white  ]; ");
    special(f, d, sorted, CAT_PRE,
            "node [ shape = box    , color = black, style = \"dashed, filled\",  fillcolor= "
            "limegreen ] ;");
    special(f, d, sorted, CAT_PAST,
            "node [ shape = box3d  , color = lightgray, style = \"filled\" , fillcolor = white ] ");
    special(f, d, sorted, CAT_FUTURE,
            "node [ shape = box3d  , color = red, style = \"filled\" , fillcolor = white ] ");
    put(f, "node [ shape = ellipse, color = blue, fillcolor = white, style = solid ]; ");
    put(f, "\n");
    put(f, "\n// add labels and operation name\n");
    for (int i = 0; i < d->n; i++)
        fprintf(f, "  \"%s\" [ label = \"%s [%s]\\n%s\" ] ;\n", sorted[i]->name, sorted[i]->name,
                sorted[i]->shape, sorted[i]->op);
    put(f, "subgraph {\n");
    put(f, "\t\t rank=source ; ");
    fputc(' ', f);
    for (int i = 0; i < d->nfeat; i++)
        fprintf(f, "\"%s\" ", d->v[d->feat[i]].name);
    put(f, "\n}\n");
    put(f, "subgraph {\n");
    put(f, "\t\t rank=sink ; ");
    fputc(' ', f);
    for (int i = 0; i < d->ncrit; i++)
        fprintf(f, "\"%s\" ", d->v[d->crit[i]].name);
    for (int i = 0; i < d->nout; i++)
        fprintf(f, "\"%s\" ", d->v[d->out[i]].name);
    for (int i = 0; i < d->neval; i++)
        fprintf(f, "\"%s\" ", d->v[d->eval[i]].name);
    put(f, "\n}\n");
    /* CNTK's node groups in order: features, labels, criteria, evaluation, outputs */
    const int *groups[] = {d->feat, d->lab, d->crit, d->eval, d->out};
    const int ns[] = {d->nfeat, d->nlab, d->ncrit, d->neval, d->nout};
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < ns[k]; i++)
            arcs(f, d, groups[k][i], visited, stack);
    put(f, "\n}\n");
    free(sorted);
    free(visited);
    free(stack);
    return 0;
}

int nn_write_dot(const struct nn *net, FILE *f, struct pt_err *e)
{
    struct dot d;
    memset(&d, 0, sizeof d);
    const struct nn_config *c = &net->cfg;
    int rc;
    if (net->graph)
        rc = from_graph(net->graph, &d);
    else if (c->rnn == NN_SIMPLENET)
        rc = from_simple(c, &d);
    else
        rc = -3;
    if (rc == 0)
        rc = write_dot(&d, f);
    free(d.v);
    if (rc == -3)
        return pt_err_set(e, PT_EUSER,
                          "error: plot: a SimpleNetworkBuilder network with rnnType=%s has no "
                          "node-by-node form to plot (its layers are partrain's own)",
                          net->rnn_name ? net->rnn_name : "LSTM");
    if (rc == -2)
        return pt_err_set(e, PT_EUSER, "error: plot: the network's criteria have no CNTK node");
    return rc ? pt_err_set(e, PT_ENOMEM, "error: out of memory writing the plot") : 0;
}
