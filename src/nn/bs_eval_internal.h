/* BrainScript evaluation, internal to src/nn (the bs_*.c files below): the values, the evaluator's
 * state, and what the files call of each other.
 *
 *   bs_eval.c      the arena, records and their lazy members, expressions, the roots, the
 *                  node groups (criterionNodes or tags) and CNTK's node names
 *   bs_array.c     arrays: a : b : c, NAME[i:first..last] = ... (lazy elements), a[i]
 *   bs_call.c      calls: binding arguments (lazily for lambdas), the kinds of functions
 *   bs_builtins.c  the built-in functions (nodes, delays, helpers) and the table of all
 *   bs_params.c    parameters, inputs and constants, with CNTK's initializations
 *   bs_layers.c    CNTK's Layers library (DenseLayer ... Sequential, Parallel)
 *   bs_rows.c      Splice, slices, reductions, the criteria's options
 *   bs_conv.c      convolution (the layer and CNTK's primitive), pooling, their transposes
 *   bs_tensor.c    tensors of rank 3 and 4, reshapes, a value per map over an image
 *   bs_bn.c        batch normalization
 *   bs_prelude.c   CNTK.core.bs's definitions written in BrainScript: the outer scope */
#ifndef PT_NN_BS_EVAL_INTERNAL_H
#define PT_NN_BS_EVAL_INTERNAL_H

#include <stddef.h>

#include "nn/bs_eval.h"

/* BV_THUNK: an argument not evaluated yet (a lambda's arguments, PastValue's input): its
 * expression and where to evaluate it. */
enum bv_kind { BV_NONE, BV_NUM, BV_BOOL, BV_STR, BV_NODE, BV_REC, BV_ARR, BV_FN, BV_THUNK };

struct benv;
struct bfn;
struct barr;

struct bv {
    enum bv_kind k;
    double num;
    const char *str;
    int node;
    struct benv *rec;
    struct barr *arr;
    struct bfn *fn;
    const struct bs_node *expr; /* BV_THUNK */
    struct benv *env;
    /* an NDL macro's result (BS.NDL.Return): its record, whose lines `.NAME` reaches */
    struct benv *members;
};

struct barr {
    size_t n;
    struct bv *v;
    long first; /* the index of v[0]: 0, or the first index of NAME[i:first..last] = ... */
    /* NAME[i:first..last] = ...: each element's definition, evaluated when first used (the
     * elements may refer to each other, layers[i-1]); v[k] is BV_THUNK until then. NULL
     * for an array of values. */
    struct bslot *lazy;
    const char *name; /* the array definition's NAME (its elements' nodes' names) */
};

enum { SLOT_TODO, SLOT_BUSY, SLOT_DONE };

struct bslot {
    const char *name;
    const struct bs_node *expr;
    struct benv *env; /* where expr is evaluated; NULL: the slot's own record */
    int state;
    struct bv val;
};

struct benv {
    struct benv *parent;
    size_t n;
    struct bslot *slots;
    char path[64]; /* "" at the root, "h1" inside h1's record: node names */
};

struct ev;
typedef int (*builtin_fn)(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                          struct bv *out);

/* A built-in's parameters: "name" (positional, required), "name=DEFAULT" (named, with a
 * default: a number, 'string', true, false or None), "?name=DEFAULT" (positional with a
 * default). */
#define BS_MAX_SIG 16 /* a built-in's parameters, at most */
struct builtin {
    const char *name;
    const char *sig[BS_MAX_SIG];
    builtin_fn fn;
    const char *kind; /* the node kind it makes, where one */
    int lazy;         /* PastValue / FutureValue: the input (2nd argument) is evaluated later */
};

enum fn_kind {
    FN_LAMBDA,
    FN_BUILTIN,
    FN_SEQ,
    FN_LINEAR,
    FN_LSTM,
    FN_DELAY,
    FN_PARALLEL,
    FN_CONV,
    FN_BN
};
struct bconv; /* bs_conv.c */

struct bfn {
    enum fn_kind k;
    const struct bs_node *lam; /* FN_LAMBDA: a BS_LAMBDA */
    struct benv *env;
    const struct builtin *bi;
    struct barr *seq;   /* FN_SEQ, FN_PARALLEL: the functions */
    struct bv join;     /* FN_PARALLEL: the function that combines their results */
    int w, b;           /* FN_LINEAR, FN_LSTM, FN_CONV: parameter nodes (b < 0: no bias) */
    int hm, peep;       /* FN_LSTM: the recurrent weights and the peepholes */
    int reverse;        /* FN_LSTM: goBackwards */
    int delay;          /* FN_DELAY: DelayLayer's T */
    double dflt;        /* FN_DELAY: its defaultHiddenActivation */
    struct bv act;      /* FN_LINEAR, FN_CONV: the activation function, or BV_NONE */
    struct bconv *conv; /* FN_CONV: the window, stride and padding */
    int bnp[5];         /* FN_BN: scale, bias, running mean, variance and count */
    struct bn_opts *bn; /* FN_BN: its settings (bs_bn.c) */
};

struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
};

/* A delay node whose input is evaluated after the definitions that need the delay (how a
 * recurrence closes): node's input is the value of expr in env. */
struct fixup {
    int node;
    const struct bs_node *expr;
    struct benv *env;
};

struct ev {
    struct nn_graph *g;
    struct pt_err *e;
    struct chunk *mem;
    int depth, max_depth; /* calls and expressions nested now, and at most (MAX_DEPTH, or
                           * less on a smaller stack: bs_build_graph) */
    const struct bs_node *root;
    struct fixup *fix;
    size_t nfix, capfix;
    /* where the evaluation is, as CNTK names nodes: "h", "L1.W", "layers[2].Eh" (the
     * member being evaluated, inside the records and calls that led to it) */
    char path[64];
    /* the innermost call written in the user's text (not in bs_prelude): the place that
     * nodes made inside CNTK.core.bs's definitions are reported at */
    const struct bs_node *user_call;
    struct benv *prelude; /* CNTK.core.bs's definitions (bs_prelude): BS.X.Name finds them */
    const struct bs_build_opts *opts;  /* how the network is built (bs_eval.h; NULL: to train) */
    int loading;                       /* evaluating a model that BS.Network.Load reads */
    struct bs_tree **trees;            /* descriptions parsed on the way (BS.Network.Load's), */
    size_t ntrees;                     /* freed with the evaluation */
    struct benv *loaded[G_MAX_LOADED]; /* the records of g->loaded's models */
};

#define MAX_DEPTH 4000 /* on bs_build_graph's thread of EVAL_STACK bytes */

void *bse_alloc(struct ev *v, size_t size); /* zeroed, from the evaluation's arena */
const char *bse_kind_name(enum bv_kind k);
int bse_type_error(struct ev *v, const struct bs_node *at, const char *what, const char *want,
                   const struct bv *got);
int bse_eval(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out);
/* dst = "path.member", or "member" when path is "", cut to size - 1 bytes. */
void bse_path_join(char *dst, size_t size, const char *path, const char *member);
/* Name node (when it has no name yet) `member` inside the current path (v->path). */
void bse_name_new(struct ev *v, int node, const char *member);
/* bs_roots.c: a network's root record evaluated as a network: its node groups (the
 * criterion first, -1 where there is none, then the evaluation nodes; the output node, -1
 * when none is named or tagged), the tags of the nodes made from node `first` on, the
 * delays' inputs from v->fix[fix0] on, and its top-level members' names. need_crit: a
 * network without a criterion is an error. */
struct bs_roots {
    int all[1 + NN_EVAL_MAX];
    int nall;
    int out;
};
int bse_network(struct ev *v, struct benv *root, int first, size_t fix0, int need_crit,
                struct bs_roots *r);
/* bs_edit.c: the "#@edit" lines of a model's description (MEL's SetInput) carried out on
 * the graph, after every member of root is made */
int bse_apply_edits(struct ev *v, struct benv *root, const char *text);
/* bs_load.c: BS.Network.Load (path): a trained model's network as a record of its nodes */
int bse_network_load(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                     struct bv *out);
/* bs_prelude.c: CNTK.core.bs's definitions written in BrainScript, the network's outer scope */
extern const char bs_prelude[];
extern const char bs_prelude_file[];
/* bs_array.c: a : b : c, NAME[i:first..last] = ..., a[i] */
int bse_eval_array(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out);
int bse_eval_for(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out);
int bse_eval_index(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out);
/* Element k of a (0-based, whatever a->first is), evaluated if it was not yet. */
int bse_arr_at(struct ev *v, const struct bs_node *at, struct barr *a, size_t k, struct bv *out);
/* Every element of x evaluated, where x is an array (else nothing). */
int bse_arr_force(struct ev *v, const struct bs_node *at, const struct bv *x);
/* records: a new scope of n slots, a record's members as lazy slots, a slot by name (the
 * last definition wins), a slot's value (evaluated once) */
struct benv *bse_new_env(struct ev *v, struct benv *parent, size_t n, const char *path);
struct benv *bse_record_env(struct ev *v, const struct bs_node *rec, struct benv *parent,
                            const char *path);
struct bslot *bse_find_local(struct benv *r, const char *name);
/* CNTK's `new ComputationNetwork ([ ... ].name)`: *root becomes its member `name`, a record
 * (bs_roots.c). */
int bse_member_record(struct ev *v, struct benv **root, const char *name);
int bse_force(struct ev *v, const struct bs_node *at, struct benv *r, struct bslot *s,
              struct bv *out);
/* calls (bs_call.c) */
int bse_call(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv *pos, size_t npos,
             const struct bs_node **named, struct bv *nval, size_t nnamed, struct bv *out);
int bse_apply1(struct ev *v, const struct bs_node *at, struct bv *fn, struct bv x, struct bv *out);
int bse_eval_call(struct ev *v, const struct bs_node *x, struct benv *env, struct bv *out);
/* built-ins (bs_builtins.c) */
const struct builtin *bse_find_builtin(const char *name);
/* The built-in called `name` in any case (CNTK's NDL has no case: SoftMax), as spelled in
 * the table; NULL when there is none. */
const char *bse_builtin_spelled(const char *name);
struct bv bse_builtin_value(struct ev *v, const char *name);
/* A built-in, or a node kind without a row of its own, as a function value (*found 1). */
int bse_builtin_lookup(struct ev *v, const char *name, struct bv *out, int *found);
int bse_not_yet(const char *name); /* a CNTK name partrain refuses by name */
int bse_make_node(struct ev *v, const struct bs_node *at, const char *kind, const int *in, int nin,
                  struct bv *out);
/* the same for a kind that BrainScript cannot name (Convolution and Pooling, made only
 * through their built-ins) */
int bse_make_kind(struct ev *v, const struct bs_node *at, const struct g_kind *k, const int *in,
                  int nin, struct bv *out);
int bse_as_node(struct ev *v, const struct bs_node *at, const char *what, struct bv *x);
int bse_node_op(struct ev *v, const struct bs_node *at, const char *name, struct bv *args,
                struct bv *out);
/* The delays' inputs from fixup fix0 on (bs_roots.c). */
int bse_fixups(struct ev *v, size_t fix0);
int bse_delay_node(struct ev *v, const struct bs_node *at, int steps, double dflt, int rows,
                   struct bv *x, const struct bv *init, struct bv *out);
/* argument helpers: a dimension, dims (rows, the product of the rest as cols), a string
 * (NULL when not one), a Parameter from (init, initValueScale, value, initValue, lrm) */
int bse_get_int(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                int *out);
int bse_get_dims(struct ev *v, const struct bs_node *at, const char *what, const struct bv *x,
                 int *rows, int *cols);
const char *bse_get_str(const struct bv *x);
int bse_param_node(struct ev *v, const struct bs_node *at, struct bv *a, int rows, int cols,
                   struct bv *out);
/* bs_lang.c: functions of plain values (Mod and IntDiv, IsArray, IsBool, IsDouble,
 * IsSameObject, Chr, Substr, Replace, Format) */
int bse_int_op(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out);
int bse_is_type(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out);
int bse_is_same(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out);
int bse_chr(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out);
int bse_substr(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out);
int bse_replace(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out);
int bse_format(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out);
/* the Layers library (bs_layers.c), built-ins as builtin_fn */
/* A layer's W (rows x cols, init[0] and init[1] its init and initValueScale) and, with
 * bias, its b (one per row, or per column where rows is 0: a kernel's maps) starting at
 * *init_bias; *b is BV_NONE without. */
int bse_layer_params(struct ev *v, const struct bs_node *at, const struct bv *init, int rows,
                     int cols, int bias, const struct bv *init_bias, struct bv *w, struct bv *b);
/* bs_rows.c: Splice, RowSlice / Slice, ReduceSum / ReduceMean, and Softmax,
 * CrossEntropyWithSoftmax, ClassificationError with their axis= and topN= */
int bse_splice(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out);
int bse_slice(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
              struct bv *out);
int bse_reduce_log_sum(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out);
int bse_transpose_times(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                        struct bv *out);
int bse_transpose(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out);
int bse_sum_elements(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out);
int bse_reduce_sum(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out);
int bse_softmax(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out);
int bse_ce(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out);
int bse_class_error(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out);
/* bs_conv.c: ConvolutionTransposeLayer and MaxUnpoolingLayer */
int bse_conv_t_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out);
int bse_unpool_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out);
/* bs_bn.c: BatchNormalization and BatchNormalizationLayer */
int bse_batch_norm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out);
int bse_batch_norm_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out);
int bse_batch_norm_apply(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                         size_t npos, struct bv *out);
int bse_linear(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out);
int bse_embedding(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out);
int bse_lstm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
             struct bv *out);
int bse_bilstm(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
               struct bv *out);
int bse_reduce_max(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out);
int bse_ctc(struct ev *v, const struct bs_node *at, const char *name, struct bv *a, struct bv *out);
int bse_edit_distance(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                      struct bv *out);
int bse_rnn_stack(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out);
int bse_rnn_stack_legacy(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out);
int bse_delay_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out);
int bse_parallel(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                 struct bv *out);
int bse_sequential(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out);
/* convolution and pooling (bs_conv.c) */
int bse_conv_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out);
int bse_conv_apply(struct ev *v, const struct bs_node *at, struct bfn *f, struct bv *pos,
                   size_t npos, struct bv *out);
int bse_pooling(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                struct bv *out);
int bse_pool_layer(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                   struct bv *out);
int bse_pooling_legacy(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out);
int bse_conv_primitive(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                       struct bv *out);
/* bs_params.c: Parameter, ParameterTensor, Input, SparseInput, ImageInput, Constant (rows
 * of builtins[]) */
int bse_parameter(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                  struct bv *out);
int bse_parameter_tensor(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                         struct bv *out);
int bse_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
              struct bv *out);
int bse_sparse_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                     struct bv *out);
int bse_image_input(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out);
int bse_constant(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                 struct bv *out);
/* bs_tensor.c: ParameterTensor of rank 3 and 4 (a[0] the dims, a + 1 as bse_param_node's),
 * the reshapes, and a value per map broadcast over an image: in[] of a Plus, Minus or
 * ElementTimes made by bse_make_kind, rewritten there */
int bse_param_tensor_nd(struct ev *v, const struct bs_node *at, struct bv *a, struct bv *out);
int bse_map_broadcast(struct ev *v, const struct bs_node *at, const struct g_kind *k, int *in,
                      int nin);
/* x, one value per map (1:1:C), over each cell of an image of img[0] x img[1] cells: a fixed
 * column of the image's shape (MapBroadcast) */
int bse_broadcast_maps(struct ev *v, const struct bs_node *at, struct bv *x, const int img[3]);
int bse_new_reshape(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out);
int bse_reshape_dim(struct ev *v, const struct bs_node *at, const char *name, struct bv *a,
                    struct bv *out);

#endif
