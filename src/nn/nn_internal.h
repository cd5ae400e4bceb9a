/* Internal to src/nn: the network object, shared by net.c, step.c and model_io.c.
 *
 * A network is a stack of layers (nn/layer.h), each of a kind from the kind table
 * (layer.c), built from the description by net.c. */
#ifndef PT_NN_NN_INTERNAL_H
#define PT_NN_NN_INTERNAL_H

#include "nn/layer.h"
#include "nn/nn.h"

/* ------------------------------------------------------------------ the network */

#define NN_MAX_LAYERS  (2 * NN_MAX_HIDDEN + 3)
#define NN_MAX_TENSORS (NN_LAYER_MAX_TENSORS * NN_MAX_LAYERS)

/* How an rnnType stacks its layers (the table in net.c; nn_config.c reads it too). */
struct nn_rnn_kind {
    enum nn_rnn_type rnn;
    const char *name;   /* as rnnType spells it, for messages and model files */
    const char *hidden; /* the layer kind of every hidden layer */
    const char *select; /* a kind between the hidden stack and the output layer, or NULL */
    int output_bias;    /* the (dense, linear) output layer has a bias */
    int min_sizes;      /* layerSizes entries at least */
    int hidden_acts;    /* hidden layers take layerTypes' activations */
};
/* The row of rnn, or NULL for a value outside the table. */
const struct nn_rnn_kind *nn_rnn_kind(enum nn_rnn_type rnn);

struct nn_graph;

/* Appending to a fixed buffer; len keeps counting past the end (snprintf semantics), so
 * len >= size says the text did not fit (nn_config.c). */
struct nn_text {
    char *buf;
    size_t size, len;
};
void nn_text_add(struct nn_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* SimpleNetworkBuilder's CLASSLSTM or CLASSLM (c->class_lm) as the BrainScript network it
 * describes (class_lm.c): c becomes that NN_GRAPH network. */
int nn_class_lm(struct nn_config *c, struct pt_err *e);
/* A SimpleNetworkBuilder criterion's operation, CNTK's node name for it (simple_bs.c), or
 * NULL for one that has none (a network's own node). */
const char *nn_crit_op(enum bk_crit_kind k);
/* A BrainScript network description into c (NN_GRAPH), checked as a
 * BrainScriptNetworkBuilder's; where names its start in messages ("FILE:LINE:COL"). */
int nn_bs_config_text(const char *text, const char *where, struct nn_config *c, struct pt_err *e);

struct nn {
    struct nn_config cfg;
    struct backend *bk;
    uint64_t seed;
    uint64_t dropout_steps; /* training steps taken: the dropout stream position */
    int nlayers;
    struct nn_layer *layers[NN_MAX_LAYERS];
    const char *rnn_name;   /* rnnType, for messages */
    int seq_labels, masked; /* a layer selects (sequence labels) / reads the padding mask */
    size_t nparams;
    size_t nstate;         /* the last nstate of them: states, which no learner changes (graph.h) */
    float *params, *grads; /* device arenas, nparams each */
    size_t ntensors;       /* the learned ones; nstate_tensors states follow them */
    size_t nstate_tensors;
    struct nn_tensor *tensors; /* ntensors + nstate_tensors (allocated: NN_MAX_TENSORS for
                                * a layer stack, as many as a graph has) */
    /* normalization (applyMeanVarNorm): host copies and device copies, input size each */
    float *mean, *invstd, *mean_dev, *invstd_dev;
    float *prior;     /* host, prior_dim floats, or NULL */
    float *prior_dev; /* a BrainScript network's Mean of its labels (LogPrior): the prior on
                       * the device, uniform until set; NULL without */
    int prior_dim;
    int mean_set; /* nn_set_mean_var ran: mean / invstd are the data's (saved only then) */
    /* workspace: one device block carved for up to cap_steps x cap_nseq */
    float *ws;
    size_t cap_steps, cap_nseq;
    /* a team (nn_set_team; NULL: none): the parameters and the team workspace (team->size
     * columns, up to team_cap) in team memory; team_carved: the layers' views point into
     * the team workspace (the next nn_reserve carves the own one again) */
    const struct nn_team *team;
    float *team_ws;
    size_t team_cap, team_ws_n;
    int team_carved;
    float *x_dev, *labels_dev, *mask_dev, *crit_mask_dev, *stats_dev;
    /* the first layer's input in this pass: x_dev, or (CPU, no team) the minibatch's own
     * features normalized in place (load_inputs), or an ahead buffer; the labels: NULL
     * (labels_dev) or an ahead buffer */
    float *x_in, *labels_in;
    /* nn_upload_ahead: two pairs of device buffers (features, labels) filled in turn;
     * ahead_due = 1 + the pair filled for the next step (0: none), from host data at
     * ahead_src (features, labels) of ahead_n floats; ahead_on: inputs were sent ahead
     * (every step start is marked on the backend from then on) */
    float *ahead_buf[2][2];
    size_t ahead_cap[2][2];
    int ahead_next, ahead_due, ahead_on;
    size_t ahead_taken; /* steps that took their inputs so */
    const float *ahead_src[2];
    size_t ahead_n[2];
    float *mask_host, *crit_mask_host; /* host staging for the masks */
    struct bk_sgd fused;               /* nn_set_fused_sgd's step */
    int fused_due;                     /* ... for the next backward pass */
    nn_grad_ready_fn grad_ready;       /* nn_set_grad_ready, or NULL */
    void *grad_ready_ctx;
    /* the output of the last forward pass */
    const float *out;
    size_t out_cols;
    /* a forward pass ran whose second half is due (step.c): 0 none, 1 evaluation, 2
     * training (backward pass too) */
    int step_due;
    struct nn_graph *graph;   /* NN_GRAPH: the node graph (bs_net.c), else NULL */
    struct nn_replay *replay; /* nn_set_step_replay's recordings (step_replay.c), or NULL */
};

/* step.c: a training step's passes, which step_replay.c records and replays */
void nn_run_forward(struct nn *net, struct nn_pass *p);
void nn_run_criteria(struct nn *net, const float *crit_mask, int train);
int nn_run_backward(struct nn *net, struct pt_err *e);
/* step_replay.c. nn_replay_defer: whether this training step's passes (p, crit_mask, the
 * inputs in x_in and labels_in) wait for nn_replay_run, which the backward pass calls
 * instead of nn_run_backward while nn_replay_due says so; nn_replay_cancel: a step begins
 * (what was due is dropped); nn_replay_free: the recordings freed (nn_free). */
int nn_replay_defer(struct nn *net, const struct nn_pass *p, const float *crit_mask);
int nn_replay_due(const struct nn *net);
int nn_replay_run(struct nn *net, struct pt_err *e);
void nn_replay_cancel(struct nn *net);
void nn_replay_free(struct nn *net);

/* bs_net.c: build a NN_GRAPH network's graph, arena and tensor table (for nn_new), and its
 * two step halves (step.c calls them for NN_GRAPH). */
int nn_graph_setup(struct nn *net, struct pt_err *e);
int nn_graph_forward(struct nn *net, struct minibatch *mb, int train, float rate,
                     struct nn_stats *st, struct pt_err *e);
int nn_graph_finish(struct nn *net, struct nn_stats *st, struct pt_err *e);
void nn_graph_release(struct nn *net);
/* The criterion sums of a pass (device floats: training, evaluation and `more` further
 * evaluation nodes, each a double split in two floats) into st (step.c). */
int nn_read_criteria(struct backend *b, const float *sums_dev, int more, struct nn_stats *st,
                     struct pt_err *e);

/* applyMeanVarNorm's mean (0) and 1/stddev (1), sizes[0] each, host and device (net.c). */
int nn_alloc_norm(struct nn *net, struct pt_err *e);
/* prior_dev, uniform until nn_set_prior(). */
int nn_alloc_prior(struct nn *net, struct pt_err *e);
int nn_graph_param_count(const struct nn_config *cfg, size_t *count, struct pt_err *e);
/* A NN_GRAPH description's graph, built as nn_new builds it (bs_net.c). */
int nn_graph_build(const struct nn_config *cfg, struct nn_graph **out, struct pt_err *e);
/* model_io.c: BS.Network.Load's reader (bs_build_opts.load; ctx unused): the network
 * description of a model file, which must be a BrainScript one. */
int nn_model_description(void *ctx, const char *path, struct nn_config *out, struct pt_err *e);
/* model_io.c: the trained values of the parameters of g that BS.Network.Load made, into
 * host (the arena, as g lays it out), and the models' Mean / InvStdDev and prior into net
 * where its network has them. */
int nn_graph_fill_loaded(struct nn *net, const struct nn_graph *g, float *host, struct pt_err *e);

/* The parameter count a description gives, without building the network (checks the
 * description as nn_new does). */
int nn_config_param_count(const struct nn_config *cfg, size_t *count, struct pt_err *e);

/* Make the workspace big enough for steps x nseq (grows, never shrinks). */
int nn_reserve(struct nn *net, size_t steps, size_t nseq, struct pt_err *e);
/* A team step's workspace for the team's `total` columns, this member's steps x nseq from
 * column col0 (collective), and the layers' team fields; nn_team_leave clears those (a
 * step outside the team). */
int nn_team_reserve(struct nn *net, size_t col0, size_t total, size_t steps, size_t nseq,
                    struct pt_err *e);
void nn_team_leave(struct nn *net);
/* Point this member's views (inputs, layers) at the team's columns from col0 on. */
void nn_team_view(struct nn *net, size_t col0);

/* ------------------------------------------------------------------ config text */

/* Whether two descriptions build the same parameter layout. */
int nn_config_same_layout(const struct nn_config *a, const struct nn_config *b);

/* ndl.c: an NDLNetworkBuilder block's network (its NDL files, or the config sections its
 * run= and load= name) as BrainScript text (*text, malloc'd) that bs_config.c reads as a
 * BrainScriptNetworkBuilder's; file: the NDL file it comes from (or the config's). */
int nn_ndl_text(struct cfg_node *block, char **text, char *file, size_t fsize, struct pt_err *e);

#endif
