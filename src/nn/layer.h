/* Internal to src/nn: the layer interface, what every layer kind implements and sees.
 *
 * A layer kind is one struct nn_layer_ops in its own file (dense.c, lstm.c, dropout.c,
 * last_step.c) and one row of the kind table (layer.c); the network builder (net.c) looks
 * kinds up there by name. A kind keeps its own state in its own struct, which embeds the
 * common header struct nn_layer as its first member `base`; the net allocates
 * ops->state_size bytes (zeroed) and sees only the header.
 *
 * Lifecycle: the net allocates the state and fills the header (ops, index, dims); setup
 * reads the layer's spec and the network description. The net then sums param_count over
 * the stack, lays the parameters out back to back in stack order (param_offset), and calls
 * bind (views into the parameter and gradient arenas, rows of the tensor table) and init
 * (from one RNG stream, in stack order: the draw order is part of the model). workspace and
 * carve size and split the per-minibatch device block; release frees whatever setup took.
 *
 * Data flow of one step. The net sets l->x (the previous layer's output), l->dx (where
 * dL/dx goes: the previous layer's dy; NULL for the first layer) and the input shape
 * (l->steps, l->nseq) before l's forward; the forward sets l->y and l->dy (own workspace,
 * or views of its input for layers that only select or pass through). Backward reads l->dy,
 * which the next layer (or the criterion) wrote, writes l's parameter gradients, and
 * writes dL/dx into l->dx when it is not NULL.
 */
#ifndef PT_NN_LAYER_H
#define PT_NN_LAYER_H

#include <stddef.h>

#include "core/rng.h"
#include "nn/nn.h"

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

/* One entry of the layer list the builder makes from the network description. */
struct nn_layer_spec {
    const char *kind; /* a name in the kind table (layer.c) */
    int in_dim, out_dim;
    int number;      /* index in tensor names ("W2", "LSTM0.Wx"): hidden layer i, output nsizes-2 */
    enum bk_act act; /* activation, for kinds that have one */
    int bias;        /* a bias vector, for kinds where it is optional */
};

/* The header every kind's state starts with. */
struct nn_layer {
    const struct nn_layer_ops *ops;
    int index; /* position in the stack (dropout streams) */
    int in_dim, out_dim;
    size_t param_offset, param_count; /* its slice of the arenas */
    size_t steps, nseq;               /* the input shape of the last forward */
    float *x; /* the previous layer's output (read only; not const so views can pass it on) */
    float *dx, *y, *dy;
    /* The momentum SGD step of this backward pass (nn_set_fused_sgd), NULL when none: s is
     * the momentum arena (laid out as the parameters), w unused. A kind with
     * NN_LAYER_FUSES_SGD then applies it to all its parameters as their gradients become
     * final (their gradients need not be stored). */
    const struct bk_sgd *sgd;
    /* Set by the net for one backward pass: dx_act and dx_y (NONE and NULL: nothing) ask a
     * kind with NN_LAYER_DX_ACT to apply the derivative of the previous layer's
     * activation (output dx_y) to dx as it computes it; dy_ready tells a kind with
     * NN_LAYER_DY_ACT that the next layer did so for its dy. */
    enum bk_act dx_act;
    const float *dx_y;
    int dy_ready;
    enum bk_act act; /* NN_LAYER_DY_ACT kinds: the activation backward starts with */
    /* A team step (nn_set_team; team_size 0: none), set by the net for an NN_LAYER_TEAM
     * kind: its workspace holds the team's team_cols columns, every member's back to back;
     * this member's part is steps*nseq columns from col0 (x, y, dy and dx are views of
     * it). See team_forward and team_backward. */
    size_t col0, team_cols;
    int team_rank, team_size;
};

/* The kind's state struct from its header (state structs embed it as `base`); the second
 * form for a const header. */
#define NN_LAYER_STATE(l, type) ((type *)(void *)((char *)(l) - (offsetof(type, base))))
#define NN_LAYER_CONST_STATE(l, type)                                                              \
    ((const type *)(const void *)((const char *)(l) - (offsetof(type, base))))

/* ops->flags */
#define NN_LAYER_READS_MASK 1u  /* reads the padding mask (the net builds it only then) */
#define NN_LAYER_SELECTS    2u  /* can select one column per sequence (sequence labels) */
#define NN_LAYER_FUSES_SGD  4u  /* backward applies l->sgd to its parameters */
#define NN_LAYER_DX_ACT     8u  /* backward computes dx in one product (dx_act, dx_y) */
#define NN_LAYER_DY_ACT     16u /* backward starts with dy *= act'(y) (l->act, dy_ready) */
#define NN_LAYER_TEAM       32u /* trains in a team (col0, team_forward, team_backward) */

/* At most this many tensors per layer (the net's table is sized by it). */
#define NN_LAYER_MAX_TENSORS 4

/* A layer kind. Entries marked optional may be NULL: no parameters, no workspace, nothing
 * to set up or release. */
struct nn_layer_ops {
    const char *name;  /* the key in the kind table */
    size_t state_size; /* bytes of the kind's state struct (>= sizeof struct nn_layer) */
    unsigned flags;    /* NN_LAYER_* */
    /* Optional: read the spec (and the description) into the state. */
    int (*setup)(struct nn_layer *l, const struct nn_layer_spec *s, const struct nn_config *cfg,
                 struct pt_err *e);
    /* Optional: free what setup took (the net frees the state itself). */
    void (*release)(struct nn_layer *l);
    /* Optional: floats of the layer's parameters. */
    size_t (*param_count)(const struct nn_layer *l);
    /* Optional: set the parameter and gradient views (l->param_offset is set) and append
     * the layer's tensors to table[*count] (in arena order). */
    void (*bind)(struct nn_layer *l, float *params, float *grads, struct nn_tensor *table,
                 size_t *count);
    /* Optional: initialize the layer's parameters in host (the whole arena, host copy,
     * zeroed before the first layer). */
    void (*init)(const struct nn_layer *l, float *host, const struct nn_config *cfg,
                 struct pt_rng *rng);
    /* Optional: workspace floats for input shape (steps, nseq), and carving it (*ws
     * advances by what workspace reported). */
    size_t (*workspace)(const struct nn_layer *l, size_t steps, size_t nseq);
    void (*carve)(struct nn_layer *l, float **ws, size_t steps, size_t nseq);
    /* p is the input shape; a layer that changes the shape (last step) updates it. */
    void (*forward)(struct nn_layer *l, struct backend *b, struct nn_pass *p);
    void (*backward)(struct nn_layer *l, struct backend *b);
    /* NN_LAYER_TEAM kinds, in a team step. team_forward: instead of forward (which the
     * output layer runs, on this member's part, for the criteria), this member's share of
     * y for all the team's columns, y and dy set to views of its part; the net syncs the
     * team after it. team_backward, once dy is whole
     * (all columns, f' applied): this member's share of dx, with the previous layer's f'
     * applied (dx_act, dx_y: a view of the previous y; NONE and NULL: none), and l->sgd's
     * step of its share of the parameters; the net syncs the team after it. */
    void (*team_forward)(struct nn_layer *l, struct backend *b);
    void (*team_backward)(struct nn_layer *l, struct backend *b);
};

/* The kinds (each in its own file). */
extern const struct nn_layer_ops nn_dense_ops;
extern const struct nn_layer_ops nn_dropout_ops;
extern const struct nn_layer_ops nn_last_step_ops;
extern const struct nn_layer_ops nn_lstm_ops;

/* A new layer of kind s->kind at stack position index: the kind's state, zeroed, with the
 * header filled and set up. PT_EINTERNAL for a kind the table does not know. On failure
 * *out is NULL. */
int nn_layer_new(const struct nn_layer_spec *s, const struct nn_config *cfg, int index,
                 struct nn_layer **out, struct pt_err *e);
/* Release and free a layer. NULL is a no-op. */
void nn_layer_free(struct nn_layer *l);

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

/* xoshiro256** seeded through splitmix64: parameter initialization. */
double nn_rng_normal(struct pt_rng *r); /* N(0, 1) */
/* A 64-bit mix of two words (splitmix64 finalizer), for deriving streams. */
uint64_t nn_mix64(uint64_t a, uint64_t b);

/* Fill count floats with initial weights for a tensor of fan_in inputs (SPEC 4). */
void nn_init_weights(float *w, size_t count, size_t fan_in, const struct nn_config *cfg,
                     struct pt_rng *rng);
/* Append a tensor to the table. */
void nn_table_add(struct nn_tensor *table, size_t *count, const char *name, size_t offset, int rows,
                  int cols);

#endif
