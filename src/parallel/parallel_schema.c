/* Keys of ParallelTrain and its four method blocks (SPEC §7). Defaults are CNTK's. */
#include "parallel/parallel.h"

#include <stdio.h>

#define MIN0 (CFG_HAS_MIN)

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
             "feedback) or 32 (exact)"},
    {.name = "useZeroThresholdFor1BitQuantization",
     .type = CFG_BOOL,
     .def = "true",
     .help = "1-bit: split at 0 (true) or at the column mean (false)"},
    {.name = "useBufferedAsyncGradientAggregation",
     .type = CFG_BOOL,
     .def = "false",
     .help = "apply at step t the aggregate of step t-1, overlapping communication"},
    {.name = NULL},
};

const struct cfg_schema parallel_dpsgd_schema = {
    .name = "DataParallelSGD",
    .where = "inside ParallelTrain",
    .help = "Synchronous gradient aggregation, optionally quantized (1-bit SGD).",
    .keys = dpsgd_keys,
};

static const struct cfg_key ma_keys[] = {
    {.name = "blockSizePerWorker",
     .type = CFG_INT,
     .def = "40000",
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "local samples between model averages"},
    {.name = "blockSize",
     .type = CFG_INT,
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "samples between averages over all workers (default 40000 * workers)"},
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
     .help = "local samples between block updates"},
    {.name = "blockSize",
     .type = CFG_INT,
     .flags = MIN0,
     .min = 1,
     .group = 1,
     .help = "samples between block updates over all workers (default 120000 * workers)"},
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
     .help = "zero the local momentum after each block update"},
    {.name = "useNesterovMomentum",
     .type = CFG_BOOL,
     .def = "true",
     .help = "Nesterov-style block momentum"},
    {.name = "blockLearningRate",
     .type = CFG_REAL,
     .def = "1.0",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "block learning rate"},
    {.name = "blockMomentumAsTimeConstant",
     .type = CFG_REAL,
     .flags = MIN0,
     .group = 2,
     .help = "block momentum as a time constant in samples (default derived from 1 - 1/workers)"},
    {.name = "blockMomentumPerSync",
     .type = CFG_REAL,
     .flags = MIN0 | CFG_HAS_MAX | CFG_MAX_EXCL,
     .max = 1,
     .group = 2,
     .help = "block momentum per sync, in [0,1)"},
    {.name = NULL},
};

const struct cfg_schema parallel_bmuf_schema = {
    .name = "BlockMomentumSGD",
    .where = "inside ParallelTrain",
    .help = "Block-wise model update filtering (BMUF, Chen & Huo 2016).",
    .keys = bmuf_keys,
};

static const struct cfg_key adjust_keys[] = {
    {.name = "adjustType",
     .type = CFG_ENUM,
     .def = "staircase",
     .choices = "none|linearly|staircase",
     .help = "warm-up shape of the push factor"},
    {.name = "adjustCoefficient",
     .type = CFG_REAL,
     .def = "0.1",
     .flags = MIN0 | CFG_HAS_MAX,
     .max = 1,
     .help = "starting factor c"},
    {.name = "adjustPerMinibatches",
     .type = CFG_INT,
     .def = "256",
     .flags = MIN0,
     .min = 1,
     .help = "syncs per warm-up step M"},
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
     .help = "local samples between push/pull"},
    {.name = "syncPeriod",
     .type = CFG_INT,
     .alias_of = "syncPeriodPerWorker",
     .flags = MIN0,
     .min = 1,
     .help = "same as syncPeriodPerWorker"},
    {.name = "usePipeline",
     .type = CFG_BOOL,
     .def = "false",
     .help = "train on the model pulled one round earlier while push/pull runs"},
    {.name = "SimModelAverage",
     .type = CFG_BOOL,
     .def = "false",
     .help = "synchronous simulation: factor 1/workers, no pipeline"},
    {.name = "AdjustLearningRateAtBeginning",
     .type = CFG_BLOCK,
     .sub = &parallel_asgd_adjust_schema,
     .help = "warm-up of the push factor"},
    {.name = NULL},
};

const struct cfg_schema parallel_asgd_schema = {
    .name = "DataParallelASGD",
    .where = "inside ParallelTrain",
    .help = "Asynchronous parameter server on MPI.",
    .keys = asgd_keys,
};

static const struct cfg_key pt_keys[] = {
    {.name = "parallelizationMethod",
     .type = CFG_ENUM,
     .def = "None",
     .choices = "None|DataParallelSGD|ModelAveragingSGD|BlockMomentumSGD|DataParallelASGD",
     .help = "the parallel SGD method"},
    {.name = "parallelizationStartEpoch",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .min = 1,
     .help = "1-based epoch where parallel training starts; before it every worker trains "
             "the full data identically (warm start)"},
    {.name = "distributedMBReading",
     .type = CFG_BOOL,
     .def = "true",
     .help = "each worker reads only its share of every global minibatch"},
    {.name = "syncPerfStats",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "print synchronization statistics every n-th sync (0 = off)"},
    {.name = "perfStatsFile",
     .type = CFG_PATH,
     .help = "partrain extension: also write the statistics as JSON lines to this file "
             "(rank k > 0 writes PATH.rank<k>)"},
    {.name = "useFp16AllReduce",
     .type = CFG_BOOL,
     .def = "false",
     .help = "DataParallelSGD at 32 bits: send gradients as IEEE half floats (half the "
             "bytes, about 3 significant digits)"},
    {.name = "hierarchicalAllReduce",
     .type = CFG_ENUM,
     .def = "auto",
     .choices = "auto|true|false",
     .help = "partrain extension: reduce within each host, allreduce among hosts, broadcast "
             "within the host; auto = when ranks span several hosts with several ranks each"},
    {.name = "allReduceBucketBytes",
     .type = CFG_INT,
     .def = "1048576",
     .flags = MIN0,
     .min = 4096,
     .help = "partrain extension: gradient bytes per allreduce bucket (started as soon as "
             "their layers' backward pass ends)"},
    {.name = "overlapBackward",
     .type = CFG_BOOL,
     .def = "false",
     .help = "partrain extension: start each bucket's nonblocking allreduce during the "
             "backward pass (false: one blocking allreduce after it, faster when the ranks "
             "use every core: MPI then progresses only inside MPI calls)"},
    {.name = "everyRankSavesModel",
     .type = CFG_BOOL,
     .def = "false",
     .help = "partrain extension: rank k > 0 also writes its model after each epoch as "
             "<modelPath>.E.rank<k>, to show that all ranks hold the same model"},
    {.name = "testSlowRank",
     .type = CFG_INT,
     .def = "-1",
     .flags = MIN0,
     .min = -1,
     .help = "testing: this rank is a slow worker (-1 = none); see testSlowSeconds"},
    {.name = "testSlowSeconds",
     .type = CFG_REAL,
     .def = "0",
     .flags = MIN0,
     .help = "testing: the slow worker busy-waits this long after each minibatch of a "
             "parallel epoch"},
    {.name = "DataParallelSGD",
     .type = CFG_BLOCK,
     .sub = &parallel_dpsgd_schema,
     .help = "settings of DataParallelSGD"},
    {.name = "ModelAveragingSGD",
     .type = CFG_BLOCK,
     .sub = &parallel_ma_schema,
     .help = "settings of ModelAveragingSGD"},
    {.name = "BlockMomentumSGD",
     .type = CFG_BLOCK,
     .sub = &parallel_bmuf_schema,
     .help = "settings of BlockMomentumSGD"},
    {.name = "DataParallelASGD",
     .type = CFG_BLOCK,
     .sub = &parallel_asgd_schema,
     .help = "settings of DataParallelASGD"},
    {.name = NULL},
};

const struct cfg_schema parallel_train_schema = {
    .name = "ParallelTrain",
    .where = "inside SGD",
    .help = "Which parallel SGD method runs when the MPI world has more than one rank.",
    .keys = pt_keys,
};
