/* Evaluation: action=test (alias eval) over a saved model, and the per-epoch validation of
 * action=train with cvReader. Both are distributed: with more than one rank each rank
 * evaluates its share of every global minibatch (the reader's partition) and the sums are
 * allreduced, so the numbers equal one worker's. CNTK's lines:
 *   Final Results: Minibatch[1-K]: EvalClassificationError = ... * N; CrossEntropyWithSoftmax = ...
 * * N; perplexity = ... Finished Epoch[ 1 of 3]: [Validate] CrossEntropyWithSoftmax = ... * N;
 * EvalClassificationError = ... * N */
#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "math/backend.h"
#include "train/logfmt.h"
#include "train/train_internal.h"

int train_agree(struct comm *comm, int rc, const char *what, struct pt_err *e)
{
    if (comm_size(comm) == 1)
        return rc;
    int failed = -1;
    struct pt_err agree;
    pt_err_clear(&agree);
    int status = comm_agree(comm, rc, &failed, &agree);
    if (agree.code)
        return pt_err_set(e, agree.code, "%s", agree.msg);
    if (status && rc == 0)
        return pt_err_set(e, status, "error: rank %d failed %s", failed, what);
    return status;
}

int train_evaluate(struct comm *comm, struct nn *net, struct reader *r, size_t mb_size,
                   size_t epoch_size, double sums[3], size_t *nmb, struct pt_err *e)
{
    int rank = comm_rank(comm), workers = comm_size(comm);
    int rc = reader_start_epoch(r, 0, epoch_size, rank, workers, e);
    struct minibatch mb = {0};
    struct nn_stats st;
    sums[0] = sums[1] = sums[2] = 0.0;
    *nmb = 0;
    while (rc == 0 && (rc = reader_next(r, mb_size, &mb, e)) == 0 && mb.global_samples) {
        if ((rc = nn_evaluate(net, &mb, &st, e)))
            break;
        sums[0] += st.train_crit;
        sums[1] += st.eval_crit;
        sums[2] += (double)st.samples;
        ++*nmb;
    }
    mb_free(&mb);
    /* a rank that failed would leave the others in the allreduce: agree first */
    rc = train_agree(comm, rc, "while evaluating", e);
    return rc == 0 && workers > 1 ? comm_allreduce_f64(comm, sums, 3, e) : rc;
}

int test_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct train_settings ts = {0};
    struct cfg_node *rd = NULL;
    struct reader_config rcfg;
    int rc = cfg_schema_read(command, &test_command_schema, &ts, e);
    if (rc == 0)
        rc = cfg_find_block(command, "reader", &rd, e);
    if (rc == 0)
        rc = reader_config_read(rd, &rcfg, e);
    struct backend *be = NULL;
    struct nn *net = NULL;
    struct reader *r = NULL;
    if (rc == 0)
        rc = backend_cpu_new(&be, e);
    if (rc == 0)
        rc = nn_load(ts.model, be, &net, e);
    if (rc == 0)
        train_mark_labels(nn_get_config(net), &rcfg, NULL);
    if (rc == 0)
        rc = reader_open(&rcfg, ctx->log, &r, e);
    double sums[3];
    size_t nmb = 0;
    rc = train_agree(ctx->comm, rc, "to load the model or open the reader", e);
    if (rc == 0)
        rc = train_evaluate(ctx->comm, net, r, (size_t)ts.mb_size, (size_t)ts.epoch_size, sums,
                            &nmb, e);
    if (rc == 0 && comm_rank(ctx->comm) == 0) {
        char eval_name[48], line[1024];
        snprintf(eval_name, sizeof eval_name, "Eval%s", nn_eval_criterion_name(net));
        const char *tname = nn_train_criterion_name(net);
        size_t n = (size_t)sums[2];
        struct logfmt_crit c[2] = {{eval_name, sums[1], n}, {tname, sums[0], n}};
        int ce = strcmp(tname, "CrossEntropyWithSoftmax") == 0 ? 1 : -1;
        logfmt_final(line, sizeof line, 1, (int)nmb, c, 2, ce);
        pt_log_printf(ctx->log, "%s\n", line);
    }
    reader_close(r);
    nn_free(net);
    if (be)
        backend_free(be);
    return rc;
}
