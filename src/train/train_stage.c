/* The device/host boundary of action=train.
 *
 * The parameters, gradients and learner buffers live in the backend's memory (device
 * memory on a GPU backend, host memory on the CPU one). Every transfer between that memory
 * and the host that the training loop makes itself goes through this file:
 *
 *   upload    stage_new_model (initial parameters, mean/invstd and prior of the features),
 *             stage_load_model (a model file), stage_resume_checkpoint (learner and
 *             engine state), stage_bcast_params (rank 0's parameters arriving on every rank)
 *   download  stage_bcast_params (rank 0's parameters leaving), stage_params_checksum,
 *             stage_save_model, stage_save_checkpoint
 *
 * The rest crosses inside the modules and is not the loop's business: minibatches go up
 * and criteria come down inside nn_train_step / nn_evaluate, the engines hand buffers to
 * the communicator through their own bk_stage_out / bk_stage_in, the learner never leaves
 * the backend. A GPU backend then changes what happens here, not where. */
#include <stdlib.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "math/backend.h"
#include "train/train_run.h"

/* Rank 0's parameters to every rank, through a host stage (the identity on the CPU). */
int stage_bcast_params(struct run *r, struct pt_err *e)
{
    struct bk_stage st = {0};
    size_t n = nn_param_count(r->net);
    float *h = NULL;
    int rc = bk_stage_out(r->be, &st, nn_params(r->net), 0, n, &h, e);
    if (rc == 0)
        rc = comm_bcast_f32(r->ctx->comm, h, n, 0, e);
    if (rc == 0)
        rc = bk_stage_in(r->be, nn_params(r->net), h, 0, n, e);
    bk_stage_free(&st);
    return rc;
}

/* The states (nn_learned_count .. nn_param_count: a BatchNormalization's running
 * statistics), which every rank moved with its own minibatches and no engine synchronizes:
 * on every rank, their average weighted by the samples each rank trained on this epoch
 * (`samples`; a rank that read none, as with a file of one chunk, kept stale ones). In
 * double: bit-identical everywhere. Where no rank trained, each keeps its own: they agree
 * from the last epoch. In chunks through a buffer on the stack: no rank can fail between
 * the collectives that the others are in. */
int stage_average_states(struct run *r, double samples, struct pt_err *e)
{
    enum { CHUNK = 512 };
    size_t n0 = nn_learned_count(r->net), n = nn_param_count(r->net) - n0;
    if (n == 0 || r->workers == 1)
        return 0;
    double total = samples, d[CHUNK];
    int rc = comm_allreduce(r->ctx->comm, &total, 1, COMM_DOUBLE, COMM_SUM, e);
    if (rc || total <= 0)
        return rc;
    struct bk_stage st = {0};
    float *h = NULL;
    if ((rc = bk_stage_out(r->be, &st, nn_params(r->net), n0, n, &h, e)) != 0)
        return rc;
    for (size_t at = 0; rc == 0 && at < n; at += CHUNK) {
        size_t k = n - at < CHUNK ? n - at : CHUNK;
        for (size_t i = 0; i < k; i++)
            d[i] = samples * h[n0 + at + i];
        rc = comm_allreduce(r->ctx->comm, d, k, COMM_DOUBLE, COMM_SUM, e);
        for (size_t i = 0; rc == 0 && i < k; i++)
            h[n0 + at + i] = (float)(d[i] / total);
    }
    if (rc == 0)
        rc = bk_stage_in(r->be, nn_params(r->net), h, n0, n, e);
    bk_stage_free(&st);
    return rc;
}

/* FNV-1a of the parameters as floats in arena order (the same bytes on every backend). */
int stage_params_checksum(struct run *r, uint64_t *sum, struct pt_err *e)
{
    size_t n = nn_param_count(r->net);
    float *host = malloc(n * sizeof *host);
    int rc =
        host ? nn_get_params(r->net, host, e) : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    *sum = rc ? 0 : blob_fnv1a(BLOB_FNV_START, host, n * sizeof *host);
    free(host);
    return rc;
}

int stage_load_model(struct run *r, const char *path, struct pt_err *e)
{
    return nn_load(path, r->be, &r->net, e);
}

/* A fresh network from the builder, or a model file's (a builder that is BS.Network.Load
 * (...) as a whole: its values loaded); applyMeanVarNorm / needPrior: one pass over the
 * training data for what the network does not hold yet, the statistics uploaded into it. */
int stage_new_model(struct run *r, struct pt_err *e)
{
    int rc = nn_new(&r->ncfg, r->be, r->seed, &r->net, e), held_norm = 0, held_prior = 0;
    if (rc == 0 && r->ncfg.start_model[0]) {
        rc = nn_load_params(r->net, r->ncfg.start_model, e);
        nn_stats_held(r->net, &held_norm, &held_prior);
        if (rc == 0 && run_may_log(r) && !r->start0) /* modelPath.0: said as CNTK says it */
            pt_log_printf(r->ctx->log, "Starting from the model '%s'.\n", r->ncfg.start_model);
    }
    int norm = r->ncfg.mean_var_norm && !held_norm, prior = r->ncfg.need_prior && !held_prior;
    if (rc == 0 && (norm || prior))
        rc = train_feature_stats(r->reader, r->net, norm, prior, e);
    return rc;
}

int stage_save_model(struct run *r, const char *path, struct pt_err *e)
{
    return nn_save(r->net, path, e);
}

int stage_save_checkpoint(struct run *r, const char *path, struct pt_err *e)
{
    return ckp_save(path, &r->st, &r->learner, r->engine, e);
}

int stage_resume_checkpoint(struct run *r, int *engine_state, struct pt_err *e)
{
    return ckp_resume(r->model, r->resume, &r->st, &r->learner, r->engine, r->ctx->log,
                      engine_state, e);
}
