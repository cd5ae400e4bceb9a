/* DataParallelASGD (SPEC 7.4): an asynchronous parameter server. The server is a
 * comm_store: one flat copy of all parameters, sharded over every rank, in one-sided MPI
 * memory. Each worker trains its own model on its share of the data and, every
 * syncPeriodPerWorker local samples, pushes what it learned and pulls the server model.
 * No worker waits for another's computation: a push and a pull touch the shards without
 * their owners taking part. Only the epoch's end is collective.
 *
 * One sync (w: the local model, start: the server model this worker last pulled plus, with
 * the pipeline, its own pending push; f: the push factor; N: workers; t: this worker's syncs
 * so far, this one included, as CNTK counts; warm(t) = 1 (adjustType none)
 * | min(1, c + (1 - c) t / M) (linearly) | min(1, c (floor(t / M) + 1)) (staircase)):
 *   f = warm(t) / 2^k (asynchronous; 2^k the smallest power of two >= N + the push's
 *       staleness, see below), 1 / N (SimModelAverage)
 *   plain:      d = w - start; delta = f d; server += delta; start = server;
 *               w = start + (d - delta)
 *   usePipeline: wait for the previous round's push/pull (P = the model it pulled);
 *               d = w - start; delta = f d; start = P + delta; w = P + d; start pushing
 *               delta and pulling into P in the background.
 * Why (README, DataParallelASGD): CNTK pushed warm(t) d and took the pull. Where a sync
 * period of local steps reaches the minimum, N workers' deltas from about the same model
 * overshoot N - 1 times, and staleness feeds the error back (CNTK's SimpleMultiGPU config
 * went to chance). f <= 1 / (N + staleness) (staleness-aware steps, Zhang et al. 2016) keeps
 * such deltas averaging; the residual d - delta, kept and trained on as 1-bit SGD keeps its
 * quantization error, still delivers all progress where workers move alike. A power of
 * two makes f d an exact scaling of d (f = 1: nothing kept, exactly).
 *   SimModelAverage: f = 1 / workers, nothing kept (w = start = the pull); between push
 *               and pull a header allreduce (samples, done flag, statistics) that waits
 *               for every worker's push, after the pull a barrier that keeps the next
 *               round's pushes out until every worker pulled: the pull gives exactly the
 *               average of the models (ModelAveragingSGD with equal weights). Ranks whose
 *               data ends early keep joining syncs until every rank is done, as in masgd.c.
 * Epoch end: the final push (all that is not on the server yet), remote completion of
 * every push (comm_store_complete), an allreduce of the epoch statistics (so all pushes
 * have landed when it returns), then every rank pulls the same final model.
 * Epoch start: the first parallel epoch (or a resumed one) writes the model into the store;
 * a barrier keeps every worker from pushing before every shard holds it.
 *
 * Staleness: a counter on rank 0 numbers the pushes (fetch-and-add). The staleness of a
 * push is the number of other workers' pushes between the pull its training started from
 * and the push itself: counter before this push - counter after the base pull - this
 * worker's own pushes in between (1 with the pipeline). Counted at push time, so a push
 * that lands while a pull is in flight counts as stale even if the pull saw part of it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/timer.h"
#include "math/backend.h"
#include "parallel/asgd_config.h"
#include "parallel/parallel.h"

#define ASGD_BINS 64             /* staleness histogram: 0 .. 62, and 63 or more */
#define ASGD_HDR  (PT_STATS + 1) /* end-of-epoch allreduce: tally, syncs; then the histogram */

struct asgd {
    struct engine base;
    struct comm_store *store;
    int workers, pipeline, sim, adjust;
    float last_f; /* the factor of the latest push (statistics) */
    double coef;
    long long per_adjust;
    size_t period, since;
    float *start, *delta, *pulled;              /* see the header; pulled: pipeline only */
    struct bk_stage push_stage, pull_stage;     /* host views handed to the store */
    float *pull_dev, *pull_host;                /* the pull in flight: lands in pull_dev */
    long long syncs;                            /* t: this worker's syncs, all epochs */
    float syncs_state;                          /* checkpoint: syncs per worker (mean) */
    int have_server;                            /* the store holds the model */
    int loaded;                                 /* start holds a checkpoint's server model */
    long long seen_base, own_base, seen_flight; /* staleness bookkeeping */
    double hist[ASGD_BINS];                     /* this epoch, this rank */
    /* syncPerfStats */
    double rep_t0, rep_comm;
    long long rep_samples, rep_total;
};

static struct asgd *as_of(struct engine *en)
{
    return (struct asgd *)en;
}

/* f of sync t of staleness `stale` (see the header). */
static float push_factor(const struct asgd *a, long long t, long long stale)
{
    if (a->sim)
        return 1.0f / (float)a->workers;
    double c = a->coef, f = 1.0;
    if (a->adjust == 1)
        f = c + (1.0 - c) * (double)t / (double)a->per_adjust;
    else if (a->adjust == 2)
        f = c * (double)(t / a->per_adjust + 1);
    f = f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
    double p = 1.0; /* the smallest power of two >= workers + stale */
    while (p < (double)a->workers + (double)stale)
        p *= 2.0;
    return (float)(f / p);
}

/* Number this push; returns its staleness (see the header). */
static int count_push(struct asgd *a, long long *stale, struct pt_err *e)
{
    long long before = 0;
    int rc = comm_store_count(a->store, 1, &before, e);
    if (rc)
        return rc;
    long long s = before - a->seen_base - a->own_base;
    *stale = s > 0 ? s : 0;
    a->hist[*stale < ASGD_BINS - 1 ? *stale : ASGD_BINS - 1] += 1;
    if (a->pipeline) { /* the next round starts from the pull in flight, plus this push */
        a->seen_base = a->seen_flight;
        a->own_base = 1;
        a->seen_flight = before + 1;
    } else {
        a->seen_base = before + 1;
        a->own_base = 0;
    }
    return 0;
}

/* Bytes of a push (or a pull) that leave this rank: every shard but its own. */
static double push_bytes(struct asgd *a)
{
    size_t first, mine;
    comm_store_shard(a->store, comm_rank(a->base.comm), &first, &mine);
    return 4.0 * (double)(a->base.layout.n - mine);
}

static void report(struct asgd *a, double t0, double t1, double comm_s, double wait,
                   long long stale, double total, int final)
{
    struct engine *en = &a->base;
    double bytes = push_bytes(a);
    char extra[128];
    snprintf(extra, sizeof extra, ",\"staleness\":%lld,\"factor\":%.6g,\"final\":%d", stale,
             (double)a->last_f, final);
    engine_perf_sync(en, t0, t1, comm_s, wait, bytes, (double)a->since, 32, 0, extra);
    a->rep_comm += comm_s;
    a->rep_samples += (long long)a->since;
    a->rep_total += (long long)total;
    long long f = en->perf.every;
    if (f <= 0 || a->syncs % f != 0)
        return;
    double secs = t1 - a->rep_t0;
    double k = secs > 0 ? (double)a->rep_total / secs / 1000.0 : 0.0;
    if (en->log && a->sim) /* CNTK's lines */
        pt_log_often(en->log,
                     "\t\t(sim-model aggregation stats) %d-th sync: %8.2f seconds since last "
                     "report ; %d samples processed by %d workers (%d by me);\n"
                     "\t\t(sim-model aggregation stats) %d-th sync: totalThroughput = %.2fk "
                     "samplesPerSecond , throughputPerWorker = %.2fk samplesPerSecond\n",
                     (int)a->syncs, secs, (int)a->rep_total, a->workers, (int)a->rep_samples,
                     (int)a->syncs, k, k / a->workers);
    else if (en->log)
        pt_log_often(en->log,
                     "\t\t(ASGD stats) %d-th sync: %8.2f seconds since last report (%.2f "
                     "seconds on comm.); %d samples processed by me; throughputPerWorker = "
                     "%.2fk samplesPerSecond; staleness of this push = %lld\n",
                     (int)a->syncs, secs, a->rep_comm, (int)a->rep_samples,
                     secs > 0 ? (double)a->rep_samples / secs / 1000.0 : 0.0, stale);
    a->rep_t0 = t1;
    a->rep_comm = 0;
    a->rep_samples = a->rep_total = 0;
}

/* delta = f (w - start) */
static void make_delta(struct asgd *a, float f)
{
    struct backend *b = a->base.layout.bk;
    a->last_f = f;
    b->ops->sub_scaled(b, a->delta, a->base.layout.params, a->start, a->base.layout.n, f);
}

/* After make_delta: w = d - delta, the part of this round's progress not pushed (the
 * residual); keep_add then puts it on the pulled model. With f = 1 it is exactly 0. */
static void keep_residual(struct asgd *a)
{
    struct backend *b = a->base.layout.bk;
    float *w = a->base.layout.params;
    b->ops->axpy(b, w, a->start, a->base.layout.n, -1.0f);
    b->ops->axpy(b, w, a->delta, a->base.layout.n, -1.0f);
}

/* w += x (x: the model just pulled) */
static void keep_add(struct asgd *a, const float *x)
{
    struct backend *b = a->base.layout.bk;
    b->ops->axpy(b, a->base.layout.params, x, a->base.layout.n, 1.0f);
}

/* w = start (the model just pulled). */
static void take_start(struct asgd *a)
{
    struct backend *b = a->base.layout.bk;
    b->ops->copy(b, a->base.layout.params, a->start, a->base.layout.n);
}

/* comm_store_start with device buffers: add (NULL: none) goes out through a host stage,
 * get (NULL: none) is read into a host stage and lands in get at store_wait. */
static int store_start(struct asgd *a, float *add, float *get, struct pt_err *e)
{
    struct backend *b = a->base.layout.bk;
    size_t n = a->base.layout.n;
    float *hadd = NULL, *hget = NULL;
    int rc = add ? bk_stage_out(b, &a->push_stage, add, 0, n, &hadd, e) : 0;
    if (rc == 0 && get)
        rc = bk_stage_for_write(b, &a->pull_stage, get, n, &hget, e);
    if (rc == 0)
        rc = comm_store_start(a->store, hadd, hget, e);
    a->pull_dev = rc == 0 ? get : NULL;
    a->pull_host = hget;
    return rc;
}

/* comm_store_wait, then the pull that completed into its device buffer. */
static int store_wait(struct asgd *a, struct pt_err *e)
{
    int rc = comm_store_wait(a->store, e);
    if (rc == 0 && a->pull_dev)
        rc = bk_stage_in(a->base.layout.bk, a->pull_dev, a->pull_host, 0, a->base.layout.n, e);
    a->pull_dev = NULL;
    return rc;
}

static int sync_plain(struct asgd *a, struct pt_err *e)
{
    struct engine *en = &a->base;
    double t0 = pt_now();
    long long stale = 0;
    engine_mark_start(en);
    int rc = count_push(a, &stale, e);
    engine_mark(en, PT_TRACE_COMM, "count", sizeof stale);
    if (rc)
        return rc;
    make_delta(a, push_factor(a, ++a->syncs, stale));
    keep_residual(a);
    engine_mark(en, PT_TRACE_COMPUTE, "delta", -1);
    rc = store_start(a, a->delta, a->start, e);
    if (rc == 0)
        rc = store_wait(a, e);
    engine_mark(en, PT_TRACE_COMM, "push+pull", push_bytes(a));
    if (rc)
        return rc;
    keep_add(a, a->start);
    engine_mark(en, PT_TRACE_COMPUTE, "apply", -1);
    double t1 = pt_now();
    report(a, t0, t1, t1 - t0, 0, stale, (double)a->since, 0);
    a->since = 0;
    return 0;
}

static int sync_pipelined(struct asgd *a, struct pt_err *e)
{
    struct engine *en = &a->base;
    struct backend *b = en->layout.bk;
    double t0 = pt_now();
    engine_mark_start(en);
    int rc = store_wait(a, e); /* the previous round's exchange */
    double waited = pt_now() - t0;
    engine_mark(en, PT_TRACE_COMM, "wait", -1);
    long long stale = 0;
    if (rc == 0)
        rc = count_push(a, &stale, e);
    engine_mark(en, PT_TRACE_COMM, "count", sizeof stale);
    if (rc)
        return rc;
    double t1 = pt_now();
    /* delta = f d; start = P + delta; w = P + d (d = w - start) */
    make_delta(a, push_factor(a, ++a->syncs, stale));
    b->ops->axpy(b, en->layout.params, a->start, en->layout.n, -1.0f);
    b->ops->copy(b, a->start, a->pulled, en->layout.n);
    b->ops->axpy(b, a->start, a->delta, en->layout.n, 1.0f);
    keep_add(a, a->pulled);
    engine_mark(en, PT_TRACE_COMPUTE, "delta", -1);
    double t2 = pt_now();
    rc = store_start(a, a->delta, a->pulled, e);
    engine_mark(en, PT_TRACE_COMM, "push+pull start", push_bytes(a));
    if (rc)
        return rc;
    double t3 = pt_now();
    report(a, t0, t3, (t1 - t0) + (t3 - t2), waited, stale, (double)a->since, 0);
    a->since = 0;
    return 0;
}

/* SimModelAverage: push, wait for everybody's push (the header), pull. */
static int sync_sim(struct asgd *a, int done, double tally[PT_STATS], int *all_done,
                    struct pt_err *e)
{
    struct engine *en = &a->base;
    double t0 = pt_now();
    int rc = 0;
    engine_mark_start(en);
    if (a->since > 0) {
        make_delta(a, push_factor(a, ++a->syncs, 0));
        engine_mark(en, PT_TRACE_COMPUTE, "delta", -1);
        rc = store_start(a, a->delta, NULL, e);
    }
    if (rc == 0)
        rc = comm_store_complete(a->store, e);
    engine_mark(en, PT_TRACE_COMM, "push", a->since > 0 ? push_bytes(a) : 0);
    double hdr[2 + PT_STATS] = {(double)a->since, done ? 1.0 : 0.0};
    memcpy(hdr + 2, tally, PT_STATS * sizeof *tally);
    double tw = pt_now(), wait = 0;
    if (rc == 0)
        rc = comm_allreduce_f64(en->comm, hdr, 2 + PT_STATS, e);
    wait += pt_now() - tw;
    engine_mark(en, PT_TRACE_COMM, "wait", sizeof hdr);
    if (rc == 0 && hdr[0] > 0) {
        rc = store_start(a, NULL, a->start, e);
        if (rc == 0)
            rc = store_wait(a, e);
        if (rc == 0)
            take_start(a);
        engine_mark(en, PT_TRACE_COMM, "pull", 0);
        tw = pt_now();
        if (rc == 0) /* nobody pushes the next round before every rank pulled this one */
            rc = comm_barrier(en->comm, e);
        wait += pt_now() - tw;
        engine_mark(en, PT_TRACE_COMM, "barrier", -1);
    }
    if (rc)
        return pt_err_context(e, "in DataParallelASGD (SimModelAverage) sync %lld", a->syncs);
    *all_done = hdr[1] > (double)a->workers - 0.5;
    if (*all_done)
        memcpy(tally, hdr + 2, PT_STATS * sizeof *tally);
    double t1 = pt_now();
    if (a->since > 0 || hdr[0] > 0)
        report(a, t0, t1, t1 - t0, wait, 0, hdr[0], 0);
    a->since = 0;
    return 0;
}

static int as_after_update(struct engine *en, size_t samples, struct pt_err *e)
{
    struct asgd *a = as_of(en);
    a->since += samples;
    if (a->since < a->period) /* one-sided components that need the owner get it here */
        return comm_store_poke(a->store, e) ? -1 : 0;
    int rc, all = 0;
    double none[PT_STATS] = {0};
    if (a->sim)
        rc = sync_sim(a, 0, none, &all, e);
    else
        rc = a->pipeline ? sync_pipelined(a, e) : sync_plain(a, e);
    if (rc && !a->sim)
        pt_err_context(e, "in DataParallelASGD push/pull %lld", a->syncs);
    return rc ? -1 : 1;
}

static void staleness_line(struct asgd *a, const double *hist, double pushes)
{
    struct engine *en = &a->base;
    if (!en->log || a->sim || pushes <= 0)
        return;
    double sum = 0, seen = 0;
    long long med = -1, p90 = -1, max = 0;
    for (int b = 0; b < ASGD_BINS; b++) {
        sum += b * hist[b];
        seen += hist[b];
        if (med < 0 && seen >= 0.5 * pushes)
            med = b;
        if (p90 < 0 && seen >= 0.9 * pushes)
            p90 = b;
        if (hist[b] > 0)
            max = b;
    }
    pt_log_printf(en->log,
                  "DataParallelASGD epoch %zu: %.0f pushes by %d workers; staleness "
                  "(other workers' pushes between a pull and the next push): mean "
                  "%.2f, median %lld, 90th percentile %lld, max %lld%s\n",
                  en->epoch + 1, pushes, a->workers, sum / pushes, med, p90, max,
                  max == ASGD_BINS - 1 ? " or more" : "");
}

/* Final push, everybody's pushes landed (the allreduce of the statistics), final pull. */
static int end_async(struct asgd *a, double tally[PT_STATS], struct pt_err *e)
{
    struct engine *en = &a->base;
    double t0 = pt_now();
    long long stale = 0;
    engine_mark_start(en);
    /* with the pipeline, start is the pulled model plus the push just completed: w - start
     * is what this worker learned since its last push plus what it kept back, as without;
     * all of it goes now (factor 1), so that every rank ends on the same model */
    int rc = store_wait(a, e), pushed = 0;
    double wait = pt_now() - t0;
    engine_mark(en, PT_TRACE_COMM, "wait", -1);
    if (rc == 0 && (a->since > 0 || a->last_f < 1.0f)) {
        ++a->syncs;
        make_delta(a, 1.0f);
        engine_mark(en, PT_TRACE_COMPUTE, "delta", -1);
        if ((rc = count_push(a, &stale, e)) == 0)
            rc = store_start(a, a->delta, NULL, e);
        pushed = 1;
    }
    if (rc == 0)
        rc = comm_store_complete(a->store, e);
    engine_mark(en, PT_TRACE_COMM, "final push", pushed ? push_bytes(a) : 0);
    double all[ASGD_HDR + ASGD_BINS];
    memcpy(all, tally, PT_STATS * sizeof *tally);
    all[PT_STATS] = (double)a->syncs;
    memcpy(all + ASGD_HDR, a->hist, sizeof a->hist);
    double tw = pt_now();
    if (rc == 0) /* returns once every rank's pushes have landed */
        rc = comm_allreduce_f64(en->comm, all, ASGD_HDR + ASGD_BINS, e);
    wait += pt_now() - tw;
    engine_mark(en, PT_TRACE_COMM, "wait", sizeof all);
    if (rc == 0)
        rc = store_start(a, NULL, a->start, e);
    if (rc == 0)
        rc = store_wait(a, e);
    if (rc)
        return pt_err_context(e, "in DataParallelASGD's final push/pull of epoch %zu",
                              en->epoch + 1);
    take_start(a);
    engine_mark(en, PT_TRACE_COMM, "final pull", 0);
    memcpy(tally, all, PT_STATS * sizeof *tally);
    a->syncs_state = (float)(all[PT_STATS] / a->workers);
    double pushes = 0;
    for (int b = 0; b < ASGD_BINS; b++)
        pushes += all[ASGD_HDR + b];
    double t1 = pt_now();
    if (pushed)
        report(a, t0, t1, t1 - t0, wait, stale, (double)a->since, 1);
    staleness_line(a, all + ASGD_HDR, pushes);
    a->since = 0;
    return 0;
}

static int as_end_epoch(struct engine *en, double tally[PT_STATS], struct pt_err *e)
{
    struct asgd *a = as_of(en);
    if (!a->sim)
        return end_async(a, tally, e) ? -1 : 1;
    double mine[PT_STATS];
    int all = 0;
    do {
        memcpy(mine, tally, sizeof mine);
        if (sync_sim(a, 1, mine, &all, e))
            return -1;
    } while (!all);
    memcpy(tally, mine, sizeof mine);
    double sum = (double)a->syncs;
    if (comm_allreduce_f64(en->comm, &sum, 1, e))
        return -1;
    a->syncs_state = (float)(sum / a->workers);
    return 1;
}

/* This rank's shard of the store := x's (through a host stage of the shard). */
static int write_own(struct asgd *a, float *x, struct pt_err *e)
{
    size_t first, count;
    comm_store_shard(a->store, comm_rank(a->base.comm), &first, &count);
    float *h = NULL;
    int rc = bk_stage_out(a->base.layout.bk, &a->push_stage, x, first, count, &h, e);
    return rc ? rc : comm_store_write_own(a->store, h, e);
}

static int as_start_epoch(struct engine *en, size_t epoch, struct pt_err *e)
{
    struct asgd *a = as_of(en);
    struct backend *b = en->layout.bk;
    size_t n = en->layout.n;
    int rc = 0;
    if (!a->have_server || a->loaded) /* the server's model: a checkpoint's, or ours */
        rc = write_own(a, a->loaded ? a->start : en->layout.params, e);
    a->have_server = 1;
    a->loaded = 0;
    long long now = 0; /* pushes so far: nobody pushes before the barrier */
    if (rc == 0)
        rc = comm_store_count(a->store, 0, &now, e);
    if (rc == 0) /* every shard holds the model before anybody pushes */
        rc = comm_barrier(en->comm, e);
    if (rc)
        return pt_err_context(e, "while DataParallelASGD starts epoch %zu", epoch + 1);
    b->ops->copy(b, a->start, en->layout.params, n);
    if (a->pipeline)
        b->ops->copy(b, a->pulled, en->layout.params, n);
    a->seen_base = a->seen_flight = now;
    a->last_f = 1.0f; /* nothing kept back yet */
    a->own_base = 0;
    a->since = 0;
    memset(a->hist, 0, sizeof a->hist);
    a->rep_t0 = pt_now();
    a->rep_comm = 0;
    a->rep_samples = a->rep_total = 0;
    return 0;
}

/* The checkpoint holds the whole server model, not this rank's shard: at an epoch's end
 * every rank pulled it whole into start. A resume on any number of ranks writes each new
 * shard from it (as_start_epoch), so the server is resharded for the new rank count. Before
 * the first parallel epoch (a warm start, also one resumed from a checkpoint) the store was
 * never written: the server model is then the model itself, as the first parallel epoch
 * would make it. syncs: the mean of the workers' sync counts, which every worker of the
 * resumed run continues from. */
static size_t as_state(struct engine *en, struct engine_state *out, size_t max)
{
    struct asgd *a = as_of(en);
    if (max < 2)
        return 0;
    if (!a->have_server)
        en->layout.bk->ops->copy(en->layout.bk, a->start, en->layout.params, en->layout.n);
    out[0] = (struct engine_state){"asgd.server", a->start, en->layout.n, en->layout.bk};
    out[1] = (struct engine_state){"asgd.syncs", &a->syncs_state, 1, NULL};
    return 2;
}

static void as_state_loaded(struct engine *en, int loaded)
{
    struct asgd *a = as_of(en);
    a->loaded = loaded;
    a->syncs = loaded ? (long long)llroundf(a->syncs_state) : 0;
    if (!en->log)
        return;
    size_t first, count;
    comm_store_shard(a->store, comm_rank(en->comm), &first, &count);
    if (loaded)
        pt_log_printf(en->log,
                      "Resuming DataParallelASGD on %d workers: the checkpoint's server model "
                      "(%zu parameters) resharded over %d ranks (%zu on this one); every "
                      "worker continues at sync %lld\n",
                      a->workers, en->layout.n, a->workers, count, a->syncs);
    else
        pt_log_printf(en->log,
                      "Resuming DataParallelASGD on %d workers: no server model in the "
                      "checkpoint; the server starts from the model\n",
                      a->workers);
}

static void as_destroy(struct engine *en)
{
    struct asgd *a = as_of(en);
    struct backend *b = en->layout.bk;
    comm_store_free(a->store);
    if (b) {
        b->ops->release(b, a->start);
        b->ops->release(b, a->delta);
        b->ops->release(b, a->pulled);
    }
    bk_stage_free(&a->push_stage);
    bk_stage_free(&a->pull_stage);
    free(a);
}

static const struct engine_ops asgd_ops = {.name = "DataParallelASGD",
                                           .start_epoch = as_start_epoch,
                                           .after_update = as_after_update,
                                           .end_epoch = as_end_epoch,
                                           .state = as_state,
                                           .state_loaded = as_state_loaded,
                                           .destroy = as_destroy};

static int asgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e)
{
    (void)pc;
    struct asgd *a = calloc(1, sizeof *a);
    if (!a)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    a->base.ops = &asgd_ops;
    *out = &a->base;
    return 0;
}

static int asgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e)
{
    const struct asgd_config *c = pc->method_config;
    struct asgd *a = as_of(en);
    a->workers = comm_size(en->comm);
    a->period = c->sync_period > 0 ? (size_t)c->sync_period : 1;
    a->sim = c->sim_ma;
    a->pipeline = c->pipeline && !c->sim_ma; /* SimModelAverage: no pipeline (CNTK) */
    a->adjust = c->adjust.type;
    a->coef = c->adjust.coef;
    a->per_adjust = c->adjust.per > 0 ? c->adjust.per : 1;
    size_t n = en->layout.n;
    struct backend *b = en->layout.bk;
    if (bk_alloc_zero(b, n, &a->start, e) || bk_alloc_zero(b, n, &a->delta, e) ||
        (a->pipeline && bk_alloc_zero(b, n, &a->pulled, e)))
        return pt_err_context(e, "for the DataParallelASGD buffers");
    int rc = comm_store_new(en->comm, en->layout.n, &a->store, e);
    return rc ? pt_err_context(e, "while creating DataParallelASGD's parameter store") : 0;
}

const struct engine_method parallel_asgd_method = {
    .own_models = 1,
    .name = "DataParallelASGD",
    .schema = &parallel_asgd_schema,
    .config_size = sizeof(struct asgd_config),
    .read = asgd_config_read,
    .new = asgd_new,
    .setup = asgd_setup,
    .describe = asgd_config_describe,
};
