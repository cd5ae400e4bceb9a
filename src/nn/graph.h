/* The node graph behind BrainScript networks (internal to src/nn).
 *
 * A graph is a list of nodes in creation order, which is a topological order: a node's
 * inputs are made before it (the evaluator, bs_eval.c, evaluates a definition before it
 * uses it). Each node has a kind from the table in graph_nodes.c: its name as BrainScript
 * spells it, its number of inputs, a shape rule, and a forward and a backward function
 * that work through the backend's operations (math/backend.h), so the graph runs wherever
 * the backend does.
 *
 * Shapes: a node is rows x cols. cols > 0 is a fixed width (parameters, constants); cols
 * == 0 means one column per sample of the minibatch (inputs and everything computed from
 * them). rows == 0 (or cols == 0 on a parameter) is "inferred": the first operation that
 * uses the node fixes it (Times (W, x) gives W as many columns as x has rows; Plus gives a
 * bias the rows of the other operand), as CNTK's Inferred dimensions do.
 *
 * Parameters live in the network's one arena (nn.h): graph_layout assigns each its offset,
 * in creation order. */
#ifndef PT_NN_GRAPH_H
#define PT_NN_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "math/backend.h"
#include "nn/nn.h"

#define G_MAX_IN     6
#define G_MAX_IGNORE 16 /* EditDistanceError's tokensToIgnore */
#define G_MAX_NODES  4096
#define G_MAX_LOADED 4 /* models that BS.Network.Load reads into one network */

struct nn_graph;
struct g_node;

/* Parameter initializations (CNTK's init= names; bs_builtins.c maps them). */
/* BrainScript's tag= on a node: the node group it joins (CNTK's feature, label, criterion,
 * evaluation and output groups), for a network that names no criterionNodes, ... */
enum g_tag {
    G_TAG_NONE,
    G_TAG_FEATURE,
    G_TAG_LABEL,
    G_TAG_CRITERION,
    G_TAG_EVALUATION,
    G_TAG_OUTPUT
};

enum g_init {
    G_INIT_UNIFORM,        /* U(-0.05 s, 0.05 s) */
    G_INIT_GAUSSIAN,       /* N(0, 0.2 s / sqrt(fanIn)) */
    G_INIT_XAVIER,         /* U(-r, r), r = s sqrt(3 / fanIn) */
    G_INIT_GLOROT_UNIFORM, /* U(-r, r), r = s sqrt(6 / (fanIn + fanOut)) */
    G_INIT_GLOROT_NORMAL,  /* N(0, s sqrt(2 / (fanIn + fanOut))) */
    G_INIT_HE_UNIFORM,     /* U(-r, r), r = s sqrt(6 / fanIn) */
    G_INIT_HE_NORMAL,      /* N(0, s sqrt(2 / fanIn)) */
    G_INIT_NORMAL,         /* N(0, s) (CNTK's 'normal': no fan scaling) */
    G_INIT_UNIFORM1,       /* U(-s, s) (CNTK's 'uniform1') */
    G_INIT_TRUNC_NORMAL,   /* N(0, s), values beyond 2 s drawn again (CNTK's 'TruncNormal') */
    G_INIT_FIXED,          /* every value init_value */
    G_INIT_DATA            /* the values in data (init = 'fromFile'); zeros without */
};

struct g_kind {
    const char *name; /* BrainScript's name ("Times", "Sigmoid", "CrossEntropyWithSoftmax") */
    int nin;          /* inputs */
    int crit;         /* a criterion: the bk_crit_kind + 1 (inputs: labels, prediction), else 0 */
    /* Fix this node's shape from its inputs' (inferring theirs where they are open); 0 or
     * a PT_EUSER naming the node and the shapes. */
    int (*shape)(struct nn_graph *g, struct g_node *n, struct pt_err *e);
    void (*forward)(struct nn_graph *g, struct g_node *n);
    /* ADD this node's contribution to the gradients of its inputs that need one. */
    void (*backward)(struct nn_graph *g, struct g_node *n);
    /* Floats of scratch the node keeps from its forward to its backward pass, for a pass
     * of ncols columns over nseq sequences (NULL: none); carved into n->ws. */
    size_t (*workspace)(const struct g_node *n, size_t ncols, size_t nseq);
    /* Bit k: backward writes input k's whole gradient in one operation, and writes it over
     * (not adds) when that input's g_over is set. */
    unsigned overwrites;
};

struct g_node {
    const struct g_kind *kind;
    char name[64];  /* where BrainScript defined it ("p", "h1.W"), or "" */
    char where[96]; /* FILE:LINE:COL of the expression that made it */
    int in[G_MAX_IN];
    const struct g_kind *src_kind; /* the kind and inputs as written (fusion changes */
    int src_in[G_MAX_IN];          /* kind and in; these stay, for descriptions) */
    int rows, cols;
    enum g_tag tag; /* tag= as written (BrainScript), G_TAG_NONE without */
    int seq1;       /* a data node (cols 0) with one column per sequence, not per step
                     * (BS.Sequences.Last / First, and what is computed from them) */
    /* Input */
    int is_input, sparse;
    /* the rank of the tensor whose values this node's rows hold, first axis fastest, when
     * it is more than 1 (an Input {28:28:1} and what is computed element by element from
     * it); 0 for a vector. Splice refuses such a node (its axis 1 would interleave). */
    int tensor_rank;
    int tdims[3]; /* with tensor_rank > 1: the image's dims (x, y, channels; 1 beyond rank) */
    /* Convolution and Pooling: the geometry (x's image to this node's) */
    struct bk_conv conv;
    /* Parameter (learnable) and Constant. A state is a parameter that no learner changes
     * (learningRateMultiplier 0): kept in the model, after the learned ones in the arena
     * (BatchNormalization's running statistics, which its forward pass updates). */
    int learnable, is_const, state;
    enum g_init init;
    int fan_swap;   /* initOutputRank = -1: the matrix's last dimension is its output (the
                     * fans of a random initialization swapped) */
    int fan_filter; /* a convolution kernel: its window's cells (rows are the fan-in, cols
                     * times this the fan-out, as CNTK's initFilterRank) */
    double init_scale, init_value;
    float *data;   /* a Constant's values, or a Parameter's from a file (rows x cols,
                    * column-major; owned), NULL: init_value */
    int mean_row;  /* a Constant row of 1 / cols (ReduceMean), cols inferred */
    size_t offset; /* arena offset of a learnable node */
    /* BatchNormalization: per map of an image (spatial) or per row; the running
     * statistics' time constant in samples (0: the last minibatch only, inf: frozen, < 0:
     * all samples alike) and epsilon */
    int bn_spatial;
    double bn_tc, bn_eps;
    /* RecurrentLSTM: run from the last step to the first (goBackwards) */
    int reverse;
    /* PastValue / FutureValue: the delay in steps (> 0 looks back, < 0 ahead) and the value
     * before the first (after the last) step */
    int delay;
    double delay_default;
    /* Affine (a fused Times, Plus and activation; g_finish makes them): the activation */
    enum bk_act act;
    int dead;      /* folded into a fused node: neither run nor given memory */
    int keep;      /* an action writes its value (outputNodeNames): never folded */
    int unreached; /* dead as no root reaches it (made on the way, an array's unused
                    * element): not one of the network's nodes in the log's counts */
    /* an element-wise node of a [1 x 1] and an open operand of no rows yet (a loop's delay
     * behind a stabilizer): its rows, fixed by the node that reads it, are the operand's */
    int open_rows;
    /* made by partrain to carry out another node (MapBroadcast and its ones): not one of
     * the network's nodes in the log's counts */
    int helper;
    /* Plus, Minus, ElementTimes: one operand is one value per sample, [1 x samples],
     * broadcast over the other's rows (graph_ewise.c) */
    int row_bcast;
    /* ClassificationError: a top-N error with top_n > 1 (bk_crit.top_n) */
    int top_n;
    /* a criterion's value as an operand (g_kind_crit_values: a CrossEntropyWithSoftmax in
     * `ce = 0.3 .* ceAux + ceZ`, SumElements): the bk_crit_kind + 1 it sums over the
     * pass's counted columns into one [1 x 1] */
    int crit_value;
    /* a [1 x 1] computed from the minibatch (a crit_value, or computed from one): one value
     * per pass, which a criterion may be (CNTK's criteria are such sums) */
    int mb_scalar;
    /* RowSlice / Slice: rows [slice_begin, slice_end) of the input; with slice_rel (Slice)
     * a negative begin and an end <= 0 count from the input's end */
    int slice_begin, slice_end, slice_rel;
    /* ForwardBackward (CTC, graph_ctc.c): the blank token's row, the delay constraint (-1:
     * none); it and EditDistanceError: the operands' rows (ctc_rows); EditDistanceError: the
     * substitution, deletion and insertion penalties, squashInputs and tokensToIgnore */
    int ctc_rows, ctc_blank, ctc_delay;
    float ed_pen[3];
    int ed_squash, ed_nignore;
    int ed_ignore[G_MAX_IGNORE];
    /* ChannelWindow: the window's half width h (2 h + 1 maps) and its one weight (the
     * fixed kernel's init_value) */
    int chan_half;
    /* at run time */
    int needs_grad;
    int g_over;   /* one node writes all of this gradient, once: it writes over instead of
                   * adding, and the gradient is not cleared before the backward pass */
    float *ws;    /* the kind's workspace */
    float *v, *g; /* value and gradient, rows x (cols or the pass's columns) */
    /* truncated back-propagation through time (g->cont): what the node carries from one
     * minibatch to the next, per sequence (a PastValue: its input's last `delay` steps; the
     * recurrent LSTM: its last hidden and cell state); device memory of its own */
    float *carry;
    size_t carry_n;
};

/* A run of the schedule: one node over all columns, or a recurrent loop (nodes that reach
 * themselves through PastValue or FutureValue) run step by step, forward in time when its
 * delays look back, backward when they look ahead. */
struct g_unit {
    int first, count; /* order[first .. first + count) */
    int loop, reverse;
};

/* Nodes [base, base + n) of a graph are those of the model in file path, made in the
 * order its own graph made its first n nodes (BS.Network.Load): node base + k is node k
 * there, whose trained values it takes (nn_graph_setup). */
struct g_loaded {
    char path[4096];
    int base, n;
};

struct nn_graph {
    struct g_node *nodes;
    int n, cap;
    struct g_loaded loaded[G_MAX_LOADED];
    int nloaded;
    int crit, eval, out;            /* the criterion, evaluation and output nodes */
    int eval_more[NN_EVAL_MAX - 1]; /* the further evaluation nodes, n_eval_more of them */
    int n_eval_more;
    size_t nparams;
    size_t nstate; /* the last nstate of the nparams: states (g_node.state) */
    /* shape inference's last passes: a delay beside one value per sample that no reader
     * gave its rows takes that operand's one row (graph.c shapes) */
    int settle;
    struct backend *bk;
    /* the current pass */
    size_t ncols;          /* columns of a data node */
    size_t nseq;           /* sequences: column t * nseq + s is step t of sequence s */
    size_t c0, cw;         /* the window of data columns the nodes run on (see g_cols) */
    const uint32_t *len;   /* host: each sequence's steps (PastValue / FutureValue) */
    const uint8_t *cont;   /* host: sequence s goes on from the previous pass's (the nodes'
                            * carry), or NULL: every sequence starts (minibatch.h's cont) */
    const uint8_t *begins; /* host, with cont: begins[t * nseq + s] = 1 where an utterance
                            * begins at step t > 0 of sequence s (minibatch.h's), or NULL */
    int *order;            /* the schedule: node indices, inputs first (g_finish) */
    struct g_unit *units;  /* the schedule's units: single nodes and recurrent loops */
    int nunits;
    const float *crit_mask;   /* columns that count (real steps of every input), or NULL */
    float *seq_mask;          /* device room for the per-sequence mask (nseq floats) */
    const float *seq_mask_on; /* per-sequence columns that count: seq_mask, or NULL (all) */
    float dropout_rate;       /* Dropout nodes: the rate of this pass (0: off) */
    uint64_t dropout_seed;
    float *stats;      /* 2 floats a criterion (device): training, evaluation, eval_more's */
    int train;         /* the pass computes gradients */
    float *tmp, *tmp2; /* scratch, max rows x ncols each */
    float *consts;     /* fixed buffers of constants (device) */
    float *ones;       /* a column of ones, the longest node's rows (device), where a node
                        * broadcasts a row (row_bcast); else NULL */
    float *ws;         /* per-pass workspace */
    size_t ws_size;    /* its floats */
    /* the first complaint of a node about the data of this pass (labels that are not what
     * it reads: graph_classce.c), "" if none: g_forward clears it, nn_graph_forward fails
     * the pass with it */
    char fault[512];
};

/* Columns of node n in the current window, and its value and gradient there. A pass runs
 * every node over all its columns, except the nodes of a recurrent loop, which run one
 * step (nseq columns) at a time: the window [c0, c0 + cw) of a data node's columns. */
static inline size_t g_cols(const struct nn_graph *g, const struct g_node *n)
{
    return n->cols ? (size_t)n->cols : n->seq1 ? g->nseq : g->cw;
}
static inline float *g_val(const struct nn_graph *g, const struct g_node *n)
{
    return n->cols || n->seq1 ? n->v : n->v + g->c0 * (size_t)n->rows;
}
static inline float *g_grad(const struct nn_graph *g, const struct g_node *n)
{
    return n->cols || n->seq1 ? n->g : n->g + g->c0 * (size_t)n->rows;
}

/* Whether two operands' columns can meet: fixed, or both per step, or both per sequence. */
int g_same_axis(struct g_node *a, struct g_node *b);
/* "WHERE: error: KIND: operands of shapes [..] and [..]: want" and the error of operands
 * of different axes (a value per step against one per sequence), as PT_EUSER. */
int g_shape_error(struct g_node *n, struct g_node *a, struct g_node *b, const char *want,
                  struct pt_err *e);
int g_axis_error(struct g_node *n, struct g_node *a, struct g_node *b, struct pt_err *e);

/* Kinds defined in their own files (graph_rnn.c). */
extern const struct g_kind g_kind_lstm;          /* RecurrentLSTM: inputs x, W, H, b, peepholes */
extern const struct g_kind g_kind_dropout;       /* Dropout: input x */
extern const struct g_kind g_kind_affine;        /* act (W x + b): inputs W, x, b (graph_nodes.c) */
extern const struct g_kind g_kind_past;          /* PastValue: input x (graph_delay.c) */
extern const struct g_kind g_kind_future;        /* FutureValue: input x */
extern const struct g_kind g_kind_past_init;     /* PastValue: x, initial state */
extern const struct g_kind g_kind_future_init;   /* FutureValue: x, initial state */
extern const struct g_kind g_kind_last;          /* BS.Sequences.Last: input x */
extern const struct g_kind g_kind_first;         /* BS.Sequences.First: input x */
extern const struct g_kind g_kind_time_reverse;  /* TimeReverse: input x (graph_delay.c) */
extern const struct g_kind g_kind_broadcast_seq; /* BroadcastSequenceAs: type, data1 */
extern const struct g_kind g_kind_conv;          /* Convolution: inputs W, x (graph_conv.c) */
extern const struct g_kind g_kind_conv_b;        /* Convolution with a bias per map: W, x, b */
extern const struct g_kind g_kind_pool;          /* Pooling: input x */
extern const struct g_kind g_kind_splice;        /* Splice: inputs a, b (graph_rows.c) */
extern const struct g_kind g_kind_row_slice;     /* RowSlice: input x */
extern const struct g_kind g_kind_map_broadcast; /* MapBroadcast: per-map values, ones */
extern const struct g_kind g_kind_conv_t;        /* ConvolutionTranspose: inputs W, x */
extern const struct g_kind g_kind_conv_t_b;      /* with a bias per output map: W, x, b */
extern const struct g_kind g_kind_unpool;        /* MaxUnpooling: x, the pooling's input */
extern const struct g_kind g_kind_chan_window;   /* a convolution along the maps (CNTK's LRN):
                                                  * the fixed kernel, x (graph_conv.c) */
extern const struct g_kind g_kind_bn;            /* BatchNormalization: x, scale, bias, running
                                                  * mean, variance and count (graph_bn.c) */
extern const struct g_kind g_kind_own_crit;      /* a node of the network as its criterion: the
                                                  * node twice (graph_nodes.c) */
extern const struct g_kind g_kind_no_crit;       /* a network evaluated without a criterion
                                                  * (action=write): its output twice */
extern const struct g_kind g_kind_lambda_rank;   /* LambdaRank: gain, score, query id */
extern const struct g_kind g_kind_ndcg1;         /* NDCG1Eval: the same (graph_rank.c) */
extern const struct g_kind g_kind_labels_graph;  /* LabelsToGraph: labels (graph_ctc.c) */
extern const struct g_kind g_kind_ctc;           /* ForwardBackward (CTC): graph, z */
extern const struct g_kind g_kind_edit_distance; /* EditDistanceError: labels, z */
extern const struct g_kind g_kind_class_ce;      /* ClassBasedCrossEntropyWithSoftmax: labels,
                                                  * h, W, class scores (graph_classce.c) */
/* a criterion's sum over the pass as a [1 x 1] node (g_node.crit_value), one kind for each
 * bk_crit_kind, named as the criterion (BK_CRIT_SUM: SumElements): labels, prediction */
extern const struct g_kind g_kind_crit_values[BK_CRIT_COUNT];

/* The criteria that nodes from `first` on read as operands made such values (bs_roots.c,
 * before the network's roots are chosen). */
void g_crit_as_value(struct nn_graph *g, int first);

/* The network's labels: the training criterion's first operand, or where the criterion is
 * a node of the network's own (SumElements (...) of the speech configs), the Input tagged
 * 'label' (or named in labelNodes); -1 if none. */
int g_labels(const struct nn_graph *g);

/* A criterion's shape from its operands (labels, prediction: per sample, equal rows). */
int g_shape_crit(struct nn_graph *g, struct g_node *n, struct pt_err *e);

/* Plus, Minus and ElementTimes (graph_ewise.c): the shape rule with CNTK's broadcasts, and
 * the passes. */
int g_shape_binary(struct nn_graph *g, struct g_node *n, struct pt_err *e);
/* Less, Equal, ... and Clip (graph_ewise.c) */
int g_shape_compare(struct nn_graph *g, struct g_node *n, struct pt_err *e);
void g_forward_compare(struct nn_graph *g, struct g_node *n);
int g_shape_clip(struct nn_graph *g, struct g_node *n, struct pt_err *e);
void g_forward_clip(struct nn_graph *g, struct g_node *n);
void g_backward_clip(struct nn_graph *g, struct g_node *n);
void g_forward_binary(struct nn_graph *g, struct g_node *n);
void g_backward_binary(struct nn_graph *g, struct g_node *n);

/* A parameter whose place others took (a matrix decomposed by the SVD action, cuDNN's
 * weights tensor that OptimizedRNNStack does not make): no root reaches it, nothing learns it. */
static inline void g_retire(struct g_node *n)
{
    n->dead = n->unreached = 1;
    n->learnable = 0;
}

/* Whether the pass holds whole sequences, none going on from the previous pass (truncated
 * back-propagation) or sharing its stream with another (packed utterances), and node n runs
 * over all of them at once (not step by step inside a recurrent loop); else the pass's fault
 * names n and `needs` (graph_delay.c). */
int g_whole_sequences(struct nn_graph *g, const struct g_node *n, const char *needs);

/* Whether a node's open dimensions may be fixed by the operations that use it
 * (parameters, constants, delays: CNTK's Inferred). */
static inline int g_open(const struct g_node *n)
{
    return n->learnable || n->is_const || n->delay != 0 || n->open_rows;
}

/* Add src (shaped like node `like`'s output) into dst's gradient, summed over the columns
 * where dst is one fixed column under a wider src (graph_nodes.c); written over it when dst's
 * g_over is set. */
void g_add_grad(struct nn_graph *g, struct g_node *dst, const float *src, const struct g_node *like,
                float alpha);

/* Mean / InvStdDev node n: the Input whose statistics it reads (through RowSlice nodes),
 * or -1; *offset: the first of that Input's rows it reads. */
int g_stat_input(const struct nn_graph *g, const struct g_node *n, int *offset);

/* The kind called name (case-sensitive, as BrainScript), or NULL. */
const struct g_kind *g_kind_find(const char *name);

/* Append a node of kind k with inputs in[0..nin) (indices of earlier nodes); returns its
 * index, or -1 with e set (too many nodes, out of memory). */
int g_add(struct nn_graph *g, const struct g_kind *k, const int *in, int nin, const char *where,
          struct pt_err *e);

/* Order the nodes into units (graph_sched.c); errors for loops that cannot run. */
int g_schedule(struct nn_graph *g, struct pt_err *e);

/* Schedule, infer and check every shape, fuse dense layers, decide which nodes need
 * gradients, and give each learnable node its arena offset (g->nparams in all). */
int g_finish(struct nn_graph *g, struct pt_err *e);

/* Initialize the learnable nodes' values in host memory params (g->nparams floats). */
void g_init_params(const struct nn_graph *g, float *params, uint64_t seed);

/* Point learnable nodes into the device arenas. */
void g_bind_arena(struct nn_graph *g, float *params, float *grads);

/* Make the workspace hold a pass of ncols columns of nseq sequences (grows; carved anew for
 * every pass, since the kinds' scratch depends on both); upload the constants once. */
int g_reserve(struct nn_graph *g, size_t ncols, size_t nseq, struct pt_err *e);

/* Forward over every node (inputs must have been uploaded into their v), then both
 * criteria into g->stats. With g->train, the backward pass: gradients of the training
 * criterion, summed, into every node that needs one (the arena's grads overwritten). */
void g_forward(struct nn_graph *g);
void g_backward(struct nn_graph *g, float *grads);

/* Truncated back-propagation through time: make every PastValue and recurrent LSTM able to
 * carry its state over nseq sequences (refusing nodes that cannot: FutureValue, a backward
 * LSTM, a value per sequence); g_carry_save after g_forward keeps what the next pass's
 * continuing sequences start from. */
int g_carry_reserve(struct nn_graph *g, size_t nseq, struct pt_err *e);
/* The step where the utterance of sequence s at step t began: t0 <= t, or -1 where it goes
 * on from the previous pass (g->cont, g->begins). */
long g_begin(const struct nn_graph *g, size_t t, size_t s);
void g_carry_save(struct nn_graph *g);

void g_free(struct nn_graph *g);

#endif
