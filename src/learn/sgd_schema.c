/* The SGD block's keys (SPEC §5) and where cfg_schema_read puts them in struct
 * learn_config. Defaults are CNTK's. The ParallelTrain block inside SGD belongs to the
 * layer above: src/train composes the block the trainer checks from these tables and
 * ParallelTrain's schema. */
#include <stdio.h>
#include <string.h>

#include "learn/learn.h"

#define MIN0  (CFG_HAS_MIN)
#define LC(m) CFG_OUT(struct learn_config, m)

/* The learning rate per minibatch stands in when no rate per sample is given; the first
 * given momentum key wins (the schema's exclusive groups let only one be given). */
static int take_lr_per_mb(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct learn_config *lc = out;
    if (v->node && !lc->lr.node) {
        cfg_val_free(&lc->lr);
        lc->lr = *v;
        lc->lr_per_mb = 1;
        memset(v, 0, sizeof *v);
    }
    return 0;
}

static int take_momentum(struct learn_config *lc, struct cfg_val *v, int kind)
{
    if (v->node && !lc->momentum.node) {
        lc->momentum = *v;
        lc->momentum_kind = kind;
        memset(v, 0, sizeof *v);
    }
    return 0;
}

static int take_per_mb(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    return take_momentum(out, v, MOMENTUM_PER_MB);
}

static int take_per_sample(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    return take_momentum(out, v, MOMENTUM_PER_SAMPLE);
}

static int take_time_constant(void *out, struct cfg_val *v, struct cfg_node *block,
                              struct pt_err *e)
{
    (void)block, (void)e;
    return take_momentum(out, v, MOMENTUM_TIME_CONSTANT);
}

/* numSamples4Search, numMiniBatch4LRSearch: a schedule into a fixed array (its last entry
 * repeats). */
static int take_list(long long *dst, int *n, struct cfg_val *v)
{
    *n = 0;
    if (!v->node)
        return 0;
    if (!v->ilist)
        dst[(*n)++] = v->i;
    for (size_t k = 0; v->ilist && k < v->n && k < 16; k++)
        dst[(*n)++] = v->ilist[k];
    return 0;
}

static int take_samples4search(void *out, struct cfg_val *v, struct cfg_node *block,
                               struct pt_err *e)
{
    (void)block, (void)e;
    struct learn_autoadjust *aa = out;
    return take_list(aa->search_samples, &aa->n_search_samples, v);
}

static int take_mbs4search(void *out, struct cfg_val *v, struct cfg_node *block, struct pt_err *e)
{
    (void)block, (void)e;
    struct learn_autoadjust *aa = out;
    return take_list(aa->search_mbs, &aa->n_search_mbs, v);
}

#define AA(m) CFG_OUT(struct learn_autoadjust, m)
static const struct cfg_key autoadjust_keys[] = {
    {.name = "autoAdjustLR",
     .type = CFG_ENUM,
     .def = "None",
     .choices = "None|adjustAfterEpoch|afterEpoch|after|searchBeforeEpoch|beforeEpoch|before",
     .help = "adjustAfterEpoch: after the epochs of the learning-rate schedule, lower (or "
             "raise) the rate from how much the criterion improved; searchBeforeEpoch: before "
             "each of those epochs, search the rate on numSamples4Search samples (CNTK's "
             "SearchForBestLearnRate)",
     AA(mode)},
    {.name = "reduceLearnRateIfImproveLessThan",
     .type = CFG_REAL,
     .def = "0",
     .help = "reduce the rate when the criterion improved by less than this fraction",
     AA(reduce_if_less)},
    {.name = "learnRateDecreaseFactor",
     .type = CFG_REAL,
     .def = "0.618",
     .flags = MIN0 | CFG_MIN_EXCL | CFG_HAS_MAX,
     .max = 1,
     .help = "factor of a reduction",
     AA(decrease)},
    {.name = "increaseLearnRateIfImproveMoreThan",
     .type = CFG_REAL,
     .def = "1#INF",
     .flags = CFG_ALLOW_INF,
     .help = "raise the rate when the criterion improved by more than this fraction",
     AA(increase_if_more)},
    {.name = "learnRateIncreaseFactor",
     .type = CFG_REAL,
     .def = "1.382",
     .flags = MIN0,
     .min = 1,
     .help = "factor of an increase",
     AA(increase)},
    {.name = "loadBestModel",
     .type = CFG_BOOL,
     .def = "true",
     .help = "when the criterion got worse, go back to the model (and learner state) of the "
             "previous adjustment",
     AA(load_best)},
    {.name = "continueReduce",
     .type = CFG_BOOL,
     .def = "false",
     .help = "after the first reduction reduce at every adjustment; stop at the next time the "
             "criterion fails to improve enough",
     AA(continue_reduce)},
    {.name = "learnRateAdjustInterval",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .min = 1,
     .help = "epochs per adjustment (the criterion is averaged over them)",
     AA(interval)},
    {.name = "UseCVSetControlLRIfCVExists",
     .type = CFG_BOOL,
     .def = "true",
     .help = "decide on the cvReader's criterion when there is one, else on the training one",
     AA(use_cv)},
    {.name = "UseEvalCriterionControlLR",
     .type = CFG_BOOL,
     .def = "false",
     .help = "decide on the evaluation criterion instead of the training criterion",
     AA(use_eval)},
    {.name = "autoAdjustMinibatch",
     .type = CFG_BOOL,
     .def = "false",
     .help = "for the epochs after minibatchSize's schedule: before each, train trial "
             "minibatch sizes (from the schedule's last, times sqrt(2) each, rounded to 64) on "
             "numSamples4Search samples of the epoch from the model as it is, and keep the "
             "largest whose criterion stays within minibatchSearchCriterionErrorMargin percent "
             "of the first's (CNTK's AdaptiveMinibatchSizing)",
     AA(auto_mb)},
    {.name = "minibatchSizeTuningFrequency",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .min = 1,
     .help = "search every this many epochs (in between, the last size found)",
     AA(mb_freq)},
    {.name = "minibatchSizeTuningMax",
     .type = CFG_INT,
     .def = "1048576",
     .flags = MIN0,
     .min = 1,
     .help = "the largest minibatch size the search tries",
     AA(mb_max)},
    {.name = "minibatchSearchCriterionErrorMargin",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .help = "percent by which a trial's criterion may exceed the first trial's",
     AA(mb_margin)},
    {.name = "numMiniBatch4LRSearch",
     .type = CFG_INT_SCHED,
     .flags = MIN0,
     .min = 1,
     .help = "CNTK's deprecated form of numSamples4Search: minibatches of the epoch's "
             "minibatchSize",
     .set = take_mbs4search},
    {.name = "numSamples4Search",
     .type = CFG_INT_SCHED,
     .flags = MIN0,
     .min = 1,
     .help = "samples each trial of the searches trains on, per epoch (default: 500 "
             "minibatches of the epoch's scheduled size; at most the epoch)",
     .set = take_samples4search},
    {.name = "numPrevLearnRates",
     .type = CFG_INT,
     .def = "5",
     .flags = MIN0,
     .min = 1,
     .help = "searchBeforeEpoch: the search starts above the largest rate of this many "
             "searches before",
     AA(prev_rates)},
    {.name = "numBestSearchEpoch",
     .type = CFG_INT,
     .def = "1",
     .flags = MIN0,
     .help = "searchBeforeEpoch: in epochs below this number, refine the rate by a search "
             "between it and 0.01 / minibatchSize",
     AA(best_search_epochs)},
    {.name = NULL},
};

static const struct cfg_schema autoadjust_schema = {
    .name = "AutoAdjust",
    .where = "in SGD",
    .help = "CNTK's learning-rate control after each epoch (autoAdjustLR=adjustAfterEpoch) or "
            "search before it (searchBeforeEpoch), and its minibatch-size search "
            "(autoAdjustMinibatch).",
    .keys = autoadjust_keys,
};

const struct cfg_key learn_sgd_keys[] = {
    {.name = "AutoAdjust",
     .type = CFG_BLOCK,
     .sub = &autoadjust_schema,
     .help = "learning-rate control: AutoAdjust = [ autoAdjustLR = adjustAfterEpoch ... ]",
     LC(aa)},
    {.name = "maxEpochs",
     .type = CFG_INT,
     .flags = CFG_REQUIRED | MIN0,
     .min = 1,
     .help = "number of epochs to train",
     LC(max_epochs)},
    {.name = "epochSize",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "samples per epoch, counted globally; 0 = one pass over the data",
     LC(epoch_size)},
    {.name = "minibatchSize",
     .type = CFG_INT_SCHED,
     .def = "256",
     .flags = MIN0,
     .min = 1,
     .help = "per-epoch schedule of global minibatch sizes (samples across all workers)",
     LC(mb_size)},
    {.name = "learningRatesPerSample",
     .type = CFG_REAL_SCHED,
     .flags = MIN0,
     .group = 1,
     .help = "per-epoch schedule of learning rates per sample",
     LC(lr)},
    {.name = "learningRatesPerMB",
     .type = CFG_REAL_SCHED,
     .flags = MIN0,
     .group = 1,
     .help = "per-epoch schedule of learning rates per minibatch (divided by minibatchSize)",
     .set = take_lr_per_mb},
    {.name = "momentumPerMB",
     .type = CFG_REAL_SCHED,
     .flags = MIN0 | CFG_HAS_MAX | CFG_MAX_EXCL,
     .max = 1,
     .group = 2,
     .help = "per-epoch momentum per minibatch; 0.9 when no momentum key is given",
     .set = take_per_mb},
    {.name = "momentumPerSample",
     .type = CFG_REAL_SCHED,
     .flags = MIN0 | CFG_HAS_MAX | CFG_MAX_EXCL,
     .max = 1,
     .group = 2,
     .help = "per-epoch momentum per sample",
     .set = take_per_sample},
    {.name = "momentumAsTimeConstant",
     .type = CFG_REAL_SCHED,
     .flags = MIN0,
     .group = 2,
     .help = "per-epoch momentum as a time constant in samples: exp(-1/TC) per sample",
     .set = take_time_constant},
    {.name = "useNAG", .type = CFG_BOOL, .def = "false", .help = "Nesterov momentum", LC(nag)},
    {.name = "gradUpdateType",
     .type = CFG_ENUM,
     .def = "None",
     .choices = "None|Adam|AdaGrad|FSAdaGrad|RmsProp",
     .help = "None = momentum SGD; FSAdaGrad and RmsProp as CNTK computes them; Adam and "
             "AdaGrad are partrain extensions",
     LC(type)},
    {.name = "varianceTimeConstant",
     .type = CFG_REAL,
     .def = "720000",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "FSAdaGrad: time constant in samples of the smoothed squared gradient",
     LC(var_time_constant)},
    {.name = "fsAdagradTargetAvDenom",
     .type = CFG_REAL,
     .def = "1",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "FSAdaGrad: target average denominator (the gradient is scaled by this times "
             "sqrt(smoothed samples per minibatch) / rms)",
     LC(fs_target)},
    {.name = "rms_gamma",
     .type = CFG_REAL,
     .def = "0.99",
     .flags = MIN0 | CFG_HAS_MAX,
     .max = 1,
     .help = "RmsProp: smoothing of the mean squared gradient",
     LC(rms_gamma)},
    {.name = "rms_wgt_inc",
     .type = CFG_REAL,
     .def = "1.2",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "RmsProp: step size factor when the gradient keeps its sign",
     LC(rms_inc)},
    {.name = "rms_wgt_dec",
     .type = CFG_REAL,
     .def = "0.75",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "RmsProp: step size factor when the gradient changes its sign",
     LC(rms_dec)},
    {.name = "rms_wgt_max",
     .type = CFG_REAL,
     .def = "10",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "RmsProp: largest step size",
     LC(rms_max)},
    {.name = "rms_wgt_min",
     .type = CFG_REAL,
     .def = "0.1",
     .flags = MIN0 | CFG_MIN_EXCL,
     .help = "RmsProp: smallest step size",
     LC(rms_min)},
    {.name = "normWithAveMultiplier",
     .type = CFG_BOOL,
     .def = "true",
     .help = "RmsProp: divide each tensor's step by its mean RmsProp factor",
     LC(ave_mult)},
    {.name = "L2RegWeight",
     .type = CFG_REAL,
     .def = "0",
     .flags = MIN0,
     .help = "L2 weight decay: g += L2 * N * w before the update",
     LC(l2)},
    {.name = "L1RegWeight",
     .type = CFG_REAL,
     .def = "0",
     .flags = MIN0,
     .help = "L1 soft threshold by lr * L1 * N after the update",
     LC(l1)},
    {.name = "clippingThresholdPerSample",
     .type = CFG_REAL,
     .def = "1#INF",
     .flags = MIN0 | CFG_MIN_EXCL | CFG_ALLOW_INF,
     .help = "gradient clipping threshold per sample (times N); 1#INF = no clipping",
     LC(clip)},
    {.name = "gradientClippingWithTruncation",
     .type = CFG_BOOL,
     .def = "true",
     .help = "true: clip elementwise; false: scale the gradient by its norm",
     LC(clip_truncation)},
    {.name = "dropoutRate",
     .type = CFG_REAL_SCHED,
     .def = "0",
     .flags = MIN0 | CFG_HAS_MAX | CFG_MAX_EXCL,
     .max = 1,
     .help = "per-epoch dropout rate in [0,1) (with addDropoutNodes)",
     LC(dropout)},
    {.name = "numMBsToShowResult",
     .type = CFG_INT,
     .def = "10",
     .flags = MIN0,
     .min = 1,
     .help = "minibatches per progress line (traceLevel > 0)",
     LC(show_every)},
    {.name = "firstMBsToShowResult",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "also show each of the first N minibatches",
     LC(show_first)},
    {.name = "keepCheckPointFiles",
     .type = CFG_BOOL,
     .def = "false",
     .help = "keep every epoch's .ckp file instead of only the newest",
     LC(keep_checkpoints)},
    {.name = "minLearningRatePerSample",
     .type = CFG_REAL,
     .def = "1e-9",
     .flags = MIN0,
     .help = "stop training when the scheduled rate falls below this",
     LC(min_lr)},
    {.name = "traceLevel",
     .type = CFG_INT,
     .def = "0",
     .flags = MIN0,
     .help = "verbosity of the training loop (inherits the top-level traceLevel)",
     LC(trace)},
    {.name = NULL},
};

/* CNTK keys of the SGD block that partrain refuses. */
const struct cfg_key learn_sgd_refused_keys[] = {
    {.name = "autoAdjustLR",
     .type = CFG_UNSUPPORTED,
     .help = "autoAdjustLR belongs inside AutoAdjust = [ ... ]"},
    {.name = "doGradientCheck",
     .type = CFG_UNSUPPORTED,
     .help = "numerical gradient checking is not available from the config (the unit tests "
             "check every layer against finite differences)"},
    {.name = "numSubminibatches",
     .type = CFG_UNSUPPORTED,
     .help = "sub-minibatch splitting is not implemented; lower minibatchSize"},
    {.name = "maxSamplesInRAM",
     .type = CFG_UNSUPPORTED,
     .help = "sub-minibatch splitting is not implemented; lower minibatchSize"},
    {.name = "adaptationRegType",
     .type = CFG_UNSUPPORTED,
     .help = "KL-divergence adaptation is not implemented"},
    {.name = "adaptationRegWeight",
     .type = CFG_UNSUPPORTED,
     .help = "KL-divergence adaptation is not implemented"},
    {.name = "trainCriterionNodeName",
     .type = CFG_UNSUPPORTED,
     .help = "criterion node names apply to BrainScript/NDL networks; SimpleNetworkBuilder "
             "sets trainingCriterion itself"},
    {.name = "evalCriterionNodeName",
     .type = CFG_UNSUPPORTED,
     .help = "criterion node names apply to BrainScript/NDL networks; SimpleNetworkBuilder "
             "sets evalCriterion itself"},
    {.name = "sequenceTrainingParams",
     .type = CFG_UNSUPPORTED,
     .help = "sequence (MMI/sMBR) training is not implemented"},
    {.name = NULL},
};

static const struct cfg_key *const sgd_more[] = {learn_sgd_refused_keys, NULL};

/* What learn reads; the block's reference text is train_sgd_schema's. */
const struct cfg_schema learn_sgd_schema = {
    .name = "SGD",
    .keys = learn_sgd_keys,
    .more = sgd_more,
};
