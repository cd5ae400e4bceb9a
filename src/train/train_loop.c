/* action=train on one worker: reader -> network -> learner, CNTK's log lines, a model per
 * epoch (modelPath.E, the last also as modelPath) with its checkpoint, makeMode restart.
 *
 *   start-up (train_setup.c, train_ident.c) -> per epoch: schedules -> "Starting Epoch" ->
 *   minibatches (train_epoch.c) -> "Finished Epoch" -> save modelPath.E and modelPath.E.ckp
 *   (rank 0, train_save.c). Transfers between the backend and the host: train_stage.c. */
#include <string.h>

#include "train/train_run.h"

int train_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    int stop = 0;
    int rc = run_start(&r, command, &stop, e);
    if (rc == 0 && !stop)
        adjust_start(&r);
    for (size_t k = 0; k < sizeof r.prev_rates / sizeof *r.prev_rates; k++)
        r.prev_rates[k] = -1.0; /* searchBeforeEpoch: none yet (a resume: the checkpoint's) */
    if (r.st.epochs_done > 0 && r.st.adjust.lr > 0 && r.lc.aa.prev_rates > 0)
        r.prev_rates[r.st.epochs_done % (uint64_t)(r.lc.aa.prev_rates < 64 ? r.lc.aa.prev_rates
                                                                           : 64)] = r.st.adjust.lr;
    /* the next epoch is the one after the last finished (an AutoAdjust rollback goes back) */
    int ended = 0; /* continueReduce stopped the training */
    for (size_t epoch = r.st.epochs_done;
         rc == 0 && !stop && !ended && epoch < (size_t)r.lc.max_epochs; epoch = r.st.epochs_done) {
        struct learn_epoch ep;
        learn_epoch_params(&r.lc, epoch, &ep);
        adjust_epoch_lr(&r, epoch, &ep);
        if ((rc = search_rate(&r, epoch, &ep, e)) != 0) /* autoAdjustLR = searchBeforeEpoch */
            break;
        if (ep.lr_per_sample < r.lc.min_lr) {
            pt_log_printf(ctx->log,
                          "Learning rate per sample %.8g is below minLearningRatePerSample "
                          "%.8g: training stops after %zu epochs.\n",
                          ep.lr_per_sample, r.lc.min_lr, epoch);
            break;
        }
        rc = search_minibatch(&r, epoch, &ep, e); /* autoAdjustMinibatch */
        if (rc == 0)
            rc = run_epoch(&r, epoch, &ep, &ended, e);
    }
    if (rc == 0 && !stop)
        rc = run_save_final(&r, e);
    run_release(&r);
    return rc;
}
