/* The network object: the layer stack, the parameter arena and its tensor table,
 * initialization, the per-minibatch workspace, and the small accessors of nn.h.
 *
 * Layer stacks (one layer each, kinds looked up in the kind table of layer.c; dropout
 * only with addDropoutNodes), as net_types says for each rnnType:
 *   SIMPLENET: [dense f(i), dropout] x hidden, dense (linear, with bias)
 *   LSTM:      [lstm, dropout] x hidden, last_step, dense (linear, no bias)
 * The arena is the layers' parameters back to back in stack order. */
#include <stdlib.h>
#include <string.h>

#include "nn/nn_internal.h"

static const struct nn_rnn_kind net_types[] = {
    {NN_SIMPLENET, "SIMPLENET", "dense", NULL, 1, 2, 1},
    {NN_LSTM, "LSTM", "lstm", "last_step", 0, 3, 0},
};

const struct nn_rnn_kind *nn_rnn_kind(enum nn_rnn_type rnn)
{
    for (size_t i = 0; i < sizeof net_types / sizeof net_types[0]; i++)
        if (net_types[i].rnn == rnn)
            return &net_types[i];
    return NULL;
}

static int push_layer(struct nn *net, const struct nn_layer_spec *s, struct pt_err *e)
{
    if (net->nlayers == NN_MAX_LAYERS)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: more than %d layers", NN_MAX_LAYERS);
    struct nn_layer *l = NULL;
    int rc = nn_layer_new(s, &net->cfg, net->nlayers, &l, e);
    if (rc)
        return rc;
    net->layers[net->nlayers++] = l;
    net->seq_labels |= (l->ops->flags & NN_LAYER_SELECTS) != 0;
    net->masked |= (l->ops->flags & NN_LAYER_READS_MASK) != 0;
    return 0;
}

static int push_kind(struct nn *net, const char *kind, int in, int out, int number, enum bk_act act,
                     int bias, struct pt_err *e)
{
    struct nn_layer_spec s = {
        .kind = kind, .in_dim = in, .out_dim = out, .number = number, .act = act, .bias = bias};
    return push_layer(net, &s, e);
}

/* The layer list of the description (check_config has vetted it). */
static int build_layers(struct nn *net, struct pt_err *e)
{
    const struct nn_config *c = &net->cfg;
    const struct nn_rnn_kind *t = nn_rnn_kind(c->rnn);
    int hidden = c->nsizes - 2, top = c->sizes[hidden], rc = 0;
    net->rnn_name = t->name;
    for (int i = 0; rc == 0 && i < hidden; i++) {
        int in = c->sizes[i], out = c->sizes[i + 1];
        rc = push_kind(net, t->hidden, in, out, i, c->acts[i], 1, e);
        if (rc == 0 && c->dropout)
            rc = push_kind(net, "dropout", out, out, i, BK_ACT_NONE, 0, e);
    }
    if (rc == 0 && t->select)
        rc = push_kind(net, t->select, top, top, hidden, BK_ACT_NONE, 0, e);
    if (rc == 0)
        rc = push_kind(net, "dense", top, c->sizes[hidden + 1], hidden, BK_ACT_NONE, t->output_bias,
                       e);
    return rc;
}

static void free_layers(struct nn *net)
{
    for (int i = 0; i < net->nlayers; i++)
        nn_layer_free(net->layers[i]);
    net->nlayers = 0;
}

static size_t layer_param_count(const struct nn_layer *l)
{
    return l->ops->param_count ? l->ops->param_count(l) : 0;
}

/* Parameters initialized on the host (layer by layer from one RNG stream), then uploaded. */
static int init_params(struct nn *net, struct pt_err *e)
{
    float *host = pt_calloc(net->nparams ? net->nparams : 1, sizeof *host, e);
    if (!host)
        return e ? e->code : PT_ENOMEM;
    struct pt_rng rng;
    pt_rng_seed(&rng, net->seed, 0, 0);
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->ops->init)
            net->layers[i]->ops->init(net->layers[i], host, &net->cfg, &rng);
    int rc = net->bk->ops->upload(net->bk, net->params, host, net->nparams, e);
    free(host);
    return rc;
}

static int alloc_arena(struct nn *net, struct pt_err *e)
{
    struct backend *b = net->bk;
    size_t off = 0;
    for (int i = 0; i < net->nlayers; i++) {
        struct nn_layer *l = net->layers[i];
        l->param_offset = off;
        l->param_count = layer_param_count(l);
        off += l->param_count;
    }
    net->nparams = off;
    int rc = b->ops->alloc(b, off, &net->params, e);
    if (rc == 0)
        rc = b->ops->alloc(b, off, &net->grads, e);
    if (rc)
        return rc;
    b->ops->fill(b, net->grads, off, 0.0f);
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->ops->bind)
            net->layers[i]->ops->bind(net->layers[i], net->params, net->grads, net->tensors,
                                      &net->ntensors);
    return 0;
}

/* Mean 0 and 1/stddev 1 (identity) until the caller sets the statistics. */
int nn_alloc_norm(struct nn *net, struct pt_err *e)
{
    size_t dim = (size_t)net->cfg.sizes[0];
    struct backend *b = net->bk;
    net->mean = pt_calloc(dim, sizeof *net->mean, e);
    net->invstd = pt_calloc(dim, sizeof *net->invstd, e);
    if (!net->mean || !net->invstd)
        return e ? e->code : PT_ENOMEM;
    for (size_t i = 0; i < dim; i++)
        net->invstd[i] = 1.0f;
    int rc = b->ops->alloc(b, dim, &net->mean_dev, e);
    if (rc == 0)
        rc = b->ops->alloc(b, dim, &net->invstd_dev, e);
    if (rc == 0)
        rc = b->ops->upload(b, net->mean_dev, net->mean, dim, e);
    if (rc == 0)
        rc = b->ops->upload(b, net->invstd_dev, net->invstd, dim, e);
    return rc;
}

int nn_alloc_prior(struct nn *net, struct pt_err *e)
{
    int dim = net->cfg.sizes[net->cfg.nsizes - 1];
    struct backend *b = net->bk;
    float *u = pt_malloc((size_t)dim * sizeof *u, e);
    if (!u)
        return e ? e->code : PT_ENOMEM;
    for (int i = 0; i < dim; i++)
        u[i] = 1.0f / (float)dim;
    int rc = b->ops->alloc(b, (size_t)dim, &net->prior_dev, e);
    if (rc == 0)
        rc = b->ops->upload(b, net->prior_dev, u, (size_t)dim, e);
    free(u);
    return rc;
}

static int check_config(const struct nn_config *c, struct pt_err *e)
{
    const struct nn_rnn_kind *t = nn_rnn_kind(c->rnn);
    if (!t)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: rnnType %d", (int)c->rnn);
    int min = t->min_sizes;
    if (c->nsizes < min || c->nsizes > NN_MAX_HIDDEN + 2)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: layerSizes: %d entries; this network needs %d to %d",
                          c->origin, c->nsizes, min, NN_MAX_HIDDEN + 2);
    for (int i = 0; i < c->nsizes; i++)
        if (c->sizes[i] < 1 || c->sizes[i] > NN_MAX_DIM)
            return pt_err_set(e, PT_EUSER, "%s: error: layerSizes: size %d is out of range [1, %d]",
                              c->origin, c->sizes[i], NN_MAX_DIM);
    for (int i = 0; i < c->nsizes - 2; i++)
        if ((unsigned)c->acts[i] >= BK_ACT_COUNT)
            return pt_err_set(e, PT_EINTERNAL, "error: internal: activation %d", (int)c->acts[i]);
    if ((unsigned)c->eval_crit >= BK_CRIT_COUNT)
        return pt_err_set(e, PT_EINTERNAL, "error: internal: criterion %d", (int)c->eval_crit);
    if (c->train_crit != BK_CRIT_CE_SOFTMAX && c->train_crit != BK_CRIT_SQUARE_ERR)
        return pt_err_set(e, PT_EUSER, "%s: error: trainingCriterion: %s has no gradient",
                          c->origin, c->train_name);
    return 0;
}

int nn_config_param_count(const struct nn_config *cfg, size_t *count, struct pt_err *e)
{
    if (cfg->rnn == NN_GRAPH)
        return nn_graph_param_count(cfg, count, e);
    int rc = check_config(cfg, e);
    if (rc)
        return rc;
    struct nn *net = pt_calloc(1, sizeof *net, e);
    if (!net)
        return e ? e->code : PT_ENOMEM;
    net->cfg = *cfg;
    rc = build_layers(net, e);
    *count = 0;
    for (int i = 0; i < net->nlayers; i++)
        *count += layer_param_count(net->layers[i]);
    free_layers(net);
    free(net);
    return rc;
}

int nn_new(const struct nn_config *cfg, struct backend *b, uint64_t seed, struct nn **out,
           struct pt_err *e)
{
    *out = NULL;
    int rc = cfg->rnn == NN_GRAPH ? 0 : check_config(cfg, e);
    if (rc)
        return rc;
    struct nn *net = pt_calloc(1, sizeof *net, e);
    if (!net)
        return e ? e->code : PT_ENOMEM;
    net->cfg = *cfg;
    net->bk = b;
    net->seed = seed;
    if (cfg->rnn == NN_GRAPH) {
        if ((rc = nn_graph_setup(net, e)) != 0) {
            nn_free(net);
            return rc;
        }
        *out = net;
        return 0;
    }
    net->tensors = pt_calloc(NN_MAX_TENSORS, sizeof *net->tensors, e);
    rc = net->tensors ? build_layers(net, e) : e ? e->code : PT_ENOMEM;
    if (rc == 0)
        rc = alloc_arena(net, e);
    if (rc == 0)
        rc = init_params(net, e);
    if (rc == 0 && cfg->mean_var_norm)
        rc = nn_alloc_norm(net, e);
    if (rc) {
        nn_free(net);
        return rc;
    }
    *out = net;
    return 0;
}

static void release_workspace(struct nn *net)
{
    net->bk->ops->release(net->bk, net->ws);
    free(net->mask_host);
    free(net->crit_mask_host);
    net->ws = NULL;
    net->mask_host = net->crit_mask_host = NULL;
    net->cap_steps = net->cap_nseq = 0;
    net->out = NULL;
}

void nn_free(struct nn *net)
{
    if (!net)
        return;
    struct backend *b = net->bk;
    nn_replay_free(net); /* before the memory its recordings name */
    release_workspace(net);
    if (net->team) {
        net->team->release(net->team->ctx, net->team_ws, net->team_ws_n);
        net->team->release(net->team->ctx, net->params, net->nparams);
        net->params = NULL;
    }
    b->ops->release(b, net->params);
    b->ops->release(b, net->grads);
    b->ops->release(b, net->mean_dev);
    b->ops->release(b, net->invstd_dev);
    b->ops->release(b, net->prior_dev);
    if (net->ahead_due)
        (void)nn_upload_settle(net, NULL);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++)
            b->ops->release(b, net->ahead_buf[k][i]);
    free(net->mean);
    free(net->invstd);
    free(net->prior);
    nn_graph_release(net);
    free_layers(net);
    free(net->tensors);
    free(net);
}

/* Device floats for steps x nseq (members blocks of them in a team workspace: one set of
 * criterion sums each): inputs, masks, the two criterion sums, every layer. Layers after
 * the last-step selection are sized for all steps (frame labels need that). */
static size_t workspace_size(const struct nn *net, size_t steps, size_t nseq, size_t members)
{
    size_t cols = steps * nseq;
    size_t in = nn_ws_round((size_t)net->cfg.sizes[0] * cols) +
                nn_ws_round((size_t)net->cfg.sizes[net->cfg.nsizes - 1] * cols) +
                2 * nn_ws_round(cols) + nn_ws_round(4 * members);
    size_t total = in;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->ops->workspace)
            total += net->layers[i]->ops->workspace(net->layers[i], steps, nseq);
    return total;
}

static void carve_workspace(struct nn *net, float *cur, size_t steps, size_t nseq, size_t members)
{
    size_t cols = steps * nseq;
    net->x_dev = nn_ws_take(&cur, (size_t)net->cfg.sizes[0] * cols);
    net->labels_dev = nn_ws_take(&cur, (size_t)net->cfg.sizes[net->cfg.nsizes - 1] * cols);
    net->mask_dev = nn_ws_take(&cur, cols);
    net->crit_mask_dev = nn_ws_take(&cur, cols);
    net->stats_dev = nn_ws_take(&cur, 4 * members);
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->ops->carve)
            net->layers[i]->ops->carve(net->layers[i], &cur, steps, nseq);
}

int nn_reserve(struct nn *net, size_t steps, size_t nseq, struct pt_err *e)
{
    if (net->ws && steps <= net->cap_steps && nseq <= net->cap_nseq) {
        if (net->team_carved) /* a team step used the layers' views */
            carve_workspace(net, net->ws, net->cap_steps, net->cap_nseq, 1);
        net->team_carved = 0;
        return 0;
    }
    size_t t = steps > net->cap_steps ? steps : net->cap_steps;
    size_t n = nseq > net->cap_nseq ? nseq : net->cap_nseq;
    size_t total = workspace_size(net, t, n, 1);
    release_workspace(net);
    int rc = net->bk->ops->alloc(net->bk, total, &net->ws, e);
    if (rc)
        return pt_err_context(e, "workspace for %zu sequences of %zu steps", n, t);
    net->mask_host = pt_malloc(t * n * sizeof(float) + 1, e);
    net->crit_mask_host = pt_malloc(t * n * sizeof(float) + 1, e);
    if (!net->mask_host || !net->crit_mask_host) {
        release_workspace(net);
        return e ? e->code : PT_ENOMEM;
    }
    net->cap_steps = t;
    net->cap_nseq = n;
    carve_workspace(net, net->ws, t, n, 1);
    net->team_carved = 0;
    return 0;
}

/* ------------------------------------------------------------------ the team */

int nn_can_team(const struct nn *net)
{
    const struct backend_ops *o = net->bk->ops;
    if (!nn_can_fuse_sgd(net) || net->masked || net->seq_labels || !o->gemm_bias_act ||
        !o->gemm_act_grad)
        return 0;
    for (int i = 0; i < net->nlayers; i++)
        if (!(net->layers[i]->ops->flags & NN_LAYER_TEAM))
            return 0;
    return 1;
}

/* The team workspace for at least `total` columns (collective). */
static int team_grow(struct nn *net, size_t total, struct pt_err *e)
{
    const struct nn_team *t = net->team;
    if (total <= net->team_cap)
        return 0;
    size_t n = workspace_size(net, 1, total, (size_t)t->size);
    t->release(t->ctx, net->team_ws, net->team_ws_n);
    net->team_ws = NULL;
    net->team_cap = net->team_ws_n = 0;
    int rc = t->alloc(t->ctx, n, &net->team_ws, e);
    if (rc)
        return pt_err_context(e, "the workspace of %zu columns", total);
    net->team_cap = total;
    net->team_ws_n = n;
    return 0;
}

/* Team memory of n floats holding member 0's copy of src (n floats). */
static int team_copy(struct nn *net, const float *src, size_t n, float **out, struct pt_err *e)
{
    const struct nn_team *t = net->team;
    int rc = t->alloc(t->ctx, n, out, e);
    if (rc == 0 && t->rank == 0)
        memcpy(*out, src, n * sizeof **out);
    return rc;
}

int nn_set_team(struct nn *net, const struct nn_team *t, float **mem, size_t n, size_t cols,
                struct pt_err *e)
{
    if (!nn_can_team(net) || !net->bk->host_memory || t->size < 2)
        return pt_err_set(e, PT_EINTERNAL, "error: this network cannot train as a team");
    net->team = t;
    float *params = NULL, *state = NULL;
    int rc = team_copy(net, net->params, net->nparams, &params, e);
    if (rc == 0 && mem)
        rc = team_copy(net, *mem, n, &state, e);
    if (rc == 0)
        rc = team_grow(net, cols, e);
    if (rc == 0)
        rc = t->sync(t->ctx, e);
    if (rc) {
        t->release(t->ctx, net->team_ws, net->team_ws_n);
        net->team_ws = NULL;
        net->team_cap = net->team_ws_n = 0;
        if (params)
            t->release(t->ctx, params, net->nparams);
        if (state)
            t->release(t->ctx, state, n);
        net->team = NULL;
        return rc;
    }
    net->bk->ops->release(net->bk, net->params);
    net->params = params;
    net->ntensors = 0; /* the layers' views of the new arena */
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->ops->bind)
            net->layers[i]->ops->bind(net->layers[i], net->params, net->grads, net->tensors,
                                      &net->ntensors);
    if (mem)
        *mem = state;
    return 0;
}

void nn_team_release(struct nn *net, float *mem, size_t n)
{
    if (net && net->team && mem)
        net->team->release(net->team->ctx, mem, n);
}

int nn_team_sync(struct nn *net, struct pt_err *e)
{
    return net && net->team ? net->team->sync(net->team->ctx, e) : 0;
}

/* A team step's workspace: the team's `total` columns, this member's steps x nseq from
 * column col0 (collective: every member asks for the same total, and they grow the team
 * memory together), carved, and this member's views of the inputs. */
int nn_team_reserve(struct nn *net, size_t col0, size_t total, size_t steps, size_t nseq,
                    struct pt_err *e)
{
    const struct nn_team *t = net->team;
    size_t members = (size_t)t->size;
    int rc = team_grow(net, total, e);
    if (rc)
        return rc;
    /* the host masks (and the layers' own workspace, for evaluation) */
    if (steps * nseq > 0 && (rc = nn_reserve(net, steps, nseq, e)) != 0)
        return rc;
    carve_workspace(net, net->team_ws, 1, total, members);
    net->team_carved = 1;
    net->stats_dev += 4 * (size_t)t->rank;
    for (int i = 0; i < net->nlayers; i++) {
        struct nn_layer *l = net->layers[i];
        l->col0 = 0;
        l->team_cols = total;
        l->team_rank = t->rank;
        l->team_size = t->size;
    }
    nn_team_view(net, col0);
    return 0;
}

void nn_team_view(struct nn *net, size_t col0)
{
    ptrdiff_t by = (ptrdiff_t)col0 - (ptrdiff_t)net->layers[0]->col0; /* may be negative */
    net->x_dev += by * net->cfg.sizes[0];
    net->labels_dev += by * net->cfg.sizes[net->cfg.nsizes - 1];
    net->mask_dev += by;
    net->crit_mask_dev += by;
    for (int i = 0; i < net->nlayers; i++)
        net->layers[i]->col0 = col0;
}

/* The layers out of the team step (evaluation, or training without a team). */
void nn_team_leave(struct nn *net)
{
    for (int i = 0; i < net->nlayers; i++) {
        struct nn_layer *l = net->layers[i];
        l->col0 = l->team_cols = 0;
        l->team_rank = l->team_size = 0;
    }
}

const struct nn_config *nn_get_config(const struct nn *net)
{
    return &net->cfg;
}

size_t nn_param_count(const struct nn *net)
{
    return net->nparams;
}

size_t nn_learned_count(const struct nn *net)
{
    return net->nparams - net->nstate;
}

float *nn_params(struct nn *net)
{
    return net->params;
}

float *nn_grads(struct nn *net)
{
    return net->grads;
}

const struct nn_tensor *nn_tensors(const struct nn *net, size_t *count)
{
    *count = net->ntensors;
    return net->tensors;
}

const struct nn_tensor *nn_state_tensors(const struct nn *net, size_t *count)
{
    *count = net->nstate_tensors;
    return net->tensors + net->ntensors;
}

int nn_get_params(struct nn *net, float *host, struct pt_err *e)
{
    return net->bk->ops->download(net->bk, host, net->params, net->nparams, e);
}

int nn_set_params(struct nn *net, const float *host, struct pt_err *e)
{
    return net->bk->ops->upload(net->bk, net->params, host, net->nparams, e);
}

int nn_get_grads(struct nn *net, float *host, struct pt_err *e)
{
    return net->bk->ops->download(net->bk, host, net->grads, net->nparams, e);
}

const char *nn_train_criterion_name(const struct nn *net)
{
    return net->cfg.train_name;
}

const char *nn_eval_criterion_name(const struct nn *net)
{
    return net->cfg.eval_name;
}

uint64_t nn_get_dropout_state(const struct nn *net)
{
    return net->dropout_steps;
}

void nn_set_dropout_state(struct nn *net, uint64_t state)
{
    net->dropout_steps = state;
}

int nn_set_mean_var(struct nn *net, const float *mean, const float *invstd, int dim,
                    struct pt_err *e)
{
    struct backend *b = net->bk;
    if (!net->cfg.mean_var_norm)
        return pt_err_set(e, PT_EUSER, "%s: error: the network was built without applyMeanVarNorm",
                          net->cfg.origin);
    if (dim != net->cfg.sizes[0])
        return pt_err_set(e, PT_EUSER,
                          "%s: error: feature statistics have %d dimensions, the input has %d",
                          net->cfg.origin, dim, net->cfg.sizes[0]);
    size_t n = (size_t)dim;
    int rc = b->ops->upload(b, net->mean_dev, mean, n, e);
    if (rc == 0)
        rc = b->ops->upload(b, net->invstd_dev, invstd, n, e);
    if (rc)
        return rc;
    memcpy(net->mean, mean, n * sizeof *mean);
    memcpy(net->invstd, invstd, n * sizeof *invstd);
    net->mean_set = 1;
    return 0;
}

void nn_stats_held(const struct nn *net, int *mean_var, int *prior)
{
    *mean_var = net->mean_set;
    *prior = net->prior != NULL;
}

void nn_get_mean_var(const struct nn *net, const float **mean, const float **invstd)
{
    *mean = net->mean;
    *invstd = net->invstd;
}

int nn_set_prior(struct nn *net, const float *prior, int dim, struct pt_err *e)
{
    int out = net->cfg.sizes[net->cfg.nsizes - 1];
    if (dim != out)
        return pt_err_set(e, PT_EUSER, "%s: error: the label prior has %d entries, the output %d",
                          net->cfg.origin, dim, out);
    float *p = pt_malloc((size_t)dim * sizeof *p, e);
    if (!p)
        return e ? e->code : PT_ENOMEM;
    int rc =
        net->prior_dev ? net->bk->ops->upload(net->bk, net->prior_dev, prior, (size_t)dim, e) : 0;
    if (rc) {
        free(p);
        return rc;
    }
    memcpy(p, prior, (size_t)dim * sizeof *p);
    free(net->prior);
    net->prior = p;
    net->prior_dim = dim;
    return 0;
}

const float *nn_get_prior(const struct nn *net, int *dim)
{
    *dim = net->prior ? net->prior_dim : 0;
    return net->prior;
}
