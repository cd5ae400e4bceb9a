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

/* Evaluate the root record of tree into g (empty on entry, g->bk unset is fine), then
 * g_finish it. Errors name FILE:LINE:COL inside the description. */
int bs_build_graph(struct bs_tree *tree, struct nn_graph *g, struct pt_err *e);

#endif
