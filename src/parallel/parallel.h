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
    const struct cfg_origin *method_origin;
};

/* Read SGD.ParallelTrain (absent: method None). */
int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e);
void parallel_config_free(struct parallel_config *pc);
const char *parallel_method_name(enum par_method m);

/* The parameter layout an engine works on: the arena's size and its tensor table (arena
 * order, no gaps; a column of a tensor is `rows` consecutive floats). */
struct engine_layout {
    size_t n;
    const struct nn_tensor *tensors;
    size_t ntensors;
};

/* An engine: the strategy between the backward pass and the learner (DESIGN.md). The
 * training loop calls, for each epoch where parallel training is on:
 *   start_epoch; per minibatch: [grad_ready ...] after_backward, then the learner when
 *   stats[2] > 0; at the end: flush until it returns 0 (learner after each 1). */
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
    struct engine_perf perf;
};

/* The engine for pc on comm over the given layout (tensors must outlive the engine).
 * Methods not built yet are refused with a clear message naming the config origin. */
int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               const struct engine_layout *layout, struct engine **out, struct pt_err *e);
void engine_free(struct engine *en);

/* For engines: record one aggregation (perf lines and the JSON line). */
void engine_perf_sync(struct engine *en, double t_start, double t_end, double wait,
                      double bytes, double samples, int bits);

/* DataParallelSGD (dpsgd.c): dpsgd_new allocates the engine (ops set, rest zero);
 * dpsgd_setup runs once comm, log and layout are filled in. */
int dpsgd_new(const struct parallel_config *pc, struct engine **out, struct pt_err *e);
int dpsgd_setup(struct engine *en, const struct parallel_config *pc, struct pt_err *e);

#endif
