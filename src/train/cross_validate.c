/* action=cv (CNTK's DoCrossValidate): the models a training wrote after its epochs,
 * modelPath.N for N = start, start + step, ... up to end (crossValidationInterval), each
 * evaluated on the block's reader as action=test evaluates one (distributed over the
 * ranks). A missing model is said; the first time one is missing the final model,
 * modelPath itself, stands in for it, as in CNTK (a training's last epoch leaves no
 * modelPath.N in CNTK). Then, for each criterion, the model where it is lowest. Rank 0's
 * log, CNTK's lines:
 *   Model PATH.2 -->
 *   Final Results: Minibatch[1-4]: EvalClassificationError = ... * N; CrossEntropyWithSoftmax = ...
 *   Model PATH.4 does not exist.
 *   Best models:
 *   ------------
 *   Based on Err[0]: Best model = PATH.2 with min err 0.0525
 * The network builders the block sees are ignored, as CNTK ignores them: the networks
 * are the model files'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "train/logfmt.h"
#include "train/train_internal.h"

#define CV_MAX_CRIT (1 + NN_EVAL_MAX)

/* A model that was evaluated: its path and each reported criterion's average. */
struct cv_result {
    char path[4200];
    double avg[CV_MAX_CRIT];
};

/* The files in CNTK's order (*out: malloc'd, *n of them; exists[i] 0: one to say is
 * missing): modelPath.N for each N of the interval, and after the first missing one the
 * final model in its place. */
static int model_list(const struct train_settings *ts, struct cv_result **out, int **exists,
                      size_t *n, struct pt_err *e)
{
    long long start = ts->cv_interval.ilist[0], step = ts->cv_interval.ilist[1];
    size_t count = (size_t)((ts->cv_interval.ilist[2] - start) / step) + 1, cap = count + 1;
    *out = pt_calloc(cap, sizeof **out, e);
    *exists = pt_calloc(cap, sizeof **exists, e);
    *n = 0;
    if (!*out || !*exists)
        return e ? e->code : PT_ENOMEM;
    int final_used = 0;
    for (size_t j = 0; j < count; j++) { /* start + j step <= end: no overflow */
        size_t k = (*n)++;
        snprintf((*out)[k].path, sizeof(*out)[k].path, "%s.%lld", ts->model,
                 start + (long long)j * step);
        (*exists)[k] = access((*out)[k].path, R_OK) == 0;
        if ((*exists)[k] || final_used || access(ts->model, R_OK) != 0)
            continue;
        k = (*n)++;
        snprintf((*out)[k].path, sizeof(*out)[k].path, "%s", ts->model);
        (*exists)[k] = 1;
        final_used = 1;
    }
    return 0;
}

/* One model: load, evaluate, report (rank 0); its averages into r. */
static int one_model(struct pt_ctx *ctx, struct cfg_node *command, const struct train_settings *ts,
                     struct cv_result *r, int *nc_out, struct pt_err *e)
{
    struct train_model_reader mr = {0};
    int rc =
        train_open_model(ctx, command, r->path, TRAIN_OPEN_FILE_ONLY, &ts->eval_nodes, 1, &mr, e);
    double sums[PT_STATS] = {0};
    char eval_name[48];
    struct logfmt_crit c[CV_MAX_CRIT];
    int nc = 0;
    size_t nmb = 0;
    if (rc == 0) /* evalNodeNames names the model's criteria: checked before evaluating */
        rc = train_report_list(mr.net, &ts->eval_nodes, sums, eval_name, c, &nc, r->path, e);
    rc = train_agree(ctx->comm, rc, "to load the model or open the reader", e);
    if (rc == 0)
        rc = train_check_same_test(ctx->comm, mr.net, ts, e);
    if (rc == 0 && comm_rank(ctx->comm) == 0)
        pt_log_printf(ctx->log, "Model %s --> \n", r->path);
    if (rc == 0)
        rc = train_evaluate(ctx->comm, mr.net, mr.reader, (size_t)ts->mb_size,
                            (size_t)ts->epoch_size, sums, &nmb, e);
    if (rc == 0) {
        const char *tname = nn_train_criterion_name(mr.net);
        int ce = -1;
        train_report_list(mr.net, &ts->eval_nodes, sums, eval_name, c, &nc, r->path, NULL);
        for (int k = 0; k < nc; k++) {
            r->avg[k] = c[k].count ? c[k].sum / (double)c[k].count : 0.0;
            ce = c[k].name == tname && train_has_perplexity(mr.net) ? k : ce;
        }
        char line[1024];
        logfmt_final(line, sizeof line, 1, (int)nmb, c, nc, ce);
        if (comm_rank(ctx->comm) == 0)
            pt_log_printf(ctx->log, "%s\n", line);
        *nc_out = nc;
    }
    train_close_model(&mr);
    return rc;
}

int cv_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct train_settings ts = {0};
    int rc = cfg_schema_read(command, &cv_command_schema, &ts, e);
    struct cv_result *m = NULL;
    int *exists = NULL;
    size_t n = 0, done = 0;
    int nc = -1, rank0 = comm_rank(ctx->comm) == 0;
    if (rc == 0)
        rc = model_list(&ts, &m, &exists, &n, e);
    /* a rank that failed here would leave the others in the collectives below */
    rc = train_agree(ctx->comm, rc, "to read the settings and list the models", e);
    /* every rank evaluates the same files (a rank that sees other files would mix models) */
    if (rc == 0) {
        struct train_ident it = {.name = "list of models", .details = ""};
        it.hash = BLOB_FNV_START;
        for (size_t i = 0; i < n; i++)
            if (exists[i])
                it.hash = blob_fnv1a(it.hash, m[i].path, strlen(m[i].path) + 1);
        snprintf(it.text, sizeof it.text, "%zu files", n);
        rc = train_check_same(ctx->comm, &it, 1, e);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!exists[i]) {
            if (rank0)
                pt_log_printf(ctx->log, "Model %s does not exist.\n", m[i].path);
            continue;
        }
        int got = 0;
        rc = one_model(ctx, command, &ts, &m[i], &got, e);
        if (rc == 0 && nc >= 0 && got != nc)
            rc = pt_err_set(e, PT_EUSER,
                            "error: action=cv: model '%s' reports %d criteria, '%s' reported %d: "
                            "the models are not of one network",
                            m[i].path, got, m[0].path, nc);
        nc = got;
        m[done++] = m[i];
        if (rc == 0 && ts.cv_sleep > 0)
            sleep((unsigned)ts.cv_sleep);
    }
    if (rc == 0 && done == 0)
        rc = cfg_error(e, cfg_value_origin(ts.cv_interval.node),
                       "action=cv: no model to evaluate: none of %s.%lld .. %s.%lld (every %lld) "
                       "exists, nor %s",
                       ts.model, ts.cv_interval.ilist[0], ts.model, ts.cv_interval.ilist[2],
                       ts.cv_interval.ilist[1], ts.model);
    if (rc == 0 && rank0) {
        pt_log_printf(ctx->log, "Best models:\n------------\n");
        for (int k = 0; k < nc; k++) {
            size_t best = 0;
            for (size_t i = 1; i < done; i++)
                best = m[i].avg[k] < m[best].avg[k] ? i : best;
            pt_log_printf(ctx->log, "Based on Err[%d]: Best model = %s with min err %.8g\n", k,
                          m[best].path, m[best].avg[k]);
        }
    }
    free(m);
    free(exists);
    cfg_schema_free(&cv_command_schema, &ts);
    return rc;
}
