/* Private to action=train (train_loop.c and the files it is split into): the state of one
 * training run and the functions the parts share.
 *
 *   train_setup.c  start-up: settings, readers, network, engine, learner, checkpoint; every
 *                  step that can fail on some ranks only ends in an agreement
 *   train_ident.c  the start-up identity check: every rank compares what must be equal
 *   train_epoch.c  one epoch: minibatches, flush, model check, validation, progress lines
 *   train_save.c   model and checkpoint files per epoch, makeMode's file names
 *   train_stage.c  the device/host boundary: every transfer the loop makes itself
 *   train_loop.c   train_run: start-up, the epochs, the final model */
#ifndef PT_TRAIN_TRAIN_RUN_H
#define PT_TRAIN_TRAIN_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "parallel/parallel.h"
#include "train/train_internal.h"

struct run {
    struct pt_ctx *ctx;
    struct learn_config lc;
    struct parallel_config pc;
    struct engine *engine;
    int rank, workers;
    struct reader_config rcfg;
    struct nn_config ncfg;
    char model[4096];
    int make_mode, trace, has_cv;
    uint64_t seed;
    struct train_device device; /* deviceId */
    struct backend *be;
    struct reader *reader;
    struct reader_config cv_cfg;
    struct reader *cv; /* cvReader, or NULL */
    struct nn *net;
    struct learner learner;
    struct learn_span *spans;
    size_t nspans;
    struct ckp_state st;
    size_t mbs_last_epoch; /* for the progress percentage */
    char eval_name[48];
    struct { /* the last epoch's criteria per sample (global), for AutoAdjust */
        double train, eval, cv_train, cv_eval;
    } crit;
    struct pt_trace *timeline; /* timelineFile (NULL: off); the engine records into it too */
    uint64_t resume;           /* makeMode: the newest finished epoch with a model (0: none) */
    int start0;                /* makeMode, no epoch finished: modelPath.0 is the network */
    int nothing_to_do;         /* makeMode: every epoch and the final model exist */
    int fused_said;            /* the first fused update was logged (traceLevel >= 2) */
    struct run_team *team;     /* the ranks of this host share the model (train_team.c) */
    /* autoAdjustMinibatch (train_search.c): run_epoch trains a trial of mini_samples samples
     * (0: a whole epoch) and leaves its criterion per sample in mini_crit; prev_mb is the
     * size the last search chose (0: none yet) */
    size_t mini_samples, prev_mb;
    double mini_crit;
    /* searchBeforeEpoch (train_search.c): the rates the last numPrevLearnRates searches
     * found (-1: none), and the last search's factor over the schedule's rate */
    double prev_rates[64], lr_factor;
};

/* Training lines: rank 0, or every rank when each has its own log file (stderr=). */
int run_may_log(const struct run *r);

/* ---- train_setup.c */
/* Everything before the first epoch, on every rank; a failure on any rank fails all of them
 * (with the failing rank's reason) before any collective moves data. *stop: nothing to
 * train (makeMode found the final model). */
int run_start(struct run *r, struct cfg_node *command, int *stop, struct pt_err *e);
void run_release(struct run *r);

/* ---- summary.c */
/* CNTK's network summary (node counts, criteria, parameter tensors), to the log. */
void run_print_summary(struct run *r);

/* ---- train_ident.c */
/* Collective: every rank's settings (minibatch and epoch size schedules, maxEpochs, the
 * parallel method and its settings, the epoch resumed from) equal rank 0's. */
int run_check_settings(struct run *r, struct pt_err *e);
/* Collective: every rank's network (its description and parameter count) and the data its
 * readers found (sequences, samples, chunks; cvReader or none) equal rank 0's. */
int run_check_network(struct run *r, struct pt_err *e);

/* ---- train_search.c */
/* autoAdjustMinibatch: for an epoch after minibatchSize's schedule, ep->mb_size becomes the
 * searched size (trials from the model of the epoch before, which is then restored).
 * Collective. */
int search_minibatch(struct run *r, size_t epoch, struct learn_epoch *ep, struct pt_err *e);
/* autoAdjustLR = searchBeforeEpoch: for an epoch after the learning-rate schedule,
 * ep->lr_per_sample becomes the searched rate (CNTK's SearchForBestLearnRate). Collective. */
int search_rate(struct run *r, size_t epoch, struct learn_epoch *ep, struct pt_err *e);

/* ---- train_team.c */
/* Collective, after the engine, the learner and the checkpoint are agreed on every rank
 * (run_start calls it after that agreement, and agrees on its outcome): where every rank agrees
 * that it can (DataParallelSGD at 32 bits, one host, a dense network, momentum SGD that
 * runs inside the backward pass; shareModelInHost=false says no), the ranks share one model
 * (nn_set_team) and r->team is set. At the end: learner_free, run_team_release_state (the
 * momentum's shared memory), nn_free, run_team_free (the team). */
int run_team_setup(struct run *r, struct pt_err *e);
void run_team_release_state(struct run *r);
void run_team_free(struct run *r);

/* ---- train_epoch.c */
/* One epoch, its validation, AutoAdjust's decision and its files. *stop: training ends
 * (continueReduce). The next epoch is r->st.epochs_done (earlier after a rollback). */
int run_epoch(struct run *r, size_t epoch, const struct learn_epoch *ep, int *stop,
              struct pt_err *e);

/* ---- train_adjust.c: AutoAdjust (CNTK's autoAdjustLR = adjustAfterEpoch) */
/* After start-up (and a resume): the state from the checkpoint, else CNTK's start values. */
void adjust_start(struct run *r);
/* The rate of epoch (0-based): the schedule's within it, else the adjusted one. */
void adjust_epoch_lr(struct run *r, size_t epoch, struct learn_epoch *ep);
/* After epoch i's criteria (r->crit) are known: decide (collective). *save: write this
 * epoch's files (0 after a rollback, which reloads an earlier epoch on every rank and
 * rewrites its checkpoint); *stop: continueReduce ends training. */
int adjust_after_epoch(struct run *r, size_t i, int *save, int *stop, struct pt_err *e);
/* The model and checkpoint of 1-based epoch k back in place on every rank (collective);
 * quiet: nothing logged (autoAdjustMinibatch's trials). */
int adjust_restore(struct run *r, uint64_t k, int quiet, struct pt_err *e);
/* Rank 0, after epoch i's checkpoint is written: remove the ones no longer needed (all but
 * the newest; with loadBestModel, CNTK keeps the last adjustment's too). */
void adjust_prune_checkpoints(const struct run *r, size_t i);

/* ---- train_save.c */
/* modelPath (epoch 0) or modelPath.E. */
void run_model_name(const struct run *r, char *buf, size_t size, uint64_t epoch);
/* makeMode: the newest finished epoch whose model exists (0: none). */
uint64_t run_newest_epoch(const struct run *r);
/* Epoch (0-based) finished: rank 0 writes its model and checkpoint (everyRankSavesModel:
 * every rank its model); every rank learns the outcome. Collective. */
int run_save_epoch(struct run *r, size_t epoch, int last, struct pt_err *e);
/* After the last epoch: modelPath itself when it is still missing, and the timeline
 * closed; every rank learns whether all of that worked. Collective. */
int run_save_final(struct run *r, struct pt_err *e);

/* ---- train_epoch.c: the timeline (timelineFile) */
/* A span of lane from t0 to now, with the epoch (0-based), the minibatch (1-based; 0: none)
 * and, when samples >= 0, this rank's samples as arguments. Returns now (0 when the timeline
 * is off: nothing is recorded and the clock is not read). */
double run_span(struct run *r, int lane, const char *name, double t0, size_t epoch, size_t mb,
                double samples);

/* ---- train_stage.c: the device/host boundary */
int stage_bcast_params(struct run *r, struct pt_err *e);
int stage_params_checksum(struct run *r, uint64_t *sum, struct pt_err *e);
int stage_average_states(struct run *r, double samples, struct pt_err *e);
int stage_load_model(struct run *r, const char *path, struct pt_err *e);
int stage_new_model(struct run *r, struct pt_err *e);
int stage_save_model(struct run *r, const char *path, struct pt_err *e);
int stage_save_checkpoint(struct run *r, const char *path, struct pt_err *e);
/* makeMode: restore the checkpoint of epoch r->resume (ckp_resume: missing is a warning
 * with the learner reset, unrestorable an error). */
int stage_resume_checkpoint(struct run *r, int *engine_state, struct pt_err *e);

#endif
