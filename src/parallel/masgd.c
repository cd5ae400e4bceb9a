/* ModelAveragingSGD and BlockMomentumSGD (SPEC 7.2, 7.3): every rank trains its own copy
 * of the model on its share of the data, and every blockSizePerWorker local samples a
 * synchronization replaces all copies by one new model.
 *
 *   ModelAveragingSGD:  W = sum_k (n_k / sum n) W_k        (n_k: samples since last sync)
 *   BlockMomentumSGD:   G = sum_k (prev - W_k);  D = bm D + (1 - bm) blr G;
 *                       W = prev - D  [- bm D with Nesterov];  prev = W
 *
 * A sync is collective and starts with a header, an allreduce of five doubles: the samples
 * this rank processed since the last sync, whether its data for the epoch is used up, and
 * its statistics of the epoch so far. A rank whose share ends early keeps joining syncs,
 * with no new samples, until the header says every rank is done. So ranks with unequal
 * shares perform the same number of syncs, none waits forever, and no sample is dropped.
 * The sync at which all are done is the epoch's final one, and its header carries the
 * global statistics of the epoch. A sync to which no rank brings samples leaves the model
 * alone (the models are equal already; no block momentum step without a block). The
 * gradients and the minibatch statistics stay local: each rank steps its own model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/timer.h"
#include "math/backend.h"
#include "parallel/parallel.h"

struct masgd {
    struct engine base;
    int bmuf, nesterov, workers;
    size_t per_worker; /* local samples between syncs */
    double bm, blr, tc_per_worker;
    float *prev, *delta, *work; /* BMUF: model after the last sync, block momentum, G */
    struct bk_stage stage;      /* host view of the allreduced buffer */
    int have_prev;
    size_t since; /* local samples since the last sync */
    /* SPEC 9 statistics, per epoch */
    long long hits;
    double hit_seconds;
    double rep_t0, rep_total, rep_local; /* since the last syncPerfStats report */
};

static struct masgd *ma_of(struct engine *en)
{
    return (struct masgd *)en;
}

static void ma_update(struct masgd *m, double total)
{
    struct backend *b = m->base.layout.bk;
    b->ops->scale(b, m->base.layout.params, m->base.layout.n, (float)((double)m->since / total));
}

static void bmuf_update(struct masgd *m)
{
    struct backend *b = m->base.layout.bk;
    b->ops->block_momentum(b, m->base.layout.params, m->prev, m->delta, m->work, m->base.layout.n,
                           (float)m->bm, (float)((1.0 - m->bm) * m->blr), m->nesterov);
}

/* x[0..n) summed over the ranks, in place, through a host stage. */
static int allreduce_staged(struct masgd *m, float *x, struct pt_err *e)
{
    struct backend *b = m->base.layout.bk;
    size_t n = m->base.layout.n;
    float *h = NULL;
    int rc = bk_stage_out(b, &m->stage, x, 0, n, &h, e);
    if (rc == 0)
        rc = comm_allreduce_f32(m->base.comm, h, n, e);
    return rc ? rc : bk_stage_in(b, x, h, 0, n, e);
}

static void report(struct masgd *m, double t0, double t1, double comm_s, double wait, double total)
{
    struct engine *en = &m->base;
    m->hits++;
    m->hit_seconds += t1 - t0;
    m->rep_total += total;
    m->rep_local += (double)m->since;
    struct pt_log *log = en->log;
    if (log)
        pt_log_printf(log,
                      "\t\t(model aggregation stats): %d-th sync point was hit, introducing a "
                      "%.2f-seconds latency this time; accumulated time on sync point = %.2f "
                      "seconds , average latency = %.2f seconds\n",
                      (int)m->hits, t1 - t0, m->hit_seconds, m->hit_seconds / (double)m->hits);
    long long f = en->perf.every;
    if (f > 0 && (m->hits % f == 0 || m->hits <= 5)) {
        double secs = t1 - m->rep_t0;
        double k = secs > 0 ? m->rep_total / secs / 1000.0 : 0.0;
        if (log)
            pt_log_printf(
                log,
                "\t\t(model aggregation stats) %d-th sync: %8.2f seconds since last report "
                "(%.2f seconds on comm.); %d samples processed by %d workers (%d by me);\n"
                "\t\t(model aggregation stats) %d-th sync: totalThroughput = %.2fk "
                "samplesPerSecond , throughputPerWorker = %.2fk samplesPerSecond\n",
                (int)m->hits, secs, comm_s, (int)m->rep_total, m->workers, (int)m->rep_local,
                (int)m->hits, k, k / m->workers);
        m->rep_t0 = t1;
        m->rep_total = m->rep_local = 0;
    }
    double n = (double)en->layout.n, w = m->workers;
    double bytes = 2.0 * (w - 1.0) / w * 4.0 * n + 5 * sizeof(double);
    engine_perf_sync(en, t0, t1, comm_s, wait, total > 0 ? bytes : 5 * sizeof(double),
                     (double)m->since, 32, 0, "");
}

/* One synchronization. done: this rank's data is used up; tally: its epoch statistics
 * (replaced by the global ones when every rank is done). */
static int sync_models(struct masgd *m, int done, double tally[PT_STATS], int *all_done,
                       struct pt_err *e)
{
    struct engine *en = &m->base;
    struct comm *c = en->comm;
    size_t n = en->layout.n;
    double t0 = pt_now();
    engine_mark_start(en);
    /* the header: every rank arrives here, so its time is mostly waiting for the slowest */
    double hdr[2 + PT_STATS] = {(double)m->since, done ? 1.0 : 0.0};
    memcpy(hdr + 2, tally, PT_STATS * sizeof *tally);
    int rc = comm_allreduce_f64(c, hdr, 2 + PT_STATS, e);
    double total = hdr[0], comm_s = pt_now() - t0, wait = comm_s;
    engine_mark(en, PT_TRACE_COMM, "wait", sizeof hdr);
    if (rc == 0 && total > 0) {
        double t = pt_now(), w = m->workers;
        double bytes = 2.0 * (w - 1.0) / w * 4.0 * (double)n; /* ring allreduce */
        if (m->bmuf) {
            struct backend *b = en->layout.bk;
            b->ops->sub_scaled(b, m->work, m->prev, en->layout.params, n, 1.0f);
            rc = allreduce_staged(m, m->work, e);
            comm_s += pt_now() - t;
            engine_mark(en, PT_TRACE_COMM, "allreduce", bytes);
            if (rc == 0)
                bmuf_update(m);
            engine_mark(en, PT_TRACE_COMPUTE, "block update", -1);
        } else {
            ma_update(m, total);
            rc = allreduce_staged(m, en->layout.params, e);
            comm_s += pt_now() - t;
            engine_mark(en, PT_TRACE_COMM, "allreduce", bytes);
        }
    }
    if (rc)
        return pt_err_context(e, "in %s synchronization %lld of epoch %zu", en->ops->name,
                              m->hits + 1, en->epoch + 1);
    *all_done = hdr[1] > (double)m->workers - 0.5;
    if (*all_done)
        memcpy(tally, hdr + 2, PT_STATS * sizeof *tally);
    report(m, t0, pt_now(), comm_s, wait, total);
    m->since = 0;
    return 0;
}

static int ms_start_epoch(struct engine *en, size_t epoch, struct pt_err *e)
{
    (void)e;
    struct masgd *m = ma_of(en);
    en->epoch = epoch;
    m->since = 0;
    m->hits = 0;
    m->hit_seconds = 0;
    m->rep_total = m->rep_local = 0;
    m->rep_t0 = pt_now();
    if (!m->bmuf)
        return 0;
    if (!m->have_prev) { /* first parallel epoch: the common model is the last sync's */
        en->layout.bk->ops->copy(en->layout.bk, m->prev, en->layout.params, en->layout.n);
        m->have_prev = 1;
    }
    if (en->log)
        pt_log_printf(en->log,
                      "Parallel training (%d workers) using BlockMomentumSGD with block "
                      "momentum = %6.4f, block momentum time constant (per worker) = "
                      "%6.4f, block learning rate = %6.4f, block size per worker = %d "
                      "samples, %s%s\n",
                      m->workers, m->bm, m->tc_per_worker, m->blr, (int)m->per_worker,
                      m->nesterov ? "using Nesterov-style block momentum, " : "",
                      en->reset_momentum ? "resetting SGD momentum after sync." : ".");
    return 0;
}

static int ms_after_update(struct engine *en, size_t samples, struct pt_err *e)
{
    struct masgd *m = ma_of(en);
    m->since += samples;
    if (m->since < m->per_worker)
        return 0;
    double none[PT_STATS] = {0};
    int all = 0;
    return sync_models(m, 0, none, &all, e) ? -1 : 1;
}

static int ms_end_epoch(struct engine *en, double tally[PT_STATS], struct pt_err *e)
{
    struct masgd *m = ma_of(en);
    double mine[PT_STATS];
    int all = 0;
    do {
        memcpy(mine, tally, sizeof mine);
        if (sync_models(m, 1, mine, &all, e))
            return -1;
    } while (!all);
    memcpy(tally, mine, sizeof mine);
    return 1;
}

/* BMUF's checkpointed state: the block momentum D and the model after the last sync. Both
 * are equal on every rank at an epoch's end (the final sync set them), so they carry over
 * to any number of workers as they are; the block momentum per sync is the new rank
 * count's (setup). Before the first parallel epoch (a warm start) no sync happened: the
 * model after the last sync is the model itself, and D is zero, as the first parallel
 * epoch would set them. */
static size_t ms_state(struct engine *en, struct engine_state *out, size_t max)
{
    struct masgd *m = ma_of(en);
    if (!m->bmuf || max < 2)
        return 0;
    if (!m->have_prev)
        en->layout.bk->ops->copy(en->layout.bk, m->prev, en->layout.params, en->layout.n);
    out[0] = (struct engine_state){"bmuf.delta", m->delta, en->layout.n, en->layout.bk};
    out[1] = (struct engine_state){"bmuf.prev", m->prev, en->layout.n, en->layout.bk};
    return 2;
}

/* A resume, on any number of workers: says what carried over (the log line a relaunch on
 * fewer ranks leaves). Every worker takes the checkpoint's learner state (rank 0's). */
static void ms_state_loaded(struct engine *en, int loaded)
{
    struct masgd *m = ma_of(en);
    if (!m->bmuf) {
        if (en->log)
            pt_log_printf(
                en->log,
                "Resuming ModelAveragingSGD on %d workers: the checkpoint holds no "
                "per-rank state; every worker starts from the checkpoint's model and learner "
                "state\n",
                m->workers);
        return;
    }
    m->have_prev = loaded;
    if (!loaded)
        en->layout.bk->ops->fill(en->layout.bk, m->delta, en->layout.n, 0.0f);
    if (en->log && loaded)
        pt_log_printf(en->log,
                      "Resuming BlockMomentumSGD on %d workers: block momentum and the model "
                      "after the last sync carried over from the checkpoint (block momentum "
                      "per sync now %6.4f)\n",
                      m->workers, m->bm);
    else if (en->log)
        pt_log_printf(en->log,
                      "Resuming BlockMomentumSGD on %d workers: no block state in the "
                      "checkpoint; block momentum starts at zero\n",
                      m->workers);
}

static void ms_destroy(struct engine *en)
{
    struct masgd *m = ma_of(en);
    struct backend *b = en->layout.bk;
    if (b) {
        b->ops->release(b, m->prev);
        b->ops->release(b, m->delta);
        b->ops->release(b, m->work);
    }
    bk_stage_free(&m->stage);
    free(m);
}

static const struct engine_ops ma_ops = {.name = "ModelAveragingSGD",
                                         .start_epoch = ms_start_epoch,
                                         .after_update = ms_after_update,
                                         .end_epoch = ms_end_epoch,
                                         .state_loaded = ms_state_loaded,
                                         .destroy = ms_destroy};

static const struct engine_ops bmuf_ops = {.name = "BlockMomentumSGD",
                                           .start_epoch = ms_start_epoch,
                                           .after_update = ms_after_update,
                                           .end_epoch = ms_end_epoch,
                                           .state = ms_state,
                                           .state_loaded = ms_state_loaded,
                                           .destroy = ms_destroy};

extern const struct engine_method parallel_bmuf_method; /* below */

static int masgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e)
{
    struct masgd *m = calloc(1, sizeof *m);
    if (!m)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    m->bmuf = pc->method == &parallel_bmuf_method;
    m->base.ops = m->bmuf ? &bmuf_ops : &ma_ops;
    *out = &m->base;
    return 0;
}

static int masgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e)
{
    const struct masgd_config *mc = pc->method_config;
    struct masgd *m = ma_of(en);
    struct comm *c = en->comm;
    m->workers = comm_size(c);
    long long per = mc->block_total > 0 ? mc->block_total / m->workers : mc->block_per_worker;
    m->per_worker = per > 0 ? (size_t)per : 1;
    struct comm_options o = {.hierarchical = pc->hierarchical,
                             .fp16 = 0,
                             .bucket_bytes = (size_t)pc->bucket_bytes,
                             .algorithm = pc->algorithm,
                             .segment_bytes = (size_t)pc->segment_bytes};
    int rc = comm_set_options(c, &o, e);
    if (rc)
        return rc;
    if (!m->bmuf) {
        if (en->log)
            pt_log_printf(en->log, "Parallel training (%d workers) using ModelAveraging\n",
                          m->workers);
        return 0;
    }
    /* block momentum: given per sync, or as a time constant over blockSize = per worker
     * times workers, or by default 1 - 1/workers */
    double block = (double)m->per_worker * m->workers;
    if (mc->bm_per_sync >= 0)
        m->bm = mc->bm_per_sync;
    else if (mc->bm_time_constant >= 0)
        m->bm = mc->bm_time_constant > 0 ? exp(-block / mc->bm_time_constant) : 0.0;
    else
        m->bm = 1.0 - 1.0 / m->workers;
    m->tc_per_worker = m->bm > 0 ? -(double)m->per_worker / log(m->bm) : 0.0;
    m->blr = mc->block_lr;
    m->nesterov = mc->nesterov;
    en->reset_momentum = mc->reset_momentum;
    size_t n = en->layout.n;
    struct backend *b = en->layout.bk;
    if (bk_alloc_zero(b, n, &m->prev, e) || bk_alloc_zero(b, n, &m->delta, e) ||
        bk_alloc_zero(b, n, &m->work, e))
        return pt_err_context(e, "for the BlockMomentumSGD state");
    return 0;
}

/* ------------------------------------------------------------------ configuration */

#define MIN0  (CFG_HAS_MIN)
#define MC(m) CFG_OUT(struct masgd_config, m)

/* The block momentum keys: not given is < 0 (setup derives the momentum then). */
static int set_time_constant(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    ((struct masgd_config *)out)->bm_time_constant = v->node ? v->d : -1.0;
    return 0;
}

static int set_per_sync(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    ((struct masgd_config *)out)->bm_per_sync = v->node ? v->d : -1.0;
    return 0;
}

static const struct cfg_key ma_keys[] = {
    {.name = "blockSizePerWorker",
     .type = CFG_INT,
     .def = "40000",
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "local samples between model averages",
     MC(block_per_worker)},
    {.name = "blockSize",
     .type = CFG_INT,
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "samples between averages over all workers (default 40000 * workers)",
     MC(block_total)},
    {.name = "syncPeriod",
     .type = CFG_INT,
     .alias_of = "blockSizePerWorker",
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "same as blockSizePerWorker"},
    {.name = "syncFrequencyInFrames",
     .type = CFG_INT,
     .alias_of = "blockSizePerWorker",
     .flags = MIN0 | CFG_DEPRECATED,
     .min = 1,
     .group = 1,
     .help = "old name of blockSizePerWorker"},
    {.name = NULL},
};

const struct cfg_schema parallel_ma_schema = {
    .name = "ModelAveragingSGD",
    .where = "inside ParallelTrain",
    .help = "Local SGD with periodic sample-weighted model averaging.",
    .keys = ma_keys,
};

static const struct cfg_key bmuf_keys[] = {
    {.name = "blockSizePerWorker",
     .type = CFG_INT,
     .def = "120000",
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "local samples between block updates",
     MC(block_per_worker)},
    {.name = "blockSize",
     .type = CFG_INT,
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "samples between block updates over all workers (default 120000 * workers)",
     MC(block_total)},
    {.name = "syncPeriod",
     .type = CFG_INT,
     .alias_of = "blockSizePerWorker",
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "same as blockSizePerWorker"},
    {.name = "resetSGDMomentum",
     .type = CFG_BOOL,
     .def = "true",
     .help = "zero the local momentum after each block update",
     MC(reset_momentum)},
    {.name = "useNesterovMomentum",
     .type = CFG_BOOL,
     .def = "true",
     .help = "Nesterov-style block momentum",
     MC(nesterov)},
    {.name = "blockLearningRate",
     .type = CFG_REAL,
     .def = "1.0",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "block learning rate",
     MC(block_lr)},
    {.name = "blockMomentumAsTimeConstant",
     .type = CFG_REAL,
     .flags = MIN0,
     .group = 2,
     .help = "block momentum as a time constant in samples (default derived from 1 - 1/workers)",
     .set = set_time_constant},
    {.name = "blockMomentumPerSync",
     .type = CFG_REAL,
     .flags = MIN0 | CFG_HAS_MAX | CFG_MAX_EXCL,
     .max = 1,
     .group = 2,
     .help = "block momentum per sync, in [0,1)",
     .set = set_per_sync},
    {.name = NULL},
};

const struct cfg_schema parallel_bmuf_schema = {
    .name = "BlockMomentumSGD",
    .where = "inside ParallelTrain",
    .help = "Block-wise model update filtering (BMUF, Chen & Huo 2016).",
    .keys = bmuf_keys,
};

const struct engine_method parallel_ma_method = {
    .own_models = 1,
    .name = "ModelAveragingSGD",
    .schema = &parallel_ma_schema,
    .config_size = sizeof(struct masgd_config),
    .new = masgd_new,
    .setup = masgd_setup,
};

const struct engine_method parallel_bmuf_method = {
    .own_models = 1,
    .name = "BlockMomentumSGD",
    .schema = &parallel_bmuf_schema,
    .config_size = sizeof(struct masgd_config),
    .new = masgd_new,
    .setup = masgd_setup,
};
