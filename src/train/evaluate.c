/* Evaluation: action=test (alias eval) over a saved model, and the per-epoch validation of
 * action=train with cvReader. Both are distributed: with more than one rank each rank
 * evaluates its share of every global minibatch (the reader's partition) and the sums are
 * allreduced, so the numbers equal one worker's. CNTK's lines:
 *   Final Results: Minibatch[1-K]: EvalClassificationError = ... * N; CrossEntropyWithSoftmax = ...
 * * N; perplexity = ... Finished Epoch[ 1 of 3]: [Validate] CrossEntropyWithSoftmax = ... * N;
 * EvalClassificationError = ... * N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/blob.h"
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
    if (status == 0)
        return 0;
    /* Only the failing rank knows why: its message goes to every rank, so whichever rank
     * reports the error prints the real reason, with the rank it happened on. */
    int nfailed = rc != 0;
    char msg[PT_ERR_MSG] = "";
    if (comm_rank(comm) == failed)
        snprintf(msg, sizeof msg, "%s", e->msg);
    if (comm_allreduce(comm, &nfailed, 1, COMM_INT, COMM_SUM, &agree) ||
        comm_bcast(comm, msg, sizeof msg, COMM_BYTE, failed, &agree))
        return pt_err_set(e, agree.code, "%s", agree.msg);
    msg[sizeof msg - 1] = '\0';
    pt_err_clear(e);
    if (!msg[0])
        return pt_err_set(e, status, "rank %d: error: failed %s", failed, what);
    if (nfailed > 1)
        return pt_err_set(e, status, "rank %d: %s (and %d other rank%s failed)", failed, msg,
                          nfailed - 1, nfailed == 2 ? "" : "s");
    return pt_err_set(e, status, "rank %d: %s", failed, msg);
}

int train_evaluate(struct comm *comm, struct nn *net, struct reader *r, size_t mb_size,
                   size_t epoch_size, double sums[PT_STATS], size_t *nmb, struct pt_err *e)
{
    int rank = comm_rank(comm), workers = comm_size(comm);
    int rc = reader_start_epoch(r, 0, epoch_size, rank, workers, e);
    struct minibatch mb = {0};
    struct nn_stats st;
    memset(sums, 0, PT_STATS * sizeof *sums);
    *nmb = 0;
    while (rc == 0 && (rc = reader_next(r, mb_size, &mb, e)) == 0 && mb.global_samples) {
        if ((rc = nn_evaluate(net, &mb, &st, e)))
            break;
        sums[0] += st.train_crit;
        sums[1] += st.eval_crit;
        sums[2] += (double)st.samples;
        for (int k = 3; k < PT_STATS; k++)
            sums[k] += st.eval_more[k - 3];
        ++*nmb;
    }
    mb_free(&mb);
    /* a rank that failed would leave the others in the allreduce: agree first */
    rc = train_agree(comm, rc, "while evaluating", e);
    return rc == 0 && workers > 1 ? comm_allreduce_f64(comm, sums, PT_STATS, e) : rc;
}

int train_report_list(const struct nn *net, const struct cfg_val *names, const double *sums,
                      char *eval_name, struct logfmt_crit *c, int *nc, const char *model,
                      struct pt_err *e)
{
    train_eval_name(net, eval_name, 48);
    struct logfmt_crit all[1 + NN_EVAL_MAX];
    int n = train_crit_list(net, eval_name, sums, 1, all);
    if (!names->node) {
        memcpy(c, all, (size_t)n * sizeof *all);
        *nc = n;
        return 0;
    }
    *nc = 0;
    for (size_t i = 0; i < names->slist.n; i++) {
        const char *want = names->slist.items[i];
        int k = 0;
        while (k < n && strcmp(all[k].name, want))
            k++;
        if (k < n && *nc < 1 + NN_EVAL_MAX) {
            c[(*nc)++] = all[k];
            continue;
        }
        if (!e || k < n)
            continue;
        char list[512] = "";
        for (int j = 0; j < n; j++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                     all[j].name);
        return cfg_error(e, cfg_value_origin(names->node),
                         "evalNodeNames: '%s' is not a criterion of the model '%s' (partrain "
                         "reports its training criterion and evaluation nodes: %s)",
                         want, model, list);
    }
    return 0;
}

/* Every rank evaluates the same model in the same minibatches (else the sums mix models). */
int train_check_same_test(struct comm *comm, struct nn *net, const struct train_settings *ts,
                          struct pt_err *e)
{
    struct train_ident it[3];
    train_ident_network(net, &it[0]);
    it[1] = (struct train_ident){.name = "minibatchSize", .details = ""};
    it[1].hash = blob_fnv1a(BLOB_FNV_START, &ts->mb_size, sizeof ts->mb_size);
    snprintf(it[1].text, sizeof it[1].text, "%lld", ts->mb_size);
    it[2] = (struct train_ident){.name = "epochSize", .details = ""};
    it[2].hash = blob_fnv1a(BLOB_FNV_START, &ts->epoch_size, sizeof ts->epoch_size);
    snprintf(it[2].text, sizeof it[2].text, "%lld", ts->epoch_size);
    return train_check_same(comm, it, 3, e);
}

void train_eval_name(const struct nn *net, char *buf, size_t size)
{
    /* SimpleNetworkBuilder's evaluation node is Eval<criterion>; a BrainScript one has its
     * own name */
    snprintf(buf, size, "%s%s", nn_get_config(net)->rnn == NN_GRAPH ? "" : "Eval",
             nn_eval_criterion_name(net));
}

int train_crit_count(const struct nn *net)
{
    const struct nn_config *c = nn_get_config(net);
    return c->rnn == NN_GRAPH && !strcmp(c->train_name, c->eval_name) ? 1 : 2;
}

int train_crit_list(const struct nn *net, const char *eval_name, const double *stats,
                    int eval_first, struct logfmt_crit *c)
{
    size_t n = (size_t)stats[2];
    int two = train_crit_count(net) == 2, k = 0;
    struct logfmt_crit tc = {nn_train_criterion_name(net), stats[0], n};
    if (!eval_first)
        c[k++] = tc;
    if (two)
        c[k++] = (struct logfmt_crit){eval_name, stats[1], n};
    if (eval_first)
        c[k++] = tc;
    for (int i = 0; i < nn_eval_more(net, -1, NULL, NULL) && 3 + i < PT_STATS; i++) {
        c[k] = (struct logfmt_crit){NULL, stats[3 + i], n};
        nn_eval_more(net, i, &c[k++].name, NULL);
    }
    return k;
}

/* The network to evaluate: the one that command's own network builder makes (CNTK's
 * GetModelFromConfig; a BrainScript one may load the trained model and add to it:
 * BS.Network.Load), else model's. */
static int load_network(struct cfg_node *command, const char *model, int file_only,
                        const struct cfg_val *names, int names_eval, struct backend *be,
                        struct nn **out, struct pt_err *e)
{
    struct cfg_node *bs = NULL;
    int rc = file_only ? 0 : nn_find_builder(command, 1, &bs, e);
    const char *want[16];
    size_t nwant = 0;
    for (size_t i = 0; names && names->node && i < names->slist.n && nwant < 16; i++)
        want[nwant++] = names->slist.items[i];
    if (rc || !bs) /* a test's evalNodeNames may name any node of the model */
        return rc ? rc : nn_load_eval(model, want, nwant, names_eval, be, out, e);
    struct nn_config *cfg = pt_calloc(1, sizeof *cfg, e);
    if (!cfg)
        return e ? e->code : PT_ENOMEM;
    rc = nn_bs_config_read_eval(bs, names_eval, want, nwant, cfg, e);
    if (rc == 0)
        rc = nn_new(cfg, be, 0, out, e);
    free(cfg);
    return rc;
}

int train_open_model(struct pt_ctx *ctx, struct cfg_node *command, const char *model, int how,
                     const struct cfg_val *names, int names_eval, struct train_model_reader *mr,
                     struct pt_err *e)
{
    struct cfg_node *rd = NULL;
    struct reader_config rcfg;
    memset(mr, 0, sizeof *mr);
    int rc = cfg_find_block(command, "reader", &rd, e);
    if (rc == 0)
        rc = reader_config_read(rd, &rcfg, e);
    if (rc == 0 && (how & TRAIN_OPEN_IN_ORDER))
        rcfg.randomize = 0;
    if (rc == 0 && (how & TRAIN_OPEN_UTTERANCES) && rcfg.htk.on) {
        rcfg.htk.frame_mode = 0;
        rcfg.htk.truncated = 0;
    }
    struct train_device dev;
    if (rc == 0)
        rc = train_device_read(command, &dev, e);
    if (rc == 0)
        rc = train_backend_open(&dev, ctx->comm, comm_rank(ctx->comm) == 0 ? ctx->log : NULL,
                                &mr->be, e);
    if (rc == 0)
        rc = load_network(command, model, how & TRAIN_OPEN_FILE_ONLY, names, names_eval, mr->be,
                          &mr->net, e);
    if (rc == PT_EDEVICE &&
        (rc = train_backend_fallback(&dev, comm_rank(ctx->comm) == 0 ? ctx->log : NULL, &mr->be, rc,
                                     e)) == 0)
        rc = load_network(command, model, how & TRAIN_OPEN_FILE_ONLY, names, names_eval, mr->be,
                          &mr->net, e);
    if (rc == 0)
        train_mark_labels(nn_get_config(mr->net), &rcfg, NULL);
    if (rc == 0) /* the reader's lines from rank 0 (the others would interleave) */
        rc = reader_open(&rcfg, comm_rank(ctx->comm) == 0 ? ctx->log : NULL, &mr->reader, e);
    return rc;
}

void train_close_model(struct train_model_reader *mr)
{
    reader_close(mr->reader);
    nn_free(mr->net);
    if (mr->be)
        backend_free(mr->be);
    memset(mr, 0, sizeof *mr);
}

int train_has_perplexity(const struct nn *net)
{
    const struct nn_config *c = nn_get_config(net);
    return c->train_crit == BK_CRIT_CE_SOFTMAX ||
           (c->rnn == NN_GRAPH && !strcmp(c->train_kind, "ClassBasedCrossEntropyWithSoftmax"));
}

int test_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct train_settings ts = {0};
    struct train_model_reader mr = {0};
    int rc = cfg_schema_read(command, &test_command_schema, &ts, e);
    if (rc == 0)
        rc = train_open_model(ctx, command, ts.model, 0, &ts.eval_nodes, 1, &mr, e);
    struct nn *net = mr.net;
    struct reader *r = mr.reader;
    double sums[PT_STATS];
    size_t nmb = 0;
    if (rc == 0) { /* evalNodeNames names the model's criteria: checked before evaluating */
        double none[PT_STATS] = {0};
        char eval_name[48];
        struct logfmt_crit c[1 + NN_EVAL_MAX];
        int nc = 0;
        rc = train_report_list(net, &ts.eval_nodes, none, eval_name, c, &nc, ts.model, e);
    }
    rc = train_agree(ctx->comm, rc, "to load the model or open the reader", e);
    if (rc == 0)
        rc = train_check_same_test(ctx->comm, net, &ts, e);
    if (rc == 0)
        rc = train_evaluate(ctx->comm, net, r, (size_t)ts.mb_size, (size_t)ts.epoch_size, sums,
                            &nmb, e);
    if (rc == 0 && comm_rank(ctx->comm) == 0) {
        char line[1024], eval_name[48];
        const char *tname = nn_train_criterion_name(net);
        struct logfmt_crit c[1 + NN_EVAL_MAX];
        int nc = 0, ce = -1;
        train_report_list(net, &ts.eval_nodes, sums, eval_name, c, &nc, ts.model, NULL);
        for (int k = 0; k < nc; k++) /* the training criterion's perplexity */
            ce = c[k].name == tname && train_has_perplexity(net) ? k : ce;
        logfmt_final(line, sizeof line, 1, (int)nmb, c, nc, ce);
        pt_log_printf(ctx->log, "%s\n", line);
    }
    train_close_model(&mr);
    cfg_schema_free(&test_command_schema, &ts);
    return rc;
}
