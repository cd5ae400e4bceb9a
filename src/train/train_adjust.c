/* AutoAdjust: CNTK's learning-rate control after each epoch (SGD.cpp, autoAdjustLR =
 * adjustAfterEpoch). In the epochs after the learning-rate schedule's entries the rate is
 * the running one, changed every learnRateAdjustInterval epochs from the control criterion
 * c (the cvReader's training criterion when there is a cvReader and
 * UseCVSetControlLRIfCVExists, else the epoch's training criterion; the evaluation
 * criterion with UseEvalCriterionControlLR), averaged over the interval into avg:
 *
 *   avg worse than the previous adjustment's (or NaN), loadBestModel: every rank reloads
 *       the model and checkpoint of the previous adjustment (learner, method and AutoAdjust
 *       state), the epochs since are trained again;
 *   improvement prev - avg <= reduceLearnRateIfImproveLessThan * prev (or NaN):
 *       rate *= learnRateDecreaseFactor ("learnRatePerSample reduced to ...");
 *   else improvement > increaseLearnRateIfImproveMoreThan * prev:
 *       rate *= learnRateIncreaseFactor ("learnRatePerSample increased to ...");
 *   continueReduce: after the first reduction reduce every time; the second failure stops.
 *
 * c is a global number (the Finished Epoch and Validate sums are allreduced), so every rank
 * decides alike under every parallel method; adjust_after_epoch checks that it is (one
 * allreduce) before deciding. The state (rate, previous and running criterion) goes into
 * every checkpoint, so a resumed run decides as the uninterrupted one. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "comm/comm.h"
#include "train/train_run.h"

static int active(const struct run *r)
{
    return learn_aa_after(&r->lc.aa);
}

void adjust_start(struct run *r)
{
    struct ckp_adjust *a = &r->st.adjust;
    if (r->st.has_adjust)
        return;
    /* a fresh run, or a checkpoint without the state: CNTK's restart values */
    a->lr = 0; /* unset: the schedule's rate */
    a->prev = a->avg = INFINITY;
    a->not_counted = (double)(r->st.epochs_done % (uint64_t)r->lc.aa.interval);
    a->reduced = 0;
    r->st.has_adjust = 1;
}

void adjust_epoch_lr(struct run *r, size_t epoch, struct learn_epoch *ep)
{
    struct ckp_adjust *a = &r->st.adjust;
    if (!active(r) || epoch < learn_lr_schedule_len(&r->lc) || a->lr <= 0)
        a->lr = ep->lr_per_sample;
    else
        ep->lr_per_sample = (double)(float)a->lr;
}

/* Every rank must decide on the same number (bit for bit; NaN on all or none). */
static int check_same_criterion(struct run *r, double c, struct pt_err *e)
{
    if (r->workers < 2)
        return 0;
    int nan = isnan(c) != 0;
    double v = nan ? 0 : c;
    double m[4] = {v, -v, nan, -(double)nan};
    int rc = comm_allreduce(r->ctx->comm, m, 4, COMM_DOUBLE, COMM_MAX, e);
    if (rc == 0 && (m[0] != -m[1] || m[2] != -m[3]))
        rc = pt_err_set(e, PT_EINTERNAL,
                        "error: AutoAdjust: the criterion that controls the learning rate "
                        "differs between ranks (from %.17g to %.17g%s): their rates would "
                        "differ",
                        -m[1], m[0], m[2] != -m[3] ? ", NaN on some" : "");
    return rc;
}

/* Back to the model and checkpoint of 1-based epoch k, on every rank (quiet: the
 * minibatch search's, which says nothing of it). */
int adjust_restore(struct run *r, uint64_t k, int quiet, struct pt_err *e)
{
    char path[4200], ckp[4300];
    run_model_name(r, path, sizeof path, k);
    ckp_path(ckp, sizeof ckp, r->model, k);
    if (run_may_log(r) && !quiet)
        pt_log_printf(r->ctx->log,
                      "Loading (rolling back to) previous model with best training-criterion "
                      "value: %s.\n",
                      path);
    int es = 0;
    struct ckp_adjust now = r->st.adjust;
    int rc = nn_load_params(r->net, path, e);
    if (rc == 0)
        rc = ckp_load(ckp, &r->st, &r->learner, r->engine, &es, e);
    if (rc == 0 && !r->st.has_adjust) { /* an older checkpoint: no criterion to go back to */
        r->st.adjust = now;
        r->st.adjust.prev = INFINITY;
        r->st.has_adjust = 1;
    }
    rc = train_agree(
        r->ctx->comm, rc,
        quiet ? "to go back to the epoch's start" : "to roll back (AutoAdjust loadBestModel)", e);
    if (rc)
        return pt_err_context(
            e,
            quiet ? "while going back to epoch %llu's model after a trial (autoAdjustMinibatch)"
                  : "while rolling back to epoch %llu (AutoAdjust loadBestModel)",
            (unsigned long long)k);
    if (r->engine->ops->state_loaded)
        r->engine->ops->state_loaded(r->engine, es > 0);
    nn_set_dropout_state(r->net, r->st.dropout_state);
    return 0;
}

/* After a rollback from 0-based epoch i to 1-based epoch k: rank 0 removes the files of
 * the epochs in between and writes k's checkpoint again with the new rate. */
static int after_roll_back(struct run *r, size_t i, uint64_t k, struct pt_err *e)
{
    int rc = 0;
    if (r->rank == 0) {
        for (long long j = 1; j < r->lc.aa.interval; j++) {
            char path[4200], ckp[4300];
            uint64_t del = (uint64_t)i - (uint64_t)j + 1;
            pt_log_printf(r->ctx->log,
                          "SGD: removing model and checkpoint files for epoch %llu after "
                          "rollback to epoch %llu\n",
                          (unsigned long long)del, (unsigned long long)k);
            run_model_name(r, path, sizeof path, del);
            ckp_path(ckp, sizeof ckp, r->model, del);
            unlink(path);
            unlink(ckp);
        }
        pt_log_printf(r->ctx->log,
                      "SGD: revoke back to and update checkpoint file for epoch %llu\n",
                      (unsigned long long)k);
        char ckp[4300];
        ckp_path(ckp, sizeof ckp, r->model, k);
        rc = stage_save_checkpoint(r, ckp, e);
    }
    return train_agree(r->ctx->comm, rc, "to write the checkpoint", e);
}

static double control_criterion(const struct run *r)
{
    const struct learn_autoadjust *aa = &r->lc.aa;
    if (r->cv && aa->use_cv)
        return aa->use_eval ? r->crit.cv_eval : r->crit.cv_train;
    return aa->use_eval ? r->crit.eval : r->crit.train;
}

static void change_rate(struct run *r, double f, const char *how)
{
    r->st.adjust.lr *= f;
    if (run_may_log(r))
        pt_log_printf(r->ctx->log, "learnRatePerSample %s to %.8g\n", how, r->st.adjust.lr);
}

/* The rate after an adjustment point whose criterion is avg; 1: continueReduce stops. */
static int rate_rule(struct run *r, double avg)
{
    const struct learn_autoadjust *aa = &r->lc.aa;
    struct ckp_adjust *a = &r->st.adjust;
    int worse = isnan(avg) || (a->prev - avg <= aa->reduce_if_less * a->prev && !isinf(a->prev));
    if (aa->continue_reduce) {
        if (worse && a->reduced)
            return 1;
        a->reduced = a->reduced || worse;
        if (a->reduced)
            change_rate(r, aa->decrease, "reduced");
    } else if (worse) {
        change_rate(r, aa->decrease, "reduced");
    } else if (a->prev - avg > aa->increase_if_more * a->prev && !isinf(a->prev)) {
        change_rate(r, aa->increase, "increased");
    }
    return 0;
}

int adjust_after_epoch(struct run *r, size_t i, int *save, int *stop, struct pt_err *e)
{
    const struct learn_autoadjust *aa = &r->lc.aa;
    struct ckp_adjust *a = &r->st.adjust;
    *save = 1;
    *stop = 0;
    if (!active(r))
        return 0;
    double c = control_criterion(r);
    int rc = check_same_criterion(r, c, e);
    if (rc)
        return rc;
    double since = (double)(i % (size_t)aa->interval + 1), nc = a->not_counted;
    a->avg = isinf(a->avg) && a->avg > 0 ? c : ((since - 1 - nc) * a->avg + c) / (since - nc);
    double avg = a->avg;
    int adjust = i >= learn_lr_schedule_len(&r->lc) && since == (double)aa->interval, loaded = 0;
    if (adjust && (isnan(avg) || (a->prev - avg < 0 && !isinf(a->prev))) && aa->load_best &&
        (long long)i >= aa->interval) {
        uint64_t k = (uint64_t)i - (uint64_t)aa->interval + 1;
        if ((rc = adjust_restore(r, k, 0, e)))
            return rc;
        a->avg = avg;
        loaded = 1;
        *save = 0;
    }
    if (!adjust && isnan(avg))
        return pt_err_set(e, PT_EUSER,
                          "error: epoch %zu: the training criterion is not a number (NaN)", i + 1);
    if (adjust && rate_rule(r, avg)) { /* continueReduce: the second failure ends training */
        if (run_may_log(r))
            pt_log_printf(r->ctx->log, "Finished training and saved final model\n\n");
        *stop = 1;
        *save = 0;
        return loaded ? after_roll_back(r, i, r->st.epochs_done, e) : 0;
    }
    if (loaded)
        return after_roll_back(r, i, r->st.epochs_done, e);
    if (since == (double)aa->interval) {
        a->prev = avg;
        a->not_counted = 0;
    }
    return 0;
}

void adjust_prune_checkpoints(const struct run *r, size_t i)
{
    char ckp[4300];
    if (r->lc.keep_checkpoints)
        return;
    if (!active(r) || !r->lc.aa.load_best) {
        if (i > 0) {
            ckp_path(ckp, sizeof ckp, r->model, i);
            unlink(ckp); /* superseded by this epoch's */
        }
        return;
    }
    /* loadBestModel: keep the checkpoint of the last adjustment until the next one */
    size_t since = i % (size_t)r->lc.aa.interval + 1;
    if (since != 1 && i > 0) {
        ckp_path(ckp, sizeof ckp, r->model, i);
        unlink(ckp);
    }
    if (since == (size_t)r->lc.aa.interval && i + 1 > (size_t)r->lc.aa.interval) {
        ckp_path(ckp, sizeof ckp, r->model, i + 1 - (size_t)r->lc.aa.interval);
        unlink(ckp);
    }
}
