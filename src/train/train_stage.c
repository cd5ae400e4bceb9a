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

/* A fresh network from SimpleNetworkBuilder; applyMeanVarNorm / needPrior: one pass over
 * the training data, the statistics uploaded into the network. */
int stage_new_model(struct run *r, struct pt_err *e)
{
    int rc = nn_new(&r->ncfg, r->be, r->seed, &r->net, e);
    if (rc == 0 && (r->ncfg.mean_var_norm || r->ncfg.need_prior))
        rc = train_feature_stats(r->reader, r->net, r->ncfg.mean_var_norm, r->ncfg.need_prior, e);
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
