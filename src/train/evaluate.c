/* action=test (alias eval): run a saved model over a reader and print CNTK's line
 *   Final Results: Minibatch[1-K]: EvalClassificationError = ... * N; CrossEntropyWithSoftmax = ... * N; perplexity = ... */
#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "math/backend.h"
#include "train/logfmt.h"
#include "train/train_internal.h"

int test_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct cfg_val model = {0}, mbsize = {0}, esize = {0};
    struct cfg_node *rd = NULL;
    struct reader_config rcfg;
    int rc = cfg_schema_get(command, &test_command_schema, "modelPath", &model, e);
    if (rc == 0)
        rc = cfg_schema_get(command, &test_command_schema, "minibatchSize", &mbsize, e);
    if (rc == 0)
        rc = cfg_schema_get(command, &test_command_schema, "epochSize", &esize, e);
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
        rc = nn_load(model.s, be, &net, e);
    if (rc == 0)
        rc = reader_open(&rcfg, ctx->log, &r, e);
    /* evaluation is not distributed: every rank evaluates everything, rank 0 reports */
    if (rc == 0)
        rc = reader_start_epoch(r, 0, (size_t)esize.i, 0, 1, e);
    struct minibatch mb = {0};
    struct nn_stats st;
    double train = 0, eval = 0;
    size_t samples = 0, nmb = 0;
    while (rc == 0 && (rc = reader_next(r, (size_t)mbsize.i, &mb, e)) == 0 && mb.global_samples) {
        if ((rc = nn_evaluate(net, &mb, &st, e)))
            break;
        train += st.train_crit;
        eval += st.eval_crit;
        samples += st.samples;
        nmb++;
    }
    if (rc == 0 && comm_rank(ctx->comm) == 0) {
        char eval_name[48], line[1024];
        snprintf(eval_name, sizeof eval_name, "Eval%s", nn_eval_criterion_name(net));
        const char *tname = nn_train_criterion_name(net);
        struct logfmt_crit c[2] = {{eval_name, eval, samples}, {tname, train, samples}};
        int ce = strcmp(tname, "CrossEntropyWithSoftmax") == 0 ? 1 : -1;
        logfmt_final(line, sizeof line, 1, (int)nmb, c, 2, ce);
        pt_log_printf(ctx->log, "%s\n", line);
    }
    mb_free(&mb);
    reader_close(r);
    nn_free(net);
    if (be)
        backend_free(be);
    return rc;
}
