/* Parallel SGD engines (SPEC §7). This issue provides the ParallelTrain schemas; the
 * engines arrive with the communicator issues. */
#ifndef PT_PARALLEL_PARALLEL_H
#define PT_PARALLEL_PARALLEL_H

#include "core/log.h"
#include "parsers/schema.h"

extern const struct cfg_schema parallel_train_schema;       /* SGD.ParallelTrain */
extern const struct cfg_schema parallel_dpsgd_schema;       /* ...DataParallelSGD */
extern const struct cfg_schema parallel_ma_schema;          /* ...ModelAveragingSGD */
extern const struct cfg_schema parallel_bmuf_schema;        /* ...BlockMomentumSGD */
extern const struct cfg_schema parallel_asgd_schema;        /* ...DataParallelASGD */
extern const struct cfg_schema parallel_asgd_adjust_schema; /* ...AdjustLearningRateAtBeginning */

struct comm;

enum par_method { PAR_NONE, PAR_DPSGD, PAR_MA, PAR_BMUF, PAR_ASGD };

/* SGD.ParallelTrain, read once. */
struct parallel_config {
    enum par_method method;
    long long start_epoch;     /* parallelizationStartEpoch, 1-based */
    int distributed_reading;
    long long sync_perf_stats; /* syncPerfStats */
    struct cfg_val bits;       /* DataParallelSGD.gradientBits (schedule) */
    int buffered;              /* useBufferedAsyncGradientAggregation */
    const struct cfg_origin *method_origin;
};

/* Read SGD.ParallelTrain (absent: method None). */
int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e);
void parallel_config_free(struct parallel_config *pc);
const char *parallel_method_name(enum par_method m);

/* An engine: the strategy between the backward pass and the learner (DESIGN.md). */
struct engine;
struct engine_ops {
    const char *name;
    /* Turn this rank's summed gradient grads[0..n) and its statistics (training criterion,
     * eval criterion, samples) into the global ones, in place. */
    int (*after_backward)(struct engine *en, float *grads, size_t n, double stats[3],
                          struct pt_err *e);
    void (*destroy)(struct engine *en);
};
struct engine {
    const struct engine_ops *ops;
    struct comm *comm;
    struct pt_log *log; /* may be NULL */
    long long perf_every;
    long long syncs;
    double seconds; /* time spent aggregating */
};

/* The engine for pc on comm, for a run of `workers` ranks. Methods not built yet, and
 * DataParallelSGD with gradientBits < 32 or buffered aggregation, are refused with a clear
 * message naming the config origin. */
int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               struct engine **out, struct pt_err *e);
void engine_free(struct engine *en);

#endif
