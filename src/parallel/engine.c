/* Engines behind struct engine_ops. Built so far: None (one worker, nothing to do) and
 * DataParallelSGD with exact 32-bit aggregation:
 *
 *   step  what                                          why
 *   1     every rank: forward/backward on its share     distributed reading
 *   2     allreduce-sum of the gradient (one buffer)    gradients are sums: the global
 *         and of (criterion, eval, samples)             sum is the one-worker gradient
 *   3     every rank: the same learner update with      identical models on every rank
 *         the global sample count                       (bit-identical sums from MPI) */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
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

int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e)
{
    memset(pc, 0, sizeof *pc);
    pc->start_epoch = 1;
    pc->distributed_reading = 1;
    struct cfg_node *pt = NULL, *dp = NULL;
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
    if ((rc = cfg_find_block(pt, "DataParallelSGD", &dp, e)))
        return rc;
    struct cfg_node *from = dp ? dp : pt; /* defaults when the block is absent */
    if ((rc = cfg_schema_get(from, &parallel_dpsgd_schema, "gradientBits", &pc->bits, e)))
        return rc;
    if ((rc = cfg_schema_get(from, &parallel_dpsgd_schema, "useBufferedAsyncGradientAggregation", &v, e)))
        return rc;
    pc->buffered = v.b;
    return 0;
}

static int none_after_backward(struct engine *en, float *grads, size_t n, double stats[3],
                               struct pt_err *e)
{
    (void)en, (void)grads, (void)n, (void)stats, (void)e;
    return 0;
}

static int dpsgd_after_backward(struct engine *en, float *grads, size_t n, double stats[3],
                                struct pt_err *e)
{
    double t0 = pt_now();
    int rc = comm_allreduce_f32(en->comm, grads, n, e);
    if (rc == 0)
        rc = comm_allreduce_f64(en->comm, stats, 3, e);
    double dt = pt_now() - t0;
    en->seconds += dt;
    en->syncs++;
    if (rc == 0 && en->log && en->perf_every > 0 && en->syncs % en->perf_every == 0)
        pt_log_printf(en->log, "\t\tActual gradient aggregation time: %.6g\n", dt);
    return rc;
}

static void plain_destroy(struct engine *en)
{
    free(en);
}

static const struct engine_ops none_ops = {"None", none_after_backward, plain_destroy};
static const struct engine_ops dpsgd_ops = {"DataParallelSGD", dpsgd_after_backward, plain_destroy};

int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               struct engine **out, struct pt_err *e)
{
    *out = NULL;
    static const struct cfg_origin none = {.file = "<default>"};
    const struct cfg_origin *at = pc->method_origin ? pc->method_origin : &none;
    if (pc->method == PAR_MA || pc->method == PAR_BMUF || pc->method == PAR_ASGD)
        return cfg_error(e, at, "parallelizationMethod=%s is not implemented in this build yet "
                                "(DataParallelSGD is)", parallel_method_name(pc->method));
    if (pc->method == PAR_DPSGD) {
        for (size_t i = 0; i < pc->bits.n; i++)
            if (pc->bits.ilist[i] != 32)
                return cfg_error(e, pc->bits.node ? cfg_value_origin(pc->bits.node) : at,
                                 "DataParallelSGD: gradientBits=%lld (quantized aggregation) is not "
                                 "implemented in this build yet; use 32", pc->bits.ilist[i]);
        if (pc->buffered)
            return cfg_error(e, at, "DataParallelSGD: useBufferedAsyncGradientAggregation is not "
                                    "implemented in this build yet");
    }
    struct engine *en = calloc(1, sizeof *en);
    if (!en)
        return pt_err_set(e, PT_ENOMEM, "error: out of memory");
    en->ops = pc->method == PAR_DPSGD ? &dpsgd_ops : &none_ops;
    en->comm = comm;
    en->log = log;
    en->perf_every = pc->sync_perf_stats;
    *out = en;
    return 0;
}

void engine_free(struct engine *en)
{
    if (en)
        en->ops->destroy(en);
}
