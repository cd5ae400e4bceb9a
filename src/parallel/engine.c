/* ParallelTrain's configuration, the engine factory, the None engine (nothing to do:
 * the local gradient is the gradient) and the statistics every engine reports
 * (syncPerfStats lines, perfStatsFile JSON lines). The engines live in their own files
 * (dpsgd.c: DataParallelSGD). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/fs.h"
#include "core/timer.h"
#include "parallel/parallel.h"

const char *parallel_method_name(enum par_method m)
{
    static const char *names[] = {"None", "DataParallelSGD", "ModelAveragingSGD",
                                  "BlockMomentumSGD", "DataParallelASGD"};
    return names[m];
}

void parallel_config_free(struct parallel_config *pc)
{
    cfg_val_free(&pc->bits);
}

static int read_dpsgd(struct cfg_node *pt, struct parallel_config *pc, struct pt_err *e)
{
    struct cfg_node *dp = NULL;
    struct cfg_val v;
    int rc = cfg_find_block(pt, "DataParallelSGD", &dp, e);
    struct cfg_node *from = dp ? dp : pt; /* defaults when the block is absent */
    const struct cfg_schema *s = &parallel_dpsgd_schema;
    if (rc == 0)
        rc = cfg_schema_get(from, s, "gradientBits", &pc->bits, e);
    if (rc == 0 && (rc = cfg_schema_get(from, s, "useZeroThresholdFor1BitQuantization", &v, e)) == 0)
        pc->zero_threshold = v.b;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "useBufferedAsyncGradientAggregation", &v, e)) == 0)
        pc->buffered = v.b;
    return rc;
}

/* ModelAveragingSGD or BlockMomentumSGD: the block of the chosen method (absent: the
 * defaults, as for DataParallelSGD). */
static int read_local_sgd(struct cfg_node *pt, struct parallel_config *pc, struct pt_err *e)
{
    int bmuf = pc->method == PAR_BMUF;
    const struct cfg_schema *s = bmuf ? &parallel_bmuf_schema : &parallel_ma_schema;
    struct cfg_node *blk = NULL;
    struct cfg_val v;
    int rc = cfg_find_block(pt, s->name, &blk, e);
    struct cfg_node *from = blk ? blk : pt;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "blockSize", &v, e)) == 0)
        pc->block_total = v.node ? v.i : 0;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "blockSizePerWorker", &v, e)) == 0)
        pc->block_per_worker = v.i;
    if (rc || !bmuf)
        return rc;
    if ((rc = cfg_schema_get(from, s, "resetSGDMomentum", &v, e)) == 0)
        pc->reset_momentum = v.b;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "useNesterovMomentum", &v, e)) == 0)
        pc->nesterov = v.b;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "blockLearningRate", &v, e)) == 0)
        pc->block_lr = v.d;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "blockMomentumAsTimeConstant", &v, e)) == 0)
        pc->bm_time_constant = v.node ? v.d : -1.0;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "blockMomentumPerSync", &v, e)) == 0)
        pc->bm_per_sync = v.node ? v.d : -1.0;
    return rc;
}

/* DataParallelASGD: its block, and in it AdjustLearningRateAtBeginning (absent: no
 * warm-up, as in CNTK; present: its defaults, staircase). */
static int read_asgd(struct cfg_node *pt, struct parallel_config *pc, struct pt_err *e)
{
    const struct cfg_schema *s = &parallel_asgd_schema, *as = &parallel_asgd_adjust_schema;
    struct cfg_node *blk = NULL, *adj = NULL;
    struct cfg_val v;
    int rc = cfg_find_block(pt, s->name, &blk, e);
    struct cfg_node *from = blk ? blk : pt;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "syncPeriodPerWorker", &v, e)) == 0)
        pc->sync_period = v.i;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "usePipeline", &v, e)) == 0)
        pc->pipeline = v.b;
    if (rc == 0 && (rc = cfg_schema_get(from, s, "SimModelAverage", &v, e)) == 0)
        pc->sim_ma = v.b;
    if (rc == 0 && blk)
        rc = cfg_find_block(blk, as->name, &adj, e);
    if (rc || !adj)
        return rc;
    if ((rc = cfg_schema_get(adj, as, "adjustType", &v, e)) == 0)
        pc->adjust = v.choice;
    if (rc == 0 && (rc = cfg_schema_get(adj, as, "adjustCoefficient", &v, e)) == 0)
        pc->adjust_coef = v.d;
    if (rc == 0 && (rc = cfg_schema_get(adj, as, "adjustPerMinibatches", &v, e)) == 0)
        pc->adjust_per = v.i;
    return rc;
}

int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e)
{
    memset(pc, 0, sizeof *pc);
    pc->start_epoch = 1;
    pc->distributed_reading = 1;
    pc->hierarchical = -1;
    pc->bucket_bytes = 1 << 20;
    pc->overlap = 0;
    pc->zero_threshold = 1;
    pc->bm_time_constant = pc->bm_per_sync = -1.0;
    pc->slow_rank = -1;
    struct cfg_node *pt = NULL;
    int rc = cfg_find_block(sgd, "ParallelTrain", &pt, e);
    if (rc || !pt)
        return rc;
    struct cfg_val v;
    const struct cfg_schema *s = &parallel_train_schema;
    if ((rc = cfg_schema_get(pt, s, "parallelizationMethod", &v, e)))
        return rc;
    pc->method = (enum par_method)v.choice;
    pc->method_origin = v.node ? cfg_value_origin(v.node) : cfg_origin_of(pt);
    if ((rc = cfg_schema_get(pt, s, "parallelizationStartEpoch", &v, e)))
        return rc;
    pc->start_epoch = v.i;
    if ((rc = cfg_schema_get(pt, s, "distributedMBReading", &v, e)))
        return rc;
    pc->distributed_reading = v.b;
    if ((rc = cfg_schema_get(pt, s, "syncPerfStats", &v, e)))
        return rc;
    pc->sync_perf_stats = v.i;
    if ((rc = cfg_schema_get(pt, s, "perfStatsFile", &v, e)))
        return rc;
    if (v.node)
        snprintf(pc->perf_file, sizeof pc->perf_file, "%s", v.s);
    if ((rc = cfg_schema_get(pt, s, "useFp16AllReduce", &v, e)))
        return rc;
    pc->fp16 = v.b;
    if ((rc = cfg_schema_get(pt, s, "hierarchicalAllReduce", &v, e)))
        return rc;
    pc->hierarchical = v.choice == 0 ? -1 : v.choice == 1;
    if ((rc = cfg_schema_get(pt, s, "allReduceBucketBytes", &v, e)))
        return rc;
    pc->bucket_bytes = v.i;
    if ((rc = cfg_schema_get(pt, s, "overlapBackward", &v, e)))
        return rc;
    pc->overlap = v.b;
    if ((rc = cfg_schema_get(pt, s, "everyRankSavesModel", &v, e)))
        return rc;
    pc->every_rank_saves = v.b;
    if ((rc = cfg_schema_get(pt, s, "testSlowRank", &v, e)))
        return rc;
    pc->slow_rank = (int)v.i;
    if ((rc = cfg_schema_get(pt, s, "testSlowSeconds", &v, e)))
        return rc;
    pc->slow_seconds = v.d;
    if (pc->method == PAR_MA || pc->method == PAR_BMUF)
        rc = read_local_sgd(pt, pc, e);
    else if (pc->method == PAR_ASGD)
        rc = read_asgd(pt, pc, e);
    return rc ? rc : read_dpsgd(pt, pc, e);
}

/* ------------------------------------------------------------------ None */

/* Nothing to do: the local gradient is the gradient. */
static void none_destroy(struct engine *en)
{
    free(en);
}

static const struct engine_ops none_ops = {.name = "None", .destroy = none_destroy};

/* ------------------------------------------------------------------ calls */

int engine_start_epoch(struct engine *en, size_t epoch, struct pt_err *e)
{
    en->epoch = epoch;
    return en->ops->start_epoch ? en->ops->start_epoch(en, epoch, e) : 0;
}

int engine_after_backward(struct engine *en, float *grads, double stats[3], struct pt_err *e)
{
    return en->ops->after_backward ? en->ops->after_backward(en, grads, stats, e) : 0;
}

int engine_flush(struct engine *en, float *grads, double stats[3], struct pt_err *e)
{
    return en->ops->flush ? en->ops->flush(en, grads, stats, e) : 0;
}

int engine_after_update(struct engine *en, size_t samples, struct pt_err *e)
{
    if (en->slow_seconds > 0) { /* a slow worker: burns the core as slow compute would */
        double until = pt_now() + en->slow_seconds;
        while (pt_now() < until)
            continue;
    }
    return en->ops->after_update ? en->ops->after_update(en, samples, e) : 0;
}

int engine_end_epoch(struct engine *en, double tally[3], struct pt_err *e)
{
    return en->ops->end_epoch ? en->ops->end_epoch(en, tally, e) : 0;
}

/* ------------------------------------------------------------------ common */

void engine_perf_sync(struct engine *en, double t_start, double t_end, double wait,
                      double bytes, double samples, int bits, int print, const char *extra)
{
    struct engine_perf *p = &en->perf;
    double compute = p->last_end > 0 ? t_start - p->last_end : 0.0;
    p->syncs++;
    p->comm_seconds += wait;
    p->last_end = t_end;
    p->last_bytes = bytes;
    if (print && en->log && p->every > 0 && p->syncs % p->every == 0)
        pt_log_printf(en->log, "\t\tActual gradient aggregation time: %.6g\n", t_end - t_start);
    if (p->file)
        fprintf(p->file,
                "{\"method\":\"%s\",\"rank\":%d,\"epoch\":%zu,\"sync\":%lld,\"compute_s\":%.6g,"
                "\"comm_s\":%.6g,\"bytes_sent\":%.0f,\"samples\":%.0f,\"bits\":%d%s}\n",
                en->ops->name, comm_rank(en->comm), en->epoch + 1, p->syncs, compute,
                t_end - t_start, bytes, samples, bits, extra);
}

static int open_perf_file(const struct parallel_config *pc, struct engine *en, struct pt_err *e)
{
    if (!pc->perf_file[0])
        return 0;
    char name[4200];
    int rank = comm_rank(en->comm);
    if (rank == 0)
        snprintf(name, sizeof name, "%s", pc->perf_file);
    else
        snprintf(name, sizeof name, "%s.rank%d", pc->perf_file, rank);
    if (pt_make_parent_dirs(name, e))
        return pt_err_context(e, "while creating perfStatsFile '%s'", name);
    en->perf.file = fopen(name, "w");
    if (!en->perf.file)
        return pt_err_set(e, PT_ESYS, "error: cannot write perfStatsFile '%s': %s", name,
                          strerror(errno));
    setvbuf(en->perf.file, NULL, _IOLBF, 0);
    return 0;
}

int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               const struct engine_layout *layout, struct engine **out, struct pt_err *e)
{
    *out = NULL;
    struct engine *en = NULL;
    int rc = 0;
    if (pc->method == PAR_DPSGD) {
        rc = dpsgd_new(pc, &en, e);
    } else if (pc->method == PAR_MA || pc->method == PAR_BMUF) {
        rc = masgd_new(pc, &en, e);
    } else if (pc->method == PAR_ASGD) {
        rc = asgd_new(pc, &en, e);
    } else if (!(en = calloc(1, sizeof *en))) {
        rc = pt_err_set(e, PT_ENOMEM, "error: out of memory");
    } else {
        en->ops = &none_ops;
    }
    if (rc)
        return rc;
    en->comm = comm;
    en->log = log;
    en->layout = *layout;
    en->perf.every = pc->sync_perf_stats;
    if (pc->slow_rank == comm_rank(comm))
        en->slow_seconds = pc->slow_seconds;
    if ((rc = open_perf_file(pc, en, e)) == 0 && pc->method == PAR_DPSGD)
        rc = dpsgd_setup(en, pc, e);
    else if (rc == 0 && (pc->method == PAR_MA || pc->method == PAR_BMUF))
        rc = masgd_setup(en, pc, e);
    else if (rc == 0 && pc->method == PAR_ASGD)
        rc = asgd_setup(en, pc, e);
    if (rc) {
        engine_free(en);
        return rc;
    }
    *out = en;
    return 0;
}

void engine_free(struct engine *en)
{
    if (!en)
        return;
    if (en->perf.file)
        fclose(en->perf.file);
    en->ops->destroy(en);
}
