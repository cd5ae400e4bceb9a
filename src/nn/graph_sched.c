/* The graph's schedule (graph.h: order and units): nodes in an order where every input
 * comes before the nodes that read it, except inside recurrent loops.
 *
 * A loop is a strongly connected component of the graph (Tarjan's algorithm over the edges
 * from a node to its inputs), which the evaluator can only make through PastValue or
 * FutureValue. Tarjan's algorithm emits a component after every component it reads, which
 * is the order to run them in. Inside a loop the nodes are ordered as if the delays had no
 * input (at step t they read steps the loop has already run), and the loop runs step by
 * step: forward in time when its delays look back, backward when they look ahead. */
#include <stdlib.h>
#include <string.h>

#include "nn/graph.h"

struct tarjan {
    struct nn_graph *g;
    int *index, *low, *stack, *on;
    int next, sp, nout;
    int *comp;   /* the components, concatenated in emission order */
    int *cstart; /* component k is comp[cstart[k] .. cstart[k + 1]) */
    int ncomp;
};

static void strong(struct tarjan *t, int v)
{
    t->index[v] = t->low[v] = t->next++;
    t->stack[t->sp++] = v;
    t->on[v] = 1;
    const struct g_node *n = &t->g->nodes[v];
    for (int k = 0; k < n->kind->nin; k++) {
        int w = n->in[k];
        if (t->index[w] < 0) {
            strong(t, w);
            t->low[v] = t->low[w] < t->low[v] ? t->low[w] : t->low[v];
        } else if (t->on[w])
            t->low[v] = t->index[w] < t->low[v] ? t->index[w] : t->low[v];
    }
    if (t->low[v] != t->index[v])
        return;
    t->cstart[t->ncomp++] = t->nout;
    int w;
    do {
        w = t->stack[--t->sp];
        t->on[w] = 0;
        t->comp[t->nout++] = w;
    } while (w != v);
}

/* Order a loop's members (mark[] set for them) inputs first, ignoring the delays' inputs. */
static void loop_order(struct nn_graph *g, int v, const char *mark, char *seen, int *out, int *n)
{
    seen[v] = 1;
    const struct g_node *node = &g->nodes[v];
    for (int k = 0; node->delay == 0 && k < node->kind->nin; k++) {
        int w = node->in[k];
        if (mark[w] && !seen[w])
            loop_order(g, w, mark, seen, out, n);
    }
    out[(*n)++] = v;
}

static int loop_unit(struct nn_graph *g, const int *members, int count, int at, char *mark,
                     char *seen, struct g_unit *u, struct pt_err *e)
{
    int past = 0, future = 0;
    for (int i = 0; i < count; i++) {
        const struct g_node *n = &g->nodes[members[i]];
        past |= n->delay > 0;
        future |= n->delay < 0;
        if (n->kind == &g_kind_lstm || n->kind->crit || n->cols != 0 || n->is_input || n->seq1 ||
            n->kind == &g_kind_last || n->kind == &g_kind_first)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: %s%s%s is inside a recurrent loop (through PastValue / "
                              "FutureValue), where partrain runs only step-wise nodes",
                              n->where, n->kind->name, n->name[0] ? " " : "", n->name);
    }
    if (past && future)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: a recurrent loop through both PastValue and FutureValue "
                          "cannot run in either direction",
                          g->nodes[members[0]].where);
    for (int i = 0; i < count; i++)
        mark[members[i]] = 1;
    int n = 0;
    for (int i = 0; i < count; i++)
        if (!seen[members[i]])
            loop_order(g, members[i], mark, seen, g->order + at, &n);
    for (int i = 0; i < count; i++)
        mark[members[i]] = 0;
    *u = (struct g_unit){.first = at, .count = count, .loop = 1, .reverse = future};
    return 0;
}

int g_schedule(struct nn_graph *g, struct pt_err *e)
{
    size_t n = (size_t)g->n + 1;
    struct tarjan t = {.g = g};
    t.index = pt_malloc(n * sizeof(int), e);
    t.low = pt_malloc(n * sizeof(int), e);
    t.stack = pt_malloc(n * sizeof(int), e);
    t.on = pt_calloc(n, sizeof(int), e);
    t.comp = pt_malloc(n * sizeof(int), e);
    t.cstart = pt_malloc((n + 1) * sizeof(int), e);
    char *mark = pt_calloc(n, 1, e), *seen = pt_calloc(n, 1, e);
    free(g->order);
    free(g->units);
    g->order = pt_malloc(n * sizeof *g->order, e);
    g->units = pt_malloc(n * sizeof *g->units, e);
    g->nunits = 0;
    int rc = t.index && t.low && t.stack && t.on && t.comp && t.cstart && mark && seen &&
                     g->order && g->units
                 ? 0
                 : (e ? e->code : PT_ENOMEM);
    for (int i = 0; rc == 0 && i < g->n; i++)
        t.index[i] = -1;
    for (int i = 0; rc == 0 && i < g->n; i++)
        if (t.index[i] < 0 && !g->nodes[i].dead)
            strong(&t, i);
    t.cstart[t.ncomp] = t.nout;
    int at = 0;
    for (int k = 0; rc == 0 && k < t.ncomp; k++) {
        const int *members = t.comp + t.cstart[k];
        int count = t.cstart[k + 1] - t.cstart[k];
        const struct g_node *only = &g->nodes[members[0]];
        int self = count == 1 && only->delay != 0 && only->in[0] == members[0];
        if (count == 1 && !self) {
            g->order[at] = members[0];
            g->units[g->nunits++] = (struct g_unit){.first = at++, .count = 1};
            continue;
        }
        rc = loop_unit(g, members, count, at, mark, seen, &g->units[g->nunits++], e);
        at += count;
    }
    free(t.index);
    free(t.low);
    free(t.stack);
    free(t.on);
    free(t.comp);
    free(t.cstart);
    free(mark);
    free(seen);
    return rc;
}
