/* One minibatch through the network: check and upload the inputs, build the padding
 * masks, forward, criteria, backward.
 *
 * Labels decide the mode (data/minibatch.h layout, C = steps x nseq columns):
 *   labels steps == features steps: a label per step; the criterion sees every column and
 *       counts column (t, s) when t is below both inputs' len[s] (SIMPLENET always);
 *   labels steps == 1 (LSTM only): a label per sequence, classified from its last real
 *       step; the criterion sees nseq columns and counts those with a label. */
#include <stdio.h>
#include <string.h>

#include "nn/graph.h"
#include "nn/nn_internal.h"
#include "data/minibatch.h"

struct step_inputs {
    struct mb_input *feat, *lab;
    size_t steps, nseq;
    int seq_labels;
    int in_place; /* the minibatch's in_place */
};

static int input_error(const struct nn *net, const char *name, const struct mb_input *in, int want,
                       struct pt_err *e)
{
    if (!in)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: SimpleNetworkBuilder needs a reader input called '%s' "
                          "(dim %d)",
                          net->cfg.origin, name, want);
    return pt_err_set(e, PT_EUSER,
                      "%s: error: layerSizes: the network's %s size is %d, but the reader's "
                      "input '%s' has dim %d",
                      net->cfg.origin, strcmp(name, "labels") ? "input" : "output", want, name,
                      in->dim);
}

static int find_inputs(const struct nn *net, struct minibatch *mb, struct step_inputs *si,
                       struct pt_err *e)
{
    const struct nn_config *c = &net->cfg;
    si->feat = mb_find(mb, "features");
    si->in_place = mb->in_place;
    si->lab = mb_find(mb, "labels");
    if (!si->feat || si->feat->dim != c->sizes[0])
        return input_error(net, "features", si->feat, c->sizes[0], e);
    if (!si->lab || si->lab->dim != c->sizes[c->nsizes - 1])
        return input_error(net, "labels", si->lab, c->sizes[c->nsizes - 1], e);
    si->steps = si->feat->steps;
    si->nseq = mb->nseq;
    si->seq_labels = 0;
    if (si->lab->steps == si->steps)
        return 0;
    if (si->lab->steps == 1 && net->seq_labels) {
        si->seq_labels = 1;
        return 0;
    }
    if (net->seq_labels)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: the minibatch's sequences have up to %zu label rows and up "
                          "to %zu feature rows; labels need one row per sequence or one per "
                          "feature row",
                          c->origin, si->lab->steps, si->steps);
    return pt_err_set(e, PT_EUSER,
                      "%s: error: the minibatch's sequences have up to %zu label rows and up to "
                      "%zu feature rows; %s needs one label row per feature row",
                      c->origin, si->lab->steps, si->steps, net->rnn_name);
}

/* mask[t*n + s] = 1 when step t of sequence s is real. Returns whether any is padding. */
static int feature_mask(const struct step_inputs *si, float *mask)
{
    int padded = 0;
    for (size_t t = 0; t < si->steps; t++)
        for (size_t s = 0; s < si->nseq; s++) {
            int real = t < si->feat->len[s];
            mask[t * si->nseq + s] = (float)real;
            padded |= !real;
        }
    return padded;
}

/* The criterion's column mask; returns the counted columns, *padded = any not counted. */
static size_t criterion_mask(const struct step_inputs *si, float *mask, int *padded)
{
    size_t counted = 0, steps = si->seq_labels ? 1 : si->steps;
    for (size_t t = 0; t < steps; t++)
        for (size_t s = 0; s < si->nseq; s++) {
            int real = t < si->lab->len[s] && (si->seq_labels || t < si->feat->len[s]);
            mask[t * si->nseq + s] = (float)real;
            counted += (size_t)real;
        }
    *padded = counted != steps * si->nseq;
    return counted;
}

/* Upload features (normalized) and labels; build the masks. Fills the pass. With `own`
 * (a network of its own, not a team's) and a minibatch its holder lets go (in_place), a
 * CPU backend's first layer reads the features where they are, normalized there: no copy
 * (the MLP: 800 KB a step); one loaded again is not normalized twice. */
static int load_inputs(struct nn *net, const struct step_inputs *si, struct nn_pass *p,
                       const float **crit_mask, size_t *samples, int own, int ahead,
                       struct pt_err *e)
{
    struct backend *b = net->bk;
    const struct nn_config *c = &net->cfg;
    size_t cols = si->steps * si->nseq, lab_cols = si->seq_labels ? si->nseq : cols;
    int in = c->sizes[0], out = c->sizes[c->nsizes - 1], padded = 0;
    int norm = c->mean_var_norm && b->ops->upload_norm, rc;
    net->x_in = net->labels_in = NULL;
    if (ahead && net->ahead_src[0] == si->feat->data && net->ahead_n[0] == (size_t)in * cols &&
        net->ahead_src[1] == si->lab->data && net->ahead_n[1] == (size_t)out * lab_cols) {
        /* sent during the last step (nn_upload_ahead); normalized here, in stream order */
        net->x_in = net->ahead_buf[ahead - 1][0];
        net->labels_in = net->ahead_buf[ahead - 1][1];
        net->ahead_taken++;
        if (c->mean_var_norm)
            b->ops->norm(b, net->x_in, net->mean_dev, net->invstd_dev, in, cols);
        norm = 1; /* done */
        rc = 0;
    } else if (own && si->in_place && b->host_memory) {
        if (c->mean_var_norm && !si->feat->normalized)
            b->ops->norm(b, si->feat->data, net->mean_dev, net->invstd_dev, in, cols);
        si->feat->normalized |= c->mean_var_norm;
        net->x_in = si->feat->data;
        rc = 0;
    } else if (norm) /* the features normalized on their way in */
        rc = b->ops->upload_norm(b, net->x_dev, si->feat->data, net->mean_dev, net->invstd_dev, in,
                                 cols, e);
    else
        rc = b->ops->upload(b, net->x_dev, si->feat->data, (size_t)in * cols, e);
    if (rc == 0 && !net->labels_in)
        rc = b->ops->upload(b, net->labels_dev, si->lab->data, (size_t)out * lab_cols, e);
    p->mask = NULL;
    if (rc == 0 && net->masked && feature_mask(si, net->mask_host)) {
        rc = b->ops->upload(b, net->mask_dev, net->mask_host, cols, e);
        p->mask = net->mask_dev;
    }
    *samples = criterion_mask(si, net->crit_mask_host, &padded);
    *crit_mask = NULL;
    if (rc == 0 && padded) {
        rc = b->ops->upload(b, net->crit_mask_dev, net->crit_mask_host, lab_cols, e);
        *crit_mask = net->crit_mask_dev;
    }
    if (rc == 0 && c->mean_var_norm && !norm && !net->x_in)
        b->ops->norm(b, net->x_dev, net->mean_dev, net->invstd_dev, in, cols);
    return rc;
}

/* Layer i's input before its forward pass: the previous layer's y and dy (the inputs and
 * none for the first), and the pass's shape. */
static struct nn_layer *enter_layer(struct nn *net, int i, const struct nn_pass *p)
{
    struct nn_layer *l = net->layers[i], *prev = i > 0 ? net->layers[i - 1] : NULL;
    l->x = prev ? prev->y : net->x_in ? net->x_in : net->x_dev;
    l->dx = prev ? prev->dy : NULL;
    l->steps = p->steps;
    l->nseq = p->nseq;
    return l;
}

void nn_run_forward(struct nn *net, struct nn_pass *p)
{
    for (int i = 0; i < net->nlayers; i++)
        enter_layer(net, i, p)->ops->forward(net->layers[i], net->bk, p);
}

/* Both criteria on the output layer; the training one also writes its gradient into the
 * output layer's dy when train is set. */
void nn_run_criteria(struct nn *net, const float *crit_mask, int train)
{
    struct backend *b = net->bk;
    struct nn_layer *o = net->layers[net->nlayers - 1];
    struct bk_crit c = {
        .rows = o->out_dim,
        .cols = o->steps * o->nseq,
        .z = o->y,
        .y = net->labels_in ? net->labels_in : net->labels_dev,
        .mask = crit_mask,
        .grad = train ? o->dy : NULL,
        .sum = net->stats_dev,
    };
    b->ops->criterion(b, net->cfg.train_crit, &c);
    c.grad = NULL;
    c.sum = net->stats_dev + 2;
    b->ops->criterion(b, net->cfg.eval_crit, &c);
    net->out = o->y;
    net->out_cols = c.cols;
}

/* Backward, last layer first. After each layer with parameters the gradients from its
 * first parameter to the arena's end are final: tell the grad-ready hook, so an engine can
 * start sending them while the earlier layers still compute. */
int nn_run_backward(struct nn *net, struct pt_err *e)
{
    struct backend *b = net->bk;
    const struct bk_sgd *u = net->fused_due ? &net->fused : NULL;
    net->fused_due = 0;
    net->layers[net->nlayers - 1]->dy_ready = 0;
    for (int i = net->nlayers; i-- > 0;) {
        struct nn_layer *l = net->layers[i], *prev = i > 0 ? net->layers[i - 1] : NULL;
        /* the previous layer's ReLU derivative applied in the product that makes its dy */
        int act = prev && l->dx && b->ops->gemm_act_grad && (l->ops->flags & NN_LAYER_DX_ACT) &&
                  (prev->ops->flags & NN_LAYER_DY_ACT) && prev->act == BK_ACT_RELU;
        l->dx_act = act ? prev->act : BK_ACT_NONE;
        l->dx_y = act ? prev->y : NULL;
        if (prev)
            prev->dy_ready = act;
        l->sgd = u;
        l->ops->backward(l, b);
        l->sgd = NULL;
        if (!net->grad_ready || l->param_count == 0)
            continue;
        int rc = b->ops->sync(b, e);
        if (rc == 0)
            rc = net->grad_ready(net->grad_ready_ctx, l->param_offset, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* A team's backward pass (nn_set_team), only with a fused step (every member decides
 * alike: the team's samples and the same settings). The output layer's dy is whole once
 * every member has its part's (the criteria) with f' applied; then, last layer first,
 * every member computes its share of dx (the previous layer's dy, f' applied) and the step
 * of its share of the layer's parameters, and a sync makes that dy whole. The last sync
 * also lets nobody start the next forward pass before the model is whole again. */
static int team_backward(struct nn *net, struct pt_err *e)
{
    struct backend *b = net->bk;
    const struct nn_team *t = net->team;
    const struct bk_sgd *u = net->fused_due ? &net->fused : NULL;
    net->fused_due = 0;
    if (!u)
        return 0;
    struct nn_layer *o = net->layers[net->nlayers - 1];
    size_t cols = o->steps * o->nseq;
    if (cols)
        b->ops->act_grad(b, o->act, o->dy, o->y, (size_t)o->out_dim * cols);
    int rc = t->sync(t->ctx, e);
    for (int i = net->nlayers; rc == 0 && i-- > 0;) {
        struct nn_layer *l = net->layers[i], *prev = i > 0 ? net->layers[i - 1] : NULL;
        l->dx_act = prev ? prev->act : BK_ACT_NONE;
        l->dx_y = prev ? prev->y : NULL;
        l->sgd = u;
        l->ops->team_backward(l, b);
        l->sgd = NULL;
        rc = t->sync(t->ctx, e);
    }
    return rc;
}

/* A team's forward pass: every hidden layer computes its share of the rows of y for all
 * the team's columns (a sync after each makes y whole), the output layer this member's
 * part of the columns. */
static int team_run_forward(struct nn *net, struct nn_pass *p, struct pt_err *e)
{
    const struct nn_team *t = net->team;
    for (int i = 0; i < net->nlayers; i++) {
        struct nn_layer *l = enter_layer(net, i, p);
        if (i + 1 == net->nlayers) {
            l->ops->forward(l, net->bk, p); /* this member's part of the columns */
            break;
        }
        l->ops->team_forward(l, net->bk);
        int rc = t->sync(t->ctx, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* A team's training forward pass. Every member loads its share of the minibatch into
 * its columns of the team workspace (the members' columns back to back, in member order);
 * once all have (the second gather), and when no criterion column is masked (frames
 * without padding), every member computes an equal part of the team's columns, whoever
 * read them: the ranks' shares of a minibatch differ by some percent (the reader gives
 * whole chunks to a rank), and the slowest would hold up the others at every sync. A
 * member with no sequences runs with none and still takes part. */
static int team_forward(struct nn *net, struct minibatch *mb, float rate, struct nn_stats *st,
                        struct pt_err *e)
{
    const struct nn_team *t = net->team;
    struct step_inputs si = {0};
    int rc = mb->nseq ? find_inputs(net, mb, &si, e) : 0;
    size_t cols = si.steps * si.nseq, col0 = 0, total = 0, *all = t->scratch;
    size_t *samples = all + t->size;
    if (rc == 0)
        rc = t->gather(t->ctx, cols, all, e);
    for (int k = 0; rc == 0 && k < t->size; k++) {
        col0 += k < t->rank ? all[k] : 0;
        total += all[k];
    }
    if (rc || total == 0) /* no member has a sequence: nothing to do */
        return rc;
    if ((rc = nn_team_reserve(net, col0, total, si.steps, si.nseq, e)) != 0)
        return rc;
    struct nn_pass p = {.steps = si.steps, .nseq = si.nseq, .train = 1};
    const float *crit_mask = NULL;
    net->x_in = NULL;
    if (cols && (rc = load_inputs(net, &si, &p, &crit_mask, &st->samples, 0, 0, e)) != 0)
        return rc;
    if ((rc = t->gather(t->ctx, st->samples, samples, e)) != 0)
        return rc;
    int even = 1;
    for (int k = 0; k < t->size; k++) {
        st->team_samples += samples[k];
        even &= samples[k] == all[k];
    }
    if (even) { /* an equal part of the team's columns */
        size_t first = total * (size_t)t->rank / (size_t)t->size;
        size_t end = total * (size_t)(t->rank + 1) / (size_t)t->size;
        nn_team_view(net, first);
        p = (struct nn_pass){.steps = 1, .nseq = end - first, .train = 1};
        cols = end - first;
    }
    (void)rate; /* a team's layers have no dropout */
    if ((rc = team_run_forward(net, &p, e)) != 0)
        return rc;
    if (cols)
        nn_run_criteria(net, crit_mask, 1);
    else {
        net->bk->ops->fill(net->bk, net->stats_dev, 4, 0.0f);
        net->out = NULL;
    }
    net->step_due = 2;
    return 0;
}

/* A step starts (once inputs were ever sent ahead): the device's work from here on waits
 * for the copies sent so far, and the next copy for the steps before this one (the
 * backend's upload_join). Returns the pair nn_upload_ahead filled for this step (1 + its
 * index; 0: none), which any step takes, used or not. */
static int take_ahead(struct nn *net)
{
    int due = net->ahead_due;
    net->ahead_due = 0;
    if (net->ahead_on)
        net->bk->ops->upload_join(net->bk);
    return due;
}

/* Device buffer *p of at least n floats (kept when big enough). */
static int ahead_buffer(struct nn *net, int k, int i, size_t n, struct pt_err *e)
{
    struct backend *b = net->bk;
    if (net->ahead_buf[k][i] && net->ahead_cap[k][i] >= n)
        return 0;
    b->ops->release(b, net->ahead_buf[k][i]);
    net->ahead_buf[k][i] = NULL;
    net->ahead_cap[k][i] = 0;
    int rc = b->ops->alloc(b, n + n / 4, &net->ahead_buf[k][i], e);
    if (rc == 0)
        net->ahead_cap[k][i] = n + n / 4;
    return rc;
}

int nn_upload_ahead(struct nn *net, struct minibatch *mb, struct pt_err *e)
{
    struct backend *b = net->bk;
    struct step_inputs si = {0};
    if (net->graph || net->team || !b->ops->upload_ahead || !b->ops->upload_join || mb->cont ||
        mb->nseq == 0 || find_inputs(net, mb, &si, NULL) != 0 ||
        (!b->host_memory && (!si.feat->host || !si.lab->host)))
        return 0;
    /* copies no step has taken since: done before their pair is filled again */
    int rc = nn_upload_settle(net, e);
    net->ahead_on = 1;
    size_t cols = si.steps * si.nseq, lab_cols = si.seq_labels ? si.nseq : cols;
    size_t n[2] = {(size_t)net->cfg.sizes[0] * cols,
                   (size_t)net->cfg.sizes[net->cfg.nsizes - 1] * lab_cols};
    const float *src[2] = {si.feat->data, si.lab->data};
    int k = net->ahead_next;
    for (int i = 0; rc == 0 && i < 2; i++)
        if ((rc = ahead_buffer(net, k, i, n[i], e)) == 0)
            rc = b->ops->upload_ahead(b, net->ahead_buf[k][i], src[i], n[i], e);
    if (rc)
        return rc;
    for (int i = 0; i < 2; i++) {
        net->ahead_src[i] = src[i];
        net->ahead_n[i] = n[i];
    }
    net->ahead_due = k + 1;
    net->ahead_next = 1 - k;
    return 1;
}

int nn_upload_settle(struct nn *net, struct pt_err *e)
{
    return take_ahead(net) ? net->bk->ops->sync(net->bk, e) : 0;
}

size_t nn_upload_taken(const struct nn *net)
{
    return net->ahead_taken;
}

int nn_upload_wait(struct nn *net, struct pt_err *e)
{
    struct backend *b = net->bk;
    return b->ops->upload_wait ? b->ops->upload_wait(b, e) : 0;
}

/* The first half of a step: inputs, forward pass, criteria (and, when training, the
 * output layer's gradient). Sets net->step_due when step_finish has work to do. */
static int step_forward(struct nn *net, struct minibatch *mb, int train, float rate,
                        struct nn_stats *st, struct pt_err *e)
{
    int ahead = take_ahead(net);
    if (net->graph)
        return nn_graph_forward(net, mb, train, rate, st, e);
    if (mb->cont && net->cfg.rnn != NN_SIMPLENET)
        return pt_err_set(e, PT_EUSER,
                          "%s: error: truncated = true (utterances in segments, the state carried "
                          "from one to the next) runs BrainScript networks; SimpleNetworkBuilder's "
                          "rnnType=%s trains on whole sequences (truncated = false)",
                          net->cfg.origin, net->rnn_name);
    struct step_inputs si = {0};
    memset(st, 0, sizeof *st);
    net->step_due = 0;
    nn_replay_cancel(net);
    if (net->team && train)
        return team_forward(net, mb, rate, st, e);
    if (net->team)
        nn_team_leave(net);
    int rc = find_inputs(net, mb, &si, e);
    if (rc)
        return rc;
    struct backend *b = net->bk;
    if (si.steps == 0 || si.nseq == 0) { /* nothing to learn from */
        if (train)
            b->ops->fill(b, net->grads, net->nparams, 0.0f);
        net->out = NULL;
        return b->ops->sync(b, e);
    }
    rc = nn_reserve(net, si.steps, si.nseq, e);
    struct nn_pass p = {.steps = si.steps, .nseq = si.nseq, .seq_labels = si.seq_labels};
    const float *crit_mask = NULL;
    if (rc == 0)
        rc = load_inputs(net, &si, &p, &crit_mask, &st->samples, 1, ahead, e);
    if (rc)
        return rc;
    p.train = train;
    p.dropout_rate = net->cfg.dropout ? rate : 0.0f;
    p.dropout_seed = nn_mix64(net->seed ^ 0x64726F706F7574ull, net->dropout_steps);
    net->step_due = train ? 2 : 1;
    if (train && ahead && nn_replay_defer(net, &p, crit_mask))
        return 0; /* the passes run as a recording, at the backward pass */
    nn_run_forward(net, &p);
    nn_run_criteria(net, crit_mask, train);
    return 0;
}

/* The second half: the backward pass when training, and the criteria into st. */
static int step_finish(struct nn *net, struct nn_stats *st, struct pt_err *e)
{
    if (net->graph)
        return nn_graph_finish(net, st, e);
    int due = net->step_due, rc = 0;
    net->step_due = 0;
    if (!due)
        return 0;
    struct backend *b = net->bk;
    if (due == 2)
        rc = net->team            ? team_backward(net, e)
             : nn_replay_due(net) ? nn_replay_run(net, e)
                                  : nn_run_backward(net, e);
    return rc ? rc : nn_read_criteria(b, net->stats_dev, 0, st, e);
}

/* The criteria of st from their sums as the device left them (two floats each). */
static void criteria_from(const float *sums, int more, struct nn_stats *st)
{
    st->train_crit = (double)sums[0] + sums[1];
    st->eval_crit = (double)sums[2] + sums[3];
    for (int k = 0; k < more; k++)
        st->eval_more[k] = (double)sums[4 + 2 * k] + sums[5 + 2 * k];
}

int nn_read_criteria(struct backend *b, const float *sums_dev, int more, struct nn_stats *st,
                     struct pt_err *e)
{
    float sums[2 * (NN_EVAL_MAX + 1)];
    int rc = b->ops->download(b, sums, sums_dev, 4 + 2 * (size_t)more, e);
    if (rc == 0)
        rc = b->ops->sync(b, e);
    if (rc == 0)
        criteria_from(sums, more, st);
    return rc;
}

void nn_criteria_from_sums(const float *host, struct nn_stats *st)
{
    criteria_from(host, 0, st);
}

int nn_train_backward_to(struct nn *net, struct nn_stats *st, float *host, struct pt_err *e)
{
    struct backend *b = net->bk;
    if (net->graph || net->team || !b->ops->download_async || !host)
        return nn_train_backward(net, st, e);
    int due = net->step_due, rc = 0;
    net->step_due = 0;
    if (!due)
        return 0; /* nothing ran: st is complete */
    if (due == 2)
        rc = nn_replay_due(net) ? nn_replay_run(net, e) : nn_run_backward(net, e);
    if (rc == 0)
        rc = b->ops->download_async(b, host, net->stats_dev, NN_CRIT_SUMS, e);
    return rc ? rc : 1;
}

int nn_train_forward(struct nn *net, struct minibatch *mb, float dropout_rate, struct nn_stats *st,
                     struct pt_err *e)
{
    net->step_due = 0;
    net->fused_due = 0;
    if (!(dropout_rate >= 0.0f && dropout_rate < 1.0f))
        return pt_err_set(e, PT_EUSER, "error: dropoutRate must be in [0, 1), got %g",
                          (double)dropout_rate);
    int rc = step_forward(net, mb, 1, dropout_rate, st, e);
    net->dropout_steps++;
    return rc;
}

int nn_train_backward(struct nn *net, struct nn_stats *st, struct pt_err *e)
{
    return step_finish(net, st, e);
}

int nn_train_step(struct nn *net, struct minibatch *mb, float dropout_rate, struct nn_stats *st,
                  struct pt_err *e)
{
    int rc = nn_train_forward(net, mb, dropout_rate, st, e);
    return rc ? rc : nn_train_backward(net, st, e);
}

int nn_evaluate(struct nn *net, struct minibatch *mb, struct nn_stats *st, struct pt_err *e)
{
    int rc = step_forward(net, mb, 0, 0.0f, st, e);
    return rc ? rc : step_finish(net, st, e);
}

int nn_can_fuse_sgd(const struct nn *net)
{
    if (net->graph || !net->bk->ops->gemm_sgd)
        return 0;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->param_count && !(net->layers[i]->ops->flags & NN_LAYER_FUSES_SGD))
            return 0;
    return 1;
}

void nn_set_fused_sgd(struct nn *net, const struct bk_sgd *u)
{
    net->fused_due = u != NULL && nn_can_fuse_sgd(net);
    if (u)
        net->fused = *u;
}

void nn_set_grad_ready(struct nn *net, nn_grad_ready_fn fn, void *ctx)
{
    net->grad_ready = fn;
    net->grad_ready_ctx = ctx;
}

int nn_get_output(struct nn *net, float *host, size_t cap, size_t *rows, size_t *cols,
                  struct pt_err *e)
{
    size_t r = net->graph ? (size_t)net->graph->nodes[net->graph->out].rows
                          : (size_t)net->cfg.sizes[net->cfg.nsizes - 1];
    if (!net->out)
        return pt_err_set(e, PT_EUSER, "error: the network has no output yet (no minibatch ran)");
    *rows = r;
    *cols = net->out_cols;
    if (r * net->out_cols > cap)
        return pt_err_set(e, PT_EUSER, "error: output buffer of %zu floats is too small for %zu",
                          cap, r * net->out_cols);
    *rows = r;
    *cols = net->out_cols;
    return net->bk->ops->download(net->bk, host, net->out, r * net->out_cols, e);
}
