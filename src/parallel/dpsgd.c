/* DataParallelSGD (SPEC 7.1): every rank ends each step with the bit-identical sum of all
 * ranks' gradients, then runs the same learner update.
 *
 *   gradientBits = 32, overlapBackward=true:
 *   step  when                          what
 *   1     backward of layer L ends      grads[first_L..n) are final (nn grad-ready hook);
 *                                       once bucket floats are final and not yet sent,
 *                                       start a nonblocking allreduce of that arena slice
 *   2     between layers                comm_test the slices in flight (MPI progresses
 *                                       only inside MPI calls)
 *   3     after backward                start the rest and the statistics, wait for all
 *   Slices are cut from the arena's end at tensor boundaries when they reach the bucket
 *   size: no packing copies, and the cut depends only on the layout, so every rank
 *   starts the same collectives in the same order (also a rank whose share of the
 *   minibatch was empty and ran no backward pass) and runs are reproducible.
 *   Hierarchical or overlapBackward=false (the default: on ranks that use every core
 *   the blocking allreduce's tuned algorithms beat libnbc's schedules, measured in
 *   bench/RESULTS.md): one comm_allreduce after backward.
 *   Device memory reaches the communicator through a stage (bk_stage_out / bk_stage_in,
 *   the identity on the CPU); with useFp16AllReduce the backend converts to a host buffer
 *   of halves (half_out), the communicator sums halves (comm_[i]allreduce_half) and
 *   half_in converts back.
 *
 *   gradientBits = k < 32 (1-bit SGD with error feedback; the quantizers are backend ops,
 *   math/quantize.h):
 *   1     v = g + r1 per column, quantize (r1 = v - reconstruction), all columns
 *   2     alltoallv: stripe s (a contiguous run of columns) goes to its owner, rank s
 *   3     the owner sums the N reconstructions of its stripe, re-quantizes the sum with
 *         its own residual r2, and allgatherv sends the packed stripe to everybody
 *   4     every rank reconstructs every stripe: the same bytes give the same floats
 *   Residuals are zeroed at the start of each epoch.
 *
 *   useBufferedAsyncGradientAggregation: the step-t gradient is copied aside and its
 *   aggregation started (32 bits: one iallreduce; k bits: steps 1-2 nonblocking); the
 *   step applies the aggregate of step t-1, completed first. The first step of an epoch
 *   applies nothing; flush() delivers the last one at the epoch's end, so every
 *   minibatch is applied exactly once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/timer.h"
#include "math/backend.h"
#include "math/quantize.h"
#include "nn/nn.h"
#include "parallel/dpsgd_quant.h"
#include "parallel/parallel.h"

/* DataParallelSGD's block, read once (the engine reads the schedule from here). */
struct dpsgd_config {
    struct cfg_val bits; /* gradientBits (schedule) */
    int zero_threshold;  /* useZeroThresholdFor1BitQuantization */
    int buffered;        /* useBufferedAsyncGradientAggregation */
};

struct dpsgd {
    struct engine base;
    long long *bits; /* gradientBits per epoch (the engine's own copy), nbits of them; */
    size_t nbits;    /* the last repeats */
    int bits_now, buffered, overlap, fp16;
    size_t bucket;      /* floats */
    size_t *cut;        /* slice k = grads[cut[k+1]..cut[k]), cut[0] = n, last cut = 0 */
    size_t ncuts, next; /* slices 0..next are in flight */
    struct comm_req **reqs;
    size_t nreqs;
    double stats_io[PT_STATS];
    struct comm_req *stats_req;
    /* buffered */
    float *buf[2];
    double bstats[2][PT_STATS];
    int cur, pending;
    double start_seconds; /* time the in-flight aggregation's start took */
    struct quant q;
    /* the float allreduce in flight works on host, the host view of the device buffer dev
     * (the identity on the CPU backend), or with fp16 on half, dev's values as binary16
     * (the backend converts; the communicator sums the halves) */
    struct bk_stage stage;
    float *dev, *host;
    uint16_t *half;
};

static struct dpsgd *dp_of(struct engine *en)
{
    return (struct dpsgd *)en;
}

/* ------------------------------------------------------------------ one aggregation */

static double bytes_per_sync(const struct dpsgd *d)
{
    if (d->bits_now < 32)
        return d->q.bytes;
    if (d->base.shared)
        return 0.0;
    double w = comm_size(d->base.comm), elem = d->fp16 ? 2.0 : 4.0;
    return 2.0 * (w - 1.0) / w * elem * (double)d->base.layout.n; /* ring allreduce */
}

/* The host form of g[first..first+n) for a float allreduce (floats, or halves with fp16);
 * the whole of g comes back at wait_all. */
static int stage_out(struct dpsgd *d, float *g, size_t first, size_t n, struct pt_err *e)
{
    struct backend *b = d->base.layout.bk;
    d->dev = g;
    if (!d->fp16)
        return bk_stage_out(b, &d->stage, g, first, n, &d->host, e);
    if (!d->half && !(d->half = pt_malloc((d->base.layout.n + 1) * sizeof *d->half, e)))
        return PT_ENOMEM;
    b->ops->half_out(b, d->half + first, g + first, n);
    return 0;
}

/* Start summing the staged [first, first + n) over the ranks. */
static int start_sum(struct dpsgd *d, size_t first, size_t n, struct comm_req **req,
                     struct pt_err *e)
{
    if (d->fp16)
        return comm_iallreduce_half(d->base.comm, d->half + first, n, req, e);
    return comm_iallreduce(d->base.comm, d->host + first, n, COMM_FLOAT, COMM_SUM, req, e);
}

/* The staged floats back into the device buffer, after every sum completed. */
static int stage_in(struct dpsgd *d, struct pt_err *e)
{
    struct backend *b = d->base.layout.bk;
    float *g = d->dev;
    d->dev = NULL;
    if (!g)
        return 0;
    if (!d->fp16)
        return bk_stage_in(b, g, d->host, 0, d->base.layout.n, e);
    b->ops->half_in(b, g, d->half, d->base.layout.n);
    return 0;
}

/* Start aggregating g (n floats) and stats (nonblocking where MPI allows). */
static int agg_start(struct dpsgd *d, float *g, double stats[PT_STATS], struct pt_err *e)
{
    struct comm *c = d->base.comm;
    size_t n = d->base.layout.n;
    int rc = comm_iallreduce(c, stats, PT_STATS, COMM_DOUBLE, COMM_SUM, &d->stats_req, e);
    if (rc)
        return rc;
    if (d->bits_now < 32)
        return quant_start(&d->base, &d->q, g, e);
    if ((rc = stage_out(d, g, 0, n, e)))
        return rc;
    d->nreqs = 1;
    return start_sum(d, 0, n, &d->reqs[0], e);
}

static int wait_all(struct dpsgd *d, struct pt_err *e)
{
    int rc = 0;
    for (size_t i = 0; i < d->nreqs; i++)
        if (rc == 0)
            rc = comm_wait(&d->reqs[i], e);
    d->nreqs = 0;
    if (rc == 0)
        rc = comm_wait(&d->stats_req, e);
    if (rc == 0)
        rc = stage_in(d, e);
    d->dev = NULL;
    return rc;
}

/* Timeline: the rest of a started aggregation, ending with its "wait". */
static int agg_finish(struct dpsgd *d, float *g, struct pt_err *e)
{
    int rc = d->bits_now < 32 ? quant_finish(&d->base, &d->q, g, e) : 0;
    int rc2 = wait_all(d, e);
    engine_mark(&d->base, PT_TRACE_COMM, "wait", -1);
    return rc ? rc : rc2;
}

/* Let requests in flight progress (MPI moves data only inside MPI calls). */
static int progress(struct dpsgd *d, struct pt_err *e)
{
    int done = 0, rc = 0;
    for (size_t i = 0; i < d->nreqs && rc == 0; i++)
        if (d->reqs[i])
            rc = comm_test(&d->reqs[i], &done, e);
    if (rc == 0 && d->q.req)
        rc = comm_test(&d->q.req, &done, e);
    return rc;
}

/* ------------------------------------------------------------------ engine ops */

static int overlapping(const struct dpsgd *d)
{
    return d->overlap && !d->buffered && d->bits_now == 32;
}

/* Start every slice not started yet that lies within grads[first..n). */
static int start_slices(struct dpsgd *d, float *grads, size_t first, struct pt_err *e)
{
    while (d->next + 1 < d->ncuts && d->cut[d->next + 1] >= first) {
        size_t lo = d->cut[d->next + 1], hi = d->cut[d->next];
        int rc = stage_out(d, grads, lo, hi - lo, e);
        if (rc == 0)
            rc = start_sum(d, lo, hi - lo, &d->reqs[d->nreqs++], e);
        d->next++;
        if (rc)
            return rc;
    }
    return 0;
}

static int dp_grad_ready(struct engine *en, float *grads, size_t first, struct pt_err *e)
{
    struct dpsgd *d = dp_of(en);
    if (!overlapping(d))
        return d->pending ? progress(d, e) : 0;
    int rc = start_slices(d, grads, first, e);
    return rc ? rc : progress(d, e);
}

/* Unbuffered: the rest of the arena and the statistics, then wait for everything. */
static int aggregate_now(struct dpsgd *d, float *grads, double stats[PT_STATS], struct pt_err *e)
{
    struct comm *c = d->base.comm;
    size_t n = d->base.layout.n;
    int rc = 0;
    if (d->bits_now < 32) {
        rc = agg_start(d, grads, stats, e);
        engine_mark(&d->base, PT_TRACE_COMPUTE, "quantize", -1);
        if (rc == 0)
            rc = agg_finish(d, grads, e);
    } else if (overlapping(d)) {
        rc = start_slices(d, grads, 0, e);
        if (rc == 0)
            rc = comm_iallreduce(c, stats, PT_STATS, COMM_DOUBLE, COMM_SUM, &d->stats_req, e);
        int rc2 = wait_all(d, e);
        rc = rc ? rc : rc2;
    } else if ((comm_size(c) == 1 || d->base.shared) && !d->fp16) {
        /* one rank: the sum is the gradient itself (on a GPU, no trip to the host); ranks
         * sharing one model: the backward pass applied the whole minibatch already */
        rc = comm_iallreduce(c, stats, PT_STATS, COMM_DOUBLE, COMM_SUM, &d->stats_req, e);
        if (rc == 0)
            rc = wait_all(d, e);
    } else {
        /* the statistics after the gradient: started before it, their nonblocking sum
         * held the gradient's up across hosts (2 hosts at 1 Gbit: 25.5 against 27.5 ms a
         * step on average, bench/RESULTS.md) */
        rc = stage_out(d, grads, 0, n, e);
        if (rc == 0)
            rc = d->fp16 ? comm_allreduce_half(c, d->half, n, e)
                         : comm_allreduce(c, d->host, n, COMM_FLOAT, COMM_SUM, e);
        if (rc == 0)
            rc = comm_iallreduce(c, stats, PT_STATS, COMM_DOUBLE, COMM_SUM, &d->stats_req, e);
        if (rc == 0)
            rc = wait_all(d, e);
    }
    if (d->bits_now == 32)
        engine_mark(&d->base, PT_TRACE_COMM, "allreduce", bytes_per_sync(d));
    d->next = 0;
    return rc;
}

/* Buffered: finish step t-1's aggregate, start step t's, hand back t-1's. */
static int aggregate_buffered(struct dpsgd *d, float *grads, double stats[PT_STATS], double *wait,
                              struct pt_err *e)
{
    size_t n = d->base.layout.n;
    struct backend *b = d->base.layout.bk;
    int f = d->cur, g = 1 - f, had = d->pending, rc = 0;
    double t0 = pt_now();
    if (had)
        rc = agg_finish(d, d->buf[f], e);
    *wait = pt_now() - t0;
    if (rc)
        return rc;
    b->ops->copy(b, d->buf[g], grads, n);
    memcpy(d->bstats[g], stats, sizeof d->bstats[g]);
    rc = agg_start(d, d->buf[g], d->bstats[g], e);
    if (had) {
        b->ops->copy(b, grads, d->buf[f], n);
        memcpy(stats, d->bstats[f], sizeof d->bstats[f]);
    } else {
        memset(stats, 0, PT_STATS * sizeof *stats);
    }
    if (d->bits_now < 32)
        engine_mark(&d->base, PT_TRACE_COMPUTE, "quantize", -1);
    else
        engine_mark(&d->base, PT_TRACE_COMM, "allreduce start", -1);
    d->cur = g;
    d->pending = rc == 0;
    return rc;
}

static int dp_after_backward(struct engine *en, float *grads, double stats[PT_STATS],
                             struct pt_err *e)
{
    struct dpsgd *d = dp_of(en);
    double t0 = pt_now(), wait = 0;
    double mine = stats[2];
    engine_mark_start(en);
    int rc = d->buffered ? aggregate_buffered(d, grads, stats, &wait, e)
                         : aggregate_now(d, grads, stats, e);
    double t1 = pt_now();
    if (rc)
        return rc;
    /* a blocking aggregation also waits for the slowest rank, indistinguishably */
    engine_perf_sync(en, t0, t1, d->buffered ? wait : t1 - t0, d->buffered ? wait : 0,
                     bytes_per_sync(d), mine, d->bits_now, 1, "");
    if (d->buffered && en->log && en->perf.every > 0 && en->perf.syncs % en->perf.every == 0)
        pt_log_often(en->log, "\t\tAsync gradient aggregation wait time: %.6g\n", wait);
    return 0;
}

/* One rank at full precision: aggregate_now's sum is the gradient itself. */
static int dp_keeps_gradient(struct engine *en)
{
    struct dpsgd *d = dp_of(en);
    if (en->shared)
        return 1;
    return comm_size(en->comm) == 1 && d->bits_now == 32 && !d->fp16 && !d->buffered &&
           !overlapping(d);
}

/* Full precision in every epoch, unbuffered, no overlap: the ranks of a host may share the
 * model (the statistics are all that is left to sum). */
static int dp_can_share(struct engine *en)
{
    struct dpsgd *d = dp_of(en);
    for (size_t i = 0; i < d->nbits; i++)
        if (d->bits[i] != 32)
            return 0;
    return !d->fp16 && !d->buffered && !d->overlap;
}

static int dp_flush(struct engine *en, float *grads, double stats[PT_STATS], struct pt_err *e)
{
    struct dpsgd *d = dp_of(en);
    if (!d->pending)
        return 0;
    d->pending = 0;
    engine_mark_start(en);
    int rc = agg_finish(d, d->buf[d->cur], e);
    if (rc)
        return rc;
    en->layout.bk->ops->copy(en->layout.bk, grads, d->buf[d->cur], en->layout.n);
    memcpy(stats, d->bstats[d->cur], sizeof d->bstats[d->cur]);
    return 1;
}

static int dp_start_epoch(struct engine *en, size_t epoch, struct pt_err *e)
{
    struct dpsgd *d = dp_of(en);
    en->epoch = epoch;
    d->pending = 0;
    d->next = 0;
    d->bits_now = (int)d->bits[epoch < d->nbits ? epoch : d->nbits - 1];
    if (d->bits_now == 32)
        return 0;
    if (!d->q.off && quant_layout(&d->q, &en->layout, comm_size(en->comm), e))
        return pt_err_context(e, "while setting up %d-bit DataParallelSGD", d->bits_now);
    return quant_prepare(&d->q, en->layout.bk, d->bits_now, comm_rank(en->comm),
                         comm_size(en->comm), en->layout.n, e);
}

/* A resume, on any number of workers. The quantization residuals (r1 per rank, r2 per
 * stripe owner) are per-rank state, but zeroed at every epoch's start (quant_prepare), so
 * at an epoch boundary there is nothing to carry: checkpoints hold none, and a resume on
 * another rank count loses nothing a same-count resume keeps. The buffered aggregation is
 * flushed at every epoch's end. */
static void dp_state_loaded(struct engine *en, int loaded)
{
    (void)loaded;
    if (en->log)
        pt_log_printf(en->log,
                      "Resuming DataParallelSGD on %d workers: the checkpoint holds no "
                      "per-rank state (quantization residuals start at zero in every epoch); "
                      "every worker starts from the checkpoint's model and learner state\n",
                      comm_size(en->comm));
}

static void dp_destroy(struct engine *en)
{
    struct dpsgd *d = dp_of(en);
    /* requests still in flight exist only after a failure, when the process ends */
    struct backend *b = en->layout.bk;
    quant_release(&d->q, b);
    bk_stage_free(&d->stage);
    free(d->half);
    free(d->bits);
    free(d->reqs);
    free(d->cut);
    if (b) {
        b->ops->release(b, d->buf[0]);
        b->ops->release(b, d->buf[1]);
    }
    free(d);
}

static const struct engine_ops dpsgd_ops = {.name = "DataParallelSGD",
                                            .start_epoch = dp_start_epoch,
                                            .grad_ready = dp_grad_ready,
                                            .after_backward = dp_after_backward,
                                            .keeps_gradient = dp_keeps_gradient,
                                            .can_share = dp_can_share,
                                            .flush = dp_flush,
                                            .state_loaded = dp_state_loaded,
                                            .destroy = dp_destroy};

static int dpsgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e)
{
    const struct dpsgd_config *c = pc->method_config;
    struct dpsgd *d = calloc(1, sizeof *d);
    if (!d)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    d->base.ops = &dpsgd_ops;
    *out = &d->base;
    /* a copy: the engine outlives the config it was made from */
    d->nbits = c->bits.n ? c->bits.n : 1;
    if (!(d->bits = malloc(d->nbits * sizeof *d->bits)))
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    for (size_t i = 0; i < d->nbits; i++)
        d->bits[i] = cfg_sched_int(&c->bits, i);
    d->buffered = c->buffered;
    d->overlap = pc->overlap;
    d->fp16 = pc->fp16;
    d->q.zero_threshold = c->zero_threshold;
    d->bucket = (size_t)pc->bucket_bytes / sizeof(float);
    d->bits_now = 32;
    return 0;
}

/* Slices of at least bucket floats, cut at tensor boundaries from the arena's end. */
static int make_cuts(struct dpsgd *d, const struct engine_layout *L, struct pt_err *e)
{
    d->cut = calloc(L->ntensors + 2, sizeof *d->cut);
    d->reqs = calloc(L->ntensors + 2, sizeof *d->reqs);
    if (!d->cut || !d->reqs)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    d->cut[0] = L->n;
    d->ncuts = 1;
    for (size_t t = L->ntensors; t-- > 0;) {
        size_t lo = L->tensors[t].offset;
        if (d->cut[d->ncuts - 1] - lo >= d->bucket || (t == 0 && lo < d->cut[d->ncuts - 1]))
            d->cut[d->ncuts++] = lo;
    }
    if (d->cut[d->ncuts - 1] != 0) /* no tensors at all: one empty slice */
        d->cut[d->ncuts++] = 0;
    return 0;
}

static int dpsgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e)
{
    struct dpsgd *d = dp_of(en);
    struct comm *c = en->comm;
    /* fp16: the backend converts (half_out / half_in), the communicator sums halves */
    struct comm_options o = {.hierarchical = pc->hierarchical,
                             .fp16 = 0,
                             .bucket_bytes = (size_t)pc->bucket_bytes,
                             .algorithm = pc->algorithm,
                             .segment_bytes = (size_t)pc->segment_bytes};
    int rc = comm_set_options(c, &o, e);
    if (rc)
        return rc;
    /* a hierarchical allreduce is blocking: no per-layer overlap then */
    int hier = pc->hierarchical == 1 ||
               (pc->hierarchical < 0 && comm_node_count(c) > 1 && comm_local_size(c) > 1);
    if (hier)
        d->overlap = 0;
    if (make_cuts(d, &en->layout, e))
        return -1;
    if (!d->buffered)
        return 0;
    struct backend *b = en->layout.bk;
    if (b->ops->alloc(b, en->layout.n, &d->buf[0], e) ||
        b->ops->alloc(b, en->layout.n, &d->buf[1], e))
        return pt_err_context(e, "for the buffered aggregation");
    return 0;
}

/* ------------------------------------------------------------------ configuration */

#define DC(m) CFG_OUT(struct dpsgd_config, m)

/* gradientBits: each scheduled value must be 1, 2, 4, 8, 16 or 32 */
static int valid_bits(const struct cfg_val *v, char *why, size_t size)
{
    for (size_t i = 0; i < v->n; i++) {
        long long b = v->ilist[i];
        if (b != 1 && b != 2 && b != 4 && b != 8 && b != 16 && b != 32) {
            snprintf(why, size,
                     "%lld bits is not possible; each value must be 1, 2, 4, 8, 16 or 32", b);
            return 1;
        }
    }
    return 0;
}

static const struct cfg_key dpsgd_keys[] = {
    {.name = "gradientBits",
     .type = CFG_INT_SCHED,
     .def = "32",
     .valid = valid_bits,
     .help = "per-epoch bits per gradient value: 1, 2, 4, 8, 16 (quantized with error "
             "feedback) or 32 (exact)",
     DC(bits)},
    {.name = "useZeroThresholdFor1BitQuantization",
     .type = CFG_BOOL,
     .def = "true",
     .help = "1-bit: split at 0 (true) or at the column mean (false)",
     DC(zero_threshold)},
    {.name = "useBufferedAsyncGradientAggregation",
     .type = CFG_BOOL,
     .def = "false",
     .help = "apply at step t the aggregate of step t-1, overlapping communication",
     DC(buffered)},
    {.name = NULL},
};

const struct cfg_schema parallel_dpsgd_schema = {
    .name = "DataParallelSGD",
    .where = "inside ParallelTrain",
    .help = "Synchronous gradient aggregation, optionally quantized (1-bit SGD).",
    .keys = dpsgd_keys,
};

/* CNTK's words for the training loop's line. */
static void dpsgd_describe(const struct parallel_config *pc, size_t epoch, int rank, int workers,
                           char *buf, size_t size)
{
    const struct dpsgd_config *c = pc->method_config;
    int len = snprintf(buf, size,
                       ", DataParallelSGD training (myRank = %d, numNodes = %d, "
                       "numGradientBits = %lld)",
                       rank, workers, cfg_sched_int(&c->bits, epoch));
    if (c->buffered && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ", BufferedAsyncGradientAggregation is ENABLED");
}

const struct engine_method parallel_dpsgd_method = {
    .name = "DataParallelSGD",
    .schema = &parallel_dpsgd_schema,
    .config_size = sizeof(struct dpsgd_config),
    .new = dpsgd_new,
    .setup = dpsgd_setup,
    .describe = dpsgd_describe,
};
