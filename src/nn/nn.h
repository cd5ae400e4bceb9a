/* Networks, layers and model files (SPEC 4, 8).
 *
 * A network is built from a SimpleNetworkBuilder block (nn_config_read) and runs on a
 * struct backend. All its parameters live in ONE arena: layers report their parameter
 * counts, then get views into one contiguous `params` buffer and a matching `grads`
 * buffer. The tensor table names each piece (offset, rows, cols; W is out x in
 * column-major, a bias is one column), for the 1-bit quantizer and checkpoints.
 *
 *   SIMPLENET: H(i+1) = f(W(i) H(i) + B(i)); the output layer is linear into the criterion.
 *   LSTM:      stacked peephole LSTM layers, then W_out (no bias) on the last real step of
 *              each sequence (labels with one row per sequence) or on every real step
 *              (labels with a row per feature row).
 *
 * The network reads the minibatch inputs "features" and "labels" (data/minibatch.h).
 * Criteria and gradients are SUMS over samples (SPEC 5). A training step allocates nothing
 * unless the minibatch is larger (more sequences or more steps) than any before it.
 *
 * Pointers called "device" below come from the backend (math/backend.h): with the CPU
 * backend they are ordinary host memory; otherwise move data with nn_get_params /
 * nn_set_params or the backend's upload/download.
 */
#ifndef PT_NN_NN_H
#define PT_NN_NN_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "core/err.h"
#include "math/backend.h"
#include "parsers/schema.h"

struct minibatch;
struct nn;

extern const struct cfg_schema nn_simple_builder_schema; /* SimpleNetworkBuilder = [...] */

#define NN_MAX_HIDDEN 64 /* hidden layers */
#define NN_MAX_DIM    (1 << 24)

enum nn_rnn_type { NN_SIMPLENET, NN_LSTM, NN_GRAPH /* a BrainScriptNetworkBuilder network */ };

#define NN_BS_MAX 131072 /* bytes of a BrainScript network description (NDL: as translated) */
/* evaluation nodes a network reports (BrainScript's evaluationNodes): the first as
 * nn_stats.eval_crit, the others in eval_more */
#define NN_EVAL_MAX 7

/* The network description: everything SimpleNetworkBuilder says (model files store it). */
struct nn_config {
    enum nn_rnn_type rnn;
    int nsizes;                         /* entries of sizes: input, hidden..., output */
    int sizes[NN_MAX_HIDDEN + 2];       /* layerSizes */
    enum bk_act acts[NN_MAX_HIDDEN];    /* layerTypes, one per hidden layer (SIMPLENET) */
    enum bk_crit_kind train_crit;       /* BK_CRIT_CE_SOFTMAX or BK_CRIT_SQUARE_ERR */
    enum bk_crit_kind eval_crit;        /* any bk_crit_kind */
    char train_name[32], eval_name[32]; /* as configured, canonical case ("ErrorPrediction") */
    int uniform_init;
    double init_scale;
    int mean_var_norm, need_prior, dropout; /* applyMeanVarNorm, needPrior, addDropoutNodes */
    double gate_init[3];                    /* input, forget, output gate biases (LSTM) */
    double hidden_activity;                 /* defaultHiddenActivity (LSTM) */
    /* rnnType = CLASSLSTM (class_lm 1) or CLASSLM (2), read into the BrainScript network it
     * describes (class_lm.c): set while SimpleNetworkBuilder's keys are read, with
     * lookupTableOrder, vocabSize, nbrClass and recurrentLayer (bit i: hidden layer i + 1
     * is recurrent); the network is then NN_GRAPH */
    int class_lm, lookup_order, vocab_size, classes, add_prior;
    uint64_t recurrent;
    char origin[256]; /* where layerSizes was set ("x.cfg:4:14", or the model file) */
    /* NN_GRAPH: the BrainScript description with $variables$ replaced, where it starts, and
     * the input node the training criterion compares with (one-hot checks). sizes[0] and
     * sizes[nsizes - 1] are that criterion's first feature input's and labels' dims. */
    char bs_file[256];
    int bs_line, bs_col;
    char labels_input[64];
    char norm_input[64]; /* NN_GRAPH: the Input whose Mean / InvStdDev the network uses */
    /* NN_GRAPH: further Inputs with statistics (TIMIT's autoencoder normalizes featIn and
     * featOut): the statistics are one vector, norm_input's rows then each of these in
     * order (norm_rows[0] rows, then norm_rows[1 + i]); sizes[0] is their sum */
#define NN_NORM_MORE 3
    char norm_more[NN_NORM_MORE][64];
    int n_norm_more;
    int norm_rows[1 + NN_NORM_MORE];
    /* NN_GRAPH: the criteria's node kinds, as the summary names them ("Sqrt" for a node of
     * the network's own as the criterion, else the criterion's kind) */
    char train_kind[48], eval_kind[48];
    /* NN_GRAPH, a network only evaluated (the builder of an action=test or write block, or
     * a model that a test names nodes of; never saved): no criterion needed, BS.Network.Load
     * allowed where the description is the user's config's (load_ok), and the names the
     * action asks for (comma-separated): outputNodeNames (want_eval 0: the output node
     * where the network names none), or evalNodeNames (1: the nodes reported, any of the
     * network's) */
    int eval_only, want_eval, load_ok;
    char want[512];
    /* NN_GRAPH: the model file whose network this is, CNTK's `BrainScriptNetworkBuilder =
     * (BS.Network.Load ("PATH"))`: a training starts from its values (never saved: the
     * description is the file's own), or "" */
    char start_model[1024];
    /* CNTK's `(new ComputationNetwork ([ ... ].fit))`: the record member that is the network
     * (its nodes the roots, its tags the criteria), or "" for the record itself */
    char bs_root[64];
    int from_model; /* the description of a model file, whose values follow (a Parameter's
                     * init = 'fromFile' reads no file) */
    char bs_text[NN_BS_MAX];
};

/* Read a BrainScriptNetworkBuilder (or ExperimentalNetworkBuilder) block into *out: the
 * description is parsed and evaluated into its node graph here, so every error (syntax,
 * names, shapes) names FILE:LINE:COL in the config. */
int nn_bs_config_read(struct cfg_node *block, struct nn_config *out, struct pt_err *e);
/* The same for a network that an action=test (want_eval 1) or write (0) block's builder
 * makes, to be evaluated (nn_config.eval_only): want[0 .. nwant) are its evalNodeNames or
 * outputNodeNames. BS.Network.Load reads a model's network into it (bs_load.c); nn_new
 * gives the loaded parameters their trained values. */
/* The network builder that block sees (local: its own only), in CNTK's precedence:
 * NDLNetworkBuilder (CNTK's NDL, read as BrainScript: ndl.c), BrainScriptNetworkBuilder or
 * its old name ExperimentalNetworkBuilder: a block (a `$name$` standing for one resolved),
 * or CNTK's expression form, a value; *out NULL when there is none. */
int nn_find_builder(struct cfg_node *block, int local, struct cfg_node **out, struct pt_err *e);
int nn_bs_config_read_eval(struct cfg_node *block, int want_eval, const char *const *want,
                           size_t nwant, struct nn_config *out, struct pt_err *e);

/* Line i (from 0) describing a BrainScript network's nodes other than its parameters,
 * "name=Operation (input, input)", into buf; 0 past the last one (at once for a
 * SimpleNetworkBuilder network, whose parameters are its tensors). */
int nn_node_text(const struct nn *net, int i, char *buf, size_t size);
/* The network's topology in Graphviz's dot language, as CNTK's plot action writes it
 * (dot.c): a SimpleNetworkBuilder feed-forward network with CNTK's node names, a
 * BrainScript or NDL one as written. */
int nn_write_dot(const struct nn *net, FILE *f, struct pt_err *e);

/* A BrainScript network's output node's name (outputNodes' first, else the training
 * criterion's prediction), or NULL for a SimpleNetworkBuilder network. */
const char *nn_output_name(const struct nn *net);

/* A BrainScript network's node counts for CNTK's summary (all nodes; nodes with a
 * gradient); 0 for a SimpleNetworkBuilder network. */
int nn_node_counts(const struct nn *net, int *nodes, int *with_grad);

/* One parameter tensor in the arena. */
struct nn_tensor {
    char name[64];  /* "W0", "B0", ..., "LSTM0.Wx", "LSTM0.Wh", "LSTM0.B", "LSTM0.peep", a node's */
    size_t offset;  /* first float in params / grads */
    int rows, cols; /* column-major, rows x cols floats from offset */
};

/* What one minibatch gave. Criteria are sums over `samples` (not means). */
struct nn_stats {
    double train_crit; /* the training criterion */
    double eval_crit;  /* the evaluation criterion (ClassificationError: wrong argmax count) */
    double eval_more[NN_EVAL_MAX - 1]; /* the further evaluation nodes (nn_eval_more) */
    size_t samples;      /* counted label columns: frames, or sequences (sequence labels) */
    size_t team_samples; /* in a team (nn_set_team): samples summed over the members */
};

/* Read the SimpleNetworkBuilder keys through nn_simple_builder_schema (lookups climb to
 * enclosing blocks) into *out and check them for consistency (layerSizes has >= 2 entries,
 * >= 3 for LSTM; layerTypes not longer than the hidden layers; ...). Errors name the
 * value's origin. On failure *out is unspecified. */
int nn_config_read(struct cfg_node *block, struct nn_config *out, struct pt_err *e);

/* Build a network for cfg on backend b (which must outlive it), parameters initialized
 * from seed (SPEC 4: uniformInit/initValueScale; biases 0, LSTM gate biases from the
 * *InitVal keys). Same seed, same parameters. Mean/invstd start as 0/1, the prior empty.
 * On failure *out is NULL and nothing is leaked. */
int nn_new(const struct nn_config *cfg, struct backend *b, uint64_t seed, struct nn **out,
           struct pt_err *e);

/* Free the network and its device buffers. NULL is a no-op. */
void nn_free(struct nn *net);

/* The description the network was built from (owned by the network). */
const struct nn_config *nn_get_config(const struct nn *net);
/* The description as SimpleNetworkBuilder config lines (model files; canonical: equal
 * descriptions give equal text). Returns the length written (snprintf semantics: >= size
 * means truncated). */
int nn_config_write(const struct nn_config *c, char *buf, size_t size);

/* Floats in the parameter arena (and in the gradient arena). */
size_t nn_param_count(const struct nn *net);
/* The learned ones among them: the first nn_learned_count; the rest are states (a
 * BatchNormalization's running statistics), in the model but changed by no learner. */
size_t nn_learned_count(const struct nn *net);
/* h (an FNV-1a 64 state) continued over the values the network read from files beside its
 * description (a BrainScript EmbeddingLayer's embeddingPath); h itself where there are
 * none. The ranks compare it before training: equal descriptions, different files. */
uint64_t nn_fixed_values_hash(const struct nn *net, uint64_t h);

/* The arenas (device pointers owned by the network, stable for its lifetime). The learner
 * updates params in place; grads hold the last nn_train_step's gradient sums. */
float *nn_params(struct nn *net);
float *nn_grads(struct nn *net);

/* The tensor table (owned by the network); *count receives its length. Tensors are
 * listed in arena order and cover it without gaps. */
const struct nn_tensor *nn_tensors(const struct nn *net, size_t *count);
/* The states' tensors (nn_learned_count onwards; none but in a BrainScript network with
 * batch normalization), in arena order. */
const struct nn_tensor *nn_state_tensors(const struct nn *net, size_t *count);
/* Where the first node that moves states in a training pass was defined (a
 * BatchNormalization's FILE:LINE:COL), or NULL where none does. */
const char *nn_moving_states(const struct nn *net);

/* Copy the parameter arena to / from host memory (nn_param_count floats), or the gradient
 * arena to host. Fail only on a backend error. */
int nn_get_params(struct nn *net, float *host, struct pt_err *e);
int nn_set_params(struct nn *net, const float *host, struct pt_err *e);
int nn_get_grads(struct nn *net, float *host, struct pt_err *e);

/* One training step on mb: forward, criteria, backward. grads are overwritten with the
 * gradient of the training criterion summed over the minibatch's samples. dropout_rate in
 * [0, 1) applies when the network has addDropoutNodes (0 = off); each call draws a new
 * mask (deterministic from the seed and the number of steps taken). st receives the
 * criteria. Errors (PT_EUSER): missing "features"/"labels" input, dimensions that
 * disagree with layerSizes, label steps that fit neither frame nor sequence labels. After
 * a failure grads and st are unspecified; params are untouched. */
int nn_train_step(struct nn *net, struct minibatch *mb, float dropout_rate, struct nn_stats *st,
                  struct pt_err *e);
/* nn_train_step in two halves, for callers that time them (timelineFile):
 * nn_train_forward uploads the inputs, runs the forward pass and the criteria (st->samples
 * is set); nn_train_backward, called next, runs the backward pass (with the grad-ready
 * hook) and fills the criteria of st. The pair does exactly what nn_train_step does; a
 * minibatch without samples needs no backward pass (nn_train_backward returns 0 at once).
 * nn_train_backward without a successful nn_train_forward before it does nothing. */
int nn_train_forward(struct nn *net, struct minibatch *mb, float dropout_rate, struct nn_stats *st,
                     struct pt_err *e);
int nn_train_backward(struct nn *net, struct nn_stats *st, struct pt_err *e);

/* Inputs sent ahead, on a device backend with upload_ahead: mb's features and labels are
 * copied to the device, into buffers of their own, beside the step queued last (the one
 * before mb's: call this once that step is queued). The next nn_train_step,
 * nn_train_forward or nn_evaluate (that one only) takes them when it is given the same
 * data, else uploads as ever. mb's data must stay as they are until that step has ended,
 * an nn_upload_wait has returned, or nn_upload_settle. Returns 1 when
 * sent, 0 where it does not apply: a backend without upload_ahead, BrainScript networks, a
 * team, a device backend's data not in its host memory (host_alloc), a minibatch the step
 * would refuse (the step says why). Fails (< 0) only when the device does. On the CPU the
 * copy is made at once (the same path, tested without a device). */
int nn_upload_ahead(struct nn *net, struct minibatch *mb, struct pt_err *e);
/* Wait for copies nn_upload_ahead queued that no step took (before their host memory is
 * freed or written). */
int nn_upload_settle(struct nn *net, struct pt_err *e);
/* How many steps took inputs sent ahead, since the network was made. */
size_t nn_upload_taken(const struct nn *net);
/* Wait until the copies nn_upload_ahead queued so far are done, with every step queued
 * before the last of them; reports a failure of the device. */
int nn_upload_wait(struct nn *net, struct pt_err *e);

/* Criteria read later: nn_train_backward, but where the backend can (download_async) and
 * the network reads its criteria as two sums (SimpleNetworkBuilder's, no team), the sums
 * are queued for a copy into host[0..NN_CRIT_SUMS) (host_alloc memory) instead of waited
 * for, and 1 is returned: st is then complete but for its criteria, which
 * nn_criteria_from_sums fills once the backend has synced (or an nn_upload_wait has waited
 * for a copy sent after this step). Else (0, or < 0 on failure) what nn_train_backward
 * does. */
#define NN_CRIT_SUMS 4
int nn_train_backward_to(struct nn *net, struct nn_stats *st, float *host, struct pt_err *e);
void nn_criteria_from_sums(const float *host, struct nn_stats *st);

/* Steps replayed (a backend with capture_begin: the CUDA backend's graphs): with `on`, a
 * training step whose inputs were sent ahead (nn_upload_ahead), without dropout, padding
 * masks, a team or a grad-ready hook, runs its passes (forward, criteria, backward) as one
 * recording of the backend's, made from the second step of the same shape and the same
 * buffers, and replayed at every later one: the same ops with the same values, one call
 * to queue them. The forward pass then runs at nn_train_backward(_to), not at
 * nn_train_forward. A recording that fails (an op needed the host) costs nothing but that
 * try: the step runs unrecorded; after a few failures the network stops trying. Freed
 * device memory (struct backend's `freed`) ends every recording. Returns 1 when turned
 * on, 0 where the backend cannot record (then nothing changes). nn_replay_counts: steps
 * replayed, recordings made, recordings that failed, since the network was made. */
int nn_set_step_replay(struct nn *net, int on);
void nn_replay_counts(const struct nn *net, size_t *replayed, size_t *recorded, size_t *failed);

/* Overlap hook: during nn_train_step's backward pass, fn(ctx, first, e) is called each
 * time the gradients grads[first..nparams) have become final, `first` decreasing, once
 * per layer with parameters (first == 0 comes last). fn may read that range (to start
 * sending it) but not write it. A non-zero return fails the step with that status. fn
 * NULL removes the hook. */
typedef int (*nn_grad_ready_fn)(void *ctx, size_t first, struct pt_err *e);
void nn_set_grad_ready(struct nn *net, nn_grad_ready_fn fn, void *ctx);

/* The optimizer inside the backward pass. nn_can_fuse_sgd: 1 when every layer with
 * parameters can apply a momentum SGD step as its gradients become final and the backend
 * runs it in the weight-gradient products (gemm_sgd), else 0 (the node graphs of
 * BrainScript networks, LSTM layers, backends without it). nn_set_fused_sgd: the next
 * nn_train_backward (that one only) also applies u, sgd_update's step with the momentum
 * arena u->s (nn_param_count floats, laid out as the parameters; u->w is unused), to
 * every parameter: afterwards params and u->s are what sgd_update over the whole arena
 * would have made of them, bit for bit, and grads is unspecified (the weight gradients
 * are never stored). Only when nn_can_fuse_sgd; u NULL cancels. */
int nn_can_fuse_sgd(const struct nn *net);
void nn_set_fused_sgd(struct nn *net, const struct bk_sgd *u);

/* Ranks of one host training one model in shared memory (DataParallelSGD with
 * shareModelInHost). The parameters, the momentum and the activations of the whole
 * minibatch (every member's share of it, back to back) live in memory every member maps.
 * Each member loads its share; then, layer by layer, it computes its share of the rows of
 * every hidden layer's output for all the minibatch's columns; the output layer and the
 * criteria an equal part of the columns each; backward, its share of each layer's input
 * rows of dx and the fused momentum SGD step of the same columns of W (and its rows of the
 * bias) from all columns, with a team sync after each layer. No gradient is summed,
 * copied or sent; every member packs only its share of each weight matrix; the step is
 * the one-rank step of the whole minibatch, shared out. The caller provides the team's
 * operations; every one is collective. */
struct nn_team {
    int rank, size;  /* this member, of size >= 2 */
    size_t *scratch; /* 2 * size values for the network (allocated by the caller: nothing
                        the network allocates can fail on one member only) */
    void *ctx;
    /* n floats every member maps, zeroed; release unmaps (local) */
    int (*alloc)(void *ctx, size_t n, float **out, struct pt_err *e);
    void (*release)(void *ctx, float *p, size_t n);
    /* waits for every member; their writes before it are seen after it */
    int (*sync)(void *ctx, struct pt_err *e);
    /* all[k] = member k's v, for every member k; a sync as well */
    int (*gather)(void *ctx, size_t v, size_t *all, struct pt_err *e);
};
/* 1 when the network can train as a team: nn_can_fuse_sgd and every layer a dense one. */
int nn_can_team(const struct nn *net);
/* Move the parameters into team memory (collective; every member's parameters are the
 * same: member 0's are copied, t->sync follows). From then on nn_train_forward and
 * nn_train_backward are collective over the team: every member calls them for every
 * minibatch, also with no sequences of its own; nn_train_forward sets st->team_samples;
 * the backward pass runs only with a fused step (nn_set_fused_sgd with the team's
 * samples), which it then applies to the whole model together. nn_evaluate stays local.
 * *mem (may be NULL): n floats of team memory for the caller (the learner's momentum),
 * copied from *mem's old contents the same way; release with nn_team_release. The team
 * workspace is made for cols columns now (a minibatch with more grows it). Fails on every
 * member alike, leaving the network as it was; t must outlive the network. */
int nn_set_team(struct nn *net, const struct nn_team *t, float **mem, size_t n, size_t cols,
                struct pt_err *e);
void nn_team_release(struct nn *net, float *mem, size_t n);
/* A team sync (0 at once without a team): before parameters written by one member
 * outside the step (a model loaded, a file written from them) are used again. */
int nn_team_sync(struct nn *net, struct pt_err *e);

/* Forward pass and criteria only (no dropout, grads untouched). Same errors. */
int nn_evaluate(struct nn *net, struct minibatch *mb, struct nn_stats *st, struct pt_err *e);

/* The output layer's values (before any softmax) of the last nn_train_step/nn_evaluate:
 * *rows x *cols floats, column-major, copied into host (cap floats; PT_EUSER when too
 * small, with *rows and *cols set, or when nothing ran yet). Columns are as the criterion saw them:
 * one per sequence (sequence labels) or one per step of each sequence (t * nseq + s), padding
 * included. */
int nn_get_output(struct nn *net, float *host, size_t cap, size_t *rows, size_t *cols,
                  struct pt_err *e);

/* applyMeanVarNorm: set the frozen feature mean and 1/stddev (dim = input size, host
 * memory, copied). Used by every later forward pass and saved with the model. PT_EUSER
 * when dim is wrong or the network was not built with applyMeanVarNorm. */
int nn_set_mean_var(struct nn *net, const float *mean, const float *invstd, int dim,
                    struct pt_err *e);
/* The current mean and 1/stddev (host copies owned by the network, input size floats). */
void nn_get_mean_var(const struct nn *net, const float **mean, const float **invstd);

/* needPrior: set the label prior (dim = output size, copied; saved with the model). */
int nn_set_prior(struct nn *net, const float *prior, int dim, struct pt_err *e);
/* The prior (owned by the network), or NULL when never set; *dim receives its size. */
const float *nn_get_prior(const struct nn *net, int *dim);

/* The configured criterion names, for log lines ("CrossEntropyWithSoftmax",
 * "ClassificationError" or "ErrorPrediction", "SquareError"). */
const char *nn_train_criterion_name(const struct nn *net);
/* A BrainScript network's node called name, for action=write: 1 where it holds one column
 * of values per sample (or per sequence) after a forward pass, 0 where the network has no
 * node of that name, PT_EUSER (e says why) for a parameter or constant, or a node folded
 * into a fused layer (its value is never formed). */
int nn_value_node(const struct nn *net, const char *name, struct pt_err *e);
/* Such a node's values after the last forward pass: rows x cols (its columns in the pass,
 * as the output's) into host (cap floats); host NULL only sets rows and cols. */
int nn_node_values(struct nn *net, const char *name, float *host, size_t cap, size_t *rows,
                   size_t *cols, struct pt_err *e);
/* The network's inputs (a BrainScript network's Input nodes; features and labels of a
 * SimpleNetworkBuilder one): how many, and the k-th's name and dimension. */
int nn_input_count(const struct nn *net);
const char *nn_input_name(const struct nn *net, int k, int *dim);
/* Whether the value action=write calls `name` (a node; the output; HLast, PosteriorProb,
 * ScaledLogLikelihood of a SimpleNetworkBuilder network; an input itself) is computed from
 * input `input` (1 also where it cannot tell). */
int nn_output_reads(const struct nn *net, const char *name, const char *input);
/* The further evaluation nodes of a BrainScript network (evaluationNodes after the first;
 * nn_stats.eval_more): how many; for k below that, the k-th's name and node kind (NULL
 * pointers are not written). */
int nn_eval_more(const struct nn *net, int k, const char **name, const char **kind);
const char *nn_eval_criterion_name(const struct nn *net);

/* The dropout stream position (steps taken), for checkpoints. */
uint64_t nn_get_dropout_state(const struct nn *net);
void nn_set_dropout_state(struct nn *net, uint64_t state);

/* Save the model (description, parameters, mean/invstd, prior; SPEC 8) to path: written to
 * "path.tmp", fsync'd, then renamed over path, so path is either the old or the new
 * model. The directory must exist. PT_ESYS on I/O errors, naming the file. */
int nn_save(struct nn *net, const char *path, struct pt_err *e);

/* Build a network from a model file on backend b. A missing, truncated, corrupted or
 * foreign file is PT_EUSER with a message naming the file and the problem. On failure
 * *out is NULL. */
int nn_load(const char *path, struct backend *b, struct nn **out, struct pt_err *e);
/* Where input name's statistics begin in the network's statistics vector (nn_config's
 * norm_input, then norm_more), or -1 when it has none. */
int nn_norm_base(const struct nn_config *c, const char *name);
/* The same for a test that names nodes to report (evalNodeNames, want[0 .. nwant),
 * want_eval 1): a BrainScript network reports those of its nodes (any, as CNTK's
 * evalNodeNames) where it has all of them; or for a write (outputNodeNames, want_eval 0):
 * the nodes named keep their values (not folded into a fused layer). A
 * SimpleNetworkBuilder one is loaded as by nn_load. */
int nn_load_eval(const char *path, const char *const *want, size_t nwant, int want_eval,
                 struct backend *b, struct nn **out, struct pt_err *e);

/* One NDL text (a file's, without $variables$) as the BrainScript text an NDLNetworkBuilder's
 * network is read as (src/nn/ndl.c; *out malloc'd): each member after its "#@at LINE COL
 * FILE" line, the macros it calls first. The fuzz target, and MEL's new nodes. */
int nn_ndl_translate(const char *text, size_t len, const char *file, char **out, struct pt_err *e);

/* A feed-forward SimpleNetworkBuilder network (rnnType SIMPLENET) as the BrainScript
 * network it describes, with CNTK's node names (simple_bs.c): c becomes that NN_GRAPH
 * network, whose parameters nn_graph_copy_named fills from the SimpleNetworkBuilder one. */
int nn_simple_as_graph(struct nn_config *c, struct pt_err *e);

/* MEL's SaveModel (src/train/edit_mel.c), the SVD action (src/train/svd.c): each parameter
 * tensor of dst's graph that src's (a graph, or a feed-forward SimpleNetworkBuilder
 * network's tensors) has by the same name takes src's values (the same shape, else an error), and
 * dst takes src's feature statistics and label prior where it uses them with the same dims; the
 * rest keep dst's. *copied and *fresh count dst's tensors of each kind. */
int nn_graph_copy_named(struct nn *dst, struct nn *src, int *copied, int *fresh, struct pt_err *e);

/* *cfg as a model file at path would give it back: its description written out and read
 * again (the network's dims, inputs and criteria found anew, as after an edit of bs_text). */
int nn_config_reread(const char *path, struct nn_config *cfg, struct pt_err *e);

/* The network description of model file path (any kind), checked as loading checks it, into
 * *out; no network is made. */
int nn_model_config(const char *path, struct nn_config *out, struct pt_err *e);

/* Load a model file's parameters (and mean/invstd, prior) into an existing network, whose
 * structure (rnnType, layerSizes, layerTypes) must match the file's. On failure the
 * network is unchanged. */
int nn_load_params(struct nn *net, const char *path, struct pt_err *e);

/* Whether the network holds its feature statistics (nn_set_mean_var ran, or a model file
 * held them) and its label prior; a model saved without them (action=edit's, before any
 * pass over the data) holds none, and a training computes them. */
void nn_stats_held(const struct nn *net, int *mean_var, int *prior);

#endif
