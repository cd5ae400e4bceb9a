/* Internal to src/nn: the network's layers, their vtable, and the random numbers.
 *
 * A network is a stack of layers. Each layer kind is a struct nn_layer_ops (a table, not
 * an if-chain): it reports its parameter count, binds its views into the arena and names
 * its tensors, initializes its parameters, says how much workspace a minibatch shape
 * needs, and runs forward and backward.
 *
 * Data flow of one step. The net sets l->x (the previous layer's output) and l->dx (where
 * dL/dx goes: the previous layer's dy; NULL for the first layer) before l's forward; the
 * forward sets l->y and l->dy (own workspace, or views of its input for layers that only
 * select or pass through). Backward reads l->dy, which the next layer (or the criterion)
 * wrote, writes l's parameter gradients, and writes dL/dx into l->dx when it is not NULL.
 */
#ifndef PT_NN_NN_INTERNAL_H
#define PT_NN_NN_INTERNAL_H

#include "core/rng.h"
#include "nn/nn.h"

/* ------------------------------------------------------------------ random numbers */

/* xoshiro256** seeded through splitmix64: parameter initialization. */
double nn_rng_normal(struct pt_rng *r);  /* N(0, 1) */
/* A 64-bit mix of two words (splitmix64 finalizer), for deriving streams. */
uint64_t nn_mix64(uint64_t a, uint64_t b);

/* ------------------------------------------------------------------ layers */

/* The minibatch shape a layer sees. */
struct nn_pass {
    size_t steps;       /* T: time steps (1 for feed-forward data) */
    size_t nseq;        /* n: sequences; a layer's columns are T * n, time-major */
    const float *mask;  /* T*n device floats: 1 real step, 0 padding; NULL = all real */
    int train;          /* a backward pass follows (dropout is active) */
    int seq_labels;     /* one label per sequence: the last-step layer selects */
    float dropout_rate; /* 0 = off */
    uint64_t dropout_seed;
};

enum nn_layer_kind { NN_LAYER_DENSE, NN_LAYER_LSTM, NN_LAYER_DROPOUT, NN_LAYER_LAST_STEP };

struct nn_layer;

struct nn_layer_ops {
    const char *kind;
    size_t (*param_count)(const struct nn_layer *l);
    /* Set the parameter and gradient views (l->param_offset is set) and append the
     * layer's tensors to table[*count]. */
    void (*bind)(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                 size_t *count);
    /* Initialize the layer's parameters in host (the whole arena, host copy). */
    void (*init)(const struct nn_layer *l, float *host, const struct nn_config *cfg,
                 struct pt_rng *rng);
    /* Workspace floats for input shape (steps, nseq), and carving it: *ws advances. */
    size_t (*workspace)(const struct nn_layer *l, size_t steps, size_t nseq);
    void (*carve)(struct nn_layer *l, float **ws, size_t steps, size_t nseq);
    /* p is the input shape; a layer that changes the shape (last step) updates it. */
    void (*forward)(struct nn_layer *l, struct backend *b, struct nn_pass *p);
    void (*backward)(struct nn_layer *l, struct backend *b);
};

struct nn_layer {
    const struct nn_layer_ops *ops;
    int index;  /* position in the stack (dropout streams) */
    int number; /* dense/LSTM: index used in tensor names */
    int in_dim, out_dim;
    enum bk_act act;   /* dense */
    int has_bias;      /* dense */
    float hidden_init; /* LSTM: initial h and c */
    size_t param_offset;
    float *w, *bias, *wh, *peep;     /* parameter views (device) */
    float *gw, *gbias, *gwh, *gpeep; /* gradient views (device) */
    /* per step */
    size_t steps, nseq; /* the input shape of the last forward */
    const float *mask;  /* LSTM: the pass's padding mask */
    float dropout_rate; /* dropout: 0 = passed through */
    int selected;       /* last step: 1 when it selected (sequence labels) */
    float *x; /* the previous layer's output (read only; not const so views can pass it on) */
    float *dx, *y, *dy;
    /* workspace (device), by kind */
    float *out_buf, *grad_buf, *mask_buf;             /* dense, dropout */
    float *gates, *dgates, *cell, *hid, *tanh_c, *dc; /* LSTM */
};

extern const struct nn_layer_ops nn_dense_ops;
extern const struct nn_layer_ops nn_dropout_ops;
extern const struct nn_layer_ops nn_last_step_ops;
extern const struct nn_layer_ops nn_lstm_ops;

/* Workspace views start on 64-byte boundaries (16 floats). */
static inline size_t nn_ws_round(size_t n)
{
    return (n + 15) / 16 * 16;
}

/* Take n floats from the workspace cursor. */
static inline float *nn_ws_take(float **ws, size_t n)
{
    float *p = *ws;
    *ws += nn_ws_round(n);
    return p;
}

/* Fill count floats with initial weights for a tensor of fan_in inputs (SPEC 4). */
void nn_init_weights(float *w, size_t count, size_t fan_in, const struct nn_config *cfg,
                     struct pt_rng *rng);
/* Append a tensor to the table. */
void nn_table_add(struct nn_tensor *table, size_t *count, const char *name, size_t offset, int rows,
                  int cols);

/* ------------------------------------------------------------------ the network */

#define NN_MAX_LAYERS  (2 * NN_MAX_HIDDEN + 3)
#define NN_MAX_TENSORS (4 * NN_MAX_HIDDEN + 2)

struct nn {
    struct nn_config cfg;
    struct backend *bk;
    uint64_t seed;
    uint64_t dropout_steps; /* training steps taken: the dropout stream position */
    int nlayers;
    struct nn_layer layers[NN_MAX_LAYERS];
    size_t nparams;
    float *params, *grads; /* device arenas, nparams each */
    size_t ntensors;
    struct nn_tensor tensors[NN_MAX_TENSORS];
    /* normalization (applyMeanVarNorm): host copies and device copies, input size each */
    float *mean, *invstd, *mean_dev, *invstd_dev;
    float *prior; /* host, prior_dim floats, or NULL */
    int prior_dim;
    /* workspace: one device block carved for up to cap_steps x cap_nseq */
    float *ws;
    size_t cap_steps, cap_nseq;
    float *x_dev, *labels_dev, *mask_dev, *crit_mask_dev, *stats_dev;
    float *mask_host, *crit_mask_host; /* host staging for the masks */
    nn_grad_ready_fn grad_ready; /* nn_set_grad_ready, or NULL */
    void *grad_ready_ctx;
    /* the output of the last forward pass */
    const float *out;
    size_t out_cols;
};

/* The parameter count a description gives, without building the network (checks the
 * description as nn_new does). */
int nn_config_param_count(const struct nn_config *cfg, size_t *count, struct pt_err *e);

/* Make the workspace big enough for steps x nseq (grows, never shrinks). */
int nn_reserve(struct nn *net, size_t steps, size_t nseq, struct pt_err *e);

/* ------------------------------------------------------------------ config text */

/* The description as SimpleNetworkBuilder config lines (model files). Returns the length
 * written (snprintf semantics: >= size means truncated). */
int nn_config_write(const struct nn_config *c, char *buf, size_t size);
/* Whether two descriptions build the same parameter layout. */
int nn_config_same_layout(const struct nn_config *a, const struct nn_config *b);

#endif
