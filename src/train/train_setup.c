/* Start-up of action=train, on every rank, in an order that cannot hang:
 *
 *   1. local: read the settings, find makeMode's newest epoch      -> agree
 *   2. identity: maxEpochs, epochSize, minibatchSize, the parallel method and its settings,
 *      the epoch resumed from                                      (train_ident.c)
 *   3. local: open the readers, load or build the network, create modelPath's directory,
 *      check perfStatsFile can be written, open timelineFile       -> agree
 *   4. identity: the network (description and parameter count), the data the readers found
 *   5. collective: rank 0's parameters to every rank, the engine, the learner, the
 *      checkpoint                                                   -> agree
 *
 * A step that can fail on some ranks only (a node-local path, a lagging shared file
 * system, a config per node) ends in an agreement (train_agree), so a rank that failed and
 * a rank that did not never wait in different collectives, and every rank learns the
 * failing rank's own reason. The identity checks come before the first collective that
 * moves data sized by those values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "math/backend.h"
#include "train/train_run.h"

int run_may_log(const struct run *r)
{
    return r->rank == 0 || r->ctx->log->own;
}

static int read_setup(struct run *r, struct cfg_node *cmd, struct pt_err *e)
{
    struct cfg_node *sgd = NULL, *rd = NULL, *snb = NULL, *cv = NULL;
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
    /* parallelTrain=false: CNTK ignores the ParallelTrain block, saying so (SGD.cpp) */
    int parallel = !train_parallel_off(r->ctx->cfg);
    struct cfg_node *pt = NULL;
    if (rc == 0 && !parallel && (rc = parallel_find_block(sgd, &pt, e)) == 0 && pt &&
        run_may_log(r))
        pt_log_plain(
            r->ctx->log,
            "parallelTrain option is not enabled. ParallelTrain config will be ignored.\n");
    if (rc == 0)
        rc = parallel_config_read(parallel ? sgd : NULL, &r->pc, e);
    if (rc == 0)
        rc = reader_config_read(rd, &r->rcfg, e);
    if (rc == 0 && r->rcfg.htk.truncated) { /* minibatchSize counts each stream's frames */
        r->lc.n_mb_streams = r->rcfg.htk.nstreams;
        memcpy(r->lc.mb_streams, r->rcfg.htk.streams, sizeof r->lc.mb_streams);
    }
    struct train_settings ts = {0};
    if (rc == 0 && (rc = cfg_schema_read(cmd, &train_command_schema, &ts, e)) == 0)
        rc = cfg_schema_read(cmd, &train_top_schema, &ts, e);
    /* makeMode with modelPath.0 on disk: that model's network is trained (from_zero), and
     * CNTK reads no network builder (its SVD test names an NDL file that does not exist) */
    char zero[sizeof ts.model + 8];
    int from_file = rc == 0 && ts.make_mode &&
                    snprintf(zero, sizeof zero, "%s.0", ts.model) < (int)sizeof zero &&
                    access(zero, F_OK) == 0;
    struct cfg_node *bs = NULL; /* actions.c checked the builders' precedence */
    if (rc == 0 && !snb)
        rc = nn_find_builder(cmd, 0, &bs, e); /* a block, or CNTK's (new ComputationNetwork
                                               * [ ... ]) */
    if (rc == 0 && !from_file)
        rc = snb || !bs ? nn_config_read(snb, &r->ncfg, e) : nn_bs_config_read(bs, &r->ncfg, e);
    if (bs)
        cfg_mark_used(bs);
    if (snb && from_file)
        cfg_mark_used(snb);
    if (rc == 0 && !from_file) /* classification: the reader refuses label rows that are not
                                * one-hot (from_zero marks them for modelPath.0's network) */
        train_mark_labels(&r->ncfg, &r->rcfg, &r->cv_cfg);
    memcpy(r->model, ts.model, sizeof r->model);
    r->make_mode = ts.make_mode;
    r->trace = (int)ts.trace;
    r->seed = (uint64_t)ts.seed;
    if (rc == 0)
        rc = train_device_read(cmd, &r->device, e);
    return rc;
}

static int engine_setup(struct run *r, struct pt_err *e)
{
    struct engine_layout layout = {
        .n = nn_learned_count(r->net), .params = nn_params(r->net), .bk = r->be};
    layout.tensors = nn_tensors(r->net, &layout.ntensors);
    int rc = engine_new(&r->pc, r->ctx->comm, run_may_log(r) ? r->ctx->log : NULL, &layout,
                        &r->engine, e);
    if (rc == 0)
        r->engine->timeline = r->timeline;
    return rc;
}

/* Learner state per tensor (clipping by norm is per tensor). */
static int make_spans(struct run *r, struct pt_err *e)
{
    const struct nn_tensor *t = nn_tensors(r->net, &r->nspans);
    r->spans = calloc(r->nspans ? r->nspans : 1, sizeof *r->spans);
    if (!r->spans)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t i = 0; i < r->nspans; i++)
        r->spans[i] = (struct learn_span){t[i].offset, (size_t)t[i].rows * (size_t)t[i].cols};
    return 0;
}

/* makeMode: the learner's and the engine's state of the epoch the model was loaded from. */
static int restore_checkpoint(struct run *r, struct pt_err *e)
{
    uint64_t done = r->resume;
    char path[4300];
    ckp_path(path, sizeof path, r->model, done);
    int engine_state = 0;
    /* a missing checkpoint is a warning (SPEC 8); one that cannot be restored an error */
    int rc = stage_resume_checkpoint(r, &engine_state, e);
    if (rc == 0 && engine_state < 0 && run_may_log(r))
        pt_log_printf(r->ctx->log,
                      "warning: checkpoint '%s' has no %s state (written by "
                      "another method?): it starts afresh\n",
                      path, r->engine->ops->name);
    if (rc == 0 && r->engine->ops->state_loaded)
        r->engine->ops->state_loaded(r->engine, engine_state > 0);
    if (rc == 0)
        nn_set_dropout_state(r->net, r->st.dropout_state);
    return rc;
}

/* modelPath's directory, made now rather than after the first epoch: a path that cannot
 * be created is a system failure found before any work (rank 0 writes the models; with
 * everyRankSavesModel every rank writes its own). */
static int make_model_dir(struct run *r, struct pt_err *e)
{
    if (r->rank != 0 && !r->pc.every_rank_saves)
        return 0;
    char path[4200];
    run_model_name(r, path, sizeof path, 0);
    struct pt_err de;
    pt_err_clear(&de);
    if (pt_make_parent_dirs(path, &de) == 0)
        return 0;
    return pt_err_set(e, PT_ESYS, "%s; while creating the directory of modelPath=%s", de.msg,
                      r->model);
}

/* perfStatsFile: the engine opens it amid its collectives; find out now whether it can,
 * with the engine's own opener (the engine opens it again, truncating). */
static int probe_perf_file(struct run *r, struct pt_err *e)
{
    FILE *f = NULL;
    int rc = engine_perf_open(&r->pc, r->rank, &f, e);
    if (f)
        fclose(f);
    return rc;
}

/* Step 3: everything local that the run reads or writes. */
static int open_inputs(struct run *r, struct pt_err *e)
{
    int rc = train_backend_open(&r->device, r->ctx->comm, run_may_log(r) ? r->ctx->log : NULL,
                                &r->be, e);
    /* the reader's lines from the ranks that log (rank 0, or each with its own log file):
     * on a shared terminal another rank's line can land inside rank 0's */
    struct pt_log *log = run_may_log(r) ? r->ctx->log : NULL;
    if (rc == 0)
        rc = reader_open(&r->rcfg, log, &r->reader, e);
    if (rc == 0 && r->has_cv)
        rc = reader_open(&r->cv_cfg, log, &r->cv, e);
    if (rc == 0 && r->resume) {
        char path[4200];
        run_model_name(r, path, sizeof path, r->resume);
        rc = stage_load_model(r, path, e);
        if (rc == PT_EDEVICE && (rc = train_backend_fallback(&r->device, log, &r->be, rc, e)) == 0)
            rc = stage_load_model(r, path, e);
        if (rc == 0)
            rc = ckp_check_network(path, nn_get_config(r->net), &r->ncfg, e);
        if (rc == 0 && run_may_log(r))
            pt_log_printf(r->ctx->log, "Starting from checkpoint. Loading network from '%s'.\n",
                          path);
    } else if (rc == 0) {
        if (r->start0 && run_may_log(r))
            pt_log_printf(r->ctx->log, "Starting from checkpoint. Loading network from '%s'.\n",
                          r->ncfg.start_model);
        else if (r->trace > 0 && run_may_log(r))
            pt_log_printf(r->ctx->log, "Creating virgin network.\n");
        rc = stage_new_model(r, e);
        if (rc == PT_EDEVICE && (rc = train_backend_fallback(&r->device, log, &r->be, rc, e)) == 0)
            rc = stage_new_model(r, e);
    }
    const char *bn = rc == 0 && r->workers > 1 ? nn_moving_states(r->net) : NULL;
    if (bn && r->pc.method->own_models)
        rc = pt_err_set(e, PT_EUSER,
                        "%s: error: BatchNormalization with %s is not supported yet: each "
                        "worker's running statistics would describe its own model, not the one "
                        "the synchronizations make (DataParallelSGD keeps one model)",
                        bn, r->pc.method->name);
    if (rc == 0)
        rc = make_model_dir(r, e);
    if (rc == 0)
        rc = probe_perf_file(r, e);
    if (rc == 0) /* written from the first epoch on: open it now, once */
        rc = pt_trace_open(r->pc.timeline_file, r->rank, "timelineFile", &r->timeline, e);
    return rc;
}

/* CNTK's makeMode with no finished epoch starts from modelPath.0 where it exists (a model
 * that an action=edit wrote: MEL's SaveModel, or outputModelPath), and its network, not
 * the configured one, is trained; a resumed run's models hold that network too (start:
 * 0), which their check compares with. */
static int from_zero(struct run *r, int start, struct pt_err *e)
{
    char path[sizeof r->ncfg.start_model];
    if (snprintf(path, sizeof path, "%s.0", r->model) >= (int)sizeof path ||
        access(path, F_OK) != 0)
        return 0;
    int rc = nn_model_config(path, &r->ncfg, e);
    if (rc == 0) {
        if (start)
            snprintf(r->ncfg.start_model, sizeof r->ncfg.start_model, "%s", path);
        train_mark_labels(&r->ncfg, &r->rcfg, &r->cv_cfg);
        r->start0 = start;
    }
    return rc;
}

/* Whether file a was modified after file b (both exist). */
static int newer(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_mtim.tv_sec > sb.st_mtim.tv_sec ||
           (sa.st_mtim.tv_sec == sb.st_mtim.tv_sec && sa.st_mtim.tv_nsec > sb.st_mtim.tv_nsec);
}

/* Step 1: the settings, and what makeMode finds on disk. */
static int read_settings(struct run *r, struct cfg_node *command, struct pt_err *e)
{
    r->rank = comm_rank(r->ctx->comm);
    r->workers = comm_size(r->ctx->comm);
    int rc = read_setup(r, command, e);
    if (rc == 0 && r->make_mode) {
        r->resume = run_newest_epoch(r);
        char zero[4200], one[4200];
        snprintf(zero, sizeof zero, "%s.0", r->model);
        run_model_name(r, one, sizeof one, 1);
        if (r->resume == 1 && newer(zero, one)) /* CNTK's rule: an edit rewrote modelPath.0
                                                 * after epoch 1 was saved, so it starts over */
            r->resume = 0;
        char path[4200];
        run_model_name(r, path, sizeof path, 0);
        r->nothing_to_do = r->resume == (uint64_t)r->lc.max_epochs && access(path, R_OK) == 0;
        if (!r->nothing_to_do)
            rc = from_zero(r, r->resume == 0, e);
    }
    return rc;
}

/* Step 5: one model everywhere, whatever happened before; the engine, the learner and
 * makeMode's checkpoint. */
static int start_training(struct run *r, struct pt_err *e)
{
    int rc = r->workers > 1 ? stage_bcast_params(r, e) : 0;
    if (rc == 0)
        rc = engine_setup(r, e);
    if (rc == 0)
        rc = learner_init(&r->learner, r->be, r->lc.type, nn_learned_count(r->net), e);
    if (rc == 0)
        rc = make_spans(r, e);
    if (rc == 0 && r->resume)
        rc = restore_checkpoint(r, e);
    return rc;
}

int run_start(struct run *r, struct cfg_node *command, int *stop, struct pt_err *e)
{
    struct comm *comm = r->ctx->comm;
    *stop = 0;
    int rc = train_agree(comm, read_settings(r, command, e), "to read its settings", e);
    if (rc == 0)
        rc = run_check_settings(r, e);
    if (rc)
        return rc;
    if (r->nothing_to_do) {
        char path[4200];
        run_model_name(r, path, sizeof path, 0);
        if (run_may_log(r))
            pt_log_printf(r->ctx->log, "No further training is necessary: '%s' exists.\n", path);
        *stop = 1;
        return 0;
    }
    rc = train_agree(comm, open_inputs(r, e), "to open its data, model or output files", e);
    if (rc == 0)
        rc = run_check_network(r, e);
    if (rc == 0)
        rc = train_agree(comm, start_training(r, e), "to set up training", e);
    /* collective from its first call: only once every rank has set up training */
    if (rc == 0)
        rc = train_agree(comm, run_team_setup(r, e), "to share the model in memory", e);
    if (rc == 0)
        train_eval_name(r->net, r->eval_name, sizeof r->eval_name);
    if (rc == 0 && run_may_log(r))
        run_print_summary(r);
    return rc;
}

void run_release(struct run *r)
{
    engine_free(r->engine);
    /* a failed run: the events so far, and the closing bracket (a write error no longer
     * matters, the run fails anyway) */
    pt_trace_close(r->timeline, NULL);
    r->timeline = NULL;
    parallel_config_free(&r->pc);
    learner_free(&r->learner);
    free(r->spans);
    run_team_release_state(r);
    nn_free(r->net);
    run_team_free(r);
    reader_close(r->reader);
    reader_close(r->cv);
    if (r->be)
        backend_free(r->be);
    learn_config_free(&r->lc);
}
