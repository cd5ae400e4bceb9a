/* CNTK's network summary before the first epoch (SGD.cpp's Train and TrainOrAdaptModel):
 *
 *   Model has 25 nodes. Using CPU.
 *
 *   Training criterion:   CrossEntropyWithSoftmax = CrossEntropyWithSoftmax
 *   Evaluation criterion: EvalClassificationError = ClassificationError
 *
 *   Training 516740 parameters in 6 out of 6 parameter tensors and 15 nodes with gradient:
 *
 *   	Node 'B0' (LearnableParameter operation) : [512 x 1]
 *   	...
 *
 * A feed-forward network is counted node for node as CNTK's SimpleNetworkBuilder builds it
 * (BuildFFDNNFromDescription): the features, the mean/variance normalization (3 nodes),
 * per hidden layer W, B, Times, Plus, its nonlinearity (none for layerType None) and a
 * dropout node, the output layer's W, B, Times and Plus, the labels, the criteria (the
 * evaluation node only when it differs from the training one), the prior (3 nodes) and
 * the posterior. An LSTM layer counts as its parameter tensors and one node: CNTK's LSTM
 * component has a node per gate operation, and partrain's tensors are its own. */
#include <stdlib.h>
#include <string.h>

#include "train/logfmt.h"
#include "train/train_run.h"

static void node_counts(const struct nn_config *c, int *nodes, int *with_grad)
{
    int hidden = c->nsizes - 2;
    *nodes = 1 + (c->mean_var_norm ? 3 : 0);
    *with_grad = 0;
    for (int i = 0; i < hidden; i++) {
        int layer = c->rnn == NN_LSTM ? 4 + 1 : 4 + (c->acts[i] != BK_ACT_NONE);
        layer += c->dropout ? 1 : 0;
        *nodes += layer;
        *with_grad += layer;
    }
    int out = c->rnn == NN_LSTM ? 2 : 4; /* LSTM: W and Times, no bias */
    *nodes += out + 1 + 1;               /* the output layer, the labels, the criterion */
    *with_grad += out + 1;
    int same = c->train_crit == c->eval_crit;
    *nodes += (same ? 0 : 1) + (c->need_prior ? 3 : 0) + 1;
}

static int by_name(const void *a, const void *b)
{
    const struct nn_tensor *x = *(const struct nn_tensor *const *)a;
    const struct nn_tensor *y = *(const struct nn_tensor *const *)b;
    return strcmp(x->name, y->name);
}

void run_print_summary(struct run *r)
{
    struct pt_log *log = r->ctx->log;
    const struct nn_config *c = nn_get_config(r->net);
    int nodes, with_grad;
    if (!nn_node_counts(r->net, &nodes, &with_grad))
        node_counts(c, &nodes, &with_grad);
    pt_log_plain(log, "\n");
    pt_log_printf(log, "Model has %d nodes. Using CPU.\n", nodes);
    pt_log_plain(log, "\n");
    int graph = c->rnn == NN_GRAPH;
    const char *train = nn_train_criterion_name(r->net);
    pt_log_printf(log, "Training criterion:   %s = %s\n", train, graph ? c->train_kind : train);
    int two = c->train_crit != c->eval_crit || strcmp(c->train_name, c->eval_name);
    int more = nn_eval_more(r->net, -1, NULL, NULL);
    if (two && !more)
        pt_log_printf(log, "Evaluation criterion: %s = %s\n", r->eval_name,
                      graph ? c->eval_kind : nn_eval_criterion_name(r->net));
    if (more) { /* CNTK's list of several */
        pt_log_plain(log, "\n");
        pt_log_printf(log, "Evaluation criteria:\n");
        if (two)
            pt_log_printf(log, "\t%s = %s\n", r->eval_name, c->eval_kind);
        for (int k = 0; k < more; k++) {
            const char *name = NULL, *kind = NULL;
            nn_eval_more(r->net, k, &name, &kind);
            pt_log_printf(log, "\t%s = %s\n", name, kind);
        }
    }
    size_t n = 0;
    const struct nn_tensor *t = nn_tensors(r->net, &n);
    const struct nn_tensor **sorted = calloc(n ? n : 1, sizeof *sorted);
    double params = 0;
    for (size_t i = 0; i < n; i++) {
        params += (double)t[i].rows * (double)t[i].cols;
        if (sorted)
            sorted[i] = &t[i];
    }
    char line[512];
    logfmt_parameters(line, sizeof line, params, (int)n, (int)n, with_grad, r->trace);
    pt_log_plain(log, "\n");
    pt_log_printf(log, "%s\n", line);
    if (r->trace > 0 && sorted) { /* CNTK sorts the learnable parameters by name */
        qsort(sorted, n, sizeof *sorted, by_name);
        pt_log_plain(log, "\n");
        for (size_t i = 0; i < n; i++) {
            logfmt_parameter_node(line, sizeof line, sorted[i]->name, sorted[i]->rows,
                                  sorted[i]->cols);
            pt_log_printf(log, "%s\n", line);
        }
    }
    pt_log_plain(log, "\n");
    free(sorted);
}
