/* DataParallelASGD's configuration: the keys of its ParallelTrain block and of its
 * AdjustLearningRateAtBeginning block (CNTK's), reading them, and the method's words in the
 * training loop's line. The engine is asgd.c. */
#include <stdio.h>
#include <string.h>

#include "parallel/asgd_config.h"

#define MIN0  (CFG_HAS_MIN)
#define AJ(m) CFG_OUT(struct asgd_adjust_config, m)
#define AC(m) CFG_OUT(struct asgd_config, m)

static const struct cfg_key adjust_keys[] = {
    {.name = "adjustType",
     .type = CFG_ENUM,
     .def = "staircase",
     .choices = "none|linearly|staircase",
     .help = "warm-up shape of the push factor",
     AJ(type)},
    {.name = "adjustCoefficient",
     .type = CFG_REAL,
     .def = "0.1",
     .flags = MIN0 | CFG_HAS_MAX,
     .max = 1,
     .help = "starting factor c",
     AJ(coef)},
    {.name = "adjustPerMinibatches",
     .type = CFG_INT,
     .def = "256",
     .flags = MIN0,
     .min = 1,
     .help = "syncs per warm-up step M",
     AJ(per)},
    {.name = "adjustNBMiniBatch",
     .type = CFG_INT,
     .alias_of = "adjustPerMinibatches",
     .flags = MIN0,
     .min = 1,
     .help = "same as adjustPerMinibatches"},
    {.name = NULL},
};

const struct cfg_schema parallel_asgd_adjust_schema = {
    .name = "AdjustLearningRateAtBeginning",
    .where = "inside DataParallelASGD",
    .help = "Warm-up of the factor applied to pushed model deltas.",
    .keys = adjust_keys,
};

static const struct cfg_key asgd_keys[] = {
    {.name = "syncPeriodPerWorker",
     .type = CFG_INT,
     .def = "256",
     .flags = MIN0,
     .min = 1,
     .help = "local samples between push/pull",
     AC(sync_period)},
    {.name = "syncPeriod",
     .type = CFG_INT,
     .alias_of = "syncPeriodPerWorker",
     .flags = MIN0,
     .min = 1,
     .help = "same as syncPeriodPerWorker"},
    {.name = "usePipeline",
     .type = CFG_BOOL,
     .def = "false",
     .help = "train on the model pulled one round earlier while push/pull runs",
     AC(pipeline)},
    {.name = "SimModelAverage",
     .type = CFG_BOOL,
     .def = "false",
     .help = "synchronous simulation: factor 1/workers, no pipeline",
     AC(sim_ma)},
    {.name = "AdjustLearningRateAtBeginning",
     .type = CFG_BLOCK,
     .sub = &parallel_asgd_adjust_schema,
     .help = "warm-up of the push factor",
     AC(adjust),
     CFG_GIVEN(struct asgd_config, adjust_given)},
    {.name = NULL},
};

const struct cfg_schema parallel_asgd_schema = {
    .name = "DataParallelASGD",
    .where = "inside ParallelTrain",
    .help = "Asynchronous parameter server on MPI.",
    .keys = asgd_keys,
};

/* The warm-up applies only when DataParallelASGD's block has an
 * AdjustLearningRateAtBeginning block (as in CNTK); then its defaults are staircase. */
int asgd_config_read(struct cfg_node *pt, void *config, struct pt_err *e)
{
    struct asgd_config *c = config;
    int found = 0;
    int rc = engine_read_block(pt, &parallel_asgd_schema, c, &found, e);
    if (rc == 0 && (!found || !c->adjust_given))
        memset(&c->adjust, 0, sizeof c->adjust);
    return rc;
}

/* CNTK's words for the training loop's line (CNTK adds ", Distributed Evaluation is
 * DISABLED": ours is distributed, the models being equal). */
void asgd_config_describe(const struct parallel_config *pc, size_t epoch, int rank, int workers,
                          char *buf, size_t size)
{
    (void)epoch;
    const struct asgd_config *c = pc->method_config;
    int len = snprintf(buf, size,
                       ", DataParallelASGD training (myRank = %d, numNodes = %d, "
                       "SamplesSyncToServer = %lld)",
                       rank, workers, c->sync_period);
    if (c->pipeline && !c->sim_ma && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ", BufferedAsyncGradientAggregation is ENABLED");
}
