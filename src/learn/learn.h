/* Learners and schedules (SPEC 5): CNTK's momentum SGD (unit-gain, per-sample learning
 * rates, gradients summed over the minibatch), Nesterov, L1/L2, clipping, and the Adam and
 * AdaGrad extensions. Everything works on flat float arrays laid out like the network's
 * parameter arena, so the parallel engines can move learner state as one buffer. The
 * learners keep the formulas' parameters; the loops over the arrays are backend ops
 * (math/backend.h). */
#ifndef PT_LEARN_LEARN_H
#define PT_LEARN_LEARN_H

#include <stddef.h>

#include "parsers/schema.h"

struct backend;
struct bk_sgd;

/* Keys of the SGD = [ ... ] block as learn reads it: learn_sgd_keys (stored into struct
 * learn_config), then learn_sgd_refused_keys (CNTK keys partrain refuses). The trainer
 * checks SGD with these tables and its ParallelTrain block (train_sgd_schema). */
extern const struct cfg_key learn_sgd_keys[];
extern const struct cfg_key learn_sgd_refused_keys[];
extern const struct cfg_schema learn_sgd_schema;

/* The numbers are kept in checkpoints: append only. */
enum learn_type { LEARN_SGD, LEARN_ADAM, LEARN_ADAGRAD, LEARN_FSADAGRAD, LEARN_RMSPROP };

/* AutoAdjust = [ ... ] (CNTK's learning-rate control; SGD.cpp's names and defaults). */
struct learn_autoadjust {
    int mode;                /* autoAdjustLR: 0 none, 1-3 adjustAfterEpoch (afterEpoch, after), 4-6
                              * searchBeforeEpoch (beforeEpoch, before): learn_aa_search */
    double reduce_if_less;   /* reduceLearnRateIfImproveLessThan (0) */
    double decrease;         /* learnRateDecreaseFactor (0.618) */
    double increase_if_more; /* increaseLearnRateIfImproveMoreThan (+inf) */
    double increase;         /* learnRateIncreaseFactor (1.382) */
    int load_best;           /* loadBestModel (true) */
    int continue_reduce;     /* continueReduce (false) */
    long long interval;      /* learnRateAdjustInterval (1) */
    int use_cv, use_eval;    /* UseCVSetControlLRIfCVExists (true), UseEvalCriterionControlLR */
    /* autoAdjustMinibatch: beyond minibatchSize's schedule, each epoch (every
     * minibatchSizeTuningFrequency) searches the largest size whose trial criterion stays
     * within minibatchSearchCriterionErrorMargin percent of the smallest's (CNTK's
     * AdaptiveMinibatchSizing), on numSamples4Search samples of the epoch */
    int auto_mb;
    long long mb_freq, mb_max, mb_margin;
    long long search_samples[16]; /* numSamples4Search per epoch (last repeats); 0: none */
    int n_search_samples;
    long long search_mbs[16]; /* numMiniBatch4LRSearch (minibatches: times minibatchSize) */
    int n_search_mbs;
    long long prev_rates, best_search_epochs; /* numPrevLearnRates, numBestSearchEpoch */
};
#define LEARN_AA_SEARCH 4 /* autoAdjustLR's first searchBeforeEpoch spelling */
static inline int learn_aa_after(const struct learn_autoadjust *aa)
{
    return aa->mode > 0 && aa->mode < LEARN_AA_SEARCH;
}
static inline int learn_aa_search(const struct learn_autoadjust *aa)
{
    return aa->mode >= LEARN_AA_SEARCH;
}

/* The SGD block, read and checked once. Schedules are indexed by 0-based epoch (the last
 * entry repeats). */
struct learn_config {
    enum learn_type type;
    long long max_epochs, epoch_size;
    struct cfg_val mb_size; /* minibatchSize (integer schedule) */
    struct cfg_val lr;      /* learningRatesPerSample, or PerMB when lr_per_mb */
    int lr_per_mb;
    struct cfg_val momentum; /* per MB, per sample or time constant (momentum_kind) */
    enum { MOMENTUM_PER_MB, MOMENTUM_PER_SAMPLE, MOMENTUM_TIME_CONSTANT } momentum_kind;
    struct cfg_val dropout;
    int nag;
    double l1, l2;
    double clip; /* clippingThresholdPerSample; +inf = off */
    int clip_truncation;
    double min_lr; /* minLearningRatePerSample */
    long long show_every, show_first, trace;
    int keep_checkpoints;
    /* FSAdaGrad (CNTK's names): varianceTimeConstant, fsAdagradTargetAvDenom */
    double var_time_constant, fs_target;
    /* RmsProp: rms_gamma, rms_wgt_inc, rms_wgt_dec, rms_wgt_max, rms_wgt_min, and
     * normWithAveMultiplier (divide the step by the tensor's mean scaling factor) */
    double rms_gamma, rms_inc, rms_dec, rms_max, rms_min;
    int ave_mult;
    struct learn_autoadjust aa;
    /* Truncated back-propagation through time (set by the trainer from its reader): each
     * minibatch holds mb_streams[epoch] streams of minibatchSize samples, so per-minibatch
     * values (learningRatesPerMB, momentumPerMB) count that many times the samples, as
     * CNTK's; 0 entries: one stream */
    int mb_streams[16];
    int n_mb_streams;
};

/* Entries of the learning-rate schedule as given (learningRatesPerSample/PerMB): AutoAdjust
 * changes the rate only in the epochs after them (CNTK). */
size_t learn_lr_schedule_len(const struct learn_config *lc);

/* Read the SGD block through learn_sgd_schema (one cfg_schema_read; the momentum kind is
 * the key given). Error when no learning rate is set. Free with learn_config_free. */
int learn_config_read(struct cfg_node *sgd, struct learn_config *lc, struct pt_err *e);
void learn_config_free(struct learn_config *lc);

/* What the schedules say for one epoch. */
struct learn_epoch {
    size_t mb_size;
    size_t mb_units; /* samples a minibatch holds for per-minibatch values: mb_size, times
                      * the parallel streams of truncated back-propagation through time */
    double lr_per_sample;
    double momentum_per_sample; /* in [0,1) */
    double dropout;
};
void learn_epoch_params(const struct learn_config *lc, size_t epoch, struct learn_epoch *out);
/* CNTK's log numbers: momentum per minibatch, and the time constant in samples. */
double learn_effective_momentum(const struct learn_epoch *ep);
double learn_momentum_time_constant(const struct learn_epoch *ep);

/* A span of the arena updated as one tensor (clipping by norm is per tensor, as in CNTK). */
struct learn_span {
    size_t offset, count;
};

/* Learner state: one or two buffers shaped like the parameters, device memory of the
 * backend the learner was made with (ops->alloc). */
struct learner {
    enum learn_type type;
    const struct learner_kind *kind;
    struct backend *bk;
    size_t n;
    float *s1; /* SGD: smoothed gradient; Adam: first moment; AdaGrad: sum of squares */
    float *s2; /* Adam: second moment; FSAdaGrad: smoothed gradient; RmsProp: signs */
    float *s3; /* RmsProp: step sizes */
    long long steps;
    double count; /* FSAdaGrad: CNTK's smoothedCount (samples, smoothed) */
    int s1_lent;  /* s1 is the caller's memory (learner_lend_s1): not released here */
};

/* The learner registry (learner.c): one row per gradUpdateType. A new learner is a row, a
 * backend op for its update, and the choice in the SGD schema. */
struct learner_kind {
    const char *name;     /* gradUpdateType's value: "None" (momentum SGD), "Adam", "AdaGrad" */
    enum learn_type type; /* also the learner number in checkpoints */
    int nstate;           /* state buffers (s1, s2, s3) */
    /* One update of l->n parameters w with the regularized, clipped gradient g of `samples`
     * samples (through the backend's op; g may be overwritten). spans: the tensors, for the
     * rules that normalise per tensor (RmsProp). */
    void (*update)(struct learner *l, const struct learn_config *lc, const struct learn_epoch *ep,
                   float *w, float *g, size_t samples, const struct learn_span *spans,
                   size_t nspans);
    /* Zero the state a model synchronization invalidates; NULL: nothing to do. */
    void (*reset)(struct learner *l);
};

/* The row of a type (NULL for an unknown one), or of a name (case-insensitive). */
const struct learner_kind *learner_kind_of(enum learn_type type);
const struct learner_kind *learner_kind_find(const char *name);

/* State for n parameters on backend b (zeroed). On failure l holds nothing to free. */
int learner_init(struct learner *l, struct backend *b, enum learn_type type, size_t n,
                 struct pt_err *e);
void learner_free(struct learner *l);
/* Use s1 (n floats, holding the state's values) instead of the learner's own s1, which is
 * released; the caller keeps s1's memory (the ranks' shared memory of a team). */
void learner_lend_s1(struct learner *l, float *s1);
/* Zero the momentum (BMUF resetSGDMomentum; new epochs keep it, as CNTK does). */
void learner_reset(struct learner *l);

/* When learner_update's step for `samples` samples is exactly the momentum SGD step
 * s1 = m s1 + a g; w -= s1 (nag: w -= m s1 + a g) over the whole arena (momentum SGD
 * without clipping, L2 or L1 terms, samples > 0): fills *u (u->s = the momentum arena,
 * u->m, u->a, u->nag; u->w untouched) and returns 1, so the step can run inside the
 * backward pass (nn_set_fused_sgd); else returns 0. */
int learner_fused_sgd(const struct learner *l, const struct learn_config *lc,
                      const struct learn_epoch *ep, size_t samples, struct bk_sgd *u);

/* One update of w[0..n) with the summed gradient g of `samples` samples (g is modified:
 * regularized and clipped in place). spans cover the arena tensor by tensor. w and g are
 * device memory of the learner's backend. */
void learner_update(struct learner *l, const struct learn_config *lc, const struct learn_epoch *ep,
                    float *w, float *g, size_t samples, const struct learn_span *spans,
                    size_t nspans);

#endif
