/* One epoch of action=train: schedules -> "Starting Epoch" -> minibatches (train step, the
 * engine's aggregation, update, progress lines) -> flush -> the ranks' average of the
 * states (a batch normalization's running statistics) -> the models-agree check ->
 * "Finished Epoch" -> validation (cvReader) -> the epoch's files (train_save.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/timer.h"
#include "math/backend.h"
#include "train/logfmt.h"
#include "train/train_run.h"

double run_span(struct run *r, int lane, const char *name, double t0, size_t epoch, size_t mb,
                double samples)
{
    if (!r->timeline)
        return 0.0;
    double now = pt_now();
    struct pt_trace_arg a[3] = {{"epoch", (double)epoch + 1}};
    int n = 1;
    if (mb > 0)
        a[n++] = (struct pt_trace_arg){"mb", (double)mb};
    if (samples >= 0)
        a[n++] = (struct pt_trace_arg){"samples", samples};
    pt_trace_span(r->timeline, lane, name, t0, now, a, n);
    return now;
}

/* The engine works on the network's arena; its grad-ready hook sees the backward pass. */
static int grad_ready(void *ctx, size_t first, struct pt_err *e)
{
    struct run *r = ctx;
    return r->engine->ops->grad_ready(r->engine, nn_grads(r->net), first, e);
}

/* Epoch (0-based) where the parallel method is on: before parallelizationStartEpoch every
 * rank trains on all the data, identically (warm start). */
static int parallel_on(const struct run *r, size_t epoch)
{
    return parallel_config_epoch_on(&r->pc, epoch);
}

struct window {
    double v[PT_STATS]; /* the step statistics (PT_STATS's layout) summed */
    double t0;
    size_t first_mb;
};

static void progress(struct run *r, size_t epoch, size_t mb, struct window *w)
{
    struct logfmt_crit c[1 + NN_EVAL_MAX];
    int nc = train_crit_list(r->net, r->eval_name, w->v, 0, c);
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
                    (int)mb, pct, digits, c, nc, now - w->t0, w->v[2]);
    pt_log_often(r->ctx->log, "%s\n", line);
    *w = (struct window){.t0 = now, .first_mb = mb + 1};
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

/* Running sums of an epoch's step statistics (PT_STATS's layout). */
struct tally {
    double v[PT_STATS];
};

static void tally_add(double *acc, const double stats[PT_STATS])
{
    for (int k = 0; k < PT_STATS; k++)
        acc[k] += stats[k];
}

/* An engine synchronized the models (status 1): zero the momentum if it asks for that. */
static int synced(struct run *r, int status)
{
    if (status == 1 && r->engine->reset_momentum)
        learner_reset(&r->learner);
    return status < 0 ? status : 0;
}

/* Timeline: the device has finished what was queued, so that a span ends when its work
 * does (the CPU backend computes synchronously: nothing to wait for). */
static int settled(struct run *r, int rc, struct pt_err *e)
{
    return rc == 0 && r->timeline ? r->be->ops->sync(r->be, e) : rc;
}

/* May the learner's step of `samples` samples run inside the backward pass (*u)? Where
 * the engine leaves the gradient alone and the learner is plain momentum SGD: the update
 * pass over the arena (5 % of an MLP step on one core: 13 MB of memory traffic) then
 * happens while the weight gradients' tiles are in registers. */
static int fusable(struct run *r, const struct learn_epoch *ep, int on, size_t samples,
                   struct bk_sgd *u)
{
    return samples > 0 && (!on || engine_keeps_gradient(r->engine)) && nn_can_fuse_sgd(r->net) &&
           learner_fused_sgd(&r->learner, &r->lc, ep, samples, u);
}

/* The forward and backward pass of this rank's share (nothing to do for an empty one);
 * *fused: the backward pass applied the learner's step too. */
static int local_step(struct run *r, struct minibatch *mb, const struct learn_epoch *ep, int on,
                      size_t epoch, size_t nmb, struct nn_stats *st, int *fused, float *sums,
                      int *later, struct pt_err *e)
{
    *fused = *later = 0;
    if (mb->nseq == 0 && !r->team) { /* no sequence of this global minibatch here: it adds
                                      * nothing (a team member takes part all the same) */
        r->be->ops->fill(r->be, nn_grads(r->net), nn_param_count(r->net), 0.0f);
        return 0;
    }
    double t = pt_trace_now(r->timeline);
    int rc = settled(r, nn_train_forward(r->net, mb, (float)ep->dropout, st, e), e);
    t = run_span(r, PT_TRACE_COMPUTE, "forward", t, epoch, nmb, (double)st->samples);
    struct bk_sgd u; /* a team's step is of the team's samples */
    size_t samples = r->team ? st->team_samples : st->samples;
    if (rc == 0 && (*fused = fusable(r, ep, on, samples, &u)))
        nn_set_fused_sgd(r->net, &u);
    if (rc == 0) {
        rc = sums ? nn_train_backward_to(r->net, st, sums, e) : nn_train_backward(r->net, st, e);
        *later = rc == 1;
        rc = settled(r, *later ? 0 : rc, e);
    }
    run_span(r, PT_TRACE_COMPUTE, "backward", t, epoch, nmb, (double)st->samples);
    return rc;
}

/* One minibatch (nmb, 1-based, of epoch): local step, the engine's aggregation, the learner
 * with the global sample count. stats: criterion, eval, samples. With sums (criteria read
 * later, see struct later), *later says that the criteria are on their way there. *alone:
 * this rank's own passes failed (its data: labels a criterion refuses), before the
 * engine's exchange that the other ranks wait in. */
static int step(struct run *r, struct minibatch *mb, const struct learn_epoch *ep, int on,
                size_t epoch, size_t nmb, double stats[PT_STATS], float *sums, int *later,
                int *alone, struct pt_err *e)
{
    struct nn_stats st = {0};
    int fused;
    int rc = local_step(r, mb, ep, on, epoch, nmb, &st, &fused, sums, later, e);
    *alone = rc != 0;
    stats[0] = st.train_crit;
    stats[1] = st.eval_crit;
    stats[2] = (double)st.samples;
    for (int k = 3; k < PT_STATS; k++)
        stats[k] = st.eval_more[k - 3];
    r->engine->minibatch = nmb;
    if (rc == 0 && on)
        rc = engine_after_backward(r->engine, nn_grads(r->net), stats, e);
    if (fused && !r->fused_said && r->trace >= 2 && run_may_log(r))
        pt_log_printf(r->ctx->log, "Momentum SGD runs inside the backward pass (its step fused "
                                   "into the weight-gradient products).\n");
    r->fused_said |= fused;
    if (rc == 0 && stats[2] > 0 && !fused) {
        double t = pt_trace_now(r->timeline);
        learner_update(&r->learner, &r->lc, ep, nn_params(r->net), nn_grads(r->net),
                       (size_t)stats[2], r->spans, r->nspans);
        rc = settled(r, rc, e);
        run_span(r, PT_TRACE_COMPUTE, "update", t, epoch, nmb, stats[2]);
    }
    if (rc == 0 && on)
        rc = synced(r, engine_after_update(r->engine, (size_t)stats[2], e));
    return rc;
}

/* Criteria read later (on a device, one rank, minibatches sent ahead): each step's sums
 * are copied into host memory without a wait for the device, so that the host queues the
 * next step while the device still computes this one; they are added up in step order,
 * as they would have been at once, when a progress line or the epoch's end needs them or
 * the queue is full: the same logs, bit for bit. PT_DEFER_CRITERIA=0 turns it off. */
#define LATER_MAX 128
struct later {
    float *sums;                       /* LATER_MAX x NN_CRIT_SUMS floats (host_alloc) */
    double stats[LATER_MAX][PT_STATS]; /* each step's, criteria from sums[] where !have */
    int have[LATER_MAX];
    size_t n;
};

static struct later *later_new(struct run *r, int send_ahead, int on)
{
    struct backend *b = r->be;
    const char *v = getenv("PT_DEFER_CRITERIA");
    /* the parallel method's engine on one rank sums the statistics of that one alone (or
     * none at all) where it leaves the gradient alone; elsewhere it exchanges them */
    int alone = !on || (r->workers == 1 && engine_keeps_gradient(r->engine));
    if (!send_ahead || !alone || (v && strcmp(v, "0") == 0) || !b->ops->download_async)
        return NULL;
    struct later *q = calloc(1, sizeof *q);
    if (q && !(q->sums = bk_host_malloc(b, LATER_MAX * NN_CRIT_SUMS * sizeof(float)))) {
        free(q);
        q = NULL;
    }
    return q; /* NULL (out of memory too): the criteria are read at once */
}

static void later_free(struct run *r, struct later *q)
{
    if (!q)
        return;
    (void)r->be->ops->sync(r->be, NULL); /* no copy into sums[] left queued (a failed step) */
    bk_host_release(r->be, q->sums);
    free(q);
}

/* The queued steps' statistics into the epoch's and the window's sums, in step order. */
static int later_drain(struct run *r, struct later *q, struct tally *all, double *window,
                       struct pt_err *e)
{
    if (!q || q->n == 0)
        return 0;
    int rc = r->be->ops->sync(r->be, e);
    for (size_t i = 0; rc == 0 && i < q->n; i++) {
        if (!q->have[i]) {
            struct nn_stats st = {0};
            nn_criteria_from_sums(q->sums + i * NN_CRIT_SUMS, &st);
            q->stats[i][0] = st.train_crit;
            q->stats[i][1] = st.eval_crit;
        }
        tally_add(all->v, q->stats[i]);
        tally_add(window, q->stats[i]);
    }
    q->n = 0;
    return rc;
}

/* Epoch end: what a buffered engine still holds is applied too. */
static int flush(struct run *r, const struct learn_epoch *ep, struct tally *all, struct pt_err *e)
{
    double stats[PT_STATS];
    int rc;
    while ((rc = engine_flush(r->engine, nn_grads(r->net), stats, e)) == 1) {
        if (stats[2] > 0)
            learner_update(&r->learner, &r->lc, ep, nn_params(r->net), nn_grads(r->net),
                           (size_t)stats[2], r->spans, r->nspans);
        tally_add(all->v, stats);
    }
    if (rc)
        return rc;
    /* the last synchronization of the epoch; local statistics become global */
    return synced(r, engine_end_epoch(r->engine, all->v, e));
}

/* Every rank must hold the same model after a synchronous epoch: compare checksums. A
 * team's ranks hold one model, in shared memory: nothing to compare (the checksum, 4 ms
 * of a 0.79 s epoch of the MLP on 2 ranks, would be the same bytes on every rank). */
static int check_models_agree(struct run *r, size_t epoch, struct pt_err *e)
{
    if (r->workers == 1)
        return 0;
    if (r->team) {
        if (r->trace >= 2 && run_may_log(r))
            pt_log_printf(r->ctx->log, "Epoch %zu: the %d ranks share one model in memory.\n",
                          epoch + 1, r->workers);
        return 0;
    }
    long long *all = calloc((size_t)r->workers, sizeof *all);
    uint64_t sum = 0;
    int rc =
        all ? stage_params_checksum(r, &sum, e) : pt_err_set(e, PT_ENOMEM, "error: out of memory");
    long long mine = (long long)sum;
    if (rc == 0)
        rc = comm_allgather(r->ctx->comm, &mine, 1, all, COMM_INT64, e);
    for (int k = 1; rc == 0 && k < r->workers; k++)
        if (all[k] != all[0])
            rc = pt_err_set(e, PT_EINTERNAL,
                            "error: after epoch %zu the model of rank %d differs "
                            "from rank 0's (checksums %016llx, %016llx)",
                            epoch + 1, k, (unsigned long long)all[k], (unsigned long long)all[0]);
    if (rc == 0 && r->trace >= 2 && run_may_log(r))
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
    double sums[PT_STATS];
    size_t nmb = 0;
    double t = pt_trace_now(r->timeline);
    int rc = train_evaluate(r->ctx->comm, r->net, r->cv, ep->mb_size, 0, sums, &nmb, e);
    run_span(r, PT_TRACE_EPOCH, "validate", t, epoch, 0, -1);
    if (rc)
        return pt_err_context(e, "while validating epoch %zu on cvReader", epoch + 1);
    size_t n = (size_t)sums[2];
    struct logfmt_crit c[1 + NN_EVAL_MAX];
    int nc = train_crit_list(r->net, r->eval_name, sums, 0, c);
    char line[1024];
    logfmt_validate(line, sizeof line, (int)epoch + 1, (int)r->lc.max_epochs, c, nc);
    r->crit.cv_train = n ? sums[0] / (double)n : NAN;
    r->crit.cv_eval = n ? sums[1] / (double)n : NAN;
    if (run_may_log(r))
        pt_log_printf(r->ctx->log, "%s\n", line);
    return 0;
}

/* On a device the host reads minibatch k+1 while the device computes k (on the CPU the
 * reader's thread would take a core from the BLAS threads). PT_READ_AHEAD=1 or 0 says
 * otherwise (the tests compare both ways). */
static int read_ahead(const struct run *r)
{
    const char *v = getenv("PT_READ_AHEAD");
    if (v && *v)
        return strcmp(v, "0") != 0;
    return !r->be->host_memory;
}

/* With minibatches read ahead on a device: minibatch k+1, when read already, is sent to
 * the device during step k (nn_upload_ahead). PT_UPLOAD_AHEAD=0 turns that off (the
 * tests and benchmarks compare both ways). */
static int upload_ahead(void)
{
    const char *v = getenv("PT_UPLOAD_AHEAD");
    return !(v && strcmp(v, "0") == 0);
}

/* Steps replayed from recordings (nn_set_step_replay: CUDA graphs) where PT_CUDA_GRAPHS=1
 * asks for them, the criteria are read later (one rank, inputs sent ahead), and no
 * timeline times the passes one by one. */
static int step_replay(const struct run *r, const struct later *q)
{
    const char *v = getenv("PT_CUDA_GRAPHS");
    return q && !r->timeline && v && strcmp(v, "1") == 0;
}

/* This rank's reader failed in the middle of a parallel epoch (an image that no longer
 * decodes), or its own passes did (labels that ClassBasedCrossEntropyWithSoftmax refuses):
 * the others are in the step's collectives, where no agreement can reach them. Its reason
 * is printed, here, and the job ended. */
static void failed_alone(struct run *r, const struct pt_err *e)
{
    pt_log_flush(r->ctx->log); /* the lines held so far, before the abort skips the close */
    fprintf(stderr, "rank %d: %s\n", r->rank, e->msg);
    fflush(stderr);
    comm_abort(r->ctx->comm, e->code == PT_EUSER ? 1 : 3);
}

/* The end of an autoAdjustMinibatch trial (train_search.c): CNTK's line, the criterion. */
static int mini_end(struct run *r, size_t epoch, const struct learn_epoch *ep,
                    const struct tally *all, size_t samples)
{
    r->mini_crit = samples ? all->v[0] / (double)samples : NAN;
    if (!run_may_log(r))
        return 0;
    struct logfmt_crit c[1 + NN_EVAL_MAX];
    int nc = train_crit_list(r->net, r->eval_name, all->v, 0, c);
    char line[1024], one[256];
    size_t o = (size_t)snprintf(line, sizeof line, " Finished Mini-Epoch[%d]: ", (int)epoch + 1);
    for (int i = 0; i < nc && o < sizeof line; i++) {
        logfmt_criterion(one, sizeof one, &c[i]);
        o += (size_t)snprintf(line + o, sizeof line - o, "%s; ", one);
    }
    pt_log_printf(r->ctx->log, "%.900slearningRatePerSample = %.8g; minibatchSize = %zu\n", line,
                  (double)(float)ep->lr_per_sample, ep->mb_size);
    return 0;
}

int run_epoch(struct run *r, size_t epoch, const struct learn_epoch *ep, int *stop,
              struct pt_err *e)
{
    struct pt_log *log = r->ctx->log;
    int on = parallel_on(r, epoch), talk = run_may_log(r), mini = r->mini_samples > 0;
    if (r->trace > 0 && talk && !mini) {
        char line[512];
        logfmt_epoch_start(line, sizeof line, (int)epoch + 1, ep->lr_per_sample,
                           learn_effective_momentum(ep), learn_momentum_time_constant(ep));
        pt_log_plain(log, "\n");
        pt_log_printf(log, "%s\n", line);
    }
    /* epochTime (and the timeline's epoch span) covers the engine's start of the epoch */
    double t0 = pt_now(), stats[PT_STATS];
    int rc = on ? engine_start_epoch(r->engine, epoch, e) : 0;
    /* a team: rank 0 has written the last epoch's files from the shared model, and a
     * loaded model is in place on every rank, before anybody changes it */
    if (rc == 0)
        rc = nn_team_sync(r->net, e);
    if (r->trace > 0 && talk && !mini)
        loop_start_line(r, epoch);
    struct minibatch mb = {0};
    struct tally all = {0};
    size_t nmb = 0;
    double mine = 0.0; /* samples this rank trained on (they weight its states) */
    struct window w = {.t0 = t0, .first_mb = 1};
    /* parallel epochs split every global minibatch among the ranks; without
     * distributedMBReading each rank reads all of it and keeps its slice (CNTK) */
    int split = on && r->workers > 1;
    reader_split_by_sequence(r->reader, split && !r->pc.distributed_reading);
    if (rc == 0)
        rc = reader_start_epoch(r->reader, epoch, (size_t)r->lc.epoch_size, split ? r->rank : 0,
                                split ? r->workers : 1, e);
    struct reader_prefetch *ahead = NULL;
    /* the minibatches' data in the backend's host memory (pinned on a GPU) */
    struct mb_host_alloc pinned = {bk_host_malloc_cb, bk_host_release_cb, r->be};
    if (rc == 0 && read_ahead(r))
        rc = reader_prefetch_start(r->reader, ep->mb_size, r->be->ops->host_alloc ? &pinned : NULL,
                                   &ahead, e);
    double t = pt_trace_now(r->timeline);
    struct minibatch *m = &mb, *next;
    int read_failed = 0, step_failed = 0, send_ahead = ahead && upload_ahead(), queued;
    /* minibatches sent to the device during the step before theirs, and taken so */
    size_t sent = 0, taken = nn_upload_taken(r->net);
    struct later *q = rc == 0 ? later_new(r, send_ahead, on) : NULL;
    /* alone (q): the engine has no use for gradients as they become final */
    int replay = nn_set_step_replay(r->net, step_replay(r, q));
    nn_set_grad_ready(r->net, on && r->engine->ops->grad_ready && !replay ? grad_ready : NULL, r);
    size_t replayed0, recorded0, failed0, replayed, recorded, failed;
    nn_replay_counts(r->net, &replayed0, &recorded0, &failed0);
    uint64_t seen = 0; /* global samples so far (a trial stops after mini_samples) */
    while (rc == 0 && !(mini && seen >= r->mini_samples)) {
        /* the minibatch handed back now was sent to the device by a copy queued before
         * the last: wait for that (and so for the steps up to the one before last, the
         * most the host runs ahead of the device) */
        if (send_ahead && (rc = nn_upload_wait(r->net, e)) != 0)
            break;
        rc = read_failed = ahead ? reader_prefetch_next(ahead, &m, e)
                                 : reader_next(r->reader, ep->mb_size, &mb, e);
        if (rc || !m->global_samples)
            break;
        run_span(r, PT_TRACE_COMPUTE, "read", t, epoch, nmb + 1, (double)m->samples);
        m->in_place = 1; /* read for this step only */
        float *sums = q ? q->sums + q->n * NN_CRIT_SUMS : NULL;
        if ((rc = step(r, m, ep, on, epoch, nmb + 1, stats, sums, &queued, &step_failed, e)))
            break;
        /* the next minibatch, when read already, to the device beside this step */
        if (send_ahead && (next = reader_prefetch_peek(ahead)) != NULL) {
            if ((rc = nn_upload_ahead(r->net, next, e)) < 0)
                break;
            sent += (size_t)rc;
            rc = 0;
        }
        nmb++;
        seen += m->global_samples;
        mine += (double)m->samples;  /* this rank's own (the stats may be everyone's) */
        if (q && (queued || q->n)) { /* in order behind the steps queued before it */
            memcpy(q->stats[q->n], stats, sizeof q->stats[q->n]);
            q->have[q->n++] = !queued;
        } else {
            tally_add(all.v, stats);
            tally_add(w.v, stats);
        }
        int show = r->trace > 0 && talk && !mini &&
                   (nmb % (size_t)r->lc.show_every == 0 || nmb <= (size_t)r->lc.show_first);
        if (q && (show || q->n == LATER_MAX) && (rc = later_drain(r, q, &all, w.v, e)) != 0)
            break;
        if (show)
            progress(r, epoch, nmb, &w);
        t = pt_trace_now(r->timeline);
    }
    struct pt_err settle = {0}; /* copies from the slots end before they are freed */
    if (nn_upload_settle(r->net, &settle) != 0 && rc == 0) {
        *e = settle;
        rc = settle.code;
    }
    if (rc == 0)
        rc = later_drain(r, q, &all, w.v, e);
    int deferred = q != NULL;
    later_free(r, q);
    reader_prefetch_stop(ahead);
    mb_free(&mb);
    if ((read_failed || step_failed) && split)
        failed_alone(r, e);
    if (rc == 0 && on)
        rc = flush(r, ep, &all, e);
    if (rc == 0 && on)
        rc = stage_average_states(r, mine, e);
    if (rc == 0 && on)
        rc = check_models_agree(r, epoch, e);
    if (rc)
        return rc;
    if (send_ahead && r->trace >= 2 && talk)
        pt_log_printf(log,
                      "Epoch[%d]: %zu of %zu minibatches sent to the device during the step "
                      "before theirs (%zu taken so); the criteria read %s.\n",
                      (int)epoch + 1, sent, nmb, nn_upload_taken(r->net) - taken,
                      deferred ? "later" : "after each step");
    nn_replay_counts(r->net, &replayed, &recorded, &failed);
    if (replay && r->trace >= 2 && talk)
        pt_log_printf(log,
                      "Epoch[%d]: %zu of %zu steps replayed from recordings (CUDA graphs); "
                      "%zu recorded, %zu recordings failed.\n",
                      (int)epoch + 1, replayed - replayed0, nmb, recorded - recorded0,
                      failed - failed0);
    size_t samples = (size_t)all.v[2];
    if (mini) /* a trial of autoAdjustMinibatch: its criterion, nothing kept */
        return mini_end(r, epoch, ep, &all, samples);
    /* AutoAdjust with loadBestModel goes back from a diverged epoch (CNTK) */
    if (!isfinite(all.v[0]) && !(learn_aa_after(&r->lc.aa) && r->lc.aa.load_best))
        return pt_err_set(e, PT_EUSER,
                          "error: epoch %zu: the training criterion is not finite "
                          "(diverged); lower the learning rate",
                          epoch + 1);
    r->mbs_last_epoch = nmb;
    r->st.samples_seen += samples;
    r->st.epochs_done = epoch + 1;
    r->st.dropout_state = nn_get_dropout_state(r->net);
    struct logfmt_crit c[1 + NN_EVAL_MAX];
    int nc = train_crit_list(r->net, r->eval_name, all.v, 0, c);
    char line[1024];
    double t1 = pt_now();
    logfmt_epoch_end(line, sizeof line, (int)epoch + 1, (int)r->lc.max_epochs, c, nc,
                     (size_t)r->st.samples_seen, (float)ep->lr_per_sample, t1 - t0);
    if (r->timeline) {
        struct pt_trace_arg a[3] = {{"epoch", (double)epoch + 1},
                                    {"minibatches", (double)nmb},
                                    {"samples", (double)samples}};
        pt_trace_span(r->timeline, PT_TRACE_EPOCH, "epoch", t0, t1, a, 3);
    }
    if (talk)
        pt_log_printf(log, "%s\n", line);
    r->crit.train = samples ? all.v[0] / (double)samples : NAN;
    r->crit.eval = samples ? all.v[1] / (double)samples : NAN;
    if (r->cv && (rc = validate(r, epoch, ep, e)))
        return rc;
    int save = 1;
    if ((rc = adjust_after_epoch(r, epoch, &save, stop, e)))
        return rc;
    return save ? run_save_epoch(r, epoch, epoch + 1 == (size_t)r->lc.max_epochs, e) : 0;
}
