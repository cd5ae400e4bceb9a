/* BrainScript's meaning (internal to src/nn): a parsed network description (parsers/bs.h)
 * evaluated into a node graph (nn/graph.h).
 *
 * Evaluation is lazy and by name, as in CNTK: a record's members are evaluated when first
 * used, once (so a parameter defined once and used twice is one parameter), and a
 * definition that needs itself is an error (recurrence through PastValue is not built
 * yet). Functions are values: lambdas and function definitions close over the record they
 * were written in; the built-in nodes and CNTK's layers (DenseLayer, LinearLayer,
 * Sequential) are functions of the same kind, so `activation = Sigmoid` works. The root
 * record's criterionNodes, evaluationNodes and outputNodes (or nodes tagged 'criterion',
 * 'evaluation', 'output') pick the graph's roots. */
#ifndef PT_NN_BS_EVAL_H
#define PT_NN_BS_EVAL_H

#include "core/err.h"
#include "nn/graph.h"
#include "parsers/bs.h"

/* How a network is built. NULL (or all zero): to train. To evaluate (the network builder of
 * an action=test or write block): eval_only, so that no criterion is needed (the first
 * evaluation node stands in for it; a ClassificationError may). want[0 .. nwant) are the
 * action's names: with want_eval (evalNodeNames), the evaluation nodes where no
 * criterion or evaluation node is named or tagged; else (outputNodeNames) the first that
 * names a node is the output node where no outputNodes or tag names one. BS.Network.Load
 * reads a model file's network description with load (NULL: BS.Network.Load is refused). */
struct bs_build_opts {
    int eval_only, want_eval;
    const char *const *want;
    size_t nwant;
    int (*load)(void *ctx, const char *path, struct nn_config *out, struct pt_err *e);
    void *ctx;
    const char *root_member; /* the root record's member that is the network (bs_root), or
                              * NULL / "" */
    int values_follow;       /* a model file's network: its parameters' values are read after
                              * (init = 'fromFile' reads no file) */
    const char *edits;       /* the description, whose "#@edit" lines are carried out (bs_edit.c),
                              * or NULL */
};

/* Evaluate the root record of tree into g (empty on entry, g->bk unset is fine), then
 * g_finish it. Errors name FILE:LINE:COL inside the description. The models that
 * BS.Network.Load read are in g->loaded. */
int bs_build_graph(struct bs_tree *tree, const struct bs_build_opts *opts, struct nn_graph *g,
                   struct pt_err *e);

#endif
