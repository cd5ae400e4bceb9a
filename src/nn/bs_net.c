/* BrainScript networks inside struct nn: the graph built from the description (which
 * bs_config.c reads from the config) with its arena and tensor table (nn_graph_setup),
 * and one pass of a minibatch through it (nn_graph_forward / finish).
 *
 * Every Input node reads the reader's input stream of its own name ("features = Input
 * (2)" reads the stream called features), as CNTK binds them. Column (t, s) of a pass is
 * step t of sequence s (data/minibatch.h); a column counts for the criteria when t is
 * below the length of sequence s in every input the graph reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/blob.h"
#include "data/minibatch.h"
#include "nn/bs_eval.h"
#include "nn/graph.h"
#include "nn/nn_internal.h"

/* Parse and evaluate the description into a new graph. */
static int build(const struct nn_config *c, struct nn_graph **out, struct pt_err *e)
{
    struct bs_tree *t = NULL;
    *out = NULL;
    char names[sizeof c->want];
    const char *want[16];
    struct bs_build_opts o = {.eval_only = c->eval_only,
                              .want_eval = c->want_eval,
                              .want = want,
                              .root_member = c->bs_root,
                              .values_follow = c->from_model,
                              .edits = c->bs_text};
    snprintf(names, sizeof names, "%s", c->want);
    for (char *s = names, *end; *s && o.nwant < sizeof want / sizeof *want; s = end) {
        end = s + strcspn(s, ",");
        want[o.nwant++] = s;
        if (*end)
            *end++ = '\0';
    }
    if (c->eval_only && c->load_ok) /* a model file's description loads nothing */
        o.load = nn_model_description;
    int rc = bs_parse(c->bs_text, strlen(c->bs_text), c->bs_file, c->bs_line, c->bs_col, &t, e);
    struct nn_graph *g = rc ? NULL : pt_calloc(1, sizeof *g, e);
    if (rc == 0 && !g)
        rc = e ? e->code : PT_ENOMEM;
    if (rc == 0)
        rc = bs_build_graph(t, &o, g, e);
    bs_tree_free(t);
    if (rc) {
        g_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int nn_graph_build(const struct nn_config *cfg, struct nn_graph **out, struct pt_err *e)
{
    return build(cfg, out, e);
}

int nn_graph_setup(struct nn *net, struct pt_err *e)
{
    struct nn_graph *g = NULL;
    int rc = build(&net->cfg, &g, e);
    if (rc)
        return rc;
    net->graph = g;
    g->bk = net->bk;
    for (int i = 0; i < g->n; i++) { /* nodes the backend cannot run */
        const struct g_node *n = &g->nodes[i];
        const struct backend_ops *o = net->bk->ops;
        int conv = n->kind == &g_kind_conv || n->kind == &g_kind_conv_b;
        int conv_t = n->kind == &g_kind_conv_t || n->kind == &g_kind_conv_t_b;
        if (!n->dead &&
            ((conv && !o->conv_forward) || (n->kind == &g_kind_pool && !o->pool_forward) ||
             (conv_t && (!o->conv_forward || !o->map_bias)) ||
             (n->kind == &g_kind_unpool && (!o->pool_forward || !o->unpool_backward)) ||
             (n->kind == &g_kind_bn && !o->bn_forward) ||
             ((n->kind == &g_kind_lambda_rank || n->kind == &g_kind_ndcg1 ||
               n->kind == &g_kind_class_ce || n->kind == &g_kind_labels_graph ||
               n->kind == &g_kind_ctc || n->kind == &g_kind_edit_distance) &&
              !net->bk->host_memory)))
            return pt_err_set(e, PT_EDEVICE,
                              "%s: error: %s runs on the CPU only in this version (deviceId=-1; "
                              "this backend: %s)",
                              n->where, n->kind->name, o->name);
    }
    net->nparams = g->nparams;
    net->nstate = g->nstate;
    /* the learned tensors, then the states (in the table after them, not counted in
     * ntensors: nn_state_tensors), each in arena order */
    size_t all = 0;
    for (int i = 0; i < g->n; i++)
        all += g->nodes[i].learnable && !g->nodes[i].dead;
    if (!(net->tensors = pt_calloc(all ? all : 1, sizeof *net->tensors, e)))
        return e ? e->code : PT_ENOMEM;
    all = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < g->n; i++) {
            const struct g_node *n = &g->nodes[i];
            if (!n->learnable || n->state != pass || n->dead)
                continue;
            nn_table_add(net->tensors, &all, n->name[0] ? n->name : "Parameter", n->offset, n->rows,
                         n->cols);
        }
        if (pass == 0)
            net->ntensors = all;
    }
    net->nstate_tensors = all - net->ntensors;
    struct backend *b = net->bk;
    size_t np = net->nparams ? net->nparams : 1;
    if ((rc = b->ops->alloc(b, np, &net->params, e)) != 0 ||
        (rc = b->ops->alloc(b, np, &net->grads, e)) != 0)
        return rc;
    b->ops->fill(b, net->grads, np, 0.0f);
    if (net->cfg.mean_var_norm && (rc = nn_alloc_norm(net, e)) != 0)
        return rc;
    if (net->cfg.need_prior && (rc = nn_alloc_prior(net, e)) != 0)
        return rc;
    int labels = g_labels(g);
    const struct g_node *lab = labels >= 0 ? &g->nodes[labels] : NULL;
    for (int i = 0; i < g->n; i++) { /* Mean / InvStdDev: the network's statistics */
        struct g_node *n = &g->nodes[i];
        int stat = strcmp(n->kind->name, "Mean") == 0 || strcmp(n->kind->name, "InvStdDev") == 0;
        int off = 0, root = stat ? g_stat_input(g, n, &off) : -1;
        if (stat && root < 0)
            continue;                       /* dead: refused by g_finish where live */
        if (stat && &g->nodes[root] != lab) /* its input's part of the statistics */
            off += nn_norm_base(&net->cfg, g->nodes[root].name) > 0
                       ? nn_norm_base(&net->cfg, g->nodes[root].name)
                       : 0;
        if (!strcmp(n->kind->name, "Mean") && &g->nodes[n->in[0]] == lab)
            n->v = net->prior_dev;
        else if (!strcmp(n->kind->name, "Mean"))
            n->v = net->mean_dev + off;
        else if (!strcmp(n->kind->name, "InvStdDev"))
            n->v = net->invstd_dev + off;
    }
    float *host = pt_calloc(np, sizeof *host, e);
    if (!host)
        return e ? e->code : PT_ENOMEM;
    g_init_params(g, host, net->seed);
    rc = g->nloaded ? nn_graph_fill_loaded(net, g, host, e) : 0;
    if (rc == 0)
        rc = b->ops->upload(b, net->params, host, net->nparams, e);
    free(host);
    g_bind_arena(g, net->params, net->grads);
    return rc;
}

int nn_graph_param_count(const struct nn_config *cfg, size_t *count, struct pt_err *e)
{
    struct nn_graph *g = NULL;
    int rc = build(cfg, &g, e);
    *count = rc ? 0 : g->nparams;
    g_free(g);
    return rc;
}

void nn_graph_release(struct nn *net)
{
    g_free(net->graph);
    net->graph = NULL;
}

int nn_node_text(const struct nn *net, int i, char *buf, size_t size)
{
    const struct nn_graph *g = net->graph;
    int k = -1;
    for (int j = 0; g && j < g->n; j++) { /* the i-th named node that is not a parameter */
        const struct g_node *n = &g->nodes[j];
        if (n->learnable || !n->name[0] || ++k < i)
            continue;
        const struct g_kind *kind = n->src_kind; /* as written, before fusion */
        int o = snprintf(buf, size, "%s=%s", n->name, kind->name);
        for (int in = 0; in < kind->nin && o > 0 && (size_t)o < size; in++) {
            const struct g_node *x = &g->nodes[n->src_in[in]];
            o += snprintf(buf + o, size - (size_t)o, "%s%s", in ? ", " : " (",
                          x->name[0] ? x->name : x->src_kind->name);
        }
        if (kind->nin && o > 0 && (size_t)o < size)
            snprintf(buf + o, size - (size_t)o, ")");
        return 1;
    }
    return 0;
}

const char *nn_output_name(const struct nn *net)
{
    return net->graph ? net->graph->nodes[net->graph->out].name : NULL;
}

/* The live node called name (not one of partrain's helpers), or -1; *folded: a node of that
 * name was folded into a fused one. */
static int named_node(const struct nn_graph *g, const char *name, int *folded)
{
    *folded = 0;
    for (int i = 0; g && i < g->n; i++) {
        const struct g_node *n = &g->nodes[i];
        if (n->helper || strcmp(n->name, name) != 0)
            continue;
        if (!n->dead)
            return i;
        *folded = 1;
    }
    return -1;
}

int nn_value_node(const struct nn *net, const char *name, struct pt_err *e)
{
    int folded, at = named_node(net->graph, name, &folded);
    if (at < 0 && folded)
        return pt_err_set(e, PT_EUSER,
                          "error: '%s' is computed inside a fused layer (a product, its bias and "
                          "activation in one pass): its value is never formed; name the "
                          "layer's output",
                          name);
    if (at < 0)
        return 0;
    const struct g_node *n = &net->graph->nodes[at];
    if (n->cols)
        return pt_err_set(e, PT_EUSER,
                          "error: '%s' is a %s of %d x %d values, not a column per sample: "
                          "partrain writes the nodes computed from the inputs",
                          name, n->learnable ? "parameter" : "constant", n->rows, n->cols);
    return 1;
}

int nn_node_values(struct nn *net, const char *name, float *host, size_t cap, size_t *rows,
                   size_t *cols, struct pt_err *e)
{
    const struct nn_graph *g = net->graph;
    int folded, at = named_node(g, name, &folded);
    *rows = *cols = 0;
    if (at < 0 || g->nodes[at].cols)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: no values of '%s' to read", name);
    if (!net->out)
        return pt_err_set(e, PT_EUSER, "error: the network has no output yet (no minibatch ran)");
    const struct g_node *n = &g->nodes[at];
    *rows = (size_t)n->rows;
    *cols = n->seq1 ? g->nseq : g->ncols;
    if (!host)
        return 0;
    if (*rows * *cols > cap)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: %zu floats for '%s', room for %zu",
                          *rows * *cols, name, cap);
    return net->bk->ops->download(net->bk, host, n->v, *rows * *cols, e);
}

int nn_input_count(const struct nn *net)
{
    const struct nn_graph *g = net->graph;
    int k = 0;
    for (int i = 0; g && i < g->n; i++)
        k += g->nodes[i].is_input && !g->nodes[i].dead;
    return g ? k : 2; /* SimpleNetworkBuilder: features, labels */
}

const char *nn_input_name(const struct nn *net, int k, int *dim)
{
    const struct nn_graph *g = net->graph;
    if (!g) {
        *dim = k ? net->cfg.sizes[net->cfg.nsizes - 1] : net->cfg.sizes[0];
        return k ? "labels" : "features";
    }
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].is_input && !g->nodes[i].dead && k-- == 0) {
            *dim = g->nodes[i].rows;
            return g->nodes[i].name;
        }
    *dim = 0;
    return NULL;
}

int nn_output_reads(const struct nn *net, const char *name, const char *input)
{
    const struct nn_graph *g = net->graph;
    if (!strcmp(name, input))
        return 1;
    if (!g) /* HLast, PosteriorProb, ScaledLogLikelihood: the features' */
        return strcmp(input, "labels") != 0;
    int folded, at = named_node(g, name, &folded);
    if (at < 0 && !strcmp(name, nn_output_name(net)))
        at = g->out;
    if (at < 0)
        return 1; /* not a node: whatever it is, assume it reads everything */
    char *seen = calloc((size_t)g->n, 1);
    int *stack = malloc((size_t)g->n * sizeof *stack), top = 0, reads = 0;
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return 1;
    }
    stack[top++] = at;
    seen[at] = 1;
    while (top > 0 && !reads) {
        const struct g_node *n = &g->nodes[stack[--top]];
        reads = n->is_input && !strcmp(n->name, input);
        /* statistics (Mean, InvStdDev: LogPrior's) were computed before: fixed values now */
        int stat = !strcmp(n->kind->name, "Mean") || !strcmp(n->kind->name, "InvStdDev");
        for (int k = 0; !stat && k < n->kind->nin; k++)
            if (n->in[k] >= 0 && !seen[n->in[k]]) {
                seen[n->in[k]] = 1;
                stack[top++] = n->in[k];
            }
    }
    free(seen);
    free(stack);
    return reads;
}

/* CNTK's counts: every node (not an own criterion's second one, nor partrain's helpers;
 * a fused convolution and bias as CNTK's two),
 * and those the training criterion's gradient passes through (its ancestors that read a
 * parameter, the nodes folded into a fused one among them). */
int nn_node_counts(const struct nn *net, int *nodes, int *with_grad)
{
    const struct nn_graph *g = net->graph;
    *nodes = *with_grad = 0;
    if (!g)
        return 0;
    char *back = calloc((size_t)g->n, 1), *grad = calloc((size_t)g->n, 1);
    if (!back || !grad) {
        free(back);
        free(grad);
        return 0;
    }
    if (g->crit >= 0)
        back[g->crit] = 1;
    /* what the criterion reads, then which of those need a gradient: one pass each where
     * every node comes after its inputs, to a fixed point where a MEL edit rewired one to
     * a later node (bs_edit.c) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = g->n; i-- > 0;)
            for (int k = 0; back[i] && !g->nodes[i].dead && k < g->nodes[i].kind->nin; k++)
                if (!back[g->nodes[i].in[k]])
                    back[g->nodes[i].in[k]] = changed = 1;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->n; i++) {
            const struct g_node *n = &g->nodes[i];
            int need = back[i] && n->needs_grad;
            for (int k = 0; n->dead && k < n->kind->nin; k++) { /* folded: its inputs tell */
                const struct g_node *x = &g->nodes[n->in[k]];
                need |= x->learnable || (x->dead && grad[n->in[k]]);
            }
            if (need && !grad[i])
                grad[i] = changed = 1;
        }
    }
    for (int i = 0; i < g->n; i++) {
        const struct g_node *n = &g->nodes[i];
        /* a convolution with its bias is CNTK's Convolution and Plus */
        int own = n->kind == &g_kind_own_crit || n->helper || n->unreached   ? 0
                  : n->kind == &g_kind_conv_b || n->kind == &g_kind_conv_t_b ? 2
                                                                             : 1;
        *nodes += own;
        *with_grad += grad[i] ? own : 0;
    }
    free(back);
    free(grad);
    return 1;
}

/* The network's inputs in this minibatch: per-step ones (the same number of steps) and
 * per-sequence ones (one row per sequence: labels compared with BS.Sequences.Last). */
struct graph_inputs {
    struct mb_input *in[64];
    int id[64], n;
    size_t steps;
    int first_step; /* index of the first per-step input, or -1 */
};

static int find_inputs(struct nn *net, struct minibatch *mb, struct graph_inputs *gi,
                       struct pt_err *e)
{
    struct nn_graph *g = net->graph;
    memset(gi, 0, sizeof *gi);
    gi->first_step = -1;
    for (int i = 0; i < g->n && gi->n < 64; i++) {
        struct g_node *n = &g->nodes[i];
        if (!n->is_input || n->dead) /* a loaded model's labels, when nothing reads them */
            continue;
        struct mb_input *in = mb_find(mb, n->name);
        if (!in)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: the network's Input '%s' has no reader input of that "
                              "name (dim %d)",
                              n->where, n->name, n->rows);
        if (in->dim != n->rows)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: the network's Input '%s' has dimension %d, the "
                              "reader's input '%s' dim %d",
                              n->where, n->name, n->rows, n->name, in->dim);
        if (n->seq1 && in->steps > 1)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: Input '%s' is compared per sequence (with "
                              "BS.Sequences.Last or First) but a sequence has %zu rows of it; "
                              "one row per sequence expected",
                              n->where, n->name, in->steps);
        if (!n->seq1 && gi->first_step >= 0 && in->steps != gi->steps)
            return pt_err_set(e, PT_EUSER,
                              "%s: error: inputs '%s' and '%s' have sequences of different "
                              "lengths (%zu and %zu steps); partrain's BrainScript networks "
                              "need one row of every input per step (or one per sequence, for "
                              "what BS.Sequences.Last / First compare with)",
                              n->where, g->nodes[gi->id[gi->first_step]].name, n->name, gi->steps,
                              in->steps);
        if (!n->seq1 && gi->first_step < 0) {
            gi->first_step = gi->n;
            gi->steps = in->steps;
        }
        gi->in[gi->n] = in;
        gi->id[gi->n++] = i;
    }
    return 0;
}

/* The masks of the columns that count: steps that are real in every per-step input, and
 * sequences that have every per-sequence input. Returns the counted columns of the
 * training criterion's kind (per step or per sequence). */
static int make_masks(struct nn *net, struct graph_inputs *gi, size_t nseq, size_t *counted,
                      struct pt_err *e)
{
    struct nn_graph *g = net->graph;
    struct backend *b = net->bk;
    size_t cols = gi->steps * nseq, steps_counted = 0, seqs_counted = 0;
    int rc = nn_reserve(net, gi->steps ? gi->steps : 1, nseq, e);
    for (size_t t = 0; rc == 0 && t < gi->steps; t++)
        for (size_t s = 0; s < nseq; s++) {
            int real = 1;
            for (int k = 0; k < gi->n; k++)
                real &= g->nodes[gi->id[k]].seq1 || t < gi->in[k]->len[s];
            net->crit_mask_host[t * nseq + s] = (float)real;
            steps_counted += (size_t)real;
        }
    g->crit_mask = NULL;
    if (rc == 0 && steps_counted != cols) {
        rc = b->ops->upload(b, net->crit_mask_dev, net->crit_mask_host, cols, e);
        g->crit_mask = net->crit_mask_dev;
    }
    for (size_t s = 0; rc == 0 && s < nseq; s++) {
        int real = 1;
        for (int k = 0; k < gi->n; k++)
            real &= !g->nodes[gi->id[k]].seq1 || gi->in[k]->len[s] > 0;
        net->crit_mask_host[s] = (float)real;
        seqs_counted += (size_t)real;
    }
    g->seq_mask_on = NULL;
    if (rc == 0 && seqs_counted != nseq) {
        rc = b->ops->upload(b, g->seq_mask, net->crit_mask_host, nseq, e);
        g->seq_mask_on = g->seq_mask;
    }
    *counted = g->nodes[g->nodes[g->crit].in[1]].seq1 ? seqs_counted : steps_counted;
    return rc;
}

/* Upload every input; the masks; the step axis's lengths. */
static int load_inputs(struct nn *net, struct minibatch *mb, size_t *steps, size_t *counted,
                       struct pt_err *e)
{
    struct nn_graph *g = net->graph;
    struct graph_inputs gi;
    int rc = find_inputs(net, mb, &gi, e);
    if (rc)
        return rc;
    size_t nseq = mb->nseq, cols = gi.steps * nseq;
    *steps = gi.steps;
    if ((rc = g_reserve(g, cols ? cols : 1, nseq ? nseq : 1, e)) != 0 || cols == 0)
        return rc;
    struct backend *b = net->bk;
    for (int k = 0; rc == 0 && k < gi.n; k++) {
        struct g_node *n = &g->nodes[gi.id[k]];
        size_t c = n->seq1 ? nseq : cols;
        if (n->seq1 && gi.in[k]->steps == 0)
            b->ops->fill(b, n->v, (size_t)n->rows * c, 0.0f);
        else
            rc = b->ops->upload(b, n->v, gi.in[k]->data, (size_t)gi.in[k]->dim * c, e);
    }
    g->len = gi.first_step >= 0 ? gi.in[gi.first_step]->len : NULL;
    return rc ? rc : make_masks(net, &gi, nseq, counted, e);
}

int nn_graph_forward(struct nn *net, struct minibatch *mb, int train, float rate,
                     struct nn_stats *st, struct pt_err *e)
{
    struct nn_graph *g = net->graph;
    size_t steps = 0, counted = 0;
    memset(st, 0, sizeof *st);
    net->step_due = 0;
    int rc = load_inputs(net, mb, &steps, &counted, e);
    if (rc)
        return rc;
    struct backend *b = net->bk;
    if (steps * mb->nseq == 0) {
        if (train)
            b->ops->fill(b, net->grads, net->nparams, 0.0f);
        net->out = NULL;
        return b->ops->sync(b, e);
    }
    st->samples = counted;
    g->cont = mb->cont;
    g->begins = mb->cont ? mb->begins : NULL;
    if (mb->cont && (rc = g_carry_reserve(g, mb->nseq, e)) != 0)
        return rc;
    g->train = train;
    g->dropout_rate = train ? rate : 0.0f;
    g->dropout_seed = nn_mix64(net->seed ^ 0x64726F706F7574ull, net->dropout_steps);
    g_forward(g);
    if (g->fault[0]) /* bad data: no gradient, no step */
        return pt_err_set(e, PT_EUSER, "%s", g->fault);
    if (mb->cont)
        g_carry_save(g);
    net->out = g->nodes[g->out].v;
    net->out_cols = g_cols(g, &g->nodes[g->out]);
    net->step_due = train ? 2 : 1;
    return 0;
}

int nn_graph_finish(struct nn *net, struct nn_stats *st, struct pt_err *e)
{
    struct nn_graph *g = net->graph;
    struct backend *b = net->bk;
    int due = net->step_due, rc = 0;
    net->step_due = 0;
    if (!due)
        return 0;
    if (due == 2) {
        g_backward(g, net->grads);
        if (net->grad_ready && (rc = b->ops->sync(b, e)) == 0)
            rc = net->grad_ready(net->grad_ready_ctx, 0, e);
    }
    return rc ? rc : nn_read_criteria(b, g->stats, g->n_eval_more, st, e);
}

int nn_eval_more(const struct nn *net, int k, const char **name, const char **kind)
{
    const struct nn_graph *g = net->graph;
    int n = g ? g->n_eval_more : 0;
    if (k >= 0 && k < n) {
        const struct g_node *c = &g->nodes[g->eval_more[k]];
        const struct g_node *src = c->kind == &g_kind_own_crit ? &g->nodes[c->in[1]] : c;
        if (name)
            *name = c->name;
        if (kind)
            *kind = src->src_kind->name;
    }
    return n;
}

const char *nn_moving_states(const struct nn *net)
{
    const struct nn_graph *g = net->graph;
    for (int i = 0; g && i < g->n; i++)
        if (g->nodes[i].kind == &g_kind_bn && !g->nodes[i].dead)
            return g->nodes[i].where;
    return NULL;
}

uint64_t nn_fixed_values_hash(const struct nn *net, uint64_t h)
{
    const struct nn_graph *g = net->graph;
    for (int i = 0; g && i < g->n; i++) {
        const struct g_node *n = &g->nodes[i];
        if (n->data)
            h = blob_fnv1a(h, n->data, (size_t)n->rows * (size_t)n->cols * sizeof *n->data);
    }
    return h;
}

int nn_graph_copy_named(struct nn *dst, struct nn *src, int *copied, int *fresh, struct pt_err *e)
{
    *copied = *fresh = 0;
    if (!dst->graph || (!src->graph && src->cfg.rnn != NN_SIMPLENET))
        return pt_err_set(e, PT_EUSER,
                          "error: a SimpleNetworkBuilder LSTM network's parameters cannot be "
                          "copied by name (a MEL script edits an NDL or BrainScript network)");
    const struct nn_graph *dg = dst->graph, *sg = src->graph;
    size_t nst = 0;
    const struct nn_tensor *st = sg ? NULL : nn_tensors(src, &nst); /* W0, B0, ... */
    float *dh = pt_malloc((dst->nparams + 1) * sizeof *dh, e);
    float *sh = dh ? pt_malloc((src->nparams + 1) * sizeof *sh, e) : NULL;
    int rc = dh && sh ? nn_get_params(dst, dh, e) : (e ? e->code : PT_ENOMEM);
    if (rc == 0)
        rc = nn_get_params(src, sh, e);
    for (int i = 0; rc == 0 && i < dg->n; i++) {
        const struct g_node *d = &dg->nodes[i];
        if (d->dead || !d->learnable)
            continue;
        int j = 0, rows = 0, cols = 0;
        size_t offset = 0;
        if (sg) {
            while (j < sg->n && (sg->nodes[j].dead || !sg->nodes[j].learnable ||
                                 strcmp(sg->nodes[j].name, d->name)))
                j++;
            if (j < sg->n) {
                rows = sg->nodes[j].rows;
                cols = sg->nodes[j].cols;
                offset = sg->nodes[j].offset;
            }
        } else {
            while ((size_t)j < nst && strcmp(st[j].name, d->name))
                j++;
            if ((size_t)j < nst) {
                rows = st[j].rows;
                cols = st[j].cols;
                offset = st[j].offset;
            }
        }
        if (sg ? j == sg->n : (size_t)j == nst) {
            (*fresh)++;
            continue;
        }
        if (rows != d->rows || cols != d->cols)
            rc = pt_err_set(e, PT_EUSER,
                            "error: parameter '%s' is [%d x %d] in the edited network and [%d x "
                            "%d] in the model it was loaded from",
                            d->name, d->rows, d->cols, rows, cols);
        else {
            memcpy(dh + d->offset, sh + offset, (size_t)d->rows * (size_t)d->cols * sizeof *dh);
            (*copied)++;
        }
    }
    if (rc == 0)
        rc = nn_set_params(dst, dh, e);
    /* the feature statistics and the label prior a model holds, where the edit kept them */
    if (rc == 0 && src->mean_set && dst->cfg.mean_var_norm &&
        dst->cfg.sizes[0] == src->cfg.sizes[0])
        rc = nn_set_mean_var(dst, src->mean, src->invstd, src->cfg.sizes[0], e);
    if (rc == 0 && src->prior && dst->cfg.need_prior &&
        src->prior_dim == dst->cfg.sizes[dst->cfg.nsizes - 1])
        rc = nn_set_prior(dst, src->prior, src->prior_dim, e);
    free(dh);
    free(sh);
    return rc;
}
