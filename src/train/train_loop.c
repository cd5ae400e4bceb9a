/* action=train on one worker: reader -> network -> learner, CNTK's log lines, a model per
 * epoch (modelPath.E, the last also as modelPath) with its checkpoint, makeMode restart.
 *
 *   per epoch: schedules -> "Starting Epoch" -> minibatches (train step, update, progress
 *   lines) -> "Finished Epoch" -> save modelPath.E and modelPath.E.ckp (rank 0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/blob.h"
#include "core/fs.h"
#include "core/timer.h"
#include "math/backend.h"
#include "parallel/parallel.h"
#include "train/logfmt.h"
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
};

static int read_setup(struct run *r, struct cfg_node *cmd, struct pt_err *e)
{
    struct cfg_node *sgd = NULL, *rd = NULL, *snb = NULL, *cv = NULL;
    struct cfg_val v;
    int rc = cfg_find_block(cmd, "SGD", &sgd, e);
    if (rc == 0)
        rc = cfg_find_block(cmd, "reader", &rd, e);
    if (rc == 0)
        rc = cfg_find_block(cmd, "SimpleNetworkBuilder", &snb, e);
    if (rc == 0)
        rc = cfg_find_block(cmd, "cvReader", &cv, e);
    if (rc == 0 && cv)
        rc = reader_config_read(cv, &r->cv_cfg, e);
    r->has_cv = cv != NULL;
    if (rc == 0)
        rc = learn_config_read(sgd, &r->lc, e);
    if (rc == 0)
        rc = parallel_config_read(sgd, &r->pc, e);
    if (rc == 0)
        rc = reader_config_read(rd, &r->rcfg, e);
    if (rc == 0)
        rc = nn_config_read(snb, &r->ncfg, e);
    if (rc == 0) /* classification: the reader refuses label rows that are not one-hot */
        train_mark_labels(&r->ncfg, &r->rcfg, &r->cv_cfg);
    struct train_settings ts = {0};
    if (rc == 0 && (rc = cfg_schema_read(cmd, &train_command_schema, &ts, e)) == 0)
        rc = cfg_schema_read(cmd, &train_top_schema, &ts, e);
    memcpy(r->model, ts.model, sizeof r->model);
    r->make_mode = ts.make_mode;
    r->trace = (int)ts.trace;
    r->seed = (uint64_t)ts.seed;
    if (rc == 0 && (rc = cfg_schema_get(cmd, &train_top_schema, "deviceId", &v, e)) == 0 &&
        strcasecmp(v.s, "auto") != 0 && strcasecmp(v.s, "cpu") != 0 && atoi(v.s) >= 0)
        rc = cfg_error(e, cfg_value_origin(v.node),
                       "deviceId=%s: training on a GPU is not available yet (the cuBLAS backend "
                       "has no compute kernels in this build); use deviceId=cpu or auto",
                       v.s);
    return rc;
}

/* More than one rank needs a parallel method. */
static int parallel_setup(struct run *r, struct pt_err *e)
{
    r->rank = comm_rank(r->ctx->comm);
    r->workers = comm_size(r->ctx->comm);
    return parallel_config_check_workers(&r->pc, r->workers, e);
}

/* The engine works on the network's arena; its grad-ready hook sees the backward pass. */
static int grad_ready(void *ctx, size_t first, struct pt_err *e)
{
    struct run *r = ctx;
    return r->engine->ops->grad_ready(r->engine, nn_grads(r->net), first, e);
}

static int engine_setup(struct run *r, struct pt_err *e)
{
    struct engine_layout layout = {
        .n = nn_param_count(r->net), .params = nn_params(r->net), .bk = r->be};
    layout.tensors = nn_tensors(r->net, &layout.ntensors);
    return engine_new(&r->pc, r->ctx->comm, r->rank == 0 || r->ctx->log->own ? r->ctx->log : NULL,
                      &layout, &r->engine, e);
}

/* Epoch (0-based) where the parallel method is on: before parallelizationStartEpoch every
 * rank trains on all the data, identically (warm start). */
static int parallel_on(const struct run *r, size_t epoch)
{
    return parallel_config_epoch_on(&r->pc, epoch);
}

/* Training lines: rank 0, or every rank when each has its own log file (stderr=). */
static int may_log(const struct run *r)
{
    return r->rank == 0 || r->ctx->log->own;
}

static void model_name(const struct run *r, char *buf, size_t size, uint64_t epoch)
{
    if (epoch == 0)
        snprintf(buf, size, "%s", r->model);
    else
        snprintf(buf, size, "%s.%llu", r->model, (unsigned long long)epoch);
}

/* makeMode: the newest finished epoch whose model exists (0: none). */
static uint64_t newest_epoch(const struct run *r)
{
    char path[4200];
    for (uint64_t ep = (uint64_t)r->lc.max_epochs; ep >= 1; ep--) {
        model_name(r, path, sizeof path, ep);
        if (access(path, R_OK) == 0)
            return ep;
    }
    return 0;
}

/* Rank 0's parameters to every rank, through a host stage (the identity on the CPU). */
static int bcast_params(struct run *r, struct pt_err *e)
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

static int build(struct run *r, struct pt_err *e)
{
    int rc = backend_cpu_new(&r->be, e);
    if (rc == 0)
        rc = reader_open(&r->rcfg, r->ctx->log, &r->reader, e);
    if (rc == 0 && r->has_cv)
        rc = reader_open(&r->cv_cfg, r->ctx->log, &r->cv, e);
    uint64_t done = r->make_mode ? newest_epoch(r) : 0;
    if (rc == 0 && done) {
        char path[4200];
        model_name(r, path, sizeof path, done);
        rc = nn_load(path, r->be, &r->net, e);
        if (rc == 0)
            rc = ckp_check_network(path, nn_get_config(r->net), &r->ncfg, e);
        if (rc == 0 && may_log(r))
            pt_log_printf(r->ctx->log, "Starting from checkpoint. Loading network from '%s'.\n",
                          path);
    } else if (rc == 0) {
        rc = nn_new(&r->ncfg, r->be, r->seed, &r->net, e);
        if (rc == 0 && (r->ncfg.mean_var_norm || r->ncfg.need_prior))
            rc = train_feature_stats(r->reader, r->net, r->ncfg.mean_var_norm, r->ncfg.need_prior,
                                     e);
    }
    if (rc == 0 && r->workers > 1) /* one model everywhere, whatever happened before */
        rc = bcast_params(r, e);
    if (rc == 0)
        rc = engine_setup(r, e);
    if (rc == 0)
        rc = learner_init(&r->learner, r->be, r->lc.type, nn_param_count(r->net), e);
    if (rc == 0) {
        const struct nn_tensor *t = nn_tensors(r->net, &r->nspans);
        r->spans = calloc(r->nspans ? r->nspans : 1, sizeof *r->spans);
        if (!r->spans)
            return pt_err_set(e, PT_ENOMEM, "error: out of memory");
        for (size_t i = 0; i < r->nspans; i++)
            r->spans[i] = (struct learn_span){t[i].offset, (size_t)t[i].rows * (size_t)t[i].cols};
    }
    if (rc == 0 && done) {
        char path[4300];
        ckp_path(path, sizeof path, r->model, done);
        int engine_state = 0;
        rc = ckp_resume(r->model, done, &r->st, &r->learner, r->engine, r->ctx->log, &engine_state,
                        e);
        if (rc == 0 && engine_state < 0 && may_log(r)) {
            pt_log_printf(r->ctx->log,
                          "warning: checkpoint '%s' has no %s state (written by "
                          "another method?): it starts afresh\n",
                          path, r->engine->ops->name);
        }
        if (rc == 0 && r->engine->ops->state_loaded)
            r->engine->ops->state_loaded(r->engine, engine_state > 0);
        if (rc == 0)
            nn_set_dropout_state(r->net, r->st.dropout_state);
    }
    if (rc == 0)
        snprintf(r->eval_name, sizeof r->eval_name, "Eval%s", nn_eval_criterion_name(r->net));
    return rc;
}

struct window {
    double train, eval, t0;
    size_t samples, first_mb;
};

static void progress(struct run *r, size_t epoch, size_t mb, struct window *w)
{
    struct logfmt_crit c[2] = {{nn_train_criterion_name(r->net), w->train, w->samples},
                               {r->eval_name, w->eval, w->samples}};
    int full_pass = r->lc.epoch_size == 0;
    double pct = -1;
    int digits = 2;
    size_t per_epoch = full_pass ? r->mbs_last_epoch : 0;
    if (!full_pass) {
        struct learn_epoch ep;
        learn_epoch_params(&r->lc, epoch, &ep);
        per_epoch = ((size_t)r->lc.epoch_size + ep.mb_size - 1) / ep.mb_size;
    }
    if (per_epoch) {
        pct = 100.0 * (double)mb / (double)per_epoch;
        digits = logfmt_progress_digits(per_epoch, (size_t)r->lc.show_every);
    }
    char line[1024];
    double now = pt_now();
    logfmt_progress(line, sizeof line, (int)epoch + 1, (int)r->lc.max_epochs, (int)w->first_mb,
                    (int)mb, pct, digits, c, 2, now - w->t0, (double)w->samples);
    pt_log_printf(r->ctx->log, "%s\n", line);
    *w = (struct window){.t0 = now, .first_mb = mb + 1};
}

/* Rank 0 wrote files (status rc); every rank waits for it and learns the outcome, so no
 * rank reads a model before it exists, and a failed save stops all ranks alike. */
static int after_rank0_io(struct run *r, int rc, struct pt_err *e)
{
    return train_agree(r->ctx->comm, rc, "to write the model", e);
}

/* Order matters for makeMode after a crash: the checkpoint of epoch E is durable before
 * modelPath.E appears, and the previous checkpoint goes only after both exist. So a
 * restart always finds the checkpoint of the newest model. */
static int write_epoch(struct run *r, size_t epoch, int last, struct pt_err *e)
{
    char path[4200], ckp[4300];
    model_name(r, path, sizeof path, epoch + 1);
    ckp_path(ckp, sizeof ckp, r->model, epoch + 1);
    int rc = pt_make_parent_dirs(path, e);
    if (rc == 0)
        rc = ckp_save(ckp, &r->st, &r->learner, r->engine, e);
    if (rc == 0)
        rc = nn_save(r->net, path, e);
    if (rc == 0 && last) {
        model_name(r, path, sizeof path, 0);
        rc = nn_save(r->net, path, e);
    }
    if (rc)
        return pt_err_context(e, "while saving epoch %zu to '%s' (modelPath)", epoch + 1, path);
    if (epoch > 0 && !r->lc.keep_checkpoints) {
        ckp_path(ckp, sizeof ckp, r->model, epoch);
        unlink(ckp); /* superseded by this epoch's */
    }
    return 0;
}

/* everyRankSavesModel: rank k > 0 writes modelPath.E.rank<k> (to compare with rank 0's). */
static int write_rank_model(struct run *r, size_t epoch, struct pt_err *e)
{
    char path[4300];
    snprintf(path, sizeof path, "%s.%zu.rank%d", r->model, epoch + 1, r->rank);
    int rc = pt_make_parent_dirs(path, e);
    if (rc == 0)
        rc = nn_save(r->net, path, e);
    return rc ? pt_err_context(e, "while saving rank %d's model of epoch %zu", r->rank, epoch + 1)
              : 0;
}

static int save_epoch(struct run *r, size_t epoch, int last, struct pt_err *e)
{
    int rc = 0;
    if (r->rank == 0)
        rc = write_epoch(r, epoch, last, e);
    else if (r->pc.every_rank_saves)
        rc = write_rank_model(r, epoch, e);
    return after_rank0_io(r, rc, e);
}

/* CNTK's line: the parallel method's part and the distributed reading part when they apply. */
static void loop_start_line(struct run *r, size_t epoch)
{
    char line[512] = "Starting minibatch loop";
    size_t len = strlen(line);
    int on = parallel_on(r, epoch);
    if (on) /* the method's own words */
        len += parallel_config_describe(&r->pc, epoch, r->rank, r->workers, line + len,
                                        sizeof line - len);
    if (on && r->workers > 1 && r->pc.distributed_reading)
        snprintf(line + len, sizeof line - len, ", distributed reading is ENABLED");
    pt_log_printf(r->ctx->log, "%s.\n", line);
}

/* Running sums of an epoch and of a progress window. */
struct tally {
    double train, eval;
    size_t samples;
};

static void tally_add(struct tally *t, const double stats[3])
{
    t->train += stats[0];
    t->eval += stats[1];
    t->samples += (size_t)stats[2];
}

/* An engine synchronized the models (status 1): zero the momentum if it asks for that. */
static int synced(struct run *r, int status)
{
    if (status == 1 && r->engine->reset_momentum)
        learner_reset(&r->learner);
    return status < 0 ? status : 0;
}

/* One minibatch: local step (nothing to do for an empty share), the engine's aggregation,
 * the learner with the global sample count. stats: criterion, eval, samples. */
static int step(struct run *r, struct minibatch *mb, const struct learn_epoch *ep, int on,
                double stats[3], struct pt_err *e)
{
    struct nn_stats st = {0};
    int rc = 0;
    if (mb->nseq > 0)
        rc = nn_train_step(r->net, mb, (float)ep->dropout, &st, e);
    else /* this rank got no sequence of this global minibatch: it adds nothing */
        r->be->ops->fill(r->be, nn_grads(r->net), nn_param_count(r->net), 0.0f);
    stats[0] = st.train_crit;
    stats[1] = st.eval_crit;
    stats[2] = (double)st.samples;
    if (rc == 0 && on)
        rc = engine_after_backward(r->engine, nn_grads(r->net), stats, e);
    if (rc == 0 && stats[2] > 0)
        learner_update(&r->learner, &r->lc, ep, nn_params(r->net), nn_grads(r->net),
                       (size_t)stats[2], r->spans, r->nspans);
    if (rc == 0 && on)
        rc = synced(r, engine_after_update(r->engine, (size_t)stats[2], e));
    return rc;
}

/* Epoch end: what a buffered engine still holds is applied too. */
static int flush(struct run *r, const struct learn_epoch *ep, struct tally *all, struct pt_err *e)
{
    double stats[3];
    int rc;
    while ((rc = engine_flush(r->engine, nn_grads(r->net), stats, e)) == 1) {
        if (stats[2] > 0)
            learner_update(&r->learner, &r->lc, ep, nn_params(r->net), nn_grads(r->net),
                           (size_t)stats[2], r->spans, r->nspans);
        tally_add(all, stats);
    }
    if (rc)
        return rc;
    /* the last synchronization of the epoch; local statistics become global */
    double t[3] = {all->train, all->eval, (double)all->samples};
    rc = synced(r, engine_end_epoch(r->engine, t, e));
    *all = (struct tally){t[0], t[1], (size_t)t[2]};
    return rc;
}

/* Every rank must hold the same model after a synchronous epoch: compare checksums. */
static int check_models_agree(struct run *r, size_t epoch, struct pt_err *e)
{
    if (r->workers == 1)
        return 0;
    size_t n = nn_param_count(r->net);
    float *host = malloc(n * sizeof *host);
    long long *all = calloc((size_t)r->workers, sizeof *all);
    int rc = host && all ? nn_get_params(r->net, host, e)
                         : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    long long mine = rc ? 0 : (long long)blob_fnv1a(BLOB_FNV_START, host, n * sizeof *host);
    free(host);
    if (rc == 0)
        rc = comm_allgather(r->ctx->comm, &mine, 1, all, COMM_INT64, e);
    for (int k = 1; rc == 0 && k < r->workers; k++)
        if (all[k] != all[0])
            rc = pt_err_set(e, PT_EINTERNAL,
                            "error: after epoch %zu the model of rank %d differs "
                            "from rank 0's (checksums %016llx, %016llx)",
                            epoch + 1, k, (unsigned long long)all[k], (unsigned long long)all[0]);
    if (rc == 0 && r->trace >= 2 && may_log(r))
        pt_log_printf(r->ctx->log,
                      "Epoch %zu: the models of all %d ranks are identical "
                      "(checksum %016llx).\n",
                      epoch + 1, r->workers, (unsigned long long)all[0]);
    free(all);
    return rc;
}

/* cvReader: the model after this epoch on the validation data (distributed). */
static int validate(struct run *r, size_t epoch, const struct learn_epoch *ep, struct pt_err *e)
{
    double sums[3];
    size_t nmb = 0;
    int rc = train_evaluate(r->ctx->comm, r->net, r->cv, ep->mb_size, 0, sums, &nmb, e);
    if (rc)
        return pt_err_context(e, "while validating epoch %zu on cvReader", epoch + 1);
    size_t n = (size_t)sums[2];
    struct logfmt_crit c[2] = {{nn_train_criterion_name(r->net), sums[0], n},
                               {r->eval_name, sums[1], n}};
    char line[1024];
    logfmt_validate(line, sizeof line, (int)epoch + 1, (int)r->lc.max_epochs, c, 2);
    if (may_log(r))
        pt_log_printf(r->ctx->log, "%s\n", line);
    return 0;
}

static int run_epoch(struct run *r, size_t epoch, const struct learn_epoch *ep, struct pt_err *e)
{
    struct pt_log *log = r->ctx->log;
    int on = parallel_on(r, epoch), talk = may_log(r);
    if (r->trace > 0 && talk) {
        char line[512];
        logfmt_epoch_start(line, sizeof line, (int)epoch + 1, ep->lr_per_sample,
                           learn_effective_momentum(ep), learn_momentum_time_constant(ep));
        pt_log_printf(log, "%s\n", line);
    }
    int rc = on ? engine_start_epoch(r->engine, epoch, e) : 0;
    if (r->trace > 0 && talk)
        loop_start_line(r, epoch);
    struct minibatch mb = {0};
    double t0 = pt_now(), stats[3];
    struct tally all = {0};
    size_t nmb = 0;
    struct window w = {.t0 = t0, .first_mb = 1};
    /* parallel epochs split every global minibatch among the ranks; without
     * distributedMBReading each rank reads all of it and keeps its slice (CNTK) */
    int split = on && r->workers > 1;
    nn_set_grad_ready(r->net, on && r->engine->ops->grad_ready ? grad_ready : NULL, r);
    reader_split_by_sequence(r->reader, split && !r->pc.distributed_reading);
    if (rc == 0)
        rc = reader_start_epoch(r->reader, epoch, (size_t)r->lc.epoch_size, split ? r->rank : 0,
                                split ? r->workers : 1, e);
    while (rc == 0 && (rc = reader_next(r->reader, ep->mb_size, &mb, e)) == 0 &&
           mb.global_samples) {
        if ((rc = step(r, &mb, ep, on, stats, e)))
            break;
        nmb++;
        tally_add(&all, stats);
        w.train += stats[0];
        w.eval += stats[1];
        w.samples += (size_t)stats[2];
        if (r->trace > 0 && talk &&
            (nmb % (size_t)r->lc.show_every == 0 || nmb <= (size_t)r->lc.show_first))
            progress(r, epoch, nmb, &w);
    }
    mb_free(&mb);
    if (rc == 0 && on)
        rc = flush(r, ep, &all, e);
    if (rc == 0 && on)
        rc = check_models_agree(r, epoch, e);
    if (rc)
        return rc;
    if (!isfinite(all.train))
        return pt_err_set(e, PT_EUSER,
                          "error: epoch %zu: the training criterion is not finite "
                          "(diverged); lower the learning rate",
                          epoch + 1);
    r->mbs_last_epoch = nmb;
    r->st.samples_seen += all.samples;
    r->st.epochs_done = epoch + 1;
    r->st.dropout_state = nn_get_dropout_state(r->net);
    struct logfmt_crit c[2] = {{nn_train_criterion_name(r->net), all.train, all.samples},
                               {r->eval_name, all.eval, all.samples}};
    char line[1024];
    logfmt_epoch_end(line, sizeof line, (int)epoch + 1, (int)r->lc.max_epochs, c, 2,
                     (size_t)r->st.samples_seen, (float)ep->lr_per_sample, pt_now() - t0);
    if (talk)
        pt_log_printf(log, "%s\n", line);
    if (r->cv && (rc = validate(r, epoch, ep, e)))
        return rc;
    return save_epoch(r, epoch, epoch + 1 == (size_t)r->lc.max_epochs, e);
}

static void release(struct run *r)
{
    engine_free(r->engine);
    parallel_config_free(&r->pc);
    learner_free(&r->learner);
    free(r->spans);
    nn_free(r->net);
    reader_close(r->reader);
    reader_close(r->cv);
    if (r->be)
        backend_free(r->be);
    learn_config_free(&r->lc);
}

int train_run(struct pt_ctx *ctx, struct cfg_node *command, struct pt_err *e)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    int rc = read_setup(&r, command, e);
    if (rc == 0)
        rc = parallel_setup(&r, e);
    if (rc == 0 && r.make_mode && newest_epoch(&r) == (uint64_t)r.lc.max_epochs) {
        char path[4200];
        model_name(&r, path, sizeof path, 0);
        if (access(path, R_OK) == 0) {
            if (may_log(&r))
                pt_log_printf(ctx->log, "No further training is necessary: '%s' exists.\n", path);
            release(&r);
            return 0;
        }
    }
    if (rc == 0)
        rc = build(&r, e);
    for (size_t epoch = r.st.epochs_done; rc == 0 && epoch < (size_t)r.lc.max_epochs; epoch++) {
        struct learn_epoch ep;
        learn_epoch_params(&r.lc, epoch, &ep);
        if (ep.lr_per_sample < r.lc.min_lr) {
            pt_log_printf(ctx->log,
                          "Learning rate per sample %.8g is below minLearningRatePerSample "
                          "%.8g: training stops after %zu epochs.\n",
                          ep.lr_per_sample, r.lc.min_lr, epoch);
            break;
        }
        rc = run_epoch(&r, epoch, &ep, e);
    }
    /* stopped early (minLearningRatePerSample), or resumed from modelPath.<maxEpochs> after
     * a crash before modelPath was written: the last epoch's model is the final one */
    if (rc == 0 && r.net && r.st.epochs_done > 0) {
        char path[4200];
        model_name(&r, path, sizeof path, 0);
        int need = r.st.epochs_done < (uint64_t)r.lc.max_epochs || access(path, R_OK) != 0;
        if (need && r.rank == 0)
            rc = nn_save(r.net, path, e);
        if (need)
            rc = after_rank0_io(&r, rc, e);
    }
    release(&r);
    return rc;
}
