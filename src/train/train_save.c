/* action=train's files: modelPath.E with its checkpoint modelPath.E.ckp after every epoch
 * (rank 0), the last epoch's model also as modelPath, everyRankSavesModel's per-rank
 * copies, and makeMode's search for the newest finished epoch. */
#include <stdio.h>
#include <unistd.h>

#include "core/fs.h"
#include "train/train_run.h"

void run_model_name(const struct run *r, char *buf, size_t size, uint64_t epoch)
{
    if (epoch == 0)
        snprintf(buf, size, "%s", r->model);
    else
        snprintf(buf, size, "%s.%llu", r->model, (unsigned long long)epoch);
}

uint64_t run_newest_epoch(const struct run *r)
{
    char path[4200];
    for (uint64_t ep = (uint64_t)r->lc.max_epochs; ep >= 1; ep--) {
        run_model_name(r, path, sizeof path, ep);
        if (access(path, R_OK) == 0)
            return ep;
    }
    return 0;
}

/* Rank 0 wrote files (status rc); every rank waits for it and learns the outcome, so no
 * rank reads a model before it exists, and a failed save stops all ranks alike. */
static int after_rank0_io(struct run *r, int rc, struct pt_err *e)
{
    return train_agree(r->ctx->comm, rc, "to write the model", e);
}

/* CNTK's line before it writes an epoch's model (traceLevel > 0). */
static void saving(struct run *r, const char *path)
{
    if (r->trace > 0)
        pt_log_printf(r->ctx->log, "SGD: Saving checkpoint model '%s'\n", path);
}

/* Order matters for makeMode after a crash: the checkpoint of epoch E is durable before
 * modelPath.E appears, and the previous checkpoint goes only after both exist. So a
 * restart always finds the checkpoint of the newest model. */
static int write_epoch(struct run *r, size_t epoch, int last, struct pt_err *e)
{
    char path[4200], ckp[4300];
    run_model_name(r, path, sizeof path, epoch + 1);
    ckp_path(ckp, sizeof ckp, r->model, epoch + 1);
    int rc = pt_make_parent_dirs(path, e);
    if (rc == 0)
        rc = stage_save_checkpoint(r, ckp, e);
    if (rc == 0 && !last)
        saving(r, path);
    if (rc == 0)
        rc = stage_save_model(r, path, e);
    if (rc == 0 && last) { /* CNTK's last epoch writes modelPath only: its line names that */
        run_model_name(r, path, sizeof path, 0);
        saving(r, path);
        rc = stage_save_model(r, path, e);
    }
    if (rc)
        return pt_err_context(e, "while saving epoch %zu to '%s' (modelPath)", epoch + 1, path);
    adjust_prune_checkpoints(r, epoch);
    return 0;
}

/* everyRankSavesModel: rank k > 0 writes modelPath.E.rank<k> (to compare with rank 0's). */
static int write_rank_model(struct run *r, size_t epoch, struct pt_err *e)
{
    char path[4300];
    snprintf(path, sizeof path, "%s.%zu.rank%d", r->model, epoch + 1, r->rank);
    int rc = pt_make_parent_dirs(path, e);
    if (rc == 0)
        rc = stage_save_model(r, path, e);
    return rc ? pt_err_context(e, "while saving rank %d's model of epoch %zu", r->rank, epoch + 1)
              : 0;
}

int run_save_epoch(struct run *r, size_t epoch, int last, struct pt_err *e)
{
    double t = pt_trace_now(r->timeline);
    int rc = 0;
    if (r->rank == 0)
        rc = write_epoch(r, epoch, last, e);
    else if (r->pc.every_rank_saves)
        rc = write_rank_model(r, epoch, e);
    run_span(r, PT_TRACE_EPOCH, "save", t, epoch, 0, -1);
    if (rc == 0) /* the epoch's timeline is on disk, or the run learns why not */
        rc = pt_trace_flush(r->timeline, e);
    return after_rank0_io(r, rc, e);
}

/* Stopped early (minLearningRatePerSample), or resumed from modelPath.<maxEpochs> after a
 * crash before modelPath was written: the last epoch's model is the final one. Rank 0
 * decides (the file may be visible to it alone); every rank learns the outcome. */
int run_save_final(struct run *r, struct pt_err *e)
{
    int rc = pt_trace_close(r->timeline, e);
    r->timeline = NULL;
    if (r->engine)
        r->engine->timeline = NULL;
    if (!r->net || r->st.epochs_done == 0)
        return after_rank0_io(r, rc, e);
    char path[4200];
    run_model_name(r, path, sizeof path, 0);
    int need = r->st.epochs_done < (uint64_t)r->lc.max_epochs || access(path, R_OK) != 0;
    if (rc == 0 && need && r->rank == 0)
        rc = stage_save_model(r, path, e);
    return after_rank0_io(r, rc, e);
}
