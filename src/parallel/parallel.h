/* Parallel SGD engines (SPEC §7): the ParallelTrain schemas and config, and the engines
 * behind struct engine_ops. */
#ifndef PT_PARALLEL_PARALLEL_H
#define PT_PARALLEL_PARALLEL_H

#include <stdio.h>

#include "core/log.h"
#include "core/trace.h"
#include "parsers/schema.h"

/* The statistics of a step that the engines sum over the ranks: [0] the training
 * criterion's sum, [1] the evaluation criterion's, [2] the samples, then the further
 * evaluation nodes' sums (nn.h: NN_EVAL_MAX - 1 of them). */
#define PT_STATS 9

extern const struct cfg_schema parallel_train_schema;       /* SGD.ParallelTrain */
extern const struct cfg_schema parallel_asgd_adjust_schema; /* ...AdjustLearningRateAtBeginning */

struct backend;
struct comm;
struct engine;
struct nn_tensor;
struct parallel_config;

/* A parallel method: one row of the registry (PARALLEL_METHODS in parallel_schema.c). The
 * row, its block's schema, its config struct and its engine live in the method's own file;
 * nothing outside src/parallel asks which method runs. */
struct engine_method {
    const char *name;                /* as in parallelizationMethod */
    const struct cfg_schema *schema; /* its block inside ParallelTrain (NULL: none) */
    size_t config_size;              /* its config struct (0: none) */
    /* Fill the config struct (zeroed, config_size bytes) from ParallelTrain block pt (NULL:
     * no such block, the defaults). NULL: engine_read_block with schema. */
    int (*read)(struct cfg_node *pt, void *config, struct pt_err *e);
    /* Allocate the engine (ops set, the rest zero). */
    int (*new)(const struct parallel_config *pc, struct engine **out, struct pt_err *e);
    /* Once comm, log and layout are filled in. NULL: nothing to do. */
    int (*setup)(struct engine *en, const struct parallel_config *pc, struct pt_err *e);
    /* Its part of the training loop's "Starting minibatch loop" line for epoch (0-based),
     * e.g. ", DataParallelSGD training (...)". NULL: none. */
    void (*describe)(const struct parallel_config *pc, size_t epoch, int rank, int workers,
                     char *buf, size_t size);
    /* The workers train models of their own between synchronizations that replace them
     * (model averaging, BMUF, the parameter server): statistics a worker gathered with its
     * own model (batch normalization's) do not describe the model it ends with. */
    int own_models;
};

/* None: one rank, or no parallel method configured (engine.c). */
extern const struct engine_method parallel_none_method;

/* The row named name (case-insensitive), or NULL. */
const struct engine_method *engine_method_find(const char *name);

/* For a method's read: its block inside pt (found by its schema's name; absent: pt itself,
 * so keys set further out and the defaults apply) through its schema into config. *found
 * (may be NULL) says whether the block exists. */
int engine_read_block(struct cfg_node *pt, const struct cfg_schema *s, void *config, int *found,
                      struct pt_err *e);

/* SGD.ParallelTrain, read once: the keys every method shares, and the method's own
 * config struct. */
struct parallel_config {
    const struct engine_method *method; /* parallelizationMethod */
    void *method_config;                /* the method's config struct (owned) */
    long long start_epoch;              /* parallelizationStartEpoch, 1-based */
    int distributed_reading;
    long long sync_perf_stats; /* syncPerfStats */
    char perf_file[4096];      /* perfStatsFile ("" = none) */
    char timeline_file[4096];  /* timelineFile ("" = none) */
    int fp16;                  /* useFp16AllReduce */
    int hierarchical;          /* hierarchicalAllReduce: -1 auto, 0 off, 1 on */
    long long bucket_bytes;    /* allReduceBucketBytes */
    int overlap;               /* overlapBackward */
    int algorithm;             /* allReduceAlgorithm: COMM_ALG_AUTO, _MPI or _RING */
    long long segment_bytes;   /* allReduceSegmentBytes */
    int every_rank_saves;      /* everyRankSavesModel */
    int share_host;            /* shareModelInHost */
    /* testing: rank slow_rank busy-waits slow_seconds after each minibatch */
    int slow_rank;
    double slow_seconds;
};

/* The ParallelTrain block the SGD block sees (climbing, as CNTK's lookup does), or NULL.
 * A plain value further out is not one: the top-level `parallelTrain = true` switch shares
 * its name, and CNTK reads it as an empty block (method None). */
int parallel_find_block(struct cfg_node *sgd, struct cfg_node **pt, struct pt_err *e);
/* Read SGD.ParallelTrain (absent, or sgd NULL: method None) with one cfg_schema_read, then
 * the method's block with its row's read. Free with parallel_config_free. Method None on
 * several ranks is CNTK's: every rank trains on all the data, rank 0 writes the files. */
int parallel_config_read(struct cfg_node *sgd, struct parallel_config *pc, struct pt_err *e);
void parallel_config_free(struct parallel_config *pc);
/* Whether the parallel method is on in epoch (0-based): before parallelizationStartEpoch
 * every rank trains on all the data (warm start). */
int parallel_config_epoch_on(const struct parallel_config *pc, size_t epoch);
/* The method's part of the "Starting minibatch loop" line into buf (size bytes); returns
 * the length written. */
size_t parallel_config_describe(const struct parallel_config *pc, size_t epoch, int rank,
                                int workers, char *buf, size_t size);

/* The config structs of the model-synchronizing methods (masgd.c, asgd.c), public so that
 * tests can build their engines without a config file. */
struct masgd_config {
    long long block_per_worker; /* blockSizePerWorker (or syncPeriod) */
    long long block_total;      /* blockSize; 0 = not given */
    int reset_momentum;         /* resetSGDMomentum */
    int nesterov;               /* useNesterovMomentum */
    double block_lr;            /* blockLearningRate */
    double bm_time_constant;    /* blockMomentumAsTimeConstant; < 0 = not given */
    double bm_per_sync;         /* blockMomentumPerSync; < 0 = not given */
};

struct asgd_adjust_config {
    int type;      /* adjustType: 0 none, 1 linearly, 2 staircase */
    double coef;   /* adjustCoefficient */
    long long per; /* adjustPerMinibatches */
};

struct asgd_config {
    long long sync_period;            /* syncPeriodPerWorker */
    int pipeline;                     /* usePipeline */
    int sim_ma;                       /* SimModelAverage */
    struct asgd_adjust_config adjust; /* AdjustLearningRateAtBeginning (no block: none) */
    int adjust_given;
};

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
    int (*after_backward)(struct engine *en, float *grads, double stats[PT_STATS],
                          struct pt_err *e);
    /* For an engine with after_backward: 1 when this epoch's after_backward leaves this
     * rank's gradient and statistics as they are (one rank, full precision, unbuffered),
     * so the learner may run inside the backward pass (engine_keeps_gradient). NULL:
     * never. */
    int (*keeps_gradient)(struct engine *en);
    /* For an engine with after_backward: 1 when, in every epoch, the ranks of one host
     * could share one model in memory instead (nn_set_team: each rank updates its slice
     * of the parameters from every rank's activations; no gradient is summed), which
     * engine_share then switches on: after_backward only sums the statistics and
     * keeps_gradient says 1. NULL: never. */
    int (*can_share)(struct engine *en);
    /* Epoch end: a pending aggregate goes into grads/stats (returns 1), or none (0). */
    int (*flush)(struct engine *en, float *grads, double stats[PT_STATS], struct pt_err *e);
    /* After the learner applied a minibatch of `samples` samples of this rank: an engine
     * that synchronizes models counts them and, at its sync points, replaces the
     * parameters. Returns 1 when it synchronized (the loop then zeroes the learner's
     * momentum if en->reset_momentum), 0 when not, -1 on error. */
    int (*after_update)(struct engine *en, size_t samples, struct pt_err *e);
    /* Epoch end, after flush: the last synchronization of the epoch. tally = this rank's
     * (training criterion, eval criterion, samples) over the epoch; an engine whose
     * statistics are local makes them global. Returns 1/0/-1 as after_update. */
    int (*end_epoch)(struct engine *en, double tally[PT_STATS], struct pt_err *e);
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
    double last_end;     /* when the last aggregation returned, or the epoch started
                            (compute time origin) */
    double last_bytes;   /* bytes this rank sent in the last aggregation */
    FILE *file;          /* perfStatsFile, or NULL */
};

struct engine {
    const struct engine_ops *ops;
    struct comm *comm;
    struct pt_log *log; /* may be NULL */
    struct engine_layout layout;
    size_t epoch;
    int reset_momentum;  /* zero the learner's momentum after each synchronization */
    int shared;          /* the ranks share one model in memory (engine_share) */
    double slow_seconds; /* testing (testSlowRank): busy-wait after each minibatch */
    struct engine_perf perf;
    /* timelineFile: the run's recorder (NULL: off; not owned), the minibatch of the epoch
     * being processed (1-based, set by the training loop; 0: the epoch's end) and the
     * start of the engine's next span */
    struct pt_trace *timeline;
    size_t minibatch;
    double mark;
};

/* Open this rank's perfStatsFile (rank 0: the name as given, rank K: NAME.rankK; none:
 * *out stays NULL), creating its directory; never through a symlink to a file. */
int engine_perf_open(const struct parallel_config *pc, int rank, FILE **out, struct pt_err *e);

/* The engine of pc's method on comm over the given layout (the tensors must outlive the
 * engine; pc need not: an engine copies what it keeps). */
int engine_new(const struct parallel_config *pc, struct comm *comm, struct pt_log *log,
               const struct engine_layout *layout, struct engine **out, struct pt_err *e);
void engine_free(struct engine *en);

/* The ops, or nothing where an engine has none (see struct engine_ops). */
int engine_start_epoch(struct engine *en, size_t epoch, struct pt_err *e);
int engine_after_backward(struct engine *en, float *grads, double stats[PT_STATS],
                          struct pt_err *e);
/* 1 when the learner's update may run before after_backward, inside the backward pass:
 * the engine has no after_backward or its keeps_gradient says so for this epoch. */
int engine_keeps_gradient(struct engine *en);
/* Whether the engine can run with the ranks sharing one model (can_share), and switching
 * that on (the caller has made the network a team, nn_set_team, whose parameters are now
 * at params). */
int engine_can_share(struct engine *en);
void engine_share(struct engine *en, float *params);
int engine_flush(struct engine *en, float *grads, double stats[PT_STATS], struct pt_err *e);
int engine_after_update(struct engine *en, size_t samples, struct pt_err *e);
int engine_end_epoch(struct engine *en, double tally[PT_STATS], struct pt_err *e);

/* For engines: record one aggregation [t_start, t_end] (the JSON line, with `extra` fields
 * ("" or ",\"name\":value..."); DataParallelSGD's syncPerfStats line when print is set).
 * exposed: the communication time the step waited for (syncPerfStats' statistics); wait:
 * the part of the aggregation spent waiting for other ranks or for a transfer already in
 * flight, where the engine can tell (perfStatsFile's wait_s). */
void engine_perf_sync(struct engine *en, double t_start, double t_end, double exposed, double wait,
                      double bytes, double samples, int bits, int print, const char *extra);

/* For engines, the timeline (timelineFile; nothing when it is off): engine_mark_start
 * starts a span now; engine_mark ends it now as `name` (a string literal) on lane
 * (PT_TRACE_COMPUTE for the engine's own arithmetic, PT_TRACE_COMM for communication and
 * waits), with the epoch, the minibatch, the sync (this aggregation's number, 1-based) and,
 * when bytes >= 0, the bytes this rank sends as arguments, and starts the next span. */
void engine_mark_start(struct engine *en);
void engine_mark(struct engine *en, int lane, const char *name, double bytes);

#endif
