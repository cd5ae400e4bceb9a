/* Parallel SGD engines (SPEC §7): the ParallelTrain schemas and config, and the engines
 * behind struct engine_ops. */
#ifndef PT_PARALLEL_PARALLEL_H
#define PT_PARALLEL_PARALLEL_H

#include <stdio.h>

#include "core/log.h"
#include "parsers/schema.h"

extern const struct cfg_schema parallel_train_schema;       /* SGD.ParallelTrain */
extern const struct cfg_schema parallel_dpsgd_schema;       /* ...DataParallelSGD */
extern const struct cfg_schema parallel_ma_schema;          /* ...ModelAveragingSGD */
extern const struct cfg_schema parallel_bmuf_schema;        /* ...BlockMomentumSGD */
extern const struct cfg_schema parallel_asgd_schema;        /* ...DataParallelASGD */
extern const struct cfg_schema parallel_asgd_adjust_schema; /* ...AdjustLearningRateAtBeginning */

struct backend;
struct comm;
struct nn_tensor;

enum par_method { PAR_NONE, PAR_DPSGD, PAR_MA, PAR_BMUF, PAR_ASGD };

/* SGD.ParallelTrain, read once. */
struct parallel_config {
    enum par_method method;
    long long start_epoch;     /* parallelizationStartEpoch, 1-based */
    int distributed_reading;
    long long sync_perf_stats; /* syncPerfStats */
    char perf_file[4096];      /* perfStatsFile ("" = none) */
    struct cfg_val bits;       /* DataParallelSGD.gradientBits (schedule) */
    int zero_threshold;        /* useZeroThresholdFor1BitQuantization */
    int buffered;              /* useBufferedAsyncGradientAggregation */
    int fp16;                  /* useFp16AllReduce */
    int hierarchical;          /* hierarchicalAllReduce: -1 auto, 0 off, 1 on */
    long long bucket_bytes;    /* allReduceBucketBytes */
    int overlap;               /* overlapBackward */
    int every_rank_saves;      /* everyRankSavesModel */
    /* ModelAveragingSGD / BlockMomentumSGD (the block of the chosen method) */
    long long block_per_worker; /* blockSizePerWorker (or syncPeriod) */
    long long block_total;      /* blockSize; 0 = not given */
    int reset_momentum;         /* resetSGDMomentum */
    int nesterov;               /* useNesterovMomentum */
    double block_lr;            /* blockLearningRate */
    double bm_time_constant;    /* blockMomentumAsTimeConstant; < 0 = not given */
    double bm_per_sync;         /* blockMomentumPerSync; < 0 = not given */
    /* DataParallelASGD */
    long long sync_period;  /* syncPeriodPerWorker */
    int pipeline;           /* usePipeline */
    int sim_ma;             /* SimModelAverage */
    int adjust;             /* AdjustLearningRateAtBeginning.adjustType: 0 none, 1 linearly,
                             * 2 staircase (no block: none) */
    double adjust_coef;     /* adjustCoefficient */
    long long adjust_per;   /* adjustPerMinibatches */
    /* testing: rank slow_rank busy-waits slow_seconds after each minibatch */
    int slow_rank;
    double slow_seconds;
    const struct cfg_origin *method_origin;
};

/* Read SGD.ParallelTrain (absent: method None). */
int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e);
void parallel_config_free(struct parallel_config *pc);
const char *parallel_method_name(enum par_method m);

/* The parameter layout an engine works on: the arena's size and its tensor table (arena
 * order, no gaps; a column of a tensor is `rows` consecutive floats), and the backend whose
 * device memory holds the parameters and gradients. Engines never dereference that memory:
 * they compute through bk's ops and hand buffers to the communicator through a stage
 * (bk_stage_out / bk_stage_in, the identity on the CPU). */
struct engine_layout {
    size_t n;
    float *params; /* the parameters (model-synchronizing engines replace them) */
    const struct nn_tensor *tensors;
    size_t ntensors;
    struct backend *bk; /* required by every method but None */
};

/* A piece of engine state that checkpoints keep (BMUF: the block momentum and the model
 * after the last sync). tag: at most 16 characters. */
struct engine_state {
    const char *tag;
    float *data;
    size_t n;
    struct backend *bk; /* data is device memory of bk; NULL: host memory */
};

/* An engine: the strategy between the backward pass and the learner (DESIGN.md). The
 * training loop calls, for each epoch where parallel training is on:
 *   start_epoch; per minibatch: [grad_ready ...] after_backward, then the learner when
 *   stats[2] > 0, then after_update; at the end: flush until it returns 0 (learner after
 *   each 1), then end_epoch, through the engine_* calls below. Every op but destroy may be
 * NULL (nothing to do). */
struct engine;
struct engine_ops {
    const char *name;
    /* Epoch (0-based) starts: per-epoch settings (gradientBits) and state (residuals). */
    int (*start_epoch)(struct engine *en, size_t epoch, struct pt_err *e);
    /* During the backward pass: grads[first..n) are final (nn_set_grad_ready). */
    int (*grad_ready)(struct engine *en, float *grads, size_t first, struct pt_err *e);
    /* Turn this rank's summed gradient grads[0..n) and its statistics (training criterion,
     * eval criterion, samples) into the global ones, in place. A buffered engine returns
     * the previous step's (stats[2] == 0 when there is none). */
    int (*after_backward)(struct engine *en, float *grads, double stats[3], struct pt_err *e);
    /* Epoch end: a pending aggregate goes into grads/stats (returns 1), or none (0). */
    int (*flush)(struct engine *en, float *grads, double stats[3], struct pt_err *e);
    /* After the learner applied a minibatch of `samples` samples of this rank: an engine
     * that synchronizes models counts them and, at its sync points, replaces the
     * parameters. Returns 1 when it synchronized (the loop then zeroes the learner's
     * momentum if en->reset_momentum), 0 when not, -1 on error. */
    int (*after_update)(struct engine *en, size_t samples, struct pt_err *e);
    /* Epoch end, after flush: the last synchronization of the epoch. tally = this rank's
     * (training criterion, eval criterion, samples) over the epoch; an engine whose
     * statistics are local makes them global. Returns 1/0/-1 as after_update. */
    int (*end_epoch)(struct engine *en, double tally[3], struct pt_err *e);
    /* Fill out[0..max) with the state a checkpoint keeps; returns how many. */
    size_t (*state)(struct engine *en, struct engine_state *out, size_t max);
    /* After a checkpoint restored the state (loaded = 1), or found none (0). */
    void (*state_loaded)(struct engine *en, int loaded);
    void (*destroy)(struct engine *en);
};

/* Statistics every engine keeps (SPEC 9 syncPerfStats, perfStatsFile). */
struct engine_perf {
    long long every;     /* syncPerfStats */
    long long syncs;     /* aggregations so far */
    double comm_seconds; /* exposed communication time (the step waited for it) */
    double last_end;     /* when the last aggregation returned (compute time origin) */
    double last_bytes;   /* bytes this rank sent in the last aggregation */
    FILE *file;          /* perfStatsFile, or NULL */
};

struct engine {
    const struct engine_ops *ops;
    struct comm *comm;
    struct pt_log *log; /* may be NULL */
    struct engine_layout layout;
    size_t epoch;
    int reset_momentum; /* zero the learner's momentum after each synchronization */
    double slow_seconds; /* testing (testSlowRank): busy-wait after each minibatch */
    struct engine_perf perf;
};

/* The engine for pc on comm over the given layout (tensors must outlive the engine).
 * Methods not built yet are refused with a clear message naming the config origin. */
int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               const struct engine_layout *layout, struct engine **out, struct pt_err *e);
void engine_free(struct engine *en);

/* The ops, or nothing where an engine has none (see struct engine_ops). */
int engine_start_epoch(struct engine *en, size_t epoch, struct pt_err *e);
int engine_after_backward(struct engine *en, float *grads, double stats[3], struct pt_err *e);
int engine_flush(struct engine *en, float *grads, double stats[3], struct pt_err *e);
int engine_after_update(struct engine *en, size_t samples, struct pt_err *e);
int engine_end_epoch(struct engine *en, double tally[3], struct pt_err *e);

/* For engines: record one aggregation (the JSON line, with `extra` fields ("" or
 * ",\"name\":value..."); DataParallelSGD's syncPerfStats line when print is set). */
void engine_perf_sync(struct engine *en, double t_start, double t_end, double wait,
                      double bytes, double samples, int bits, int print, const char *extra);

/* DataParallelSGD (dpsgd.c): dpsgd_new allocates the engine (ops set, rest zero);
 * dpsgd_setup runs once comm, log and layout are filled in. */
int dpsgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e);
int dpsgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e);

/* ModelAveragingSGD and BlockMomentumSGD (masgd.c), the same pair of calls. */
int masgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e);
int masgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e);

/* DataParallelASGD (asgd.c), the same pair of calls. */
int asgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e);
int asgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e);

#endif
